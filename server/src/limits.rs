//! The limits the server holds every request and every user to (docs/security.md, "Limits"): the
//! numbers, each a `portal serve` flag where an operator may want another value. A refusal names
//! the limit and its value.

use crate::attachments::UploadConfig;

/// What one request and one user may take. [`Limits::DEFAULT`] holds every default; `portal
/// serve` takes each flag below.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Limits {
    /// Attachments one message may carry; an id listed twice is refused, not counted once.
    #[arg(long = "max-attachments", default_value_t = Limits::DEFAULT.attachments_per_message)]
    pub attachments_per_message: usize,
    /// Characters (Unicode scalar values) a message's text may have.
    #[arg(long = "max-message-chars", default_value_t = Limits::DEFAULT.message_chars)]
    pub message_chars: usize,
    /// Characters (Unicode scalar values) an answer to a clarification question may have.
    #[arg(long = "max-answer-chars", default_value_t = Limits::DEFAULT.answer_chars)]
    pub answer_chars: usize,
    #[command(flatten)]
    pub uploads: UploadConfig,
}

impl Limits {
    /// Every default. **Decisions:** 20 attachments a message (the size of a generous batch of
    /// photos); 100,000 characters a message and 20,000 an answer (about 25,000 and 5,000
    /// tokens, well inside a context window).
    pub const DEFAULT: Limits = Limits {
        attachments_per_message: 20,
        message_chars: 100_000,
        answer_chars: 20_000,
        uploads: UploadConfig::DEFAULT,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}
