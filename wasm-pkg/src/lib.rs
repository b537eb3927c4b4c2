//! Portal's engine for JavaScript and TypeScript.
//!
//! A thin binding over `portal-core`: one file per exported item, every conversion in
//! `convert.rs`, camelCase names for JavaScript.

mod convert;
mod playout;
mod transcript;

pub use playout::Playout;
pub use transcript::validate_transcript;
