//! Portal's engine for JavaScript and TypeScript.
//!
//! A thin binding over `portal-core`: one file per exported item, every conversion in
//! the `convert` module, camelCase names for JavaScript.

mod command;
mod convert;
mod memory;
mod playout;
mod prompt;
mod transcript;

pub use command::parse_command;
pub use memory::rebuild_memory;
pub use playout::Playout;
pub use prompt::build_prompt;
pub use transcript::validate_transcript;
