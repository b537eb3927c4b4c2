//! How a model's endpoint is configured, whichever adapter calls it: where it is, its key, the
//! timeouts, the caps on an answer and the retries. A model's table in the models file holds these
//! with the model's name and capabilities ([`RawConfig`], read by each adapter's configuration).

use std::time::Duration;

use portal_core::effort::EffortConfig;
use portal_core::model::{ModelCapabilities, Provider};
use portal_core::prompt::anthropic::MIN_THINKING_BUDGET;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::EndpointError;

/// Where a model's endpoint is and how it is called.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointConfig {
    /// The API's address up to and including its version (`…/v1`), without a trailing slash; the
    /// adapter appends its path.
    pub base_url: String,
    pub api_key: ApiKey,
    /// How long connecting may take.
    pub connect_timeout: Duration,
    /// How long the first piece of the answer may take from sending the request: a text,
    /// thinking or call fragment, a usage report or the finish. Keep-alives (comment lines,
    /// empty lines, events that carry nothing) do not count.
    pub first_byte_timeout: Duration,
    /// How long the answer may go without a new piece once it has begun.
    pub idle_timeout: Duration,
    /// Caps on what an answer may hold.
    pub limits: AnswerLimits,
    /// Retries of a call the endpoint refused.
    pub retry: RetryPolicy,
}

impl EndpointConfig {
    /// An endpoint at `base_url` with the default timeouts, limits and retries, for a model that
    /// writes at most `max_output_tokens` tokens (the reply cap is derived from it).
    pub fn new(base_url: &str, api_key: ApiKey, max_output_tokens: u32) -> EndpointConfig {
        EndpointConfig {
            base_url: base_url.trim().trim_end_matches('/').to_string(),
            api_key,
            connect_timeout: Duration::from_secs(DEFAULT_CONNECT_TIMEOUT_SECONDS),
            first_byte_timeout: Duration::from_secs(DEFAULT_FIRST_BYTE_TIMEOUT_SECONDS),
            idle_timeout: Duration::from_secs(DEFAULT_IDLE_TIMEOUT_SECONDS),
            limits: AnswerLimits::for_output_tokens(max_output_tokens),
            retry: RetryPolicy::default(),
        }
    }
}

/// Caps on an answer, so that a misbehaving endpoint cannot grow the server's memory without
/// bound. Each one exceeded fails the call, naming the cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnswerLimits {
    /// The longest line of the answer's stream (and the longest event's data), in bytes.
    pub max_line_bytes: usize,
    /// The most of an error answer's body that is read, in bytes; the rest is not read.
    pub max_error_body_bytes: usize,
    /// The most tool calls one reply may make.
    pub max_tool_calls: usize,
    /// The longest arguments of one tool call, in bytes.
    pub max_arguments_bytes: usize,
    /// The most arguments all the tool calls of one reply may write together, in bytes.
    pub max_total_arguments_bytes: usize,
    /// The most characters of text and thinking one call may stream, together.
    pub max_reply_chars: usize,
}

impl AnswerLimits {
    /// The default caps, for a model that writes at most `max_output_tokens` tokens: the reply
    /// cap is [`REPLY_CHARS_PER_TOKEN`] characters for each of them.
    pub fn for_output_tokens(max_output_tokens: u32) -> AnswerLimits {
        AnswerLimits {
            max_line_bytes: kib(DEFAULT_MAX_LINE_KIB),
            max_error_body_bytes: kib(DEFAULT_MAX_ERROR_BODY_KIB),
            max_tool_calls: DEFAULT_MAX_TOOL_CALLS,
            max_arguments_bytes: kib(DEFAULT_MAX_ARGUMENTS_KIB),
            max_total_arguments_bytes: kib(DEFAULT_MAX_TOTAL_ARGUMENTS_KIB),
            max_reply_chars: default_max_reply_chars(max_output_tokens),
        }
    }
}

/// The reply cap of a model that writes at most `max_output_tokens` tokens when none is
/// configured: [`REPLY_CHARS_PER_TOKEN`] characters a token.
pub fn default_max_reply_chars(max_output_tokens: u32) -> usize {
    usize::try_from(max_output_tokens)
        .unwrap_or(usize::MAX)
        .saturating_mul(REPLY_CHARS_PER_TOKEN)
}

/// How a call the endpoint refused (HTTP 429 or 5xx, or an overloaded or rate-limit error opening
/// the stream) is made again: only before anything of the answer was read, after the endpoint's
/// `Retry-After` in seconds when it sent one, else after 1 s, 2 s, 4 s and so on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// How many times a call is made again at most.
    pub retries: u32,
    /// How long all the waits of one call may add up to; a wait that would pass it is not made
    /// and the call fails.
    pub max_wait: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            retries: DEFAULT_RETRIES,
            max_wait: Duration::from_secs(DEFAULT_RETRY_WAIT_SECONDS),
        }
    }
}

impl RetryPolicy {
    /// How long to wait before retry number `retries + 1` of a refused call (`retry_after` when
    /// the endpoint asked for a wait), after waiting `waited` so far; `None` when the call is not
    /// to be made again.
    pub fn wait(
        &self,
        retry_after: Option<Duration>,
        retries: u32,
        waited: Duration,
    ) -> Option<Duration> {
        if retries >= self.retries {
            return None;
        }
        let backoff = || Duration::from_secs(1u64.checked_shl(retries).unwrap_or(u64::MAX));
        let wait = retry_after.unwrap_or_else(backoff);
        let total = waited.checked_add(wait)?;
        (total <= self.max_wait).then_some(wait)
    }
}

fn kib(kib: usize) -> usize {
    kib.saturating_mul(1024)
}

/// Where the API key comes from. Written in TOML as `api_key = "sk-…"` or
/// `api_key = { env = "VAR" }`; left out for a local server that wants none.
#[derive(Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(untagged)]
pub enum ApiKey {
    /// No key: the request carries none.
    #[default]
    None,
    /// The key itself.
    Value(String),
    /// The name of the environment variable holding the key, read when the model is set up.
    Env { env: String },
}

impl ApiKey {
    /// The key, looking environment variables up with `lookup`.
    pub fn resolve(
        &self,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<String>, EndpointError> {
        match self {
            ApiKey::None => Ok(None),
            ApiKey::Value(key) => Ok(Some(key.clone())),
            ApiKey::Env { env } => match lookup(env).filter(|key| !key.trim().is_empty()) {
                Some(key) => Ok(Some(key.trim().to_string())),
                None => Err(EndpointError::MissingKey { var: env.clone() }),
            },
        }
    }
}

impl std::fmt::Debug for ApiKey {
    /// Never shows the key itself.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ApiKey::None => f.write_str("None"),
            ApiKey::Value(_) => f.write_str("Value(\"…\")"),
            ApiKey::Env { env } => f.debug_struct("Env").field("env", env).finish(),
        }
    }
}

/// Why a configuration was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("base_url `{0}` must start with http:// or https://")]
    BaseUrl(String),
    #[error("base_url must say where the API lives, up to and including its version (…/v1)")]
    NoBaseUrl,
    #[error("model must name the model, as the endpoint knows it")]
    NoModel,
    #[error(
        "capabilities take no `{0}`: the model is named by `model`, and the provider by the model's kind"
    )]
    Reserved(String),
    #[error("capabilities: {0}")]
    Capabilities(String),
    #[error("`{0}` must be at least 1")]
    Zero(&'static str),
    #[error(
        "thinking_budget is for Anthropic models (kind = \"anthropic\"); an OpenAI-compatible model is sent the effort as reasoning_effort"
    )]
    ThinkingBudget,
    #[error(
        "thinking_budget.{level} is {budget} tokens; Anthropic's smallest is {MIN_THINKING_BUDGET}"
    )]
    SmallBudget { level: &'static str, budget: u32 },
}

/// The connect timeout when none is configured. **Decision:** 10 s.
pub const DEFAULT_CONNECT_TIMEOUT_SECONDS: u64 = 10;
/// The first-byte timeout when none is configured. **Decision:** 300 s, for reasoning models that
/// think for minutes before they write and stream none of it.
pub const DEFAULT_FIRST_BYTE_TIMEOUT_SECONDS: u64 = 300;
/// The idle timeout when none is configured. **Decision:** 120 s.
pub const DEFAULT_IDLE_TIMEOUT_SECONDS: u64 = 120;
/// How many times a refused call is made again when not configured. **Decision:** 2.
pub const DEFAULT_RETRIES: u32 = 2;
/// How long a call's retries may wait in all when not configured. **Decision:** 30 s.
pub const DEFAULT_RETRY_WAIT_SECONDS: u64 = 30;
/// The longest line of an answer when not configured. **Decision:** 4 MiB, room for a whole tool
/// call of [`DEFAULT_MAX_ARGUMENTS_KIB`] in one chunk (Ollama sends them so), escaped.
pub const DEFAULT_MAX_LINE_KIB: usize = 4096;
/// How much of an error body is read when not configured. **Decision:** 64 KiB.
pub const DEFAULT_MAX_ERROR_BODY_KIB: usize = 64;
/// The most tool calls in one reply when not configured. **Decision:** 64.
pub const DEFAULT_MAX_TOOL_CALLS: usize = 64;
/// The longest arguments of one call when not configured. **Decision:** 1 MiB.
pub const DEFAULT_MAX_ARGUMENTS_KIB: usize = 1024;
/// The most arguments one reply's calls may write together when not configured.
/// **Decision:** 4 MiB: four calls at the longest, or many short ones, where the caps of one call
/// and of the calls' number alone would let one reply hold 64 MiB of arguments.
pub const DEFAULT_MAX_TOTAL_ARGUMENTS_KIB: usize = 4096;
/// How many characters of text and thinking a call may stream for each token of the model's
/// `max_output_tokens` when `max_reply_chars` is not configured. **Decision:** 16. A token is
/// about 4 characters of English prose and rarely above 8 (long words, code, a run of spaces or
/// dashes), and a character of Chinese or Japanese is a token or more, so a model that keeps to
/// its own limit stays well inside the cap; an endpoint that sends more is not that model
/// writing (a 32,768-token model may stream 512 Ki characters, at most 2 MiB of UTF-8). Text and
/// thinking count together, as a provider's output limit counts them; tool calls have their own
/// caps.
pub const REPLY_CHARS_PER_TOKEN: usize = 16;

fn default_connect_timeout() -> u64 {
    DEFAULT_CONNECT_TIMEOUT_SECONDS
}

fn default_first_byte_timeout() -> u64 {
    DEFAULT_FIRST_BYTE_TIMEOUT_SECONDS
}

fn default_idle_timeout() -> u64 {
    DEFAULT_IDLE_TIMEOUT_SECONDS
}

fn default_retries() -> u32 {
    DEFAULT_RETRIES
}

fn default_retry_wait() -> u64 {
    DEFAULT_RETRY_WAIT_SECONDS
}

fn default_max_line() -> usize {
    DEFAULT_MAX_LINE_KIB
}

fn default_max_error_body() -> usize {
    DEFAULT_MAX_ERROR_BODY_KIB
}

fn default_max_tool_calls() -> usize {
    DEFAULT_MAX_TOOL_CALLS
}

fn default_max_arguments() -> usize {
    DEFAULT_MAX_ARGUMENTS_KIB
}

fn default_max_total_arguments() -> usize {
    DEFAULT_MAX_TOTAL_ARGUMENTS_KIB
}

/// A model's table as the models file writes it, for either adapter; each adapter's
/// configuration is read through it ([`RawConfig::read`]). Unknown fields are refused.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawConfig {
    #[serde(default)]
    base_url: Option<String>,
    #[serde(default)]
    api_key: ApiKey,
    model: String,
    capabilities: Map<String, Value>,
    #[serde(default = "default_connect_timeout")]
    connect_timeout_seconds: u64,
    #[serde(default = "default_first_byte_timeout")]
    first_byte_timeout_seconds: u64,
    #[serde(default = "default_idle_timeout")]
    idle_timeout_seconds: u64,
    #[serde(default = "default_retries")]
    retries: u32,
    #[serde(default = "default_retry_wait")]
    retry_wait_seconds: u64,
    #[serde(default = "default_max_line")]
    max_line_kib: usize,
    #[serde(default = "default_max_error_body")]
    max_error_body_kib: usize,
    #[serde(default = "default_max_tool_calls")]
    max_tool_calls: usize,
    #[serde(default = "default_max_arguments")]
    max_arguments_kib: usize,
    #[serde(default = "default_max_total_arguments")]
    max_total_arguments_kib: usize,
    #[serde(default)]
    max_reply_chars: Option<usize>,
    #[serde(default)]
    thinking_budget: Option<EffortConfig>,
}

/// A model's table, read and checked.
pub(crate) struct ReadConfig {
    pub(crate) endpoint: EndpointConfig,
    /// The capabilities, `id` being the configured `model`.
    pub(crate) capabilities: ModelCapabilities,
    /// Thinking budgets per effort level, when the table sets them.
    pub(crate) thinking_budget: Option<EffortConfig>,
}

impl RawConfig {
    /// The table for a model of `provider`, whose API is at `default_base_url` when the table
    /// names none (`None`: the table must name it).
    pub(crate) fn read(
        self,
        provider: Provider,
        default_base_url: Option<&str>,
    ) -> Result<ReadConfig, ConfigError> {
        let base_url = match (&self.base_url, default_base_url) {
            (Some(url), _) => url.trim(),
            (None, Some(url)) => url,
            (None, None) => return Err(ConfigError::NoBaseUrl),
        };
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            return Err(ConfigError::BaseUrl(base_url.to_string()));
        }
        let model = self.model.trim();
        if model.is_empty() {
            return Err(ConfigError::NoModel);
        }
        let mut capabilities = self.capabilities;
        for reserved in ["id", "provider"] {
            if capabilities.contains_key(reserved) {
                return Err(ConfigError::Reserved(reserved.to_string()));
            }
        }
        capabilities.insert("id".into(), Value::String(model.to_string()));
        capabilities.insert(
            "provider".into(),
            serde_json::to_value(provider).map_err(|e| ConfigError::Capabilities(e.to_string()))?,
        );
        let capabilities: ModelCapabilities =
            serde_json::from_value(Value::Object(capabilities))
                .map_err(|e| ConfigError::Capabilities(e.to_string()))?;
        // A model that may write nothing would get a reply cap of nothing.
        if capabilities.max_output_tokens == 0 {
            return Err(ConfigError::Zero("capabilities.max_output_tokens"));
        }
        for (field, value) in [
            ("connect_timeout_seconds", self.connect_timeout_seconds),
            (
                "first_byte_timeout_seconds",
                self.first_byte_timeout_seconds,
            ),
            ("idle_timeout_seconds", self.idle_timeout_seconds),
        ] {
            if value == 0 {
                return Err(ConfigError::Zero(field));
            }
        }
        for (field, value) in [
            ("max_line_kib", self.max_line_kib),
            ("max_error_body_kib", self.max_error_body_kib),
            ("max_tool_calls", self.max_tool_calls),
            ("max_arguments_kib", self.max_arguments_kib),
            ("max_total_arguments_kib", self.max_total_arguments_kib),
        ] {
            if value == 0 {
                return Err(ConfigError::Zero(field));
            }
        }
        if self.max_reply_chars == Some(0) {
            return Err(ConfigError::Zero("max_reply_chars"));
        }
        if let Some(budgets) = &self.thinking_budget {
            for (level, budget) in [
                ("low", budgets.low_budget),
                ("medium", budgets.medium_budget),
                ("high", budgets.high_budget),
            ] {
                if budget < MIN_THINKING_BUDGET {
                    return Err(ConfigError::SmallBudget { level, budget });
                }
            }
        }
        let mut endpoint =
            EndpointConfig::new(base_url, self.api_key, capabilities.max_output_tokens);
        endpoint.connect_timeout = Duration::from_secs(self.connect_timeout_seconds);
        endpoint.first_byte_timeout = Duration::from_secs(self.first_byte_timeout_seconds);
        endpoint.idle_timeout = Duration::from_secs(self.idle_timeout_seconds);
        endpoint.retry = RetryPolicy {
            retries: self.retries,
            max_wait: Duration::from_secs(self.retry_wait_seconds),
        };
        endpoint.limits = AnswerLimits {
            max_line_bytes: kib(self.max_line_kib),
            max_error_body_bytes: kib(self.max_error_body_kib),
            max_tool_calls: self.max_tool_calls,
            max_arguments_bytes: kib(self.max_arguments_kib),
            max_total_arguments_bytes: kib(self.max_total_arguments_kib),
            max_reply_chars: self
                .max_reply_chars
                .unwrap_or_else(|| default_max_reply_chars(capabilities.max_output_tokens)),
        };
        Ok(ReadConfig {
            endpoint,
            capabilities,
            thinking_budget: self.thinking_budget,
        })
    }
}
