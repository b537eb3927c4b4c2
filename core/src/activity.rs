//! What a running turn shows between its blocks: a pending indicator while the model is asked
//! and nothing of its answer streams yet (after Send, and after a tool's result), and a note
//! once the model has been silent for long. The caret of a streaming block, a tool's card and the
//! summary's divider (R11) show the rest, so the indicator gives way to them.

use crate::block::BlockKind;
use crate::tool_card::{ToolCardConfig, ToolState, tool_card};
use crate::transcript::TurnStatus;
use crate::turn_state::TurnState;

/// When a running turn's silence is worth a note.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ActivityConfig {
    /// How long without an event before the person is told the model is still awaited.
    /// **Decision:** 20 s.
    pub still_waiting_ms: f64,
}

impl Default for ActivityConfig {
    fn default() -> Self {
        ActivityConfig {
            still_waiting_ms: 20_000.0,
        }
    }
}

/// What a running turn shows below what it drew.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activity {
    /// The model is asked and nothing of its answer streams yet.
    Pending,
    /// Nothing came from the model for [`ActivityConfig::still_waiting_ms`].
    StillWaiting,
}

/// What `state` shows after `silent_ms` without an event; `None` when the turn is not running,
/// a tool runs (its card says so), a summary is written (R11's label says so), or a block
/// streams without a long silence (its caret says so).
pub fn activity(state: &TurnState, silent_ms: f64, config: &ActivityConfig) -> Option<Activity> {
    if state.status != TurnStatus::Running {
        return None;
    }
    let cards = ToolCardConfig::default();
    let tool_runs = (0..state.blocks.len())
        .filter_map(|at| tool_card(state, at, &cards))
        .any(|card| card.state == ToolState::Running);
    let summarising = state
        .blocks
        .iter()
        .any(|b| b.kind == BlockKind::Compaction && !b.ended);
    if tool_runs || summarising {
        return None;
    }
    if silent_ms >= config.still_waiting_ms {
        return Some(Activity::StillWaiting);
    }
    state
        .blocks
        .iter()
        .all(|b| b.ended)
        .then_some(Activity::Pending)
}
