//! Skills: `GET /api/skills` is the list the composer completes `/slug` from: every skill of the
//! caller's organisation that they see and that is published (rules S2, S3), by name.

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use portal_core::skills::CatalogueEntry;

use portal_identity::Caller;

use super::AppState;

pub(super) fn router() -> Router<AppState> {
    Router::new().route("/api/skills", get(list))
}

async fn list(State(state): State<AppState>, caller: Caller) -> Json<Vec<CatalogueEntry>> {
    Json(state.skills.selectable(&caller))
}
