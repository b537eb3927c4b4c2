//! How a run writes its turn: each piece as a storage write followed by the event that
//! publishes it, so the stream never shows what the store does not hold, and the turn as stored
//! kept beside, so the run knows every message's and block's place without asking.

use std::collections::VecDeque;

use crate::stream::{TurnEvent, block_events};
use crate::{Block, BlockKind, Message, Role, Turn};

use super::{Action, TurnWrite};

/// The turn as stored, the open message and its open streamed block.
#[derive(Debug, Clone)]
pub(super) struct Writer {
    /// The turn's messages as storage holds them.
    pub messages: Vec<Message>,
    message: Option<usize>,
    open: Option<(usize, BlockKind)>,
    /// The calls written whole in the current message, where an approval request written after
    /// them finds its call's tool name.
    calls: Vec<Block>,
    /// What the model call being streamed wrote, should it be withdrawn.
    output: Option<CallOutput>,
}

/// Where a model call's output began: the message the writer was in, and the first block it
/// wrote (message, position), once it wrote one.
#[derive(Debug, Clone)]
struct CallOutput {
    message: Option<usize>,
    first: Option<(usize, usize)>,
}

impl Writer {
    pub fn new() -> Self {
        Writer {
            messages: Vec::new(),
            message: None,
            open: None,
            calls: Vec::new(),
            output: None,
        }
    }

    /// Takes the turn as a load read it: storage is the truth about what was written.
    pub fn loaded(&mut self, turn: Option<&Turn>) {
        self.messages = turn.map(|t| t.messages.clone()).unwrap_or_default();
    }

    /// A model call starts streaming: what it writes from here on can be withdrawn. The open
    /// block is ended first, so the call's text opens blocks of its own: a withdrawal removes
    /// whole blocks, and the turn's log merges a delta only into one of the same block.
    pub fn begin_call(&mut self, out: &mut VecDeque<Action>) {
        self.close(out);
        self.output = Some(CallOutput {
            message: self.message,
            first: None,
        });
    }

    /// The call begun last overflowed (rule C2): the blocks it wrote are removed and withdrawn
    /// from the stream, and the writer goes back to the message it was in.
    pub fn withdraw(&mut self, out: &mut VecDeque<Action>) {
        let Some(output) = self.output.take() else {
            return;
        };
        self.open = None;
        if let Some((message, from)) = output.first {
            out.push_back(Action::Write(TurnWrite::Withdraw { message, from }));
            if let Some(m) = self.messages.get_mut(message) {
                m.blocks.truncate(from);
            }
            out.push_back(Action::Publish(TurnEvent::Withdrawn {
                message,
                block: from,
            }));
        }
        self.message = output.message;
    }

    /// Starts a message with `role`; storage takes the last message again when it has no
    /// block yet.
    pub fn message(&mut self, role: Role, out: &mut VecDeque<Action>) -> usize {
        self.close(out);
        let at = match self.messages.last_mut() {
            Some(last) if last.blocks.is_empty() => {
                last.role = role;
                self.messages.len() - 1
            }
            _ => {
                self.messages.push(Message::new(role, Vec::new()));
                self.messages.len() - 1
            }
        };
        out.push_back(Action::Write(TurnWrite::Message { role, at }));
        self.message = Some(at);
        self.calls.clear();
        out.push_back(Action::Publish(TurnEvent::MessageStart {
            message: at,
            role,
        }));
        at
    }

    /// Streams text into the open block of `kind`, opening one when the open block is of
    /// another kind.
    pub fn delta(&mut self, kind: BlockKind, text: &str, out: &mut VecDeque<Action>) {
        let message = self.current(out);
        let block = match self.open {
            Some((block, open)) if open == kind => block,
            _ => {
                self.close(out);
                let empty = match kind {
                    BlockKind::Thinking => Block::Thinking {
                        text: String::new(),
                    },
                    _ => Block::text(""),
                };
                let block = self.push(message, empty.clone(), out);
                out.push_back(Action::Publish(TurnEvent::BlockStart {
                    message,
                    block,
                    kind,
                    call: None,
                    is_error: false,
                    pictures: Vec::new(),
                }));
                self.open = Some((block, kind));
                if let Some(output) = &mut self.output {
                    output.first.get_or_insert((message, block));
                }
                block
            }
        };
        if let Some(Block::Text { text: stored } | Block::Thinking { text: stored }) = self
            .messages
            .get_mut(message)
            .and_then(|m| m.blocks.get_mut(block))
        {
            stored.push_str(text);
        }
        out.push_back(Action::Write(TurnWrite::Text {
            message,
            block,
            text: text.to_string(),
        }));
        out.push_back(Action::Publish(TurnEvent::Delta {
            message,
            block,
            text: text.to_string(),
        }));
    }

    /// Writes a whole block: a call, a result, a request. Its events are [`block_events`], so
    /// a stream replayed from storage is the same.
    pub fn whole(&mut self, block: &Block, out: &mut VecDeque<Action>) -> usize {
        self.close(out);
        let message = self.current(out);
        let position = self.push(message, block.clone(), out);
        if matches!(block, Block::ToolUse { .. }) {
            self.calls.push(block.clone());
        }
        for event in block_events(message, position, block, &self.calls) {
            out.push_back(Action::Publish(event));
        }
        position
    }

    /// Writes a compaction's block at the start of `message` without publishing it: the run
    /// publishes `compacted` for it.
    pub fn compaction(
        &mut self,
        message: usize,
        block: Block,
        out: &mut VecDeque<Action>,
    ) -> usize {
        self.push(message, block, out)
    }

    /// Leaves the current message: the next block opens a new assistant message (only once it
    /// has a block, so no empty message is ever announced).
    pub fn next_message(&mut self, out: &mut VecDeque<Action>) {
        self.close(out);
        self.message = None;
        self.calls.clear();
    }

    /// Ends the open streamed block, if any.
    pub fn close(&mut self, out: &mut VecDeque<Action>) {
        if let (Some((block, _)), Some(message)) = (self.open.take(), self.message) {
            out.push_back(Action::Publish(TurnEvent::BlockEnd { message, block }));
        }
    }

    /// Forgets the open block without ending it: its start was never written.
    pub fn forget_open(&mut self) {
        self.open = None;
    }

    fn push(&mut self, message: usize, block: Block, out: &mut VecDeque<Action>) -> usize {
        let Some(m) = self.messages.get_mut(message) else {
            return 0;
        };
        let at = m.blocks.len();
        m.blocks.push(block.clone());
        out.push_back(Action::Write(TurnWrite::Block { message, at, block }));
        at
    }

    fn current(&mut self, out: &mut VecDeque<Action>) -> usize {
        match self.message {
            Some(message) => message,
            None => self.message(Role::Assistant, out),
        }
    }
}
