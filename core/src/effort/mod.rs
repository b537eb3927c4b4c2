//! Effort: how hard the model should reason (rules E1–E3). The level is a plain value of its own
//! module (`level`), which the transcript records on each turn; the rules here read the
//! transcript and the model.

pub(crate) mod level;

pub use level::Effort;

use serde::{Deserialize, Serialize};

use crate::model::ModelCapabilities;
use crate::transcript::Transcript;

/// The effort level that wins for a message: its own override, else the agent's default (rule E1).
/// The host records the result on the turn it opens (rule E2).
pub fn winning_effort(agent_default: Effort, message_override: Option<Effort>) -> Effort {
    message_override.unwrap_or(agent_default)
}

/// The level a reopened conversation last ran with: the one the latest turn recorded, else the
/// agent's default (rule E2); each turn shows its own. A resumed turn reads its own `effort` the
/// same way. The composer does not start from it: an override is for its message alone (E1).
pub fn effort_on_reopen(transcript: &Transcript, agent_default: Effort) -> Effort {
    transcript
        .turns
        .last()
        .and_then(|turn| turn.effort)
        .unwrap_or(agent_default)
}

/// The effort to send to `model`: none to a model that cannot reason at depth (rule E3).
pub fn effort_parameter(effort: Effort, model: &ModelCapabilities) -> Option<Effort> {
    model.can_reason.then_some(effort)
}

/// How an effort level becomes Anthropic's thinking budget. Written by level,
/// `{ "low": 2048, "medium": 8192, "high": 24576 }` (JavaScript's `ThinkingBudgets`); a missing
/// level keeps its default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EffortConfig {
    /// Thinking budget tokens per level. **Decision:** 2,048, 8,192 and 24,576; Anthropic's
    /// minimum is 1,024.
    #[serde(rename = "low")]
    pub low_budget: u32,
    #[serde(rename = "medium")]
    pub medium_budget: u32,
    #[serde(rename = "high")]
    pub high_budget: u32,
}

impl Default for EffortConfig {
    fn default() -> Self {
        EffortConfig {
            low_budget: 2_048,
            medium_budget: 8_192,
            high_budget: 24_576,
        }
    }
}

impl EffortConfig {
    /// The thinking budget for `effort`.
    pub fn budget(&self, effort: Effort) -> u32 {
        match effort {
            Effort::Low => self.low_budget,
            Effort::Medium => self.medium_budget,
            Effort::High => self.high_budget,
        }
    }
}
