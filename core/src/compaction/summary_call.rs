//! Reading a summary call's answer (rule C5): the whole text once the model finished, or why
//! there is none, and the call's usage row (rule C11).

use super::prompt::SummaryRequest;
use super::settle::SummaryFailure;
use crate::model::{FinishReason, ModelEvent};
use crate::tokens::TokenCounter;
use crate::usage::{CallPurpose, Tokens, Usage};

/// What a summary call returned: the summary or why there is none, and its usage row.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryCall {
    /// The summary's text as the model wrote it; `settle` checks it (an empty answer, or one with
    /// nothing but a header, is a failure too).
    pub answer: Result<String, SummaryFailure>,
    /// The call's usage row, unpriced: the turn's run prices it at the turn's model. The tokens
    /// the model did not report are estimated.
    pub usage: Usage,
}

/// Folds a summary call's streamed events into a [`SummaryCall`]. A stream that errs, or ends
/// without finishing (cut off, or stopped at its output limit), gives no summary.
#[derive(Debug, Clone, Default)]
pub struct SummaryReader {
    text: String,
    reported: Option<Tokens>,
    outcome: Option<Result<(), SummaryFailure>>,
}

impl SummaryReader {
    /// Takes the next event; true once the answer is settled and the rest of the stream can be
    /// left unread.
    pub fn event(&mut self, event: ModelEvent) -> bool {
        match event {
            ModelEvent::TextDelta(delta) => self.text.push_str(&delta),
            ModelEvent::Usage(tokens) => self.reported = Some(tokens),
            ModelEvent::Finished { reason } => {
                self.outcome = Some(match reason {
                    FinishReason::Stop | FinishReason::Unstated => Ok(()),
                    FinishReason::Length => Err(SummaryFailure::CutOff),
                    other => Err(SummaryFailure::Error(format!(
                        "the summary call stopped: {other:?}"
                    ))),
                });
            }
            _ => {}
        }
        self.outcome.is_some()
    }

    /// The call failed with `error` (the model's error in words).
    pub fn error(&mut self, error: String) {
        self.outcome = Some(Err(SummaryFailure::Error(error)));
    }

    /// The call as read so far, for `request` on `model`: the tokens the model did not report
    /// are counted with `counter`.
    pub fn finish(
        self,
        request: &SummaryRequest,
        model: &str,
        counter: &dyn TokenCounter,
    ) -> SummaryCall {
        let tokens = self.reported.unwrap_or_else(|| {
            Tokens::estimated(
                counter.count(&request.text()) as u64,
                counter.count(&self.text) as u64,
            )
        });
        let outcome = self.outcome.unwrap_or(Err(SummaryFailure::CutOff));
        SummaryCall {
            answer: outcome.map(|()| self.text),
            usage: Usage {
                purpose: CallPurpose::Compaction,
                model: model.to_string(),
                tokens,
                price: None,
            },
        }
    }
}
