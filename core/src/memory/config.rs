//! The memory bounds a host sets: how many turns, calls and characters memory replays.

use serde::{Deserialize, Serialize};

use crate::attachment::AttachmentConfig;

/// The memory bounds, each a default from the product rules or a documented decision.
///
/// Hosts write it in camelCase (`{ maxTurns: 10 }`, JavaScript's `MemoryOptions`); a missing field
/// keeps its default and an unknown one is refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct MemoryConfig {
    /// Past turns replayed after the newest summary (rule M2).
    pub max_turns: usize,
    /// Calls replayed per past turn, the most recent holding their place (rule M3).
    pub max_calls_per_turn: usize,
    /// The closest past turns whose tool output is replayed (rule M4).
    pub output_turns: usize,
    /// Each replayed result is cut to this many characters (rule M5).
    pub result_chars: usize,
    /// Each string inside replayed call arguments is cut to this many characters (rule M6).
    pub argument_chars: usize,
    /// How earlier turns' attachments replay (rules A6–A8).
    pub attachments: AttachmentConfig,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        MemoryConfig {
            max_turns: 20,
            max_calls_per_turn: 8,
            output_turns: 3,
            result_chars: 300,
            argument_chars: 200,
            attachments: AttachmentConfig::default(),
        }
    }
}
