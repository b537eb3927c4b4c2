//! Compaction in the running server (rules C1, C2, C5, C6, C7, C11): the demo model with a small
//! window, real SQLite in a temporary folder, real HTTP on loopback.

use crate::common;

use common::Server;
use portal_core::stream::TurnEvent;
use portal_core::{
    Block, BlockKind, CompactionTrigger, Transcript, TurnKind, TurnStatus, validate,
};
use portal_identity::LOCAL_ORGANISATION;
use portal_model::ModelRegistry;
use portal_store::{CallPurpose, ConversationId, Storage};
use portal_store_sqlite::SqliteStorage;

/// The demo model's window: a few long messages reach 85 % of it.
const WINDOW: u64 = 6_000;

const FILLER: &str =
    "The Lisbon office needs its budget for desks, screens, rent and travel checked line by line. ";

/// Serves with the demo model at `pace` and a `window`-token context.
async fn start(data: &std::path::Path, window: u64, pace: f64) -> Server {
    common::start_with(
        data,
        pace,
        Some(ModelRegistry::demo_with_window(pace, window)),
    )
    .await
}

fn long_message(i: usize) -> String {
    format!(
        "Message {i}: please review the budget. {}",
        FILLER.repeat(14)
    )
}

fn compactions(t: &Transcript, turn: u32) -> Vec<(CompactionTrigger, usize)> {
    t.turn(turn)
        .expect("the turn")
        .messages
        .iter()
        .flat_map(|m| m.blocks.iter().enumerate())
        .filter_map(|(at, b)| match b {
            Block::Compaction { trigger, .. } => Some((*trigger, at)),
            _ => None,
        })
        .collect()
}

fn usage_purposes(data: &std::path::Path, id: &str) -> Vec<(u32, CallPurpose, String)> {
    let storage = SqliteStorage::open(data).expect("the same store");
    storage
        .usage(LOCAL_ORGANISATION, &ConversationId::new(id))
        .expect("usage rows")
        .into_iter()
        .map(|r| (r.turn, r.usage.purpose, r.usage.model))
        .collect()
}

#[tokio::test]
async fn c1_c11_long_messages_reach_85_percent_and_the_turn_compacts_before_its_call() {
    let data = tempfile::tempdir().expect("a temporary folder");
    let server = start(data.path(), WINDOW, 0.0).await;
    let id = server.conversation().await;
    let mut compacted = None;
    let mut sizes = Vec::new();
    let mut earlier = Transcript::new();
    for i in 1..=8 {
        earlier = server.transcript(&id).await;
        let turn = server.send(&id, &long_message(i)).await;
        let events = server.events(&id, turn, None).await;
        let t = server.transcript(&id).await;
        sizes.push(t.turn(turn).expect("the turn").context_tokens);
        if !compactions(&t, turn).is_empty() {
            compacted = Some((turn, events, t));
            break;
        }
    }
    let (turn, events, t) = compacted.unwrap_or_else(|| panic!("no compaction; sizes {sizes:?}"));
    assert!(
        turn >= 3,
        "a few messages first: compacted on {turn}, sizes {sizes:?}"
    );
    validate(&t).expect("a valid transcript after compaction");
    assert_eq!(
        t.turn(turn).expect("the turn").status,
        TurnStatus::Completed
    );
    assert_eq!(
        t.turns[..earlier.turns.len()],
        earlier.turns[..],
        "C5: no stored turn is rewritten or dropped"
    );
    assert_eq!(compactions(&t, turn), vec![(CompactionTrigger::Auto, 0)]);
    // The stream: the summary being written, then committed at the same place.
    let start = events
        .iter()
        .position(|(_, e)| {
            matches!(
                e,
                TurnEvent::BlockStart {
                    kind: BlockKind::Compaction,
                    block: 0,
                    ..
                }
            )
        })
        .expect("a compaction block starts");
    assert!(matches!(
        events[start + 1].1,
        TurnEvent::Compacted {
            trigger: CompactionTrigger::Auto,
            block: 0,
            ..
        }
    ));
    // C11: one compaction row on the turn's model; the turn's context size from its own calls.
    let rows = usage_purposes(data.path(), &id);
    let compaction_rows: Vec<_> = rows
        .iter()
        .filter(|(_, purpose, _)| *purpose == CallPurpose::Compaction)
        .collect();
    assert_eq!(
        compaction_rows,
        vec![&(turn, CallPurpose::Compaction, "demo".to_string())]
    );
    let after = t
        .turn(turn)
        .expect("the turn")
        .context_tokens
        .expect("a context size");
    assert!(
        after * 100 < WINDOW * 85,
        "the call after compaction read {after} tokens"
    );
}

/// Posts a message and returns the status and the error text, for refusals.
async fn refused(server: &Server, id: &str, text: &str) -> (u16, String) {
    let (status, body) = server.post_message(id, text).await;
    (
        status,
        body["error"].as_str().unwrap_or_default().to_string(),
    )
}

#[tokio::test]
async fn c2_an_overflow_compacts_and_the_call_is_retried() {
    let data = tempfile::tempdir().expect("a temporary folder");
    let server = start(data.path(), 128_000, 0.0).await;
    let id = server.conversation().await;
    for i in 1..=3 {
        let turn = server
            .send(&id, &format!("Question {i} about the budget"))
            .await;
        server.events(&id, turn, None).await;
    }
    // The demo refuses a message naming an overflow until the prompt replays a summary.
    let turn = server.send(&id, "Pretend this overflows the window").await;
    let events = server.events(&id, turn, None).await;
    let t = server.transcript(&id).await;
    assert_eq!(t.turns[3].status, TurnStatus::Completed, "{events:?}");
    assert_eq!(compactions(&t, turn), vec![(CompactionTrigger::Auto, 0)]);
    validate(&t).expect("valid");
    let rows = usage_purposes(data.path(), &id);
    assert_eq!(
        rows.iter()
            .filter(|r| r.1 == CallPurpose::Compaction)
            .count(),
        1
    );
}

#[tokio::test]
async fn c2_a_tail_too_large_for_the_window_fails_clearly_without_looping() {
    let data = tempfile::tempdir().expect("a temporary folder");
    let server = start(data.path(), WINDOW, 0.0).await;
    let id = server.conversation().await;
    let turn = server.send(&id, "Plan the budget").await;
    server.events(&id, turn, None).await;
    let before = server.transcript(&id).await;
    // One message alone larger than the window: no summary can make room.
    let turn = server.send(&id, &FILLER.repeat(400)).await;
    let events = server.events(&id, turn, None).await;
    let Some((_, TurnEvent::TurnEnd { status, reason })) = events.last() else {
        panic!("the turn ends: {events:?}");
    };
    assert_eq!(*status, TurnStatus::Failed);
    assert!(
        reason
            .as_deref()
            .is_some_and(|r| r.starts_with("The latest messages")
                && r.contains("context window")
                && r.ends_with('.')),
        "the person is told why, in a sentence: {reason:?}"
    );
    let t = server.transcript(&id).await;
    let last = t.turn(turn).expect("the turn");
    assert_eq!(last.status, TurnStatus::Failed);
    assert!(compactions(&t, turn).is_empty());
    assert!(
        last.trace
            .iter()
            .any(|e| matches!(e, portal_core::TraceEntry::CompactionFailed { reason } if reason.contains("window"))),
        "{:?}",
        last.trace
    );
    assert_eq!(t.turns[0], before.turns[0], "nothing earlier is rewritten");
    let rows = usage_purposes(data.path(), &id);
    assert!(
        rows.iter()
            .filter(|r| r.1 == CallPurpose::Compaction)
            .count()
            <= 1
    );
}

#[tokio::test]
async fn c6_c7_compact_over_http_and_its_refusals() {
    let data = tempfile::tempdir().expect("a temporary folder");
    // At the demo's own pace a turn runs for seconds, so a /compact sent at once meets it running.
    let server = start(data.path(), WINDOW, 1.0).await;
    let id = server.conversation().await;
    assert_eq!(refused(&server, &id, "/compact").await.0, 409, "C7 empty");
    let turn = server.send(&id, "Plan the Lisbon budget").await;
    let (status, error) = refused(&server, &id, "/compact keep the figures").await;
    assert_eq!(status, 409, "C7 running");
    assert!(
        error.starts_with("/compact cannot run while the latest turn is running"),
        "{error}"
    );
    server.events(&id, turn, None).await;
    // C7: refused while a turn waits for an approval.
    let paused = server
        .send(&id, "Please publish a note on the budget")
        .await;
    server.events(&id, paused, None).await;
    let (status, error) = refused(&server, &id, "/compact").await;
    assert_eq!(status, 409, "C7 paused");
    assert!(error.contains("waits for your answer"), "{error}");
    assert_eq!(
        server
            .act(&id, paused, "cancel", serde_json::json!({}))
            .await,
        202
    );
    let t = server.transcript(&id).await;
    assert_eq!(t.turn(paused).expect("the turn").status, TurnStatus::CutOff);
    let compact = server.send(&id, "/compact keep the figures").await;
    let events = server.events(&id, compact, None).await;
    let t = server.transcript(&id).await;
    let turn = t.turn(compact).expect("the turn");
    assert_eq!(
        (turn.kind, turn.status),
        (TurnKind::Compact, TurnStatus::Completed)
    );
    assert_eq!(
        turn.messages.len(),
        2,
        "C6: the command and the block, no agent loop"
    );
    assert_eq!(
        compactions(&t, compact),
        vec![(CompactionTrigger::Manual, 0)]
    );
    assert!(events.iter().any(|(_, e)| matches!(
        e,
        TurnEvent::Compacted {
            trigger: CompactionTrigger::Manual,
            ..
        }
    )));
    validate(&t).expect("valid");
    // C7: right after a compaction there is nothing new to summarise.
    let (status, error) = refused(&server, &id, "/compact").await;
    assert_eq!(status, 409);
    assert!(
        error.contains("nothing has been written since the last compaction"),
        "{error}"
    );
    // C1: the message after a manual compaction does not trigger another.
    let next = server.send(&id, "Now the Porto budget").await;
    server.events(&id, next, None).await;
    let t = server.transcript(&id).await;
    assert!(compactions(&t, next).is_empty());
    assert_eq!(
        t.turn(next).expect("the turn").status,
        TurnStatus::Completed,
        "{:#?}",
        t.turn(next).expect("the turn")
    );
}
