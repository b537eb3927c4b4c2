//! A server asked to stop (rules D1 to D4), in this process on SQLite: readiness fails and no
//! turn starts at once, running turns get the grace and are cut off at its end with the reason
//! kept, and the server is gone once they have ended. The same with replicas behind nginx, and
//! SIGTERM, is `rolling_deploy.rs`.

use crate::common;

use std::time::{Duration, Instant};

use common::{Server, config};
use portal_core::TurnStatus;
use portal_core::stream::TurnEvent;
use portal_host::lifecycle::{Lifecycle, Phase};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// A message the demo answers over several seconds at pace 1.
const LONG_TURN: &str = "Tell me about scripts";

/// What the server says a turn it cut off at the grace's end was cut off for.
const CUT_OFF_REASON: &str =
    "The server stopped for a restart while this reply was being written; send the message again.";

/// A server in this process that stops when told, with `grace` for its running turns.
struct Stoppable {
    server: Server,
    lifecycle: Lifecycle,
    stop: Option<oneshot::Sender<()>>,
    serving: JoinHandle<anyhow::Result<()>>,
}

impl Stoppable {
    async fn start(data: &std::path::Path, pace: f64, grace: Duration) -> Stoppable {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("loopback port");
        let base = format!("http://{}", listener.local_addr().expect("address"));
        let config = portal_server::Config {
            shutdown_grace: grace,
            ..config(data, pace, None)
        };
        let lifecycle = Lifecycle::new();
        let (stop, stopped) = oneshot::channel();
        let serving = tokio::spawn(portal_server::serve_until(
            listener,
            config,
            lifecycle.clone(),
            async move {
                let _ = stopped.await;
            },
        ));
        Stoppable {
            server: Server::at(base),
            lifecycle,
            stop: Some(stop),
            serving,
        }
    }

    fn stop(&mut self) -> Instant {
        self.stop
            .take()
            .expect("stopped once")
            .send(())
            .expect("serving");
        Instant::now()
    }

    /// `GET path`: its status, `Retry-After` and JSON body.
    async fn get(&self, path: &str) -> (u16, Option<String>, serde_json::Value) {
        let response = self
            .server
            .client
            .get(self.server.url(path))
            .send()
            .await
            .expect("answered");
        let status = response.status().as_u16();
        let retry = response
            .headers()
            .get("retry-after")
            .map(|v| v.to_str().expect("text").to_string());
        (status, retry, response.json().await.expect("json"))
    }
}

#[tokio::test]
async fn d4_a_ready_server_says_so_with_its_schema_and_the_probes_need_no_sign_in() {
    let data = tempfile::tempdir().expect("data");
    let mut portal = Stoppable::start(data.path(), 0.0, Duration::from_secs(5)).await;
    portal.lifecycle.reached(Phase::Ready).await;
    let (status, _, alive) = portal.get("/healthz").await;
    assert_eq!((status, &alive["status"]), (200, &"alive".into()));
    let (status, _, ready) = portal.get("/readyz").await;
    assert_eq!(status, 200, "{ready}");
    assert_eq!(ready["status"], "ready");
    assert_eq!(
        ready["schema"],
        portal_store_sqlite::SCHEMA_VERSION,
        "the schema this build writes"
    );
    portal.stop();
    portal.serving.await.expect("joined").expect("stopped well");
}

// Rules D1, D2, D4: once asked to stop, the server is not ready (but alive) and starts no turn
// (503 with Retry-After, saying what to do); a turn running longer than the grace goes on
// streaming until the grace's end, is then recorded cut off with the reason in words, which its
// reader gets and a reload shows; the server is gone soon after.
#[tokio::test]
async fn d1_d2_d4_a_stopping_server_starts_no_turn_and_cuts_off_a_long_one_at_the_grace() {
    let data = tempfile::tempdir().expect("data");
    let grace = Duration::from_millis(1500);
    let mut portal = Stoppable::start(data.path(), 1.0, grace).await;
    let server = &portal.server;
    let id = server.conversation().await;
    let other = server.conversation().await;
    let turn = server.send(&id, LONG_TURN).await;
    let mut reader = server.stream(&id, turn, None).await;
    let first = reader.next().await.expect("the turn streams");

    let asked = portal.stop();
    let mut read = vec![first];
    let (status, retry, refused) = {
        portal.lifecycle.reached(Phase::Stopping).await;
        let response = portal
            .server
            .client
            .post(
                portal
                    .server
                    .url(&format!("/api/conversations/{other}/messages")),
            )
            .json(&serde_json::json!({ "text": "Hello" }))
            .send()
            .await
            .expect("answered");
        let status = response.status().as_u16();
        let retry = response
            .headers()
            .get("retry-after")
            .map(|v| v.to_str().expect("text").to_string());
        let body: serde_json::Value = response.json().await.expect("json");
        (status, retry, body)
    };
    assert_eq!(status, 503, "{refused}");
    assert_eq!(retry.as_deref(), Some("1"));
    let sentence = refused["error"].as_str().expect("a sentence");
    assert!(
        sentence.contains("stopping") && sentence.contains("send it again"),
        "{sentence}"
    );
    let (status, _, ready) = portal.get("/readyz").await;
    assert_eq!((status, &ready["status"]), (503, &"stopping".into()));
    let (status, _, _) = portal.get("/healthz").await;
    assert_eq!(status, 200, "alive while it stops");

    while let Some(event) = reader.next().await {
        read.push(event);
    }
    let ended_after = asked.elapsed();
    assert!(
        ended_after >= grace,
        "the turn had the whole grace: it ended {ended_after:?} after the stop"
    );
    assert!(
        ended_after < grace + Duration::from_secs(5),
        "cut off at the grace's end, not later: {ended_after:?}"
    );
    let streamed_text = read
        .iter()
        .filter(|(_, e)| matches!(e, TurnEvent::Delta { .. }))
        .count();
    assert!(streamed_text > 1, "it streamed during the grace");
    assert_eq!(
        read.last().map(|(_, e)| e.clone()),
        Some(TurnEvent::TurnEnd {
            status: TurnStatus::CutOff,
            reason: Some(CUT_OFF_REASON.into()),
        })
    );
    assert!(
        reader.reconnect.is_none(),
        "an ended turn's stream just ends"
    );
    tokio::time::timeout(Duration::from_secs(15), portal.serving)
        .await
        .expect("the server is gone soon after")
        .expect("joined")
        .expect("stopped well");

    // Restarted on the same folder: the turn is stored cut off, with its reason.
    let restarted = common::start(data.path(), 0.0).await;
    let stored = restarted.transcript(&id).await;
    let stored = stored.turn(turn).expect("stored");
    assert_eq!(stored.status, TurnStatus::CutOff);
    assert_eq!(stored.end_reason(), Some(CUT_OFF_REASON));
    let replayed = restarted.events(&id, turn, None).await;
    assert_eq!(replayed.last(), read.last(), "a reload reads the same end");
}

// Rule D2: a turn that ends within the grace completes, and the server stops as soon as it has,
// not at the grace's end.
#[tokio::test]
async fn d2_a_turn_ending_within_the_grace_completes_and_the_server_stops_when_it_has() {
    let data = tempfile::tempdir().expect("data");
    let grace = Duration::from_secs(60);
    let mut portal = Stoppable::start(data.path(), 0.3, grace).await;
    let id = portal.server.conversation().await;
    let turn = portal.server.send(&id, LONG_TURN).await;
    let mut reader = portal.server.stream(&id, turn, None).await;
    reader.next().await.expect("the turn streams");
    let asked = portal.stop();
    let mut last = None;
    while let Some(event) = reader.next().await {
        last = Some(event.1);
    }
    assert_eq!(
        last,
        Some(TurnEvent::TurnEnd {
            status: TurnStatus::Completed,
            reason: None
        })
    );
    tokio::time::timeout(Duration::from_secs(20), portal.serving)
        .await
        .expect("stopped once its turn ended, well before the grace's end")
        .expect("joined")
        .expect("stopped well");
    assert!(asked.elapsed() < grace / 2, "{:?}", asked.elapsed());
}
