//! The turn loop's compaction step (rules C1, C2, C5, C6, C11): the summary call and the demo
//! model's summaries. What to compact, when, and what is recorded come from
//! `portal_core::compaction`; this module makes the call.
//!
//! The summary is written by a separate call on the turn's own model, with the prompt
//! [`SummaryRequest::prompt`] builds: no tools, no effort. It leaves a usage row priced at the
//! turn's model with purpose `compaction`, which carries no context size (rule C11).

use std::time::Duration;

use futures_util::{StreamExt, stream};
use portal_core::compaction::{SummaryFailure, SummaryRequest, extractive};
use portal_core::prompt::NoPictures;
use portal_core::tokens::{EstimateCounter, TokenCounter};

use crate::model::{FinishReason, Model, ModelError, ModelEvent, ModelStream};
use crate::storage::{CallPurpose, Usage};

/// What a summary call returned: the summary or why there is none, and its usage row.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryCall {
    /// The summary's text as the model wrote it; core's `settle` checks it (an empty answer, or
    /// one with nothing but a header, is a failure too).
    pub answer: Result<String, SummaryFailure>,
    /// The call's usage row, priced at the turn's model. The tokens the model did not report
    /// are estimated.
    pub usage: Usage,
}

/// Calls `model` (the turn's own) for the summary `request` asks for and reads its answer whole.
/// A stream that errs, or ends without finishing (cut off, or stopped at its output limit),
/// gives no summary (rule C5).
pub async fn summarise(model: &dyn Model, request: &SummaryRequest) -> SummaryCall {
    let mut answer = model.stream(&request.prompt(), &NoPictures);
    let mut text = String::new();
    let mut reported = None;
    let mut outcome = Err(SummaryFailure::CutOff);
    while let Some(event) = answer.next().await {
        match event {
            Ok(ModelEvent::TextDelta(delta)) => text.push_str(&delta),
            Ok(ModelEvent::Usage {
                input_tokens,
                output_tokens,
            }) => reported = Some((input_tokens, output_tokens)),
            Ok(ModelEvent::Finished { reason }) => {
                outcome = match reason {
                    FinishReason::Stop | FinishReason::Unstated => Ok(()),
                    FinishReason::Length => Err(SummaryFailure::CutOff),
                    other => Err(SummaryFailure::Error(format!(
                        "the summary call stopped: {other:?}"
                    ))),
                };
                break;
            }
            Ok(_) => {}
            Err(error) => {
                outcome = Err(SummaryFailure::Error(error.to_string()));
                break;
            }
        }
    }
    let (input_tokens, output_tokens) = reported.unwrap_or_else(|| {
        (
            EstimateCounter.count(&request.text()) as u64,
            EstimateCounter.count(&text) as u64,
        )
    });
    SummaryCall {
        answer: outcome.map(|()| text),
        usage: Usage {
            purpose: CallPurpose::Compaction,
            model: model.capabilities().id.clone(),
            input_tokens,
            output_tokens,
        },
    }
}

/// How long the demo model takes to read the history before it writes, at pace 1: long enough
/// that the divider's clock shows (rule R11 shows it after three seconds).
const DEMO_READING_MS: u64 = 3_600;

/// The demo model's answer to a summary call: the extractive summary of the request, after a
/// pause for reading, in lines, then its usage and its finish. `pace` multiplies the pauses.
pub fn demo_summary(request: &SummaryRequest, pace: f64) -> ModelStream {
    let summary = extractive::summarise(request);
    let pause = |ms: u64| Duration::from_secs_f64(ms as f64 * pace.max(0.0) / 1000.0);
    let mut steps: Vec<(Duration, Result<ModelEvent, ModelError>)> = Vec::new();
    for (i, line) in summary.split_inclusive('\n').enumerate() {
        let before = if i == 0 { DEMO_READING_MS } else { 40 };
        steps.push((pause(before), Ok(ModelEvent::TextDelta(line.to_string()))));
    }
    steps.push((
        Duration::ZERO,
        Ok(ModelEvent::Usage {
            input_tokens: EstimateCounter.count(&request.text()) as u64,
            output_tokens: EstimateCounter.count(&summary) as u64,
        }),
    ));
    steps.push((
        Duration::ZERO,
        Ok(ModelEvent::Finished {
            reason: FinishReason::Stop,
        }),
    ));
    Box::pin(stream::unfold(steps.into_iter(), |mut steps| async move {
        let (pause, event) = steps.next()?;
        if !pause.is_zero() {
            tokio::time::sleep(pause).await;
        }
        Some((event, steps))
    }))
}
