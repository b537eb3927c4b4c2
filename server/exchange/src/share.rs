//! What a share link shows (docs/share.md): a snapshot of a conversation's ended turns, as a
//! reader who is not its owner may see them. The owner's thinking, their documents' extracted
//! text and the pictures tools answered with (files only their owner may fetch) stay out; the
//! words, tool calls with their results, sources and compaction dividers stay in.

use portal_core::attachment::Attachment;
use portal_core::{Block, Transcript};

/// The snapshot of `transcript` a share link keeps: its turns up to the first one still open,
/// with what is not shared taken out.
pub fn snapshot(transcript: &Transcript) -> Transcript {
    let mut shared = Transcript {
        version: transcript.version,
        turns: Vec::new(),
    };
    for turn in &transcript.turns {
        if turn.status.is_open() {
            break;
        }
        let mut turn = turn.clone();
        turn.context_tokens = None;
        for message in &mut turn.messages {
            message
                .blocks
                .retain(|block| !matches!(block, Block::Thinking { .. }));
            for block in &mut message.blocks {
                if let Block::ToolResult { pictures, .. } = block {
                    pictures.clear();
                }
            }
            for attachment in &mut message.attachments {
                if let Attachment::Document(document) = attachment {
                    document.text = None;
                    document.headings.clear();
                }
            }
        }
        turn.messages
            .retain(|message| !message.blocks.is_empty() || !message.attachments.is_empty());
        shared.turns.push(turn);
    }
    shared
}
