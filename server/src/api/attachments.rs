//! Attachments: `POST /api/attachments?filename=<name>` uploads one (the body is the file's
//! bytes; its kind is sniffed from them, rule A1), `GET /api/attachments/{id}` reads its
//! metadata, with a document's reading progress (rule A2).

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use portal_core::attachment::Attachment;
use serde::Deserialize;

use crate::attachments::{UploadConfig, UploadError, UploadFailed, read_stored, store_upload};
use crate::identity::Caller;
use crate::storage::Owner;

use super::{ApiError, AppState};

/// Where files are uploaded; uploads have their own, longer request timeout.
pub(crate) const UPLOADS: &str = "/api/attachments";

pub(super) fn router(config: &UploadConfig) -> Router<AppState> {
    Router::new()
        .route(
            UPLOADS,
            post(upload).layer(DefaultBodyLimit::max(config.max_bytes.saturating_add(1))),
        )
        .route("/api/attachments/{id}", get(show))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct UploadQuery {
    /// The name shown for the file; it does not decide what the file is.
    #[serde(default)]
    filename: Option<String>,
}

async fn upload(
    State(state): State<AppState>,
    caller: Caller,
    Query(query): Query<UploadQuery>,
    body: Bytes,
) -> Result<(StatusCode, Json<Attachment>), ApiError> {
    let owner = Owner::new(caller.organisation.clone(), caller.user.clone());
    let filename = query.filename.unwrap_or_default();
    let storage = Arc::clone(state.turns.storage());
    let config = state.uploads.clone();
    let stored = tokio::task::spawn_blocking(move || {
        store_upload(storage.as_ref(), &owner, &filename, &body, &config)
    })
    .await
    .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?
    .map_err(|failed| match failed {
        UploadFailed::Refused(error) => {
            let status = match error {
                UploadError::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
                UploadError::Unsupported { .. } => StatusCode::UNSUPPORTED_MEDIA_TYPE,
                UploadError::Empty { .. } | UploadError::Picture { .. } => {
                    StatusCode::UNPROCESSABLE_ENTITY
                }
            };
            ApiError(status, error.to_string())
        }
        UploadFailed::Storage(error) => error.into(),
        UploadFailed::Id(_) => ApiError(StatusCode::SERVICE_UNAVAILABLE, failed.to_string()),
    })?;
    if let Attachment::Document(document) = &stored
        && crate::attachments::needs_reading(document)
    {
        let storage = Arc::clone(state.turns.storage());
        let org_id = caller.organisation.clone();
        let document = document.clone();
        tokio::task::spawn_blocking(move || {
            if let Err(error) = read_stored(storage.as_ref(), &org_id, &document) {
                tracing::warn!("reading document {} stopped: {error}", document.id);
            }
        });
    }
    Ok((StatusCode::CREATED, Json(stored)))
}

async fn show(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<Attachment>, ApiError> {
    Ok(Json(
        state
            .turns
            .storage()
            .attachment(&caller.organisation, &id)?,
    ))
}
