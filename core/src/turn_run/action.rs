//! What a run asks its host to do, and what the host tells it besides answers.

use serde_json::Value;

use crate::compaction::SummaryRequest;
use crate::prompt::Prompt;
use crate::reply::Call;
use crate::stream::TurnEvent;
use crate::usage::Usage;

use super::Load;
use crate::{Block, Role, TraceEntry, TurnStatus};

/// One call a tool is to run, its arguments a JSON object.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolRun {
    pub id: String,
    pub name: String,
    pub arguments: Value,
}

/// What the host does next.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Read this and answer with [`TurnRun::handle_loaded`](super::TurnRun::handle_loaded).
    Load(Load),
    /// Call the turn's model with this prompt and hand in its stream: each event
    /// ([`TurnRun::handle_model_event`](super::TurnRun::handle_model_event)), a failure ([`TurnRun::handle_model_failure`](super::TurnRun::handle_model_failure)) or its
    /// end ([`TurnRun::handle_model_end`](super::TurnRun::handle_model_end)). What the call writes from here on may be withdrawn:
    /// a `withdrawn` event published later takes the stream back to where this call began.
    CallModel(Box<Prompt>),
    /// Make this summary call on the turn's model and answer with
    /// [`TurnRun::handle_summary`](super::TurnRun::handle_summary).
    Summarise(Box<SummaryRequest>),
    /// Ask each call's tool how it takes the call and answer with [`TurnRun::handle_gates`](super::TurnRun::handle_gates), in
    /// the same order.
    Gate(Vec<Call>),
    /// Run this call and answer with [`TurnRun::handle_tool_output`](super::TurnRun::handle_tool_output); a call to a tool the agent
    /// is not offered is answered as unknown.
    RunTool(ToolRun),
    /// Write this to the turn in storage.
    Write(TurnWrite),
    /// Publish this event on the turn's stream.
    Publish(TurnEvent),
}

/// One write to the running turn in storage.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnWrite {
    /// Start a message with `role`; storage places it `at` (taking the last message again when
    /// it has no block yet).
    Message { role: Role, at: usize },
    /// Add a block to `message`; storage places it `at`.
    Block {
        message: usize,
        at: usize,
        block: Block,
    },
    /// Append streamed text to a text or thinking block.
    Text {
        message: usize,
        block: usize,
        text: String,
    },
    /// Remove the blocks of `message` from `from` on (rule C2).
    Withdraw { message: usize, from: usize },
    /// Keep an entry in the turn's trace. A note of why the turn ended that cannot be written
    /// leaves the turn to end all the same.
    Trace(TraceEntry),
    /// Leave a usage row (rule C11).
    Usage(Usage),
    /// Record the turn's status.
    Status(TurnStatus),
}

/// How a model call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelFailure {
    /// The call's input did not fit the model's context window (rule C2).
    Overflow,
    /// Anything else: `reason` is what the person is told, without what the endpoint sent;
    /// `detail` is the whole error, which a summary's trace keeps.
    Failed { reason: String, detail: String },
}

/// Who cuts a running turn off before it ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CutOff {
    /// Its user (Stop, or a cancel through the API).
    User,
    /// The server, stopping: the grace it gives running turns is over (rule D2).
    Shutdown,
}
