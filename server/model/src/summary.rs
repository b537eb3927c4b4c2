//! The summary call of a compaction (rules C5, C11). When to
//! compact, what to summarise and what a run writes are the turn machine's
//! (`portal_core::turn_run`); reading the answer is `portal_core::compaction::SummaryReader`'s.
//! This module makes the call.
//!
//! The summary is written by a separate call on the turn's own model, with the prompt
//! [`SummaryRequest::prompt`] builds: no tools, no effort. It leaves a usage row priced at the
//! turn's model with purpose `compaction`, which carries no context size (rule C11).

use futures_util::StreamExt;
use portal_core::compaction::{SummaryCall, SummaryReader, SummaryRequest};
use portal_core::prompt::NoPictures;

use crate::{Model, ModelStream};

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
