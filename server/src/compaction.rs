//! The turn loop's compaction step (rules C1, C2, C5, C6, C11): the summary call, what it
//! writes, and the demo model's summaries. What to compact, when, and what is recorded come from
//! `portal_core::compaction`; this module makes the call and writes the outcome.
//!
//! One model call of the agent loop goes through a [`CallGuard`] made by [`guard_for`]:
//! [`before_call`] (rule C1) and, when the call reports a context overflow, [`after_overflow`]
//! (rule C2) answer a [`Step`]: make the call (into the message the compaction opened, when one
//! was committed), or fail the turn. A `/compact` turn runs [`command`] instead of the agent
//! loop (rule C6).
//!
//! While the summary is written, the turn's stream carries a `block_start` of kind `compaction`
//! at the block's position; `compacted` at that position commits it, and a `block_end` without
//! `compacted` says the summary failed and nothing was written (rule C5). A failure never
//! rewrites or drops a stored turn: the only writes are the new block, a trace entry and the
//! usage row.
//!
//! The summary is written by a separate call on the turn's own model, with the prompt
//! [`SummaryRequest::prompt`] builds: no tools, no effort. It leaves a usage row priced at the
//! turn's model with purpose `compaction`, which carries no context size (rule C11).

use std::time::Duration;

use futures_util::{StreamExt, stream};
use portal_core::compaction::{
    CallGuard, Cause, CompactionConfig, CompactionError, CompactionPlan, Decision, Outcome,
    Projection, SummaryFailure, SummaryRequest, extractive, plan, project_input, settle,
};
use portal_core::prompt::{NoPictures, Prompt, render};
use portal_core::stream::TurnEvent;
use portal_core::tokens::{EstimateCounter, TokenCounter};
use portal_core::{Block, BlockKind, Role, TraceEntry, Transcript};

use crate::events::TurnLog;
use crate::model::{FinishReason, Model, ModelError, ModelEvent, ModelStream};
use crate::storage::{AsyncStorage, CallPurpose, ConversationId, StorageError, Usage};

/// Where a compaction writes: the running turn in storage, and its event log.
#[derive(Debug, Clone, Copy)]
pub struct TurnSink<'a> {
    pub storage: &'a AsyncStorage,
    pub conversation: &'a ConversationId,
    pub turn: u32,
    pub log: &'a TurnLog,
}

/// What the turn loop does after a compaction step.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Make the model call. When a compaction was committed, `message` is the assistant message
    /// it opened, and the call's output goes on in that message, after the block.
    Call { message: Option<usize> },
    /// Fail the turn with this error; its trace entry is already written.
    Fail(CompactionError),
}

/// The guard for one call attempt (a call and its overflow retry) on `model` with `prompt`: the
/// model's window, and the system text and tools as the part no summary can shrink.
pub fn guard_for(model: &dyn Model, prompt: &Prompt, config: &CompactionConfig) -> CallGuard {
    let counter = model.tokens();
    let tools: usize = prompt
        .tools
        .iter()
        .map(|t| {
            counter.count(&t.name)
                + counter.count(&t.description)
                + counter.count(&t.parameters.to_string())
        })
        .sum();
    let overhead = (counter.count(&prompt.system_text()) + tools) as u64;
    CallGuard::new(
        config.clone(),
        model.capabilities().context_window,
        overhead,
    )
}

/// The projected input of the call about to be made with `prompt` on `model` (rule C1): the
/// latest report plus what was added since, or a count of the whole prompt, in the model's
/// tokens.
pub fn projection(model: &dyn Model, transcript: &Transcript, prompt: &Prompt) -> Projection {
    let counter = model.tokens();
    project_input(transcript, counter, || {
        counter.count(&render(prompt)) as u64
    })
}

/// Before a call (rule C1): compacts when the projected input reaches the threshold. A summary
/// that fails here is logged and the call goes ahead (rule C5).
pub async fn before_call(
    sink: TurnSink<'_>,
    model: &dyn Model,
    guard: &mut CallGuard,
    transcript: &Transcript,
    projection: &Projection,
) -> Result<Step, StorageError> {
    let decision = guard.before_call(transcript, projection, model.tokens());
    decide(sink, model, guard, transcript, decision).await
}

/// After the call reported a context overflow (rule C2): compacts, and the turn loop retries the
/// call once; a second overflow, or one after a failed summary, fails the turn.
pub async fn after_overflow(
    sink: TurnSink<'_>,
    model: &dyn Model,
    guard: &mut CallGuard,
    transcript: &Transcript,
) -> Result<Step, StorageError> {
    let decision = guard.on_overflow(transcript, model.tokens());
    decide(sink, model, guard, transcript, decision).await
}

/// A `/compact [instructions]` turn (rule C6): summarises the history with the user's
/// instructions; the turn's assistant message is the compaction block alone. The refusals of
/// rule C7 are checked before the turn was opened. Err when the summary failed.
pub async fn command(
    sink: TurnSink<'_>,
    model: &dyn Model,
    transcript: &Transcript,
    instructions: Option<&str>,
    config: &CompactionConfig,
) -> Result<Result<(), CompactionError>, StorageError> {
    let window = model.capabilities().context_window;
    let planned = match plan(
        transcript,
        Cause::Command,
        instructions,
        window,
        config,
        model.tokens(),
    ) {
        Ok(planned) => planned,
        Err(error) => {
            let error = CompactionError::CommandFailed {
                failure: SummaryFailure::Error(error.to_string()),
            };
            sink.trace(&error.to_string()).await?;
            return Ok(Err(error));
        }
    };
    let (message, answer) = write_summary(sink, model, &planned).await?;
    let outcome = settle(&planned, answer, transcript, model.tokens());
    Ok(match finish(sink, message, outcome).await? {
        Step::Call { .. } => Ok(()),
        Step::Fail(error) => Err(error),
    })
}

async fn decide(
    sink: TurnSink<'_>,
    model: &dyn Model,
    guard: &mut CallGuard,
    transcript: &Transcript,
    decision: Decision,
) -> Result<Step, StorageError> {
    match decision {
        Decision::Proceed { trace } => {
            if let Some(TraceEntry::CompactionFailed { reason }) = &trace {
                sink.trace(reason).await?;
            }
            Ok(Step::Call { message: None })
        }
        Decision::Fail { error, trace } => {
            if let TraceEntry::CompactionFailed { reason } = &trace {
                sink.trace(reason).await?;
            }
            Ok(Step::Fail(error))
        }
        Decision::Compact(planned) => {
            let (message, answer) = write_summary(sink, model, &planned).await?;
            let outcome = guard.on_summary(&planned, answer, transcript, model.tokens());
            finish(sink, message, outcome).await
        }
    }
}

/// Opens the assistant message, announces the summary being written, makes the summary call and
/// leaves its usage row.
async fn write_summary(
    sink: TurnSink<'_>,
    model: &dyn Model,
    planned: &CompactionPlan,
) -> Result<(usize, Result<String, SummaryFailure>), StorageError> {
    let message = sink
        .storage
        .append_message(sink.conversation, sink.turn, Role::Assistant)
        .await?;
    sink.log.push(TurnEvent::MessageStart {
        message,
        role: Role::Assistant,
    });
    sink.log.push(TurnEvent::BlockStart {
        message,
        block: 0,
        kind: BlockKind::Compaction,
        call: None,
        is_error: false,
    });
    let call = summarise(model, &planned.request).await;
    sink.storage
        .record_usage(sink.conversation, sink.turn, &call.usage)
        .await?;
    Ok((message, call.answer))
}

/// Writes what the summary came to: the block (committed), or a trace entry (failed).
async fn finish(
    sink: TurnSink<'_>,
    message: usize,
    outcome: Outcome,
) -> Result<Step, StorageError> {
    match outcome {
        Outcome::Commit(commit) => {
            let block = sink
                .storage
                .append_block(sink.conversation, sink.turn, message, &commit.block)
                .await?;
            if let Block::Compaction {
                summary,
                trigger,
                covers,
                ..
            } = commit.block
            {
                sink.log.push(TurnEvent::Compacted {
                    message,
                    block,
                    trigger,
                    covers,
                    summary,
                });
            }
            Ok(Step::Call {
                message: Some(message),
            })
        }
        Outcome::Proceed { trace } => {
            sink.failed(message, &trace).await?;
            Ok(Step::Call { message: None })
        }
        Outcome::FailTurn { error, trace } => {
            sink.failed(message, &trace).await?;
            Ok(Step::Fail(error))
        }
    }
}

impl TurnSink<'_> {
    async fn trace(&self, reason: &str) -> Result<(), StorageError> {
        self.storage
            .add_trace(
                self.conversation,
                self.turn,
                &TraceEntry::CompactionFailed {
                    reason: reason.to_string(),
                },
            )
            .await
    }

    /// The summary failed: the divider's block ends without a block written.
    async fn failed(&self, message: usize, trace: &TraceEntry) -> Result<(), StorageError> {
        if let TraceEntry::CompactionFailed { reason } = trace {
            self.trace(reason).await?;
        }
        self.log.push(TurnEvent::BlockEnd { message, block: 0 });
        Ok(())
    }
}

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
        let counter = model.tokens();
        (
            counter.count(&request.text()) as u64,
            counter.count(&text) as u64,
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
