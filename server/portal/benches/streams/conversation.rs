//! One conversation under load: a message sent through one replica, its turn's events read
//! through another, and the checks its stream gets.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::{WireEvent, check_numbering, read_events, stored_text, streamed_text, text_problem};

/// Where one conversation's requests go: the replica its message is sent through, the one its
/// events are first read through and the one a dropped stream resumes through. On one replica
/// all three are the same.
pub struct Route {
    pub send: String,
    pub read: String,
    pub resume: String,
}

impl Route {
    pub fn one(base: &str) -> Route {
        Route {
            send: base.to_string(),
            read: base.to_string(),
            resume: base.to_string(),
        }
    }
}

/// What one conversation's stream saw.
pub struct Outcome {
    /// From sending the message to reading the turn's first event.
    pub first_event: Duration,
    pub reconnected: bool,
    pub problems: Vec<String>,
}

/// Starts conversation `number`, sends it a message and follows the reply to its end; every
/// third conversation drops its stream after 12 events and resumes with `Last-Event-ID`.
pub async fn converse(client: reqwest::Client, route: Route, number: usize) -> Outcome {
    let mut problems = Vec::new();
    let created: Value = client
        .post(format!("{}/api/conversations", route.send))
        .send()
        .await
        .expect("create answers")
        .json()
        .await
        .expect("create answers JSON");
    let id = created["id"]
        .as_str()
        .expect("a conversation id")
        .to_string();
    let started = Instant::now();
    let sent: Value = client
        .post(format!("{}/api/conversations/{id}/messages", route.send))
        .json(&serde_json::json!({
            "text": format!("Conversation {number}: tell me about writing systems")
        }))
        .send()
        .await
        .expect("send answers")
        .json()
        .await
        .expect("send answers JSON");
    let turn = sent["turn"].as_u64().expect("the turn's number");
    let events = |base: &str| format!("{base}/api/conversations/{id}/turns/{turn}/events");

    let reconnected = number.is_multiple_of(3);
    let mut seen: Vec<WireEvent> = Vec::new();
    let mut first_event = None;
    let mut ended = false;
    let mut attempts = 0;
    while !ended && attempts < 10 {
        attempts += 1;
        let last = seen.last().map_or(0, |e| e.id);
        let limit = (reconnected && attempts == 1).then_some(12);
        let base = if attempts == 1 {
            &route.read
        } else {
            &route.resume
        };
        match read_events(&client, &events(base), last, limit).await {
            Ok(read) => {
                if first_event.is_none() {
                    first_event = read.first.map(|at| at - started);
                }
                seen.extend(read.events);
                ended = read.ended;
            }
            Err(e) => problems.push(e),
        }
    }
    if !ended {
        problems.push(format!("{id}: the turn never ended"));
    }
    problems.extend(check_numbering(&id, &seen));
    let stored_text = stored_text(&client, &route.send, &id, turn).await;
    problems.extend(text_problem(&id, &streamed_text(&seen), &stored_text));
    Outcome {
        first_event: first_event.unwrap_or(Duration::MAX),
        reconnected,
        problems,
    }
}

/// Runs every route's conversation at once; the outcomes are in the routes' order.
pub async fn converse_all(routes: Vec<Route>) -> Vec<Outcome> {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(routes.len())
        .build()
        .expect("an HTTP client");
    let tasks: Vec<_> = routes
        .into_iter()
        .enumerate()
        .map(|(n, route)| tokio::spawn(converse(client.clone(), route, n)))
        .collect();
    let mut outcomes = Vec::new();
    for task in tasks {
        outcomes.push(task.await.expect("a conversation task"));
    }
    outcomes
}

/// The times to first event, sorted.
pub fn first_events(outcomes: &[Outcome]) -> Vec<Duration> {
    let mut firsts: Vec<Duration> = outcomes.iter().map(|o| o.first_event).collect();
    firsts.sort();
    firsts
}
