//! Conversations: `POST /api/conversations` opens one (in a project, if asked), `GET
//! /api/conversations` lists a page of the caller's (pinned first, then newest activity first,
//! searched with `q`, kept to a project with `project`), `GET /api/conversations/{id}` reads
//! one's transcript, `PATCH` renames it, moves it into or out of a project or pins it, `DELETE`
//! deletes it, `GET /api/conversations/{id}/agent` names the agent it talks to, and
//! `GET /api/conversations/{id}/usage` says what each of its turns spent and the total.

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use portal_core::title::one_line_name;
use portal_core::usage::ConversationUsage;
use serde::{Deserialize, Serialize};

use portal_identity::{Caller, DEFAULT_AGENT};
use portal_store::{
    ConversationChange, ConversationId, ConversationQuery, ConversationSummary, ListCursor,
    ProjectFilter,
};

use super::projects::{present, usable_agent};
use super::{ApiError, AppState, owner_of};

/// The most conversations one page lists. **Decision:** 100; 50 when the query does not say.
pub const PAGE_LIMIT: u32 = 100;
const DEFAULT_PAGE: u32 = 50;
/// The longest title, in characters. **Decision:** 200.
pub const TITLE_LIMIT: usize = 200;
/// The longest search, in characters.
const SEARCH_LIMIT: usize = 200;

pub(super) fn router() -> Router<AppState> {
    Router::new()
        .route("/api/conversations", get(list).post(create))
        .route(
            "/api/conversations/{id}",
            get(show).patch(change).delete(delete),
        )
        .route("/api/conversations/{id}/agent", get(agent))
        .route("/api/conversations/{id}/usage", get(usage))
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct NewConversation {
    /// The agent to talk to; the project's default agent, else the organisation's first, when
    /// left out.
    #[serde(default)]
    agent: Option<String>,
    /// The caller's project to open it in.
    #[serde(default)]
    project: Option<String>,
}

#[derive(Debug, Serialize)]
struct Created {
    id: String,
}

async fn create(
    State(state): State<AppState>,
    caller: Caller,
    body: Bytes,
) -> Result<(StatusCode, Json<Created>), ApiError> {
    let wanted = if body.iter().all(u8::is_ascii_whitespace) {
        NewConversation::default()
    } else {
        serde_json::from_slice::<NewConversation>(&body).map_err(|e| {
            ApiError(
                StatusCode::UNPROCESSABLE_ENTITY,
                format!(
                    "the body is not a new conversation ({e}); send {{\"agent\"?: \"<id>\", \
                     \"project\"?: \"<id>\"}} or nothing"
                ),
            )
        })?
    };
    let storage = state.turns.storage();
    let owner = owner_of(&caller);
    let project = match &wanted.project {
        Some(id) => Some(storage.project(&owner, id).await?),
        None => None,
    };
    let agent = match wanted.agent {
        Some(id) => usable_agent(&state, &caller, id)?,
        // The project's default agent while the organisation still has it.
        None => project
            .as_ref()
            .and_then(|p| p.agent_id.as_deref())
            .and_then(|id| state.identity.agent(&caller, id))
            .or_else(|| state.identity.agents(&caller).first())
            .map_or_else(|| DEFAULT_AGENT.to_string(), |a| a.id.clone()),
    };
    let id = match &project {
        Some(project) => {
            storage
                .create_conversation_in_project(&owner, &agent, &project.id)
                .await?
        }
        None => storage.create_conversation(&owner, &agent).await?,
    };
    Ok((
        StatusCode::CREATED,
        Json(Created {
            id: id.as_str().to_string(),
        }),
    ))
}

/// `GET /api/conversations`'s query.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ListQuery {
    #[serde(default)]
    limit: Option<String>,
    #[serde(default)]
    cursor: Option<String>,
    #[serde(default)]
    q: Option<String>,
    /// A project's id, or `none` for the conversations in no project.
    #[serde(default)]
    project: Option<String>,
}

/// A conversation as the list shows it.
#[derive(Debug, Serialize)]
struct Item {
    id: String,
    /// Empty until the first message with words names it.
    title: String,
    /// Milliseconds since the Unix epoch.
    created: i64,
    last_activity: i64,
    /// The latest turn's status (`running`, `paused`, `completed`, `cut_off`, `failed`); null
    /// before the first message.
    status: Option<&'static str>,
    /// The project it is in; null for none.
    project: Option<String>,
    pinned: bool,
}

impl From<ConversationSummary> for Item {
    fn from(summary: ConversationSummary) -> Self {
        Item {
            id: summary.id.as_str().to_string(),
            title: summary.title,
            created: summary.created_at_ms,
            last_activity: summary.last_activity_ms,
            status: summary.status.map(|s| s.as_str()),
            project: summary.project,
            pinned: summary.pinned,
        }
    }
}

#[derive(Debug, Serialize)]
struct Page {
    conversations: Vec<Item>,
    /// The `cursor` of the next page; null on the last.
    next: Option<String>,
}

async fn list(
    State(state): State<AppState>,
    caller: Caller,
    query: Result<Query<ListQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<Page>, ApiError> {
    let Query(query) = query.map_err(|e| {
        ApiError(
            StatusCode::BAD_REQUEST,
            format!(
                "the query is not a list's ({}); send `limit`, `cursor`, `q` and `project` or \
                 nothing",
                e.body_text()
            ),
        )
    })?;
    let limit = match query.limit.as_deref() {
        None => DEFAULT_PAGE,
        Some(text) => text
            .parse::<u32>()
            .ok()
            .filter(|n| (1..=PAGE_LIMIT).contains(n))
            .ok_or_else(|| {
                ApiError(
                    StatusCode::BAD_REQUEST,
                    format!("`limit` must be a whole number from 1 to {PAGE_LIMIT}"),
                )
            })?,
    };
    let after = query
        .cursor
        .as_deref()
        .map(|text| {
            ListCursor::decode(text).ok_or_else(|| {
                ApiError(
                    StatusCode::BAD_REQUEST,
                    "`cursor` is not one this list handed out; start again without it".into(),
                )
            })
        })
        .transpose()?;
    let search = query
        .q
        .map(|q| q.trim().to_string())
        .filter(|q| !q.is_empty());
    if search
        .as_ref()
        .is_some_and(|q| q.chars().count() > SEARCH_LIMIT)
    {
        return Err(ApiError(
            StatusCode::BAD_REQUEST,
            format!("`q` is longer than {SEARCH_LIMIT} characters; search for less"),
        ));
    }
    let storage = state.turns.storage();
    let owner = owner_of(&caller);
    let project = match query.project {
        None => ProjectFilter::Any,
        Some(none) if none == "none" => ProjectFilter::Outside,
        // Another person's project, or one that is gone, is not found rather than empty.
        Some(id) => ProjectFilter::Within(storage.project(&owner, &id).await?.id),
    };
    let page = storage
        .list_conversations(
            &owner,
            ConversationQuery {
                search,
                project,
                after,
                limit,
            },
        )
        .await?;
    Ok(Json(Page {
        conversations: page.conversations.into_iter().map(Item::from).collect(),
        next: page.next.map(|cursor| cursor.encode()),
    }))
}

async fn show(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<portal_core::Transcript>, ApiError> {
    let conversation = state.conversation(&caller, &id).await?;
    let transcript = state
        .turns
        .storage()
        .load_transcript(&caller.organisation, &conversation.id)
        .await?;
    Ok(Json(transcript))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Change {
    #[serde(default)]
    title: Option<String>,
    /// A project's id, or null to take it out of its project.
    #[serde(default, deserialize_with = "present")]
    project: Option<Option<String>>,
    #[serde(default)]
    pinned: Option<bool>,
}

async fn change(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Json<Item>, ApiError> {
    let asked = serde_json::from_slice::<Change>(&body)
        .ok()
        .filter(|c| c.title.is_some() || c.project.is_some() || c.pinned.is_some())
        .ok_or_else(|| {
            ApiError(
                StatusCode::UNPROCESSABLE_ENTITY,
                "send any of {\"title\": \"<the new title>\", \"project\": \"<a project's id>\" \
                 or null, \"pinned\": true or false} to change a conversation"
                    .into(),
            )
        })?;
    let change = ConversationChange {
        title: asked.title.as_deref().map(conversation_title).transpose()?,
        project: asked.project,
        pinned: asked.pinned,
    };
    let summary = state
        .turns
        .storage()
        .change_conversation(&owner_of(&caller), &ConversationId::new(id), change)
        .await?;
    Ok(Json(summary.into()))
}

/// A title as given, cleaned as every shown name is (whitespace runs as one space): refused
/// unless 1 to [`TITLE_LIMIT`] characters are left.
fn conversation_title(title: &str) -> Result<String, ApiError> {
    let title = one_line_name(title);
    let length = title.chars().count();
    if length == 0 || length > TITLE_LIMIT {
        return Err(ApiError(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!(
                "a title has 1 to {TITLE_LIMIT} characters, not counting the control and \
                 bidirectional characters left out; this one has {length}; write a title of \
                 that length"
            ),
        ));
    }
    Ok(title)
}

async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    let deleted = state
        .turns
        .storage()
        .delete_conversation(&owner_of(&caller), &ConversationId::new(id))
        .await;
    match deleted {
        Err(portal_store::StorageError::TurnStillRunning { .. }) => Err(ApiError(
            StatusCode::CONFLICT,
            "the conversation is still answering; stop it, then delete it".into(),
        )),
        other => other
            .map(|()| StatusCode::NO_CONTENT)
            .map_err(ApiError::from),
    }
}

async fn usage(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<ConversationUsage>, ApiError> {
    let conversation = state.conversation(&caller, &id).await?;
    let rows = state
        .turns
        .storage()
        .usage(&caller.organisation, &conversation.id)
        .await?;
    Ok(Json(ConversationUsage::of(
        rows.iter().map(|row| (row.turn, &row.usage)),
    )))
}

/// The agent a conversation talks to, fixed when it was opened.
#[derive(Debug, Serialize)]
struct ConversationAgent {
    agent: String,
}

async fn agent(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<ConversationAgent>, ApiError> {
    let conversation = state.conversation(&caller, &id).await?;
    Ok(Json(ConversationAgent {
        agent: conversation.agent_id,
    }))
}
