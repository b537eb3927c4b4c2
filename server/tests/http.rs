//! The API over real HTTP on loopback, answered by the demo model.

use portal_core::stream::TurnEvent;
use portal_core::{Block, TurnStatus, validate};

struct Server {
    base: String,
    client: reqwest::Client,
}

async fn start() -> Server {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("loopback port");
    let base = format!("http://{}", listener.local_addr().expect("address"));
    let config = portal_server::Config {
        dist: std::env::temp_dir().join("portal-no-dist"),
        demo_pace: 0.0,
        models: None,
    };
    tokio::spawn(portal_server::serve(listener, config));
    Server {
        base,
        client: reqwest::Client::new(),
    }
}

impl Server {
    async fn conversation(&self) -> String {
        let created: serde_json::Value = self
            .client
            .post(format!("{}/api/conversations", self.base))
            .send()
            .await
            .expect("created")
            .json()
            .await
            .expect("json");
        created["id"].as_str().expect("id").to_string()
    }

    async fn send(&self, id: &str, text: &str) -> u32 {
        let sent: serde_json::Value = self
            .client
            .post(format!("{}/api/conversations/{id}/messages", self.base))
            .json(&serde_json::json!({ "text": text }))
            .send()
            .await
            .expect("sent")
            .json()
            .await
            .expect("json");
        sent["turn"].as_u64().expect("turn") as u32
    }

    /// Reads the turn's server-sent events to the end, starting after `last_id`.
    async fn events(&self, id: &str, turn: u32, last_id: Option<usize>) -> Vec<(usize, TurnEvent)> {
        let mut request = self.client.get(format!(
            "{}/api/conversations/{id}/turns/{turn}/events",
            self.base
        ));
        if let Some(last) = last_id {
            request = request.header("Last-Event-ID", last.to_string());
        }
        let body = request
            .send()
            .await
            .expect("stream")
            .text()
            .await
            .expect("body");
        body.split("\n\n")
            .filter(|frame| frame.contains("data:"))
            .map(|frame| {
                let field = |name: &str| {
                    frame
                        .lines()
                        .find_map(|l| l.strip_prefix(name))
                        .map(str::trim)
                        .expect("field present")
                        .to_string()
                };
                let id = field("id:").parse().expect("numeric id");
                let event: TurnEvent = serde_json::from_str(&field("data:")).expect("event json");
                assert_eq!(field("event:"), event.name());
                (id, event)
            })
            .collect()
    }
}

#[tokio::test]
async fn demo_reply_streams_and_is_recorded() {
    let server = start().await;
    let id = server.conversation().await;
    let turn = server.send(&id, "Tell me about scripts").await;
    let events = server.events(&id, turn, None).await;
    let streamed: String = events
        .iter()
        .filter_map(|(_, e)| match e {
            TurnEvent::Delta { block: 1, text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert!(streamed.contains("👨‍👩‍👧‍👦"));
    assert_eq!(
        events.last().map(|(_, e)| e.clone()),
        Some(TurnEvent::TurnEnd {
            status: TurnStatus::Completed
        })
    );
    let transcript: portal_core::Transcript = server
        .client
        .get(format!("{}/api/conversations/{id}", server.base))
        .send()
        .await
        .expect("read")
        .json()
        .await
        .expect("transcript");
    validate(&transcript).expect("the recorded turn keeps the invariants");
    let answer = &transcript.turns[0].messages[1].blocks[1];
    assert_eq!(answer, &Block::text(streamed));
}

#[tokio::test]
async fn reconnect_with_last_event_id_loses_and_duplicates_nothing() {
    let server = start().await;
    let id = server.conversation().await;
    let turn = server.send(&id, "hello").await;
    let all = server.events(&id, turn, None).await;
    let cut = all.len() / 2;
    let rest = server.events(&id, turn, Some(all[cut - 1].0)).await;
    assert_eq!(rest, all[cut..].to_vec());
    let ids: Vec<usize> = all.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids, (1..=all.len()).collect::<Vec<_>>());
}

#[tokio::test]
async fn unknown_conversation_is_404_with_advice() {
    let server = start().await;
    let response = server
        .client
        .post(format!("{}/api/conversations/nope/messages", server.base))
        .json(&serde_json::json!({ "text": "hi" }))
        .send()
        .await
        .expect("answered");
    assert_eq!(response.status(), 404);
    let body: serde_json::Value = response.json().await.expect("json");
    assert!(
        body["error"]
            .as_str()
            .expect("message")
            .contains("POST /api/conversations")
    );
}
