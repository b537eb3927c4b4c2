//! Why a call to a model's endpoint failed, and how an error body (an HTTP answer's, or an
//! `error` event inside the stream) maps to one of these kinds, whichever adapter made the call.
//! Every context overflow, whatever the server's wording, is [`EndpointError::ContextOverflow`],
//! so the turn loop can compact and retry (rule C2).

use serde_json::Value;
use unicode_segmentation::UnicodeSegmentation;

/// Why a call to a model's endpoint failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EndpointError {
    /// The input does not fit the model's context window.
    #[error("the model's input is larger than its context window: {message}")]
    ContextOverflow { message: String },
    /// HTTP 401 or 403.
    #[error(
        "the endpoint refused the API key (HTTP {status}): {message}; check the model's api_key"
    )]
    Unauthorized { status: u16, message: String },
    /// HTTP 429, or a rate-limit error inside the stream.
    #[error("the endpoint is rate limiting requests: {message}; wait{} and try again", wait(*.retry_after_seconds))]
    RateLimited {
        message: String,
        /// The server's `Retry-After`, when it sent one in seconds.
        retry_after_seconds: Option<u64>,
    },
    /// HTTP 404: usually a base URL without its `/v1`, or a model the server does not have.
    #[error(
        "the endpoint has no such path or model (HTTP 404): {message}; check the base_url and the model name"
    )]
    NotFound { message: String },
    /// HTTP 5xx: the server failed.
    #[error("the endpoint failed (HTTP {status}): {message}; try again later")]
    ServerFailed { status: u16, message: String },
    /// The provider has no room for the call now: HTTP 529, or Anthropic's `overloaded_error`,
    /// which may also come inside the stream.
    #[error("the endpoint is overloaded: {message}; try again later")]
    Overloaded { message: String },
    /// Any other status the server refused the request with.
    #[error("the endpoint rejected the request (HTTP {status}): {message}")]
    Rejected { status: u16, message: String },
    /// No connection could be made.
    #[error(
        "could not connect to {url} ({reason}); check the base_url and that the server is running"
    )]
    Unreachable { url: String, reason: String },
    /// The request failed for another reason before an answer came.
    #[error("the request to {url} failed: {reason}")]
    Request { url: String, reason: String },
    /// The connection broke while the answer streamed.
    #[error("the answer's stream broke off: {reason}")]
    Interrupted { reason: String },
    /// The stream ended before the model said it had finished.
    #[error("the answer's stream ended before the model finished; the connection may have dropped")]
    Truncated,
    /// The endpoint answered with something that is not an event of a streamed answer.
    #[error(
        "the endpoint sent something that is not an event of a streamed answer ({reason}): {start}"
    )]
    BadChunk {
        reason: String,
        /// The start of what it sent.
        start: String,
    },
    /// The server reported an error inside the stream.
    #[error("the model failed while answering: {message}")]
    StreamFailed { message: String },
    /// Nothing of the answer came within the first-byte timeout.
    #[error(
        "the endpoint sent nothing of its answer within {seconds} s of the request (first_byte_timeout_seconds); check that the model runs and is not overloaded, or raise the timeout"
    )]
    NoAnswer { seconds: u64 },
    /// The answer began, then nothing new came within the idle timeout.
    #[error(
        "the answer stalled: nothing new came for {seconds} s (idle_timeout_seconds); check the endpoint, or raise the timeout"
    )]
    Stalled { seconds: u64 },
    /// A line of the answer's stream, or one event's data, is longer than the cap.
    #[error(
        "the answer's stream has a line longer than {kib} KiB (max_line_kib); check the base_url, or raise the cap"
    )]
    LineTooLong { kib: usize },
    /// One reply makes more tool calls than the cap.
    #[error("the answer makes more than {max} tool calls (max_tool_calls)")]
    TooManyCalls { max: usize },
    /// One tool call's arguments are longer than the cap.
    #[error(
        "the arguments of the answer's tool call {index} are longer than {kib} KiB (max_arguments_kib)"
    )]
    ArgumentsTooLong { index: u32, kib: usize },
    /// The arguments of one reply's tool calls together are longer than the cap.
    #[error(
        "the arguments of the answer's tool calls together are longer than {kib} KiB (max_total_arguments_kib)"
    )]
    AllArgumentsTooLong { kib: usize },
    /// The reply's text and thinking together are longer than the cap.
    #[error(
        "the answer streams more than {max} characters of text and thinking (max_reply_chars, by default 16 for each of the model's max_output_tokens); check that the endpoint serves the model configured, or raise the cap"
    )]
    ReplyTooLong { max: usize },
    /// The key is to come from an environment variable that is not set.
    #[error(
        "the API key is to come from the environment variable `{var}`, which is not set; set it, or put the key in the model's api_key"
    )]
    MissingKey { var: String },
    /// The key holds characters an HTTP header cannot carry.
    #[error(
        "the API key holds characters an HTTP header cannot carry (a line break, say); check the model's api_key"
    )]
    UnusableKey,
}

impl EndpointError {
    /// The error with `key` (the model's configured API key) redacted from everything it quotes,
    /// should the endpoint have echoed it.
    pub fn redacted(self, key: Option<&str>) -> EndpointError {
        let Some(key) = key else {
            return self;
        };
        let r = |text: String| redact(&text, Some(key));
        match self {
            EndpointError::ContextOverflow { message } => EndpointError::ContextOverflow {
                message: r(message),
            },
            EndpointError::Unauthorized { status, message } => EndpointError::Unauthorized {
                status,
                message: r(message),
            },
            EndpointError::RateLimited {
                message,
                retry_after_seconds,
            } => EndpointError::RateLimited {
                message: r(message),
                retry_after_seconds,
            },
            EndpointError::NotFound { message } => EndpointError::NotFound {
                message: r(message),
            },
            EndpointError::ServerFailed { status, message } => EndpointError::ServerFailed {
                status,
                message: r(message),
            },
            EndpointError::Overloaded { message } => EndpointError::Overloaded {
                message: r(message),
            },
            EndpointError::Rejected { status, message } => EndpointError::Rejected {
                status,
                message: r(message),
            },
            EndpointError::Unreachable { url, reason } => EndpointError::Unreachable {
                url,
                reason: r(reason),
            },
            EndpointError::Request { url, reason } => EndpointError::Request {
                url,
                reason: r(reason),
            },
            EndpointError::Interrupted { reason } => {
                EndpointError::Interrupted { reason: r(reason) }
            }
            EndpointError::BadChunk { reason, start } => EndpointError::BadChunk {
                reason: r(reason),
                start: r(start),
            },
            EndpointError::StreamFailed { message } => EndpointError::StreamFailed {
                message: r(message),
            },
            other @ (EndpointError::Truncated
            | EndpointError::NoAnswer { .. }
            | EndpointError::Stalled { .. }
            | EndpointError::LineTooLong { .. }
            | EndpointError::TooManyCalls { .. }
            | EndpointError::ArgumentsTooLong { .. }
            | EndpointError::AllArgumentsTooLong { .. }
            | EndpointError::ReplyTooLong { .. }
            | EndpointError::MissingKey { .. }
            | EndpointError::UnusableKey) => other,
        }
    }

    /// What went wrong and what to do, for the person who sent the message: never what the
    /// endpoint sent, which may echo part of a key or be a raw body (the error's `Display`, for
    /// the server's log, quotes it).
    pub fn reason(&self) -> String {
        match self {
            EndpointError::ContextOverflow { .. } => crate::OVERFLOW_REASON.into(),
            EndpointError::Unauthorized { status, .. } => format!(
                "the model's endpoint refused its API key (HTTP {status}); ask an administrator \
                 to check the model's api_key"
            ),
            EndpointError::RateLimited {
                retry_after_seconds,
                ..
            } => format!(
                "the model's endpoint is rate limiting requests; wait{} and send the message again",
                wait(*retry_after_seconds)
            ),
            EndpointError::NotFound { .. } => "the model's endpoint has no such path or model \
                (HTTP 404); ask an administrator to check its base_url and model name"
                .into(),
            EndpointError::ServerFailed { status, .. } => {
                format!("the model's endpoint failed (HTTP {status}); send the message again later")
            }
            EndpointError::Overloaded { .. } => "the model's provider is overloaded; send the \
                message again in a little while"
                .into(),
            EndpointError::Rejected { status, .. } => format!(
                "the model's endpoint rejected the request (HTTP {status}); the server's log \
                 says why"
            ),
            EndpointError::Unreachable { .. } => "the model's endpoint could not be reached; ask \
                an administrator to check its base_url and that it is running"
                .into(),
            EndpointError::Request { .. } => {
                "the request to the model failed before it answered; send the message again".into()
            }
            EndpointError::Interrupted { .. } | EndpointError::Truncated => {
                "the model's answer broke off before it finished; send the message again".into()
            }
            EndpointError::BadChunk { .. } => "the model's endpoint sent something that is not a \
                streamed answer; ask an administrator to check its base_url"
                .into(),
            EndpointError::StreamFailed { .. } => {
                "the model failed while answering; send the message again".into()
            }
            EndpointError::NoAnswer { seconds } => format!(
                "the model did not start answering within {seconds} s; send the message again \
                 later, and tell an administrator if it keeps happening"
            ),
            EndpointError::Stalled { seconds } => format!(
                "the model stopped answering for {seconds} s before it finished; send the message \
                 again"
            ),
            EndpointError::LineTooLong { kib } => format!(
                "the model's endpoint sent a line longer than {kib} KiB, more than the server \
                 accepts; send the message again, and tell an administrator if it keeps happening"
            ),
            EndpointError::TooManyCalls { max } => format!(
                "the model made more than {max} tool calls in one reply; send the message again, \
                 perhaps asking for less at once"
            ),
            EndpointError::ArgumentsTooLong { kib, .. } => format!(
                "the model wrote more than {kib} KiB of arguments for one tool call; send the \
                 message again, perhaps asking for less at once"
            ),
            EndpointError::AllArgumentsTooLong { kib } => format!(
                "the model wrote more than {kib} KiB of arguments for its tool calls in one \
                 reply; send the message again, perhaps asking for less at once"
            ),
            EndpointError::ReplyTooLong { max } => format!(
                "the model wrote more than {max} characters in one reply, more than the server \
                 accepts from it; send the message again, perhaps asking for a shorter answer, \
                 and tell an administrator if it keeps happening"
            ),
            EndpointError::MissingKey { var } => format!(
                "the model's API key is to come from the environment variable `{var}`, which is \
                 not set; ask an administrator to set it"
            ),
            EndpointError::UnusableKey => "the model's API key cannot be sent in a request; ask \
                an administrator to check the model's api_key"
                .into(),
        }
    }

    /// Whether the call is to be made again (as its [`RetryPolicy`](super::RetryPolicy) allows)
    /// when it failed so before anything of the answer came: a rate limit, an overloaded
    /// provider, or a failing server.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            EndpointError::RateLimited { .. }
                | EndpointError::Overloaded { .. }
                | EndpointError::ServerFailed { .. }
        )
    }
}

impl From<EndpointError> for crate::ModelError {
    fn from(error: EndpointError) -> Self {
        match error {
            EndpointError::ContextOverflow { message } => {
                crate::ModelError::ContextOverflow { message }
            }
            other => crate::ModelError::Failed {
                reason: other.reason(),
                detail: other.to_string(),
            },
        }
    }
}

/// Phrases servers use for a context overflow, lower case. OpenAI, Groq and vLLM say "maximum
/// context length"; Anthropic "prompt is too long" (and "exceed context limit" when the input and
/// `max_tokens` together pass the window); llama.cpp "exceeds the available context size";
/// Mistral "too large for model with … maximum context length".
const OVERFLOW_PHRASES: [&str; 8] = [
    "maximum context length",
    "context length exceeded",
    "context_length_exceeded",
    "prompt is too long",
    "exceed context limit",
    "context window",
    "exceeds the available context size",
    "input is too long",
];

/// Error codes and types servers mark a context overflow with.
const OVERFLOW_CODES: [&str; 2] = ["context_length_exceeded", "exceed_context_size_error"];

/// How many characters of a server's text an error quotes at most.
const QUOTED_CHARS: usize = 300;

/// The error for an HTTP answer with a failing `status` and its `body`.
pub fn classify(status: u16, body: &str) -> EndpointError {
    let detail = Detail::from_body(body);
    let message = detail.message_or(status);
    match status {
        401 | 403 => EndpointError::Unauthorized { status, message },
        429 => EndpointError::RateLimited {
            message,
            retry_after_seconds: None,
        },
        _ if detail.is_overflow() => EndpointError::ContextOverflow { message },
        404 => EndpointError::NotFound { message },
        _ if status == 529 || detail.is_overloaded() => EndpointError::Overloaded { message },
        500..=599 => EndpointError::ServerFailed { status, message },
        _ => EndpointError::Rejected { status, message },
    }
}

/// The error for an `error` object a server sent inside the stream.
pub fn classify_stream_error(error: &Value) -> EndpointError {
    let detail = Detail::from_error(error);
    let message = detail
        .message
        .clone()
        .unwrap_or_else(|| quote(&error.to_string()));
    if detail.is_overflow() {
        EndpointError::ContextOverflow { message }
    } else if detail.status == Some(429)
        || detail.code.as_deref() == Some("rate_limit_exceeded")
        || detail.kind.as_deref() == Some("rate_limit_error")
    {
        EndpointError::RateLimited {
            message,
            retry_after_seconds: None,
        }
    } else if detail.is_overloaded() {
        EndpointError::Overloaded { message }
    } else {
        EndpointError::StreamFailed { message }
    }
}

/// `text` with anything key-like redacted ([`redact`]), cut to [`QUOTED_CHARS`] characters,
/// never inside one, with an ellipsis when cut.
pub(crate) fn quote(text: &str) -> String {
    let text = redact(text.trim(), None);
    match text.grapheme_indices(true).nth(QUOTED_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

/// What a redacted secret is replaced with.
pub const REDACTED: &str = "[redacted]";

/// `text` with anything key-like replaced by [`REDACTED`]: the configured `key` itself, a token
/// starting `sk-` or `sk_`, the token after `Bearer` or `Basic`, and a value written after a
/// name ending in `key`, `token`, `secret` or `password` with `:` or `=` (`"api_key": "…"`,
/// `token=…`). An endpoint's error body may echo the key it was sent.
pub fn redact(text: &str, key: Option<&str>) -> String {
    let text = match key.map(str::trim).filter(|key| key.len() >= 4) {
        Some(key) => text.replace(key, REDACTED),
        None => text.to_string(),
    };
    let is_token = |c: char| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '*' | '…');
    let mut out = String::with_capacity(text.len());
    // The token before the current one, and what has been written since it.
    let mut previous = String::new();
    let mut between = String::new();
    let mut rest = text.as_str();
    while let Some(first) = rest.chars().next() {
        if !is_token(first) {
            out.push(first);
            between.push(first);
            rest = &rest[first.len_utf8()..];
            continue;
        }
        let end = rest.find(|c: char| !is_token(c)).unwrap_or(rest.len());
        let (token, after) = rest.split_at(end);
        let name = previous.to_lowercase();
        let secret = token.starts_with("sk-") && token.len() > 6
            || token.starts_with("sk_") && token.len() > 6
            || (matches!(name.as_str(), "bearer" | "basic")
                && !between.is_empty()
                && between.chars().all(char::is_whitespace))
            || (["key", "token", "secret", "password"]
                .iter()
                .any(|n| name.ends_with(n))
                && between.contains([':', '='])
                && between
                    .chars()
                    .all(|c| c.is_whitespace() || matches!(c, ':' | '=' | '"' | '\'')));
        out.push_str(if secret { REDACTED } else { token });
        previous = token.to_string();
        between.clear();
        rest = after;
    }
    out
}

fn wait(retry_after_seconds: Option<u64>) -> String {
    match retry_after_seconds {
        Some(seconds) => format!(" {seconds} s"),
        None => String::new(),
    }
}

/// What an error body says, in the shapes servers use: OpenAI's `{"error": {message, type,
/// code}}` (Anthropic's `{"type": "error", "error": {type, message}}` is the same shape), older
/// vLLM's top-level `{message, type, code}`, and a bare `{"error": "…"}`.
#[derive(Debug, Default)]
struct Detail {
    message: Option<String>,
    kind: Option<String>,
    code: Option<String>,
    /// A numeric `code`, which some servers set to the HTTP status.
    status: Option<u16>,
    /// The body when it is not JSON.
    text: Option<String>,
}

impl Detail {
    fn from_body(body: &str) -> Detail {
        match serde_json::from_str::<Value>(body) {
            Ok(value) => match value.get("error") {
                Some(error) => Detail::from_error(error),
                None => Detail::from_error(&value),
            },
            Err(_) => Detail {
                text: Some(quote(body)).filter(|t| !t.is_empty()),
                ..Detail::default()
            },
        }
    }

    fn from_error(error: &Value) -> Detail {
        if let Value::String(message) = error {
            return Detail {
                message: Some(quote(message)),
                ..Detail::default()
            };
        }
        let text = |key: &str| error.get(key).and_then(Value::as_str).map(str::to_string);
        let code = error.get("code");
        Detail {
            message: text("message").map(|m| quote(&m)),
            kind: text("type"),
            code: code.and_then(Value::as_str).map(str::to_string),
            status: code
                .and_then(Value::as_u64)
                .and_then(|c| u16::try_from(c).ok()),
            text: None,
        }
    }

    fn is_overflow(&self) -> bool {
        let marked = [&self.code, &self.kind]
            .into_iter()
            .flatten()
            .any(|c| OVERFLOW_CODES.contains(&c.as_str()));
        let worded = [&self.message, &self.text].into_iter().flatten().any(|m| {
            let m = m.to_lowercase();
            OVERFLOW_PHRASES.iter().any(|phrase| m.contains(phrase))
        });
        marked || worded
    }

    /// Anthropic's `overloaded_error`, or a numeric code of 529.
    fn is_overloaded(&self) -> bool {
        self.kind.as_deref() == Some("overloaded_error") || self.status == Some(529)
    }

    fn message_or(&self, status: u16) -> String {
        self.message
            .clone()
            .or_else(|| self.text.clone())
            .unwrap_or_else(|| format!("HTTP {status} without a message"))
    }
}
