//! `GET /v1/models` and `GET /v1/models/{id}`: the agents the caller may use, as models. An
//! agent is named by its id; its name and the model it runs on come along.

use axum::extract::{Extension, Path, State};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Value, json};

use portal_identity::Agent;

use super::{ApiCaller, OpenAiError};
use crate::api::AppState;

pub(super) fn router() -> Router<AppState> {
    Router::new()
        .route("/v1/models", get(list))
        .route("/v1/models/{id}", get(one))
}

async fn list(State(state): State<AppState>, Extension(who): Extension<ApiCaller>) -> Json<Value> {
    let data: Vec<Value> = state
        .identity
        .agents(&who.caller)
        .iter()
        .filter(|agent| who.may_use(&agent.id))
        .map(entry)
        .collect();
    Json(json!({ "object": "list", "data": data }))
}

async fn one(
    State(state): State<AppState>,
    Extension(who): Extension<ApiCaller>,
    Path(id): Path<String>,
) -> Result<Json<Value>, OpenAiError> {
    state
        .identity
        .agent(&who.caller, &id)
        .filter(|agent| who.may_use(&agent.id))
        .map(|agent| Json(entry(agent)))
        .ok_or_else(|| OpenAiError::no_agent(&id))
}

/// An agent as OpenAI's model object, with the portal's own fields beside.
fn entry(agent: &Agent) -> Value {
    json!({
        "id": agent.id,
        "object": "model",
        "created": 0,
        "owned_by": agent.organisation,
        "name": agent.name,
        "description": agent.description,
    })
}
