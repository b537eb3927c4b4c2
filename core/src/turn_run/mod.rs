//! One run of a turn, from its start or from where it paused, to its end or its next pause, as a
//! sans-IO state machine: the host hands in what happened (`handle_*`: a load, a model event, a
//! summary, a tool's output, the gates of a reply's calls, a failed write, a cut-off, a
//! timeout) and performs what [`TurnRun::poll_action`] asks, in order (load, call the model with
//! this prompt, call for a summary, gate these calls, run this tool, write this, publish this
//! event). [`TurnRun::poll_timeout`] says when it next wants to be woken. Time is an argument, in
//! milliseconds from an epoch the host picks.
//!
//! Every turn rule lives here or below: the model-call limit, gating and pausing
//! ([`crate::reply`]), when a reply ends the turn (rule B3), compaction before a call and on an
//! overflow (rules C1, C2, C5, C6), withdrawing an overflowed call's output, cut-offs and their
//! reasons, and where a stored turn paused when it is read back ([`replay`]).
//!
//! The host performs each action before polling the next: an action that asks for something
//! (a load, a summary, the gates, a tool) is answered before polling again; after
//! [`Action::CallModel`] `poll_action` answers `None` until a model event, failure or the
//! stream's end is handed in. A write is always followed by the event that publishes it, so
//! the stream never shows what the store does not hold; a write that fails is reported with
//! [`TurnRun::handle_write_failed`] before polling on.

mod action;
mod compaction;
mod failure;
mod replay;
mod setup;
mod tools;
mod writer;

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;

use crate::compaction::{
    CallGuard, CompactionError, Decision, Projection, parse_compact, project_input,
};
use crate::memory::CompactionHint;
use crate::model::ModelEvent;
use crate::prompt::{Diagnostic, Prompt, PromptInput, assemble, render};
use crate::reply::{Call, call_id, call_ids, ends_on_text};
use crate::stream::TurnEvent;
use crate::tokens::TokenCounter;
use crate::usage::{CallPurpose, Tokens, Usage};
use crate::{Block, BlockKind, Role, TraceEntry, Transcript, TurnKind, TurnStatus};

pub use action::{Action, CutOff, ModelFailure, ToolRun, TurnWrite};
use compaction::{Summarising, guard_for};
pub use failure::Failure;
pub use replay::{UNNOTED_FAILURE, replay};
pub use setup::{Load, Loaded, RunLimits, RunSetup, Start};
use tools::Tools;
use writer::Writer;

/// Why a turn the stopping server cut off stopped, as `turn_end` and its note say.
pub const SHUTDOWN_REASON: &str = "The server stopped for a restart while this reply was being \
                                   written; send the message again.";

/// Why a turn whose server stopped without stopping it (a crash, a killed process, a replica
/// whose lease ran out) was cut off, as its note and `turn_end` say (rule M10).
pub const STOPPED_REASON: &str = "The server writing this reply stopped unexpectedly; send the \
                                  message again.";

/// One run of one turn. See the module documentation.
pub struct TurnRun {
    setup: RunSetup,
    counter: Arc<dyn TokenCounter + Send + Sync>,
    phase: Phase,
    actions: VecDeque<Action>,
    writer: Writer,
    /// Model calls made so far (an overflow's retry is not another).
    model_calls: usize,
    /// The compaction guard of the current call attempt.
    guard: Option<CallGuard>,
    /// The write polled last, whose failure the host reports.
    last_write: Option<TurnWrite>,
    /// How the run ends, once it does.
    end: Option<(TurnStatus, Option<String>)>,
    /// What the prompt builder found assembling the latest prompt.
    diagnostics: Vec<Diagnostic>,
}

impl std::fmt::Debug for TurnRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TurnRun")
            .field("turn", &self.setup.turn)
            .field("phase", &self.phase)
            .field("model_calls", &self.model_calls)
            .field("end", &self.end)
            .finish_non_exhaustive()
    }
}

/// What the run waits for.
#[derive(Debug)]
enum Phase {
    /// A load, and what to do with it.
    Loading(AfterLoad),
    /// The model's stream.
    Streaming(Streaming),
    /// A summary call's answer.
    Summarising(Box<Summarising>),
    /// The gates of these calls.
    Gating(Vec<Call>),
    /// The tools of a reply, run in order.
    Tools(Tools),
    /// Nothing more: the run ended or paused with this status.
    Ended,
}

#[derive(Debug)]
enum AfterLoad {
    /// The run's first load.
    Start(Start),
    /// Build the prompt for the next call and compact first when it asks to (rule C1).
    Prompt,
    /// Build the prompt and make the call: a compaction was committed for it.
    Call,
    /// The whole history, to plan a compaction before the call `prompt` on `recent`.
    BeforeCall {
        projection: Projection,
        prompt: Box<Prompt>,
        recent: Arc<Transcript>,
    },
    /// The whole history after the call overflowed (rule C2).
    Overflow,
    /// The whole history, for a `/compact` turn (rule C6).
    Command { instructions: Option<String> },
}

#[derive(Debug)]
struct Streaming {
    /// Memory's part of the conversation, as the call's prompt was built from it.
    transcript: Arc<Transcript>,
    taken: HashSet<String>,
    calls: Vec<Call>,
    /// The call's tokens by the run's counter, for a usage row when the provider reports none.
    estimate: Tokens,
    /// Whether the provider reported the call's usage.
    reported: bool,
}

impl TurnRun {
    /// A run of `setup.turn` from `start`, counting tokens with the model's `counter`.
    pub fn new(
        setup: RunSetup,
        counter: Arc<dyn TokenCounter + Send + Sync>,
        start: Start,
    ) -> Self {
        let load = match start {
            Start::Decided(_) => Load::Whole,
            _ => Load::Recent {
                max_turns: setup.prompt.memory.max_turns,
            },
        };
        TurnRun {
            setup,
            counter,
            phase: Phase::Loading(AfterLoad::Start(start)),
            actions: VecDeque::from([Action::Load(load)]),
            writer: Writer::new(),
            model_calls: 0,
            guard: None,
            last_write: None,
            end: None,
            diagnostics: Vec::new(),
        }
    }

    /// The next action, at `now_ms`; `None` while the run waits for the model's stream, or once
    /// it is finished ([`TurnRun::is_finished`]).
    pub fn poll_action(&mut self, now_ms: u64) -> Option<Action> {
        let action = self.actions.pop_front()?;
        match &action {
            Action::Write(write) => self.last_write = Some(write.clone()),
            Action::RunTool(_) => {
                if let Phase::Tools(Tools {
                    running: Some(running),
                    ..
                }) = &mut self.phase
                {
                    running.deadline = Some(now_ms.saturating_add(self.setup.limits.tool_ms));
                }
            }
            _ => {}
        }
        Some(action)
    }

    /// When the run wants to be woken with [`TurnRun::handle_timeout`]: a tool call's deadline.
    pub fn poll_timeout(&self) -> Option<u64> {
        match &self.phase {
            Phase::Tools(Tools {
                running: Some(running),
                ..
            }) => running.deadline,
            _ => None,
        }
    }

    /// Whether the run ended or paused and every action was taken.
    pub fn is_finished(&self) -> bool {
        matches!(self.phase, Phase::Ended) && self.actions.is_empty()
    }

    /// How the run ended: its status and the reason `turn_end` gives, once it ended or paused.
    pub fn end(&self) -> Option<(TurnStatus, Option<&str>)> {
        self.end
            .as_ref()
            .map(|(status, reason)| (*status, reason.as_deref()))
    }

    /// What the prompt builder found assembling the prompt of the latest
    /// [`Action::CallModel`] (the prompt inspector shows it).
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// What a load read.
    pub fn handle_loaded(&mut self, loaded: Loaded) {
        let Some(Phase::Loading(after)) = self.take_phase(|p| matches!(p, Phase::Loading(_)))
        else {
            return;
        };
        self.writer.loaded(loaded.transcript.turn(self.setup.turn));
        match after {
            AfterLoad::Start(Start::Fresh) => match self.compact_command(&loaded.transcript) {
                Some(instructions) => {
                    self.load(Load::Whole, AfterLoad::Command { instructions });
                }
                None => {
                    self.model_calls += 1;
                    self.prompt(loaded);
                }
            },
            AfterLoad::Start(Start::Answered(text)) => {
                self.writer.message(Role::User, &mut self.actions);
                self.writer.whole(&Block::text(text), &mut self.actions);
                self.next_call();
            }
            AfterLoad::Start(Start::Decided(decisions)) => {
                self.run_decided(&loaded.transcript, &decisions);
            }
            AfterLoad::Prompt => self.prompt(loaded),
            AfterLoad::Call => {
                let prompt = self.assemble(&loaded);
                self.call_model(prompt, loaded.transcript);
            }
            AfterLoad::BeforeCall {
                projection,
                prompt,
                recent,
            } => {
                self.writer.next_message(&mut self.actions);
                let counter = Arc::clone(&self.counter);
                let decision = match &mut self.guard {
                    Some(guard) => guard.before_call(&loaded.transcript, &projection, &*counter),
                    None => Decision::Proceed { trace: None },
                };
                self.decide(decision, loaded.transcript, Some((prompt, recent)));
            }
            AfterLoad::Overflow => {
                let counter = Arc::clone(&self.counter);
                let decision = match &mut self.guard {
                    Some(guard) => guard.on_overflow(&loaded.transcript, &*counter),
                    None => Decision::Fail {
                        error: CompactionError::TailTooLarge {
                            tokens: self.setup.model.context_window,
                            window: self.setup.model.context_window,
                        },
                        trace: TraceEntry::CompactionFailed {
                            reason: "the call overflowed before it was guarded".into(),
                        },
                    },
                };
                self.decide(decision, loaded.transcript, None);
            }
            AfterLoad::Command { instructions } => {
                self.command(loaded.transcript, instructions.as_deref());
            }
        }
    }

    /// One event of the model's stream.
    pub fn handle_model_event(&mut self, event: ModelEvent) {
        let Phase::Streaming(streaming) = &mut self.phase else {
            return;
        };
        match event {
            ModelEvent::ThinkingDelta(text) => {
                streaming.estimate.output += self.counter.count(&text) as u64;
                self.writer
                    .delta(BlockKind::Thinking, &text, &mut self.actions)
            }
            ModelEvent::TextDelta(text) => {
                streaming.estimate.output += self.counter.count(&text) as u64;
                self.writer.delta(BlockKind::Text, &text, &mut self.actions)
            }
            ModelEvent::ToolCallStart { .. } | ModelEvent::ToolCallArgumentsDelta { .. } => {}
            // The provider's id is not kept: memory's part of the transcript cannot tell whether
            // an older turn used it, and rule B4 wants every id unique.
            ModelEvent::ToolCallEnd {
                index,
                id: _,
                name,
                arguments,
            } => {
                let id = call_id(
                    self.setup.turn,
                    &streaming.transcript,
                    streaming.calls.len(),
                    index,
                    &streaming.taken,
                );
                streaming.estimate.output += (self.counter.count(&name)
                    + arguments
                        .as_ref()
                        .map_or(0, |a| self.counter.count(&a.to_string())))
                    as u64;
                streaming.taken.insert(id.clone());
                streaming.calls.push(Call {
                    id,
                    name,
                    arguments,
                });
            }
            ModelEvent::Usage(tokens) => {
                streaming.reported = true;
                self.record_usage(CallPurpose::Turn, tokens);
            }
            ModelEvent::Finished { .. } => self.handle_model_end(),
        }
    }

    /// The model's stream ended (after `Finished`, or without it).
    pub fn handle_model_end(&mut self) {
        let Some(Phase::Streaming(streaming)) =
            self.take_phase(|p| matches!(p, Phase::Streaming(_)))
        else {
            return;
        };
        self.writer.close(&mut self.actions);
        if !streaming.reported {
            self.record_usage(CallPurpose::Turn, streaming.estimate);
        }
        if !streaming.calls.is_empty() {
            self.actions
                .push_back(Action::Gate(streaming.calls.clone()));
            self.phase = Phase::Gating(streaming.calls);
        } else if ends_on_text(&self.writer.messages) {
            self.finish(TurnStatus::Completed, None);
        } else {
            self.fail(Failure::NoAnswer);
        }
    }

    /// The model call failed.
    pub fn handle_model_failure(&mut self, failure: ModelFailure) {
        if !matches!(self.phase, Phase::Streaming(_)) {
            return;
        }
        match failure {
            // Rule C2: on a context overflow, whenever it comes, what the call wrote is
            // withdrawn, and the turn compacts and makes the call again. The guard allows one
            // compaction per call attempt, so a second overflow fails the turn.
            ModelFailure::Overflow => {
                self.writer.withdraw(&mut self.actions);
                self.load(Load::Whole, AfterLoad::Overflow);
            }
            ModelFailure::Failed { reason, .. } => self.fail(Failure::Model(reason)),
        }
    }

    /// The load asked for failed. The host has logged why.
    pub fn handle_load_failed(&mut self) {
        if !matches!(self.phase, Phase::Loading(_)) {
            return;
        }
        self.actions.clear();
        self.fail(Failure::Storage);
    }

    /// The write polled last failed (storage refused it, or placed it elsewhere than the run
    /// said). The host has logged why.
    pub fn handle_write_failed(&mut self) {
        let Some(write) = self.last_write.take() else {
            return;
        };
        match write {
            TurnWrite::Trace(TraceEntry::TurnFailed { .. } | TraceEntry::TurnCutOff { .. }) => {}
            // The status could not be recorded: the turn is recorded failed instead, so that it
            // is not left running; one more write, whatever the first was.
            TurnWrite::Status(status) => {
                self.actions.clear();
                let reason = self
                    .end
                    .as_ref()
                    .and_then(|(_, reason)| reason.clone())
                    .unwrap_or_else(|| Failure::Storage.reason());
                if status != TurnStatus::Failed {
                    self.write(TurnWrite::Status(TurnStatus::Failed));
                }
                self.end = Some((TurnStatus::Failed, Some(reason.clone())));
                self.publish(TurnEvent::TurnEnd {
                    status: TurnStatus::Failed,
                    reason: Some(reason),
                });
            }
            TurnWrite::Block { .. } | TurnWrite::Message { .. } => {
                self.actions.clear();
                self.writer.forget_open();
                self.fail(Failure::Storage);
            }
            _ => {
                self.actions.clear();
                self.fail(Failure::Storage);
            }
        }
    }

    /// The run is cut off: what it was waiting for is dropped, calls it was running or still
    /// to run are answered as stopped, and the turn is recorded cut off (memory replays what it
    /// wrote, rule M10).
    pub fn handle_cut_off(&mut self, by: CutOff) {
        if matches!(self.phase, Phase::Ended) {
            return;
        }
        self.actions.clear();
        self.answer_cut_off_calls(by);
        self.writer.close(&mut self.actions);
        match by {
            CutOff::User => self.finish(TurnStatus::CutOff, None),
            CutOff::Shutdown => {
                let reason = SHUTDOWN_REASON.to_string();
                self.write(TurnWrite::Trace(TraceEntry::TurnCutOff {
                    reason: reason.clone(),
                }));
                self.finish(TurnStatus::CutOff, Some(reason));
            }
        }
    }

    /// Takes the phase a handler answers, when the run is in it; a handler called in another
    /// phase (an answer that comes late or twice) leaves the run as it was.
    fn take_phase(&mut self, answers: fn(&Phase) -> bool) -> Option<Phase> {
        answers(&self.phase).then(|| std::mem::replace(&mut self.phase, Phase::Ended))
    }

    fn recent(&self) -> Load {
        Load::Recent {
            max_turns: self.setup.prompt.memory.max_turns,
        }
    }

    fn load(&mut self, load: Load, after: AfterLoad) {
        self.actions.push_back(Action::Load(load));
        self.phase = Phase::Loading(after);
    }

    fn write(&mut self, write: TurnWrite) {
        self.actions.push_back(Action::Write(write));
    }

    /// Leaves a usage row for a call, priced at the turn's model (rule C11).
    fn record_usage(&mut self, purpose: CallPurpose, tokens: Tokens) {
        self.write(TurnWrite::Usage(Usage {
            purpose,
            model: self.setup.model.id.clone(),
            tokens,
            price: self.setup.price.clone(),
        }));
    }

    fn publish(&mut self, event: TurnEvent) {
        self.actions.push_back(Action::Publish(event));
    }

    /// The instructions of a `/compact` turn (rule C6), `Some(None)` for none; `None` for a chat
    /// turn.
    fn compact_command(&self, transcript: &Transcript) -> Option<Option<String>> {
        let turn = transcript
            .turn(self.setup.turn)
            .filter(|t| t.kind == TurnKind::Compact)?;
        Some(
            turn.messages
                .first()
                .and_then(|m| m.blocks.first())
                .and_then(|b| match b {
                    Block::Text { text } => parse_compact(text),
                    _ => None,
                })
                .and_then(|command| command.instructions),
        )
    }

    /// The next model call, unless the run made as many as it may.
    fn next_call(&mut self) {
        if self.model_calls >= self.setup.limits.model_calls {
            self.fail(Failure::TooManyCalls(self.setup.limits.model_calls));
            return;
        }
        self.model_calls += 1;
        self.load(self.recent(), AfterLoad::Prompt);
    }

    /// The prompt from memory's part of the conversation (rule M1), with a compaction first
    /// when the call's projected input reaches the threshold (rule C1). A summary covers the
    /// history since the newest compaction, more than memory's part.
    fn prompt(&mut self, loaded: Loaded) {
        let prompt = self.assemble(&loaded);
        let counter = &*self.counter;
        let guard = guard_for(&self.setup, &prompt, counter);
        let projection = project_input(&loaded.transcript, counter, || {
            counter.count(&render(&prompt)) as u64
        });
        let compact = guard.would_compact(&projection);
        self.guard = Some(guard);
        if compact {
            self.load(
                Load::Whole,
                AfterLoad::BeforeCall {
                    projection,
                    prompt: Box::new(prompt),
                    recent: loaded.transcript,
                },
            );
        } else {
            self.writer.next_message(&mut self.actions);
            self.call_model(prompt, loaded.transcript);
        }
    }

    fn assemble(&mut self, loaded: &Loaded) -> Prompt {
        let setup = &self.setup;
        let assembled = assemble(
            &PromptInput {
                transcript: &loaded.transcript,
                compaction_hint: loaded
                    .newest_compaction
                    .map_or(CompactionHint::NoCompaction, CompactionHint::NewestInTurn),
                model: &setup.model,
                instructions: &setup.instructions,
                project_instructions: &setup.project_instructions,
                selected_skills: &setup.selected_skills,
                catalogue: &setup.catalogue,
                agent_tools: &setup.agent_tools,
                effort: setup.effort,
            },
            &setup.prompt,
        );
        self.diagnostics = assembled.diagnostics;
        assembled.prompt
    }

    fn call_model(&mut self, prompt: Prompt, transcript: Arc<Transcript>) {
        self.writer.begin_call(&mut self.actions);
        let taken = call_ids(&transcript);
        let estimate = Tokens::estimated(self.counter.count(&render(&prompt)) as u64, 0);
        self.actions.push_back(Action::CallModel(Box::new(prompt)));
        self.phase = Phase::Streaming(Streaming {
            transcript,
            taken,
            calls: Vec::new(),
            estimate,
            reported: false,
        });
    }

    /// Fails the turn: its note keeps why, and `turn_end` says it.
    fn fail(&mut self, failure: Failure) {
        let reason = failure.reason();
        self.writer.close(&mut self.actions);
        self.write(TurnWrite::Trace(TraceEntry::TurnFailed {
            reason: reason.clone(),
        }));
        self.finish(TurnStatus::Failed, Some(reason));
    }

    /// Records the status the run stops with and publishes `turn_end`.
    fn finish(&mut self, status: TurnStatus, reason: Option<String>) {
        self.writer.close(&mut self.actions);
        self.write(TurnWrite::Status(status));
        self.publish(TurnEvent::TurnEnd {
            status,
            reason: reason.clone(),
        });
        self.end = Some((status, reason));
        self.phase = Phase::Ended;
    }
}
