//! A turn as a front end draws it: its blocks by message, its status, what it waits for, its
//! failed compactions and why it failed. Folded from the turn's events as they stream
//! ([`TurnState::apply`]) or read from the stored turn ([`TurnState::stored`]); both give the same
//! state for the same turn, so a settled reply and a reloaded one are drawn alike (rule R10).
//!
//! A running turn read from storage goes on from there ([`TurnState::resumed`]): its events,
//! read again from the turn's start, add only what the stored turn did not hold yet, so a page
//! opened mid-reply draws what was stored at once and plays out the rest.
//!
//! A model call's output withdrawn after a context overflow (rule C2) is dropped: it is always
//! the turn's last blocks. A turn resumed from storage after the withdrawal holds the retry's
//! compaction in their place, and the events read again no longer carry what was withdrawn (the
//! server's log drops it), so there the withdrawal changes nothing.

use crate::block::{Block, BlockKind, ToolPicture};
use crate::compaction::{Divider, divider};
use crate::reply::paused_after;
use crate::stream::{CallHeader, TurnEvent, call_header, event_text, pictures};
use crate::transcript::{Awaiting, Role, Turn, TurnStatus};

/// A turn's drawn state.
#[derive(Debug, Clone)]
pub struct TurnState {
    /// The turn's number (1-based).
    pub index: u32,
    pub status: TurnStatus,
    /// The text of the message that opened the turn.
    pub user_text: String,
    /// The blocks of the turn's assistant and tool messages, in order. The user's messages (the
    /// one that opened the turn and answers to its questions) are not among them.
    pub blocks: Vec<BlockState>,
    /// Every message of the turn met so far with its role, by position.
    pub messages: Vec<Role>,
    /// The person's answers to the turn's questions: its user messages after the one that opened
    /// it, in order.
    pub answers: Vec<PersonAnswer>,
    /// How many compactions failed in this turn: each was dropped with nothing committed (C5).
    pub failed_compactions: usize,
    /// Why the turn failed or the runtime cut it off, once it has (its `turn_end`'s reason).
    pub end_reason: Option<String>,
    /// A compaction read again in a resumed turn that failed where a stored block now stands:
    /// its end is not that block's.
    replayed_compaction: Option<(usize, usize)>,
    /// The pauses of a turn read from storage whose `turn_end`s its events bring again when it
    /// is followed from its start: each is already drawn, and changes nothing.
    pauses_held: usize,
    /// Calls the person decided here while the turn paused on them, before the server's answer
    /// came: call id and whether it was approved.
    decided: Vec<(String, bool)>,
}

/// Two states are equal when they draw the same: what a state keeps only to fold the events
/// still to come (a stored turn's pauses, decisions made here) is not compared, so a streamed
/// turn folds to the state of the stored one (R10).
impl PartialEq for TurnState {
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index
            && self.status == other.status
            && self.user_text == other.user_text
            && self.blocks == other.blocks
            && self.messages == other.messages
            && self.answers == other.answers
            && self.failed_compactions == other.failed_compactions
            && self.end_reason == other.end_reason
            && self.replayed_compaction == other.replayed_compaction
    }
}

/// The person's answer to a question of the turn: the user message at `message`, its text.
#[derive(Debug, Clone)]
pub struct PersonAnswer {
    pub message: usize,
    pub text: String,
    /// How many bytes of `text` the turn's events have brought (below `text.len()` only while a
    /// turn read from storage is followed again from its start).
    streamed: usize,
}

/// Two answers are equal when they say the same at the same place, however their text came.
impl PartialEq for PersonAnswer {
    fn eq(&self, other: &Self) -> bool {
        self.message == other.message && self.text == other.text
    }
}

/// One block as drawn.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockState {
    /// Where the block sits in the turn: its message and its place in the message.
    pub message: usize,
    pub block: usize,
    pub kind: BlockKind,
    /// For a tool use, its call; for an approval request, the call it asks approval for.
    pub call: Option<CallHeader>,
    /// The block's text as it has arrived: a text's or thinking's prose, a call's arguments as
    /// JSON, a result's content, a question, an approval's summary.
    pub text: String,
    /// Whether the block is whole: nothing more will arrive for it.
    pub ended: bool,
    /// For a compaction block: where its summary stands.
    pub compaction: Option<CompactionState>,
    /// For a tool result: whether it reports an error (the call failed, or did not run).
    pub is_error: bool,
    /// For a tool result: the pictures it answered with.
    pub pictures: Vec<ToolPicture>,
    /// How many bytes of `text` the turn's events have brought. Below `text.len()` only in a
    /// turn [`TurnState::resumed`] from storage, whose events bring again what was stored.
    streamed: usize,
}

/// A compaction block's summary.
#[derive(Debug, Clone, PartialEq)]
pub enum CompactionState {
    /// Being written (R11).
    Writing,
    /// Written: the divider it is drawn as (R12).
    Written(Divider),
    /// Failed before it was committed: nothing is drawn (C5).
    Failed,
}

/// What one event changed, for a front end to mirror in its view.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// Nothing: a message start, or an event already folded (a resumed turn followed again).
    Nothing,
    /// Block `at` (a place in [`TurnState::blocks`]) began.
    Started { at: usize },
    /// Block `at` received `text`.
    Grew { at: usize, text: String },
    /// Block `at` is whole.
    Ended { at: usize },
    /// Compaction block `at` was written, or failed.
    Compacted { at: usize },
    /// The blocks from `from` on were withdrawn (rule C2): they are no longer in
    /// [`TurnState::blocks`].
    Withdrawn { from: usize },
    /// The turn stopped or paused with this status; every block is whole.
    TurnEnded { status: TurnStatus },
}

impl TurnState {
    /// A turn just opened by `user_text`, running, with nothing streamed yet.
    pub fn opened(index: u32, user_text: impl Into<String>) -> Self {
        TurnState {
            index,
            status: TurnStatus::Running,
            user_text: user_text.into(),
            blocks: Vec::new(),
            messages: vec![Role::User],
            answers: Vec::new(),
            failed_compactions: 0,
            end_reason: None,
            replayed_compaction: None,
            pauses_held: 0,
            decided: Vec::new(),
        }
    }

    /// A stored turn as drawn: every block whole, each with the text its events would carry.
    pub fn stored(turn: &Turn) -> Self {
        let user_text = turn
            .messages
            .first()
            .and_then(|m| m.blocks.first())
            .map(|b| match b {
                Block::Text { text } => text.clone(),
                _ => String::new(),
            })
            .unwrap_or_default();
        let mut state = TurnState::opened(turn.index, user_text);
        state.status = turn.status;
        state.end_reason = turn.end_reason().map(str::to_string);
        state.messages = turn.messages.iter().map(|m| m.role).collect();
        // A running turn whose last message asks has not published that pause yet.
        let last = turn.messages.iter().rposition(|m| !m.blocks.is_empty());
        state.pauses_held = (1..turn.messages.len())
            .filter(|&m| !turn.messages[m].blocks.is_empty() && paused_after(&turn.messages, m))
            .filter(|&m| turn.status != TurnStatus::Running || Some(m) != last)
            .count();
        for (m, message) in turn.messages.iter().enumerate() {
            if message.role == Role::User {
                if m > 0 {
                    state.answers.push(PersonAnswer {
                        message: m,
                        text: message.text(),
                        streamed: 0,
                    });
                }
                continue;
            }
            for (b, block) in message.blocks.iter().enumerate() {
                state
                    .blocks
                    .push(BlockState::stored(m, b, block, &message.blocks));
            }
        }
        state
    }

    /// A running turn read from storage, to be followed by its events from the turn's start: what
    /// was stored is drawn whole, except a last text or thinking block, which may still be
    /// streaming. The events read again add only what storage did not hold yet (each block's
    /// text arrives in order and storage holds a prefix of it), so once they are all folded the
    /// state is the one the streamed turn folds to.
    pub fn resumed(turn: &Turn) -> Self {
        let mut state = TurnState::stored(turn);
        if state.status == TurnStatus::Running
            && let Some(last) = state.blocks.last_mut()
            && matches!(last.kind, BlockKind::Text | BlockKind::Thinking)
        {
            last.ended = false;
            last.streamed = 0;
        }
        state
    }

    /// Folds one event into the state and says what changed.
    pub fn apply(&mut self, event: &TurnEvent) -> Change {
        match event {
            TurnEvent::MessageStart { message, role } => {
                if self.messages.len() <= *message {
                    self.messages.resize(*message + 1, Role::Assistant);
                }
                self.messages[*message] = *role;
                Change::Nothing
            }
            TurnEvent::BlockStart {
                message,
                block,
                kind,
                call,
                is_error,
                pictures,
            } => {
                if let Some(at) = self.at(*message, *block) {
                    if *kind == BlockKind::Compaction && self.blocks[at].kind != *kind {
                        self.replayed_compaction = Some((*message, *block));
                    }
                    return Change::Nothing;
                }
                if self.is_user(*message) {
                    if *message > 0 && !self.answers.iter().any(|a| a.message == *message) {
                        self.answers.push(PersonAnswer {
                            message: *message,
                            text: String::new(),
                            streamed: 0,
                        });
                    }
                    return Change::Nothing;
                }
                let mut started = BlockState::new(*message, *block, *kind);
                started.call = call.clone();
                started.is_error = *is_error;
                started.pictures = pictures.clone();
                if *kind == BlockKind::Compaction {
                    started.compaction = Some(CompactionState::Writing);
                }
                self.blocks.push(started);
                Change::Started {
                    at: self.blocks.len() - 1,
                }
            }
            TurnEvent::Delta { message, text, .. } if self.is_user(*message) => {
                if let Some(answer) = self.answers.iter_mut().find(|a| a.message == *message) {
                    // What a turn read from storage brings again is already there.
                    let known = answer.text.len().saturating_sub(answer.streamed);
                    answer.streamed += text.len();
                    let mut new = known.min(text.len());
                    while !text.is_char_boundary(new) {
                        new -= 1;
                    }
                    answer.text.push_str(&text[new..]);
                }
                Change::Nothing
            }
            TurnEvent::Delta {
                message,
                block,
                text,
            } => match self.open_at(*message, *block) {
                Some(at) => {
                    let drawn = &mut self.blocks[at];
                    // What a resumed turn's events bring again is already drawn.
                    let known = drawn.text.len().saturating_sub(drawn.streamed);
                    drawn.streamed += text.len();
                    let mut new = known.min(text.len());
                    while !text.is_char_boundary(new) {
                        new -= 1;
                    }
                    let new = &text[new..];
                    if new.is_empty() {
                        return Change::Nothing;
                    }
                    drawn.text.push_str(new);
                    Change::Grew {
                        at,
                        text: new.to_string(),
                    }
                }
                None => Change::Nothing,
            },
            TurnEvent::BlockEnd { message, block }
                if self.replayed_compaction == Some((*message, *block)) =>
            {
                self.replayed_compaction = None;
                Change::Nothing
            }
            TurnEvent::BlockEnd { message, block } => match self.open_at(*message, *block) {
                Some(at) => {
                    self.end_block(at);
                    Change::Ended { at }
                }
                None => Change::Nothing,
            },
            TurnEvent::Compacted {
                message,
                block,
                trigger,
                covers,
                summary,
            } => {
                let at = match self.at(*message, *block) {
                    Some(at) => at,
                    None => {
                        self.blocks
                            .push(BlockState::new(*message, *block, BlockKind::Compaction));
                        self.blocks.len() - 1
                    }
                };
                let written = Block::Compaction {
                    summary: summary.clone(),
                    trigger: *trigger,
                    covers: *covers,
                    kept_messages: 0,
                };
                let drawn = &mut self.blocks[at];
                drawn.text = summary.clone();
                drawn.streamed = summary.len();
                drawn.ended = true;
                drawn.compaction = divider(&written).map(CompactionState::Written);
                Change::Compacted { at }
            }
            TurnEvent::Withdrawn { message, block } => match self.at(*message, *block) {
                // Only prose streams, so only prose is withdrawn. Anything else in its place is
                // what a turn resumed from storage holds after the withdrawal (the compaction
                // made for the retry), which the withdrawal does not touch.
                Some(at)
                    if matches!(self.blocks[at].kind, BlockKind::Text | BlockKind::Thinking) =>
                {
                    self.blocks.truncate(at);
                    Change::Withdrawn { from: at }
                }
                _ => Change::Nothing,
            },
            TurnEvent::TurnEnd {
                status: TurnStatus::Paused,
                ..
            } if self.pauses_held > 0 => {
                self.pauses_held -= 1;
                Change::Nothing
            }
            TurnEvent::TurnEnd { status, reason } => {
                for at in 0..self.blocks.len() {
                    self.end_block(at);
                }
                self.status = *status;
                self.end_reason = reason.clone();
                Change::TurnEnded { status: *status }
            }
        }
    }

    /// Why the turn ended without its answer, for a Retry under it: it failed (a reason
    /// unknown is `None` inside), or the server cut it off; `None` for any other turn (the
    /// person's own Stop offers Regenerate instead).
    pub fn retry_reason(&self) -> Option<Option<&str>> {
        match (self.status, &self.end_reason) {
            (TurnStatus::Failed, reason) => Some(reason.as_deref()),
            (TurnStatus::CutOff, Some(reason)) => Some(Some(reason.as_str())),
            _ => None,
        }
    }

    /// How a cut-off turn's note names its end: "Stopped" when the person stopped it, and
    /// "Interrupted" when the server cut it off (it stopped or restarted, or a limit ran out), which
    /// says why in its `turn_end`; `None` for a turn that was not cut off.
    pub fn cut_off_note(&self) -> Option<&'static str> {
        let note = if self.end_reason.is_some() {
            "Interrupted"
        } else {
            "Stopped"
        };
        (self.status == TurnStatus::CutOff).then_some(note)
    }

    /// The person approved (or declined) `calls` of the paused turn: it runs again at once, its
    /// cards say so, and nothing waits on them, before the server's answer comes.
    pub fn decide(&mut self, calls: &[String], approve: bool) {
        self.status = TurnStatus::Running;
        self.decided
            .extend(calls.iter().map(|call| (call.clone(), approve)));
    }

    /// The person answered the paused turn's question: it runs again at once.
    pub fn answered(&mut self) {
        self.status = TurnStatus::Running;
    }

    /// The decision or answer did not reach the server: the turn waits on the person again.
    pub fn undecided(&mut self) {
        self.status = TurnStatus::Paused;
        self.decided.clear();
    }

    /// Whether the person approved (`Some(true)`) or declined call `call` here, while its result
    /// has not come.
    pub fn decision(&self, call: &str) -> Option<bool> {
        self.decided
            .iter()
            .rev()
            .find(|(id, _)| id == call)
            .map(|(_, approve)| *approve)
    }

    /// What the turn waits for while paused: the requests of its last assistant message, by the
    /// same rule as [`Turn::awaiting`]. Empty while the turn is not paused.
    pub fn awaiting(&self) -> Awaiting {
        if self.status != TurnStatus::Paused {
            return Awaiting::default();
        }
        let Some(last) = self.messages.iter().rposition(|r| *r == Role::Assistant) else {
            return Awaiting::default();
        };
        let requests: Vec<Block> = self
            .blocks
            .iter()
            .filter(|b| b.message == last)
            .filter_map(BlockState::as_request)
            .collect();
        Awaiting::of_blocks(&requests)
    }

    /// How each block is drawn (R1, R2), in the order of [`TurnState::blocks`].
    pub fn drawn(&self) -> Vec<crate::display::Drawn> {
        let kinds: Vec<BlockKind> = self.blocks.iter().map(|b| b.kind).collect();
        crate::display::drawn_as(&kinds)
    }

    /// The turn's answer as plain text, once the turn has ended and every block is whole: the
    /// answer blocks joined by blank lines (for the screen reader's one announcement, R14).
    pub fn answer(&self) -> Option<String> {
        if self.status.is_open() || self.blocks.iter().any(|b| !b.ended) {
            return None;
        }
        let answer: Vec<&str> = self
            .blocks
            .iter()
            .zip(self.drawn())
            .filter(|(_, drawn)| *drawn == crate::display::Drawn::Answer)
            .map(|(b, _)| b.text.as_str())
            .collect();
        (!answer.is_empty()).then(|| answer.join("\n\n"))
    }

    /// The place in [`TurnState::blocks`] of the block at `message`, `block`. A compaction that
    /// failed holds no place: nothing of it was stored, so the next block is written where it
    /// stood.
    pub fn at(&self, message: usize, block: usize) -> Option<usize> {
        self.blocks.iter().position(|b| {
            b.message == message
                && b.block == block
                && b.compaction != Some(CompactionState::Failed)
        })
    }

    /// The newest compaction block that was written, as its place in [`TurnState::blocks`].
    pub fn newest_divider(&self) -> Option<usize> {
        self.blocks
            .iter()
            .rposition(|b| matches!(b.compaction, Some(CompactionState::Written(_))))
    }

    fn open_at(&self, message: usize, block: usize) -> Option<usize> {
        self.at(message, block).filter(|&at| !self.blocks[at].ended)
    }

    fn is_user(&self, message: usize) -> bool {
        self.messages.get(message) == Some(&Role::User)
    }

    /// Marks block `at` whole; a compaction that ends without its summary failed (C5).
    fn end_block(&mut self, at: usize) {
        let block = &mut self.blocks[at];
        if block.ended {
            return;
        }
        block.ended = true;
        if block.compaction == Some(CompactionState::Writing) {
            block.compaction = Some(CompactionState::Failed);
            self.failed_compactions += 1;
        }
    }
}

impl BlockState {
    fn new(message: usize, block: usize, kind: BlockKind) -> Self {
        BlockState {
            message,
            block,
            kind,
            call: None,
            text: String::new(),
            ended: false,
            compaction: None,
            is_error: false,
            pictures: Vec::new(),
            streamed: 0,
        }
    }

    /// A stored block, whole, with the text and call its events carry (`siblings` is its
    /// message, where an approval request finds its call's tool name).
    fn stored(message: usize, position: usize, block: &Block, siblings: &[Block]) -> Self {
        let mut state = BlockState::new(message, position, block.kind());
        state.ended = true;
        state.call = call_header(block, siblings);
        state.text = match block {
            Block::Compaction { summary, .. } => summary.clone(),
            other => event_text(other).unwrap_or_default(),
        };
        state.compaction = divider(block).map(CompactionState::Written);
        state.is_error = matches!(block, Block::ToolResult { is_error: true, .. });
        state.pictures = pictures(block).to_vec();
        state.streamed = state.text.len();
        state
    }

    /// The block as the request it is, for [`Awaiting`]; `None` for any other kind.
    fn as_request(&self) -> Option<Block> {
        match self.kind {
            BlockKind::ApprovalRequest => Some(Block::ApprovalRequest {
                call_id: self.call.as_ref().map(|c| c.id.clone()).unwrap_or_default(),
                summary: self.text.clone(),
            }),
            BlockKind::ClarificationRequest => Some(Block::ClarificationRequest {
                id: String::new(),
                question: self.text.clone(),
            }),
            _ => None,
        }
    }
}
