//! What a model can do, as data the host fills in from its model registry.

use serde::{Deserialize, Serialize};

/// The request shape a model is called with (rule L3). Written `"openai"` or `"anthropic"`, as the
/// models file names the adapter (`kind = "openai"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    /// OpenAI Chat Completions.
    OpenAi,
    /// Anthropic Messages.
    Anthropic,
}

/// A model's capabilities: the facts the prompt is built around. Its serde format is the models
/// file's, in snake_case (docs/models.md); the JavaScript package takes the same fields in
/// camelCase, converting the keys by rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelCapabilities {
    /// The provider's model id, sent as `model`.
    pub id: String,
    pub provider: Provider,
    /// Input tokens the model reads at most.
    pub context_window: u64,
    /// Output tokens the model writes at most (Anthropic's required `max_tokens`).
    pub max_output_tokens: u32,
    /// Whether the model reasons at depth, so that an effort level means something (rule E3).
    pub can_reason: bool,
    /// Whether the model looks at pictures (rule A5).
    pub can_see: bool,
    /// The largest picture the model looks at; a larger one is reduced first (rule A4). `None`
    /// when the provider takes any size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub largest_picture: Option<PictureLimit>,
}

/// The largest picture a provider looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PictureLimit {
    /// The longer side, in pixels.
    pub long_edge: u32,
    /// Width times height, in pixels, when the provider also bounds the area.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pixels: Option<u64>,
}
