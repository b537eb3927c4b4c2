//! `GET /api/info`: what the server runs.

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use serde::Serialize;

use super::AppState;

pub(super) fn router() -> Router<AppState> {
    Router::new().route("/api/info", get(info))
}

#[derive(Debug, Serialize)]
struct Info {
    /// The default model's label.
    model: String,
    demo: bool,
    /// The default model's context window in tokens, for the context meter.
    context_window: u64,
    /// Every configured model by name, with its label and capabilities.
    models: Vec<ModelInfo>,
}

#[derive(Debug, Serialize)]
struct ModelInfo {
    name: String,
    label: String,
    capabilities: portal_core::model::ModelCapabilities,
}

async fn info(State(state): State<AppState>) -> Json<Info> {
    let default = state.models.default_model();
    Json(Info {
        model: default.label().to_string(),
        demo: default.is_demo(),
        context_window: default.capabilities().context_window,
        models: state
            .models
            .models()
            .map(|(name, model)| ModelInfo {
                name: name.to_string(),
                label: model.label().to_string(),
                capabilities: model.capabilities().clone(),
            })
            .collect(),
    })
}
