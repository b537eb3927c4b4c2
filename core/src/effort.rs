//! Effort: how hard the model should reason (rules E1–E3).

use serde::{Deserialize, Serialize};

/// An effort level. An agent carries a default; a message may override it for itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Effort {
    Low,
    Medium,
    High,
}
