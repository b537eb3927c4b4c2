//! An effort level: a plain value with no rules of its own, so the transcript can record it on a
//! turn without reading the rules that choose it.

use serde::{Deserialize, Serialize};

/// An effort level. An agent carries a default; a message may override it for itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Effort {
    Low,
    Medium,
    High,
}

impl Effort {
    /// The level's name, as OpenAI's `reasoning_effort` takes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Effort::Low => "low",
            Effort::Medium => "medium",
            Effort::High => "high",
        }
    }
}
