//! Portal's engine for JavaScript and TypeScript.
//!
//! A thin binding over `portal-core`: one file per exported item, every conversion in
//! the `convert` module, camelCase names for JavaScript. Without the default `prompt` feature
//! only `Playout` is built: the playout-only package for pages that only show live text.

#[cfg(feature = "prompt")]
mod command;
mod convert;
mod errors;
#[cfg(feature = "prompt")]
mod memory;
mod playout;
#[cfg(feature = "prompt")]
mod prompt;
#[cfg(feature = "prompt")]
mod transcript;

#[cfg(feature = "prompt")]
pub use command::parse_command;
#[cfg(feature = "prompt")]
pub use memory::rebuild_memory;
pub use playout::Playout;
#[cfg(feature = "prompt")]
pub use prompt::build_prompt;
#[cfg(feature = "prompt")]
pub use transcript::validate_transcript;
