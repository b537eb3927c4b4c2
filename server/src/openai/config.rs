//! How an OpenAI-compatible endpoint is configured: where it is, its key, the model's name and
//! what the model can do.

use std::time::Duration;

use portal_core::model::{ModelCapabilities, Provider};
use serde::Deserialize;
use serde_json::{Map, Value};

/// An OpenAI-compatible endpoint and the model called there, as read from TOML or JSON:
///
/// ```toml
/// base_url = "https://api.openai.com/v1"
/// api_key = { env = "OPENAI_API_KEY" }
/// model = "gpt-4.1"
///
/// [capabilities]
/// context_window = 1047576
/// max_output_tokens = 32768
/// can_reason = false
/// can_see = true
/// largest_picture = { long_edge = 2048 }
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "RawConfig")]
pub struct OpenAiConfig {
    /// The URL `/chat/completions` is appended to, without a trailing slash.
    pub base_url: String,
    pub api_key: ApiKey,
    /// What the model can do; its `id` is the configured `model`, sent as `model`.
    pub capabilities: ModelCapabilities,
    /// How long connecting may take.
    pub connect_timeout: Duration,
}

impl OpenAiConfig {
    /// A configuration with the default connect timeout.
    pub fn new(base_url: &str, api_key: ApiKey, capabilities: ModelCapabilities) -> OpenAiConfig {
        OpenAiConfig {
            base_url: base_url.trim_end_matches('/').to_string(),
            api_key,
            capabilities,
            connect_timeout: Duration::from_secs(DEFAULT_CONNECT_TIMEOUT_SECONDS),
        }
    }

    /// The model's name, sent as `model`.
    pub fn model(&self) -> &str {
        &self.capabilities.id
    }

    /// The address requests are posted to.
    pub fn completions_url(&self) -> String {
        format!("{}/chat/completions", self.base_url)
    }
}

/// Where the API key comes from. Written in TOML as `api_key = "sk-…"` or
/// `api_key = { env = "VAR" }`; left out for a local server that wants none.
#[derive(Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(untagged)]
pub enum ApiKey {
    /// No key: no `Authorization` header is sent.
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
    ) -> Result<Option<String>, super::OpenAiError> {
        match self {
            ApiKey::None => Ok(None),
            ApiKey::Value(key) => Ok(Some(key.clone())),
            ApiKey::Env { env } => match lookup(env).filter(|key| !key.trim().is_empty()) {
                Some(key) => Ok(Some(key.trim().to_string())),
                None => Err(super::OpenAiError::MissingKey { var: env.clone() }),
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
    #[error("model must name the model, as the endpoint knows it")]
    NoModel,
    #[error(
        "capabilities take no `{0}`: the model is named by `model`, and the provider is always OpenAI-compatible"
    )]
    Reserved(String),
    #[error("capabilities: {0}")]
    Capabilities(String),
}

/// The connect timeout when none is configured. **Decision:** 10 s.
pub const DEFAULT_CONNECT_TIMEOUT_SECONDS: u64 = 10;

fn default_connect_timeout() -> u64 {
    DEFAULT_CONNECT_TIMEOUT_SECONDS
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    base_url: String,
    #[serde(default)]
    api_key: ApiKey,
    model: String,
    capabilities: Map<String, Value>,
    #[serde(default = "default_connect_timeout")]
    connect_timeout_seconds: u64,
}

impl TryFrom<RawConfig> for OpenAiConfig {
    type Error = ConfigError;

    fn try_from(raw: RawConfig) -> Result<Self, Self::Error> {
        let base_url = raw.base_url.trim();
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            return Err(ConfigError::BaseUrl(raw.base_url));
        }
        let model = raw.model.trim();
        if model.is_empty() {
            return Err(ConfigError::NoModel);
        }
        let mut capabilities = raw.capabilities;
        for reserved in ["id", "provider"] {
            if capabilities.contains_key(reserved) {
                return Err(ConfigError::Reserved(reserved.to_string()));
            }
        }
        capabilities.insert("id".into(), Value::String(model.to_string()));
        capabilities.insert(
            "provider".into(),
            serde_json::to_value(Provider::OpenAi)
                .map_err(|e| ConfigError::Capabilities(e.to_string()))?,
        );
        let capabilities: ModelCapabilities =
            serde_json::from_value(Value::Object(capabilities))
                .map_err(|e| ConfigError::Capabilities(e.to_string()))?;
        let mut config = OpenAiConfig::new(base_url, raw.api_key, capabilities);
        config.connect_timeout = Duration::from_secs(raw.connect_timeout_seconds);
        Ok(config)
    }
}
