//! Attachments: `POST /api/attachments?filename=<name>` uploads one (the body is the file's
//! bytes; its kind is sniffed from them, rule A1), `GET /api/attachments/{id}` reads its
//! metadata, with a document's reading progress (rule A2).
//!
//! An upload holds one of its user's places for uploads in flight from before its body is read
//! until it is stored and, for a PDF, read; a picture waits for one of the server's decode
//! places before it is decoded, and a PDF for one of its reader places before it is read
//! (docs/security.md, "Limits").

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{FromRequestParts, Path, Query, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures_util::StreamExt;
use portal_core::attachment::Attachment;
use serde::Deserialize;

use crate::attachments::{
    UploadError, UploadFailed, check_declared_size, clean_filename, read_stored, sniff,
    store_upload,
};
use crate::identity::Caller;
use crate::limits::Held;
use crate::storage::Owner;

use super::{ApiError, AppState, owner_of};

/// Where files are uploaded; uploads have their own, longer request timeout.
pub(crate) const UPLOADS: &str = "/api/attachments";

pub(super) fn router() -> Router<AppState> {
    Router::new()
        .route(UPLOADS, post(upload))
        .route("/api/attachments/{id}", get(show))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct UploadQuery {
    /// The name shown for the file; it does not decide what the file is.
    #[serde(default)]
    filename: Option<String>,
}

/// An upload's request before its body is read: who sends it, the name it gives, and the place
/// it holds among its user's uploads in flight.
#[derive(Debug)]
struct Upload {
    caller: Caller,
    filename: String,
    in_flight: Held,
    /// The length the request declares, to receive the file into a buffer of its size.
    length: Option<usize>,
}

impl FromRequestParts<AppState> for Upload {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let caller = Caller::from_request_parts(parts, state)
            .await
            .map_err(IntoResponse::into_response)?;
        let Query(query) = Query::<UploadQuery>::from_request_parts(parts, state)
            .await
            .map_err(|e| {
                ApiError(
                    e.status(),
                    format!(
                        "the query is not an upload's ({}); send `?filename=<name>` or nothing",
                        e.body_text()
                    ),
                )
                .into_response()
            })?;
        let filename = query.filename.unwrap_or_default();
        let limit = state.limits.uploads.filename_bytes;
        if filename.len() > limit {
            return Err(ApiError(
                StatusCode::UNPROCESSABLE_ENTITY,
                format!(
                    "the file name is {} bytes long, past the limit of {limit}; rename the file \
                     and send it again",
                    filename.len()
                ),
            )
            .into_response());
        }
        let in_flight = state.gates.uploads.take(&caller).ok_or_else(|| {
            ApiError(
                StatusCode::TOO_MANY_REQUESTS,
                format!(
                    "you have {} uploads in flight, the most one user may have at once; wait \
                     for one to finish, then send this file again",
                    state.gates.uploads.limit()
                ),
            )
            .into_response()
        })?;
        let length = parts
            .headers
            .get(axum::http::header::CONTENT_LENGTH)
            .and_then(|value| value.to_str().ok()?.parse().ok());
        Ok(Upload {
            caller,
            filename,
            in_flight,
            length,
        })
    }
}

async fn upload(
    State(state): State<AppState>,
    upload: Upload,
    body: Body,
) -> Result<(StatusCode, Json<Attachment>), ApiError> {
    let config = state.limits.uploads.clone();
    let body = receive(body, upload.length, config.max_bytes).await?;
    let Upload {
        caller,
        filename,
        in_flight,
        ..
    } = upload;
    // A picture's header is checked first, so a picture refused by its declared size or its
    // metadata never holds a decode place; then it waits for one, so only so many are decoded at
    // once.
    let decoding = if sniff(&body).is_picture() {
        let (bytes, checking) = (body.clone(), config.clone());
        tokio::task::spawn_blocking(move || check_declared_size(&bytes, &checking))
            .await
            .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?
            .map_err(|source| {
                let filename = clean_filename(&filename, &config);
                ApiError(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    UploadError::Picture { filename, source }.to_string(),
                )
            })?;
        Some(
            Arc::clone(&state.gates.decodes)
                .acquire_owned()
                .await
                .map_err(|e| ApiError(StatusCode::SERVICE_UNAVAILABLE, e.to_string()))?,
        )
    } else {
        None
    };
    let owner = Owner::new(caller.organisation.clone(), caller.user.clone());
    let storage = Arc::clone(state.turns.storage().blocking());
    let quota = state.limits.upload_quota_bytes;
    let checking = config.clone();
    let stored = tokio::task::spawn_blocking(move || {
        let stored = store_upload(storage.as_ref(), &owner, &filename, &body, &checking, quota);
        drop(decoding);
        stored
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
        let storage = Arc::clone(state.turns.storage().blocking());
        let org_id = caller.organisation.clone();
        let document = document.clone();
        let readers = state.gates.pdf_readers.clone();
        // The document waits for one of the server's reader places, then is read off the async
        // threads.
        tokio::spawn(async move {
            let place = readers.place().await;
            let _ = tokio::task::spawn_blocking(move || {
                let read = |document: &_, bytes: &_, progress: &mut dyn FnMut(&_)| {
                    place.read(document, bytes, progress)
                };
                if let Err(error) = read_stored(storage.as_ref(), &org_id, &document, read) {
                    tracing::warn!("reading document {} stopped: {error}", document.id);
                }
                // The upload is in flight until its reading ends.
                drop(in_flight);
            })
            .await;
        });
    }
    Ok((StatusCode::CREATED, Json(stored)))
}

/// The uploaded file, refused past `limit` bytes. It is received into one buffer of the length
/// the request declares (within the limit), so a file takes its size in memory once, not the
/// twice that gathering its pieces and joining them would take.
async fn receive(body: Body, length: Option<usize>, limit: usize) -> Result<Bytes, ApiError> {
    let too_large = || {
        ApiError(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "the file is more than the {limit} bytes an attachment may be; send a smaller file"
            ),
        )
    };
    if length.is_some_and(|length| length > limit) {
        return Err(too_large());
    }
    let mut file = Vec::with_capacity(length.unwrap_or(0));
    let mut pieces = body.into_data_stream();
    while let Some(piece) = pieces.next().await {
        let piece = piece.map_err(|error| {
            ApiError(
                StatusCode::BAD_REQUEST,
                format!("the file could not be received ({error}); send it again"),
            )
        })?;
        if file.len() + piece.len() > limit {
            return Err(too_large());
        }
        file.extend_from_slice(&piece);
    }
    Ok(Bytes::from(file))
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
            .attachment(&owner_of(&caller), &id)
            .await?,
    ))
}
