//! One run of a turn: the host of core's turn machine (`portal_core::turn_run::TurnRun`). It
//! performs the machine's actions with the server's IO (storage, the model's stream, the summary
//! call, the tools, the turn's event log) and hands back what happened; every decision about
//! the turn is the machine's.
//!
//! A write runs to its end once begun, so the log never lags what storage holds; what the run
//! waits for (a load, the model, a summary, a tool) gives way to a cut-off.

use std::sync::Arc;

use bytes::Bytes;
use futures_util::StreamExt;
use portal_core::prompt::inspect::{DiagnosticView, diagnostics};
use portal_core::prompt::{NoPictures, Prompt};
use portal_core::stream::TurnEvent;
use portal_core::tokens::TokenCounter;
use portal_core::turn_run::{
    Action, CutOff, Load, Loaded, ModelFailure, RunLimits, RunSetup, Start, ToolRun, TurnRun,
    TurnWrite,
};
use portal_core::usage::CallPurpose;
use portal_core::{Transcript, TurnStatus};
use tokio::time::Instant;

use crate::turn_log::{Mark, TurnLog};
use portal_model::summary::read_summary;
use portal_model::{Model, ModelError, ModelStream};
use portal_store::{ConversationId, KeptText, NewCall, Owner, StorageError, TurnRef};
use portal_tools::{KeepFuture, PictureKeeper, ToolCall, ToolContext, unknown_tool};

use super::coalesce::coalesced;
use super::live::CutOffSignal;
use super::{TurnSetup, Turns};

/// Runs the turn from `start` until it ends or pauses; the machine records its status and
/// publishes `turn_end`.
pub(super) async fn run(
    turns: Arc<Turns>,
    at: TurnRef,
    setup: TurnSetup,
    log: Arc<TurnLog>,
    mut cancel: CutOffSignal,
    start: Start,
) {
    let machine = TurnRun::new(
        RunSetup {
            turn: at.turn,
            model: setup.model.capabilities().clone(),
            price: setup.price.clone(),
            instructions: setup.instructions.clone(),
            project_instructions: setup.project_instructions.clone(),
            selected_skills: setup.selected_skills.clone(),
            catalogue: setup.catalogue.clone(),
            agent_tools: setup.tools.agent_tools(),
            effort: setup.effort,
            prompt: turns.prompt.clone(),
            compaction: Default::default(),
            limits: RunLimits::default(),
        },
        Arc::new(ModelTokens(Arc::clone(&setup.model))),
        start,
    );
    let mut host = Host {
        turns: Arc::clone(&turns),
        at: at.clone(),
        setup,
        log,
        clock: Instant::now(),
        mark: None,
        transcript: Arc::default(),
    };
    host.drive(machine, &mut cancel).await;
    turns.live.stopped(&at);
}

/// The model's token counter, shared with the machine.
struct ModelTokens(Arc<dyn Model>);

impl TokenCounter for ModelTokens {
    fn count(&self, text: &str) -> usize {
        self.0.tokens().count(text)
    }
}

/// What one run holds while it performs the machine's actions.
struct Host {
    turns: Arc<Turns>,
    at: TurnRef,
    setup: TurnSetup,
    log: Arc<TurnLog>,
    clock: Instant,
    /// Where the log stood when the model call being streamed began, for its withdrawal.
    mark: Option<Mark>,
    /// The conversation as the latest load read it, which tools read.
    transcript: Arc<Transcript>,
}

/// What a wait ended with.
enum Waited<T> {
    Done(T),
    CutOff(CutOff),
}

impl Host {
    async fn drive(&mut self, mut machine: TurnRun, cancel: &mut CutOffSignal) {
        // The model call being streamed.
        let mut stream: Option<ModelStream> = None;
        loop {
            match machine.poll_action(self.now()) {
                Some(action) => {
                    self.perform(&mut machine, action, &mut stream, cancel)
                        .await
                }
                None if machine.is_finished() => return,
                None => next_model_event(&self.at, &mut machine, &mut stream, cancel).await,
            }
        }
    }

    fn now(&self) -> u64 {
        u64::try_from(self.clock.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    async fn perform(
        &mut self,
        machine: &mut TurnRun,
        action: Action,
        stream: &mut Option<ModelStream>,
        cancel: &mut CutOffSignal,
    ) {
        match action {
            Action::Load(load) => match until_cut_off(cancel, self.load(load)).await {
                Waited::Done(Ok(loaded)) => {
                    self.transcript = Arc::clone(&loaded.transcript);
                    machine.handle_loaded(loaded);
                }
                Waited::Done(Err(error)) => {
                    self.storage_failed("could not be read", &error);
                    machine.handle_load_failed();
                }
                Waited::CutOff(by) => machine.handle_cut_off(by),
            },
            Action::CallModel(prompt) => {
                let turns = Arc::clone(&self.turns);
                let encoding = turns
                    .pictures
                    .encode(&turns.storage, &self.setup.org_id, &prompt);
                match until_cut_off(cancel, encoding).await {
                    Waited::Done(pictures) => {
                        self.mark = Some(self.log.mark());
                        let call = self.setup.model.call(&prompt, &pictures);
                        let found = diagnostics(machine.diagnostics());
                        self.record_call(CallPurpose::Turn, &prompt, call.body.as_ref(), &found)
                            .await;
                        *stream = Some(coalesced(call.stream));
                    }
                    Waited::CutOff(by) => machine.handle_cut_off(by),
                }
            }
            Action::Summarise(request) => {
                let model = Arc::clone(&self.setup.model);
                let prompt = request.prompt();
                let call = model.call(&prompt, &NoPictures);
                self.record_call(CallPurpose::Compaction, &prompt, call.body.as_ref(), &[])
                    .await;
                let summary = read_summary(call.stream, &*model, &request);
                match until_cut_off(cancel, summary).await {
                    Waited::Done(call) => machine.handle_summary(call),
                    Waited::CutOff(by) => machine.handle_cut_off(by),
                }
            }
            Action::Gate(calls) => {
                let gates = calls
                    .iter()
                    .map(
                        |call| match (&call.arguments, self.setup.tools.get(&call.name)) {
                            (Ok(arguments), Some(tool)) => tool.gate(&ToolCall {
                                id: &call.id,
                                name: &call.name,
                                arguments,
                            }),
                            _ => portal_core::reply::Gate::Run,
                        },
                    )
                    .collect();
                machine.handle_gates(gates);
            }
            Action::RunTool(run) => self.run_tool(machine, run, cancel).await,
            Action::Write(write) => {
                if let Err(error) = self.write(&write).await {
                    self.write_failed(&write, &error);
                    machine.handle_write_failed();
                }
            }
            Action::Publish(event) => self.publish(event),
        }
    }

    /// Runs a call with the agent's tools (a tool it is not offered is unknown), until it
    /// answers, its deadline passes or the run is cut off.
    async fn run_tool(&self, machine: &mut TurnRun, run: ToolRun, cancel: &mut CutOffSignal) {
        let context = ToolContext {
            storage: self.turns.storage.clone(),
            org_id: self.setup.org_id.clone(),
            conversation: self.at.conversation.clone(),
            transcript: Arc::clone(&self.transcript),
            pictures: Arc::new(OwnersPictures {
                turns: Arc::clone(&self.turns),
                owner: Owner::new(self.setup.org_id.clone(), self.setup.user_id.clone()),
                conversation: self.at.conversation.clone(),
            }),
        };
        let deadline = machine
            .poll_timeout()
            .map(|ms| self.clock + std::time::Duration::from_millis(ms));
        let tool = self.setup.tools.get(&run.name).cloned();
        let output = async {
            match &tool {
                Some(tool) => {
                    tool.run(
                        ToolCall {
                            id: &run.id,
                            name: &run.name,
                            arguments: &run.arguments,
                        },
                        &context,
                    )
                    .await
                }
                None => unknown_tool(&run.name),
            }
        };
        let timeout = async {
            match deadline {
                Some(deadline) => tokio::time::sleep_until(deadline).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            by = cut_off(cancel) => machine.handle_cut_off(by),
            output = output => machine.handle_tool_output(output),
            () = timeout => machine.handle_timeout(self.now()),
        }
    }

    /// Keeps the call about to be made, for the prompt inspector: its prompt and the body the
    /// model sends. A call that cannot be kept is made all the same; the inspector then lacks it.
    async fn record_call(
        &self,
        purpose: CallPurpose,
        prompt: &Prompt,
        body: Option<&Bytes>,
        found: &[DiagnosticView],
    ) {
        let written = serde_json::to_string(prompt)
            .and_then(|prompt| Ok((prompt, serde_json::to_string(found)?)));
        let (prompt, diagnostics) = match written {
            Ok(json) => json,
            Err(error) => {
                tracing::warn!("a model call's prompt could not be written as JSON: {error}");
                return;
            }
        };
        let call = NewCall {
            purpose,
            model: self.setup.model.capabilities().id.clone(),
            prompt: KeptText::bounded(prompt),
            body: body.map(|b| KeptText::bounded(String::from_utf8_lossy(b).into_owned())),
            diagnostics,
        };
        let kept = self
            .turns
            .storage
            .record_call(&self.at.conversation, self.at.turn, call)
            .await;
        if let Err(error) = kept {
            self.storage_failed("could not keep a model call for the inspector", &error);
        }
    }

    async fn load(&self, load: Load) -> Result<Loaded, StorageError> {
        let storage = &self.turns.storage;
        let (org_id, conversation) = (&self.setup.org_id, &self.at.conversation);
        Ok(match load {
            Load::Recent { max_turns } => {
                let recent = storage.load_recent(org_id, conversation, max_turns).await?;
                Loaded {
                    transcript: Arc::new(recent.transcript),
                    newest_compaction: recent.newest_compaction,
                }
            }
            Load::Whole => Loaded {
                transcript: Arc::new(storage.load_transcript(org_id, conversation).await?),
                newest_compaction: None,
            },
        })
    }

    /// Performs one write; a message or block that storage placed elsewhere than the machine
    /// said is an error too.
    async fn write(&self, write: &TurnWrite) -> Result<(), StorageError> {
        let storage = &self.turns.storage;
        let (conversation, turn) = (&self.at.conversation, self.at.turn);
        let placed = |what: &'static str, expected: usize, got: usize| {
            if expected == got {
                Ok(())
            } else {
                Err(StorageError::Unreadable {
                    what,
                    detail: format!(
                        "storage placed it at {got} where the turn's run expected {expected}"
                    ),
                })
            }
        };
        match write {
            TurnWrite::Message { role, at } => {
                let got = storage.append_message(conversation, turn, *role).await?;
                placed("message", *at, got)
            }
            TurnWrite::Block { message, at, block } => {
                let got = storage
                    .append_block(conversation, turn, *message, block)
                    .await?;
                placed("block", *at, got)
            }
            TurnWrite::Text {
                message,
                block,
                text,
            } => {
                storage
                    .append_block_text(conversation, turn, *message, *block, text)
                    .await
            }
            TurnWrite::Withdraw { message, from } => {
                storage
                    .withdraw_blocks(conversation, turn, *message, *from)
                    .await
            }
            TurnWrite::Trace(entry) => storage.add_trace(conversation, turn, entry).await,
            TurnWrite::Usage(usage) => storage.record_usage(conversation, turn, usage).await,
            TurnWrite::Status(status) => storage.set_turn_status(conversation, turn, *status).await,
        }
    }

    fn publish(&mut self, event: TurnEvent) {
        match event {
            TurnEvent::Withdrawn { .. } => match self.mark.take() {
                Some(mark) => self.log.withdraw(mark, event),
                None => self.log.push(event),
            },
            TurnEvent::TurnEnd {
                status: TurnStatus::Failed,
                reason: Some(ref reason),
            } => {
                tracing::warn!(
                    "turn {} of conversation {} failed: {reason}",
                    self.at.turn,
                    self.at.conversation
                );
                self.log.push(event);
            }
            event => self.log.push(event),
        }
    }

    fn write_failed(&self, write: &TurnWrite, error: &StorageError) {
        match write {
            TurnWrite::Status(status) => tracing::error!(
                "turn {} of conversation {} could not be recorded {status}: {error}; it is \
                 recorded failed instead, or, should that fail too, stays running until it is \
                 cancelled or the server restarts",
                self.at.turn,
                self.at.conversation
            ),
            TurnWrite::Trace(_) => self.storage_failed("could not keep a trace entry", error),
            _ => self.storage_failed("could not be written", error),
        }
    }

    fn storage_failed(&self, what: &str, error: &StorageError) {
        tracing::warn!(
            "turn {} of conversation {} {what}: {error}",
            self.at.turn,
            self.at.conversation
        );
    }
}

/// Hands the machine the next event of the model's stream, or its end.
async fn next_model_event(
    at: &TurnRef,
    machine: &mut TurnRun,
    stream: &mut Option<ModelStream>,
    cancel: &mut CutOffSignal,
) {
    let Some(events) = stream.as_mut() else {
        machine.handle_model_end();
        return;
    };
    let next = tokio::select! {
        biased;
        by = cut_off(cancel) => Waited::CutOff(by),
        next = events.next() => Waited::Done(next),
    };
    match next {
        Waited::Done(Some(Ok(event))) => machine.handle_model_event(event),
        Waited::Done(Some(Err(ModelError::ContextOverflow { .. }))) => {
            *stream = None;
            machine.handle_model_failure(ModelFailure::Overflow);
        }
        Waited::Done(Some(Err(error))) => {
            tracing::warn!(
                "turn {} of conversation {}: the model failed: {error}",
                at.turn,
                at.conversation
            );
            *stream = None;
            machine.handle_model_failure(ModelFailure::Failed {
                reason: error.reason(),
                detail: error.to_string(),
            });
        }
        Waited::Done(None) => {
            *stream = None;
            machine.handle_model_end();
        }
        Waited::CutOff(by) => {
            *stream = None;
            machine.handle_cut_off(by);
        }
    }
}

/// Waits for `work` unless the run is cut off first.
async fn until_cut_off<T>(cancel: &mut CutOffSignal, work: impl Future<Output = T>) -> Waited<T> {
    tokio::select! {
        biased;
        by = cut_off(cancel) => Waited::CutOff(by),
        done = work => Waited::Done(done),
    }
}

/// Who cut the run off, once someone has; never, when no one can any more.
async fn cut_off(cancel: &mut CutOffSignal) -> CutOff {
    let by = cancel.wait_for(Option::is_some).await.map(|by| *by);
    match by {
        Ok(by) => by.unwrap_or(CutOff::User),
        Err(_) => std::future::pending().await,
    }
}

/// Keeps the pictures a turn's tools answer with as picture attachments of the conversation's
/// owner, linked to the conversation (docs/decisions.md, "Pictures from tools").
#[derive(Debug)]
struct OwnersPictures {
    turns: Arc<Turns>,
    owner: Owner,
    conversation: ConversationId,
}

impl PictureKeeper for OwnersPictures {
    fn keep(&self, filename: String, bytes: Vec<u8>) -> KeepFuture<'_> {
        Box::pin(self.turns.pictures.keep(
            &self.turns.storage,
            self.owner.clone(),
            self.conversation.clone(),
            filename,
            bytes,
        ))
    }
}
