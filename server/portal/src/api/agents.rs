//! Agents: `GET /api/agents` lists the caller's organisation's agents for the agent picker, the
//! header and an empty conversation's greeting; `GET /api/agents/{id}/mcp` lists an agent's MCP
//! servers, their status and the tools it is offered of them.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use portal_core::effort::Effort;
use serde::Serialize;

use portal_identity::Caller;
use portal_tools::mcp::ServerReport;

use super::{ApiError, AppState};

pub(super) fn router() -> Router<AppState> {
    Router::new()
        .route("/api/agents", get(list))
        .route("/api/agents/{id}/mcp", get(mcp))
}

/// The agent's MCP servers as they are now; 404 for an agent of another organisation or none.
async fn mcp(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<Vec<ServerReport>>, ApiError> {
    let agent = state.identity.agent(&caller, &id).ok_or_else(|| {
        ApiError(
            StatusCode::NOT_FOUND,
            format!("there is no agent `{id}` here; GET /api/agents lists yours"),
        )
    })?;
    Ok(Json(state.mcp.report(agent)))
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
    /// Its MCP servers as they are now, a line each: status and the tools it is offered
    /// (`GET /api/agents/{id}/mcp` has them in full).
    servers: Vec<String>,
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
                    servers: state
                        .mcp
                        .report(agent)
                        .iter()
                        .map(ServerReport::line)
                        .collect(),
                }
            })
            .collect(),
    )
}
