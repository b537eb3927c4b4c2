//! Calls to the Portal server's JSON API.

use portal_core::TurnStatus;
use portal_core::attachment::Attachment;
use portal_core::effort::Effort;
use portal_core::skills::CatalogueEntry;
use serde::Deserialize;

pub use crate::request::Error;
use crate::request::{call, fetch, json};

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
    /// The project the conversation is in, by id; `None` for none.
    #[serde(default)]
    pub project: Option<String>,
    /// Whether it is pinned, listed before the others.
    #[serde(default)]
    pub pinned: bool,
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
/// empty), within `project` (all when `None`), from `cursor` (the first page when `None`).
pub async fn conversations(
    search: &str,
    project: Option<&str>,
    cursor: Option<&str>,
) -> Result<Page, Error> {
    let mut url = format!("/api/conversations?limit={PAGE_SIZE}");
    if let Some(project) = project {
        url.push_str(&format!(
            "&project={}",
            js_sys::encode_uri_component(project)
        ));
    }
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

/// Opens a conversation with `agent` (the project's, else the organisation's first, when `None`)
/// in `project`, and returns its id.
pub async fn create_conversation(
    agent: Option<&str>,
    project: Option<&str>,
) -> Result<String, Error> {
    let body = serde_json::json!({ "agent": agent, "project": project }).to_string();
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
