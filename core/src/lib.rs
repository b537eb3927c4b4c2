//! Portal's conversation engine: pure logic shared by the server and the browser.
//!
//! Architecture invariant: nothing in this crate does IO or reads a clock. Time is always an
//! argument, and every function is deterministic in its inputs.

pub mod activity;
pub mod attachment;
pub mod block;
pub mod compaction;
pub mod display;
pub mod effort;
pub mod hold;
pub mod markdown;
pub mod memory;
pub mod model;
pub mod new_turn;
pub mod pacing;
pub mod playout;
pub mod prompt;
pub mod reply;
pub mod skills;
pub mod sources;
pub mod stream;
pub mod tag;
pub mod title;
pub mod tokens;
pub mod tool_card;
pub mod tools;
pub mod transcript;
pub mod turn_run;
pub mod turn_state;
pub mod usage;
pub mod validate;

pub use block::{Block, BlockKind, CompactionTrigger, TurnsCovered};
pub use transcript::{
    Awaiting, Message, Role, TraceEntry, Transcript, Turn, TurnKind, TurnStatus, UnknownStatus,
};
pub use turn_state::{BlockState, Change, CompactionState, TurnState};
pub use validate::{Invariant, Location, TranscriptError, parse_transcript, validate};
