//! The conversation list at 10,000 conversations: the first page, a page deep in the list, and
//! searches (one that matches one conversation in a hundred, and one that matches none, which
//! reads every message) through the API as the web app asks for them. Prints p50 and p99.
//!
//! `cargo bench -p portal-server --bench conversation_list [-- --conversations N --rounds N]`;
//! run by `cargo xtask bench`, never by CI.

use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::Request;
use portal_core::{Block, Message, Role, TurnStatus};
use portal_store::{NewTurn, Owner, Storage};
use portal_store_sqlite::SqliteStorage;
use tower::ServiceExt;

fn option(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let conversations = option("--conversations", 10_000);
    let rounds = option("--rounds", 200);
    let data = tempfile::tempdir().expect("data folder");
    let filled = Instant::now();
    fill(
        &SqliteStorage::open(data.path()).expect("storage"),
        conversations,
    );
    println!(
        "filled {conversations} conversations (a question and a three-sentence answer each) in {:.1} s",
        filled.elapsed().as_secs_f64()
    );
    let config = portal_server::Config::local(data.path());
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let router = portal_server::Server::open(&config)
            .expect("opens")
            .router();
        let deep = cursor_after(&router, conversations / 2).await;
        let cases = [
            ("first page (50)", "/api/conversations".to_string()),
            (
                "a page halfway down",
                format!("/api/conversations?cursor={deep}"),
            ),
            (
                "search, 1 in 100 match",
                "/api/conversations?q=lighthouse".to_string(),
            ),
            (
                "search, none match",
                "/api/conversations?q=zeppelin".to_string(),
            ),
        ];
        println!("{:<26} {:>10} {:>10}", "request", "p50 ms", "p99 ms");
        for (name, path) in cases {
            let mut times = Vec::with_capacity(rounds);
            for _ in 0..rounds {
                let started = Instant::now();
                let body = get(&router, &path).await;
                times.push(started.elapsed());
                assert!(body.contains("\"conversations\""), "{body}");
            }
            times.sort();
            println!(
                "{name:<26} {:>10.2} {:>10.2}",
                ms(times[times.len() / 2]),
                ms(times[(times.len() * 99 / 100).min(times.len() - 1)])
            );
        }
    });
}

fn fill(storage: &SqliteStorage, conversations: usize) {
    let owner = Owner::new("local", "local");
    for n in 0..conversations {
        let id = storage
            .create_conversation(&owner, "assistant")
            .expect("opens");
        let topic = if n % 100 == 0 {
            "a lighthouse"
        } else {
            "the quarterly numbers"
        };
        let question = format!("Conversation {n}: tell me about {topic}");
        let turn = storage
            .open_turn(
                &id,
                NewTurn::chat(Message::new(Role::User, vec![Block::text(question)])),
            )
            .expect("turn");
        let message = storage
            .append_message(&id, turn, Role::Assistant)
            .expect("message");
        storage
            .append_block(
                &id,
                turn,
                message,
                &Block::text(
                    "Here is what I found. The figures moved a little since last time. \
                     Ask me for the details of any line.",
                ),
            )
            .expect("answer");
        storage
            .set_turn_status(&id, turn, TurnStatus::Completed)
            .expect("ends");
    }
}

async fn get(router: &axum::Router, path: &str) -> String {
    let response = router
        .clone()
        .oneshot(
            Request::get(path)
                .header("host", "127.0.0.1")
                .body(Body::empty())
                .expect("request"),
        )
        .await
        .expect("answer");
    let bytes = axum::body::to_bytes(response.into_body(), 16 << 20)
        .await
        .expect("body");
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The cursor of the page that ends after `skip` conversations.
async fn cursor_after(router: &axum::Router, skip: usize) -> String {
    let mut cursor: Option<String> = None;
    let mut seen = 0;
    while seen < skip {
        let path = match &cursor {
            Some(c) => format!("/api/conversations?limit=100&cursor={c}"),
            None => "/api/conversations?limit=100".to_string(),
        };
        let page: serde_json::Value =
            serde_json::from_str(&get(router, &path).await).expect("json");
        seen += page["conversations"].as_array().map_or(0, Vec::len);
        cursor = page["next"].as_str().map(String::from);
        if cursor.is_none() {
            break;
        }
    }
    cursor.unwrap_or_default()
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}
