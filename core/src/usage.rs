//! What a model call cost in tokens: the usage row every call leaves, compaction included
//! (rule C11).

use serde::{Deserialize, Serialize};

/// What a model call was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallPurpose {
    /// A call of the agent loop on the turn's own model; it sets the turn's context size.
    Turn,
    /// A compaction summary, made on a separate instance of the turn's model (rule C11).
    Compaction,
    /// A summary other than compaction, such as a conversation title.
    Summary,
    /// A review of the turn's output, such as a guardrail check.
    Review,
}

impl CallPurpose {
    /// The name stored in usage rows.
    pub fn as_str(self) -> &'static str {
        match self {
            CallPurpose::Turn => "turn",
            CallPurpose::Compaction => "compaction",
            CallPurpose::Summary => "summary",
            CallPurpose::Review => "review",
        }
    }
}

/// One model call's usage. `model` is the model it is priced at: the turn's model for a
/// compaction call (rule C11).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub purpose: CallPurpose,
    pub model: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
}
