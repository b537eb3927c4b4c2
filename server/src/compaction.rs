//! The summary call of a compaction (rules C5, C11) and the demo model's summaries. When to
//! compact, what to summarise and what a run writes are the turn machine's
//! (`portal_core::turn_run`); reading the answer is `portal_core::compaction::SummaryReader`'s.
//! This module makes the call.
//!
//! The summary is written by a separate call on the turn's own model, with the prompt
//! [`SummaryRequest::prompt`] builds: no tools, no effort. It leaves a usage row priced at the
//! turn's model with purpose `compaction`, which carries no context size (rule C11).

use std::time::Duration;

use futures_util::{StreamExt, stream};
use portal_core::compaction::{SummaryCall, SummaryReader, SummaryRequest, extractive};
use portal_core::prompt::NoPictures;
use portal_core::tokens::{EstimateCounter, TokenCounter};
use portal_core::usage::Tokens;

use crate::model::{FinishReason, Model, ModelError, ModelEvent, ModelStream};

/// Calls `model` (the turn's own) for the summary `request` asks for and reads its answer whole.
/// A stream that errs, or ends without finishing (cut off, or stopped at its output limit),
/// gives no summary (rule C5).
pub async fn summarise(model: &dyn Model, request: &SummaryRequest) -> SummaryCall {
    read_summary(model.stream(&request.prompt(), &NoPictures), model, request).await
}

/// Reads the `answer` of a summary call made on `model` for `request`, as [`summarise`] does.
pub async fn read_summary(
    mut answer: ModelStream,
    model: &dyn Model,
    request: &SummaryRequest,
) -> SummaryCall {
    let mut reader = SummaryReader::default();
    while let Some(event) = answer.next().await {
        let settled = match event {
            Ok(event) => reader.event(event),
            Err(error) => {
                reader.error(error.to_string());
                true
            }
        };
        if settled {
            break;
        }
    }
    reader.finish(request, &model.capabilities().id, model.tokens())
}

/// How long the demo model reads the history before it writes, whatever its pace (but 0): long
/// enough that the divider's clock shows, which rule R11 shows after three seconds.
const DEMO_READING: Duration = Duration::from_millis(3_600);

/// The demo model's answer to a summary call: the extractive summary of the request, after a
/// pause for reading, in lines, then its usage and its finish. `pace` multiplies the pauses
/// between lines; at pace 0 there are no pauses at all.
pub fn demo_summary(request: &SummaryRequest, pace: f64) -> ModelStream {
    let summary = extractive::summarise(request);
    let pace = pace.max(0.0);
    let reading = if pace > 0.0 {
        DEMO_READING
    } else {
        Duration::ZERO
    };
    let mut steps: Vec<(Duration, Result<ModelEvent, ModelError>)> = Vec::new();
    for (i, line) in summary.split_inclusive('\n').enumerate() {
        let before = if i == 0 {
            reading
        } else {
            Duration::from_secs_f64(0.04 * pace)
        };
        steps.push((before, Ok(ModelEvent::TextDelta(line.to_string()))));
    }
    steps.push((
        Duration::ZERO,
        Ok(ModelEvent::Usage(Tokens::estimated(
            EstimateCounter.count(&request.text()) as u64,
            EstimateCounter.count(&summary) as u64,
        ))),
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
