//! The limits the server holds every request and every user to (docs/security.md, "Limits"): the
//! numbers, each a `portal serve` flag where an operator may want another value, and the counters
//! that enforce the "at once" ones. A refusal names the limit and its value.

use std::sync::Arc;

use tokio::sync::Semaphore;

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
    /// Pictures decoded at once, over all users; others wait their turn.
    #[arg(
        long = "picture-decodes",
        default_value_t = Limits::DEFAULT.picture_decodes,
        value_parser = at_least_one
    )]
    pub picture_decodes: usize,
    #[command(flatten)]
    pub uploads: UploadConfig,
}

impl Limits {
    /// Every default. **Decisions:** 20 attachments a message (the size of a generous batch of
    /// photos); 100,000 characters a message and 20,000 an answer (about 25,000 and 5,000
    /// tokens, well inside a context window); 2 picture decodes at once (the development
    /// machine's cores; each may take 160 MB, see [`UploadConfig::max_picture_pixels`]).
    pub const DEFAULT: Limits = Limits {
        attachments_per_message: 20,
        message_chars: 100_000,
        answer_chars: 20_000,
        picture_decodes: 2,
        uploads: UploadConfig::DEFAULT,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}

/// A count that must be at least one, or nothing could ever run.
fn at_least_one(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("0 would refuse everything; give 1 or more".to_string()),
        Ok(count) => Ok(count),
        Err(error) => Err(format!("`{text}` is not a count ({error})")),
    }
}

/// The counters behind the "at once" limits, shared by every request.
#[derive(Debug, Clone)]
pub struct Gates {
    /// Picture decodes running, over all users.
    pub decodes: Arc<Semaphore>,
}

impl Gates {
    pub fn new(limits: &Limits) -> Self {
        Gates {
            decodes: Arc::new(Semaphore::new(limits.picture_decodes)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_flag_of_zero_is_refused() {
        assert_eq!(at_least_one("3"), Ok(3));
        assert!(at_least_one("0").is_err());
        assert!(at_least_one("-1").is_err());
    }
}
