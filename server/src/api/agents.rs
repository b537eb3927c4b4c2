//! Agents: `GET /api/agents` lists the caller's organisation's agents for the agent picker.

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use portal_core::effort::Effort;
use serde::Serialize;

use crate::identity::Caller;

use super::AppState;

pub(super) fn router() -> Router<AppState> {
    Router::new().route("/api/agents", get(list))
}

/// An agent as the picker shows it. The instructions stay on the server.
#[derive(Debug, Serialize)]
struct AgentEntry {
    id: String,
    name: String,
    model: String,
    /// The agent's default effort, which the composer starts from (rule E1).
    effort: Effort,
}

async fn list(State(state): State<AppState>, caller: Caller) -> Json<Vec<AgentEntry>> {
    Json(
        state
            .identity
            .agents(&caller)
            .iter()
            .map(|agent| AgentEntry {
                id: agent.id.clone(),
                name: agent.name.clone(),
                model: agent.model.clone(),
                effort: agent.effort,
            })
            .collect(),
    )
}
