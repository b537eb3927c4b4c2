//! Why a call to an OpenAI-compatible endpoint failed, and how a server's error body maps to
//! one of these kinds. Every context overflow, whatever the server's wording, is
//! [`OpenAiError::ContextOverflow`], so the turn loop can compact and retry (rule C2).

use serde_json::Value;
use unicode_segmentation::UnicodeSegmentation;

/// Why a call to an OpenAI-compatible endpoint failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OpenAiError {
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
    /// The endpoint answered with something that is not a chat completion stream.
    #[error("the endpoint sent something that is not a chat completion chunk ({reason}): {start}")]
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
    /// The key is to come from an environment variable that is not set.
    #[error(
        "the API key is to come from the environment variable `{var}`, which is not set; set it, or put the key in the model's api_key"
    )]
    MissingKey { var: String },
}

impl OpenAiError {
    /// The error with `key` (the model's configured API key) redacted from everything it quotes,
    /// should the endpoint have echoed it.
    pub fn redacted(self, key: Option<&str>) -> OpenAiError {
        let Some(key) = key else {
            return self;
        };
        let r = |text: String| redact(&text, Some(key));
        match self {
            OpenAiError::ContextOverflow { message } => OpenAiError::ContextOverflow {
                message: r(message),
            },
            OpenAiError::Unauthorized { status, message } => OpenAiError::Unauthorized {
                status,
                message: r(message),
            },
            OpenAiError::RateLimited {
                message,
                retry_after_seconds,
            } => OpenAiError::RateLimited {
                message: r(message),
                retry_after_seconds,
            },
            OpenAiError::NotFound { message } => OpenAiError::NotFound {
                message: r(message),
            },
            OpenAiError::ServerFailed { status, message } => OpenAiError::ServerFailed {
                status,
                message: r(message),
            },
            OpenAiError::Rejected { status, message } => OpenAiError::Rejected {
                status,
                message: r(message),
            },
            OpenAiError::Unreachable { url, reason } => OpenAiError::Unreachable {
                url,
                reason: r(reason),
            },
            OpenAiError::Request { url, reason } => OpenAiError::Request {
                url,
                reason: r(reason),
            },
            OpenAiError::Interrupted { reason } => OpenAiError::Interrupted { reason: r(reason) },
            OpenAiError::BadChunk { reason, start } => OpenAiError::BadChunk {
                reason: r(reason),
                start: r(start),
            },
            OpenAiError::StreamFailed { message } => OpenAiError::StreamFailed {
                message: r(message),
            },
            other @ (OpenAiError::Truncated
            | OpenAiError::NoAnswer { .. }
            | OpenAiError::Stalled { .. }
            | OpenAiError::LineTooLong { .. }
            | OpenAiError::TooManyCalls { .. }
            | OpenAiError::ArgumentsTooLong { .. }
            | OpenAiError::MissingKey { .. }) => other,
        }
    }

    /// What went wrong and what to do, for the person who sent the message: never what the
    /// endpoint sent, which may echo part of a key or be a raw body (the error's `Display`, for
    /// the server's log, quotes it).
    pub fn reason(&self) -> String {
        match self {
            OpenAiError::ContextOverflow { .. } => crate::model::OVERFLOW_REASON.into(),
            OpenAiError::Unauthorized { status, .. } => format!(
                "the model's endpoint refused its API key (HTTP {status}); ask an administrator \
                 to check the model's api_key"
            ),
            OpenAiError::RateLimited {
                retry_after_seconds,
                ..
            } => format!(
                "the model's endpoint is rate limiting requests; wait{} and send the message again",
                wait(*retry_after_seconds)
            ),
            OpenAiError::NotFound { .. } => "the model's endpoint has no such path or model \
                (HTTP 404); ask an administrator to check its base_url and model name"
                .into(),
            OpenAiError::ServerFailed { status, .. } => {
                format!("the model's endpoint failed (HTTP {status}); send the message again later")
            }
            OpenAiError::Rejected { status, .. } => format!(
                "the model's endpoint rejected the request (HTTP {status}); the server's log \
                 says why"
            ),
            OpenAiError::Unreachable { .. } => "the model's endpoint could not be reached; ask \
                an administrator to check its base_url and that it is running"
                .into(),
            OpenAiError::Request { .. } => {
                "the request to the model failed before it answered; send the message again".into()
            }
            OpenAiError::Interrupted { .. } | OpenAiError::Truncated => {
                "the model's answer broke off before it finished; send the message again".into()
            }
            OpenAiError::BadChunk { .. } => "the model's endpoint sent something that is not a \
                chat completion; ask an administrator to check its base_url"
                .into(),
            OpenAiError::StreamFailed { .. } => {
                "the model failed while answering; send the message again".into()
            }
            OpenAiError::NoAnswer { seconds } => format!(
                "the model did not start answering within {seconds} s; send the message again \
                 later, and tell an administrator if it keeps happening"
            ),
            OpenAiError::Stalled { seconds } => format!(
                "the model stopped answering for {seconds} s before it finished; send the message \
                 again"
            ),
            OpenAiError::LineTooLong { kib } => format!(
                "the model's endpoint sent a line longer than {kib} KiB, more than the server \
                 accepts; send the message again, and tell an administrator if it keeps happening"
            ),
            OpenAiError::TooManyCalls { max } => format!(
                "the model made more than {max} tool calls in one reply; send the message again, \
                 perhaps asking for less at once"
            ),
            OpenAiError::ArgumentsTooLong { kib, .. } => format!(
                "the model wrote more than {kib} KiB of arguments for one tool call; send the \
                 message again, perhaps asking for less at once"
            ),
            OpenAiError::MissingKey { var } => format!(
                "the model's API key is to come from the environment variable `{var}`, which is \
                 not set; ask an administrator to set it"
            ),
        }
    }
}

impl From<OpenAiError> for crate::model::ModelError {
    fn from(error: OpenAiError) -> Self {
        match error {
            OpenAiError::ContextOverflow { message } => {
                crate::model::ModelError::ContextOverflow { message }
            }
            other => crate::model::ModelError::Failed {
                reason: other.reason(),
                detail: other.to_string(),
            },
        }
    }
}

/// Phrases servers use for a context overflow, lower case. OpenAI, Groq and vLLM say "maximum
/// context length"; Anthropic-style gateways "prompt is too long"; llama.cpp "exceeds the
/// available context size"; Mistral "too large for model with … maximum context length".
const OVERFLOW_PHRASES: [&str; 7] = [
    "maximum context length",
    "context length exceeded",
    "context_length_exceeded",
    "prompt is too long",
    "context window",
    "exceeds the available context size",
    "input is too long",
];

/// Error codes and types servers mark a context overflow with.
const OVERFLOW_CODES: [&str; 2] = ["context_length_exceeded", "exceed_context_size_error"];

/// How many characters of a server's text an error quotes at most.
const QUOTED_CHARS: usize = 300;

/// The error for an HTTP answer with a failing `status` and its `body`.
pub fn classify(status: u16, body: &str) -> OpenAiError {
    let detail = Detail::from_body(body);
    let message = detail.message_or(status);
    match status {
        401 | 403 => OpenAiError::Unauthorized { status, message },
        429 => OpenAiError::RateLimited {
            message,
            retry_after_seconds: None,
        },
        _ if detail.is_overflow() => OpenAiError::ContextOverflow { message },
        404 => OpenAiError::NotFound { message },
        500..=599 => OpenAiError::ServerFailed { status, message },
        _ => OpenAiError::Rejected { status, message },
    }
}

/// The error for an `error` object a server sent inside the stream.
pub fn classify_stream_error(error: &Value) -> OpenAiError {
    let detail = Detail::from_error(error);
    let message = detail
        .message
        .clone()
        .unwrap_or_else(|| quote(&error.to_string()));
    if detail.is_overflow() {
        OpenAiError::ContextOverflow { message }
    } else if detail.status == Some(429)
        || detail.code.as_deref() == Some("rate_limit_exceeded")
        || detail.kind.as_deref() == Some("rate_limit_error")
    {
        OpenAiError::RateLimited {
            message,
            retry_after_seconds: None,
        }
    } else {
        OpenAiError::StreamFailed { message }
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
/// code}}`, older vLLM's top-level `{message, type, code}`, and a bare `{"error": "…"}`.
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

    fn message_or(&self, status: u16) -> String {
        self.message
            .clone()
            .or_else(|| self.text.clone())
            .unwrap_or_else(|| format!("HTTP {status} without a message"))
    }
}
