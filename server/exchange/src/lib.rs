//! Conversations in and out of Portal, pure: no IO but the writer it is handed, no clock.
//!
//! - [`archive`]: all of a person's work as one ZIP archive.
//! - [`markdown`]: a conversation as Markdown, for a person to read and keep.
//! - [`share`]: the snapshot a share link shows.
//! - [`import`]: transcripts made from an export (Portal's transcript JSON, ChatGPT's and
//!   Claude's `conversations.json`), each with the notes of what did not map.
//!
//! The formats are documented in `docs/export.md`.

pub mod archive;
pub mod import;
pub mod markdown;
pub mod share;
