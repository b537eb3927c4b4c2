//! Conversations: `POST /api/conversations` opens one, `GET /api/conversations` lists the
//! caller's, `GET /api/conversations/{id}` reads one's transcript and
//! `GET /api/conversations/{id}/agent` names the agent it talks to.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::get;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};

use crate::identity::DEFAULT_AGENT;
use crate::storage::Owner;

use super::{ApiError, AppState};

pub(super) fn router() -> Router<AppState> {
    Router::new()
        .route("/api/conversations", get(list).post(create))
        .route("/api/conversations/{id}", get(show))
        .route("/api/conversations/{id}/agent", get(agent))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NewConversation {
    /// The agent to talk to; the organisation's first agent when left out.
    #[serde(default)]
    agent: Option<String>,
}

#[derive(Debug, Serialize)]
struct Created {
    id: String,
}

async fn create(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<(StatusCode, Json<Created>), ApiError> {
    let caller = state.caller(&headers)?;
    let wanted = if body.iter().all(u8::is_ascii_whitespace) {
        None
    } else {
        serde_json::from_slice::<NewConversation>(&body)
            .map_err(|e| {
                ApiError(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    format!("the body is not a new conversation ({e}); send {{\"agent\": \"<id>\"}} or nothing"),
                )
            })?
            .agent
    };
    let agent = match wanted {
        Some(id) => state
            .identity
            .agent(&caller, &id)
            .map(|a| a.id.clone())
            .ok_or_else(|| {
                ApiError(
                    StatusCode::NOT_FOUND,
                    format!("there is no agent `{id}`; pick one from GET /api/agents"),
                )
            })?,
        None => state
            .identity
            .agents(&caller)
            .first()
            .map_or_else(|| DEFAULT_AGENT.to_string(), |a| a.id.clone()),
    };
    let owner = Owner::new(caller.organisation.clone(), caller.user.clone());
    let id = state
        .turns
        .storage()
        .create_conversation(&owner, &agent)
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(Created {
            id: id.as_str().to_string(),
        }),
    ))
}

async fn list(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Json<Vec<String>>, ApiError> {
    let caller = state.caller(&headers)?;
    let owner = Owner::new(caller.organisation, caller.user);
    let conversations = state.turns.storage().list_conversations(&owner).await?;
    Ok(Json(
        conversations
            .into_iter()
            .map(|c| c.id.as_str().to_string())
            .collect(),
    ))
}

async fn show(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Json<portal_core::Transcript>, ApiError> {
    let caller = state.caller(&headers)?;
    let conversation = state.conversation(&caller, &id).await?;
    let transcript = state
        .turns
        .storage()
        .load_transcript(&caller.organisation, &conversation.id)
        .await?;
    Ok(Json(transcript))
}

/// The agent a conversation talks to, fixed when it was opened.
#[derive(Debug, Serialize)]
struct ConversationAgent {
    agent: String,
}

async fn agent(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Json<ConversationAgent>, ApiError> {
    let caller = state.caller(&headers)?;
    let conversation = state.conversation(&caller, &id).await?;
    Ok(Json(ConversationAgent {
        agent: conversation.agent_id,
    }))
}
