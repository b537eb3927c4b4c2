//! Portal's engine for JavaScript and TypeScript.
//!
//! A thin binding over `portal-core` (and `portal-drawer` for `ReplyView`): one file per exported
//! item, every conversion in the `convert` module, camelCase names for JavaScript. Without the
//! default features (`prompt`, `markdown` and `reply-view`) only `Playout` is built: the
//! playout-only package for pages that only show live text.

#[cfg(feature = "prompt")]
mod command;
mod convert;
mod errors;
#[cfg(feature = "markdown")]
mod markdown;
#[cfg(feature = "prompt")]
mod memory;
mod playout;
#[cfg(feature = "prompt")]
mod prompt;
#[cfg(feature = "reply-view")]
mod reply_view;
#[cfg(feature = "markdown")]
mod streaming_markdown;
#[cfg(feature = "prompt")]
mod transcript;

#[cfg(feature = "prompt")]
pub use command::parse_command;
#[cfg(feature = "markdown")]
pub use markdown::render_markdown;
#[cfg(feature = "prompt")]
pub use memory::rebuild_memory;
pub use playout::Playout;
#[cfg(feature = "prompt")]
pub use prompt::build_prompt;
#[cfg(feature = "reply-view")]
pub use reply_view::ReplyView;
#[cfg(feature = "markdown")]
pub use streaming_markdown::StreamingMarkdown;
#[cfg(feature = "prompt")]
pub use transcript::validate_transcript;
