//! The model's events as the run takes them: text that arrived together comes as one delta.
//!
//! Each delta the run takes is a storage write and an event, so a model that streams a character
//! at a time, faster than the run writes, would cost a transaction a character. The model's
//! stream is read by a task of its own into a queue while the run writes, and the deltas waiting
//! in the queue when the run asks for the next event are joined first; a model streaming slower
//! than the run writes is read as it streams.

use futures_util::StreamExt;
use portal_core::model::ModelEvent;
use portal_model::{ModelError, ModelStream};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

/// The most events waiting in the queue, and taken from it at once. **Decision:** 1,024: a few
/// network reads' worth of one-character deltas. What they hold together is bounded by the
/// model's caps on a reply's text and its calls' arguments.
const READY_MOST: usize = 1024;

/// `stream`, read ahead by a task of its own, with the deltas of one kind that were waiting
/// together joined. The task ends, and the model's stream with it, when the run lets the result
/// go.
pub(super) fn coalesced(mut stream: ModelStream) -> ModelStream {
    let (queue, waiting) = mpsc::channel(READY_MOST);
    tokio::spawn(async move {
        loop {
            let next = tokio::select! {
                () = queue.closed() => return,
                next = stream.next() => next,
            };
            let Some(event) = next else { return };
            if queue.send(event).await.is_err() {
                return;
            }
        }
    });
    Box::pin(
        ReceiverStream::new(waiting)
            .ready_chunks(READY_MOST)
            .flat_map(|ready| futures_util::stream::iter(joined(ready))),
    )
}

/// `ready` with each run of text deltas, and of thinking deltas, joined into one.
fn joined(ready: Vec<Result<ModelEvent, ModelError>>) -> Vec<Result<ModelEvent, ModelError>> {
    let mut out: Vec<Result<ModelEvent, ModelError>> = Vec::with_capacity(ready.len());
    for next in ready {
        let next = match (out.last_mut(), next) {
            (Some(Ok(ModelEvent::TextDelta(kept))), Ok(ModelEvent::TextDelta(more)))
            | (Some(Ok(ModelEvent::ThinkingDelta(kept))), Ok(ModelEvent::ThinkingDelta(more))) => {
                kept.push_str(&more);
                continue;
            }
            (_, next) => next,
        };
        out.push(next);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use portal_core::model::FinishReason;

    #[test]
    fn waiting_deltas_of_one_kind_are_joined_and_nothing_else_is() {
        let text = |t: &str| Ok(ModelEvent::TextDelta(t.into()));
        let thinking = |t: &str| Ok(ModelEvent::ThinkingDelta(t.into()));
        let finished = || {
            Ok(ModelEvent::Finished {
                reason: FinishReason::Stop,
            })
        };
        let joined: Vec<String> = joined(vec![
            thinking("Let "),
            thinking("me see."),
            text("H"),
            text("i"),
            text(" there"),
            thinking("Hm."),
            text("!"),
            finished(),
            Err(ModelError::failed("gone")),
        ])
        .into_iter()
        .map(|event| format!("{event:?}"))
        .collect();
        assert_eq!(
            joined,
            [
                "Ok(ThinkingDelta(\"Let me see.\"))",
                "Ok(TextDelta(\"Hi there\"))",
                "Ok(ThinkingDelta(\"Hm.\"))",
                "Ok(TextDelta(\"!\"))",
                "Ok(Finished { reason: Stop })",
                "Err(Failed { detail: \"gone\", reason: \"the model failed while answering; send the message again\" })",
            ]
        );
    }
}
