//! How an OpenAI-compatible model is configured: its endpoint, the model's name and what the
//! model can do.

use portal_core::model::{ModelCapabilities, Provider};
use serde::Deserialize;

use crate::endpoint::{ApiKey, ConfigError, EndpointConfig, RawConfig};

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
///
/// The timeouts, caps and retries are [`EndpointConfig`]'s fields, written in seconds and KiB
/// (`first_byte_timeout_seconds`, `max_line_kib`, …).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "RawConfig")]
pub struct OpenAiConfig {
    /// Where the endpoint is and how it is called; `/chat/completions` is appended to its URL.
    pub endpoint: EndpointConfig,
    /// What the model can do; its `id` is the configured `model`, sent as `model`.
    pub capabilities: ModelCapabilities,
}

impl OpenAiConfig {
    /// A configuration with the default timeouts, limits and retries; the reply cap is derived
    /// from the capabilities' `max_output_tokens`.
    pub fn new(base_url: &str, api_key: ApiKey, capabilities: ModelCapabilities) -> OpenAiConfig {
        OpenAiConfig {
            endpoint: EndpointConfig::new(base_url, api_key, capabilities.max_output_tokens),
            capabilities,
        }
    }

    /// The model's name, sent as `model`.
    pub fn model(&self) -> &str {
        &self.capabilities.id
    }

    /// The address requests are posted to.
    pub fn completions_url(&self) -> String {
        format!("{}/chat/completions", self.endpoint.base_url)
    }
}

impl TryFrom<RawConfig> for OpenAiConfig {
    type Error = ConfigError;

    fn try_from(raw: RawConfig) -> Result<Self, Self::Error> {
        let read = raw.read(Provider::OpenAi, None)?;
        if read.thinking_budget.is_some() {
            return Err(ConfigError::ThinkingBudget);
        }
        Ok(OpenAiConfig {
            endpoint: read.endpoint,
            capabilities: read.capabilities,
        })
    }
}
