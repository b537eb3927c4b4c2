//! What the turn loop needs from a model: a stream of block pieces.

use std::pin::Pin;

use futures_util::Stream;
use portal_core::BlockKind;

/// One piece of a model's streamed answer.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelOutput {
    /// A thinking or text block begins.
    Start(BlockKind),
    /// More text for the open block.
    Text(String),
    /// The open block is whole.
    End,
}

/// Why a model call failed.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("the model's input is larger than its context window")]
    ContextOverflow,
    #[error("the model failed: {0}")]
    Failed(String),
}

/// A model's answer as it streams.
pub type OutputStream = Pin<Box<dyn Stream<Item = Result<ModelOutput, ModelError>> + Send>>;

/// A model the turn loop can call.
pub trait Model: Send + Sync + std::fmt::Debug {
    /// The name shown to people.
    fn label(&self) -> &str;
    /// Whether this is the built-in demo model.
    fn is_demo(&self) -> bool;
    /// Answers the user's latest message.
    fn answer(&self, message: &str) -> OutputStream;
}
