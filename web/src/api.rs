//! Calls to the Portal server's JSON API.

use std::fmt;

use portal_core::TurnStatus;
use portal_core::attachment::Attachment;
use portal_core::effort::Effort;
use portal_core::skills::CatalogueEntry;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{Request, RequestInit, Response};

/// A request that did not get what it asked for, in words for the person.
#[derive(Debug, Clone, PartialEq)]
pub struct Error {
    /// The status the server answered with; `None` when no answer came.
    pub status: Option<u16>,
    pub message: String,
}

impl Error {
    /// Whether the session expired or was revoked, so the person must sign in again.
    pub fn signed_out(&self) -> bool {
        self.status == Some(401)
    }

    /// Whether what was asked for does not exist for this person.
    pub fn missing(&self) -> bool {
        self.status == Some(404)
    }

    fn browser(message: impl Into<String>) -> Self {
        Error {
            status: None,
            message: message.into(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Who is signed in.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Person {
    pub mode: Mode,
    pub organisation: String,
    pub user: String,
    pub name: String,
}

/// How the server knows who it serves: users who sign in, or one local person.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Users,
    Local,
}

/// A conversation as the list shows it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Listed {
    pub id: String,
    /// The first message's opening words, or the name it was given; empty before the first
    /// message.
    pub title: String,
    /// Milliseconds since the Unix epoch.
    pub last_activity: f64,
    /// The latest turn's status; `None` before the first turn.
    pub status: Option<TurnStatus>,
}

/// One page of the person's conversations, newest activity first.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Page {
    pub conversations: Vec<Listed>,
    /// Where the next page starts; `None` after the last.
    pub next: Option<String>,
}

/// An agent the person can open a conversation with.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Agent {
    pub id: String,
    pub name: String,
    /// The model the agent runs on, as people know it.
    pub model_label: String,
    /// Whether that is the built-in demo model.
    pub demo: bool,
    /// That model's context window in tokens, for the context meter.
    pub context_window: u64,
    /// The agent's default effort, which wins unless a message overrides it (rule E1).
    pub effort: Effort,
    /// What the agent is for, for an empty conversation's greeting; may be empty.
    #[serde(default)]
    pub description: String,
    /// Messages to start a conversation from.
    #[serde(default)]
    pub examples: Vec<String>,
    /// Its MCP servers, a line each: status and tools, as the server words them.
    #[serde(default)]
    pub servers: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct ConversationAgent {
    agent: String,
}

#[derive(Debug, Deserialize)]
struct Created {
    id: String,
}

#[derive(Debug, Deserialize)]
struct Sent {
    turn: u32,
}

#[derive(Debug, Deserialize)]
struct Refusal {
    error: String,
}

/// Who is signed in; a 401 when nobody is.
pub async fn session() -> Result<Person, Error> {
    call("GET", "/api/session", None).await
}

/// Signs in; the server keeps the session in a cookie the browser sends from then on.
pub async fn sign_in(organisation: &str, user: &str, password: &str) -> Result<Person, Error> {
    let body =
        serde_json::json!({ "organisation": organisation, "user": user, "password": password })
            .to_string();
    call("POST", "/api/session", Some(json(body))).await
}

/// The buttons of the single sign-on providers of `organisation`, as the server writes them
/// (HTML with its labels escaped), each coming back to `here` once signed in; empty when it has
/// none.
pub async fn sign_in_buttons(organisation: &str, here: &str) -> String {
    let url = format!(
        "/sso/buttons?organisation={}&return_to={}",
        js_sys::encode_uri_component(organisation),
        js_sys::encode_uri_component(here)
    );
    match fetch("GET", &url, None).await {
        Ok((response, text)) if response.ok() => text,
        _ => String::new(),
    }
}

/// A page of the person's conversations whose title or messages contain `search` (all when
/// empty), from `cursor` (the first page when `None`).
pub async fn conversations(search: &str, cursor: Option<&str>) -> Result<Page, Error> {
    let mut url = format!("/api/conversations?limit={PAGE_SIZE}");
    if let Some(cursor) = cursor {
        url.push_str(&format!("&cursor={}", js_sys::encode_uri_component(cursor)));
    }
    if !search.is_empty() {
        url.push_str(&format!("&q={}", js_sys::encode_uri_component(search)));
    }
    call("GET", &url, None).await
}

/// How many conversations a page of the list holds.
const PAGE_SIZE: u32 = 50;

/// Gives a conversation a new title; answers the conversation as the list shows it.
pub async fn rename(conversation: &str, title: &str) -> Result<Listed, Error> {
    let body = serde_json::json!({ "title": title }).to_string();
    call(
        "PATCH",
        &format!("/api/conversations/{conversation}"),
        Some(json(body)),
    )
    .await
}

/// Deletes a conversation with its turns and attachments.
pub async fn delete_conversation(conversation: &str) -> Result<(), Error> {
    call(
        "DELETE",
        &format!("/api/conversations/{conversation}"),
        None,
    )
    .await
}

/// The agents of the person's organisation, for the agent picker.
pub async fn agents() -> Result<Vec<Agent>, Error> {
    call("GET", "/api/agents", None).await
}

/// Opens a conversation with `agent` and returns its id.
pub async fn create_conversation(agent: Option<&str>) -> Result<String, Error> {
    let body = serde_json::json!({ "agent": agent }).to_string();
    let created: Created = call("POST", "/api/conversations", Some(json(body))).await?;
    Ok(created.id)
}

/// The id of the agent a stored conversation talks to.
pub async fn conversation_agent(conversation: &str) -> Result<String, Error> {
    let named: ConversationAgent = call(
        "GET",
        &format!("/api/conversations/{conversation}/agent"),
        None,
    )
    .await?;
    Ok(named.agent)
}

/// Uploads a file the person attached; the server decides what it is (rule A1).
pub async fn upload(file: &web_sys::File) -> Result<Attachment, Error> {
    let name = String::from(js_sys::encode_uri_component(&file.name()));
    let kind = file.type_();
    let kind = if kind.is_empty() {
        "application/octet-stream".to_string()
    } else {
        kind
    };
    call(
        "POST",
        &format!("/api/attachments?filename={name}"),
        Some((file.into(), kind)),
    )
    .await
}

/// An uploaded attachment as it is now, with a document's reading progress (rule A2).
pub async fn attachment(id: &str) -> Result<Attachment, Error> {
    call("GET", &format!("/api/attachments/{id}"), None).await
}

/// Where an attachment's stored bytes are served: a picture opens, anything else downloads.
pub fn content_url(id: &str) -> String {
    format!(
        "/api/attachments/{}/content",
        String::from(js_sys::encode_uri_component(id))
    )
}

/// A stored conversation's transcript.
pub async fn transcript(conversation: &str) -> Result<portal_core::Transcript, Error> {
    call("GET", &format!("/api/conversations/{conversation}"), None).await
}

/// What a stored conversation's turns spent, each and together.
pub async fn usage(conversation: &str) -> Result<portal_core::usage::ConversationUsage, Error> {
    call(
        "GET",
        &format!("/api/conversations/{conversation}/usage"),
        None,
    )
    .await
}

/// The skills the user can select with `/slug`, for the composer's completion.
pub async fn skills() -> Result<Vec<CatalogueEntry>, Error> {
    call("GET", "/api/skills", None).await
}

/// Sends the user's message, with the effort it asks for (`None`: the agent's) and the ids of
/// the attachments it carries; returns the number of the turn it opened.
pub async fn send_message(
    conversation: &str,
    text: &str,
    effort: Option<Effort>,
    attachments: &[String],
    again: Option<u32>,
) -> Result<u32, Error> {
    let body = serde_json::json!({
        "text": text, "effort": effort, "attachments": attachments, "again": again
    })
    .to_string();
    let sent: Sent = call(
        "POST",
        &format!("/api/conversations/{conversation}/messages"),
        Some(json(body)),
    )
    .await?;
    Ok(sent.turn)
}

/// Cancels a running or paused turn; it is recorded cut off.
pub async fn cancel_turn(conversation: &str, turn: u32) -> Result<(), Error> {
    let _: Sent = call("POST", &turn_url(conversation, turn, "cancel"), None).await?;
    Ok(())
}

/// Approves or declines `calls`, the calls a paused turn waits on.
pub async fn decide(
    conversation: &str,
    turn: u32,
    calls: &[String],
    approve: bool,
) -> Result<(), Error> {
    for call_id in calls {
        let body = serde_json::json!({ "call_id": call_id, "approve": approve }).to_string();
        let _: Sent = call(
            "POST",
            &turn_url(conversation, turn, "decision"),
            Some(json(body)),
        )
        .await?;
    }
    Ok(())
}

/// Answers a paused turn's question.
pub async fn answer(conversation: &str, turn: u32, text: &str) -> Result<(), Error> {
    let body = serde_json::json!({ "text": text }).to_string();
    let _: Sent = call(
        "POST",
        &turn_url(conversation, turn, "answer"),
        Some(json(body)),
    )
    .await?;
    Ok(())
}

fn turn_url(conversation: &str, turn: u32, action: &str) -> String {
    format!("/api/conversations/{conversation}/turns/{turn}/{action}")
}

/// A JSON request body and its content type.
fn json(body: String) -> (JsValue, String) {
    (JsValue::from_str(&body), "application/json".to_string())
}

/// Makes a request with an optional body and its content type, and reads the JSON answer or the
/// server's refusal.
async fn call<T: DeserializeOwned>(
    method: &str,
    url: &str,
    body: Option<(JsValue, String)>,
) -> Result<T, Error> {
    // Only the reading is generic: the request lives in `answer_to`, so the wasm holds one copy of
    // it, not one per answer type.
    let (status, text) = answer_to(method, url, body).await?;
    let text = if text.is_empty() { "null" } else { &text };
    serde_json::from_str(text).map_err(|e| {
        web_sys::console::warn_1(&format!("unreadable answer from {url}: {e}").into());
        Error {
            status: Some(status),
            message: "the portal's answer could not be read; reload the page".to_string(),
        }
    })
}

/// How long the page goes on asking again when the portal answers 503 (a server stopping for a
/// restart, or still starting: it did nothing) before it shows the refusal. **Decision:** 45 s,
/// a single server's grace for its running turns and its start again.
const UNAVAILABLE_FOR_MS: f64 = 45_000.0;

/// Makes a request and returns the status and text of a successful answer, or the server's
/// refusal as an error. A 503 is asked again after its `Retry-After` (1 s to 5 s) for up to
/// [`UNAVAILABLE_FOR_MS`]: behind a proxy another replica answers, and a lone server restarts.
async fn answer_to(
    method: &str,
    url: &str,
    body: Option<(JsValue, String)>,
) -> Result<(u16, String), Error> {
    let first = js_sys::Date::now();
    loop {
        let (response, text) = fetch(method, url, body.clone()).await?;
        let status = response.status();
        if response.ok() {
            return Ok((status, text));
        }
        if status == 503 {
            let seconds = response
                .headers()
                .get("retry-after")
                .ok()
                .flatten()
                .and_then(|value| value.trim().parse::<i32>().ok())
                .unwrap_or(1);
            let wait = seconds.clamp(1, 5) * 1000;
            if js_sys::Date::now() - first + f64::from(wait) < UNAVAILABLE_FOR_MS {
                crate::wait::sleep(wait).await;
                continue;
            }
        }
        let message = serde_json::from_str::<Refusal>(&text)
            .map(|r| r.error)
            .unwrap_or_else(|_| "the portal could not do that; try again in a moment".to_string());
        return Err(Error {
            status: Some(status),
            message,
        });
    }
}

/// Sends one request and reads its answer's text, whatever its status.
async fn fetch(
    method: &str,
    url: &str,
    body: Option<(JsValue, String)>,
) -> Result<(Response, String), Error> {
    let init = RequestInit::new();
    init.set_method(method);
    let kind = body.as_ref().map(|(_, kind)| kind.clone());
    if let Some((body, _)) = body {
        init.set_body(&body);
    }
    let request = Request::new_with_str_and_init(url, &init).map_err(describe)?;
    if let Some(kind) = kind {
        request
            .headers()
            .set("content-type", &kind)
            .map_err(describe)?;
    }
    let window = web_sys::window().ok_or_else(|| {
        Error::browser("the browser could not do that; reload the page and try again")
    })?;
    let response: Response = JsFuture::from(window.fetch_with_request(&request))
        .await
        .map_err(|_| {
            Error::browser("the portal cannot be reached; check the connection, then try again")
        })?
        .dyn_into()
        .map_err(describe)?;
    let text = JsFuture::from(response.text().map_err(describe)?)
        .await
        .map_err(describe)?
        .as_string()
        .unwrap_or_default();
    Ok((response, text))
}

/// A browser error: what the browser said goes to the console, the person gets a sentence.
fn describe(value: JsValue) -> Error {
    web_sys::console::warn_1(&value);
    Error::browser("the browser could not do that; reload the page and try again")
}
