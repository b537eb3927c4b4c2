//! A run's tool calls: each reply's calls gated, the turn paused where `paused_after` says,
//! and the calls run in order, each before its deadline, or answered without running.

use std::collections::{HashMap, VecDeque};

use crate::reply::{Gate, gate_calls, paused_after};
use crate::tools::{DECLINED_RESULT, ToolOutput};
use crate::{Block, Role, Transcript, TurnStatus};

use super::{Action, CutOff, Phase, ToolRun, TurnRun};

impl TurnRun {
    /// How each call's tool takes it, in the order of [`Action::Gate`]'s calls. Missing gates
    /// are taken as [`Gate::Run`].
    pub fn handle_gates(&mut self, gates: Vec<Gate>) {
        let Some(Phase::Gating(calls)) = self.take_phase(|p| matches!(p, Phase::Gating(_))) else {
            return;
        };
        let mut gates = gates.into_iter();
        let plan = gate_calls(
            calls
                .into_iter()
                .map(|call| (call, gates.next().unwrap_or(Gate::Run))),
        );
        for block in &plan.blocks {
            self.writer.whole(block, &mut self.actions);
        }
        if !plan.not_run.is_empty() {
            self.writer.message(Role::Tool, &mut self.actions);
            for result in &plan.not_run {
                self.writer.whole(result, &mut self.actions);
            }
        }
        let last = self.writer.messages.len().saturating_sub(1);
        if paused_after(&self.writer.messages, last) {
            self.finish(TurnStatus::Paused, None);
            return;
        }
        let pending = plan
            .run
            .into_iter()
            .map(|call| match call.arguments {
                Ok(arguments) => Pending::Run(ToolRun {
                    id: call.id,
                    name: call.name,
                    arguments,
                }),
                Err(bad) => Pending::Answer(result(call.id, ToolOutput::error(bad.to_string()))),
            })
            .collect();
        self.run_tools(pending);
    }

    /// The running tool's answer.
    pub fn handle_tool_output(&mut self, output: ToolOutput) {
        let Phase::Tools(tools) = &mut self.phase else {
            return;
        };
        let Some(running) = tools.running.take() else {
            return;
        };
        self.writer
            .whole(&result(running.id, output), &mut self.actions);
        self.next_tool();
    }

    /// Time passed: a tool past its deadline is stopped and answered with an error.
    pub fn handle_timeout(&mut self, now_ms: u64) {
        let Phase::Tools(Tools {
            running: Some(running),
            ..
        }) = &self.phase
        else {
            return;
        };
        if running.deadline.is_none_or(|deadline| now_ms < deadline) {
            return;
        }
        let seconds = self.setup.limits.tool_ms.div_ceil(1000);
        let name = running.name.clone();
        self.handle_tool_output(ToolOutput::error(format!(
            "The tool `{name}` did not answer within {seconds} seconds, so it was stopped and \
             nothing it would have returned is known. Call it again with less to do, or go on \
             without it."
        )));
    }

    /// The run is cut off while its tools run: the running call and those still to run are
    /// answered, saying so, so that the stored turn answers every call it made (the host
    /// cancels the running tool).
    pub(super) fn answer_cut_off_calls(&mut self, by: CutOff) {
        let Phase::Tools(tools) = &mut self.phase else {
            return;
        };
        let who = match by {
            CutOff::User => "The person stopped the turn",
            CutOff::Shutdown => "The server stopped",
        };
        let mut answers: Vec<Block> = Vec::new();
        if let Some(running) = tools.running.take() {
            let name = running.name;
            answers.push(result(
                running.id,
                ToolOutput::error(format!(
                    "{who} while the tool `{name}` ran, so it was cancelled and nothing it \
                     would have returned is known."
                )),
            ));
        }
        for pending in std::mem::take(&mut tools.pending) {
            answers.push(match pending {
                Pending::Answer(block) => block,
                Pending::Run(run) => {
                    let name = run.name;
                    result(
                        run.id,
                        ToolOutput::error(format!(
                            "{who} before the tool `{name}` ran, so it did not run."
                        )),
                    )
                }
            });
        }
        for answer in &answers {
            self.writer.whole(answer, &mut self.actions);
        }
    }

    /// Runs the calls of a paused turn's last assistant message once every approval is
    /// decided: approved ones run, declined ones are answered as declined.
    pub(super) fn run_decided(
        &mut self,
        transcript: &Transcript,
        decisions: &HashMap<String, bool>,
    ) {
        let pending: VecDeque<Pending> = transcript
            .turn(self.setup.turn)
            .and_then(|t| t.last_assistant_message())
            .map(|m| {
                m.blocks
                    .iter()
                    .filter_map(|b| match b {
                        Block::ToolUse { id, name, input } => Some(match decisions.get(id) {
                            Some(false) => Pending::Answer(result(
                                id.clone(),
                                ToolOutput::error(DECLINED_RESULT),
                            )),
                            _ => Pending::Run(ToolRun {
                                id: id.clone(),
                                name: name.clone(),
                                arguments: input.clone(),
                            }),
                        }),
                        _ => None,
                    })
                    .collect()
            })
            .unwrap_or_default();
        self.run_tools(pending);
    }

    /// Answers a reply's calls in a tool message, in order, running those that run.
    pub(super) fn run_tools(&mut self, pending: VecDeque<Pending>) {
        self.writer.message(Role::Tool, &mut self.actions);
        self.phase = Phase::Tools(Tools {
            pending,
            running: None,
        });
        self.next_tool();
    }

    pub(super) fn next_tool(&mut self) {
        let Phase::Tools(tools) = &mut self.phase else {
            return;
        };
        while let Some(pending) = tools.pending.pop_front() {
            match pending {
                Pending::Answer(block) => {
                    self.writer.whole(&block, &mut self.actions);
                }
                Pending::Run(run) => {
                    tools.running = Some(Running {
                        id: run.id.clone(),
                        name: run.name.clone(),
                        deadline: None,
                    });
                    self.actions.push_back(Action::RunTool(run));
                    return;
                }
            }
        }
        self.next_call();
    }
}

#[derive(Debug, Default)]
pub(super) struct Tools {
    pub(super) pending: VecDeque<Pending>,
    /// The call running, and when it must have answered.
    pub(super) running: Option<Running>,
}

#[derive(Debug)]
pub(super) enum Pending {
    Run(ToolRun),
    /// A result known without running anything.
    Answer(Block),
}

#[derive(Debug)]
pub(super) struct Running {
    pub(super) id: String,
    pub(super) name: String,
    pub(super) deadline: Option<u64>,
}

pub(super) fn result(call_id: String, output: ToolOutput) -> Block {
    Block::ToolResult {
        call_id,
        content: output.content,
        is_error: output.is_error,
        pictures: output.pictures,
    }
}
