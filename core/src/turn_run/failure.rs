//! Why a run failed, as one sentence for the person who sent the message (`turn_end`'s reason):
//! what to do, never what a model's endpoint sent (it may echo part of a key, or be a raw body)
//! nor how the server stores its data. The host's log keeps the whole error.

use crate::compaction::{CompactionError, SummaryFailure};

/// Why a run could not go on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Failure {
    #[error(
        "the server could not record the turn; send the message again, and tell an administrator if it happens again"
    )]
    Storage,
    /// The model failed; the words are the host's, already free of what the endpoint sent.
    #[error("{0}")]
    Model(String),
    #[error(
        "the model made {0} calls without answering; send the message again, perhaps asking for less at once"
    )]
    TooManyCalls(usize),
    #[error("the model stopped without writing an answer; send the message again")]
    NoAnswer,
    #[error("{}", without_detail(.0))]
    Compaction(CompactionError),
}

impl Failure {
    /// The failure as a sentence: a capital first letter and a full stop.
    pub fn reason(&self) -> String {
        sentence(&self.to_string())
    }
}

/// The compaction error with what the model's endpoint said left out.
fn without_detail(error: &CompactionError) -> CompactionError {
    let plain = |failure: &SummaryFailure| match failure {
        SummaryFailure::Error(_) => SummaryFailure::Error("the model failed".into()),
        other => other.clone(),
    };
    match error {
        CompactionError::SummaryFailedAfterOverflow { failure } => {
            CompactionError::SummaryFailedAfterOverflow {
                failure: plain(failure),
            }
        }
        CompactionError::CommandFailed { failure } => CompactionError::CommandFailed {
            failure: plain(failure),
        },
        other => other.clone(),
    }
}

/// `words` as a sentence: a capital first letter and a full stop.
fn sentence(words: &str) -> String {
    let mut chars = words.chars();
    let mut sentence: String = chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default();
    if !sentence.ends_with(['.', '!', '?']) {
        sentence.push('.');
    }
    sentence
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(failure: Failure, expected: &str) {
        assert_eq!(failure.reason(), expected, "{failure:?}");
    }

    #[test]
    fn a_failed_turn_says_why_in_a_sentence_without_what_the_endpoint_sent() {
        check(
            Failure::Model("the model failed while answering; send the message again".into()),
            "The model failed while answering; send the message again.",
        );
        check(
            Failure::Compaction(CompactionError::CommandFailed {
                failure: SummaryFailure::Error("the model failed: key sk-live-1234".into()),
            }),
            "The summary could not be written (the summary call failed: the model failed); \
             nothing was changed: send /compact again.",
        );
        check(
            Failure::Storage,
            "The server could not record the turn; send the message again, and tell an \
             administrator if it happens again.",
        );
        check(
            Failure::NoAnswer,
            "The model stopped without writing an answer; send the message again.",
        );
        check(
            Failure::TooManyCalls(16),
            "The model made 16 calls without answering; send the message again, perhaps asking \
             for less at once.",
        );
    }
}
