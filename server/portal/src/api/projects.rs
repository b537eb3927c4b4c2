//! Projects (docs/projects.md): `GET /api/projects` lists the caller's, `POST /api/projects`
//! makes one, `GET /api/projects/{id}` reads one, `PATCH` renames it or changes its instructions
//! or default agent, and `DELETE …?conversations=keep|delete` deletes it, keeping its
//! conversations out of any project or deleting them with it. A conversation is opened in a
//! project, moved into or out of one, and listed by one through the conversation routes
//! (`api/conversations.rs`).

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use portal_core::title::one_line_name;
use serde::{Deserialize, Deserializer, Serialize};

use portal_identity::Caller;
use portal_store::{NewProject, Project, ProjectChange, ProjectConversations, StorageError};

use super::checks::text_within;
use super::keys::random;
use super::{ApiError, AppState, owner_of};

/// The longest project name, in characters. **Decision:** 80, a sidebar's line.
pub const NAME_LIMIT: usize = 80;

pub(super) fn router() -> Router<AppState> {
    Router::new()
        .route("/api/projects", get(list).post(create))
        .route("/api/projects/{id}", get(show).patch(change).delete(delete))
}

/// A project as the API shows it.
#[derive(Debug, Serialize)]
struct ProjectEntry {
    id: String,
    name: String,
    instructions: String,
    /// The agent a conversation opened in it talks to when none is asked for; null: the
    /// organisation's first.
    agent: Option<String>,
    /// Milliseconds since the Unix epoch.
    created: i64,
}

impl From<Project> for ProjectEntry {
    fn from(project: Project) -> Self {
        ProjectEntry {
            id: project.id,
            name: project.name,
            instructions: project.instructions,
            agent: project.agent_id,
            created: project.created_at_ms,
        }
    }
}

#[derive(Debug, Serialize)]
struct ProjectList {
    projects: Vec<ProjectEntry>,
}

async fn list(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Json<ProjectList>, ApiError> {
    let projects = state.turns.storage().projects(&owner_of(&caller)).await?;
    Ok(Json(ProjectList {
        projects: projects.into_iter().map(ProjectEntry::from).collect(),
    }))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NewProjectRequest {
    name: String,
    #[serde(default)]
    instructions: String,
    #[serde(default)]
    agent: Option<String>,
}

async fn create(
    State(state): State<AppState>,
    caller: Caller,
    body: Bytes,
) -> Result<(StatusCode, Json<ProjectEntry>), ApiError> {
    let request: NewProjectRequest = serde_json::from_slice(&body).map_err(|e| {
        ApiError(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!(
                "the body is not a new project ({e}); send {{\"name\", \"instructions\"?, \
                 \"agent\"?}}"
            ),
        )
    })?;
    let project = NewProject {
        id: new_project_id()?,
        owner: owner_of(&caller),
        name: project_name(&request.name)?,
        instructions: instructions(&state, request.instructions)?,
        agent_id: request
            .agent
            .map(|id| usable_agent(&state, &caller, id))
            .transpose()?,
    };
    let kept = state
        .turns
        .storage()
        .create_project(project, state.limits.projects_per_user)
        .await?;
    Ok((StatusCode::CREATED, Json(kept.into())))
}

async fn show(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<ProjectEntry>, ApiError> {
    let project = state
        .turns
        .storage()
        .project(&owner_of(&caller), &id)
        .await?;
    Ok(Json(project.into()))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ChangeRequest {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    instructions: Option<String>,
    /// An agent's id, or null for none.
    #[serde(default, deserialize_with = "present")]
    agent: Option<Option<String>>,
}

async fn change(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Json<ProjectEntry>, ApiError> {
    let request: ChangeRequest = serde_json::from_slice(&body).map_err(|e| {
        ApiError(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!(
                "the body is not a change to a project ({e}); send any of {{\"name\", \
                 \"instructions\", \"agent\"}}, `agent` null for none"
            ),
        )
    })?;
    if request.name.is_none() && request.instructions.is_none() && request.agent.is_none() {
        return Err(ApiError(
            StatusCode::UNPROCESSABLE_ENTITY,
            "the change names nothing to change; send any of `name`, `instructions` and `agent`"
                .into(),
        ));
    }
    let change = ProjectChange {
        name: request.name.as_deref().map(project_name).transpose()?,
        instructions: request
            .instructions
            .map(|text| instructions(&state, text))
            .transpose()?,
        agent_id: request
            .agent
            .map(|agent_id| {
                agent_id
                    .map(|id| usable_agent(&state, &caller, id))
                    .transpose()
            })
            .transpose()?,
    };
    let changed = state
        .turns
        .storage()
        .change_project(&owner_of(&caller), &id, change)
        .await?;
    Ok(Json(changed.into()))
}

/// `DELETE /api/projects/{id}`'s query.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DeleteQuery {
    #[serde(default)]
    conversations: Option<String>,
}

async fn delete(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    query: Result<Query<DeleteQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<StatusCode, ApiError> {
    let asked = query.ok().and_then(|Query(query)| query.conversations);
    let conversations = match asked.as_deref() {
        Some("keep") => ProjectConversations::Keep,
        Some("delete") => ProjectConversations::Delete,
        _ => {
            return Err(ApiError(
                StatusCode::BAD_REQUEST,
                "say what becomes of the project's conversations: ?conversations=keep moves them \
                 out of the project, ?conversations=delete deletes them with it"
                    .into(),
            ));
        }
    };
    let deleted = state
        .turns
        .storage()
        .delete_project(&owner_of(&caller), &id, conversations)
        .await;
    match deleted {
        Err(StorageError::TurnStillRunning { .. }) => Err(ApiError(
            StatusCode::CONFLICT,
            "a conversation of the project is still answering, and nothing was deleted; stop it, \
             then delete the project, or keep its conversations with ?conversations=keep"
                .into(),
        )),
        other => other
            .map(|()| StatusCode::NO_CONTENT)
            .map_err(ApiError::from),
    }
}

/// A new project's id: 12 random bytes.
pub(super) fn new_project_id() -> Result<String, ApiError> {
    Ok(format!(
        "project_{}",
        URL_SAFE_NO_PAD.encode(random::<12>()?)
    ))
}

/// A project's name as given, cleaned as every shown name is (whitespace runs as one space):
/// refused unless 1 to [`NAME_LIMIT`] characters are left.
fn project_name(name: &str) -> Result<String, ApiError> {
    clean_project_name(name).map_err(|length| {
        ApiError(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!(
                "a project's name has 1 to {NAME_LIMIT} characters, not counting the control \
                 and bidirectional characters left out; this one has {length}; write a name of \
                 that length"
            ),
        )
    })
}

/// A project's name cleaned as every shown name is (whitespace runs as one space), or the
/// number of characters left when that is not 1 to [`NAME_LIMIT`].
pub(super) fn clean_project_name(name: &str) -> Result<String, usize> {
    let name = one_line_name(name);
    let length = name.chars().count();
    if length == 0 || length > NAME_LIMIT {
        return Err(length);
    }
    Ok(name)
}

/// A project's instructions, refused past `--max-project-instructions-chars`.
fn instructions(state: &AppState, text: String) -> Result<String, ApiError> {
    text_within(
        "text of the project's instructions",
        &text,
        state.limits.project_instructions_chars,
        "shorten them, or keep the longer part in a document attached to a message",
    )?;
    Ok(text)
}

/// The id of an agent the caller may talk to, or 404 naming it (its first 40 characters).
pub(super) fn usable_agent(
    state: &AppState,
    caller: &Caller,
    id: String,
) -> Result<String, ApiError> {
    state
        .identity
        .agent(caller, &id)
        .map(|agent| agent.id.clone())
        .ok_or_else(|| {
            let shown: String = id.chars().take(40).collect();
            ApiError(
                StatusCode::NOT_FOUND,
                format!("there is no agent `{shown}`; pick one from GET /api/agents"),
            )
        })
}

/// A field that is present, null or not: `Some(None)` for null, where a field left out is
/// `None` (with `#[serde(default)]`).
pub(super) fn present<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}
