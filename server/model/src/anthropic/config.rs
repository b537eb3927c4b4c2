//! How an Anthropic model is configured: its endpoint, the model's name, what the model can do,
//! and the thinking budget each effort level buys.

use portal_core::effort::EffortConfig;
use portal_core::model::{ModelCapabilities, Provider};
use serde::Deserialize;

use crate::endpoint::{ApiKey, ConfigError, EndpointConfig, RawConfig};

/// Where Anthropic's API lives, for a model whose table names no `base_url`.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com/v1";

/// Anthropic's API and the model called there, as read from TOML or JSON:
///
/// ```toml
/// api_key = { env = "ANTHROPIC_API_KEY" }
/// model = "claude-sonnet-4-5"
///
/// [capabilities]
/// context_window = 200000
/// max_output_tokens = 64000
/// can_reason = true
/// can_see = true
/// largest_picture = { long_edge = 1568, pixels = 1150000 }
/// ```
///
/// `base_url` defaults to [`DEFAULT_BASE_URL`]; `thinking_budget = { low = …, medium = …, high =
/// … }` sets the thinking budget of each effort level (core's defaults otherwise). The timeouts,
/// caps and retries are [`EndpointConfig`]'s fields, as for an OpenAI-compatible model.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "RawConfig")]
pub struct AnthropicConfig {
    /// Where the API is and how it is called; `/messages` is appended to its URL.
    pub endpoint: EndpointConfig,
    /// What the model can do; its `id` is the configured `model`, sent as `model`.
    pub capabilities: ModelCapabilities,
    /// The thinking budget of each effort level (rule E3).
    pub thinking_budget: EffortConfig,
}

impl AnthropicConfig {
    /// A configuration with the default timeouts, limits, retries and thinking budgets; the reply
    /// cap is derived from the capabilities' `max_output_tokens`.
    pub fn new(
        base_url: &str,
        api_key: ApiKey,
        capabilities: ModelCapabilities,
    ) -> AnthropicConfig {
        AnthropicConfig {
            endpoint: EndpointConfig::new(base_url, api_key, capabilities.max_output_tokens),
            capabilities,
            thinking_budget: EffortConfig::default(),
        }
    }

    /// The model's name, sent as `model`.
    pub fn model(&self) -> &str {
        &self.capabilities.id
    }

    /// The address requests are posted to.
    pub fn messages_url(&self) -> String {
        format!("{}/messages", self.endpoint.base_url)
    }
}

impl TryFrom<RawConfig> for AnthropicConfig {
    type Error = ConfigError;

    fn try_from(raw: RawConfig) -> Result<Self, Self::Error> {
        let read = raw.read(Provider::Anthropic, Some(DEFAULT_BASE_URL))?;
        Ok(AnthropicConfig {
            endpoint: read.endpoint,
            capabilities: read.capabilities,
            thinking_budget: read.thinking_budget.unwrap_or_default(),
        })
    }
}
