//! One run of a turn, from its start or from where it paused, to its end or its next pause.

use std::collections::HashMap;
use std::sync::Arc;

use futures_util::StreamExt;
use portal_core::compaction::{CompactionConfig, CompactionError, SummaryFailure, parse_compact};
use portal_core::memory::CompactionHint;
use portal_core::prompt::{Prompt, PromptInput, assemble};
use portal_core::reply::{
    Call, Gate, MODEL_CALL_LIMIT, Next, call_id, call_ids, ends_on_text, gate_calls,
};
use portal_core::stream::TurnEvent;
use portal_core::tools::DECLINED_RESULT;
use portal_core::{Block, BlockKind, Role, TraceEntry, Transcript, TurnKind, TurnStatus};
use serde_json::Value;

use crate::compaction::{self, Step};
use crate::events::TurnLog;
use crate::model::{BadArguments, ModelError, ModelEvent, ModelStream};
use crate::storage::{CallPurpose, StorageError, TurnRef, Usage};
use crate::tools::{ToolCall, ToolContext, ToolOutput, unknown_tool};

use super::live::{CutOffBy, CutOffSignal};
use super::writer::Writer;
use super::{TurnSetup, Turns};

/// Where a run starts.
#[derive(Debug)]
pub(super) enum Resume {
    /// A turn just opened.
    Fresh,
    /// A paused turn, claimed running, whose approval requests were all decided (call id →
    /// approved).
    Decided(HashMap<String, bool>),
    /// A paused turn, claimed running, whose question the user answered with this text.
    Answered(String),
}

/// How a run stopped.
enum Stop {
    Ended(TurnStatus),
    Paused,
    CutOff(CutOffBy),
}

/// Why a turn the stopping server cut off stopped, as `turn_end` and its note say.
pub(super) const SHUTDOWN_REASON: &str = "The server stopped for a restart while this reply was \
                                          being written; send the message again.";

/// Why a run could not go on.
#[derive(Debug, thiserror::Error)]
enum RunError {
    #[error(transparent)]
    Storage(#[from] StorageError),
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error(
        "the model made {MODEL_CALL_LIMIT} calls without answering; send the message again, perhaps asking for less at once"
    )]
    TooManyCalls,
    #[error("the model stopped without writing an answer; send the message again")]
    NoAnswer,
    #[error(transparent)]
    Compaction(#[from] CompactionError),
}

impl RunError {
    /// Why the turn failed, as one sentence for the person who sent the message (`turn_end`'s
    /// reason): what to do, never what a model's endpoint sent (it may echo part of a key, or be
    /// a raw body) nor how the server stores its data. The log keeps the whole error.
    fn reason(&self) -> String {
        let words = match self {
            RunError::Storage(_) => "the server could not record the turn; send the message \
                                     again, and tell an administrator if it happens again"
                .to_string(),
            RunError::Model(error) => error.reason(),
            RunError::Compaction(error) => without_detail(error).to_string(),
            RunError::TooManyCalls | RunError::NoAnswer => self.to_string(),
        };
        sentence(&words)
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

/// Runs the turn until it ends or pauses, then records its status and publishes `turn_end`.
pub(super) async fn run(
    turns: Arc<Turns>,
    at: TurnRef,
    setup: TurnSetup,
    log: Arc<TurnLog>,
    mut cancel: CutOffSignal,
    resume: Resume,
) {
    let mut writer = Writer::new(
        turns.storage.clone(),
        at.conversation.clone(),
        at.turn,
        Arc::clone(&log),
    );
    let stop = tokio::select! {
        stop = drive(&turns, &at, &setup, &mut writer, resume) => stop,
        by = cut_off(&mut cancel) => Ok(Stop::CutOff(by)),
    };
    if !matches!(stop, Ok(Stop::CutOff(_))) || !caught_up(&turns, &at, &setup, &log).await {
        writer.close();
    }
    let (status, reason) = match stop {
        Ok(Stop::Paused) => (TurnStatus::Paused, None),
        Ok(Stop::Ended(status)) => (status, None),
        Ok(Stop::CutOff(CutOffBy::User)) => (TurnStatus::CutOff, None),
        Ok(Stop::CutOff(CutOffBy::Shutdown)) => {
            let reason = SHUTDOWN_REASON.to_string();
            let note = TraceEntry::TurnCutOff {
                reason: reason.clone(),
            };
            note_end(&turns, &at, &note).await;
            (TurnStatus::CutOff, Some(reason))
        }
        Err(error) => {
            tracing::warn!(
                "turn {} of conversation {} failed: {error}",
                at.turn,
                at.conversation
            );
            let reason = error.reason();
            let note = TraceEntry::TurnFailed {
                reason: reason.clone(),
            };
            note_end(&turns, &at, &note).await;
            (TurnStatus::Failed, Some(reason))
        }
    };
    let (status, reason) = record_status(&turns, &at, status, reason).await;
    log.push(TurnEvent::TurnEnd { status, reason });
    turns.live.stopped(&at);
}

/// Records the status the run stopped with and returns what `turn_end` says. When the write
/// fails, the turn is recorded failed instead, so that it is not left running: one more write,
/// whatever the first was. Should that fail too, the turn stays running in storage until it is
/// cancelled or the server restarts (recovery cuts it off), and the log says so.
async fn record_status(
    turns: &Turns,
    at: &TurnRef,
    status: TurnStatus,
    reason: Option<String>,
) -> (TurnStatus, Option<String>) {
    let storage = &turns.storage;
    let Err(error) = storage
        .set_turn_status(&at.conversation, at.turn, status)
        .await
    else {
        return (status, reason);
    };
    tracing::error!(
        "turn {} of conversation {} could not be recorded {status}: {error}; recording it failed",
        at.turn,
        at.conversation
    );
    let reason = reason.unwrap_or_else(|| RunError::Storage(error).reason());
    if let Err(error) = storage
        .set_turn_status(&at.conversation, at.turn, TurnStatus::Failed)
        .await
    {
        tracing::error!(
            "turn {} of conversation {} could not be recorded failed either: {error}; it stays \
             running until it is cancelled or the server restarts",
            at.turn,
            at.conversation
        );
    }
    (TurnStatus::Failed, Some(reason))
}

/// Resolves once the turn is told to stop.
/// Who cut the run off, once someone has; never, when no one can any more.
async fn cut_off(cancel: &mut CutOffSignal) -> CutOffBy {
    let by = cancel.wait_for(Option::is_some).await.map(|by| *by);
    match by {
        Ok(by) => by.unwrap_or(CutOffBy::User),
        Err(_) => std::future::pending().await,
    }
}

/// A run was cut off, perhaps between writing a piece and publishing it: once every write
/// started has landed, the log publishes what storage holds beyond it (the open block's end
/// included). False when it could not, and the writer's own close is what is left.
async fn caught_up(turns: &Turns, at: &TurnRef, setup: &TurnSetup, log: &TurnLog) -> bool {
    turns.storage.settled().await;
    let stored = turns
        .storage
        .load_transcript(&setup.org_id, &at.conversation)
        .await;
    match stored.as_ref().map(|t| t.turn(at.turn)) {
        Ok(Some(turn)) => log.catch_up(turn),
        _ => false,
    }
}

/// Keeps why the turn ended in its trace; a note that cannot be written is logged, and the
/// turn ends all the same.
async fn note_end(turns: &Turns, at: &TurnRef, note: &TraceEntry) {
    if let Err(error) = turns
        .storage
        .add_trace(&at.conversation, at.turn, note)
        .await
    {
        tracing::warn!(
            "why turn {} of conversation {} ended could not be noted: {error}",
            at.turn,
            at.conversation
        );
    }
}

async fn drive(
    turns: &Turns,
    at: &TurnRef,
    setup: &TurnSetup,
    writer: &mut Writer,
    resume: Resume,
) -> Result<Stop, RunError> {
    let storage = &turns.storage;
    match resume {
        Resume::Fresh => {}
        Resume::Decided(decisions) => {
            let transcript = storage
                .load_transcript(&setup.org_id, &at.conversation)
                .await?;
            run_decided(turns, at, setup, writer, transcript, &decisions).await?;
        }
        Resume::Answered(text) => {
            writer.message(Role::User).await?;
            writer.whole(&Block::text(text)).await?;
        }
    }
    if let Some(stop) = compact_command(turns, at, setup, writer).await? {
        return Ok(stop);
    }
    let model = &*setup.model;
    let config = CompactionConfig::default();
    for _ in 0..MODEL_CALL_LIMIT {
        let (mut transcript, mut prompt) = prompt_now(turns, at, setup).await?;
        // Rule C1: compact before the call when its projected input reaches the threshold. A
        // summary covers the history since the newest compaction, more than memory's part.
        let mut guard = compaction::guard_for(model, &prompt, &config);
        let projected = compaction::projection(model, &transcript, &prompt);
        let history = if guard.would_compact(&projected) {
            Arc::new(whole(turns, at, setup).await?)
        } else {
            Arc::clone(&transcript)
        };
        writer.next_message();
        match compaction::before_call(writer.sink(), model, &mut guard, &history, &projected)
            .await?
        {
            Step::Call {
                message: Some(message),
            } => {
                writer.adopt(message);
                (transcript, prompt) = prompt_now(turns, at, setup).await?;
            }
            Step::Call { message: None } => {}
            Step::Fail(error) => return Err(error.into()),
        }
        let mut answer = call_model(turns, setup, &prompt, writer).await;
        let mut taken = call_ids(&transcript);
        let mut calls: Vec<Call> = Vec::new();
        while let Some(event) = answer.next().await {
            let event = match event {
                // Rule C2: on a context overflow, whenever it comes, what the call wrote is
                // withdrawn, and the turn compacts and makes the call again. The guard allows one
                // compaction per call attempt, so a second overflow fails the turn with a clear
                // error.
                Err(ModelError::ContextOverflow { .. }) => {
                    writer.withdraw().await?;
                    calls.clear();
                    let history = whole(turns, at, setup).await?;
                    match compaction::after_overflow(writer.sink(), model, &mut guard, &history)
                        .await?
                    {
                        Step::Call { message } => {
                            if let Some(message) = message {
                                writer.adopt(message);
                            }
                            (transcript, prompt) = prompt_now(turns, at, setup).await?;
                            taken = call_ids(&transcript);
                            answer = call_model(turns, setup, &prompt, writer).await;
                            continue;
                        }
                        Step::Fail(error) => return Err(error.into()),
                    }
                }
                event => event?,
            };
            match event {
                ModelEvent::ThinkingDelta(text) => writer.delta(BlockKind::Thinking, &text).await?,
                ModelEvent::TextDelta(text) => writer.delta(BlockKind::Text, &text).await?,
                ModelEvent::ToolCallStart { .. } | ModelEvent::ToolCallArgumentsDelta { .. } => {}
                // The provider's id is not kept: memory's part of the transcript cannot tell
                // whether an older turn used it, and rule B4 wants every id unique.
                ModelEvent::ToolCallEnd {
                    index,
                    id: _,
                    name,
                    arguments,
                } => {
                    let id = call_id(at.turn, &transcript, calls.len(), index, &taken);
                    taken.insert(id.clone());
                    calls.push(Call {
                        id,
                        name,
                        arguments,
                    });
                }
                ModelEvent::Usage {
                    input_tokens,
                    output_tokens,
                } => {
                    storage
                        .record_usage(
                            &at.conversation,
                            at.turn,
                            &Usage {
                                purpose: CallPurpose::Turn,
                                model: setup.model.capabilities().id.clone(),
                                input_tokens,
                                output_tokens,
                            },
                        )
                        .await?
                }
                ModelEvent::Finished { .. } => break,
            }
        }
        writer.close();
        if calls.is_empty() {
            let latest = storage
                .load_recent(&setup.org_id, &at.conversation, 0)
                .await?;
            return if ends_on_text(&latest.transcript, at.turn) {
                Ok(Stop::Ended(TurnStatus::Completed))
            } else {
                Err(RunError::NoAnswer)
            };
        }
        // Each call gated by its tool: run, ask for approval, or ask a question.
        let gated = calls.into_iter().map(|call| {
            let gate = match (&call.arguments, setup.tools.get(&call.name)) {
                (Ok(arguments), Some(tool)) => tool.gate(&ToolCall {
                    id: &call.id,
                    name: &call.name,
                    arguments,
                }),
                _ => Gate::Run,
            };
            (call, gate)
        });
        let plan = gate_calls(gated);
        for block in &plan.blocks {
            writer.whole(block).await?;
        }
        match plan.next {
            Next::AwaitDecisions => return Ok(Stop::Paused),
            Next::AwaitAnswer { not_run } => {
                if !not_run.is_empty() {
                    writer.message(Role::Tool).await?;
                    for result in &not_run {
                        writer.whole(result).await?;
                    }
                }
                return Ok(Stop::Paused);
            }
            Next::Run(calls) => {
                let context = context(turns, at, setup, transcript);
                writer.message(Role::Tool).await?;
                for call in calls {
                    let output =
                        run_tool(setup, &context, &call.id, &call.name, &call.arguments).await;
                    writer.whole(&result(call.id, output)).await?;
                }
            }
        }
    }
    Err(RunError::TooManyCalls)
}

/// Makes the model call with `prompt`; what it writes from here on can be withdrawn.
async fn call_model(
    turns: &Turns,
    setup: &TurnSetup,
    prompt: &Prompt,
    writer: &mut Writer,
) -> ModelStream {
    let pictures = turns
        .pictures
        .encode(&turns.storage, &setup.org_id, prompt)
        .await;
    writer.begin_call();
    setup.model.stream(prompt, &pictures)
}

/// Memory's part of the stored transcript (rule M1: the latest turns and the newest
/// compaction, one load) and the prompt core assembles from it for the next call.
async fn prompt_now(
    turns: &Turns,
    at: &TurnRef,
    setup: &TurnSetup,
) -> Result<(Arc<Transcript>, Prompt), RunError> {
    let recent = turns
        .storage
        .load_recent(
            &setup.org_id,
            &at.conversation,
            turns.prompt.memory.max_turns,
        )
        .await?;
    let transcript = Arc::new(recent.transcript);
    let agent_tools = setup.tools.agent_tools();
    let assembled = assemble(
        &PromptInput {
            transcript: &transcript,
            compaction_hint: recent
                .newest_compaction
                .map_or(CompactionHint::NoCompaction, CompactionHint::NewestInTurn),
            model: setup.model.capabilities(),
            instructions: &setup.instructions,
            selected_skills: &setup.selected_skills,
            catalogue: &setup.catalogue,
            agent_tools: &agent_tools,
            effort: setup.effort,
        },
        &turns.prompt,
    );
    Ok((transcript, assembled.prompt))
}

/// The whole conversation, for planning a summary of its history.
async fn whole(turns: &Turns, at: &TurnRef, setup: &TurnSetup) -> Result<Transcript, RunError> {
    Ok(turns
        .storage
        .load_transcript(&setup.org_id, &at.conversation)
        .await?)
}

/// A `/compact` turn (rule C6) summarises the history and ends without entering the agent
/// loop; `None` for a chat turn.
async fn compact_command(
    turns: &Turns,
    at: &TurnRef,
    setup: &TurnSetup,
    writer: &mut Writer,
) -> Result<Option<Stop>, RunError> {
    let latest = turns
        .storage
        .load_recent(&setup.org_id, &at.conversation, 0)
        .await?
        .transcript;
    let Some(turn) = latest.turn(at.turn).filter(|t| t.kind == TurnKind::Compact) else {
        return Ok(None);
    };
    let instructions = turn
        .messages
        .first()
        .and_then(|m| m.blocks.first())
        .and_then(|b| match b {
            Block::Text { text } => parse_compact(text),
            _ => None,
        })
        .and_then(|command| command.instructions);
    compaction::command(
        writer.sink(),
        &*setup.model,
        &whole(turns, at, setup).await?,
        instructions.as_deref(),
        &CompactionConfig::default(),
    )
    .await??;
    Ok(Some(Stop::Ended(TurnStatus::Completed)))
}

/// Runs the calls of a paused turn's last assistant message once every approval is decided.
async fn run_decided(
    turns: &Turns,
    at: &TurnRef,
    setup: &TurnSetup,
    writer: &mut Writer,
    transcript: Transcript,
    decisions: &HashMap<String, bool>,
) -> Result<(), RunError> {
    let calls: Vec<(String, String, Value)> = transcript
        .turn(at.turn)
        .and_then(|t| t.last_assistant_message())
        .map(|m| {
            m.blocks
                .iter()
                .filter_map(|b| match b {
                    Block::ToolUse { id, name, input } => {
                        Some((id.clone(), name.clone(), input.clone()))
                    }
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    let context = context(turns, at, setup, Arc::new(transcript));
    writer.message(Role::Tool).await?;
    for (id, name, input) in calls {
        let output = match decisions.get(&id) {
            Some(false) => ToolOutput::error(DECLINED_RESULT),
            _ => run_tool(setup, &context, &id, &name, &Ok(input)).await,
        };
        writer.whole(&result(id, output)).await?;
    }
    Ok(())
}

/// Runs a call with the agent's tools; a tool it is not offered is unknown.
async fn run_tool(
    setup: &TurnSetup,
    context: &ToolContext,
    id: &str,
    name: &str,
    arguments: &Result<Value, BadArguments>,
) -> ToolOutput {
    let arguments = match arguments {
        Ok(arguments) => arguments,
        Err(bad) => return ToolOutput::error(bad.to_string()),
    };
    match setup.tools.get(name) {
        Some(tool) => {
            tool.run(
                ToolCall {
                    id,
                    name,
                    arguments,
                },
                context,
            )
            .await
        }
        None => unknown_tool(name),
    }
}

fn context(
    turns: &Turns,
    at: &TurnRef,
    setup: &TurnSetup,
    transcript: Arc<Transcript>,
) -> ToolContext {
    ToolContext {
        storage: turns.storage.clone(),
        org_id: setup.org_id.clone(),
        conversation: at.conversation.clone(),
        transcript,
    }
}

fn result(call_id: String, output: ToolOutput) -> Block {
    Block::ToolResult {
        call_id,
        content: output.content,
        is_error: output.is_error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(error: RunError, expected: &str) {
        assert_eq!(error.reason(), expected, "{error}");
    }

    #[test]
    fn a_failed_turn_says_why_in_a_sentence_without_what_the_endpoint_sent() {
        check(
            RunError::Model(ModelError::failed("HTTP 502: <html>sk-live-1234</html>")),
            "The model failed while answering; send the message again.",
        );
        check(
            RunError::Compaction(CompactionError::CommandFailed {
                failure: SummaryFailure::Error("the model failed: key sk-live-1234".into()),
            }),
            "The summary could not be written (the summary call failed: the model failed); \
             nothing was changed: send /compact again.",
        );
        check(
            RunError::Storage(StorageError::Unreadable {
                what: "block",
                detail: "/var/lib/portal/portal.db".into(),
            }),
            "The server could not record the turn; send the message again, and tell an \
             administrator if it happens again.",
        );
        check(
            RunError::NoAnswer,
            "The model stopped without writing an answer; send the message again.",
        );
    }
}
