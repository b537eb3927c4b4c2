//! Rolling deploys (rules D1 to D4): two replicas on PostgreSQL behind the shipped nginx
//! configuration, each sent SIGTERM, as systemd, Docker and Kubernetes do, and started again on
//! its port. Readers follow turns as a browser's `EventSource` does: a stream that ends before
//! its turn has is opened again through nginx after its `retry`, with `Last-Event-ID`.
//!
//! Skipped with a note without PostgreSQL (`PORTAL_TEST_POSTGRES`) or nginx; with
//! `PORTAL_REQUIRE_POSTGRES` set (`cargo xtask test`) either missing fails the test instead.

use crate::common;
use crate::databases;
use crate::proxy_support;
use crate::replica_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::{Server, assert_same_content, until};
use portal_core::stream::TurnEvent;
use portal_core::{Transcript, TurnStatus};
use proxy_support::Deployment;
use replica_support::{HUNG, stored_text_blocks, text_blocks};

/// A message the demo answers with thinking and a reply of a few scripts, streamed in small
/// pieces over seconds.
const LONG_TURN: &str = "Tell me about scripts";

/// What a turn cut off at the grace's end says.
const CUT_OFF_REASON: &str =
    "The server stopped for a restart while this reply was being written; send the message again.";

/// How a browser-like reader followed one turn.
#[derive(Debug)]
struct Followed {
    events: Vec<(u64, TurnEvent)>,
    /// When it read the turn's end.
    ended: Instant,
    /// Streams that ended before the turn did, with the stopping server's hint to reconnect.
    hinted: usize,
    /// Streams that ended before the turn did without one (a broken connection).
    broken: usize,
}

/// Reads turn `turn` of conversation `id` to its end (not a pause) as a browser does: first
/// from `first`; after a stream that ends early, again through `then` (nginx) after the
/// server's `retry` (a browser's default, 3 s, without one), from the last id read.
async fn follow(first: Server, then: Server, id: String, turn: u32) -> Followed {
    let mut followed = Followed {
        events: Vec::new(),
        ended: Instant::now(),
        hinted: 0,
        broken: 0,
    };
    let mut server = &first;
    loop {
        let last = followed.events.last().map(|(at, _)| *at);
        let mut stream = server.stream(&id, turn, last).await;
        loop {
            match stream.try_next().await {
                Ok(Some(event)) => {
                    let ends = matches!(
                        &event.1,
                        TurnEvent::TurnEnd { status, .. } if *status != TurnStatus::Paused
                    );
                    followed.events.push(event);
                    if ends {
                        followed.ended = Instant::now();
                        return followed;
                    }
                }
                Ok(None) => break,
                Err(_) => {
                    stream.reconnect = None;
                    break;
                }
            }
        }
        match stream.reconnect {
            Some(retry) => {
                followed.hinted += 1;
                tokio::time::sleep(retry).await;
            }
            None => {
                followed.broken += 1;
                tokio::time::sleep(Duration::from_secs(3)).await;
            }
        }
        server = &then;
    }
}

/// Fails the test unless `followed` read turn `turn` of `transcript` whole: ids only rising (so
/// nothing twice), its text the text stored, and its end the stored status with the stored
/// reason.
fn assert_read_whole(what: &str, followed: &Followed, transcript: &Transcript, turn: u32) {
    let ids: Vec<u64> = followed.events.iter().map(|(id, _)| *id).collect();
    assert!(
        ids.windows(2).all(|pair| pair[0] < pair[1]),
        "{what}: ids only rise: {ids:?}"
    );
    let stored = transcript.turn(turn).expect("the turn is stored");
    assert_eq!(
        followed.events.last().map(|(_, event)| event.clone()),
        Some(TurnEvent::TurnEnd {
            status: stored.status,
            reason: stored.end_reason().map(str::to_string),
        }),
        "{what}: the stored end"
    );
    assert_eq!(
        text_blocks(&followed.events),
        stored_text_blocks(transcript, turn),
        "{what}: the stored text"
    );
}

/// `GET path` on `base` without a session: its status and JSON body.
async fn probe(base: &str, path: &str) -> (u16, serde_json::Value) {
    let response = reqwest::get(format!("{base}{path}"))
        .await
        .expect("answered");
    let status = response.status().as_u16();
    (status, response.json().await.expect("json"))
}

// Rules D1, D2, D3, D4: replica A is sent SIGTERM while it runs a turn longer than the grace.
// At once it is alive but not ready, and refuses a new message itself (503, Retry-After) while
// the same message sent through nginx is taken by B. A's turn goes on streaming through the
// grace, and at its end is recorded cut off with the reason, which readers on A and on B get a
// moment later, not a lease later. A reader on A of a turn B runs gets the hint to reconnect
// when A closes, and reads the rest through nginx from B, nothing lost or repeated.
#[tokio::test]
async fn d1_d2_d3_d4_a_turn_longer_than_the_grace_is_cut_off_at_its_end_and_readers_move_on() {
    let grace = Duration::from_secs(2);
    let Some(mut deployment) = Deployment::start_with(
        "1",
        &[
            "--shutdown-grace-seconds",
            "2",
            "--max-turns-at-once",
            "100",
        ],
    )
    .await
    else {
        return;
    };
    let a_base = deployment.pair.a.server.base.clone();
    let b_base = deployment.pair.b.server.base.clone();
    let nginx = deployment.browser().await;
    let on_a = deployment.browser_on(&a_base).await;
    let on_b = deployment.browser_on(&b_base).await;

    let long = on_a.conversation().await;
    let turn = on_a.send(&long, LONG_TURN).await;
    let elsewhere = on_b.conversation().await;
    let other = on_b.send(&elsewhere, LONG_TURN).await;
    let reader_on_a = tokio::spawn(follow(
        deployment.browser_on(&a_base).await,
        deployment.browser().await,
        long.clone(),
        turn,
    ));
    let reader_on_b = tokio::spawn(follow(
        deployment.browser_on(&b_base).await,
        deployment.browser().await,
        long.clone(),
        turn,
    ));
    let mirror_on_a = tokio::spawn(follow(
        deployment.browser_on(&a_base).await,
        deployment.browser().await,
        elsewhere.clone(),
        other,
    ));
    tokio::time::sleep(Duration::from_millis(700)).await;

    deployment.pair.a.ask_to_stop();
    let asked = Instant::now();
    until(
        "A is not ready once asked to stop",
        Duration::from_secs(2),
        || async {
            let (status, ready) = probe(&a_base, "/readyz").await;
            (status == 503 && ready["status"] == "stopping").then_some(())
        },
    )
    .await;
    assert_eq!(
        probe(&a_base, "/healthz").await.0,
        200,
        "alive while it stops"
    );
    let fresh = nginx.conversation().await;
    let (status, refused) = on_a.post_message(&fresh, "Hello").await;
    assert_eq!(status, 503, "A starts no turn: {refused}");
    for _ in 0..4 {
        let fresh = nginx.conversation().await;
        let (status, body) = nginx.post_message(&fresh, "Hello").await;
        assert_eq!(status, 202, "nginx passes A's refusal on to B: {body}");
    }
    let passed_on = deployment
        .nginx
        .access_log()
        .lines()
        .filter(|line| line.starts_with("POST") && line.contains(", "))
        .count();
    assert!(
        passed_on > 0,
        "some message went to A first and was passed on: {}",
        deployment.nginx.access_log()
    );

    let exit = deployment
        .pair
        .a
        .stopped(grace + Duration::from_secs(20))
        .await;
    assert!(exit.success(), "A stops well: {exit}");
    let stopped_after = asked.elapsed();

    let on_a_read = reader_on_a.await.expect("read on A");
    let on_b_read = reader_on_b.await.expect("read on B");
    let mirrored = mirror_on_a.await.expect("read through A");
    for followed in [&on_a_read, &on_b_read] {
        let ended_after = followed.ended - asked;
        assert!(
            ended_after >= grace - Duration::from_millis(200),
            "the turn ran through the grace: it ended {ended_after:?} after SIGTERM"
        );
        assert!(
            ended_after < grace + Duration::from_secs(4),
            "cut off at the grace's end, not a lease later: {ended_after:?} after SIGTERM"
        );
    }
    println!(
        "grace {grace:?}: the turn ended for its readers {:?} (on A) and {:?} (on B) after \
         SIGTERM; A was gone after {stopped_after:?}; the reader on A of B's turn reconnected \
         {} time(s) with the hint",
        on_a_read.ended - asked,
        on_b_read.ended - asked,
        mirrored.hinted
    );
    let transcript = on_b.transcript(&long).await;
    let stored = transcript.turn(turn).expect("stored");
    assert_eq!(stored.status, TurnStatus::CutOff);
    assert_eq!(stored.end_reason(), Some(CUT_OFF_REASON));
    assert_read_whole("the reader on A", &on_a_read, &transcript, turn);
    assert_read_whole("the reader on B", &on_b_read, &transcript, turn);
    assert_same_content(&on_a_read.events, &on_b_read.events);

    assert!(
        mirrored.hinted >= 1 && mirrored.broken == 0,
        "the reader on A of B's turn was asked to reconnect: {mirrored:?}"
    );
    let transcript = on_b.transcript(&elsewhere).await;
    assert_eq!(
        transcript.turn(other).map(|t| t.status),
        Some(TurnStatus::Completed)
    );
    assert_read_whole("the reader that moved to B", &mirrored, &transcript, other);
    assert_same_content(
        &mirrored.events,
        &on_b.events(&elsewhere, other, None).await,
    );
}

/// Another client like `server` (the same session and origin).
fn nginx_like(server: &Server) -> Server {
    Server {
        base: server.base.clone(),
        client: server.client.clone(),
    }
}

/// How long the recipe waits after a replica is ready again before it stops the next: more than
/// nginx leaves a replica alone after it refused a connection or answered 503 (`fail_timeout`,
/// 2 s in the shipped configuration), so that nginx has one replica to send to.
const SETTLE: Duration = Duration::from_secs(3);

/// How many turns run when the deploy starts; each has two readers through nginx, so about half
/// the streams are on each replica.
const TURNS: usize = 50;

// Rules D1, D2, D3: 100 streams in flight on two replicas behind nginx; each replica in turn is
// sent SIGTERM, waited for and started again on its port, while a new message is sent through
// nginx every quarter second. Every turn completes or is recorded cut off with the reason;
// every reader ends with the whole stored text and the stored end, nothing lost or repeated;
// and nginx refuses no new message.
#[tokio::test]
async fn d1_d2_d3_a_rolling_deploy_under_100_streams_loses_nothing_and_refuses_nothing() {
    let Some(mut deployment) = Deployment::start_with(
        "0.5",
        &[
            "--shutdown-grace-seconds",
            "3",
            "--max-streams-per-user",
            "400",
            "--max-turns-at-once",
            "400",
        ],
    )
    .await
    else {
        return;
    };
    let nginx = deployment.browser().await;
    let on_replicas = [
        deployment.browser_on(&deployment.pair.a.server.base).await,
        deployment.browser_on(&deployment.pair.b.server.base).await,
    ];
    let mut readers = Vec::new();
    let mut turns = Vec::new();
    for at in 0..TURNS {
        // Half the turns run on each replica.
        let on = &on_replicas[at % 2];
        let id = on.conversation().await;
        let turn = on.send(&id, LONG_TURN).await;
        for _ in 0..2 {
            readers.push(tokio::spawn(follow(
                nginx_like(&nginx),
                nginx_like(&nginx),
                id.clone(),
                turn,
            )));
        }
        turns.push((id, turn));
    }

    let sending = Arc::new(AtomicBool::new(true));
    let sender = {
        let (nginx, sending) = (nginx_like(&nginx), Arc::clone(&sending));
        tokio::spawn(async move {
            let mut sent = Vec::new();
            let mut refused = Vec::new();
            while sending.load(Ordering::SeqCst) {
                let id = nginx.conversation().await;
                let answer = nginx
                    .client
                    .post(nginx.url(&format!("/api/conversations/{id}/messages")))
                    .json(&serde_json::json!({ "text": "Hello" }))
                    .send()
                    .await
                    .expect("nginx answers");
                let status = answer.status().as_u16();
                let body = answer.text().await.expect("a body");
                let turn = serde_json::from_str::<serde_json::Value>(&body)
                    .ok()
                    .and_then(|sent| sent["turn"].as_u64());
                match turn {
                    Some(turn) if status == 202 => sent.push((id, turn as u32)),
                    _ => refused.push((Instant::now(), status, body)),
                }
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
            (sent, refused)
        })
    };

    let deploy_started = Instant::now();
    let mut restarts = Vec::new();
    for replica in [&mut deployment.pair.a, &mut deployment.pair.b] {
        replica.ask_to_stop();
        let exit = replica.stopped(Duration::from_secs(30)).await;
        assert!(
            exit.success(),
            "replica {} stops well: {exit}",
            replica.name
        );
        let starting = Instant::now();
        replica.start_on_same_port();
        restarts.push(starting.elapsed());
        // As the recipe says: the next replica stops once this one is ready (it is, once it
        // says it serves) and a little more than nginx's fail_timeout.
        tokio::time::sleep(SETTLE).await;
    }
    let deployed_in = deploy_started.elapsed();
    sending.store(false, Ordering::SeqCst);
    let (sent, refused) = sender.await.expect("sender");
    assert!(
        refused.is_empty(),
        "no new message is refused during the deploy: {refused:?}"
    );
    for (id, turn) in &sent {
        readers.push(tokio::spawn(follow(
            nginx_like(&nginx),
            nginx_like(&nginx),
            id.clone(),
            *turn,
        )));
    }
    let all_turns: Vec<(String, u32)> = turns
        .iter()
        .flat_map(|t| [t.clone(), t.clone()])
        .chain(sent.iter().cloned())
        .collect();

    let mut cut_off = 0;
    let mut hinted = 0;
    for ((id, turn), reader) in all_turns.iter().zip(readers) {
        let followed = tokio::time::timeout(HUNG, reader)
            .await
            .unwrap_or_else(|_| panic!("a reader of turn {turn} of {id} hung"))
            .expect("a reader");
        let transcript = nginx.transcript(id).await;
        let stored = transcript.turn(*turn).expect("stored");
        match stored.status {
            TurnStatus::Completed => {}
            TurnStatus::CutOff => {
                assert_eq!(
                    stored.end_reason(),
                    Some(CUT_OFF_REASON),
                    "cut off by a stop"
                );
                cut_off += 1;
            }
            other => panic!("turn {turn} of {id} ended {other}"),
        }
        assert_read_whole(
            &format!("a reader of turn {turn} of {id}"),
            &followed,
            &transcript,
            *turn,
        );
        assert_eq!(followed.broken, 0, "no stream broke: {followed:?}");
        hinted += followed.hinted;
    }
    println!(
        "rolling deploy of 2 replicas in {deployed_in:?} (restarts took {restarts:?}) under \
         {} streams: {} new messages sent during it, none refused; {cut_off} reader(s) saw their \
         turn cut off at a grace's end; readers reconnected {hinted} time(s) on a hint",
        TURNS * 2,
        sent.len()
    );
}

// Rule D4: a replica that starts while another migrates the database waits for the migration
// lock. Meanwhile it answers /healthz and, not ready, /readyz with `migrating`; a request waits
// for it. Once the lock is free it migrates, is ready, and the request is answered.
#[tokio::test]
async fn d4_a_replica_waiting_to_migrate_is_alive_not_ready_and_holds_requests_until_it_is() {
    let Some(database) = databases::Database::postgres() else {
        return;
    };
    let lock = database.hold_migration_lock();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("a free port")
        .local_addr()
        .expect("its address")
        .port();
    let url = database.url();
    let starting = std::thread::spawn(move || {
        common::spawn_portal_with(
            common::Store::Database(&url),
            "0",
            &["--port", &port.to_string()],
        )
    });
    let base = format!("http://127.0.0.1:{port}");
    until("the starting replica answers its probes", HUNG, || async {
        let answered = reqwest::get(format!("{base}/readyz")).await.ok()?;
        let status = answered.status().as_u16();
        let body: serde_json::Value = answered.json().await.ok()?;
        Some((status, body))
    })
    .await;
    let (status, ready) = probe(&base, "/readyz").await;
    assert_eq!(
        (status, &ready["status"]),
        (503, &"migrating".into()),
        "{ready}"
    );
    assert_eq!(probe(&base, "/healthz").await.0, 200);
    let waiting = tokio::spawn({
        let base = base.clone();
        async move { reqwest::get(format!("{base}/api/conversations")).await }
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!waiting.is_finished(), "a request waits while it migrates");

    drop(lock);
    until("ready once migrated", HUNG, || async {
        (probe(&base, "/readyz").await.0 == 200).then_some(())
    })
    .await;
    let answered = waiting.await.expect("joined").expect("answered");
    assert_eq!(
        answered.status(),
        200,
        "the request waited and was answered"
    );
    let mut spawned = starting
        .join()
        .expect("started")
        .expect("it says it serves once ready");
    spawned.child.kill().expect("stopped");
    spawned.child.wait().expect("reaped");
}
