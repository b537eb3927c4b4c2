//! Agents: `GET /api/agents` lists the caller's organisation's agents for the agent picker, the
//! header and an empty conversation's greeting.

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

/// An agent as the picker, the header and the greeting show it. The instructions stay on the
/// server.
#[derive(Debug, Serialize)]
struct AgentEntry {
    id: String,
    name: String,
    /// The configured model's name.
    model: String,
    /// The model the agent runs on, as people know it (the default model when its own is not
    /// configured, as its turns run).
    model_label: String,
    /// Whether that is the built-in demo model.
    demo: bool,
    /// That model's context window in tokens, for the context meter.
    context_window: u64,
    /// The agent's default effort, which the composer starts from (rule E1).
    effort: Effort,
    /// What the agent is for, for the greeting; empty when its file says nothing.
    description: String,
    /// Messages to start a conversation from.
    examples: Vec<String>,
}

async fn list(State(state): State<AppState>, caller: Caller) -> Json<Vec<AgentEntry>> {
    Json(
        state
            .identity
            .agents(&caller)
            .iter()
            .map(|agent| {
                let model = state
                    .models
                    .get(&agent.model)
                    .unwrap_or_else(|| state.models.default_model());
                AgentEntry {
                    id: agent.id.clone(),
                    name: agent.name.clone(),
                    model: agent.model.clone(),
                    model_label: model.label().to_string(),
                    demo: model.is_demo(),
                    context_window: model.capabilities().context_window,
                    effort: agent.effort,
                    description: agent.description.clone(),
                    examples: agent.examples.clone(),
                }
            })
            .collect(),
    )
}
