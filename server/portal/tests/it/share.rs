//! Share links over HTTP (issue 45, docs/share.md): a snapshot shown to the organisation, or to
//! anyone where the organisation allows it, continued as a colleague's own copy (in no project),
//! revoked; and
//! what a hostile reader tries: guessed, revoked and overlong tokens, another organisation's
//! link, a public link where the organisation forbids it, markup in what is shared.

use portal_core::{Block, Transcript};
use portal_exchange::share::snapshot;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::identity::{ALICE, BOB, CAROL, Server, start_with};
use crate::storage::valid_fixtures;

/// Acme (alice, bob) keeps links to itself; Globex (carol) lets its users share with anyone.
async fn server() -> Server {
    start_with(|root| {
        std::fs::write(
            root.join("organisations/globex/organisation.toml"),
            "name = \"Globex\"\npublic_links = true\n",
        )
        .expect("written");
    })
    .await
}

/// A conversation of `token`'s with `text` sent and answered.
async fn answered(server: &Server, token: &str, agent: &str, text: &str) -> (String, Transcript) {
    let id = server.conversation(token, agent).await;
    let transcript = send(server, token, &id, text).await;
    (id, transcript)
}

async fn send(server: &Server, token: &str, id: &str, text: &str) -> Transcript {
    let (status, body) = server
        .post(
            &format!("/api/conversations/{id}/messages"),
            token,
            json!({ "text": text }),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    server.ended(token, id).await
}

async fn share(server: &Server, token: &str, id: &str, body: Value) -> (StatusCode, Value) {
    server
        .post(&format!("/api/conversations/{id}/shares"), token, body)
        .await
}

/// Opens a link signed in as `token`, or signed out.
async fn open(server: &Server, token: Option<&str>, url: &str) -> (StatusCode, Value) {
    let path = format!("/api/shared/{}", url.trim_start_matches("/s/"));
    let response = match token {
        Some(token) => server.request(reqwest::Method::GET, &path, token),
        None => reqwest::Client::new().get(format!("http://{}{path}", server.address())),
    }
    .send()
    .await
    .expect("answered");
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

async fn delete(server: &Server, token: &str, path: &str) -> StatusCode {
    server
        .request(reqwest::Method::DELETE, path, token)
        .send()
        .await
        .expect("answered")
        .status()
}

#[tokio::test]
async fn a_link_shows_its_snapshot_to_the_organisation_and_a_colleague_continues_it() {
    let server = server().await;
    let said = "Share the <img src=x onerror=alert(1)> herons";
    let (id, transcript) = answered(&server, ALICE, "researcher", said).await;

    let (status, link) = share(&server, ALICE, &id, json!({ "visibility": "organisation" })).await;
    assert_eq!(status, StatusCode::CREATED, "{link}");
    let url = link["url"].as_str().expect("url").to_string();
    let token = url.strip_prefix("/s/").expect("a /s/ address");
    assert_eq!(token.len(), 32, "192 random bits");
    assert_eq!(link["visibility"], "organisation");
    assert_eq!(link["turns"], 1);
    assert_eq!(
        link["title"], said,
        "the title as it is, for the page to draw as text"
    );
    assert_eq!(link["expires"], Value::Null);

    // Acme does not let anyone open a link: refused in words.
    let (status, refused) = share(&server, ALICE, &id, json!({ "visibility": "public" })).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{refused}");
    assert!(
        refused["error"]
            .as_str()
            .unwrap()
            .contains("public_links = true")
    );

    // Bob, of Acme, reads the snapshot; signed out it asks to sign in; carol, of Globex, and
    // bob asking to share alice's conversation find nothing.
    let (status, shared) = open(&server, Some(BOB), &url).await;
    assert_eq!(status, StatusCode::OK, "{shared}");
    assert_eq!(shared["shared_by"], "alice");
    assert_eq!(shared["can_continue"], true);
    let shown: Transcript =
        serde_json::from_value(shared["transcript"].clone()).expect("a transcript");
    assert_eq!(shown, snapshot(&transcript));
    let (status, asked) = open(&server, None, &url).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{asked}");
    assert!(
        asked["error"]
            .as_str()
            .unwrap()
            .contains("sign in to see it")
    );
    assert_eq!(
        open(&server, Some(CAROL), &url).await.0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        share(&server, BOB, &id, json!({ "visibility": "organisation" }))
            .await
            .0,
        StatusCode::NOT_FOUND
    );
    let (status, _) = server
        .post(&format!("/api/shared/{token}/continue"), CAROL, json!({}))
        .await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "carol cannot copy what she cannot read"
    );

    // Bob continues it as his own conversation, equal to the snapshot.
    let (status, made) = server
        .post(&format!("/api/shared/{token}/continue"), BOB, json!({}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    let copy = made["id"].as_str().expect("id");
    assert_eq!(server.transcript(BOB, copy).await, snapshot(&transcript));
    send(&server, BOB, copy, "And the egrets?").await;

    // What alice says next is not in the snapshot.
    send(&server, ALICE, &id, "Now the secret part").await;
    let (_, shared) = open(&server, Some(BOB), &url).await;
    assert_eq!(shared["turns"], 1);
    assert!(!shared.to_string().contains("secret part"));

    // Only alice lists and revokes her link; revoked, it is gone for everyone.
    let link_id = link["id"].as_str().expect("id");
    assert_eq!(
        delete(&server, BOB, &format!("/api/shares/{link_id}")).await,
        StatusCode::NOT_FOUND
    );
    let (_, bobs) = server.get("/api/shares", BOB).await;
    assert_eq!(bobs["links"], json!([]));
    assert_eq!(
        delete(&server, ALICE, &format!("/api/shares/{link_id}")).await,
        StatusCode::NO_CONTENT
    );
    let (status, gone) = open(&server, Some(BOB), &url).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{gone}");
    assert!(gone["error"].as_str().unwrap().contains("was revoked"));
    let (status, _) = server
        .post(&format!("/api/shared/{token}/continue"), BOB, json!({}))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (_, alices) = server
        .get(&format!("/api/shares?conversation={id}"), ALICE)
        .await;
    assert_eq!(alices["links"][0]["id"], link_id);
    assert!(alices["links"][0]["revoked"].is_i64(), "{alices}");
    assert_eq!(alices["public_allowed"], false);
}

// Issue 45: a project's instructions are its owner's own writing: a link to a conversation in
// a project shows nothing of the project, and a copy continued from it, by a colleague or by
// the owner, is in no project, not pinned, and its prompt has no layer 3.
#[tokio::test]
async fn a_conversation_in_a_project_is_shared_and_continued_without_its_project() {
    let server = server().await;
    let secret = "The nests are behind the old mill.";
    let (status, project) = server
        .post(
            "/api/projects",
            ALICE,
            json!({ "name": "Heron survey", "instructions": secret }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{project}");
    let (status, opened) = server
        .post(
            "/api/conversations",
            ALICE,
            json!({ "agent": "researcher", "project": project["id"] }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{opened}");
    let id = opened["id"].as_str().expect("id").to_string();
    send(&server, ALICE, &id, "Count the herons").await;
    let response = server
        .request(
            reqwest::Method::PATCH,
            &format!("/api/conversations/{id}"),
            ALICE,
        )
        .json(&json!({ "pinned": true }))
        .send()
        .await
        .expect("answered");
    assert_eq!(response.status(), StatusCode::OK);

    let (status, link) = share(&server, ALICE, &id, json!({ "visibility": "organisation" })).await;
    assert_eq!(status, StatusCode::CREATED, "{link}");
    let url = link["url"].as_str().expect("url");
    let token = url.strip_prefix("/s/").expect("a /s/ address");
    let (status, shared) = open(&server, Some(BOB), url).await;
    assert_eq!(status, StatusCode::OK, "{shared}");
    for hidden in [secret, "Heron survey", project["id"].as_str().expect("id")] {
        assert!(!shared.to_string().contains(hidden), "{hidden}: {shared}");
    }

    for reader in [BOB, ALICE] {
        let (status, made) = server
            .post(&format!("/api/shared/{token}/continue"), reader, json!({}))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{made}");
        let copy = made["id"].as_str().expect("id").to_string();
        let (_, page) = server.get("/api/conversations", reader).await;
        let listed = page["conversations"]
            .as_array()
            .expect("a list")
            .iter()
            .find(|c| c["id"] == copy.as_str())
            .expect("the copy is listed")
            .clone();
        assert_eq!(listed["project"], Value::Null, "{reader}: {listed}");
        assert_eq!(listed["pinned"], false, "{reader}: {listed}");

        send(&server, reader, &copy, "And the egrets?").await;
        let (status, call) = server
            .get(
                &format!("/api/conversations/{copy}/turns/2/calls/1"),
                reader,
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{call}");
        let layers: Vec<u64> = call["inspection"]["layers"]
            .as_array()
            .expect("layers")
            .iter()
            .map(|l| l["number"].as_u64().expect("number"))
            .collect();
        assert!(
            layers.contains(&1) && !layers.contains(&3),
            "{reader}: layers {layers:?}"
        );
        assert!(!call.to_string().contains(secret), "{reader}: {call}");
    }
}

#[tokio::test]
async fn a_public_link_opens_signed_out_where_the_organisation_allows_it() {
    let server = server().await;
    let (id, transcript) =
        answered(&server, CAROL, "assistant", "Plan the public heron walk").await;
    let (status, link) = share(
        &server,
        CAROL,
        &id,
        json!({ "visibility": "public", "expires_in_days": 7 }),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{link}");
    let expires = link["expires"].as_i64().expect("an expiry");
    let created = link["created"].as_i64().expect("made");
    assert_eq!(expires - created, 7 * 24 * 60 * 60 * 1000);
    let url = link["url"].as_str().expect("url");

    let (status, shared) = open(&server, None, url).await;
    assert_eq!(status, StatusCode::OK, "{shared}");
    assert_eq!(shared["can_continue"], false);
    let shown: Transcript =
        serde_json::from_value(shared["transcript"].clone()).expect("a transcript");
    assert_eq!(shown, snapshot(&transcript));
    // Alice, of another organisation, reads it and may not continue it.
    let (status, shared) = open(&server, Some(ALICE), url).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(shared["can_continue"], false);
    let token = url.trim_start_matches("/s/");
    let (status, refused) = server
        .post(&format!("/api/shared/{token}/continue"), ALICE, json!({}))
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{refused}");

    // Guessed, overlong and malformed tokens, and malformed requests.
    for guess in [
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        &"A".repeat(5000),
        "%00",
        "..%2F..%2Fapi%2Fkeys",
    ] {
        let (status, _) = open(&server, None, &format!("/s/{guess}")).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{guess}");
    }
    for body in [
        json!({ "visibility": "everyone" }),
        json!({ "visibility": "public", "expires_in_days": 0 }),
        json!({ "visibility": "public", "expires_in_days": 366 }),
        json!({ "visibility": "public", "expires_in_days": -1 }),
        json!({ "visibility": "public", "owner": "alice" }),
    ] {
        let (status, answer) = share(&server, CAROL, &id, body.clone()).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body} {answer}");
    }

    // A conversation deleted takes its links with it.
    assert_eq!(
        delete(&server, CAROL, &format!("/api/conversations/{id}")).await,
        StatusCode::NO_CONTENT
    );
    assert_eq!(open(&server, None, url).await.0, StatusCode::NOT_FOUND);
    let (_, links) = server.get("/api/shares", CAROL).await;
    assert_eq!(links["links"], json!([]));

    // A conversation with no ended turn has nothing to share.
    let empty = server.conversation(CAROL, "assistant").await;
    let (status, refused) = share(&server, CAROL, &empty, json!({ "visibility": "public" })).await;
    assert_eq!(status, StatusCode::CONFLICT, "{refused}");
}

/// Every valid fixture's snapshot is a valid transcript of its ended turns, without thinking,
/// documents' text or tools' pictures.
#[test]
fn every_snapshot_is_valid_and_keeps_back_what_is_not_shared() {
    for (name, transcript) in valid_fixtures() {
        let shared = snapshot(&transcript);
        portal_core::validate::validate(&shared).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(shared.turns.iter().all(|t| !t.status.is_open()), "{name}");
        let ended = transcript
            .turns
            .iter()
            .take_while(|t| !t.status.is_open())
            .count();
        assert_eq!(shared.turns.len(), ended, "{name}");
        for message in shared.turns.iter().flat_map(|t| &t.messages) {
            for block in &message.blocks {
                assert!(!matches!(block, Block::Thinking { .. }), "{name}");
                if let Block::ToolResult { pictures, .. } = block {
                    assert!(pictures.is_empty(), "{name}");
                }
            }
            for attachment in &message.attachments {
                if let portal_core::attachment::Attachment::Document(d) = attachment {
                    assert!(d.text.is_none() && d.headings.is_empty(), "{name}");
                }
            }
        }
    }
}
