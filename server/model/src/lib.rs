//! What the turn loop needs from a model: it takes the provider-neutral prompt core assembled
//! and streams provider-neutral [`ModelEvent`]s. The [`demo`] model, the OpenAI-compatible adapter
//! ([`openai`]) and the Anthropic adapter ([`anthropic`]) implement [`Model`], the two adapters on
//! one HTTP call, retries, timeouts, caps and stream reader ([`endpoint`]); [`registry`] reads
//! which models a server offers from its config; [`summary`] makes a compaction's summary call.

pub mod anthropic;
mod counted;
pub mod demo;
pub mod endpoint;
pub mod openai;
pub mod registry;
pub mod summary;
pub mod tokens;

pub use counted::Counted;
pub use portal_core::model::{BadArguments, FinishReason, ModelEvent, parse_arguments};
pub use registry::{ModelRegistry, RegistryError};

use std::pin::Pin;

use bytes::Bytes;
use futures_util::Stream;
use portal_core::model::ModelCapabilities;
use portal_core::prompt::{PictureSource, Prompt};
use portal_core::tokens::{EstimateCounter, TokenCounter};

/// What a person is told when the conversation does not fit the model, whatever the provider
/// said.
pub const OVERFLOW_REASON: &str = "the conversation no longer fits the model's context window; \
                                   send /compact, or start a new conversation";

/// Why a model call failed. Every context overflow, whatever the provider said, is
/// [`ModelError::ContextOverflow`], so the turn loop can compact and retry (rule C2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    #[error("the model's input is larger than its context window: {message}")]
    ContextOverflow { message: String },
    /// The call failed. `detail` is for the server's log and may quote what the endpoint said
    /// (which can echo part of a key, or a raw body); `reason` is for the person who sent the
    /// message: what went wrong and what to do, in the server's own words.
    #[error("the model failed: {detail}")]
    Failed { detail: String, reason: String },
}

impl ModelError {
    /// A failure whose `detail` says nothing more useful to the person than that the model
    /// failed.
    pub fn failed(detail: impl Into<String>) -> Self {
        ModelError::Failed {
            detail: detail.into(),
            reason: "the model failed while answering; send the message again".into(),
        }
    }

    /// Why the call failed, for the person who sent the message; never what the endpoint sent.
    pub fn reason(&self) -> String {
        match self {
            ModelError::ContextOverflow { .. } => OVERFLOW_REASON.into(),
            ModelError::Failed { reason, .. } => reason.clone(),
        }
    }
}

/// A model's answer as it streams: deltas, then each call whole, usage, and the finish last.
pub type ModelStream = Pin<Box<dyn Stream<Item = Result<ModelEvent, ModelError>> + Send>>;

/// A model the turn loop can call.
pub trait Model: Send + Sync + std::fmt::Debug {
    /// The name shown to people.
    fn label(&self) -> &str;
    /// What the model can do: its window, whether it reasons and sees, its largest picture.
    fn capabilities(&self) -> &ModelCapabilities;
    /// Whether this is the built-in demo model.
    fn is_demo(&self) -> bool {
        false
    }
    /// How compaction counts this model's tokens (rule C1): exactly when the models file names
    /// its tokenizer, else core's estimate.
    fn tokens(&self) -> &dyn TokenCounter {
        &EstimateCounter
    }
    /// Whether [`Model::tokens`] is the model's own tokenizer rather than core's estimate.
    fn counts_exactly(&self) -> bool {
        false
    }
    /// Calls the model with `prompt`. Pictures are read from `pictures` before this returns; the
    /// call itself runs as the stream is read, and a refused call is the stream's one item.
    fn stream(&self, prompt: &Prompt, pictures: &dyn PictureSource) -> ModelStream;
    /// Calls the model like [`Model::stream`], and says the request body it sends, byte for
    /// byte, for the prompt inspector; a model that sends none (the demo) says `None`.
    fn call(&self, prompt: &Prompt, pictures: &dyn PictureSource) -> ModelCall {
        ModelCall {
            body: None,
            stream: self.stream(prompt, pictures),
        }
    }
}

/// One model call: the request body it sends, and its answer.
pub struct ModelCall {
    pub body: Option<Bytes>,
    pub stream: ModelStream,
}

impl std::fmt::Debug for ModelCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelCall")
            .field("body", &self.body)
            .finish_non_exhaustive()
    }
}
