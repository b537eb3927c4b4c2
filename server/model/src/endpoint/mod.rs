//! A model behind an HTTP endpoint, whatever its wire format. What the adapters share lives here:
//! the configuration (key, timeouts, caps on an answer, retries), the call with its retries and
//! timeouts, server-sent events decoded from bytes split anywhere, and the errors, every context
//! overflow among them as [`EndpointError::ContextOverflow`] and the key redacted from all. The
//! OpenAI-compatible adapter ([`crate::openai`]) and the Anthropic adapter ([`crate::anthropic`])
//! differ only in the request they post, its headers, and how they read an event's data
//! ([`AnswerReader`]).

mod call;
mod caps;
mod config;
mod decode;
mod error;
mod sse;

pub(crate) use call::Connection;
pub use call::EventStream;
pub use caps::CallCaps;
pub(crate) use config::RawConfig;
pub use config::{AnswerLimits, ApiKey, ConfigError, EndpointConfig, RetryPolicy};
pub use decode::{AnswerReader, Decoder, events};
pub(crate) use error::quote;
pub use error::{EndpointError, REDACTED, classify, classify_stream_error, redact};
