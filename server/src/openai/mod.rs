//! An OpenAI-compatible model: OpenAI itself, and servers speaking its Chat Completions API
//! (vLLM, llama.cpp, Ollama, OpenRouter and the like).
//!
//! The request body is core's conversion of the prompt ([`portal_core::prompt::openai::request`])
//! with streaming and usage turned on. The answer streams back as server-sent events that
//! [`events`] turns into [`ModelEvent`]s; a failing answer becomes an [`OpenAiError`], every
//! context overflow as [`OpenAiError::ContextOverflow`].

mod chunk;
mod config;
mod decode;
mod error;
mod sse;

pub use crate::model::{BadArguments, FinishReason, ModelEvent, parse_arguments};
pub use config::{
    AnswerLimits, ApiKey, ConfigError, DEFAULT_CONNECT_TIMEOUT_SECONDS, OpenAiConfig, RetryPolicy,
};
pub use decode::{StreamDecoder, events};
pub use error::{OpenAiError, REDACTED, classify, classify_stream_error, redact};

use std::pin::Pin;
use std::time::Duration;

use futures_util::{Stream, StreamExt, TryFutureExt, TryStreamExt};
use portal_core::model::ModelCapabilities;
use portal_core::prompt::{PictureSource, Prompt, openai};
use serde_json::{Value, json};

use crate::model::{Model, ModelError, ModelStream};

/// A model's answer as it streams.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<ModelEvent, OpenAiError>> + Send>>;

/// A model behind an OpenAI-compatible endpoint.
#[derive(Debug, Clone)]
pub struct OpenAiModel {
    config: OpenAiConfig,
    label: String,
    key: Option<Key>,
    client: reqwest::Client,
}

impl OpenAiModel {
    /// Sets the model up, reading an API key named by an environment variable from the process's
    /// environment.
    pub fn new(config: OpenAiConfig) -> Result<OpenAiModel, OpenAiError> {
        OpenAiModel::with_env(config, |var| std::env::var(var).ok())
    }

    /// Sets the model up, reading an API key named by an environment variable through `lookup`.
    pub fn with_env(
        config: OpenAiConfig,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<OpenAiModel, OpenAiError> {
        let key = config.api_key.resolve(lookup)?.map(Key);
        let client = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .build()
            .map_err(|e| OpenAiError::Request {
                url: config.completions_url(),
                reason: reason(&e),
            })?;
        Ok(OpenAiModel {
            label: config.model().to_string(),
            config,
            key,
            client,
        })
    }

    /// The model with the name shown to people set to `label` (the model's name by default).
    pub fn with_label(mut self, label: String) -> OpenAiModel {
        self.label = label;
        self
    }

    /// What the model can do.
    pub fn capabilities(&self) -> &ModelCapabilities {
        &self.config.capabilities
    }

    /// The request body for `prompt`: core's conversion, streamed with usage. It carries
    /// `reasoning_effort` only when the model can reason (rule E3).
    pub fn request_body(&self, prompt: &Prompt, pictures: &dyn PictureSource) -> Value {
        let mut body = openai::request(prompt, &self.config.capabilities, pictures);
        if let Value::Object(fields) = &mut body {
            fields.insert("stream".into(), json!(true));
            fields.insert("stream_options".into(), json!({"include_usage": true}));
        }
        body
    }

    /// Calls the model with `prompt`. The pictures are encoded now; the call runs as the stream
    /// is read, and a refused call is the stream's one item.
    pub fn stream(&self, prompt: &Prompt, pictures: &dyn PictureSource) -> EventStream {
        self.send(self.request_body(prompt, pictures))
    }

    /// Posts a request body built by [`OpenAiModel::request_body`] and streams the answer. A
    /// call refused with HTTP 429 or 5xx is made again as the model's [`RetryPolicy`] says. The
    /// answer's first piece must come within the first-byte timeout and each next one within the
    /// idle timeout; its lines, calls and arguments must keep within the model's
    /// [`AnswerLimits`]. The model's API key is redacted from every error.
    pub fn send(&self, body: Value) -> EventStream {
        let call = Call {
            client: self.client.clone(),
            url: self.config.completions_url(),
            key: self.key.clone(),
            body: bytes::Bytes::from(body.to_string()),
            config: self.config.clone(),
        };
        let key = self.key.clone();
        Box::pin(
            call.open()
                .try_flatten_stream()
                .map_err(move |error| error.redacted(key.as_ref().map(|Key(key)| key.as_str()))),
        )
    }
}

/// One call to the endpoint, made again when it is refused with HTTP 429 or 5xx.
struct Call {
    client: reqwest::Client,
    url: String,
    key: Option<Key>,
    body: bytes::Bytes,
    config: OpenAiConfig,
}

/// An attempt the endpoint refused, and the wait its `Retry-After` asked for.
struct Refused {
    error: OpenAiError,
    status: Option<u16>,
    retry_after: Option<Duration>,
}

impl From<OpenAiError> for Refused {
    fn from(error: OpenAiError) -> Self {
        Refused {
            error,
            status: None,
            retry_after: None,
        }
    }
}

impl Call {
    /// Makes the call until an answer streams or it is not to be made again.
    async fn open(
        self,
    ) -> Result<impl Stream<Item = Result<ModelEvent, OpenAiError>> + Send, OpenAiError> {
        let mut waited = Duration::ZERO;
        let mut retries = 0;
        loop {
            let refused = match self.attempt().await {
                Ok(answer) => return Ok(answer),
                Err(refused) => refused,
            };
            let wait = refused.status.and_then(|status| {
                self.config
                    .retry
                    .wait(status, refused.retry_after, retries, waited)
            });
            let Some(wait) = wait else {
                return Err(refused.error);
            };
            tracing::info!(
                "{} refused a call ({}); trying again in {} s",
                self.url,
                refused.error.clone().redacted(self.key()),
                wait.as_secs_f64()
            );
            tokio::time::sleep(wait).await;
            waited = waited.saturating_add(wait);
            retries += 1;
        }
    }

    fn key(&self) -> Option<&str> {
        self.key.as_ref().map(|Key(key)| key.as_str())
    }

    /// Sends the request once and checks the answer's head; the body is then read as a stream.
    async fn attempt(
        &self,
    ) -> Result<impl Stream<Item = Result<ModelEvent, OpenAiError>> + Send + use<>, Refused> {
        let config = &self.config;
        let deadline = after(config.first_byte_timeout);
        let no_answer = || OpenAiError::NoAnswer {
            seconds: config.first_byte_timeout.as_secs(),
        };
        let mut request = self
            .client
            .post(&self.url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(self.body.clone());
        if let Some(Key(key)) = &self.key {
            request = request.bearer_auth(key);
        }
        let response = tokio::time::timeout_at(deadline, request.send())
            .await
            .map_err(|_| no_answer())?
            .map_err(|e| {
                if e.is_connect() || e.is_timeout() {
                    OpenAiError::Unreachable {
                        url: self.url.clone(),
                        reason: reason(&e),
                    }
                } else {
                    OpenAiError::Request {
                        url: self.url.clone(),
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
                OpenAiError::RateLimited { message, .. } => OpenAiError::RateLimited {
                    message,
                    retry_after_seconds: retry_after,
                },
                other => other,
            };
            return Err(Refused {
                error,
                status: Some(status.as_u16()),
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
                _ => OpenAiError::BadChunk {
                    reason: "the endpoint answered with one JSON body, not a stream".into(),
                    start: error::quote(&body),
                },
            }
            .into());
        }
        let answer = events(
            response.bytes_stream().map_err(|e| reason(&e)),
            &config.limits,
        );
        Ok(timed(
            answer,
            deadline,
            config.first_byte_timeout,
            config.idle_timeout,
        ))
    }

    /// At most `max_error_body_bytes` of a body the endpoint sent instead of an answer, with the
    /// model's key redacted; the rest is not read. Reading stops too when the body goes quiet for
    /// the idle timeout.
    async fn read_capped(&self, mut response: reqwest::Response) -> String {
        let max = self.config.limits.max_error_body_bytes;
        let mut body: Vec<u8> = Vec::new();
        while body.len() < max {
            match tokio::time::timeout(self.config.idle_timeout, response.chunk()).await {
                Ok(Ok(Some(chunk))) => {
                    let room = max - body.len();
                    body.extend_from_slice(&chunk[..chunk.len().min(room)]);
                }
                _ => break,
            }
        }
        redact(&String::from_utf8_lossy(&body), self.key())
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
/// either ends the stream with [`OpenAiError::NoAnswer`] or [`OpenAiError::Stalled`].
fn timed(
    answer: impl Stream<Item = Result<ModelEvent, OpenAiError>> + Send + 'static,
    first: tokio::time::Instant,
    first_byte_timeout: Duration,
    idle: Duration,
) -> impl Stream<Item = Result<ModelEvent, OpenAiError>> + Send {
    let answer = Box::pin(answer);
    futures_util::stream::unfold(Some((answer, first, true)), move |state| async move {
        let (mut answer, deadline, before_first) = state?;
        match tokio::time::timeout_at(deadline, answer.next()).await {
            Ok(Some(item)) => Some((item, Some((answer, after(idle), false)))),
            Ok(None) => None,
            Err(_) => {
                let error = if before_first {
                    OpenAiError::NoAnswer {
                        seconds: first_byte_timeout.as_secs(),
                    }
                } else {
                    OpenAiError::Stalled {
                        seconds: idle.as_secs(),
                    }
                };
                Some((Err(error), None))
            }
        }
    })
}

impl Model for OpenAiModel {
    fn label(&self) -> &str {
        &self.label
    }

    fn capabilities(&self) -> &ModelCapabilities {
        &self.config.capabilities
    }

    fn stream(&self, prompt: &Prompt, pictures: &dyn PictureSource) -> ModelStream {
        Box::pin(OpenAiModel::stream(self, prompt, pictures).map_err(ModelError::from))
    }
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
