//! One model call's compaction state machine (rules C1, C2, C5): at most one compaction per call
//! attempt, so it never loops.

use super::CompactionConfig;
use super::plan::{Cause, CompactionPlan, PlanError, plan};
use super::projection::{Projection, reaches_threshold};
use super::settle::{CompactionError, Outcome, SummaryFailure, commit, on_failure};
use crate::tokens::{MESSAGE_OVERHEAD, TokenCounter};
use crate::transcript::{TraceEntry, Transcript};

/// Guards one call attempt of the agent loop: the model call and, after an overflow, its retry.
/// The host makes a new guard for every call.
#[derive(Debug, Clone)]
pub struct CallGuard {
    config: CompactionConfig,
    window: u64,
    overhead: u64,
    state: State,
}

/// What the host does next.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Make the call (again, after an overflow: never; see [`CallGuard::on_overflow`]). Record
    /// the trace entry first, if there is one (rule C5).
    Proceed { trace: Option<TraceEntry> },
    /// Send the plan's summary request, then hand the answer to [`CallGuard::on_summary`].
    Compact(Box<CompactionPlan>),
    /// Record the trace entry and fail the turn.
    Fail {
        error: CompactionError,
        trace: TraceEntry,
    },
}

#[derive(Debug, Clone, PartialEq)]
enum State {
    /// Nothing tried yet.
    Ready,
    /// A summary was requested and has not been settled.
    Summarising,
    /// A compaction was committed; the live list takes about `tokens` with the overhead.
    Compacted { tokens: u64 },
    /// Compaction was tried and gave nothing: the summary failed, or could not help.
    GaveUp { why: GaveUp },
    /// The turn failed with this error.
    Failed(CompactionError),
}

#[derive(Debug, Clone, PartialEq)]
enum GaveUp {
    Failed(SummaryFailure),
    TailTooLarge { tokens: u64 },
}

impl CallGuard {
    /// A guard for a call on a model with a `window`-token context, where `overhead` tokens go to
    /// what the call reads besides its messages (system text, tool definitions).
    pub fn new(config: CompactionConfig, window: u64, overhead: u64) -> Self {
        CallGuard {
            config,
            window,
            overhead,
            state: State::Ready,
        }
    }

    /// Before the call (rule C1): compact when the projected input reaches the threshold. Once a
    /// compaction was tried for this attempt, it always proceeds.
    pub fn before_call(
        &mut self,
        transcript: &Transcript,
        projection: &Projection,
        counter: &dyn TokenCounter,
    ) -> Decision {
        if self.state != State::Ready
            || !reaches_threshold(projection.tokens, self.window, &self.config)
        {
            return Decision::Proceed { trace: None };
        }
        let cause = Cause::Threshold {
            projected: projection.tokens,
        };
        match self.plan(transcript, cause, counter) {
            Ok(plan) => {
                let tokens = self.tail_alone(&plan);
                if tokens >= self.window {
                    return self.give_up(GaveUp::TailTooLarge { tokens });
                }
                self.state = State::Summarising;
                Decision::Compact(Box::new(plan))
            }
            Err(PlanError::NothingToSummarise) => self.give_up(GaveUp::TailTooLarge {
                tokens: projection.tokens,
            }),
        }
    }

    /// Whether [`CallGuard::before_call`] with `projection` would plan a compaction, so a host
    /// that holds only memory's part of the transcript knows to read the whole history first.
    pub fn would_compact(&self, projection: &Projection) -> bool {
        self.state == State::Ready
            && reaches_threshold(projection.tokens, self.window, &self.config)
    }

    /// The gateway reported a context overflow (rule C2): compact and retry, unless this attempt
    /// already tried to compact, in which case the turn fails with a clear error.
    pub fn on_overflow(&mut self, transcript: &Transcript, counter: &dyn TokenCounter) -> Decision {
        match &self.state {
            State::Ready => {}
            State::Failed(error) => {
                let error = error.clone();
                return self.fail(error);
            }
            State::Summarising => {
                return self.fail(CompactionError::SummaryFailedAfterOverflow {
                    failure: SummaryFailure::Error(
                        "the call overflowed while its summary was still being written".into(),
                    ),
                });
            }
            State::Compacted { tokens } => {
                let tokens = *tokens;
                return self.fail(self.too_large(tokens));
            }
            State::GaveUp { why } => {
                let error = match why {
                    GaveUp::Failed(failure) => CompactionError::SummaryFailedAfterOverflow {
                        failure: failure.clone(),
                    },
                    GaveUp::TailTooLarge { tokens } => self.too_large(*tokens),
                };
                return self.fail(error);
            }
        }
        match self.plan(transcript, Cause::Overflow, counter) {
            Ok(plan) => {
                let tokens = self.tail_alone(&plan);
                if tokens >= self.window {
                    return self.fail(self.too_large(tokens));
                }
                self.state = State::Summarising;
                Decision::Compact(Box::new(plan))
            }
            Err(PlanError::NothingToSummarise) => self.fail(self.too_large(self.window)),
        }
    }

    /// The summary call answered: commit, or apply the failure policy (rule C5).
    pub fn on_summary(
        &mut self,
        plan: &CompactionPlan,
        answer: Result<String, SummaryFailure>,
        transcript: &Transcript,
        counter: &dyn TokenCounter,
    ) -> Outcome {
        match commit(plan, answer, transcript, counter) {
            Ok(commit) => {
                self.state = State::Compacted {
                    tokens: self.overhead.saturating_add(commit.live_tokens as u64),
                };
                Outcome::Commit(Box::new(commit))
            }
            Err(failure) => {
                self.state = State::GaveUp {
                    why: GaveUp::Failed(failure.clone()),
                };
                on_failure(plan.cause, failure)
            }
        }
    }

    fn plan(
        &self,
        transcript: &Transcript,
        cause: Cause,
        counter: &dyn TokenCounter,
    ) -> Result<CompactionPlan, PlanError> {
        plan(transcript, cause, None, self.window, &self.config, counter)
    }

    /// The tokens the call would read with an empty summary: what compaction cannot remove.
    fn tail_alone(&self, plan: &CompactionPlan) -> u64 {
        self.overhead
            .saturating_add((plan.tail.tokens + MESSAGE_OVERHEAD) as u64)
    }

    fn too_large(&self, tokens: u64) -> CompactionError {
        CompactionError::TailTooLarge {
            tokens,
            window: self.window,
        }
    }

    /// Before a call, compaction cannot help: log it and let the call go ahead; the gateway
    /// decides whether it fits.
    fn give_up(&mut self, why: GaveUp) -> Decision {
        let reason = match &why {
            GaveUp::TailTooLarge { tokens } => format!(
                "compaction skipped: the messages kept verbatim take about {tokens} tokens of the {}-token window, so a summary cannot make room",
                self.window
            ),
            GaveUp::Failed(failure) => failure.to_string(),
        };
        self.state = State::GaveUp { why };
        Decision::Proceed {
            trace: Some(TraceEntry::CompactionFailed { reason }),
        }
    }

    fn fail(&mut self, error: CompactionError) -> Decision {
        let trace = TraceEntry::CompactionFailed {
            reason: error.to_string(),
        };
        self.state = State::Failed(error.clone());
        Decision::Fail { error, trace }
    }
}
