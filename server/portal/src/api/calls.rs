//! What the model saw (docs/inspector.md): `GET /api/conversations/{id}/turns/{turn}/calls`
//! lists the model calls of a turn, `…/calls/{n}` shows one: its prompt taken apart by core
//! (`portal_core::prompt::inspect`) and the request body as it was sent. The conversation's owner
//! alone reads them (anyone else is told not found); the author instructions layer's text, and
//! the request body that carries it, only when the owner is an administrator of the
//! organisation, who writes its agents (docs/decisions.md, "Who sees the instructions").

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use portal_core::prompt::inspect::{DiagnosticView, Inspection, inspect};
use portal_core::prompt::{Layer, Prompt};
use portal_core::tokens::{EstimateCounter, TokenCounter};
use serde::Serialize;

use portal_identity::Caller;
use portal_store::{CallPurpose, KeptText, MAX_KEPT_BYTES, RecordedCall};

use super::{ApiError, AppState};

pub(super) fn router() -> Router<AppState> {
    Router::new()
        .route("/api/conversations/{id}/turns/{turn}/calls", get(list))
        .route(
            "/api/conversations/{id}/turns/{turn}/calls/{call}",
            get(show),
        )
}

/// One call in a turn's list.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct CallItem {
    call: u32,
    purpose: CallPurpose,
    model: String,
    recorded_at_ms: i64,
}

/// One call, taken apart.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct CallView {
    call: u32,
    purpose: CallPurpose,
    model: String,
    recorded_at_ms: i64,
    /// The model's context window in tokens, when the model is still offered.
    context_window: Option<u64>,
    /// The prompt taken apart; `None` when it was too large to keep (`note` says so).
    inspection: Option<Inspection>,
    /// Whether the instructions layer's text is withheld from the caller.
    instructions_withheld: bool,
    /// The request body as sent, as text; `None` when the model sends none, it was too large
    /// to keep, or it is withheld (`note` says which).
    body: Option<String>,
    body_bytes: Option<u64>,
    /// What the prompt builder worked around, each with its rule.
    diagnostics: Vec<DiagnosticView>,
    /// Why something above is missing, in a sentence.
    note: Option<String>,
}

async fn list(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, turn)): Path<(String, u32)>,
) -> Result<Json<Vec<CallItem>>, ApiError> {
    let calls = calls(&state, &caller, &id, turn).await?;
    Ok(Json(
        calls
            .into_iter()
            .map(|c| CallItem {
                call: c.call,
                purpose: c.purpose,
                model: c.model,
                recorded_at_ms: c.recorded_at_ms,
            })
            .collect(),
    ))
}

async fn show(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, turn, call)): Path<(String, u32, u32)>,
) -> Result<Json<CallView>, ApiError> {
    let recorded = calls(&state, &caller, &id, turn)
        .await?
        .into_iter()
        .find(|c| c.call == call)
        .ok_or_else(|| {
            ApiError(
                StatusCode::NOT_FOUND,
                format!(
                    "turn {turn} has no model call {call}; list its calls at \
                     /api/conversations/{id}/turns/{turn}/calls"
                ),
            )
        })?;
    Ok(Json(view(&state, &caller, recorded)?))
}

/// The turn's calls, when the caller owns the conversation.
async fn calls(
    state: &AppState,
    caller: &Caller,
    id: &str,
    turn: u32,
) -> Result<Vec<RecordedCall>, ApiError> {
    let conversation = state.conversation(caller, id).await?;
    Ok(state
        .turns
        .storage()
        .calls(&caller.organisation, &conversation.id, turn)
        .await?)
}

fn view(state: &AppState, caller: &Caller, recorded: RecordedCall) -> Result<CallView, ApiError> {
    let mut notes = Vec::new();
    let model = state
        .models
        .models()
        .map(|(_, model)| model)
        .find(|model| model.capabilities().id == recorded.model);
    let (counter, exact): (&dyn TokenCounter, bool) = match model {
        Some(model) => (model.tokens(), model.counts_exactly()),
        None => (&EstimateCounter, false),
    };
    let prompt: Option<Prompt> = match &recorded.prompt.text {
        Some(json) => Some(serde_json::from_str(json).map_err(|e| {
            tracing::error!("a kept model call's prompt could not be read: {e}");
            ApiError(
                StatusCode::INTERNAL_SERVER_ERROR,
                "this call's kept prompt could not be read; the server's log says why".into(),
            )
        })?),
        None => {
            notes.push(too_large("prompt", &recorded.prompt));
            None
        }
    };
    let has_instructions = prompt
        .as_ref()
        .is_none_or(|p| p.layers.iter().any(|l| l.layer == Layer::Instructions));
    let withheld = has_instructions && !caller.admin;
    let inspection = prompt.map(|prompt| {
        let mut inspection = inspect(&prompt, counter, exact);
        if withheld {
            inspection.withhold(Layer::Instructions);
        }
        inspection
    });
    let body = match &recorded.body {
        None => {
            notes.push("the demo model sends no request body".to_string());
            None
        }
        Some(_) if withheld => {
            notes.push(
                "the request body carries the agent's instructions, which only the \
                 organisation's administrators may read"
                    .to_string(),
            );
            None
        }
        Some(kept) if kept.text.is_none() => {
            notes.push(too_large("request body", kept));
            None
        }
        Some(kept) => kept.text.clone(),
    };
    Ok(CallView {
        call: recorded.call,
        purpose: recorded.purpose,
        model: recorded.model,
        recorded_at_ms: recorded.recorded_at_ms,
        context_window: model.map(|m| m.capabilities().context_window),
        inspection,
        instructions_withheld: withheld,
        body,
        body_bytes: recorded.body.map(|b| b.bytes),
        diagnostics: serde_json::from_str(&recorded.diagnostics).unwrap_or_else(|e| {
            tracing::error!("a kept model call's diagnostics could not be read: {e}");
            Vec::new()
        }),
        note: (!notes.is_empty()).then(|| notes.join("; ")),
    })
}

fn too_large(what: &str, kept: &KeptText) -> String {
    format!(
        "the call's {what} was {} bytes, more than the {} kept, so only its size was kept",
        kept.bytes, MAX_KEPT_BYTES
    )
}
