//! The conversation list over HTTP: pages, search, rename and delete, and what a hostile caller
//! sends it (docs/identity.md, "Over HTTP").

use crate::common;

use serde_json::{Value, json};

async fn call(
    server: &common::Server,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
    let mut request = server.client.request(method, server.url(path));
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.expect("answer");
    let status = response.status().as_u16();
    let text = response.text().await.expect("body");
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

#[tokio::test]
async fn a_conversation_is_listed_titled_renamed_and_deleted() {
    let data = tempfile::tempdir().expect("tempdir");
    let server = common::start(data.path(), 0.0).await;
    let id = server.conversation().await;
    let (_, page) = call(&server, "GET", "/api/conversations", None).await;
    let item = &page["conversations"][0];
    assert_eq!(
        (item["id"].as_str(), item["title"].as_str()),
        (Some(id.as_str()), Some(""))
    );
    assert_eq!(item["status"], Value::Null);
    assert!(item["created"].as_i64().expect("ms") > 1_700_000_000_000);
    assert_eq!(page["next"], Value::Null);

    let turn = server.send(&id, "Plan the launch of the new bakery").await;
    server.events(&id, turn, None).await;
    let (_, page) = call(&server, "GET", "/api/conversations?q=BAKERY", None).await;
    let item = &page["conversations"][0];
    assert_eq!(item["title"], "Plan the launch of the new bakery");
    assert!(item["last_activity"].as_i64() >= item["created"].as_i64());

    let path = format!("/api/conversations/{id}");
    let (status, renamed) = call(
        &server,
        "PATCH",
        &path,
        Some(json!({ "title": "  Bakery\n launch " })),
    )
    .await;
    assert_eq!(status, 200, "{renamed}");
    assert_eq!(renamed["title"], "Bakery launch");
    for title in [json!(""), json!("   "), json!("x".repeat(201)), json!(7)] {
        let (status, body) = call(&server, "PATCH", &path, Some(json!({ "title": title }))).await;
        assert_eq!(status, 422, "{title}: {body}");
    }
    let (status, _) = call(
        &server,
        "PATCH",
        &path,
        Some(json!({ "title": "ok", "owner": "bob" })),
    )
    .await;
    assert_eq!(status, 422, "unknown fields are refused");

    let (status, _) = call(&server, "DELETE", &path, None).await;
    assert_eq!(status, 204);
    for (method, route) in [
        ("GET", path.clone()),
        ("DELETE", path.clone()),
        ("PATCH", path.clone()),
    ] {
        let (status, body) = call(&server, method, &route, Some(json!({ "title": "back" }))).await;
        assert_eq!(status, 404, "{method} {route}: {body}");
    }
    let (_, page) = call(&server, "GET", "/api/conversations", None).await;
    assert_eq!(page["conversations"], json!([]));
}

#[tokio::test]
async fn a_running_conversation_is_not_deleted() {
    let data = tempfile::tempdir().expect("tempdir");
    let server = common::start(data.path(), 1.0).await;
    let id = server.conversation().await;
    let (status, _) = server.post_message(&id, "hello").await;
    assert_eq!(status, 202);
    let (status, body) = call(&server, "DELETE", &format!("/api/conversations/{id}"), None).await;
    assert_eq!(status, 409, "{body}");
    assert!(
        body["error"]
            .as_str()
            .expect("error")
            .contains("stop it, then delete it")
    );
    let (_, page) = call(&server, "GET", "/api/conversations", None).await;
    assert_eq!(page["conversations"][0]["status"], "running");
}

#[tokio::test]
async fn malformed_list_queries_are_400_with_what_to_send() {
    let data = tempfile::tempdir().expect("tempdir");
    let server = common::start(data.path(), 0.0).await;
    let long = "q".repeat(201);
    for query in [
        "limit=0".to_string(),
        "limit=101".to_string(),
        "limit=-1".to_string(),
        "limit=1e3".to_string(),
        "limit=99999999999999999999".to_string(),
        "cursor=nonsense".to_string(),
        "cursor=1.a%27%20OR%201=1".to_string(),
        format!("q={long}"),
        "sort=title".to_string(),
    ] {
        let (status, body) =
            call(&server, "GET", &format!("/api/conversations?{query}"), None).await;
        assert_eq!(status, 400, "{query}: {body}");
        assert!(body["error"].is_string(), "{query}: {body}");
    }
    for _ in 0..3 {
        server.conversation().await;
    }
    let (_, page) = call(&server, "GET", "/api/conversations?limit=2", None).await;
    assert_eq!(page["conversations"].as_array().expect("list").len(), 2);
    let next = page["next"].as_str().expect("a next page");
    let (_, rest) = call(
        &server,
        "GET",
        &format!("/api/conversations?limit=2&cursor={next}"),
        None,
    )
    .await;
    assert_eq!(rest["conversations"].as_array().expect("list").len(), 1);
    assert_eq!(rest["next"], Value::Null);
}
