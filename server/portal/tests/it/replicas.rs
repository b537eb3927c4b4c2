//! Replicas (issue 18): two `portal serve` processes on one PostgreSQL database, each on its own
//! loopback port, with a 2 s turn lease (`--turn-lease-seconds 2`). A turn runs on the replica it
//! was started or resumed through; its events can be read through either; cancels, decisions
//! and answers may be posted to either; a replica that dies leaves its running turns to be cut
//! off by another once their lease runs out.
//!
//! Each test makes its own schema on the server `PORTAL_TEST_POSTGRES` names and is skipped with
//! a note without it (failed when `PORTAL_REQUIRE_POSTGRES` is set). Outcomes are polled with a
//! deadline, never waited for with a fixed sleep; the times measured are printed
//! (`--nocapture`).

use crate::common;
use crate::replica_support;

use std::time::Instant;

use common::{Server, assert_same_content, until};
use portal_core::stream::TurnEvent;
use portal_core::{Block, TurnStatus};
use replica_support::{
    HUNG, LEASE, Pair, Timed, end_status, lags_ms, percentile, read_events, read_rest, read_to_end,
    read_until_text, stored_status, stored_text_blocks, text_blocks, untimed,
};
use serde_json::json;

/// A message the demo answers with a tool call (`count_characters`) and a long reply: 13 s at
/// pace 1, 196 events.
const LONG_TURN: &str = "Tell me about scripts";

/// The block turn `turn` paused on: its approval request or its question.
async fn awaited(server: &Server, id: &str, turn: u32) -> Block {
    let transcript = server.transcript(id).await;
    let paused = transcript.turn(turn).expect("the paused turn");
    assert_eq!(paused.status, TurnStatus::Paused);
    paused
        .messages
        .last()
        .and_then(|m| m.blocks.last())
        .cloned()
        .expect("the block the turn waits on")
}

// What lands first: a second server on a database in use is no longer refused. Both replicas
// serve the same conversations, whichever one made them.
#[tokio::test]
async fn two_replicas_start_on_one_database_and_serve_the_same_conversations() {
    let Some(pair) = Pair::start("0") else {
        return;
    };
    let (a, b) = (&pair.a.server, &pair.b.server);
    let made_on_a = a.conversation().await;
    let made_on_b = b.conversation().await;
    for server in [a, b] {
        let ids = server.conversation_ids().await;
        assert!(
            ids.contains(&made_on_a) && ids.contains(&made_on_b),
            "{ids:?}"
        );
    }
    let turn = b.send(&made_on_a, "Hello").await;
    let events = read_to_end(b, &made_on_a, turn, None).await;
    assert_eq!(end_status(&untimed(&events)), TurnStatus::Completed);
    assert_eq!(
        a.transcript(&made_on_a).await,
        b.transcript(&made_on_a).await
    );
}

// Issue 18: a turn started through replica A and followed from its start through replica B's
// events endpoint streams the same events to the end: the same text in every block, and every
// event but the deltas with the same id as through A; the text is the stored turn's. B reads it
// live, not after the end.
#[tokio::test]
async fn a_turn_run_on_one_replica_is_followed_live_through_the_other_with_the_same_text() {
    let Some(pair) = Pair::start("0.3") else {
        return;
    };
    let (a, b) = (&pair.a.server, &pair.b.server);
    let id = a.conversation().await;
    let turn = a.send(&id, LONG_TURN).await;
    let (through_a, through_b) = tokio::join!(
        read_to_end(a, &id, turn, None),
        read_to_end(b, &id, turn, None)
    );
    let (events_a, events_b) = (untimed(&through_a), untimed(&through_b));
    assert_eq!(end_status(&events_a), TurnStatus::Completed);
    assert_same_content(&events_b, &events_a);

    let lags = lags_ms(&through_a, &through_b);
    println!(
        "B read {} events ({} through A); B's lag behind A p50 / p99 / max: {:.1} / {:.1} / {:.1} ms",
        through_b.len(),
        through_a.len(),
        percentile(&lags, 0.5),
        percentile(&lags, 0.99),
        lags.last().copied().unwrap_or_default()
    );
    let (first_on_b, end_on_a) = (through_b[0].2, through_a.last().expect("the end").2);
    assert!(
        first_on_b < end_on_a,
        "B read its first event only after the turn ended on A: it did not follow it live"
    );

    let (stored_a, stored_b) = (a.transcript(&id).await, b.transcript(&id).await);
    assert_eq!(
        stored_a, stored_b,
        "both replicas store the same conversation"
    );
    assert_eq!(stored_status(&stored_b, turn), TurnStatus::Completed);
    assert_eq!(text_blocks(&events_b), stored_text_blocks(&stored_b, turn));
}

// Issue 18: replica A dies (SIGKILL) mid-turn while a reader follows the turn through replica
// B. B finds A's lease run out and records the turn cut off within the lease and one sweep
// (asserted: within 3 leases); the reader gets the cut-off end, having missed none of the text
// the turn stored; and the conversation goes on through B.
#[tokio::test]
async fn a_replica_killed_mid_turn_leaves_it_cut_off_by_the_other_and_the_conversation_goes_on() {
    let Some(mut pair) = Pair::start("1") else {
        return;
    };
    let id = pair.a.server.conversation().await;
    let turn = pair.a.server.send(&id, LONG_TURN).await;
    let mut follower = pair.b.server.stream(&id, turn, None).await;
    let mut read: Vec<Timed> = Vec::new();
    read_until_text(&mut follower, &mut read, 40).await;

    pair.a.kill();
    let killed = Instant::now();
    let limit = 3 * LEASE;
    let b = &pair.b.server;
    let recorded = until("B records the turn cut off", limit, || async {
        let transcript = b.transcript(&id).await;
        (stored_status(&transcript, turn) == TurnStatus::CutOff).then_some(())
    });
    let followed = async {
        tokio::time::timeout(limit, read_rest(&mut follower, &mut read))
            .await
            .unwrap_or_else(|_| panic!("the follower on B got no end within {limit:?}"));
        killed.elapsed()
    };
    let (((), cut_off_after), ended_after) = tokio::join!(recorded, followed);
    println!(
        "lease {LEASE:?}: B recorded the turn cut off {cut_off_after:?} after A was killed; \
         the follower on B got its end after {ended_after:?}"
    );
    assert!(cut_off_after <= limit, "cut off after {cut_off_after:?}");

    let read = untimed(&read);
    assert_eq!(end_status(&read), TurnStatus::CutOff, "{:?}", read.last());
    // Text A stored but had not passed on when it died is still text the follower must get:
    // event ids are places in the stored turn, and a reload shows the stored text.
    let transcript = b.transcript(&id).await;
    assert_eq!(
        text_blocks(&read),
        stored_text_blocks(&transcript, turn),
        "the follower read exactly the text the cut-off turn stored"
    );
    assert_same_content(&read_events(b, &id, turn, None).await, &read);

    let next = b.send(&id, "Tell me about emoji").await;
    let events = untimed(&read_to_end(b, &id, next, None).await);
    assert_eq!(end_status(&events), TurnStatus::Completed);
    let transcript = b.transcript(&id).await;
    assert_eq!(stored_status(&transcript, turn), TurnStatus::CutOff);
    assert_eq!(stored_status(&transcript, next), TurnStatus::Completed);
}

// Issue 18: a turn that paused on replica A for an approval resumes when the decision is posted
// to replica B, and completes; its events read through either replica are the same, numbered
// on from the pause.
#[tokio::test]
async fn a_decision_posted_to_one_replica_resumes_a_turn_paused_on_the_other() {
    let Some(pair) = Pair::start("0.2") else {
        return;
    };
    let (a, b) = (&pair.a.server, &pair.b.server);
    let id = a.conversation().await;
    let turn = a.send(&id, "Please publish a note on emoji").await;
    let paused = read_events(a, &id, turn, None).await;
    assert_eq!(end_status(&paused), TurnStatus::Paused);
    let Block::ApprovalRequest { call_id, .. } = awaited(b, &id, turn).await else {
        panic!("the turn waits on an approval");
    };

    let decision = json!({ "call_id": call_id, "approve": true });
    assert_eq!(b.act(&id, turn, "decision", decision).await, 202);
    resumed_through_both(&pair, &id, turn, &paused).await;
    let transcript = a.transcript(&id).await;
    let approved = transcript
        .turn(turn)
        .expect("the turn")
        .messages
        .iter()
        .any(|m| {
            m.blocks.iter().any(|block| {
            matches!(block, Block::ToolResult { call_id: c, is_error: false, .. } if *c == call_id)
        })
        });
    assert!(approved, "the approved call ran: {transcript:?}");
}

// Issue 18: likewise an answer to the question a turn asked on replica A, posted to replica B.
#[tokio::test]
async fn an_answer_posted_to_one_replica_resumes_a_turn_asking_on_the_other() {
    let Some(pair) = Pair::start("0.2") else {
        return;
    };
    let (a, b) = (&pair.a.server, &pair.b.server);
    let id = a.conversation().await;
    let turn = a.send(&id, "Please clarify scripts").await;
    let paused = read_events(a, &id, turn, None).await;
    assert_eq!(end_status(&paused), TurnStatus::Paused);
    assert!(matches!(
        awaited(b, &id, turn).await,
        Block::ClarificationRequest { .. }
    ));

    let answer = json!({ "text": "The scripts, please." });
    assert_eq!(b.act(&id, turn, "answer", answer).await, 202);
    resumed_through_both(&pair, &id, turn, &paused).await;
}

/// After a decision or an answer went to B: the turn's events read on from the pause through A
/// and from its start through B are the same turn, completed, and the text is the stored one.
/// A reads on as soon as B has answered 202, as a browser behind a load balancer would: a
/// replica that has not heard of the resumption yet must not answer with the pause again.
async fn resumed_through_both(pair: &Pair, id: &str, turn: u32, paused: &[(u64, TurnEvent)]) {
    let (a, b) = (&pair.a.server, &pair.b.server);
    let paused_at = paused.last().map(|(at, _)| *at);
    let (rest_on_a, whole_on_b) = tokio::join!(
        read_events(a, id, turn, paused_at),
        read_events(b, id, turn, None)
    );
    assert_eq!(
        rest_on_a.first().map(|(at, _)| *at),
        paused_at.map(|at| at + 1),
        "A reads on right after the pause: {rest_on_a:?}"
    );
    assert_eq!(end_status(&rest_on_a), TurnStatus::Completed);
    let mut joined = paused.to_vec();
    joined.extend(rest_on_a);
    assert_same_content(&joined, &whole_on_b);
    let transcript = b.transcript(id).await;
    assert_eq!(transcript, a.transcript(id).await);
    assert_eq!(stored_status(&transcript, turn), TurnStatus::Completed);
    assert_eq!(
        text_blocks(&whole_on_b),
        stored_text_blocks(&transcript, turn)
    );
}

// Issue 18: B answers 202 to an answer once it has claimed the paused turn and started its run,
// while the run's first log changes (its `resume` first) are still on their way to the
// database. A read through A in that window finds the turn running in storage and its published
// log paused, and waits for the resumed run instead of answering with the pause again. The test
// holds off every write to the published logs from before the answer until A has taken the
// read, so A takes it in that window every time.
#[tokio::test]
async fn a_read_through_one_replica_waits_for_a_resumption_the_other_has_not_published_yet() {
    let Some(pair) = Pair::start("0.2") else {
        return;
    };
    let (a, b) = (&pair.a.server, &pair.b.server);
    let id = a.conversation().await;
    let turn = a.send(&id, "Please clarify scripts").await;
    let paused = read_events(a, &id, turn, None).await;
    assert_eq!(end_status(&paused), TurnStatus::Paused);
    // Read through B, which follows the published log: the pause is published.
    assert_eq!(read_events(b, &id, turn, None).await.last(), paused.last());
    let paused_at = paused.last().map(|(at, _)| *at);

    let held = pair.database.hold_writes("turn_log");
    let answer = json!({ "text": "The scripts, please." });
    assert_eq!(b.act(&id, turn, "answer", answer).await, 202);
    // The stream is open once A has chosen the log it reads from.
    let mut on_a = a.stream(&id, turn, paused_at).await;
    drop(held);
    let mut rest: Vec<Timed> = Vec::new();
    tokio::time::timeout(HUNG, read_rest(&mut on_a, &mut rest))
        .await
        .unwrap_or_else(|_| panic!("the read through A did not end within {HUNG:?}"));
    let rest = untimed(&rest);
    assert_eq!(
        rest.first().map(|(at, _)| *at),
        paused_at.map(|at| at + 1),
        "A reads on right after the pause: {rest:?}"
    );
    assert_eq!(end_status(&rest), TurnStatus::Completed);
    let mut joined = paused;
    joined.extend(rest);
    assert_same_content(&joined, &read_events(b, &id, turn, None).await);
}

// Issue 18: a reader following through replica B a turn that runs on replica A loses B
// (SIGKILL) mid-turn; B starts again on the same database, which leaves A's turn running, and
// the reader resumes there with its `Last-Event-ID`: it gets exactly the events after that id,
// nothing lost and nothing repeated, the same turn a reader through A read whole. After the
// turn's end, B restarted once more resumes every id the same way.
#[tokio::test]
async fn a_reader_resumes_with_last_event_id_on_a_restarted_replica_losing_and_repeating_nothing() {
    let Some(mut pair) = Pair::start("1") else {
        return;
    };
    let id = pair.a.server.conversation().await;
    let turn = pair.a.server.send(&id, LONG_TURN).await;
    let reference = {
        let a = Server::at(pair.a.server.base.clone());
        let id = id.clone();
        tokio::spawn(async move { untimed(&read_to_end(&a, &id, turn, None).await) })
    };
    let mut stream = pair.b.server.stream(&id, turn, None).await;
    let mut read: Vec<Timed> = Vec::new();
    read_until_text(&mut stream, &mut read, 40).await;

    pair.b.restart();
    // The reader keeps what reached it before its connection broke with the process.
    tokio::time::timeout(HUNG, async {
        while let Ok(Some((at, event))) = stream.try_next().await {
            read.push((at, event, Instant::now()));
        }
    })
    .await
    .expect("the connection to the killed replica ends");
    let read = untimed(&read);
    let last = read.last().map(|(at, _)| *at);
    let b = &pair.b.server;
    let rest = read_events(b, &id, turn, last).await;
    assert!(
        rest.iter().all(|(at, _)| Some(*at) > last),
        "after {last:?}: nothing repeated: {rest:?}"
    );
    assert!(
        rest.windows(2).all(|w| w[0].0 <= w[1].0),
        "in order: {rest:?}"
    );
    assert_eq!(
        end_status(&rest),
        TurnStatus::Completed,
        "B's restart left A's turn running"
    );
    let reference = tokio::time::timeout(HUNG, reference)
        .await
        .expect("the read through A ends")
        .expect("the read through A");
    let mut joined = read.clone();
    joined.extend(rest);
    assert_same_content(&joined, &reference);
    let transcript = b.transcript(&id).await;
    assert_eq!(
        text_blocks(&reference),
        stored_text_blocks(&transcript, turn)
    );

    pair.b.restart();
    let b = &pair.b.server;
    let every = (reference.len() / 40).max(1);
    for (at, (seen, _)) in reference.iter().enumerate().step_by(every) {
        let rest = read_events(b, &id, turn, Some(*seen)).await;
        if at + 1 == reference.len() {
            assert_eq!(rest, reference[at..], "the end again");
            continue;
        }
        assert!(
            rest.iter().all(|(id, _)| id > seen),
            "after {seen}: nothing repeated: {rest:?}"
        );
        let mut joined = reference[..=at].to_vec();
        joined.extend(rest);
        assert_same_content(&joined, &reference);
    }
}

// Issue 18: a cancel posted to replica B stops a turn running on replica A: readers through
// either replica get the cut-off end, the turn is stored cut off with the text they read, and
// the conversation goes on.
#[tokio::test]
async fn a_cancel_posted_to_one_replica_cuts_off_a_turn_running_on_the_other() {
    let Some(pair) = Pair::start("1") else {
        return;
    };
    let (a, b) = (&pair.a.server, &pair.b.server);
    let id = a.conversation().await;
    let turn = a.send(&id, LONG_TURN).await;
    let (mut on_a, mut on_b) = (
        a.stream(&id, turn, None).await,
        b.stream(&id, turn, None).await,
    );
    let (mut read_a, mut read_b): (Vec<Timed>, Vec<Timed>) = (Vec::new(), Vec::new());
    read_until_text(&mut on_a, &mut read_a, 40).await;

    assert_eq!(b.act(&id, turn, "cancel", json!({})).await, 202);
    let cancelled = Instant::now();
    let limit = 3 * LEASE;
    tokio::time::timeout(
        limit,
        futures_util::future::join(
            read_rest(&mut on_a, &mut read_a),
            read_rest(&mut on_b, &mut read_b),
        ),
    )
    .await
    .unwrap_or_else(|_| panic!("the readers got no end within {limit:?} of the cancel"));
    let ended = |read: &[Timed]| {
        read.last()
            .map(|(_, _, at)| at.duration_since(cancelled))
            .unwrap_or_default()
    };
    println!(
        "cancel posted to B: the reader on A got the end after {:?}, the reader on B after {:?}",
        ended(&read_a),
        ended(&read_b)
    );

    let (read_a, read_b) = (untimed(&read_a), untimed(&read_b));
    assert_eq!(end_status(&read_a), TurnStatus::CutOff);
    assert_same_content(&read_b, &read_a);
    let transcript = a.transcript(&id).await;
    assert_eq!(transcript, b.transcript(&id).await);
    assert_eq!(stored_status(&transcript, turn), TurnStatus::CutOff);
    assert_eq!(text_blocks(&read_a), stored_text_blocks(&transcript, turn));

    let next = a.send(&id, "Tell me about emoji").await;
    let events = untimed(&read_to_end(b, &id, next, None).await);
    assert_eq!(end_status(&events), TurnStatus::Completed);
}
