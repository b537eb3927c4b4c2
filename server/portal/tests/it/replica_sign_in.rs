//! The sign-in throttle across replicas (issue 30): two `portal serve` processes on one
//! PostgreSQL database count failed sign-ins together, in the database, so a password can be
//! tried 5 times a minute in all, not 5 times on each replica; guesses sent at once to both have
//! exactly 5 checked.
//!
//! Each test makes its own schema on the server `PORTAL_TEST_POSTGRES` names and is skipped with
//! a note without it (failed when `PORTAL_REQUIRE_POSTGRES` is set).

use crate::common;
use crate::replica_support;

use std::net::IpAddr;

use replica_support::Pair;
use reqwest::StatusCode;
use reqwest::header::ORIGIN;
use serde_json::json;

const PASSWORD: &str = "correct horse battery";

/// Two replicas in users mode: alice and bob in organisation acme.
struct Users {
    pair: Pair,
    _config: tempfile::TempDir,
}

impl Users {
    fn start() -> Option<Users> {
        let config = tempfile::tempdir().expect("a configuration folder");
        for user in ["alice", "bob"] {
            portal_identity::add_user(config.path(), "acme", user, user, PASSWORD)
                .expect("the user is added");
        }
        let dir = config.path().to_str().expect("a UTF-8 path");
        let pair = Pair::start_with("0", &["--config", dir])?;
        Some(Users {
            pair,
            _config: config,
        })
    }

    /// Signs `user` in with `password` through replica `a` (or `b`), from the loopback address
    /// `client`; the answer's status.
    async fn sign_in(&self, on_a: bool, client: IpAddr, user: &str, password: &str) -> StatusCode {
        let server = if on_a {
            &self.pair.a.server
        } else {
            &self.pair.b.server
        };
        reqwest::Client::builder()
            .local_address(client)
            .build()
            .expect("a client")
            .post(server.url("/api/session"))
            .header(ORIGIN, &server.base)
            .json(&json!({ "organisation": "acme", "user": user, "password": password }))
            .send()
            .await
            .expect("answered")
            .status()
    }
}

fn loopback(last: u8) -> IpAddr {
    IpAddr::from([127, 0, 0, last])
}

#[tokio::test]
async fn wrong_guesses_split_across_two_replicas_are_throttled_as_one() {
    let Some(users) = Users::start() else {
        return;
    };
    // The user's count: five wrong passwords, three through A and two through B, from one
    // address; the right password from another address then waits, on either replica.
    for n in 0..5 {
        let status = users
            .sign_in(n % 2 == 0, loopback(2), "alice", "guess")
            .await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "guess {n}");
    }
    for on_a in [true, false] {
        assert_eq!(
            users.sign_in(on_a, loopback(3), "alice", PASSWORD).await,
            StatusCode::TOO_MANY_REQUESTS,
            "alice waits on {}",
            if on_a { "A" } else { "B" }
        );
    }
    // The address's count: five guesses at an unknown user split across both replicas; then
    // bob's right password from that address waits, and from another address signs in.
    for n in 0..5 {
        let status = users
            .sign_in(n % 2 == 1, loopback(4), "nobody", "guess")
            .await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "guess {n}");
    }
    assert_eq!(
        users.sign_in(true, loopback(4), "bob", PASSWORD).await,
        StatusCode::TOO_MANY_REQUESTS,
        "the guessing address waits"
    );
    assert_eq!(
        users.sign_in(false, loopback(5), "bob", PASSWORD).await,
        StatusCode::OK,
        "another address signs bob in"
    );
}

// The replicas' handlers race: each guess takes its place in the database before it is
// checked, under a lock every replica takes, so exactly as many are checked as one after another.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn forty_guesses_at_once_split_across_two_replicas_have_exactly_five_checked() {
    let Some(users) = Users::start() else {
        return;
    };
    let guesses = (0..40u8).map(|n| {
        let users = &users;
        async move {
            users
                .sign_in(
                    n % 2 == 0,
                    loopback(10 + n % 4),
                    "alice",
                    &format!("guess {n}"),
                )
                .await
        }
    });
    let answers = futures_util::future::join_all(guesses).await;
    let (checked, refused) = common::checked_and_refused(&answers);
    assert_eq!(checked + refused, 40, "{answers:?}");
    assert_eq!(
        checked,
        portal_server::sessions::FAILURES,
        "{checked} guesses were checked: {answers:?}"
    );
    assert_eq!(
        users
            .pair
            .database
            .count("SELECT count(*) FROM sign_in_failures WHERE key = 'user acme/alice'"),
        5
    );
}
