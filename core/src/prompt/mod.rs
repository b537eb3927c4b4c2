//! The assembled prompt (rules L1–L3): seven layers, provider-neutral, and its conversion into
//! provider request bodies.
//!
//! Layers 1–5 (portal floor, author instructions, project instructions, selected skills, skill
//! catalogue) make the system text, each between `<layer number="n" name="…">` tags under one
//! sentence stating that later layers win ([`PRECEDENCE`]). Layers 6 and 7 (short-term memory,
//! the new message) are the message list, each [`Entry`] tagged with its [`Layer`].
//! [`openai::request`] and [`anthropic::request`] turn a [`Prompt`] into request bodies;
//! [`check_pairing`] checks a body against its provider's pairing rules.
//!
//! The prompt's values (`entry`, `layers`, `neutral`) stand below short-term memory, which writes
//! the entries, and compaction, whose summary call is a prompt; assembling (`assemble`) and the
//! inspector stand above memory and read it.

pub mod anthropic;
mod assemble;
pub(crate) mod entry;
pub mod inspect;
pub(crate) mod layers;
pub(crate) mod neutral;
pub mod openai;
mod pairing;
mod pictures;
mod render;

pub use assemble::{Assembled, Diagnostic, PromptConfig, PromptInput, assemble};
pub use entry::{Answer, Call, Entry, Layer, Part};
pub use layers::{DEFAULT_FLOOR, PRECEDENCE, SystemLayer};
pub use neutral::Prompt;
pub use pairing::{PairingError, check_pairing};
pub use pictures::{EncodedPicture, NoPictures, PictureSource};
pub use render::{render, render_entries};
