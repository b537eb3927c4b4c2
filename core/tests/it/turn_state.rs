//! The turn reducer: golden event logs folded into a turn's drawn state, and the state folded
//! from a stored turn's events equal to the state read from the stored turn itself (R10).
//!
//! Each log in `tests/fixtures/turn-state/` holds one `TurnEvent` as JSON per line; its golden
//! file in `tests/golden/turn-state/` shows what each event changed and the state at the end.
//! Regenerate with `UPDATE_EXPECT=1 cargo test -p portal-core --test it turn_state::`.

use std::fmt::Write;

use expect_test::expect_file;
use portal_core::stream::{TurnEvent, call_header, event_text, pictures};
use portal_core::{Awaiting, Block, CompactionState, Transcript, TurnKind, TurnState, TurnStatus};

use crate::fixtures;

/// Folds the log `name` into a turn opened by "Hello" and compares what it shows with its golden.
fn check(name: &str) {
    let log = std::fs::read_to_string(format!(
        "{}/../tests/fixtures/turn-state/{name}.jsonl",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("the event log exists");
    let mut state = TurnState::opened(1, "Hello");
    let mut shown = String::from("events:\n");
    for line in log.lines().filter(|l| !l.trim().is_empty()) {
        let event: TurnEvent = serde_json::from_str(line).expect("each line is a turn event");
        let change = state.apply(&event);
        let _ = writeln!(shown, "  {} -> {change:?}", event.name());
    }
    shown.push_str(&describe(&state));
    expect_file![format!("../../../tests/golden/turn-state/{name}.txt")].assert_eq(&shown);
}

fn describe(state: &TurnState) -> String {
    let mut s = String::from("state:\n");
    let _ = writeln!(s, "  status: {}", state.status.as_str());
    let _ = writeln!(s, "  end_reason: {:?}", state.end_reason);
    let _ = writeln!(s, "  failed compactions: {}", state.failed_compactions);
    let _ = writeln!(s, "  messages: {:?}", state.messages);
    let _ = writeln!(s, "  awaiting: {:?}", state.awaiting());
    let _ = writeln!(s, "  answer: {:?}", state.answer());
    let _ = writeln!(s, "  newest divider: {:?}", state.newest_divider());
    s.push_str("  blocks:\n");
    for (block, drawn) in state.blocks.iter().zip(state.drawn()) {
        let _ = write!(
            s,
            "    {}.{} {} as {drawn:?}{}",
            block.message,
            block.block,
            block.kind,
            if block.ended { ", whole" } else { ", open" },
        );
        if block.is_error {
            s.push_str(", error");
        }
        if let Some(call) = &block.call {
            let _ = write!(s, ", call {}", call.id);
            if !call.name.is_empty() {
                let _ = write!(s, " {}", call.name);
            }
        }
        match &block.compaction {
            Some(CompactionState::Written(divider)) => {
                let _ = write!(s, ", divider {divider:?}");
            }
            Some(other) => {
                let _ = write!(s, ", compaction {other:?}");
            }
            None => {}
        }
        let _ = writeln!(s, ": {:?}", block.text);
    }
    s
}

#[test]
fn a_streamed_answer_with_thinking() {
    check("answer-streamed");
}

// R1: the text before the call is narration; the text after it is the answer.
#[test]
fn r1_a_tool_call_then_the_answer() {
    check("tool-call-then-answer");
}

// A paused turn waits on the approvals of its last assistant message only: after the first
// round is answered and the turn pauses again, it waits on the second call alone.
#[test]
fn a_second_round_of_approvals_awaits_only_its_own_call() {
    check("two-approval-rounds");
}

// A resumed turn: the user's answer to the question is the user's, not an assistant block.
#[test]
fn a_question_answered_and_the_turn_resumed() {
    check("question-answered");
}

// A turn followed again from its start (a resumed follower) draws nothing twice.
#[test]
fn events_already_folded_change_nothing() {
    check("resumed-from-start");
}

// R12, C12: a written compaction is a divider whose summary has its references taken out.
#[test]
fn r12_a_written_compaction_is_a_divider() {
    check("compaction-written");
}

// C5: a compaction that ends without its summary failed and is drawn as nothing.
#[test]
fn c5_a_compaction_that_ends_unwritten_failed() {
    check("compaction-failed");
}

// C5: nothing of a failed compaction is stored, so the reply is written in its place; it is
// drawn there, and the failed compaction stays drawn as nothing.
#[test]
fn c5_the_reply_after_a_failed_compaction_takes_its_place() {
    check("compaction-failed-then-reply-in-its-place");
}

// A failed turn keeps its reason; the open blocks are whole, an unwritten compaction failed.
#[test]
fn c5_a_failed_turn_keeps_its_reason() {
    check("failed-with-reason");
}

// C2: the output of a call that reported a context overflow is withdrawn; the compaction and
// the retried call take its place.
#[test]
fn c2_a_withdrawn_call_is_dropped_and_the_retry_drawn_in_its_place() {
    check("withdrawn-then-retried");
}

/// The events of a fixture log, in order.
fn fixture_events(name: &str) -> Vec<TurnEvent> {
    std::fs::read_to_string(format!(
        "{}/../tests/fixtures/turn-state/{name}.jsonl",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("the event log exists")
    .lines()
    .filter(|l| !l.trim().is_empty())
    .map(|l| serde_json::from_str(l).expect("a turn event"))
    .collect()
}

/// Turn 1, opened by "Hello", with its assistant message holding `blocks` (none: only the user's
/// message is stored).
fn turn_holding(status: TurnStatus, blocks: Vec<Block>) -> portal_core::Turn {
    let mut messages = vec![portal_core::Message::new(
        portal_core::Role::User,
        vec![Block::text("Hello")],
    )];
    if !blocks.is_empty() {
        messages.push(portal_core::Message::new(
            portal_core::Role::Assistant,
            blocks,
        ));
    }
    portal_core::Turn {
        index: 1,
        kind: TurnKind::Chat,
        status,
        effort: None,
        context_tokens: None,
        trace: Vec::new(),
        messages,
    }
}

// C2: a follower of the whole stream, and a page opened at any point of it (before the
// withdrawal, between it and the compaction, during the retry), end with the blocks storage
// holds. A page that reads the stream after the withdrawal does not get the withdrawn events
// (the server's log drops them), only the withdrawal itself.
#[test]
fn c2_a_withdrawal_folds_to_the_stored_turn_whatever_the_page_read_first() {
    let events = fixture_events("withdrawn-then-retried");
    let withdrawal = events
        .iter()
        .position(|e| matches!(e, TurnEvent::Withdrawn { .. }))
        .expect("a withdrawal");
    let late: Vec<TurnEvent> = events[withdrawal..].to_vec();
    let compaction = Block::Compaction {
        summary: "## Requests\n- Plan the budget".into(),
        trigger: portal_core::CompactionTrigger::Auto,
        covers: portal_core::TurnsCovered { first: 1, last: 3 },
        kept_messages: 0,
    };
    let whole = TurnState::stored(&turn_holding(
        TurnStatus::Completed,
        vec![compaction.clone(), Block::text("The whole answer.")],
    ));

    let mut followed = TurnState::opened(1, "Hello");
    for event in &events {
        followed.apply(event);
    }
    assert_eq!(followed, whole, "a follower of the whole stream");

    let thinking = Block::Thinking {
        text: "The budget has four lines.".into(),
    };
    let stored_at_open = [
        (
            "before the withdrawal",
            vec![thinking.clone(), Block::text("Here is the")],
        ),
        ("before the withdrawal, in thinking", vec![thinking]),
        ("after the withdrawal", vec![]),
        ("after the compaction", vec![compaction.clone()]),
        (
            "during the retry",
            vec![compaction.clone(), Block::text("The who")],
        ),
    ];
    for (when, blocks) in stored_at_open {
        let part = turn_holding(TurnStatus::Running, blocks);
        let before = when.starts_with("before");
        let reads: &[(&str, &[TurnEvent])] = if before {
            &[
                ("the whole stream", &events),
                ("the stream after it", &late),
            ]
        } else {
            &[("the stream after it", &late)]
        };
        for (read, log) in reads {
            let mut resumed = TurnState::resumed(&part);
            let stored_blocks = resumed.blocks.len();
            for event in *log {
                let change = resumed.apply(event);
                if !before {
                    assert!(
                        !matches!(change, portal_core::Change::Withdrawn { from } if from < stored_blocks),
                        "opened {when}, reading {read}: a stored block of the retry withdrawn"
                    );
                }
            }
            assert_eq!(resumed, whole, "opened {when}, reading {read}");
        }
    }
}

/// The events a stored turn streams, as the server's writer publishes them.
fn events_of(turn: &portal_core::Turn) -> Vec<TurnEvent> {
    let mut events = Vec::new();
    for (m, message) in turn.messages.iter().enumerate().skip(1) {
        events.push(TurnEvent::MessageStart {
            message: m,
            role: message.role,
        });
        for (b, block) in message.blocks.iter().enumerate() {
            events.push(TurnEvent::BlockStart {
                message: m,
                block: b,
                kind: block.kind(),
                call: call_header(block, &message.blocks),
                is_error: matches!(block, Block::ToolResult { is_error: true, .. }),
                pictures: pictures(block).to_vec(),
            });
            match block {
                Block::Compaction {
                    summary,
                    trigger,
                    covers,
                    ..
                } => events.push(TurnEvent::Compacted {
                    message: m,
                    block: b,
                    trigger: *trigger,
                    covers: *covers,
                    summary: summary.clone(),
                }),
                other => {
                    if let Some(text) = event_text(other).filter(|t| !t.is_empty()) {
                        events.push(TurnEvent::Delta {
                            message: m,
                            block: b,
                            text,
                        });
                    }
                    events.push(TurnEvent::BlockEnd {
                        message: m,
                        block: b,
                    });
                }
            }
        }
    }
    events.push(TurnEvent::TurnEnd {
        status: turn.status,
        reason: turn.end_reason().map(str::to_string),
    });
    events
}

// R10: a reply that streamed and settled is drawn from the same state as the reloaded one.
#[test]
fn r10_a_streamed_turn_folds_to_the_state_of_the_stored_turn() {
    let dir = format!("{}/../tests/fixtures/prompt", env!("CARGO_MANIFEST_DIR"));
    let mut stored: Vec<(String, Transcript)> = fixtures::TRANSCRIPTS
        .iter()
        .filter_map(|(name, json)| {
            Some((name.to_string(), portal_core::parse_transcript(json).ok()?))
        })
        .collect();
    for file in std::fs::read_dir(dir).expect("the prompt fixtures exist") {
        let path = file.expect("a readable entry").path();
        let fixture: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("readable"))
                .expect("a prompt fixture is JSON");
        let transcript = serde_json::from_value(fixture["transcript"].clone())
            .expect("a prompt fixture holds a transcript");
        stored.push((path.display().to_string(), transcript));
    }
    let mut checked = 0;
    for (name, transcript) in &stored {
        for turn in &transcript.turns {
            let stored = TurnState::stored(turn);
            let mut streamed = TurnState::opened(turn.index, stored.user_text.clone());
            for event in events_of(turn) {
                streamed.apply(&event);
            }
            assert_eq!(streamed, stored, "turn {} of {name}", turn.index);
            let awaiting = match turn.status {
                TurnStatus::Paused => turn.awaiting(),
                _ => Awaiting::default(),
            };
            assert_eq!(
                streamed.awaiting(),
                awaiting,
                "turn {} of {name}",
                turn.index
            );
            checked += 1;
        }
    }
    assert!(checked > 50, "only {checked} stored turns were checked");
}

/// Every stored fixture turn.
fn stored_turns() -> Vec<(String, portal_core::Turn)> {
    fixtures::TRANSCRIPTS
        .iter()
        .filter_map(|(name, json)| {
            Some((name.to_string(), portal_core::parse_transcript(json).ok()?))
        })
        .flat_map(|(name, transcript)| transcript.turns.into_iter().map(move |t| (name.clone(), t)))
        .collect()
}

/// `turn` as storage held it while it was running, up to block `b` of message `m`, whose text is
/// cut after `cut` bytes when it streams (text or thinking).
fn running_part(turn: &portal_core::Turn, m: usize, b: usize, cut: usize) -> portal_core::Turn {
    let mut part = turn.clone();
    part.status = TurnStatus::Running;
    part.trace.clear();
    part.messages.truncate(m + 1);
    let blocks = &mut part.messages[m].blocks;
    blocks.truncate(b + 1);
    if let Some(Block::Text { text } | Block::Thinking { text }) = blocks.last_mut() {
        text.truncate(cut);
    }
    part
}

// A running turn opened from storage and followed from its start draws what was stored at once
// and grows by the rest alone: whatever storage held when the page read it, the events read
// again fold it to the state of the whole turn, and a block cut short grows by exactly its rest.
#[test]
fn a_resumed_turn_grows_by_what_storage_did_not_hold() {
    let mut checked = 0;
    for (name, turn) in stored_turns() {
        let whole = TurnState::stored(&turn);
        let events = events_of(&turn);
        for (m, message) in turn.messages.iter().enumerate().skip(1) {
            for (b, block) in message.blocks.iter().enumerate() {
                let text = match block {
                    Block::Text { text } | Block::Thinking { text } => text.as_str(),
                    _ => "",
                };
                let cuts: Vec<usize> = (0..=text.len())
                    .filter(|&at| text.is_char_boundary(at))
                    .collect();
                for cut in cuts {
                    let part = running_part(&turn, m, b, cut);
                    let mut resumed = TurnState::resumed(&part);
                    let stored_blocks = resumed.blocks.len();
                    let mut grown = String::new();
                    for event in &events {
                        match resumed.apply(event) {
                            portal_core::Change::Grew { at, text } if at + 1 == stored_blocks => {
                                grown.push_str(&text)
                            }
                            portal_core::Change::Grew { at, .. }
                            | portal_core::Change::Started { at }
                                if at < stored_blocks =>
                            {
                                panic!(
                                    "{name} turn {} cut at {m}.{b}+{cut}: block {at} drawn twice",
                                    turn.index
                                )
                            }
                            _ => {}
                        }
                    }
                    let context = format!("{name} turn {} cut at {m}.{b}+{cut}", turn.index);
                    assert_eq!(resumed, whole, "{context}");
                    if !text.is_empty() {
                        assert_eq!(grown, text[cut..], "{context}");
                    }
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 300, "only {checked} cuts were checked");
}

// A compaction that failed where the reply now stands is read again in a resumed turn: its end
// does not end the reply that took its place.
#[test]
fn c5_a_resumed_turn_reads_a_failed_compaction_again_without_ending_the_reply() {
    let log = std::fs::read_to_string(format!(
        "{}/../tests/fixtures/turn-state/compaction-failed-then-reply-in-its-place.jsonl",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("the event log exists");
    let events: Vec<TurnEvent> = log
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("a turn event"))
        .collect();
    let mut streamed = TurnState::opened(1, "Hello");
    for event in &events {
        streamed.apply(event);
    }
    let reply = streamed
        .blocks
        .iter()
        .find(|b| b.kind == portal_core::BlockKind::Text)
        .expect("the reply")
        .clone();
    // Storage held the reply's first character when the page opened the turn.
    let first = reply.text.chars().next().expect("a reply").len_utf8();
    let mut messages: Vec<portal_core::Message> = streamed
        .messages
        .iter()
        .map(|role| portal_core::Message {
            role: *role,
            blocks: Vec::new(),
            attachments: Vec::new(),
        })
        .collect();
    messages[0].blocks.push(Block::text("Hello"));
    messages[reply.message]
        .blocks
        .push(Block::text(&reply.text[..first]));
    messages.truncate(reply.message + 1);
    let part = portal_core::Turn {
        index: 1,
        kind: TurnKind::Chat,
        status: TurnStatus::Running,
        effort: None,
        context_tokens: None,
        trace: Vec::new(),
        messages,
    };
    let mut resumed = TurnState::resumed(&part);
    let mut grown = String::new();
    for event in &events {
        if let portal_core::Change::Grew { text, .. } = resumed.apply(event) {
            grown.push_str(&text);
        }
    }
    assert_eq!(grown, reply.text[first..]);
    assert_eq!(resumed.status, streamed.status);
}

#[test]
fn transcript_turn_finds_turns_by_their_number() {
    let mut transcript = Transcript::new();
    assert!(transcript.turn(0).is_none());
    assert!(transcript.turn(1).is_none());
    assert!(transcript.turn(u32::MAX).is_none());
    transcript.turns.push(portal_core::Turn {
        index: 1,
        kind: TurnKind::Chat,
        status: TurnStatus::Running,
        effort: None,
        context_tokens: None,
        trace: Vec::new(),
        messages: Vec::new(),
    });
    assert_eq!(transcript.turn(1).map(|t| t.index), Some(1));
    assert!(transcript.turn(0).is_none());
    assert!(transcript.turn(2).is_none());
    assert!(transcript.turn_mut(1).is_some());
}

#[test]
fn turn_status_names_read_back() {
    for status in TurnStatus::ALL {
        assert_eq!(status.as_str().parse::<TurnStatus>(), Ok(status));
        let json = serde_json::to_string(&status).expect("a status serialises");
        assert_eq!(json, format!("\"{}\"", status.as_str()));
    }
    assert_eq!(TurnStatus::CutOff.to_string(), "cut off");
    let unknown = "cut off".parse::<TurnStatus>().unwrap_err();
    assert!(unknown.to_string().contains("cut_off"), "{unknown}");
}

// The golden logs cover every kind of event, each named as the stream names it.
#[test]
fn the_event_logs_cover_every_event_kind() {
    let dir = format!(
        "{}/../tests/fixtures/turn-state",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut seen = std::collections::BTreeSet::new();
    for file in std::fs::read_dir(dir).expect("the event logs exist") {
        let log =
            std::fs::read_to_string(file.expect("a readable entry").path()).expect("readable");
        for line in log.lines().filter(|l| !l.trim().is_empty()) {
            let event: TurnEvent = serde_json::from_str(line).expect("a turn event");
            let tag: serde_json::Value = serde_json::from_str(line).expect("JSON");
            assert_eq!(tag["event"], event.name(), "{line}");
            seen.insert(event.name());
        }
    }
    let every: std::collections::BTreeSet<&str> = TurnEvent::NAMES.into_iter().collect();
    assert_eq!(seen, every);
}

// Issue 32: a paused turn opened from storage and decided or answered in the page is followed
// from its start; the pauses its events bring again are already drawn and change nothing, so the
// turn stays running, and its cards say the decision at once.
#[test]
fn a_reopened_paused_turn_decided_here_stays_running_through_its_replayed_pauses() {
    let mut checked = 0;
    for (name, turn) in stored_turns() {
        if turn.status != TurnStatus::Paused {
            continue;
        }
        let mut state = TurnState::stored(&turn);
        let awaiting = state.awaiting();
        if awaiting.approvals.is_empty() {
            state.answered();
        } else {
            state.decide(&awaiting.approvals, false);
            for call in &awaiting.approvals {
                assert_eq!(state.decision(call), Some(false), "{name}");
            }
            let declined = (0..state.blocks.len())
                .filter_map(|at| portal_core::tool_card::tool_card(&state, at, &Default::default()))
                .filter(|card| awaiting.approvals.contains(&card.call_id))
                .all(|card| card.state == portal_core::tool_card::ToolState::Declined);
            assert!(declined, "{name}: the cards say Declined at once");
        }
        for event in portal_core::turn_run::replay(&turn) {
            assert_eq!(
                state.apply(&event),
                portal_core::Change::Nothing,
                "{name}: {event:?} is already drawn"
            );
        }
        assert_eq!(state.status, TurnStatus::Running, "{name}");
        // The next pause is a new one.
        let change = state.apply(&TurnEvent::TurnEnd {
            status: TurnStatus::Paused,
            reason: None,
        });
        assert_eq!(
            change,
            portal_core::Change::TurnEnded {
                status: TurnStatus::Paused
            },
            "{name}"
        );
        checked += 1;
    }
    assert!(checked >= 2, "only {checked} paused turns were checked");
}

// Issue 32: a turn the person stopped reads "Stopped" and offers Regenerate; one the server cut
// off reads "Interrupted" and offers Retry with why; a failed one offers Retry.
#[test]
fn a_turn_the_server_cut_off_reads_interrupted_and_offers_retry() {
    let ended = |status, reason: Option<&str>| {
        let mut state = TurnState::opened(1, "Hello");
        state.apply(&TurnEvent::TurnEnd {
            status,
            reason: reason.map(str::to_string),
        });
        state
    };
    let stopped = ended(TurnStatus::CutOff, None);
    assert_eq!(stopped.cut_off_note(), Some("Stopped"));
    assert_eq!(stopped.retry_reason(), None);
    let interrupted = ended(TurnStatus::CutOff, Some("The server stopped."));
    assert_eq!(interrupted.cut_off_note(), Some("Interrupted"));
    assert_eq!(
        interrupted.retry_reason(),
        Some(Some("The server stopped."))
    );
    let failed = ended(TurnStatus::Failed, None);
    assert_eq!(failed.cut_off_note(), None);
    assert_eq!(failed.retry_reason(), Some(None));
    assert_eq!(ended(TurnStatus::Completed, None).retry_reason(), None);
}

// Issue 32: the person's answer to a question is part of the turn as drawn, from storage or
// from the events, once however often the events are read again.
#[test]
fn the_persons_answers_are_drawn_from_storage_and_events_once() {
    let mut checked = 0;
    // The server writes an answer into the turn that asked: turn 1 of the clarification fixture
    // with its answer and the reply after it.
    let (_, asked_turn) = stored_turns()
        .into_iter()
        .find(|(name, _)| name == "valid-clarification-then-answer")
        .expect("the fixture");
    let mut answered = asked_turn.clone();
    answered.status = TurnStatus::Completed;
    answered.messages.push(portal_core::Message::new(
        portal_core::Role::User,
        vec![Block::text("The one by the lake")],
    ));
    answered.messages.push(portal_core::Message::new(
        portal_core::Role::Assistant,
        vec![Block::text("Booked the lake hotel.")],
    ));
    let turns = stored_turns()
        .into_iter()
        .chain([("answered in its turn".to_string(), answered)]);
    for (name, turn) in turns {
        let stored = TurnState::stored(&turn);
        let asked: Vec<String> = turn
            .messages
            .iter()
            .skip(1)
            .filter(|m| m.role == portal_core::Role::User)
            .map(|m| {
                m.blocks
                    .iter()
                    .filter_map(|b| match b {
                        Block::Text { text } => Some(text.clone()),
                        _ => None,
                    })
                    .collect::<Vec<_>>()
                    .join("\n\n")
            })
            .collect();
        let drawn: Vec<String> = stored.answers.iter().map(|a| a.text.clone()).collect();
        assert_eq!(drawn, asked, "{name}");
        let mut streamed = TurnState::opened(turn.index, stored.user_text.clone());
        let mut again = TurnState::stored(&turn);
        for event in events_of(&turn) {
            streamed.apply(&event);
            again.apply(&event);
        }
        let texts = |s: &TurnState| s.answers.iter().map(|a| a.text.clone()).collect::<Vec<_>>();
        assert_eq!(texts(&streamed), asked, "{name}: from the events");
        assert_eq!(texts(&again), asked, "{name}: read again, nothing twice");
        checked += usize::from(!asked.is_empty());
    }
    assert!(checked >= 1, "no turn with an answer was checked");
}
