//! One model call over HTTP: the request posted with the endpoint's headers, made again while it
//! is refused and the retry policy allows, and the answer read as a stream within its timeouts.

use std::pin::Pin;
use std::time::Duration;

use bytes::Bytes;
use futures_util::{Stream, StreamExt, TryFutureExt, TryStreamExt};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;

use super::config::EndpointConfig;
use super::decode::{AnswerReader, events};
use super::error::{self, EndpointError, classify, classify_stream_error, redact};
use crate::ModelEvent;

/// A model's answer as it streams.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<ModelEvent, EndpointError>> + Send>>;

/// An endpoint set up for calls: the client, the address requests are posted to, the headers
/// every request carries (the key among them) and the key itself, to redact from every error.
#[derive(Debug, Clone)]
pub(crate) struct Connection {
    client: reqwest::Client,
    url: String,
    headers: HeaderMap,
    key: Option<Key>,
    config: EndpointConfig,
}

impl Connection {
    /// Sets the endpoint up for posts to `url` with `headers`, reading a key named by an
    /// environment variable through `lookup`; `key_header` says how a request carries the key.
    pub(crate) fn new(
        config: EndpointConfig,
        url: String,
        headers: &[(HeaderName, &'static str)],
        key_header: impl Fn(&str) -> (HeaderName, String),
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Connection, EndpointError> {
        let key = config.api_key.resolve(lookup)?;
        let mut all = HeaderMap::new();
        all.insert(
            reqwest::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        for (name, value) in headers {
            all.insert(name.clone(), HeaderValue::from_static(value));
        }
        if let Some(key) = &key {
            let (name, value) = key_header(key);
            let mut value =
                HeaderValue::from_str(&value).map_err(|_| EndpointError::UnusableKey)?;
            value.set_sensitive(true);
            all.insert(name, value);
        }
        let client = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .build()
            .map_err(|e| EndpointError::Request {
                url: url.clone(),
                reason: reason(&e),
            })?;
        Ok(Connection {
            client,
            url,
            headers: all,
            key: key.map(Key),
            config,
        })
    }

    /// Posts `body` and streams the answer, read by `R`. A call refused with HTTP 429 or 5xx,
    /// or whose stream opens with an overloaded or rate-limit error, is made again as the
    /// [`RetryPolicy`](super::RetryPolicy) says. The answer's first piece must come within the
    /// first-byte timeout and each next one within the idle timeout; its lines, calls and
    /// arguments must keep within the [`AnswerLimits`](super::AnswerLimits). The key is
    /// redacted from every error.
    pub(crate) fn post<R: AnswerReader>(&self, body: &Value) -> EventStream {
        self.post_bytes::<R>(Bytes::from(body.to_string()))
    }

    /// Posts `body`, already written as JSON, like [`Connection::post`].
    pub(crate) fn post_bytes<R: AnswerReader>(&self, body: Bytes) -> EventStream {
        let call = Call {
            connection: self.clone(),
            body,
        };
        let key = self.key.clone();
        Box::pin(
            call.open::<R>()
                .try_flatten_stream()
                .map_err(move |error| error.redacted(key.as_ref().map(|Key(key)| key.as_str()))),
        )
    }

    fn key(&self) -> Option<&str> {
        self.key.as_ref().map(|Key(key)| key.as_str())
    }
}

/// One call, made again while it is refused and the retry policy allows.
struct Call {
    connection: Connection,
    body: Bytes,
}

/// An attempt the endpoint refused, and the wait its `Retry-After` asked for.
struct Refused {
    error: EndpointError,
    retry_after: Option<Duration>,
}

impl From<EndpointError> for Refused {
    fn from(error: EndpointError) -> Self {
        Refused {
            error,
            retry_after: None,
        }
    }
}

impl Call {
    /// Makes the call until an answer streams or it is not to be made again.
    async fn open<R: AnswerReader>(
        self,
    ) -> Result<impl Stream<Item = Result<ModelEvent, EndpointError>> + Send, EndpointError> {
        let connection = &self.connection;
        let mut waited = Duration::ZERO;
        let mut retries = 0;
        loop {
            let refused = match self.attempt::<R>().await {
                Ok(answer) => return Ok(answer),
                Err(refused) => refused,
            };
            let wait = refused
                .error
                .is_retryable()
                .then(|| {
                    connection
                        .config
                        .retry
                        .wait(refused.retry_after, retries, waited)
                })
                .flatten();
            let Some(wait) = wait else {
                return Err(refused.error);
            };
            tracing::info!(
                "{} refused a call ({}); trying again in {} s",
                connection.url,
                refused.error.clone().redacted(connection.key()),
                wait.as_secs_f64()
            );
            tokio::time::sleep(wait).await;
            waited = waited.saturating_add(wait);
            retries += 1;
        }
    }

    /// Sends the request once and checks the answer's head, then waits for the answer's first
    /// item: an error there (an overloaded provider, say) refuses the attempt, since nothing of
    /// the answer was read yet.
    async fn attempt<R: AnswerReader>(
        &self,
    ) -> Result<impl Stream<Item = Result<ModelEvent, EndpointError>> + Send + use<R>, Refused>
    {
        let connection = &self.connection;
        let config = &connection.config;
        let deadline = after(config.first_byte_timeout);
        let no_answer = || EndpointError::NoAnswer {
            seconds: config.first_byte_timeout.as_secs(),
        };
        let request = connection
            .client
            .post(&connection.url)
            .headers(connection.headers.clone())
            .body(self.body.clone());
        let response = tokio::time::timeout_at(deadline, request.send())
            .await
            .map_err(|_| no_answer())?
            .map_err(|e| {
                if e.is_connect() || e.is_timeout() {
                    EndpointError::Unreachable {
                        url: connection.url.clone(),
                        reason: reason(&e),
                    }
                } else {
                    EndpointError::Request {
                        url: connection.url.clone(),
                        reason: reason(&e),
                    }
                }
            })?;
        let status = response.status();
        if !status.is_success() {
            let retry_after = response
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok());
            let body = self.read_capped(response).await;
            let error = match classify(status.as_u16(), &body) {
                EndpointError::RateLimited { message, .. } => EndpointError::RateLimited {
                    message,
                    retry_after_seconds: retry_after,
                },
                other => other,
            };
            return Err(Refused {
                error,
                retry_after: retry_after.map(Duration::from_secs),
            });
        }
        let is_json = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/json"));
        if is_json {
            // A server that ignores `stream: true`, or reports an error with a success status.
            let body = self.read_capped(response).await;
            return Err(match serde_json::from_str::<Value>(&body) {
                Ok(value) if value.get("error").is_some() => classify_stream_error(&value["error"]),
                _ => EndpointError::BadChunk {
                    reason: "the endpoint answered with one JSON body, not a stream".into(),
                    start: error::quote(&body),
                },
            }
            .into());
        }
        let answer = events::<R, _, _>(
            response.bytes_stream().map_err(|e| reason(&e)),
            &config.limits,
        );
        let mut answer = Box::pin(timed(
            answer,
            deadline,
            config.first_byte_timeout,
            config.idle_timeout,
        ));
        match answer.next().await {
            Some(Err(error)) => Err(error.into()),
            first => Ok(futures_util::stream::iter(first).chain(answer)),
        }
    }

    /// At most `max_error_body_bytes` of a body the endpoint sent instead of an answer, with the
    /// model's key redacted; the rest is not read. Reading stops too when the body goes quiet for
    /// the idle timeout.
    async fn read_capped(&self, mut response: reqwest::Response) -> String {
        let config = &self.connection.config;
        let max = config.limits.max_error_body_bytes;
        let mut body: Vec<u8> = Vec::new();
        while body.len() < max {
            match tokio::time::timeout(config.idle_timeout, response.chunk()).await {
                Ok(Ok(Some(chunk))) => {
                    let room = max - body.len();
                    body.extend_from_slice(&chunk[..chunk.len().min(room)]);
                }
                _ => break,
            }
        }
        redact(&String::from_utf8_lossy(&body), self.connection.key())
    }
}

/// The instant `timeout` from now, or a century from now when that is out of range.
fn after(timeout: Duration) -> tokio::time::Instant {
    let now = tokio::time::Instant::now();
    now.checked_add(timeout)
        .or_else(|| now.checked_add(Duration::from_secs(100 * 365 * 24 * 3600)))
        .unwrap_or(now)
}

/// `answer` with its first piece due by `first` and each next one within `idle`: a wait past
/// either ends the stream with [`EndpointError::NoAnswer`] or [`EndpointError::Stalled`].
fn timed(
    answer: impl Stream<Item = Result<ModelEvent, EndpointError>> + Send + 'static,
    first: tokio::time::Instant,
    first_byte_timeout: Duration,
    idle: Duration,
) -> impl Stream<Item = Result<ModelEvent, EndpointError>> + Send {
    let answer = Box::pin(answer);
    futures_util::stream::unfold(Some((answer, first, true)), move |state| async move {
        let (mut answer, deadline, before_first) = state?;
        match tokio::time::timeout_at(deadline, answer.next()).await {
            Ok(Some(item)) => Some((item, Some((answer, after(idle), false)))),
            Ok(None) => None,
            Err(_) => {
                let error = if before_first {
                    EndpointError::NoAnswer {
                        seconds: first_byte_timeout.as_secs(),
                    }
                } else {
                    EndpointError::Stalled {
                        seconds: idle.as_secs(),
                    }
                };
                Some((Err(error), None))
            }
        }
    })
}

/// An error and its causes, which hold the useful part ("Connection refused").
fn reason(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// An API key, kept out of debug output.
#[derive(Clone)]
struct Key(String);

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Key(…)")
    }
}
