//! The shipped nginx configuration, `deploy/nginx.conf`, in front of two replicas
//! (`portal serve --database` on one PostgreSQL schema, users mode): Debian's nginx runs that
//! file over plain http (without its lines marked `# tls`, its `# replica` lines replaced by the
//! two replicas and its `# listen` line by a loopback port), and everything below goes through
//! it with a session cookie signed in through it.
//!
//! Skipped with a note without PostgreSQL (`PORTAL_TEST_POSTGRES`) or nginx; with
//! `PORTAL_REQUIRE_POSTGRES` set (`cargo xtask test`) either missing fails the test instead
//! (`cargo xtask setup` installs both).

use crate::common;
use crate::proxy_support;
use crate::replica_support;

use std::net::IpAddr;
use std::time::Instant;

use common::assert_same_content;
use portal_core::TurnStatus;
use proxy_support::{CLIENT, Deployment, PASSWORD};
use replica_support::{Timed, end_status, read_to_end, read_until_text, untimed};
use reqwest::StatusCode;
use reqwest::header::ORIGIN;

/// A message the demo answers with thinking and a reply of a few scripts, streamed in small
/// pieces over seconds at pace 1.
const MESSAGE: &str = "Tell me about scripts";

// Through nginx a turn's events arrive as the turn streams, not when it ends: the first event is
// read while most of the turn is still to come. A reader that drops the stream mid-turn and
// reconnects with its Last-Event-ID (through nginx, so possibly to the other replica) gets the
// rest, nothing lost or repeated: what it read in two parts is what a reader got in one.
#[tokio::test]
async fn a_turn_streams_through_the_proxy_as_it_runs_and_resumes_with_last_event_id() {
    let Some(deployment) = Deployment::start("0.5").await else {
        return;
    };
    let browser = deployment.browser().await;
    let id = browser.conversation().await;
    let sent = Instant::now();
    let turn = browser.send(&id, MESSAGE).await;

    let whole = read_to_end(&browser, &id, turn, None);
    let parted = async {
        let mut stream = browser.stream(&id, turn, None).await;
        let mut first: Vec<Timed> = Vec::new();
        read_until_text(&mut stream, &mut first, 40).await;
        drop(stream);
        let last = first.last().expect("events were read").0;
        let rest = read_to_end(&browser, &id, turn, Some(last)).await;
        (first, rest)
    };
    let (whole, (first, rest)) = tokio::join!(whole, parted);

    let events = untimed(&whole);
    assert_eq!(end_status(&events), TurnStatus::Completed);
    let (first_at, end_at) = (whole[0].2, whole.last().expect("the end").2);
    let (to_first, to_end) = (first_at - sent, end_at - sent);
    println!(
        "through nginx: first event {to_first:?} after sending, the end after {to_end:?}, {} events",
        whole.len()
    );
    assert!(
        to_first * 4 < to_end,
        "the first event came {to_first:?} after sending, the end {to_end:?}: nginx held the stream back"
    );

    let mut resumed = untimed(&first);
    resumed.extend(untimed(&rest));
    let ids: Vec<u64> = resumed.iter().map(|(at, _)| *at).collect();
    assert!(
        ids.windows(2).all(|pair| pair[0] < pair[1]),
        "an event was repeated across the reconnection: {ids:?}"
    );
    assert_same_content(&resumed, &events);
    println!(
        "resumed after event {} of {}; the two reads were answered by {:?}",
        first.last().expect("read").0,
        whole.last().expect("read").0,
        deployment
            .answered_by(
                &format!("GET /api/conversations/{id}/turns/{turn}/events 200"),
                3
            )
            .await
    );
}

// nginx spreads requests over both replicas (round robin), and whichever answers, the
// conversation is one: a turn sent through nginx is read to its end through it, and both
// replicas answer the same transcript and the same list.
#[tokio::test]
async fn requests_spread_over_both_replicas_see_one_conversation() {
    let Some(deployment) = Deployment::start("0").await else {
        return;
    };
    let browser = deployment.browser().await;
    let id = browser.conversation().await;
    let turn = browser.send(&id, "Hello").await;
    let events = read_to_end(&browser, &id, turn, None).await;
    assert_eq!(end_status(&untimed(&events)), TurnStatus::Completed);

    // Requests of one kind in a row alternate between the replicas.
    let mut transcripts = Vec::new();
    for _ in 0..4 {
        transcripts.push(browser.transcript(&id).await);
    }
    assert!(
        transcripts.iter().all(|t| *t == transcripts[0]),
        "the replicas answered different transcripts"
    );
    for _ in 0..2 {
        assert_eq!(browser.conversation_ids().await, vec![id.clone()]);
    }
    deployment
        .assert_both_answered(&format!("GET /api/conversations/{id} 200"), 4)
        .await;
    deployment
        .assert_both_answered("GET /api/conversations 200", 2)
        .await;
}

// A session cookie signed in through nginx works on either replica, for reads and for changes
// sent with the page's Origin (nginx passes the Host it was sent to, which the portal compares
// with the Origin); the same change from another site's page is refused, and so is the cookie
// after signing out. An upload past the portal's limit is refused by nginx with the portal's
// JSON.
#[tokio::test]
async fn a_sign_in_cookie_works_through_the_proxy_on_either_replica() {
    let Some(deployment) = Deployment::start("0").await else {
        return;
    };
    let base = &deployment.nginx.base;
    assert_eq!(
        deployment.sign_in("wrong").await.status(),
        StatusCode::UNAUTHORIZED
    );
    let browser = deployment.browser().await;
    for _ in 0..2 {
        let session: serde_json::Value = browser
            .client
            .get(format!("{base}/api/session"))
            .send()
            .await
            .expect("answered")
            .json()
            .await
            .expect("json");
        assert_eq!(session["user"], "alice");
    }
    for _ in 0..2 {
        browser.conversation().await;
    }
    deployment
        .assert_both_answered("GET /api/session 200", 2)
        .await;
    deployment
        .assert_both_answered("POST /api/conversations 201", 2)
        .await;

    let cross_site = browser
        .client
        .post(format!("{base}/api/conversations"))
        .header(ORIGIN, "https://evil.example")
        .send()
        .await
        .expect("answered");
    assert_eq!(cross_site.status(), StatusCode::FORBIDDEN);

    let too_large = browser
        .client
        .post(format!("{base}/api/attachments?filename=big.txt"))
        .body(vec![b'a'; 20 * 1024 * 1024 + 1])
        .send()
        .await
        .expect("answered");
    assert_eq!(too_large.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let refusal: serde_json::Value = too_large.json().await.expect("a JSON refusal");
    assert!(
        refusal["error"]
            .as_str()
            .is_some_and(|e| e.contains("20 MiB")),
        "{refusal}"
    );

    let signed_out = browser
        .client
        .delete(format!("{base}/api/session"))
        .send()
        .await
        .expect("answered");
    assert_eq!(signed_out.status(), StatusCode::NO_CONTENT);
    for _ in 0..2 {
        let after = browser
            .client
            .get(format!("{base}/api/conversations"))
            .send()
            .await
            .expect("answered");
        assert_eq!(after.status(), StatusCode::UNAUTHORIZED);
    }
    deployment
        .assert_both_answered("GET /api/conversations 401", 2)
        .await;
}

// Behind nginx every connection to a replica comes from nginx. Trusting it (`--trusted-proxy`),
// the replicas count failed sign-ins against the client nginx names in `X-Forwarded-For`: a
// guesser waits, and everyone else signs in, on both replicas; what the guesser writes into
// `X-Forwarded-For` itself does not free it.
#[tokio::test]
async fn a_guesser_behind_the_proxy_waits_and_does_not_lock_out_anyone_else() {
    let Some(deployment) = Deployment::start("0").await else {
        return;
    };
    let guesser: IpAddr = "127.0.0.2".parse().expect("an address");
    // Five failures in all, nginx alternating between the replicas, for a user who does not
    // exist: the replicas count them together, in the database.
    for _ in 0..5 {
        let answer = deployment.sign_in_from(guesser, "nobody", "guess").await;
        assert_eq!(answer.status(), StatusCode::UNAUTHORIZED);
    }
    for _ in 0..2 {
        let answer = deployment.sign_in_from(guesser, "alice", PASSWORD).await;
        assert_eq!(
            answer.status(),
            StatusCode::TOO_MANY_REQUESTS,
            "the guesser waits"
        );
        let spoofed = deployment
            .sign_in_request(guesser, "alice", PASSWORD)
            .header("X-Forwarded-For", "198.51.100.1")
            .send()
            .await
            .expect("answered");
        assert_eq!(
            spoofed.status(),
            StatusCode::TOO_MANY_REQUESTS,
            "naming another address does not free the guesser"
        );
    }
    for _ in 0..2 {
        let answer = deployment.sign_in_from(CLIENT, "alice", PASSWORD).await;
        assert_eq!(answer.status(), StatusCode::OK, "another client signs in");
    }
    deployment
        .assert_both_answered("POST /api/session 200", 2)
        .await;
}
