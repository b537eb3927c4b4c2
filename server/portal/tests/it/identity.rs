//! Identity, skills and attachments through the HTTP API: real SQLite in a temporary folder (or
//! a test database, [`start_on`]), real HTTP on a loopback port, a configuration directory with
//! two organisations.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::databases::Database;
use portal_core::{TraceEntry, Transcript};
use portal_identity::{Identity, TokenDigest};
use portal_model::ModelRegistry;
use portal_store::Location;
use reqwest::StatusCode;
use serde_json::{Value, json};

pub(crate) const ALICE: &str = "alice-token";
pub(crate) const BOB: &str = "bob-token";
pub(crate) const CAROL: &str = "carol-token";

fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

fn skill(name: &str, extra: &str) -> String {
    format!("---\nname: {name}\ndescription: Use for {name}.\n{extra}---\nDo {name} well.\n")
}

/// Acme (alice, bob; agents `researcher` on the demo model and `looker` on a blind one) and
/// Globex (carol). Acme's skills: `plan` (published), `old` (inactive), bob's private `secret`;
/// Globex has `elsewhere`.
fn configuration(root: &Path) {
    write(
        root,
        "organisations/acme/organisation.toml",
        "name = \"Acme\"\n",
    );
    write(
        root,
        "organisations/globex/organisation.toml",
        "name = \"Globex\"\n",
    );
    for (org, user, token) in [
        ("acme", "alice", ALICE),
        ("acme", "bob", BOB),
        ("globex", "carol", CAROL),
    ] {
        write(
            root,
            &format!("organisations/{org}/users/{user}/user.toml"),
            &format!(
                "name = \"{user}\"\ntoken_sha256 = \"{}\"\n",
                TokenDigest::of(token).to_hex()
            ),
        );
    }
    write(
        root,
        "organisations/acme/agents/researcher.toml",
        "name = \"Researcher\"\nmodel = \"demo\"\neffort = \"high\"\nskills = [\"plan\", \"old\"]\n\
         description = \" Finds and checks facts. \"\nexamples = [\"Size the heron market\", \" \"]\n",
    );
    write(
        root,
        "organisations/acme/agents/looker.toml",
        "name = \"Looker\"\nmodel = \"blind\"\n",
    );
    write(
        root,
        "organisations/acme/skills/plan/SKILL.md",
        &skill("plan", ""),
    );
    write(
        root,
        "organisations/acme/skills/old/SKILL.md",
        &skill("old", "active: false\n"),
    );
    write(
        root,
        "organisations/acme/users/bob/skills/secret/SKILL.md",
        &skill("secret", ""),
    );
    write(
        root,
        "organisations/globex/skills/elsewhere/SKILL.md",
        &skill("elsewhere", ""),
    );
}

const MODELS: &str = r#"
default = "demo"

[[models]]
name = "demo"
kind = "demo"

[[models]]
name = "blind"
kind = "demo"
label = "Blind demo"
capabilities = { can_see = false }
"#;

pub(crate) struct Server {
    base: String,
    client: reqwest::Client,
    _dir: tempfile::TempDir,
}

pub(crate) async fn start() -> Server {
    start_with(|_| {}).await
}

/// [`start`] with `more` written into the configuration directory too.
pub(crate) async fn start_with(more: impl FnOnce(&Path)) -> Server {
    start_configured(more, |_| {}).await
}

/// [`start`] on `database`, the limits as `limits` sets them.
pub(crate) async fn start_on(
    database: &Database,
    limits: impl FnOnce(&mut portal_server::limits::Limits),
) -> Server {
    let location = match database {
        Database::Sqlite(dir) => Location::Sqlite(dir.path().to_path_buf()),
        Database::Postgres { .. } => Location::Postgres(database.url()),
    };
    start_configured(
        |_| {},
        |config| {
            config.database = location;
            limits(&mut config.limits);
        },
    )
    .await
}

/// [`start`] with `more` written into the configuration directory, and the server's
/// configuration changed by `change`.
pub(crate) async fn start_configured(
    more: impl FnOnce(&Path),
    change: impl FnOnce(&mut portal_server::Config),
) -> Server {
    let dir = tempfile::tempdir().expect("tempdir");
    let config_dir = dir.path().join("config");
    configuration(&config_dir);
    more(&config_dir);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("loopback port");
    let base = format!("http://{}", listener.local_addr().expect("address"));
    let mut config = portal_server::Config {
        models: Some(ModelRegistry::from_toml(MODELS, 0.0, |_| None).expect("models")),
        identity: Some(Identity::load(&config_dir).expect("identity")),
        pdf_reader: Some(env!("CARGO_BIN_EXE_portal").into()),
        ..portal_server::Config::local(dir.path().join("data"))
    };
    change(&mut config);
    tokio::spawn(async move {
        if let Err(error) = portal_server::serve(listener, config).await {
            panic!("server failed: {error:#}");
        }
    });
    Server {
        base,
        client: reqwest::Client::new(),
        _dir: dir,
    }
}

impl Server {
    /// The server's loopback address.
    pub(crate) fn address(&self) -> std::net::SocketAddr {
        self.base
            .trim_start_matches("http://")
            .parse()
            .expect("an address")
    }

    pub(crate) fn request(
        &self,
        method: reqwest::Method,
        path: &str,
        token: &str,
    ) -> reqwest::RequestBuilder {
        self.client
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(token)
    }

    pub(crate) async fn get(&self, path: &str, token: &str) -> (StatusCode, Value) {
        let response = self
            .request(reqwest::Method::GET, path, token)
            .send()
            .await
            .expect("answered");
        let status = response.status();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    /// Sends `method` to `path` as `token`, with `body` as JSON when given.
    pub(crate) async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        token: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let mut request = self.request(method, path, token);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.expect("answered");
        let status = response.status();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    pub(crate) async fn post(&self, path: &str, token: &str, body: Value) -> (StatusCode, Value) {
        let response = self
            .request(reqwest::Method::POST, path, token)
            .json(&body)
            .send()
            .await
            .expect("answered");
        let status = response.status();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    pub(crate) async fn conversation(&self, token: &str, agent: &str) -> String {
        let (status, created) = self
            .post("/api/conversations", token, json!({ "agent": agent }))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{created}");
        created["id"].as_str().expect("id").to_string()
    }

    /// The conversation's transcript once no turn of it runs (within a minute).
    pub(crate) async fn ended(&self, token: &str, id: &str) -> Transcript {
        let started = Instant::now();
        loop {
            let transcript = self.transcript(token, id).await;
            if transcript
                .turns
                .iter()
                .all(|t| t.status != portal_core::TurnStatus::Running)
            {
                return transcript;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "{transcript:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    pub(crate) async fn transcript(&self, token: &str, id: &str) -> Transcript {
        let (status, body) = self.get(&format!("/api/conversations/{id}"), token).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        serde_json::from_value(body).expect("transcript")
    }

    pub(crate) async fn upload(
        &self,
        token: &str,
        filename: &str,
        bytes: Vec<u8>,
    ) -> (StatusCode, Value) {
        self.upload_to("/api/attachments", token, filename, bytes)
            .await
    }

    /// Uploads `bytes` named `filename` to `path`, as the page's file picker sends them.
    pub(crate) async fn upload_to(
        &self,
        path: &str,
        token: &str,
        filename: &str,
        bytes: Vec<u8>,
    ) -> (StatusCode, Value) {
        let response = self
            .request(reqwest::Method::POST, path, token)
            .query(&[("filename", filename)])
            .body(bytes)
            .send()
            .await
            .expect("answered");
        let status = response.status();
        (status, response.json().await.unwrap_or(Value::Null))
    }
}

fn png(width: u32, height: u32) -> Vec<u8> {
    let image = image::RgbImage::from_pixel(width, height, image::Rgb([10, 200, 30]));
    let mut out = std::io::Cursor::new(Vec::new());
    image
        .write_to(&mut out, image::ImageFormat::Png)
        .expect("png");
    out.into_inner()
}

#[tokio::test]
async fn users_sign_in_with_bearer_tokens_and_see_their_organisations_agents() {
    let server = start().await;
    let response = server
        .client
        .get(format!("{}/api/agents", server.base))
        .send()
        .await
        .expect("answered");
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let (status, _) = server.get("/api/agents", "not-a-token").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    let (status, agents) = server.get("/api/agents", ALICE).await;
    assert_eq!(status, StatusCode::OK);
    let ids: Vec<&str> = agents
        .as_array()
        .expect("list")
        .iter()
        .map(|a| a["id"].as_str().expect("id"))
        .collect();
    assert_eq!(ids, ["looker", "researcher"]);
    assert_eq!(agents[1]["effort"], "high");
    // The header names the model each agent runs on; the greeting says what the agent is for.
    assert_eq!(agents[0]["model"], "blind");
    assert_eq!(agents[0]["model_label"], "Blind demo");
    assert_eq!(agents[0]["demo"], true);
    assert_eq!(agents[0]["description"], "");
    assert_eq!(agents[1]["model"], "demo");
    assert_eq!(agents[1]["description"], "Finds and checks facts.");
    assert_eq!(agents[1]["examples"], json!(["Size the heron market"]));
    assert!(agents[1]["context_window"].as_u64().is_some_and(|w| w > 0));
    assert!(
        agents[1].get("instructions").is_none(),
        "instructions stay on the server"
    );

    let (_, agents) = server.get("/api/agents", CAROL).await;
    assert_eq!(agents.as_array().map(Vec::len), Some(1));
    let assistant = &agents[0];
    assert_eq!(
        (
            &assistant["id"],
            &assistant["name"],
            &assistant["model"],
            &assistant["effort"]
        ),
        (
            &json!("assistant"),
            &json!("Assistant"),
            &json!("demo"),
            &json!("medium")
        )
    );
    assert!(
        assistant["description"]
            .as_str()
            .is_some_and(|d| !d.is_empty()),
        "the default agent says what it is for"
    );
    assert_eq!(assistant["examples"].as_array().map(Vec::len), Some(3));
    let (status, _) = server
        .post("/api/conversations", CAROL, json!({"agent": "researcher"}))
        .await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "another organisation's agent is not found"
    );
}

#[tokio::test]
async fn a_conversation_names_the_agent_it_was_opened_with() {
    let server = start().await;
    let id = server.conversation(ALICE, "researcher").await;
    let (status, body) = server
        .get(&format!("/api/conversations/{id}/agent"), ALICE)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body, json!({"agent": "researcher"}));
    let (status, _) = server
        .get(&format!("/api/conversations/{id}/agent"), CAROL)
        .await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "another organisation's conversation is not found"
    );
}

#[tokio::test]
async fn s2_s3_the_skill_catalogue_is_what_the_caller_sees_and_is_published() {
    let server = start().await;
    let names = |list: Value| -> Vec<String> {
        list.as_array()
            .expect("list")
            .iter()
            .map(|s| s["name"].as_str().expect("name").to_string())
            .collect()
    };
    let (_, alice) = server.get("/api/skills", ALICE).await;
    assert_eq!(names(alice), ["plan"]);
    let (_, bob) = server.get("/api/skills", BOB).await;
    assert_eq!(names(bob), ["plan", "secret"]);
    let (_, carol) = server.get("/api/skills", CAROL).await;
    assert_eq!(names(carol), ["elsewhere"]);
}

#[tokio::test]
async fn s2_s3_unknown_invisible_inactive_and_foreign_slugs_are_refused_alike_with_nothing_recorded()
 {
    let server = start().await;
    let id = server.conversation(ALICE, "researcher").await;
    let path = format!("/api/conversations/{id}/messages");
    let mut answers = Vec::new();
    for (case, slug) in [
        ("unknown", "nothing"),
        ("invisible", "secret"),
        ("inactive", "old"),
        ("other organisation", "elsewhere"),
    ] {
        let (status, body) = server
            .post(&path, ALICE, json!({ "text": format!("/{slug} go") }))
            .await;
        assert_eq!(
            status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "S3 {case}: {body}"
        );
        let error = body["error"].as_str().expect("error").to_string();
        assert!(
            error.contains(&format!("/{slug}")),
            "S3 {case}: names the slug: {error}"
        );
        answers.push(error.replace(&format!("/{slug}"), "/…"));
    }
    assert!(
        answers.windows(2).all(|w| w[0] == w[1]),
        "S3: the same words: {answers:?}"
    );
    assert!(
        server.transcript(ALICE, &id).await.turns.is_empty(),
        "S3: nothing recorded"
    );
}

#[tokio::test]
async fn s4_an_accepted_selection_is_recorded_on_its_turn() {
    let server = start().await;
    let id = server.conversation(ALICE, "researcher").await;
    let (status, body) = server
        .post(
            &format!("/api/conversations/{id}/messages"),
            ALICE,
            json!({ "text": "/plan make one" }),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let transcript = server.transcript(ALICE, &id).await;
    assert!(
        transcript.turns[0]
            .trace
            .contains(&TraceEntry::SkillSelect {
                skill_ids: vec!["acme/plan".into()]
            }),
        "{:?}",
        transcript.turns[0].trace
    );
}

#[tokio::test]
async fn another_organisations_conversation_answers_404_to_reads_and_posts() {
    let server = start().await;
    let id = server.conversation(ALICE, "researcher").await;
    let (status, body) = server
        .post(
            &format!("/api/conversations/{id}/messages"),
            ALICE,
            json!({ "text": "hello" }),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");

    let (status, _) = server.get(&format!("/api/conversations/{id}"), CAROL).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = server
        .post(
            &format!("/api/conversations/{id}/messages"),
            CAROL,
            json!({ "text": "mine now" }),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = server
        .get(&format!("/api/conversations/{id}/turns/1/events"), CAROL)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = server
        .post(
            &format!("/api/conversations/{id}/turns/1/cancel"),
            CAROL,
            json!({}),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (_, listed) = server.get("/api/conversations", CAROL).await;
    assert_eq!(listed["conversations"], json!([]));
    let (status, _) = server.get(&format!("/api/conversations/{id}"), BOB).await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "nor does a colleague in the same organisation"
    );
    assert_eq!(
        server.transcript(ALICE, &id).await.turns.len(),
        1,
        "carol's post recorded nothing"
    );
}

#[tokio::test]
async fn a5_a_picture_for_a_blind_model_is_refused_with_nothing_recorded() {
    let server = start().await;
    let (status, picture) = server.upload(ALICE, "cat.png", png(40, 30)).await;
    assert_eq!(status, StatusCode::CREATED, "{picture}");
    assert_eq!(picture["kind"], "picture");
    let attachment = picture["id"].as_str().expect("id").to_string();

    let id = server.conversation(ALICE, "looker").await;
    let (status, body) = server
        .post(
            &format!("/api/conversations/{id}/messages"),
            ALICE,
            json!({ "text": "what is this?", "attachments": [attachment] }),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let error = body["error"].as_str().expect("error");
    assert!(error.contains("cannot see pictures"), "A5: {error}");
    assert!(
        server.transcript(ALICE, &id).await.turns.is_empty(),
        "A5: nothing recorded"
    );

    let seeing = server.conversation(ALICE, "researcher").await;
    let (status, body) = server
        .post(
            &format!("/api/conversations/{seeing}/messages"),
            ALICE,
            json!({ "text": "what is this?", "attachments": [attachment] }),
        )
        .await;
    assert_eq!(
        status,
        StatusCode::ACCEPTED,
        "a model that sees takes it: {body}"
    );
}

#[tokio::test]
async fn a1_a2_uploads_are_sniffed_read_to_the_end_and_kept_to_their_organisation() {
    let server = start().await;
    let (status, body) = server
        .upload(ALICE, "virus.exe", b"MZ\x90\0\x03\0\0\0".to_vec())
        .await;
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{body}");
    let (status, body) = server.upload(ALICE, "empty.txt", Vec::new()).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");

    let (status, doc) = server
        .upload(
            ALICE,
            "picture.png",
            "# Plan\n\nShip it.\n".as_bytes().to_vec(),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{doc}");
    assert_eq!(
        doc["kind"], "document",
        "A1: the bytes decide, not the name"
    );
    assert_eq!(doc["media_type"], "text/plain");
    assert_eq!(doc["status"], "finished");
    let id = doc["id"].as_str().expect("id");

    let (status, _) = server.get(&format!("/api/attachments/{id}"), CAROL).await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "another organisation's attachment"
    );
    let conversation = server.conversation(CAROL, "assistant").await;
    let (status, _) = server
        .post(
            &format!("/api/conversations/{conversation}/messages"),
            CAROL,
            json!({ "text": "read it", "attachments": [id] }),
        )
        .await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "carol cannot attach alice's upload"
    );
    assert!(
        server
            .transcript(CAROL, &conversation)
            .await
            .turns
            .is_empty()
    );

    let (status, pdf) = server.upload(ALICE, "report.pdf", tiny_pdf()).await;
    assert_eq!(status, StatusCode::CREATED, "{pdf}");
    assert_eq!(
        pdf["status"], "reading",
        "A2: read after the upload answers"
    );
    let pdf_id = pdf["id"].as_str().expect("id");
    let deadline = Instant::now() + Duration::from_secs(10);
    let read = loop {
        let (_, now) = server
            .get(&format!("/api/attachments/{pdf_id}"), ALICE)
            .await;
        if now["status"] != "reading" || Instant::now() > deadline {
            break now;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(read["status"], "finished", "{read}");
    assert_eq!(read["pages_total"], 1);
    assert!(
        read["text"]
            .as_str()
            .expect("text")
            .contains("Quarterly numbers"),
        "{read}"
    );
}

/// A one-page PDF with one line of text.
fn tiny_pdf() -> Vec<u8> {
    pdf_of_lines(&["Quarterly numbers"])
}

/// A PDF of one page for each line, showing it.
pub(crate) fn pdf_of_lines(lines: &[&str]) -> Vec<u8> {
    use lopdf::content::{Content, Operation};
    use lopdf::{Object, Stream, dictionary};

    let mut doc = lopdf::Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font_id = doc.add_object(
        dictionary! { "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica" },
    );
    let resources_id = doc.add_object(dictionary! { "Font" => dictionary! { "F1" => font_id } });
    let mut kids: Vec<Object> = Vec::new();
    for line in lines {
        let content = Content {
            operations: vec![
                Operation::new("BT", vec![]),
                Operation::new("Tf", vec!["F1".into(), 12.into()]),
                Operation::new("Td", vec![72.into(), 720.into()]),
                Operation::new("Tj", vec![Object::string_literal(*line)]),
                Operation::new("ET", vec![]),
            ],
        };
        let content_id = doc.add_object(Stream::new(
            dictionary! {},
            content.encode().expect("content"),
        ));
        let page_id = doc.add_object(
            dictionary! { "Type" => "Page", "Parent" => pages_id, "Contents" => content_id },
        );
        kids.push(page_id.into());
    }
    let count = kids.len() as i64;
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages", "Kids" => kids, "Count" => count,
            "Resources" => resources_id,
            "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
        }),
    );
    let catalog_id = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog_id);
    let mut out = Vec::new();
    doc.save_to(&mut out).expect("pdf");
    out
}

#[tokio::test]
async fn an_attachments_bytes_go_back_to_its_owner_only_and_only_a_raster_picture_opens_inline() {
    let server = start().await;
    let content = |id: &str, token: &str| {
        server
            .request(
                reqwest::Method::GET,
                &format!("/api/attachments/{id}/content"),
                token,
            )
            .send()
    };
    let header = |response: &reqwest::Response, name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    };

    let picture = png(3, 2);
    let (status, uploaded) = server.upload(ALICE, "plan é.png", picture.clone()).await;
    assert_eq!(status, StatusCode::CREATED, "{uploaded}");
    let id = uploaded["id"].as_str().expect("id");
    let response = content(id, ALICE).await.expect("answered");
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(header(&response, "content-type"), "image/png");
    assert_eq!(header(&response, "x-content-type-options"), "nosniff");
    // The name percent-encoded as UTF-8, byte by byte.
    let accented: String = "é".bytes().map(|b| format!("%{b:02X}")).collect();
    assert_eq!(
        header(&response, "content-disposition"),
        format!("inline; filename*=UTF-8''plan%20{accented}.png")
    );
    assert_eq!(response.bytes().await.expect("bytes").as_ref(), picture);

    for token in [BOB, CAROL] {
        let response = content(id, token).await.expect("answered");
        assert_eq!(
            response.status(),
            StatusCode::NOT_FOUND,
            "another user's attachment, as its metadata"
        );
    }

    // Pages that would run as the portal's own were they shown: stored as text, served only as
    // downloads of plain text.
    let hostile = [
        (
            "page.html",
            "<!doctype html><script>alert(document.cookie)</script>",
        ),
        (
            "drawing.svg",
            "<svg xmlns=\"http://www.w3.org/2000/svg\" onload=\"alert(1)\"><rect width=\"9\" height=\"9\"/></svg>",
        ),
    ];
    for (name, text) in hostile {
        let (status, uploaded) = server.upload(ALICE, name, text.as_bytes().to_vec()).await;
        assert_eq!(status, StatusCode::CREATED, "{uploaded}");
        let id = uploaded["id"].as_str().expect("id");
        let response = content(id, ALICE).await.expect("answered");
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(
            header(&response, "content-type"),
            "text/plain; charset=utf-8",
            "{name}"
        );
        assert_eq!(header(&response, "x-content-type-options"), "nosniff");
        assert_eq!(
            header(&response, "content-disposition"),
            format!("attachment; filename*=UTF-8''{name}")
        );
        assert_eq!(response.text().await.expect("text"), text);
    }

    let response = content("att_00000000000000000000000000000000", ALICE)
        .await
        .expect("answered");
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
}

// Issue 48: a picture a tool answered with is its conversation owner's: served to them, and 404
// to another user of their organisation or of another, as an upload is.
#[tokio::test]
async fn a_tools_picture_goes_back_to_the_conversations_owner_only() {
    let server = start_with(|root| {
        write(
            root,
            "organisations/acme/mcp/everything.toml",
            &crate::mcp_support::everything(""),
        );
        write(
            root,
            "organisations/acme/agents/painter.toml",
            "name = \"Painter\"\nmodel = \"demo\"\nmcp = { everything = [\"get-tiny-image\"] }\n",
        );
    })
    .await;
    let connected = Instant::now();
    loop {
        let (_, servers) = server.get("/api/agents/painter/mcp", ALICE).await;
        if servers
            .as_array()
            .is_some_and(|s| s.iter().all(|s| s["status"] == "connected"))
        {
            break;
        }
        assert!(connected.elapsed() < Duration::from_secs(60), "{servers}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let id = server.conversation(ALICE, "painter").await;
    let (status, body) = server
        .post(
            &format!("/api/conversations/{id}/messages"),
            ALICE,
            json!({ "text": "Please use everything__get-tiny-image" }),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let answered = Instant::now();
    let picture = loop {
        let transcript = server.transcript(ALICE, &id).await;
        let kept = transcript.turns[0]
            .messages
            .iter()
            .flat_map(|m| &m.blocks)
            .find_map(|b| match b {
                portal_core::Block::ToolResult { pictures, .. } => pictures.first().cloned(),
                _ => None,
            });
        if let Some(picture) = kept {
            break picture;
        }
        assert!(
            answered.elapsed() < Duration::from_secs(60),
            "{transcript:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let content = format!("/api/attachments/{}/content", picture.attachment_id);
    for (token, expected) in [
        (ALICE, StatusCode::OK),
        (BOB, StatusCode::NOT_FOUND),
        (CAROL, StatusCode::NOT_FOUND),
    ] {
        let response = server
            .request(reqwest::Method::GET, &content, token)
            .send()
            .await
            .expect("answered");
        assert_eq!(response.status(), expected, "{token}");
    }
}
