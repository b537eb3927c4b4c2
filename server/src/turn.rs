//! The turn loop: calls the model, records its blocks as they stream and publishes them.

use std::sync::{Arc, Mutex};

use futures_util::StreamExt;
use portal_core::stream::TurnEvent;
use portal_core::{Block, BlockKind, Message, Role, Turn, TurnStatus};

use crate::events::TurnLog;
use portal_core::effort::Effort;
use portal_core::memory::CompactionHint;
use portal_core::prompt::{NoPictures, PromptConfig, PromptInput, assemble};

use crate::model::{Model, ModelEvent};
use crate::store::Store;

/// Opens turn `index` of conversation `id` with the user's `text`. Returns the turn's event log;
/// the caller spawns [`run`] to produce it.
pub fn open(store: &mut Store, id: &str, text: &str) -> Option<(u32, Arc<TurnLog>)> {
    let conversation = store.get_mut(id)?;
    let index = conversation.transcript.turns.len() as u32 + 1;
    conversation.transcript.turns.push(Turn {
        index,
        kind: Default::default(),
        status: TurnStatus::Running,
        effort: None,
        context_tokens: None,
        trace: Vec::new(),
        messages: vec![Message::new(Role::User, vec![Block::text(text)])],
    });
    let log = TurnLog::new();
    conversation.logs.insert(index, Arc::clone(&log));
    Some((index, log))
}

/// Runs the turn to its end, writing each piece into the transcript before publishing it.
pub async fn run(
    store: Arc<Mutex<Store>>,
    model: Arc<dyn Model>,
    id: String,
    index: u32,
    log: Arc<TurnLog>,
) {
    let message = 1;
    let with_turn = |apply: &mut dyn FnMut(&mut Turn)| {
        let mut store = store.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(turn) = store
            .get_mut(&id)
            .and_then(|c| c.transcript.turns.get_mut(index as usize - 1))
        {
            apply(turn);
        }
    };
    with_turn(&mut |turn| {
        turn.messages
            .push(Message::new(Role::Assistant, Vec::new()))
    });
    log.push(TurnEvent::MessageStart {
        message,
        role: Role::Assistant,
    });
    let transcript = {
        let store = store.lock().unwrap_or_else(|e| e.into_inner());
        store
            .get(&id)
            .map(|c| c.transcript.clone())
            .unwrap_or_default()
    };
    let assembled = assemble(
        &PromptInput {
            transcript: &transcript,
            compaction_hint: CompactionHint::Search,
            model: model.capabilities(),
            instructions: "",
            selected_skills: &[],
            catalogue: &[],
            agent_tools: &[],
            effort: Effort::Medium,
        },
        &PromptConfig::default(),
    );
    let mut answer = model.stream(&assembled.prompt, &NoPictures);
    let mut open_block: Option<(usize, BlockKind)> = None;
    let mut status = TurnStatus::Completed;
    while let Some(piece) = answer.next().await {
        let (kind, delta) = match piece {
            Ok(ModelEvent::ThinkingDelta(delta)) => (BlockKind::Thinking, delta),
            Ok(ModelEvent::TextDelta(delta)) => (BlockKind::Text, delta),
            Ok(_) => continue,
            Err(error) => {
                tracing::warn!("turn {index} of {id} failed: {error}");
                status = TurnStatus::Failed;
                break;
            }
        };
        if open_block.is_none_or(|(_, open)| open != kind) {
            if let Some((position, _)) = open_block.take() {
                log.push(TurnEvent::BlockEnd {
                    message,
                    block: position,
                });
            }
            let mut position = 0;
            with_turn(&mut |turn| {
                let blocks = &mut turn.messages[message].blocks;
                blocks.push(empty_block(kind));
                position = blocks.len() - 1;
            });
            open_block = Some((position, kind));
            log.push(TurnEvent::BlockStart {
                message,
                block: position,
                kind,
                call: None,
            });
        }
        let Some((position, _)) = open_block else {
            continue;
        };
        with_turn(&mut |turn| append_text(&mut turn.messages[message].blocks[position], &delta));
        log.push(TurnEvent::Delta {
            message,
            block: position,
            text: delta,
        });
    }
    if let Some((position, _)) = open_block {
        log.push(TurnEvent::BlockEnd {
            message,
            block: position,
        });
    }
    with_turn(&mut |turn| {
        turn.status = status;
        if turn.messages[message].blocks.is_empty() {
            turn.messages.pop();
        }
    });
    log.push(TurnEvent::TurnEnd { status });
}

fn empty_block(kind: BlockKind) -> Block {
    match kind {
        BlockKind::Thinking => Block::Thinking {
            text: String::new(),
        },
        _ => Block::text(""),
    }
}

fn append_text(block: &mut Block, delta: &str) {
    if let Block::Thinking { text } | Block::Text { text } = block {
        text.push_str(delta);
    }
}
