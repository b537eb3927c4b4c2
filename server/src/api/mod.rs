//! The HTTP API under `/api`, one file per resource, and the web app's files for every other
//! path. Each resource module has a `router()`; [`router`] merges them, so a new resource is a
//! new file and one line here.

mod conversations;
mod info;
mod turns;

use std::path::Path;
use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use portal_core::effort::{Effort, winning_effort};
use tower_http::services::{ServeDir, ServeFile};

use crate::identity::{Caller, Identity};
use crate::model::ModelRegistry;
use crate::storage::{ConversationId, ConversationInfo, StorageError};
use crate::turn::{TurnError, TurnSetup, Turns};

/// What every request handler shares.
#[derive(Debug, Clone)]
pub struct AppState {
    pub turns: Arc<Turns>,
    pub models: ModelRegistry,
    pub identity: Arc<Identity>,
}

impl AppState {
    pub fn new(turns: Arc<Turns>, models: ModelRegistry, identity: Identity) -> Self {
        AppState {
            turns,
            models,
            identity: Arc::new(identity),
        }
    }

    /// Who sends the request: the local user in local mode, else the user of its bearer token.
    pub fn caller(&self, headers: &HeaderMap) -> Result<Caller, ApiError> {
        let authorization = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok());
        self.identity
            .authenticate(authorization)
            .map_err(|e| ApiError(StatusCode::UNAUTHORIZED, e.to_string()))
    }

    /// The caller's conversation `id`; another organisation's is not found.
    pub fn conversation(&self, caller: &Caller, id: &str) -> Result<ConversationInfo, ApiError> {
        let id = ConversationId::new(id);
        self.turns
            .storage()
            .conversation(&caller.organisation, &id)
            .map_err(ApiError::from)
    }

    /// How a turn of `conversation` runs: its agent's instructions and model, and the effort
    /// that wins (rule E1), or the one the turn recorded when it resumes (rule E2).
    ///
    /// Skills are left empty here; the skill catalogue and `/slug` selection plug in here.
    pub fn setup(
        &self,
        caller: &Caller,
        conversation: &ConversationInfo,
        effort: Option<Effort>,
    ) -> TurnSetup {
        let agent = self.identity.agent(caller, &conversation.agent_id);
        let model = agent
            .and_then(|a| self.models.get(&a.model))
            .unwrap_or_else(|| self.models.default_model());
        TurnSetup {
            org_id: caller.organisation.clone(),
            instructions: agent.map(|a| a.instructions.clone()).unwrap_or_default(),
            model: Arc::clone(model),
            selected_skills: Vec::new(),
            catalogue: Vec::new(),
            effort: winning_effort(agent.map_or(Effort::Medium, |a| a.effort), effort),
        }
    }
}

/// The API under `/api`, and the web app for every other path.
pub fn router(state: AppState, dist: &Path) -> Router {
    let app = ServeDir::new(dist).fallback(ServeFile::new(dist.join("index.html")));
    Router::new()
        .merge(info::router())
        .merge(conversations::router())
        .merge(turns::router())
        .fallback_service(app)
        .with_state(state)
}

/// An error as the API answers it: a status and a sentence saying what to do.
#[derive(Debug)]
pub struct ApiError(pub StatusCode, pub String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.0, Json(serde_json::json!({ "error": self.1 }))).into_response()
    }
}

impl From<StorageError> for ApiError {
    fn from(error: StorageError) -> Self {
        let status = match &error {
            StorageError::ConversationNotFound { .. } => {
                return ApiError(
                    StatusCode::NOT_FOUND,
                    format!("{error}; open one with POST /api/conversations"),
                );
            }
            StorageError::TurnNotFound { .. }
            | StorageError::MessageNotFound { .. }
            | StorageError::BlockNotFound { .. }
            | StorageError::AttachmentNotFound { .. } => StatusCode::NOT_FOUND,
            StorageError::TurnStillRunning { .. }
            | StorageError::TurnNotRunning { .. }
            | StorageError::TurnEnded { .. }
            | StorageError::AttachmentExists { .. }
            | StorageError::AttachmentKindChanged { .. } => StatusCode::CONFLICT,
            StorageError::NotAUserMessage { .. }
            | StorageError::NotStreamable { .. }
            | StorageError::TooLarge { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            _ => {
                tracing::error!("storage failed: {error}");
                StatusCode::INTERNAL_SERVER_ERROR
            }
        };
        ApiError(status, error.to_string())
    }
}

impl From<TurnError> for ApiError {
    fn from(error: TurnError) -> Self {
        match error {
            TurnError::Storage(error) => error.into(),
            TurnError::EmptyAnswer => ApiError(StatusCode::UNPROCESSABLE_ENTITY, error.to_string()),
            other => ApiError(StatusCode::CONFLICT, other.to_string()),
        }
    }
}
