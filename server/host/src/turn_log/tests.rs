use portal_core::block::{CompactionTrigger, TurnsCovered};
use portal_core::stream::block_events;
use portal_core::{Block, Message, Role, TurnKind, TurnStatus};
use serde_json::json;

use super::*;

fn message(role: Role, blocks: Vec<Block>) -> Message {
    Message::new(role, blocks)
}

fn text_block(text: &str) -> Block {
    Block::text(text)
}

/// A turn that compacted, asked a question with another call answered "not run", was
/// answered, asked approval for a call, was approved, and ended with thinking and text.
fn turn(status: TurnStatus) -> Turn {
    let compaction = Block::Compaction {
        summary: "Earlier: scripts.".into(),
        trigger: CompactionTrigger::Auto,
        covers: TurnsCovered { first: 1, last: 2 },
        kept_messages: 0,
    };
    let call = |id: &str, name: &str| Block::ToolUse {
        id: id.into(),
        name: name.into(),
        input: json!({"text": "héllo"}),
    };
    Turn {
        index: 3,
        kind: TurnKind::Chat,
        status,
        effort: None,
        context_tokens: None,
        trace: Vec::new(),
        messages: vec![
            message(Role::User, vec![text_block("Tell me")]),
            message(
                Role::Assistant,
                vec![
                    compaction,
                    Block::Thinking {
                        text: "Let me ask 🤔".into(),
                    },
                    call("c1", "count_characters"),
                    Block::ClarificationRequest {
                        id: "c2".into(),
                        question: "Which script?".into(),
                    },
                ],
            ),
            message(
                Role::Tool,
                vec![Block::ToolResult {
                    call_id: "c1".into(),
                    content: "Not run".into(),
                    is_error: true,
                    pictures: Vec::new(),
                }],
            ),
            message(Role::User, vec![text_block("Latin")]),
            message(
                Role::Assistant,
                vec![
                    call("c3", "publish_note"),
                    Block::ApprovalRequest {
                        call_id: "c3".into(),
                        summary: "Publish?".into(),
                    },
                ],
            ),
            message(
                Role::Tool,
                vec![Block::ToolResult {
                    call_id: "c3".into(),
                    content: "Published".into(),
                    is_error: false,
                    pictures: Vec::new(),
                }],
            ),
            message(
                Role::Assistant,
                vec![
                    Block::Thinking {
                        text: "Done".into(),
                    },
                    text_block("Here it is: 日本語 👩‍💻."),
                ],
            ),
        ],
    }
}

/// What the turn loop publishes for [`turn`], the model's text split into pieces of
/// `piece` characters, with a failed compaction attempt before the last reply.
fn live(turn: &Turn, piece: usize) -> Arc<TurnLog> {
    let log = TurnLog::new();
    log.resume();
    let streamed = |log: &TurnLog, m: usize, b: usize, kind: BlockKind, text: &str| {
        log.push(TurnEvent::BlockStart {
            message: m,
            block: b,
            kind,
            call: None,
            is_error: false,
            pictures: Vec::new(),
        });
        let chars: Vec<char> = text.chars().collect();
        for chunk in chars.chunks(piece) {
            log.push(TurnEvent::Delta {
                message: m,
                block: b,
                text: chunk.iter().collect(),
            });
        }
        log.push(TurnEvent::BlockEnd {
            message: m,
            block: b,
        });
    };
    let whole = |log: &TurnLog, m: usize, b: usize| {
        let blocks = &turn.messages[m].blocks;
        for event in block_events(m, b, &blocks[b], blocks) {
            log.push(event);
        }
    };
    let start = |log: &TurnLog, m: usize| {
        log.push(TurnEvent::MessageStart {
            message: m,
            role: turn.messages[m].role,
        })
    };
    let pause = |log: &TurnLog| {
        log.push(TurnEvent::TurnEnd {
            status: TurnStatus::Paused,
            reason: None,
        });
        log.resume();
    };
    start(&log, 1);
    whole(&log, 1, 0);
    streamed(&log, 1, 1, BlockKind::Thinking, "Let me ask 🤔");
    whole(&log, 1, 2);
    whole(&log, 1, 3);
    start(&log, 2);
    whole(&log, 2, 0);
    pause(&log);
    start(&log, 3);
    whole(&log, 3, 0);
    start(&log, 4);
    whole(&log, 4, 0);
    whole(&log, 4, 1);
    pause(&log);
    start(&log, 5);
    whole(&log, 5, 0);
    // A compaction that failed: nothing stored, and the message is announced again.
    start(&log, 6);
    log.push(TurnEvent::BlockStart {
        message: 6,
        block: 0,
        kind: BlockKind::Compaction,
        call: None,
        is_error: false,
        pictures: Vec::new(),
    });
    log.push(TurnEvent::BlockEnd {
        message: 6,
        block: 0,
    });
    start(&log, 6);
    streamed(&log, 6, 0, BlockKind::Thinking, "Done");
    streamed(&log, 6, 1, BlockKind::Text, "Here it is: 日本語 👩‍💻.");
    log.push(TurnEvent::TurnEnd {
        status: turn.status,
        reason: None,
    });
    log
}

fn entries(log: &TurnLog) -> Vec<(u64, TurnEvent)> {
    log.lock()
        .entries
        .iter()
        .map(|e| (e.end, e.event.clone()))
        .collect()
}

async fn read(log: &Arc<TurnLog>, after: u64) -> Vec<(u64, TurnEvent)> {
    use futures_util::StreamExt;
    log.read_from(after, Duration::from_secs(5)).collect().await
}

#[test]
fn a_rebuilt_log_numbers_every_stored_event_as_the_live_log_did_however_text_was_split() {
    let stored = turn(TurnStatus::Completed);
    let rebuilt = entries(&TurnLog::rebuilt(&stored));
    for piece in [1, 2, 5, 100] {
        let live = entries(&live(&stored, piece));
        let weighted = |events: &[(u64, TurnEvent)]| -> Vec<(u64, TurnEvent)> {
            let mut kept: Vec<(u64, TurnEvent)> = Vec::new();
            for (id, event) in events {
                if matches!(event, TurnEvent::Delta { .. }) {
                    continue;
                }
                if kept.last().is_some_and(|(last, _)| last == id) {
                    continue; // weighs nothing: not stored
                }
                kept.push((*id, event.clone()));
            }
            kept
        };
        assert_eq!(weighted(&live), weighted(&rebuilt), "pieces of {piece}");
        assert_eq!(live.last(), rebuilt.last());
    }
    assert_eq!(
        rebuilt
            .iter()
            .filter(|(_, e)| matches!(
                e,
                TurnEvent::TurnEnd {
                    status: TurnStatus::Paused,
                    ..
                }
            ))
            .count(),
        2,
        "both pauses"
    );
}

#[tokio::test]
async fn a_reader_resumes_from_any_id_of_the_live_log_on_the_rebuilt_one_losing_nothing() {
    let stored = turn(TurnStatus::Completed);
    let live = live(&stored, 3);
    let rebuilt = TurnLog::rebuilt(&stored);
    let all = read(&live, 0).await;
    let text = |events: &[(u64, TurnEvent)]| -> String {
        events
            .iter()
            .filter_map(|(_, e)| match e {
                TurnEvent::Delta { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    };
    for at in 0..all.len() {
        let (seen, _) = all[at];
        let rest = read(&rebuilt, seen).await;
        let mut joined = all[..=at].to_vec();
        joined.extend(rest.iter().cloned());
        assert_eq!(text(&joined), text(&all), "resumed after {seen}");
        assert!(rest.iter().all(|(id, _)| *id >= seen), "after {seen}");
        assert_eq!(rest.last(), all.last(), "after {seen}");
    }
}

#[tokio::test]
async fn a_rebuilt_failed_turn_ends_with_the_reason_its_note_kept() {
    let mut stored = turn(TurnStatus::Failed);
    stored.trace.push(portal_core::TraceEntry::TurnFailed {
        reason: "The model's endpoint is overloaded; send the message again in a minute.".into(),
    });
    let log = TurnLog::rebuilt(&stored);
    let (_, last) = read(&log, 0).await.pop().expect("an end");
    assert_eq!(
        last,
        TurnEvent::TurnEnd {
            status: TurnStatus::Failed,
            reason: Some(
                "The model's endpoint is overloaded; send the message again in a minute.".into()
            ),
        }
    );
}

#[tokio::test]
async fn a_reader_at_or_past_the_end_gets_the_end_again_and_the_stream_closes() {
    let log = TurnLog::rebuilt(&turn(TurnStatus::Failed));
    let last = log.lock().end;
    let end = (
        last,
        TurnEvent::TurnEnd {
            status: TurnStatus::Failed,
            reason: Some(portal_core::turn_run::UNNOTED_FAILURE.into()),
        },
    );
    for after in [last, last + 1, u64::MAX] {
        assert_eq!(
            read(&log, after).await,
            std::slice::from_ref(&end),
            "after {after}"
        );
    }
    assert_eq!(read(&log, last - 1).await, [end]);
}

#[tokio::test]
async fn a_reader_waits_while_a_run_writes_and_leaves_after_the_idle_limit() {
    use futures_util::StreamExt;
    let log = TurnLog::rebuilt(&turn(TurnStatus::Paused));
    let paused = log.lock().end;
    log.resume();
    let mut stream = Box::pin(log.read_from(paused, Duration::from_millis(200)));
    let writer = Arc::clone(&log);
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        writer.push(TurnEvent::MessageStart {
            message: 5,
            role: Role::Tool,
        });
    });
    let next = stream.next().await;
    assert_eq!(
        next,
        Some((
            paused + 1,
            TurnEvent::MessageStart {
                message: 5,
                role: Role::Tool
            }
        ))
    );
    let started = std::time::Instant::now();
    assert_eq!(stream.next().await, None, "idle");
    assert!(started.elapsed() < Duration::from_secs(2));
}

// C2: a call's output withdrawn from the log is read by no reader that comes later; a
// follower that read it, and a reader resuming inside it, read the withdrawal next; one that
// read the withdrawal reads on. Every one of them folds to the same turn.
#[tokio::test]
async fn c2_withdrawn_events_are_read_only_as_their_withdrawal() {
    use futures_util::StreamExt;
    use portal_core::TurnState;
    let log = TurnLog::new();
    log.resume();
    let mark = log.mark();
    let partial = [
        TurnEvent::MessageStart {
            message: 1,
            role: Role::Assistant,
        },
        TurnEvent::BlockStart {
            message: 1,
            block: 0,
            kind: BlockKind::Text,
            call: None,
            is_error: false,
            pictures: Vec::new(),
        },
        TurnEvent::Delta {
            message: 1,
            block: 0,
            text: "Here is".into(),
        },
    ];
    for event in &partial {
        log.push(event.clone());
    }
    let idle = Duration::from_secs(5);
    let mut follower = Box::pin(log.read_from(0, idle));
    let mut followed = Vec::new();
    for _ in &partial {
        followed.push(follower.next().await.expect("an event"));
    }
    let withdrawn_at = log.lock().end;
    log.withdraw(
        mark,
        TurnEvent::Withdrawn {
            message: 1,
            block: 0,
        },
    );
    let summary = "## Requests\n- Plan the budget".to_string();
    let retry = [
        TurnEvent::MessageStart {
            message: 1,
            role: Role::Assistant,
        },
        TurnEvent::BlockStart {
            message: 1,
            block: 0,
            kind: BlockKind::Compaction,
            call: None,
            is_error: false,
            pictures: Vec::new(),
        },
        TurnEvent::Compacted {
            message: 1,
            block: 0,
            trigger: CompactionTrigger::Auto,
            covers: TurnsCovered { first: 1, last: 2 },
            summary,
        },
        TurnEvent::BlockStart {
            message: 1,
            block: 1,
            kind: BlockKind::Text,
            call: None,
            is_error: false,
            pictures: Vec::new(),
        },
        TurnEvent::Delta {
            message: 1,
            block: 1,
            text: "Done.".into(),
        },
        TurnEvent::BlockEnd {
            message: 1,
            block: 1,
        },
        TurnEvent::TurnEnd {
            status: TurnStatus::Completed,
            reason: None,
        },
    ];
    for event in &retry {
        log.push(event.clone());
    }
    followed.extend(follower.collect::<Vec<_>>().await);
    let ids: Vec<u64> = followed.iter().map(|(id, _)| *id).collect();
    assert!(
        ids.windows(2).all(|w| w[0] <= w[1]),
        "ids never go back: {ids:?}"
    );
    assert!(
        matches!(followed[3], (id, TurnEvent::Withdrawn { .. }) if id > withdrawn_at),
        "{followed:?}"
    );

    let read = |after: u64| {
        let log = Arc::clone(&log);
        async move {
            log.read_from(after, idle)
                .map(|(_, event)| event)
                .collect::<Vec<_>>()
                .await
        }
    };
    let fold = |events: &[TurnEvent]| {
        let mut state = TurnState::opened(1, "Hello");
        for event in events {
            state.apply(event);
        }
        state
    };
    let whole = fold(&followed.iter().map(|(_, e)| e.clone()).collect::<Vec<_>>());
    assert_eq!(whole.blocks.len(), 2, "{whole:?}");
    assert_eq!(whole.blocks[1].text, "Done.");
    let later = read(0).await;
    assert!(
        later.iter().all(|e| !matches!(
            e,
            TurnEvent::Delta { text, .. } if text == "Here is"
        )),
        "a later reader never reads what was withdrawn: {later:?}"
    );
    assert_eq!(fold(&later), whole, "a later reader");
    // Read up to id 4: the message, the block and "He".
    let mut inside = fold(&[
        partial[0].clone(),
        partial[1].clone(),
        TurnEvent::Delta {
            message: 1,
            block: 0,
            text: "He".into(),
        },
    ]);
    let resumed = read(4).await;
    assert!(
        matches!(resumed[0], TurnEvent::Withdrawn { .. }),
        "{resumed:?}"
    );
    for event in &resumed {
        inside.apply(event);
    }
    assert_eq!(inside, whole, "a reader resuming inside the withdrawn text");
    let withdrawal = ids[3];
    let mut past = fold(
        &followed[..4]
            .iter()
            .map(|(_, e)| e.clone())
            .collect::<Vec<_>>(),
    );
    let rest = read(withdrawal).await;
    assert!(
        !rest
            .iter()
            .any(|e| matches!(e, TurnEvent::Withdrawn { .. }))
    );
    for event in &rest {
        past.apply(event);
    }
    assert_eq!(past, whole, "a reader that read the withdrawal");
}

#[tokio::test]
async fn a_blocks_deltas_are_kept_as_one_and_a_reader_following_them_reads_each_character_once() {
    use futures_util::StreamExt;
    let log = TurnLog::new();
    log.resume();
    log.push(TurnEvent::MessageStart {
        message: 1,
        role: Role::Assistant,
    });
    log.push(TurnEvent::BlockStart {
        message: 1,
        block: 0,
        kind: BlockKind::Text,
        call: None,
        is_error: false,
        pictures: Vec::new(),
    });
    let mut follower = Box::pin(log.read_from(0, Duration::from_secs(5)));
    let mut followed = vec![
        follower.next().await.expect("message start"),
        follower.next().await.expect("block start"),
    ];
    let text = "Hello, 日本語 👩‍💻 world.";
    for (n, character) in text.chars().enumerate() {
        if n % 3 != 2 {
            // The follower has read everything and waits for more.
            let waited = tokio::time::timeout(Duration::from_millis(1), follower.next()).await;
            assert!(waited.is_err(), "nothing to read yet: {waited:?}");
        }
        log.push(TurnEvent::Delta {
            message: 1,
            block: 0,
            text: character.to_string(),
        });
        // The follower reads after most deltas, so it waits at the growing delta's end, and
        // sometimes reads two characters at once.
        if n % 3 != 1 {
            followed.push(follower.next().await.expect("a delta"));
        }
    }
    log.push(TurnEvent::BlockEnd {
        message: 1,
        block: 0,
    });
    log.push(TurnEvent::TurnEnd {
        status: TurnStatus::Completed,
        reason: None,
    });
    followed.extend(follower.collect::<Vec<_>>().await);

    let kept = entries(&log);
    let deltas: Vec<&TurnEvent> = kept
        .iter()
        .map(|(_, event)| event)
        .filter(|event| matches!(event, TurnEvent::Delta { .. }))
        .collect();
    assert_eq!(
        deltas,
        [&TurnEvent::Delta {
            message: 1,
            block: 0,
            text: text.into(),
        }],
        "the log keeps the block's deltas as one"
    );
    let streamed: String = followed
        .iter()
        .filter_map(|(_, event)| match event {
            TurnEvent::Delta { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(streamed, text, "each character read once, in order");
    let ids: Vec<u64> = followed.iter().map(|(id, _)| *id).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
    assert_eq!(
        followed.last(),
        kept.last().map(|(id, e)| (*id, e.clone())).as_ref()
    );
    assert_eq!(
        read(&log, 0).await,
        kept,
        "a later reader reads the log as kept"
    );
}
