//! A run's compaction (rules C1, C2, C5, C6): the guard's decisions acted on, the summary
//! asked for and settled, and a `/compact` turn.

use std::sync::Arc;

use crate::compaction::{
    CallGuard, CompactionError, CompactionPlan, Decision, Outcome, SummaryCall, SummaryFailure,
    plan, settle,
};
use crate::prompt::Prompt;
use crate::stream::TurnEvent;
use crate::tokens::TokenCounter;
use crate::{Block, BlockKind, Role, TraceEntry, Transcript, TurnStatus};

use super::{Action, AfterLoad, Failure, Phase, RunSetup, TurnRun, TurnWrite};

impl TurnRun {
    /// The summary call answered.
    pub fn handle_summary(&mut self, call: SummaryCall) {
        let Some(Phase::Summarising(summarising)) =
            self.take_phase(|p| matches!(p, Phase::Summarising(_)))
        else {
            return;
        };
        let Summarising {
            plan,
            history,
            message,
            command,
            then,
        } = *summarising;
        self.record_usage(call.usage.purpose, call.usage.tokens);
        let counter = Arc::clone(&self.counter);
        let outcome = match (&mut self.guard, command) {
            (Some(guard), false) => guard.on_summary(&plan, call.answer, &history, &*counter),
            _ => settle(&plan, call.answer, &history, &*counter),
        };
        match outcome {
            Outcome::Commit(commit) => {
                let block =
                    self.writer
                        .compaction(message, commit.block.clone(), &mut self.actions);
                if let Block::Compaction {
                    summary,
                    trigger,
                    covers,
                    ..
                } = commit.block
                {
                    self.publish(TurnEvent::Compacted {
                        message,
                        block,
                        trigger,
                        covers,
                        summary,
                    });
                }
                if command {
                    self.finish(TurnStatus::Completed, None);
                } else {
                    // The call's output goes on in the message the compaction opened (rule B2).
                    self.load(self.recent(), AfterLoad::Call);
                }
            }
            Outcome::Proceed { trace } => {
                self.summary_failed(message, trace);
                match then {
                    Some((prompt, recent)) => self.call_model(*prompt, recent),
                    None => self.load(self.recent(), AfterLoad::Call),
                }
            }
            Outcome::FailTurn { error, trace } => {
                self.summary_failed(message, trace);
                self.fail(Failure::Compaction(error));
            }
        }
    }

    /// Acts on the compaction guard's decision for the call `then`, or for the call that
    /// overflowed.
    pub(super) fn decide(
        &mut self,
        decision: Decision,
        history: Arc<Transcript>,
        then: Option<(Box<Prompt>, Arc<Transcript>)>,
    ) {
        match decision {
            Decision::Proceed { trace } => {
                if let Some(trace @ TraceEntry::CompactionFailed { .. }) = trace {
                    self.write(TurnWrite::Trace(trace));
                }
                match then {
                    Some((prompt, recent)) => self.call_model(*prompt, recent),
                    None => self.load(self.recent(), AfterLoad::Call),
                }
            }
            Decision::Fail { error, trace } => {
                if let TraceEntry::CompactionFailed { .. } = &trace {
                    self.write(TurnWrite::Trace(trace));
                }
                self.fail(Failure::Compaction(error));
            }
            Decision::Compact(plan) => self.summarise(*plan, history, false, then),
        }
    }

    /// A `/compact [instructions]` turn (rule C6): summarises the history with the user's
    /// instructions; the turn's assistant message is the compaction block alone. The refusals
    /// of rule C7 were checked before the turn was opened.
    pub(super) fn command(&mut self, history: Arc<Transcript>, instructions: Option<&str>) {
        let planned = plan(
            &history,
            crate::compaction::Cause::Command,
            instructions,
            self.setup.model.context_window,
            &self.setup.compaction,
            &*self.counter,
        );
        match planned {
            Ok(planned) => self.summarise(planned, history, true, None),
            Err(error) => {
                let error = CompactionError::CommandFailed {
                    failure: SummaryFailure::Error(error.to_string()),
                };
                self.write(TurnWrite::Trace(TraceEntry::CompactionFailed {
                    reason: error.to_string(),
                }));
                self.fail(Failure::Compaction(error));
            }
        }
    }

    /// Opens the assistant message, announces the summary being written (its start is not
    /// stored until the summary is, rule C5) and asks for the summary call.
    pub(super) fn summarise(
        &mut self,
        plan: CompactionPlan,
        history: Arc<Transcript>,
        command: bool,
        then: Option<(Box<Prompt>, Arc<Transcript>)>,
    ) {
        let message = self.writer.message(Role::Assistant, &mut self.actions);
        self.publish(TurnEvent::BlockStart {
            message,
            block: 0,
            kind: BlockKind::Compaction,
            call: None,
            is_error: false,
            pictures: Vec::new(),
        });
        self.actions
            .push_back(Action::Summarise(Box::new(plan.request.clone())));
        self.phase = Phase::Summarising(Box::new(Summarising {
            plan,
            history,
            message,
            command,
            then,
        }));
    }

    /// The summary failed: its trace entry is kept, the divider's block ends without a block
    /// written, and the next call opens its own message.
    pub(super) fn summary_failed(&mut self, message: usize, trace: TraceEntry) {
        if let TraceEntry::CompactionFailed { .. } = &trace {
            self.write(TurnWrite::Trace(trace));
        }
        self.publish(TurnEvent::BlockEnd { message, block: 0 });
        self.writer.next_message(&mut self.actions);
    }
}

#[derive(Debug)]
pub(super) struct Summarising {
    pub(super) plan: CompactionPlan,
    /// The history the plan was made on.
    pub(super) history: Arc<Transcript>,
    /// The assistant message the summary opened.
    pub(super) message: usize,
    /// A `/compact` turn's summary, which ends the turn.
    pub(super) command: bool,
    /// The call to make when a summary before it fails (rule C5).
    pub(super) then: Option<(Box<Prompt>, Arc<Transcript>)>,
}

/// The guard for one call attempt (a call and its overflow retry) with `prompt`: the model's
/// window, and the system text and tools as the part no summary can shrink.
pub(super) fn guard_for(
    setup: &RunSetup,
    prompt: &Prompt,
    counter: &dyn TokenCounter,
) -> CallGuard {
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
        setup.compaction.clone(),
        setup.model.context_window,
        overhead,
    )
}
