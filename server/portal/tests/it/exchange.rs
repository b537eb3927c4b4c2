//! Conversations in and out over HTTP (issue 45, docs/export.md): exported as Markdown and as
//! JSON to their owner alone, imported back equal, imports from ChatGPT, projects through the
//! archive and back (on SQLite and PostgreSQL), and what a hostile importer sends.

use std::io::{Read, Write};
use std::time::Duration;

use portal_core::TurnStatus;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::databases::Database;
use crate::identity::{ALICE, BOB, CAROL, Server, start, start_on};

async fn export(server: &Server, token: &str, id: &str, format: &str) -> reqwest::Response {
    server
        .request(
            reqwest::Method::GET,
            &format!("/api/conversations/{id}/export?format={format}"),
            token,
        )
        .send()
        .await
        .expect("answered")
}

async fn import(
    server: &Server,
    token: &str,
    body: impl Into<reqwest::Body>,
) -> (StatusCode, Value) {
    let response = server
        .request(reqwest::Method::POST, "/api/conversations/import", token)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .expect("answered");
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

async fn count(server: &Server, token: &str) -> usize {
    let (_, page) = server.get("/api/conversations", token).await;
    page["conversations"].as_array().expect("a list").len()
}

#[tokio::test]
async fn a_conversation_exports_to_its_owner_and_imports_back_equal() {
    let server = start().await;
    let (status, notes) = server
        .upload(ALICE, "notes.txt", b"The heron count is 42.".to_vec())
        .await;
    assert_eq!(status, StatusCode::CREATED, "{notes}");
    let notes_id = notes["id"].as_str().expect("id").to_string();
    let id = server.conversation(ALICE, "researcher").await;
    let (status, body) = server
        .post(
            &format!("/api/conversations/{id}/messages"),
            ALICE,
            json!({ "text": "Count the <b>herons</b> in the notes", "attachments": [notes_id] }),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let transcript = server.ended(ALICE, &id).await;

    let markdown = export(&server, ALICE, &id, "markdown").await;
    assert_eq!(markdown.status(), StatusCode::OK);
    assert_eq!(
        markdown.headers()["content-type"],
        "text/markdown; charset=utf-8"
    );
    assert_eq!(
        markdown.headers()["content-disposition"],
        "attachment; filename=\"Count-the-b-herons-b-in-the-notes.md\""
    );
    let text = markdown.text().await.expect("text");
    assert!(
        text.starts_with("# Count the <b>herons</b> in the notes\n\n## 1. You\n"),
        "{text}"
    );
    assert!(text.contains("Attached: `notes.txt`"), "{text}");

    let json = export(&server, ALICE, &id, "json").await;
    assert_eq!(json.status(), StatusCode::OK);
    let file = json.text().await.expect("json");
    let (status, made) = import(&server, ALICE, file.clone()).await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    assert_eq!(made["source"], "Portal");
    let item = &made["conversations"][0];
    assert_eq!(item["title"], "Count the <b>herons</b> in the notes");
    assert_eq!(item["turns"], 1);
    assert_eq!(item["notes"], json!([]), "alice's own attachment is kept");
    let copy = item["id"].as_str().expect("id");
    assert_ne!(copy, id);
    assert_eq!(server.transcript(ALICE, copy).await, transcript);

    // Bob, of the same organisation, imports alice's file: he gets the words, not her file.
    let (status, made) = import(&server, BOB, file.clone()).await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    let item = &made["conversations"][0];
    assert_eq!(
        item["notes"],
        json!([
            "Turn 1's attachment notes.txt was left out: its file is not yours in this portal."
        ])
    );
    let bobs = server
        .transcript(BOB, item["id"].as_str().expect("id"))
        .await;
    assert!(bobs.turns[0].messages[0].attachments.is_empty());

    // Carol, of another organisation, imports it too: her organisation has no `researcher`.
    let (status, made) = import(&server, CAROL, file).await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    let notes = made["conversations"][0]["notes"].to_string();
    assert!(
        notes.contains("`researcher`, which you cannot use here"),
        "{notes}"
    );

    for token in [BOB, CAROL] {
        for format in ["markdown", "json"] {
            let refused = export(&server, token, &id, format).await;
            assert_eq!(refused.status(), StatusCode::NOT_FOUND, "{token} {format}");
        }
    }
    let refused = export(&server, ALICE, &id, "pdf").await;
    assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
    let said: Value = refused.json().await.expect("json");
    assert!(
        said["error"]
            .as_str()
            .expect("words")
            .contains("`markdown` or `json`")
    );
}

const CHATGPT: &str = r#"[{
  "title": "Herons",
  "current_node": "c",
  "mapping": {
    "root": { "id": "root", "message": null, "parent": null, "children": ["a"] },
    "a": { "id": "a", "parent": "root", "children": ["b"], "message": {
      "author": { "role": "user" }, "content": { "content_type": "text", "parts": ["How many herons?"] } } },
    "b": { "id": "b", "parent": "a", "children": ["c"], "message": {
      "author": { "role": "assistant" }, "recipient": "all",
      "content": { "content_type": "text", "parts": ["About 42."] } } },
    "c": { "id": "c", "parent": "b", "children": [], "message": {
      "author": { "role": "user" }, "content": { "content_type": "text", "parts": ["Thanks"] } } }
  }
}]"#;

#[tokio::test]
async fn a_chatgpt_export_is_imported_with_what_did_not_map_said() {
    let server = start().await;
    let (status, made) = import(&server, ALICE, CHATGPT).await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    assert_eq!(made["source"], "ChatGPT");
    let item = &made["conversations"][0];
    assert_eq!(item["title"], "Herons");
    let transcript = server
        .transcript(ALICE, item["id"].as_str().expect("id"))
        .await;
    assert_eq!(transcript.turns.len(), 2);
    assert_eq!(transcript.turns[0].status, TurnStatus::Completed);
    assert_eq!(transcript.turns[1].status, TurnStatus::CutOff);
    portal_core::validate(&transcript).expect("valid");
}

/// A Portal transcript of one completed turn whose user says `said`, with `extra` fields.
fn one_turn(extra: &str, said: &str) -> Vec<u8> {
    format!(
        r#"{{"version": 1, "turns": [{{"index": 1, "status": "completed", {extra} "messages": [{{"role": "user", "blocks": [{{"type": "text", "text": "{said}"}}]}}, {{"role": "assistant", "blocks": [{{"type": "text", "text": "ok"}}]}}]}}]}}"#
    )
    .into_bytes()
}

#[tokio::test]
async fn hostile_imports_are_refused_in_words_and_leave_nothing_behind() {
    let server = start().await;
    let before = count(&server, ALICE).await;
    let broken_second = CHATGPT.replacen("}]", "}, {\"title\": \"broken\", \"mapping\": 7}]", 1);
    let cases: Vec<(Vec<u8>, StatusCode, &str)> = vec![
        (
            b"{\"portal\": ".to_vec(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "not JSON",
        ),
        (
            vec![0xff, 0xfe, b'['],
            StatusCode::UNPROCESSABLE_ENTITY,
            "neither a ZIP archive nor JSON text",
        ),
        (
            bomb(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "unpacks to more than the 64 MiB one import reads",
        ),
        (
            broken_second.into_bytes(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "conversation 2",
        ),
        (
            b"[]".to_vec(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "no conversation",
        ),
        (
            one_turn(r#""context_tokens": 99999999999999999999,"#, "x"),
            StatusCode::UNPROCESSABLE_ENTITY,
            "conversation 1 of the Portal export cannot be read",
        ),
        (
            one_turn(r#""context_tokens": 18446744073709551615,"#, "x"),
            StatusCode::UNPROCESSABLE_ENTITY,
            "too large to store",
        ),
        (
            one_turn(r#""owner": "bob","#, "x"),
            StatusCode::UNPROCESSABLE_ENTITY,
            "unknown field `owner`",
        ),
        (
            one_turn("", "<script>alert(1)</script>"),
            StatusCode::CREATED,
            "",
        ),
    ];
    for (body, expected, said) in cases {
        let (status, answer) = import(&server, ALICE, body).await;
        assert_eq!(status, expected, "{answer}");
        if expected != StatusCode::CREATED {
            let error = answer["error"].as_str().expect("in words");
            assert!(error.contains(said), "{error}");
        }
    }
    assert_eq!(
        count(&server, ALICE).await,
        before + 1,
        "only the last was imported, its title kept as text"
    );
    let (_, page) = server.get("/api/conversations", ALICE).await;
    assert_eq!(
        page["conversations"][0]["title"],
        "<script>alert(1)</script>"
    );

    // A file past the limit is refused by its length, before it is read.
    let address = server.address();
    let answer = tokio::task::spawn_blocking(move || {
        let mut stream = std::net::TcpStream::connect(address).expect("connected");
        write!(
            stream,
            "POST /api/conversations/import HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {ALICE}\r\n\
             Content-Type: application/json\r\nContent-Length: 1073741824\r\n\r\n[{{\"title\": "
        )
        .expect("sent");
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .expect("timeout");
        let mut answer = vec![0; 4096];
        let read = stream.read(&mut answer).expect("an answer before the body");
        String::from_utf8_lossy(&answer[..read]).to_string()
    })
    .await
    .expect("joined");
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(
        answer.contains("larger than the 64 MiB one import reads"),
        "{answer}"
    );

    // One sent without a length is cut off at the limit.
    let pieces = (0..70).map(|_| Ok::<_, std::io::Error>(vec![b' '; 1024 * 1024]));
    let (status, answer) = import(
        &server,
        ALICE,
        reqwest::Body::wrap_stream(futures_util::stream::iter(pieces)),
    )
    .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{answer}");
    assert_eq!(count(&server, ALICE).await, before + 1);
}

/// A ZIP archive of less than a MiB whose `conversations.json` unpacks to 65 MiB.
fn bomb() -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    zip.start_file("conversations.json", options)
        .expect("an entry");
    let mebibyte = vec![b' '; 1024 * 1024];
    for _ in 0..65 {
        zip.write_all(&mebibyte).expect("written");
    }
    let bytes = zip.finish().expect("finished").into_inner();
    assert!(bytes.len() < 1024 * 1024, "{} bytes", bytes.len());
    bytes
}

/// The entries of a ZIP archive by name.
fn unzip(bytes: &[u8]) -> std::collections::BTreeMap<String, String> {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).expect("a ZIP archive");
    (0..zip.len())
        .map(|i| {
            let mut entry = zip.by_index(i).expect("an entry");
            let mut content = String::new();
            entry.read_to_string(&mut content).expect("text");
            (entry.name().expect("a name").to_string(), content)
        })
        .collect()
}

#[tokio::test]
async fn everything_a_person_keeps_downloads_as_one_archive_of_theirs_alone() {
    let server = start().await;
    let (status, notes) = server
        .upload(ALICE, "../notes.txt", b"The heron count is 42.".to_vec())
        .await;
    assert_eq!(status, StatusCode::CREATED, "{notes}");
    let notes_id = notes["id"].as_str().expect("id").to_string();
    let mut alices = Vec::new();
    for text in ["Count the herons in the notes", "Plan the survey"] {
        let id = server.conversation(ALICE, "researcher").await;
        let (status, body) = server
            .post(
                &format!("/api/conversations/{id}/messages"),
                ALICE,
                json!({ "text": text, "attachments": if text.starts_with("Count") { json!([notes_id]) } else { json!([]) } }),
            )
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        alices.push(server.ended(ALICE, &id).await);
    }
    let bobs = server.conversation(BOB, "researcher").await;
    let (status, body) = server
        .post(
            &format!("/api/conversations/{bobs}/messages"),
            BOB,
            json!({ "text": "Bob's own secret plan" }),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    server.ended(BOB, &bobs).await;
    let (status, body) = server
        .post(
            "/api/projects",
            BOB,
            json!({ "name": "Bob's own secret project" }),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");

    let answer = server
        .request(reqwest::Method::GET, "/api/export", ALICE)
        .send()
        .await
        .expect("answered");
    assert_eq!(answer.status(), StatusCode::OK);
    assert_eq!(answer.headers()["content-type"], "application/zip");
    assert_eq!(
        answer.headers()["content-disposition"],
        "attachment; filename=\"portal-archive.zip\""
    );
    assert_eq!(answer.headers()["x-portal-projects"], "0");
    assert_eq!(answer.headers()["x-portal-conversations"], "2");
    assert_eq!(answer.headers()["x-portal-files"], "1");
    let archive = answer.bytes().await.expect("the archive");
    let entries = unzip(&archive);
    let names: Vec<&str> = entries.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "README.md".to_string(),
            "conversations.json".into(),
            format!("files/{notes_id}/notes.txt"),
            "markdown/0001-Plan-the-survey.md".into(),
            "markdown/0002-Count-the-herons-in-the-notes.md".into(),
            "projects.json".into(),
        ],
        "newest first, the upload's name kept inside its folder"
    );
    assert_eq!(entries["projects.json"], "[]\n");
    assert_eq!(
        entries[&format!("files/{notes_id}/notes.txt")],
        "The heron count is 42."
    );
    assert!(
        entries.values().all(|e| !e.contains("Bob's own secret")),
        "bob's work and projects are not in alice's archive"
    );

    // The archive imports back: the same conversations, alice's file attached again.
    let (status, made) = import(&server, ALICE, archive).await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    let copies = made["conversations"].as_array().expect("a list");
    assert_eq!(copies.len(), 2);
    for (copy, original) in copies.iter().zip(alices.iter().rev()) {
        assert_eq!(copy["notes"], json!([]));
        let id = copy["id"].as_str().expect("id");
        assert_eq!(&server.transcript(ALICE, id).await, original);
    }

    // Signed out, there is no archive.
    let signed_out = reqwest::get(format!("http://{}/api/export", server.address()))
        .await
        .expect("answered");
    assert_eq!(signed_out.status(), StatusCode::UNAUTHORIZED);
}

/// `token`'s projects as (name, instructions, default agent), newest first, and their ids by
/// name.
async fn projects(
    server: &Server,
    token: &str,
) -> (
    Vec<(String, String, Value)>,
    std::collections::HashMap<String, String>,
) {
    let (status, list) = server.get("/api/projects", token).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    let list = list["projects"].as_array().expect("projects").clone();
    let shown = list
        .iter()
        .map(|p| {
            (
                p["name"].as_str().expect("name").to_string(),
                p["instructions"]
                    .as_str()
                    .expect("instructions")
                    .to_string(),
                p["agent"].clone(),
            )
        })
        .collect();
    let ids = list
        .iter()
        .map(|p| {
            (
                p["id"].as_str().expect("id").to_string(),
                p["name"].as_str().expect("name").to_string(),
            )
        })
        .collect();
    (shown, ids)
}

/// `token`'s conversations as (title, the name of its project, pinned, transcript), sorted.
async fn placed(server: &Server, token: &str) -> Vec<(String, Option<String>, bool, String)> {
    let (_, names) = projects(server, token).await;
    let (status, page) = server.get("/api/conversations", token).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    let mut placed = Vec::new();
    for c in page["conversations"].as_array().expect("a list") {
        let id = c["id"].as_str().expect("id");
        let project = c["project"].as_str().map(|p| names[p].clone());
        let transcript = serde_json::to_string(&server.transcript(token, id).await).unwrap();
        placed.push((
            c["title"].as_str().expect("title").to_string(),
            project,
            c["pinned"].as_bool().expect("pinned"),
            transcript,
        ));
    }
    placed.sort();
    placed
}

/// Alice's whole archive.
async fn archive_of(server: &Server, token: &str) -> Vec<u8> {
    let answer = server
        .request(reqwest::Method::GET, "/api/export", token)
        .send()
        .await
        .expect("answered");
    assert_eq!(answer.status(), StatusCode::OK);
    answer.bytes().await.expect("the archive").to_vec()
}

// Issue 45: two projects with instructions, conversations in them (one pinned) and one in none,
// exported as the archive, all deleted, and the archive imported: the projects come back with
// their instructions and default agents, each conversation in its project, pinned or not.
// Imported again, the projects are found by name and none is made twice.
async fn projects_come_back_from_the_archive_equal(db: &Database) {
    let server = start_on(db, |_| {}).await;
    let mut made = std::collections::HashMap::new();
    for (name, instructions, agent) in [
        (
            "Heron survey",
            "Give counts per hectare.",
            json!("researcher"),
        ),
        ("Budget", "Figures in euros.", Value::Null),
    ] {
        let (status, project) = server
            .post(
                "/api/projects",
                ALICE,
                json!({ "name": name, "instructions": instructions, "agent": agent }),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{project}");
        made.insert(name, project["id"].as_str().expect("id").to_string());
    }
    for (text, project, pinned) in [
        ("Count the herons", Some("Heron survey"), true),
        ("Plan the survey", Some("Heron survey"), false),
        ("Sum the costs", Some("Budget"), false),
        ("Just a chat", None, false),
    ] {
        let body = match project {
            Some(name) => json!({ "agent": "researcher", "project": made[name] }),
            None => json!({ "agent": "researcher" }),
        };
        let (status, created) = server.post("/api/conversations", ALICE, body).await;
        assert_eq!(status, StatusCode::CREATED, "{created}");
        let id = created["id"].as_str().expect("id").to_string();
        let (status, sent) = server
            .post(
                &format!("/api/conversations/{id}/messages"),
                ALICE,
                json!({ "text": text }),
            )
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{sent}");
        server.ended(ALICE, &id).await;
        if pinned {
            let (status, changed) = server
                .call(
                    reqwest::Method::PATCH,
                    &format!("/api/conversations/{id}"),
                    ALICE,
                    Some(json!({ "pinned": true })),
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{changed}");
        }
    }
    let (projects_before, _) = projects(&server, ALICE).await;
    let placed_before = placed(&server, ALICE).await;
    assert_eq!(placed_before.len(), 4);
    let archive = archive_of(&server, ALICE).await;
    let entries = unzip(&archive);
    let listed: Value = serde_json::from_str(&entries["projects.json"]).expect("JSON");
    assert_eq!(listed[0]["name"], "Budget", "newest first");
    assert_eq!(listed[1]["agent"], "researcher");

    for id in made.values() {
        let (status, _) = server
            .call(
                reqwest::Method::DELETE,
                &format!("/api/projects/{id}?conversations=delete"),
                ALICE,
                None,
            )
            .await;
        assert_eq!(status, StatusCode::NO_CONTENT);
    }
    let (_, page) = server.get("/api/conversations", ALICE).await;
    for c in page["conversations"].as_array().expect("a list") {
        let path = format!("/api/conversations/{}", c["id"].as_str().expect("id"));
        let (status, _) = server
            .call(reqwest::Method::DELETE, &path, ALICE, None)
            .await;
        assert_eq!(status, StatusCode::NO_CONTENT);
    }
    assert_eq!(count(&server, ALICE).await, 0);
    assert!(projects(&server, ALICE).await.0.is_empty());

    let (status, answer) = import(&server, ALICE, archive.clone()).await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    let made_again: Vec<(&str, &Value)> = answer["projects"]
        .as_array()
        .expect("the projects made")
        .iter()
        .map(|p| (p["name"].as_str().expect("name"), &p["notes"]))
        .collect();
    assert_eq!(
        made_again,
        [("Budget", &json!([])), ("Heron survey", &json!([]))],
        "{}",
        db.name()
    );
    assert_eq!(
        projects(&server, ALICE).await.0,
        projects_before,
        "{}",
        db.name()
    );
    assert_eq!(placed(&server, ALICE).await, placed_before, "{}", db.name());

    let (status, answer) = import(&server, ALICE, archive).await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    assert_eq!(
        answer["projects"],
        json!([]),
        "the projects are found by name"
    );
    assert_eq!(projects(&server, ALICE).await.0, projects_before);
    let twice = placed(&server, ALICE).await;
    assert_eq!(twice.len(), 8);
    let mut doubled: Vec<_> = placed_before
        .iter()
        .chain(&placed_before)
        .cloned()
        .collect();
    doubled.sort();
    assert_eq!(twice, doubled, "{}", db.name());
}

/// A Portal archive of `conversations` (each `(title, project, pinned)`, one turn each) and the
/// projects `projects`, as a hand might make it.
fn archive(conversations: &[(&str, Option<&str>, bool)], projects: &Value) -> Vec<u8> {
    let transcript: Value = serde_json::from_slice(&one_turn("", "Count the herons")).unwrap();
    let list: Vec<Value> = conversations
        .iter()
        .map(|(title, project, pinned)| {
            json!({
                "portal": "conversation",
                "title": title,
                "agent": "researcher",
                "project": project,
                "pinned": pinned,
                "transcript": transcript,
            })
        })
        .collect();
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default();
    for (name, json) in [
        ("conversations.json", json!(list)),
        ("projects.json", projects.clone()),
    ] {
        zip.start_file(name, options).expect("an entry");
        zip.write_all(json.to_string().as_bytes()).expect("written");
    }
    zip.finish().expect("finished").into_inner()
}

// Issue 45: an import whose projects would bring the importer's past `--max-projects` is refused
// in words, and nothing of it is written: no project, no conversation.
async fn an_import_past_the_most_projects_is_refused_with_nothing_written(db: &Database) {
    let server = start_on(db, |limits| limits.projects_per_user = 2).await;
    let (status, made) = server
        .post("/api/projects", ALICE, json!({ "name": "Mine" }))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    let file = archive(
        &[("One", Some("Mine"), false), ("Two", Some("New 1"), true)],
        &json!([{ "name": "New 1" }, { "name": "New 2" }]),
    );
    let (status, answer) = import(&server, ALICE, file).await;
    assert_eq!(status, StatusCode::CONFLICT, "{}: {answer}", db.name());
    let error = answer["error"].as_str().expect("in words");
    assert!(
        error.contains(
            "the import would make 2 projects, and you have 1 of the 2 one person may have"
        ) && error.ends_with("nothing was imported"),
        "{error}"
    );
    let (projects, _) = projects(&server, ALICE).await;
    assert_eq!(projects.len(), 1, "{}", db.name());
    assert_eq!(count(&server, ALICE).await, 0, "{}", db.name());

    // Within the most, the same kind of file imports: one project made, one found by name.
    let file = archive(
        &[("One", Some("Mine"), false), ("Two", Some("New 1"), true)],
        &json!([{ "name": "New 1" }]),
    );
    let (status, answer) = import(&server, ALICE, file).await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    assert_eq!(answer["projects"].as_array().expect("made").len(), 1);
    assert_eq!(answer["conversations"][1]["pinned"], true);
}

// Issue 45: what a hostile archive names: control and bidirectional characters are left out of
// a project's name, which is then matched exactly; a default agent the importer may not use is
// left out with a note; a conversation's project missing from projects.json is made bare with a
// note; instructions past the limit, and names empty or too long once cleaned, refuse the whole
// import and write nothing.
async fn a_hostile_archives_projects_are_cleaned_or_refused_whole(db: &Database) {
    let server = start_on(db, |limits| limits.project_instructions_chars = 100).await;
    let (status, made) = server
        .post("/api/projects", ALICE, json!({ "name": "Budget" }))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    let budget = made["id"].as_str().expect("id").to_string();

    for (file, said) in [
        (
            archive(
                &[("t", Some("Herons"), false)],
                &json!([{ "name": "Herons", "instructions": "x".repeat(101) }]),
            ),
            "the text of the instructions of the file's project `Herons` is 101 characters long, past the limit of 100",
        ),
        (
            archive(&[("t", Some("\u{202e}\u{0007}"), false)], &json!([])),
            "has 0 characters once control and bidirectional characters are left out, where a project's name has 1 to 80",
        ),
        (
            archive(&[("t", None, false)], &json!([{ "name": "h".repeat(81) }])),
            "has 81 characters once control",
        ),
    ] {
        let (status, answer) = import(&server, ALICE, file).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{answer}");
        let error = answer["error"].as_str().expect("in words");
        assert!(
            error.contains(said) && error.ends_with("nothing was imported"),
            "{error}"
        );
        assert_eq!(count(&server, ALICE).await, 0, "{}", db.name());
        assert_eq!(projects(&server, ALICE).await.0.len(), 1, "{}", db.name());
    }

    let file = archive(
        &[
            ("One", Some("\u{202e}Heron\u{0007}\n  survey\u{200f}"), true),
            ("Two", Some("Stray"), false),
            ("Three", Some(" Budget\u{2066}"), false),
        ],
        &json!([{
            "name": "Heron \u{202e}survey",
            "instructions": "Give counts per hectare.",
            "agent": "no-such-agent",
        }]),
    );
    let (status, answer) = import(&server, ALICE, file).await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    let made = answer["projects"].as_array().expect("made");
    assert_eq!(made.len(), 2, "{answer}");
    assert_eq!(made[0]["name"], "Heron survey");
    assert_eq!(
        made[0]["notes"],
        json!([
            "Its default agent `no-such-agent` is not one you can use here; it has none, so a conversation opened in it talks to your organisation's first agent."
        ])
    );
    assert_eq!(made[1]["name"], "Stray");
    assert!(
        made[1]["notes"][0]
            .as_str()
            .expect("a note")
            .starts_with("Its instructions and default agent were not in the file"),
        "{answer}"
    );
    let conversations = answer["conversations"].as_array().expect("conversations");
    assert_eq!(conversations[0]["project"], made[0]["id"]);
    assert_eq!(conversations[1]["project"], made[1]["id"]);
    assert_eq!(
        conversations[2]["project"],
        budget.as_str(),
        "matched once cleaned"
    );
    let (shown, _) = projects(&server, ALICE).await;
    assert!(
        shown.contains(&(
            "Heron survey".to_string(),
            "Give counts per hectare.".to_string(),
            Value::Null
        )),
        "{shown:?}"
    );
}

/// Each test above on SQLite and on PostgreSQL (skipped without `PORTAL_TEST_POSTGRES`).
macro_rules! on_both_databases {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test]
                async fn $name() {
                    super::$name(&crate::databases::Database::sqlite()).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test]
                async fn $name() {
                    if let Some(db) = crate::databases::Database::postgres() {
                        super::$name(&db).await;
                    }
                }
            )*
        }
    };
}

on_both_databases!(
    projects_come_back_from_the_archive_equal,
    an_import_past_the_most_projects_is_refused_with_nothing_written,
    a_hostile_archives_projects_are_cleaned_or_refused_whole,
);
