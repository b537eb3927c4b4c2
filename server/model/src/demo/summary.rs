//! The demo model's answer to a summary call: core's extractive summary, streamed.

use std::time::Duration;

use futures_util::stream;
use portal_core::compaction::{SummaryRequest, extractive};
use portal_core::tokens::{EstimateCounter, TokenCounter};
use portal_core::usage::Tokens;

use crate::{FinishReason, ModelError, ModelEvent, ModelStream};

/// How long the demo model reads the history before it writes, whatever its pace (but 0): long
/// enough that the divider's clock shows, which rule R11 shows after three seconds.
const DEMO_READING: Duration = Duration::from_millis(3_600);

/// The demo model's answer to a summary call: the extractive summary of the request, after a
/// pause for reading, in lines, then its usage and its finish. `pace` multiplies the pauses
/// between lines; at pace 0 there are no pauses at all.
pub fn summary(request: &SummaryRequest, pace: f64) -> ModelStream {
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
