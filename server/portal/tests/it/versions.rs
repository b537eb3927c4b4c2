//! Versions of one message over HTTP (issue 32): a message sent with `again` answers the latest
//! chat turn's message again and is recorded so; any other `again` is refused in words, and
//! nothing is recorded.

use crate::common;

use serde_json::json;

#[tokio::test]
async fn again_answers_the_latest_chat_turn_and_nothing_else() {
    let data = tempfile::tempdir().expect("a temporary folder");
    let server = common::start(data.path(), 0.0).await;
    let id = server.conversation().await;
    let first = server.send(&id, "Plan the budget").await;
    server.events(&id, first, None).await;

    let (status, sent) = server
        .post_message_body(&id, json!({ "text": "Plan the budget", "again": 1 }))
        .await;
    assert_eq!(status, 202, "{sent}");
    server.events(&id, 2, None).await;
    let transcript = server.transcript(&id).await;
    assert_eq!(transcript.turn(2).and_then(|t| t.answers_again()), Some(1));

    // Turn 1 is no longer the latest; a turn not there; a number that is not one; a /compact.
    for (body, wanted) in [
        (json!({ "text": "Plan it", "again": 1 }), 409),
        (json!({ "text": "Plan it", "again": 9 }), 409),
        (json!({ "text": "Plan it", "again": -1 }), 422),
        (json!({ "text": "Plan it", "again": "2" }), 422),
        (
            json!({ "text": "Plan it", "again": 4_294_967_296_u64 }),
            422,
        ),
        (json!({ "text": "/compact", "again": 2 }), 409),
    ] {
        let (status, answer) = server.post_message_body(&id, body.clone()).await;
        assert_eq!(status, wanted, "{body}: {answer}");
        if status == 409 {
            let error = answer["error"].as_str().unwrap_or_default();
            assert!(error.contains("answered again"), "{body}: {error}");
        }
    }
    assert_eq!(
        server.transcript(&id).await.turns.len(),
        2,
        "nothing recorded"
    );
}
