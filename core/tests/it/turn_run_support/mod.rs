//! A whole turn on simulated time: the turn machine driven against an in-memory store, a
//! scripted model, scripted summaries, tools and a virtual clock, with no IO and no sleeping
//! (like quinn-proto's test pair). Each run is written down line by line, what the machine asked
//! and what it published, for golden files; the store is checked against the events after.

#![allow(dead_code)]

use std::collections::{HashMap, VecDeque};
use std::fmt::Write as _;
use std::sync::Arc;

use portal_core::compaction::{SummaryReader, newest_compaction, record_context_size};
use portal_core::model::{BadArguments, FinishReason, ModelCapabilities, Provider};
use portal_core::prompt::{Entry, PromptConfig};
use portal_core::reply::{Call, Gate};
use portal_core::stream::TurnEvent;
use portal_core::tokens::EstimateCounter;
use portal_core::tools::ToolOutput;
use portal_core::turn_run::{
    Action, CutOff, Load, Loaded, ModelFailure, RunLimits, RunSetup, Start, TurnRun, TurnWrite,
};
use portal_core::usage::{Price, Tokens, Usage};
use portal_core::{
    Block, CompactionState, Message, Role, TraceEntry, Transcript, Turn, TurnKind, TurnState,
    TurnStatus,
};
use serde_json::{Value, json};

pub use portal_core::model::ModelEvent;

/// The model's window in the simulations.
pub const WINDOW: u64 = 100_000;

/// One step of a model call's stream.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Event(ModelEvent),
    /// The call overflows the window (rule C2).
    Overflow,
    /// The call fails.
    Fail,
    /// The user presses Stop while the call streams.
    Stop,
    /// The server's grace ends while the call streams.
    Shutdown,
}

/// What the simulated tools do, by name: `slow` never answers, `stop` waits until the user
/// stops the turn, anything else answers with its arguments.
pub fn tool_output(name: &str, arguments: &Value) -> Option<ToolOutput> {
    match name {
        "slow" | "stop" => None,
        "broken" => Some(ToolOutput::error("the tool broke")),
        _ => Some(ToolOutput::ok(format!("{name} did {arguments}"))),
    }
}

/// How the simulated tools take a call: `publish_note` asks for approval, `ask_user` asks a
/// question, the others run.
pub fn gate(call: &Call) -> Gate {
    let argument = |key: &str| {
        call.arguments
            .as_ref()
            .ok()
            .and_then(|a| a.get(key))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    match call.name.as_str() {
        "publish_note" => Gate::Approval {
            summary: format!("Publish the note “{}”", argument("title")),
        },
        "ask_user" => Gate::Clarification {
            question: argument("question"),
        },
        _ => Gate::Run,
    }
}

/// A text reply that ends a call.
pub fn says(text: &str) -> Vec<Step> {
    vec![
        Step::Event(ModelEvent::TextDelta(text.into())),
        Step::Event(ModelEvent::Usage(Tokens::reported(1_000, 20))),
        Step::Event(ModelEvent::Finished {
            reason: FinishReason::Stop,
        }),
    ]
}

/// A reply with text and then calls, each `(name, arguments)`.
pub fn calls(text: &str, calls: &[(&str, Value)]) -> Vec<Step> {
    let mut steps = Vec::new();
    if !text.is_empty() {
        steps.push(Step::Event(ModelEvent::TextDelta(text.into())));
    }
    for (index, (name, arguments)) in calls.iter().enumerate() {
        steps.push(Step::Event(ModelEvent::ToolCallEnd {
            index: index as u32,
            id: Some(format!("provider_{index}")),
            name: (*name).into(),
            arguments: Ok(arguments.clone()),
        }));
    }
    steps.push(Step::Event(ModelEvent::Finished {
        reason: FinishReason::ToolCalls,
    }));
    steps
}

/// A call whose arguments are not a JSON object.
pub fn bad_call(name: &str, raw: &str) -> Step {
    Step::Event(ModelEvent::ToolCallEnd {
        index: 0,
        id: None,
        name: name.into(),
        arguments: Err(BadArguments {
            raw: raw.into(),
            reason: "they are a JSON string".into(),
        }),
    })
}

/// A summary call's answer as the model streams it.
pub fn summary(text: &str) -> Vec<ModelEvent> {
    vec![
        ModelEvent::TextDelta(text.into()),
        ModelEvent::Finished {
            reason: FinishReason::Stop,
        },
    ]
}

/// A well-formed summary.
pub fn good_summary() -> Vec<ModelEvent> {
    summary(
        "## Goal\nThe Lisbon budget.\n## Facts\n- The budget is 40,000 euros.\n## Work done\n- \
         Drafted the plan.\n## Open items\n- None.",
    )
}

/// A summary call cut off at the model's output limit.
pub fn cut_summary() -> Vec<ModelEvent> {
    vec![
        ModelEvent::TextDelta("## Goal\nThe Lis".into()),
        ModelEvent::Finished {
            reason: FinishReason::Length,
        },
    ]
}

/// `n` finished exchanges, each with `words` words a side, the last reporting `context` input
/// tokens when given.
pub fn history(n: u32, words: usize, context: Option<u64>) -> Transcript {
    let mut transcript = Transcript::new();
    for index in 1..=n {
        let text = |who: &str| format!("{who} {index}: {}", "budget ".repeat(words));
        transcript.turns.push(Turn {
            index,
            kind: TurnKind::Chat,
            status: TurnStatus::Completed,
            effort: None,
            context_tokens: if index == n { context } else { None },
            trace: Vec::new(),
            messages: vec![
                Message::new(Role::User, vec![Block::text(text("Request"))]),
                Message::new(Role::Assistant, vec![Block::text(text("Answer"))]),
            ],
        });
    }
    transcript
}

/// `transcript` with a new running turn opened by `text`.
pub fn open(mut transcript: Transcript, kind: TurnKind, text: &str) -> Transcript {
    let index = transcript.turns.len() as u32 + 1;
    transcript.turns.push(Turn {
        index,
        kind,
        status: TurnStatus::Running,
        effort: None,
        context_tokens: None,
        trace: Vec::new(),
        messages: vec![Message::new(Role::User, vec![Block::text(text)])],
    });
    transcript
}

/// The simulated model's capabilities.
pub fn model() -> ModelCapabilities {
    ModelCapabilities {
        id: "sim".into(),
        provider: Provider::OpenAi,
        context_window: WINDOW,
        max_output_tokens: 4_096,
        can_reason: false,
        can_see: false,
        largest_picture: None,
    }
}

/// What the simulated runs are made with.
pub fn setup(turn: u32, limits: RunLimits) -> RunSetup {
    RunSetup {
        turn,
        model: model(),
        price: Some(Price::per_million("USD", 2.0, Some(0.5), 8.0).expect("a valid price")),
        instructions: "Answer briefly.".into(),
        project_instructions: String::new(),
        selected_skills: Vec::new(),
        catalogue: Vec::new(),
        agent_tools: Vec::new(),
        effort: portal_core::effort::Effort::Medium,
        prompt: PromptConfig::default(),
        compaction: Default::default(),
        limits,
    }
}

/// One simulated turn: the store, the scripts, the clock and what happened.
pub struct Sim {
    pub store: Transcript,
    pub usage: Vec<Usage>,
    /// The model's calls, each a script of steps, in order.
    pub replies: VecDeque<Vec<Step>>,
    pub summaries: VecDeque<Vec<ModelEvent>>,
    /// Writes that fail: the kind (`status`, `block`, …) and how many of that kind succeed first.
    pub failing: Vec<(&'static str, usize)>,
    pub limits: RunLimits,
    pub now: u64,
    /// Every line of every run, for the golden file.
    pub lines: Vec<String>,
    /// The events of every run, in order.
    pub events: Vec<TurnEvent>,
    writes: HashMap<&'static str, usize>,
    /// Whether a status write failed: the turn may then be left running in the store, as a
    /// database that refuses every write would leave it (recovery cuts it off later).
    status_failed: bool,
    /// Whether a note of why the turn ended failed: a stored turn without one gives the
    /// generic reason.
    note_failed: bool,
}

impl Sim {
    pub fn new(store: Transcript) -> Self {
        Sim {
            store,
            usage: Vec::new(),
            replies: VecDeque::new(),
            summaries: VecDeque::new(),
            failing: Vec::new(),
            limits: RunLimits::default(),
            now: 0,
            lines: Vec::new(),
            events: Vec::new(),
            writes: HashMap::new(),
            status_failed: false,
            note_failed: false,
        }
    }

    pub fn reply(mut self, steps: Vec<Step>) -> Self {
        self.replies.push_back(steps);
        self
    }

    pub fn summary(mut self, events: Vec<ModelEvent>) -> Self {
        self.summaries.push_back(events);
        self
    }

    /// The running or paused turn: the store's last.
    pub fn turn(&self) -> &Turn {
        self.store.turns.last().expect("a turn")
    }

    fn turn_mut(&mut self) -> &mut Turn {
        self.store.turns.last_mut().expect("a turn")
    }

    /// Runs the last turn from `start` until it ends or pauses; returns how it stopped.
    pub fn run(&mut self, start: Start) -> TurnStatus {
        let turn = self.turn().index;
        if self.turn().status == TurnStatus::Paused {
            self.turn_mut().status = TurnStatus::Running;
        }
        self.lines
            .push(format!("== run from {}", describe_start(&start)));
        let mut run = TurnRun::new(setup(turn, self.limits), Arc::new(EstimateCounter), start);
        let mut stream: Option<VecDeque<Step>> = None;
        // Bounded so that a machine that loops fails the test instead of hanging it.
        for _ in 0..100_000 {
            match run.poll_action(self.now) {
                Some(action) => self.perform(&mut run, action, &mut stream),
                None if run.is_finished() => return self.turn().status,
                None => {
                    self.now += 50;
                    let step = stream.as_mut().and_then(VecDeque::pop_front);
                    match step {
                        Some(Step::Event(event)) => run.handle_model_event(event),
                        Some(Step::Overflow) => {
                            self.lines.push("   model: overflow".into());
                            run.handle_model_failure(ModelFailure::Overflow);
                        }
                        Some(Step::Fail) => {
                            self.lines.push("   model: fails".into());
                            run.handle_model_failure(ModelFailure::Failed {
                                reason: "the model failed while answering; send the message \
                                         again"
                                    .into(),
                                detail: "HTTP 502 from the endpoint".into(),
                            });
                        }
                        Some(Step::Stop) => {
                            self.lines.push("   user: stop".into());
                            run.handle_cut_off(CutOff::User);
                        }
                        Some(Step::Shutdown) => {
                            self.lines.push("   server: stopping".into());
                            run.handle_cut_off(CutOff::Shutdown);
                        }
                        None => {
                            self.lines.push("   model: stream ends".into());
                            run.handle_model_end();
                        }
                    }
                }
            }
        }
        panic!("the run did not end: {run:?}");
    }

    fn perform(&mut self, run: &mut TurnRun, action: Action, stream: &mut Option<VecDeque<Step>>) {
        match action {
            Action::Load(load) => {
                let transcript = match load {
                    Load::Recent { max_turns } => {
                        self.lines.push(format!("-> load recent {max_turns}"));
                        recent(&self.store, max_turns)
                    }
                    Load::Whole => {
                        self.lines.push("-> load whole".into());
                        self.store.clone()
                    }
                };
                let newest_compaction = match load {
                    Load::Recent { .. } => newest_compaction(&transcript).map(|n| n.position.turn),
                    Load::Whole => None,
                };
                run.handle_loaded(Loaded {
                    transcript: Arc::new(transcript),
                    newest_compaction,
                });
            }
            Action::CallModel(prompt) => {
                let last = prompt
                    .entries
                    .last()
                    .map(describe_entry)
                    .unwrap_or_default();
                self.lines.push(format!(
                    "-> call model: {} entries, the last {last}",
                    prompt.entries.len()
                ));
                *stream = Some(self.replies.pop_front().unwrap_or_default().into());
            }
            Action::Summarise(request) => {
                self.lines.push("-> summarise".into());
                self.now += 3_000;
                let mut reader = SummaryReader::default();
                for event in self.summaries.pop_front().unwrap_or_default() {
                    if reader.event(event) {
                        break;
                    }
                }
                run.handle_summary(reader.finish(&request, "sim", &EstimateCounter));
            }
            Action::Gate(calls) => {
                let gates: Vec<Gate> = calls.iter().map(gate).collect();
                let names: Vec<String> = calls
                    .iter()
                    .zip(&gates)
                    .map(|(call, gate)| format!("{} {} {gate:?}", call.id, call.name))
                    .collect();
                self.lines.push(format!("-> gate [{}]", names.join("; ")));
                run.handle_gates(gates);
            }
            Action::RunTool(tool) => {
                self.lines.push(format!(
                    "-> run {} {} {}",
                    tool.id, tool.name, tool.arguments
                ));
                match tool_output(&tool.name, &tool.arguments) {
                    Some(output) => {
                        self.now += 200;
                        run.handle_tool_output(output);
                    }
                    None if tool.name == "stop" => {
                        self.now += 1_000;
                        self.lines.push("   user: stop".into());
                        run.handle_cut_off(CutOff::User);
                    }
                    None => {
                        let deadline = run.poll_timeout().expect("a deadline");
                        self.now = deadline;
                        self.lines.push(format!("   clock: {} ms", self.now));
                        run.handle_timeout(self.now);
                    }
                }
            }
            Action::Write(write) => {
                let line = describe_write(&write);
                if self.fails(&write) {
                    self.status_failed |= matches!(write, TurnWrite::Status(_));
                    self.note_failed |= matches!(
                        write,
                        TurnWrite::Trace(
                            TraceEntry::TurnFailed { .. } | TraceEntry::TurnCutOff { .. }
                        )
                    );
                    self.lines.push(format!("   write fails: {line}"));
                    run.handle_write_failed();
                } else {
                    self.lines.push(format!("   write {line}"));
                    if let Err(why) = self.apply(write) {
                        self.lines.push(format!("   store refuses: {why}"));
                        run.handle_write_failed();
                    }
                }
            }
            Action::Publish(event) => {
                self.lines.push(format!(
                    "   event {}",
                    serde_json::to_string(&event).expect("JSON")
                ));
                self.events.push(event);
            }
        }
    }

    fn fails(&mut self, write: &TurnWrite) -> bool {
        let kind = kind(write);
        let count = self.writes.entry(kind).or_default();
        *count += 1;
        self.failing
            .iter()
            .any(|(failing, after)| *failing == kind && *count > *after)
    }

    /// Makes a write as the database's rules do, or says why they refuse it.
    fn apply(&mut self, write: TurnWrite) -> Result<(), String> {
        let turn = self.turn_mut();
        if turn.status != TurnStatus::Running {
            return Err(format!("the turn is {:?}", turn.status));
        }
        match write {
            TurnWrite::Message { role, at } => {
                let placed = match turn.messages.last_mut() {
                    Some(last) if last.blocks.is_empty() => {
                        last.role = role;
                        turn.messages.len() - 1
                    }
                    _ => {
                        turn.messages.push(Message::new(role, Vec::new()));
                        turn.messages.len() - 1
                    }
                };
                if placed != at {
                    return Err(format!("message placed at {placed}, not {at}"));
                }
            }
            TurnWrite::Block { message, at, block } => {
                let m = turn.messages.get_mut(message).ok_or("no such message")?;
                if m.blocks.len() != at {
                    return Err(format!("block placed at {}, not {at}", m.blocks.len()));
                }
                m.blocks.push(block);
            }
            TurnWrite::Text {
                message,
                block,
                text,
            } => match turn
                .messages
                .get_mut(message)
                .and_then(|m| m.blocks.get_mut(block))
            {
                Some(Block::Text { text: stored } | Block::Thinking { text: stored }) => {
                    stored.push_str(&text)
                }
                _ => return Err("no text block there".into()),
            },
            TurnWrite::Withdraw { message, from } => {
                let m = turn.messages.get_mut(message).ok_or("no such message")?;
                m.blocks.truncate(from);
            }
            TurnWrite::Trace(entry) => turn.trace.push(entry),
            TurnWrite::Usage(usage) => {
                record_context_size(turn, usage.purpose, usage.tokens.input);
                self.usage.push(usage);
            }
            TurnWrite::Status(status) => turn.status = status,
        }
        Ok(())
    }

    /// The golden file's text: every line of every run, then the turn as stored.
    pub fn golden(&self) -> String {
        let mut out = self.lines.join("\n");
        let turn = self.turn();
        let _ = write!(out, "\n== stored: {:?}", turn.status);
        for (m, message) in turn.messages.iter().enumerate() {
            let blocks: Vec<String> = message.blocks.iter().map(describe_block).collect();
            let _ = write!(out, "\n   {m} {:?}: {}", message.role, blocks.join(" | "));
        }
        for entry in &turn.trace {
            let _ = write!(out, "\n   trace {}", describe_trace(entry));
        }
        for usage in &self.usage {
            let _ = write!(out, "\n   usage {}", describe_usage(usage));
        }
        out.push('\n');
        out
    }

    /// The checks every run must pass, whatever happened in it: the store folds to the state
    /// the events folded to, no call is answered twice, and an ended turn answered every call.
    pub fn check(&self) {
        let turn = self.turn();
        let user_text = match turn.messages.first().and_then(|m| m.blocks.first()) {
            Some(Block::Text { text }) => text.clone(),
            _ => String::new(),
        };
        let mut live = TurnState::opened(turn.index, user_text);
        for event in &self.events {
            live.apply(event);
        }
        let mut replayed = TurnState::opened(turn.index, "");
        replayed.user_text = live.user_text.clone();
        for event in portal_core::turn_run::replay(turn) {
            replayed.apply(&event);
        }
        // A summary that failed shows as a failed divider while the turn streams; storage keeps
        // it as a trace entry only (rule C5).
        let kept: Vec<_> = live
            .blocks
            .iter()
            .filter(|b| b.compaction != Some(CompactionState::Failed))
            .cloned()
            .collect();
        assert_eq!(kept, replayed.blocks, "the events fold to the stored turn");
        if !self.status_failed {
            assert_eq!(live.status, replayed.status, "the same status");
        }
        if !self.status_failed && !self.note_failed {
            assert_eq!(live.end_reason, replayed.end_reason, "the same reason");
        }
        assert_eq!(
            TurnState::stored(turn).blocks,
            kept,
            "the stored turn as drawn"
        );
        let mut answered: HashMap<&str, usize> = HashMap::new();
        for block in turn.messages.iter().flat_map(|m| &m.blocks) {
            if let Block::ToolResult { call_id, .. } = block {
                *answered.entry(call_id).or_default() += 1;
            }
        }
        assert!(
            answered.values().all(|&n| n == 1),
            "a call answered twice: {answered:?}"
        );
        if turn.status == TurnStatus::Completed {
            for block in turn.messages.iter().flat_map(|m| &m.blocks) {
                if let Block::ToolUse { id, .. } = block {
                    assert!(answered.contains_key(id.as_str()), "call {id} unanswered");
                }
            }
        }
        if !self.status_failed {
            assert_ne!(turn.status, TurnStatus::Running, "the run left it running");
        }
    }
}

/// Memory's part of the store: its last `max_turns` turns, with the running one.
fn recent(store: &Transcript, max_turns: usize) -> Transcript {
    let mut transcript = store.clone();
    let keep = max_turns + 1;
    if transcript.turns.len() > keep {
        let newest = newest_compaction(store).map(|n| n.position.turn);
        let from = transcript.turns.len() - keep;
        let tail: Vec<Turn> = transcript.turns.split_off(from);
        transcript.turns = transcript
            .turns
            .into_iter()
            .filter(|t| Some(t.index) == newest)
            .chain(tail)
            .collect();
    }
    transcript
}

fn kind(write: &TurnWrite) -> &'static str {
    match write {
        TurnWrite::Message { .. } => "message",
        TurnWrite::Block { .. } => "block",
        TurnWrite::Text { .. } => "text",
        TurnWrite::Withdraw { .. } => "withdraw",
        TurnWrite::Trace(_) => "trace",
        TurnWrite::Usage(_) => "usage",
        TurnWrite::Status(_) => "status",
    }
}

fn describe_start(start: &Start) -> String {
    match start {
        Start::Fresh => "the start".into(),
        Start::Decided(decisions) => {
            let mut decisions: Vec<String> = decisions
                .iter()
                .map(|(id, approved)| {
                    format!("{id} {}", if *approved { "approved" } else { "declined" })
                })
                .collect();
            decisions.sort();
            format!("decisions: {}", decisions.join(", "))
        }
        Start::Answered(text) => format!("an answer: {text}"),
    }
}

fn describe_write(write: &TurnWrite) -> String {
    match write {
        TurnWrite::Message { role, at } => format!("message {at} {role:?}"),
        TurnWrite::Block { message, at, block } => {
            format!("block {message}.{at} {}", describe_block(block))
        }
        TurnWrite::Text {
            message,
            block,
            text,
        } => format!("text {message}.{block} {text:?}"),
        TurnWrite::Withdraw { message, from } => format!("withdraw {message}.{from}.."),
        TurnWrite::Trace(entry) => format!("trace {}", describe_trace(entry)),
        TurnWrite::Usage(usage) => format!("usage {}", describe_usage(usage)),
        TurnWrite::Status(status) => format!("status {status:?}"),
    }
}

fn describe_usage(usage: &Usage) -> String {
    format!(
        "{} {} in, {} out{}, {}",
        usage.purpose.as_str(),
        usage.tokens.input,
        usage.tokens.output,
        if usage.tokens.estimated {
            " (estimated)"
        } else {
            ""
        },
        usage.cost().map_or("unpriced".into(), |c| c.display())
    )
}

fn describe_block(block: &Block) -> String {
    match block {
        Block::Text { text } => format!("text {text:?}"),
        Block::Thinking { text } => format!("thinking {text:?}"),
        Block::ToolUse { id, name, input } => format!("call {id} {name} {input}"),
        Block::ToolResult {
            call_id,
            content,
            is_error,
            ..
        } => format!(
            "result {call_id}{} {content:?}",
            if *is_error { " error" } else { "" }
        ),
        Block::ApprovalRequest { call_id, summary } => format!("approval {call_id} {summary:?}"),
        Block::ClarificationRequest { id, question } => format!("question {id} {question:?}"),
        Block::Compaction {
            trigger, covers, ..
        } => format!(
            "compaction {trigger:?} covering {}–{}",
            covers.first, covers.last
        ),
    }
}

fn describe_trace(entry: &TraceEntry) -> String {
    serde_json::to_string(entry).expect("JSON")
}

fn describe_entry(entry: &Entry) -> String {
    let text = serde_json::to_string(entry).expect("JSON");
    let short: String = text.chars().take(90).collect();
    if short.len() < text.len() {
        format!("{short}…")
    } else {
        short
    }
}

pub fn note(title: &str) -> (&'static str, Value) {
    ("publish_note", json!({ "title": title }))
}

pub fn question(text: &str) -> (&'static str, Value) {
    ("ask_user", json!({ "question": text }))
}

pub fn count(text: &str) -> (&'static str, Value) {
    ("count", json!({ "text": text }))
}
