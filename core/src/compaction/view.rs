//! What compaction sees of a transcript: the newest summary and the messages after its start.
//!
//! Messages are counted in one flat sequence across turn boundaries, the way a compaction block's
//! `kept_messages` counts back from its own message. The view starts at the newest compaction's
//! kept tail (or at the first message when there is none). Messages of `/compact` turns are left
//! out (they hold a command and a summary, not conversation), and so are compaction blocks.

use crate::block::{Block, CompactionTrigger, TurnsCovered};

use super::locate::{self, Located};
use crate::transcript::{Message, Role, Transcript, Turn, TurnKind};

/// Where a message is: its turn's number and its 0-based place in the turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MessagePosition {
    pub turn: u32,
    pub message: usize,
}

/// The newest compaction block of a transcript and where it sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewestCompaction<'a> {
    /// The assistant message the block opens.
    pub position: MessagePosition,
    pub summary: &'a str,
    pub trigger: CompactionTrigger,
    pub covers: TurnsCovered,
    pub kept_messages: u32,
    /// Whether anything was written after the block (in its message or later, outside `/compact`
    /// turns).
    pub written_since: bool,
}

/// The newest compaction of the transcript, if any.
pub fn newest_compaction(transcript: &Transcript) -> Option<NewestCompaction<'_>> {
    let turns = &transcript.turns;
    locate::newest_among(turns, 0..turns.len()).map(|found| described(transcript, found))
}

/// One message in view.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Entry<'a> {
    pub turn: &'a Turn,
    /// The message's place in the flat sequence of all the transcript's messages.
    pub flat: usize,
    /// The message's 0-based place in its turn.
    pub index: usize,
    pub message: &'a Message,
}

impl<'a> Entry<'a> {
    pub fn position(&self) -> MessagePosition {
        MessagePosition {
            turn: self.turn.index,
            message: self.index,
        }
    }

    /// The message's blocks, compaction blocks left out.
    pub fn blocks(&self) -> impl Iterator<Item = &'a Block> + 'a {
        self.message
            .blocks
            .iter()
            .filter(|b| !matches!(b, Block::Compaction { .. }))
    }

    pub fn role(&self) -> Role {
        self.message.role
    }

    /// The ids of the calls this message makes.
    pub fn call_ids(&self) -> Vec<&'a str> {
        self.blocks()
            .filter_map(|b| match b {
                Block::ToolUse { id, .. } => Some(id.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The ids of the calls this message answers.
    pub fn result_ids(&self) -> Vec<&'a str> {
        self.blocks()
            .filter_map(|b| match b {
                Block::ToolResult { call_id, .. } => Some(call_id.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The message as the live list carries it: compaction blocks left out.
    pub fn live_message(&self) -> Message {
        Message {
            role: self.message.role,
            blocks: self.blocks().cloned().collect(),
            attachments: self.message.attachments.clone(),
        }
    }
}

/// The newest summary and the conversation messages from its kept tail on.
#[derive(Debug, Clone)]
pub(crate) struct View<'a> {
    pub earlier: Option<NewestCompaction<'a>>,
    pub entries: Vec<Entry<'a>>,
}

impl<'a> View<'a> {
    pub fn of(transcript: &'a Transcript) -> Self {
        let turns = &transcript.turns;
        let located = locate::newest_among(turns, 0..turns.len());
        let start = located.map_or(0, |found| {
            let tail = locate::kept_tail_start(turns, &found, 0);
            messages_before(turns, tail.turn) + tail.message
        });
        View {
            earlier: located.map(|found| described(transcript, found)),
            entries: conversation(transcript, start).collect(),
        }
    }
}

/// Every message of the transcript in flat order with its turn and flat place.
pub(crate) fn flat(transcript: &Transcript) -> impl Iterator<Item = Entry<'_>> {
    transcript
        .turns
        .iter()
        .flat_map(|turn| {
            turn.messages
                .iter()
                .enumerate()
                .map(move |(index, message)| (turn, index, message))
        })
        .enumerate()
        .map(|(flat, (turn, index, message))| Entry {
            turn,
            flat,
            index,
            message,
        })
}

/// The conversation messages from flat place `start` on: no `/compact` turns, no message that
/// holds only compaction blocks.
pub(crate) fn conversation(
    transcript: &Transcript,
    start: usize,
) -> impl Iterator<Item = Entry<'_>> {
    flat(transcript)
        .skip(start)
        .filter(|e| e.turn.kind == TurnKind::Chat && e.blocks().next().is_some())
}

/// The newest compaction as compaction sees it.
fn described<'a>(transcript: &'a Transcript, found: Located<'a>) -> NewestCompaction<'a> {
    let turns = &transcript.turns;
    let turn = &turns[found.turn];
    let message = &turn.messages[found.message];
    let chat_after = turns[found.turn + 1..]
        .iter()
        .any(|t| t.kind == TurnKind::Chat);
    NewestCompaction {
        position: MessagePosition {
            turn: turn.index,
            message: found.message,
        },
        summary: found.summary,
        trigger: found.trigger,
        covers: found.covers,
        kept_messages: found.kept_messages,
        written_since: message.blocks.len() > found.block + 1
            || chat_after
            || (turn.kind == TurnKind::Chat && found.message + 1 < turn.messages.len()),
    }
}

/// The number of messages in the turns before place `turn`.
fn messages_before(turns: &[Turn], turn: usize) -> usize {
    turns[..turn].iter().map(|t| t.messages.len()).sum()
}

/// The number of messages in the transcript.
pub(crate) fn flat_len(transcript: &Transcript) -> usize {
    transcript.turns.iter().map(|t| t.messages.len()).sum()
}
