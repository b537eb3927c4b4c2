//! Writes a turn's blocks to storage as they stream and publishes each piece after it is
//! written, so the stream never shows what the store does not hold.

use std::sync::Arc;

use portal_core::stream::TurnEvent;
use portal_core::{Block, BlockKind, Role};

use crate::events::{TurnLog, block_events};
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
        }
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
