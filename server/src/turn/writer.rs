//! Writes a turn's blocks to storage as they stream and publishes each piece after it is
//! written, so the stream never shows what the store does not hold.

use std::sync::Arc;

use portal_core::stream::TurnEvent;
use portal_core::{Block, BlockKind, Role};

use crate::events::{Mark, TurnLog, block_events};
use crate::storage::{AsyncStorage, ConversationId, StorageError};

/// The open message of a turn and its open streamed block.
#[derive(Debug)]
pub(super) struct Writer {
    storage: AsyncStorage,
    conversation: ConversationId,
    turn: u32,
    log: Arc<TurnLog>,
    message: Option<usize>,
    open: Option<(usize, BlockKind)>,
    /// The calls written whole in the current message, where an approval request written after
    /// them finds its call's tool name.
    calls: Vec<Block>,
    /// What the model call being streamed wrote, should it be withdrawn.
    output: Option<CallOutput>,
}

/// Where a model call's output began: the log before it, the message the writer was in, and the
/// first block it wrote (message, position), once it wrote one.
#[derive(Debug)]
struct CallOutput {
    mark: Mark,
    message: Option<usize>,
    first: Option<(usize, usize)>,
}

impl Writer {
    pub fn new(
        storage: AsyncStorage,
        conversation: ConversationId,
        turn: u32,
        log: Arc<TurnLog>,
    ) -> Self {
        Writer {
            storage,
            conversation,
            turn,
            log,
            message: None,
            open: None,
            calls: Vec::new(),
            output: None,
        }
    }

    /// A model call starts streaming: what it writes from here on can be withdrawn.
    pub fn begin_call(&mut self) {
        self.output = Some(CallOutput {
            mark: self.log.mark(),
            message: self.message,
            first: None,
        });
    }

    /// The call begun last reported a context overflow (rule C2): the blocks it wrote are removed
    /// from storage and withdrawn from the log, and the writer goes back to the message it was in.
    pub async fn withdraw(&mut self) -> Result<(), StorageError> {
        let Some(output) = self.output.take() else {
            return Ok(());
        };
        self.open = None;
        if let Some((message, block)) = output.first {
            self.storage
                .withdraw_blocks(&self.conversation, self.turn, message, block)
                .await?;
            self.log
                .withdraw(output.mark, TurnEvent::Withdrawn { message, block });
        }
        self.message = output.message;
        Ok(())
    }

    /// Starts a message with `role`.
    pub async fn message(&mut self, role: Role) -> Result<usize, StorageError> {
        self.close();
        let message = self
            .storage
            .append_message(&self.conversation, self.turn, role)
            .await?;
        self.message = Some(message);
        self.calls.clear();
        self.log.push(TurnEvent::MessageStart { message, role });
        Ok(message)
    }

    /// Streams text into the open block of `kind`, opening one when the open block is of another
    /// kind.
    pub async fn delta(&mut self, kind: BlockKind, text: &str) -> Result<(), StorageError> {
        let message = self.current().await?;
        let block = match self.open {
            Some((block, open)) if open == kind => block,
            _ => {
                self.close();
                let empty = match kind {
                    BlockKind::Thinking => Block::Thinking {
                        text: String::new(),
                    },
                    _ => Block::text(""),
                };
                let block = self
                    .storage
                    .append_block(&self.conversation, self.turn, message, &empty)
                    .await?;
                self.log.push(TurnEvent::BlockStart {
                    message,
                    block,
                    kind,
                    call: None,
                    is_error: false,
                });
                self.open = Some((block, kind));
                if let Some(output) = &mut self.output {
                    output.first.get_or_insert((message, block));
                }
                block
            }
        };
        self.storage
            .append_block_text(&self.conversation, self.turn, message, block, text)
            .await?;
        self.log.push(TurnEvent::Delta {
            message,
            block,
            text: text.to_string(),
        });
        Ok(())
    }

    /// Writes a whole block: a call, a result, a request. Its start names its call and its text
    /// (a call's arguments, a result's content, a request's question or summary) is published
    /// as one delta, as [`block_events`] defines them, so a log rebuilt from storage is the same.
    pub async fn whole(&mut self, block: &Block) -> Result<usize, StorageError> {
        self.close();
        let message = self.current().await?;
        let position = self
            .storage
            .append_block(&self.conversation, self.turn, message, block)
            .await?;
        if matches!(block, Block::ToolUse { .. }) {
            self.calls.push(block.clone());
        }
        for event in block_events(message, position, block, &self.calls) {
            self.log.push(event);
        }
        Ok(position)
    }

    /// Leaves the current message: the next block opens a new assistant message (only once it
    /// has a block, so no empty message is ever announced).
    pub fn next_message(&mut self) {
        self.close();
        self.message = None;
        self.calls.clear();
    }

    /// Goes on in `message`, which the compaction step opened with its block (rule B2: the block
    /// opens the assistant message of the call it was made for).
    pub fn adopt(&mut self, message: usize) {
        self.close();
        self.message = Some(message);
        self.calls.clear();
    }

    /// Where the compaction step writes: the same storage, turn and event log.
    pub fn sink(&self) -> crate::compaction::TurnSink<'_> {
        crate::compaction::TurnSink {
            storage: &self.storage,
            conversation: &self.conversation,
            turn: self.turn,
            log: &self.log,
        }
    }

    /// Ends the open streamed block, if any.
    pub fn close(&mut self) {
        if let (Some((block, _)), Some(message)) = (self.open.take(), self.message) {
            self.log.push(TurnEvent::BlockEnd { message, block });
        }
    }

    async fn current(&mut self) -> Result<usize, StorageError> {
        match self.message {
            Some(message) => Ok(message),
            None => self.message(Role::Assistant).await,
        }
    }
}
