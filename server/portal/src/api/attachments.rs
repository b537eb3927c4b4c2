//! Attachments: `POST /api/attachments?filename=<name>` uploads one (the body is the file's
//! bytes; its kind is sniffed from them, rule A1), `GET /api/attachments/{id}` reads its
//! metadata, with a document's reading progress (rule A2), and `GET
//! /api/attachments/{id}/content` serves its stored bytes to its owner: a raster picture inline,
//! everything else as a download (docs/security.md, "Attachments served back").
//!
//! An upload holds one of its user's places for uploads in flight from before its body is read
//! until it is stored and, for a PDF, read; a picture waits for one of the server's decode
//! places before it is decoded, and a PDF for one of its reader places before it is read
//! (docs/security.md, "Limits"). Its body is received into a temporary file and checked and
//! stored from there in pieces, so no upload is held whole in memory; a text document is
//! answered without its text, which `GET /api/attachments/{id}` reads from the stored bytes.

use std::io::BufReader;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{FromRequestParts, Path, Query, State};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures_util::StreamExt;
use portal_core::attachment::{Attachment, file_size};
use serde::Deserialize;
use tokio::io::AsyncWriteExt;

use crate::limits::Held;
use portal_attachments::{
    Sniffed, UploadConfig, UploadError, UploadFailed, check_declared_size, clean_filename,
    read_stored, sniff_head, store_upload,
};
use portal_identity::Caller;
use portal_store::{Owner, StorageError};

use super::{ApiError, AppState, owner_of};

/// Where files are uploaded; uploads have their own, longer request timeout.
pub(crate) const UPLOADS: &str = "/api/attachments";

pub(super) fn router() -> Router<AppState> {
    Router::new()
        .route(UPLOADS, post(upload))
        .route("/api/attachments/{id}", get(show))
        .route("/api/attachments/{id}/content", get(content))
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
pub(super) struct Upload {
    pub(super) caller: Caller,
    pub(super) filename: String,
    pub(super) in_flight: Held,
    /// The length the request declares, to refuse a file past the limit before it arrives.
    pub(super) length: Option<usize>,
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
                        "the query is not an upload's ({}); send ?filename=<name> or nothing",
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
                     for one to finish, then send “{}” again",
                    state.gates.uploads.limit(),
                    clean_filename(&filename, &state.limits.uploads)
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
    let file = receive(body, upload.length, &upload.filename, &config).await?;
    let Upload {
        caller,
        filename,
        in_flight,
        ..
    } = upload;
    let shown_name = clean_filename(&filename, &config);
    // A picture's header is checked first, so a picture refused by its declared size or its
    // metadata never holds a decode place; then it waits for one, so only so many are decoded at
    // once.
    let mut file = BufReader::with_capacity(FILE_BUFFER, file);
    let (checking, shown) = (config.clone(), shown_name.clone());
    let (mut file, picture) = tokio::task::spawn_blocking(move || {
        let sniffed = sniff_head(&mut file).map_err(|source| UploadError::Unreadable {
            filename: shown.clone(),
            source,
        })?;
        let picture = sniffed.is_some_and(Sniffed::is_picture);
        if picture {
            check_declared_size(&mut file, &checking).map_err(|source| UploadError::Picture {
                filename: shown,
                source,
            })?;
        }
        Ok((file, picture))
    })
    .await
    .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?
    .map_err(refused)?;
    let decoding = if picture {
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
    let stored = tokio::task::spawn_blocking(move || {
        let stored = store_upload(
            storage.as_ref(),
            &owner,
            &filename,
            &mut file,
            &config,
            quota,
        );
        drop(decoding);
        stored
    })
    .await
    .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?
    .map_err(|failed| match failed {
        UploadFailed::Refused(error) => refused(error),
        UploadFailed::Storage(StorageError::QuotaExceeded { used, size, quota }) => ApiError(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "“{shown_name}” is {}, and storing it would bring the uploads you keep past your \
                 quota of {} ({} are stored already); send a smaller file, or ask an \
                 administrator to raise the quota",
                file_size(size),
                file_size(quota),
                file_size(used)
            ),
        ),
        UploadFailed::Storage(error) => error.into(),
        UploadFailed::Id(_) => ApiError(StatusCode::SERVICE_UNAVAILABLE, failed.to_string()),
    })?;
    if let Attachment::Document(document) = &stored
        && portal_attachments::needs_reading(document)
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

/// The answer to an upload refused for what it is, or to one that could not be read back.
pub(super) fn refused(error: UploadError) -> ApiError {
    let status = match error {
        UploadError::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
        UploadError::Unsupported { .. } => StatusCode::UNSUPPORTED_MEDIA_TYPE,
        UploadError::Empty { .. } | UploadError::Picture { .. } => StatusCode::UNPROCESSABLE_ENTITY,
        UploadError::Unreadable { .. } => StatusCode::INTERNAL_SERVER_ERROR,
    };
    ApiError(status, error.to_string())
}

/// The buffer an upload's file is read through once received. **Decision:** 64 KiB, the piece
/// its bytes are copied into the database in.
pub(super) const FILE_BUFFER: usize = 64 * 1024;

/// The uploaded file, refused past the largest upload, received into a temporary file of its
/// own (in the system's, `TMPDIR`; gone once closed, whatever happens to the server), so an
/// upload takes the pieces in flight in memory, never its whole size, and is read from there.
pub(super) async fn receive(
    body: Body,
    length: Option<usize>,
    filename: &str,
    config: &UploadConfig,
) -> Result<std::fs::File, ApiError> {
    let limit = config.max_bytes;
    let too_large = |size: Option<usize>| {
        let filename = clean_filename(filename, config);
        let message = match size {
            Some(size) => UploadError::TooLarge {
                filename,
                size,
                limit,
            }
            .to_string(),
            None => format!(
                "“{filename}” is more than {}, the most a file may be; send a smaller file",
                file_size(limit as u64)
            ),
        };
        ApiError(StatusCode::PAYLOAD_TOO_LARGE, message)
    };
    if let Some(length) = length.filter(|&length| length > limit) {
        return Err(too_large(Some(length)));
    }
    let no_file = |error: std::io::Error| {
        ApiError(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!(
                "the server could not keep the file while it arrived ({error}); send it again, \
                 and tell an administrator (its temporary folder, TMPDIR, must be writable)"
            ),
        )
    };
    let file = tokio::task::spawn_blocking(tempfile::tempfile)
        .await
        .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?
        .map_err(no_file)?;
    let mut file = tokio::fs::File::from_std(file);
    let mut received = 0;
    let mut pieces = body.into_data_stream();
    while let Some(piece) = pieces.next().await {
        let piece = piece.map_err(|error| {
            ApiError(
                StatusCode::BAD_REQUEST,
                format!("the file could not be received ({error}); send it again"),
            )
        })?;
        received += piece.len();
        if received > limit {
            return Err(too_large(None));
        }
        file.write_all(&piece).await.map_err(no_file)?;
    }
    file.flush().await.map_err(no_file)?;
    Ok(file.into_std().await)
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

/// The stored bytes of one of the caller's attachments, with the media type sniffed at upload
/// and `nosniff`. Only a raster picture opens in the page (`inline`); anything else, text that
/// may be HTML or SVG included, is a download, so no uploaded file ever runs as the portal's own
/// page (stored XSS).
async fn content(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let (attachment, bytes) = state
        .turns
        .storage()
        .attachment_content(&owner_of(&caller), &id)
        .await?;
    let (media_type, shown) = match &attachment {
        Attachment::Picture(picture) if is_raster(&picture.media_type) => {
            (picture.media_type.as_str(), "inline")
        }
        Attachment::Picture(_) => ("application/octet-stream", "attachment"),
        Attachment::Document(document) => (served_type(&document.media_type), "attachment"),
    };
    let disposition = format!(
        "{shown}; filename*=UTF-8''{}",
        percent_encoded(attachment.filename())
    );
    Ok((
        [
            (header::CONTENT_TYPE, media_type.to_string()),
            (header::CONTENT_DISPOSITION, disposition),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff".to_string()),
        ],
        bytes,
    )
        .into_response())
}

/// Whether a picture's media type is one a browser only draws, never runs.
fn is_raster(media_type: &str) -> bool {
    matches!(
        media_type,
        "image/png" | "image/jpeg" | "image/gif" | "image/webp"
    )
}

/// The type a document is served with: its sniffed text types as plain UTF-8 text, a PDF as
/// itself, anything else as bytes.
fn served_type(media_type: &str) -> &'static str {
    match media_type {
        "text/plain" | "text/markdown" => "text/plain; charset=utf-8",
        "application/pdf" => "application/pdf",
        _ => "application/octet-stream",
    }
}

/// A file name as RFC 8187 writes it in `filename*`: every byte but letters, digits and
/// `!#$&+-.^_`|~` percent-encoded.
fn percent_encoded(filename: &str) -> String {
    filename
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z'
            | b'a'..=b'z'
            | b'0'..=b'9'
            | b'!'
            | b'#'
            | b'$'
            | b'&'
            | b'+'
            | b'-'
            | b'.'
            | b'^'
            | b'_'
            | b'`'
            | b'|'
            | b'~' => char::from(b).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}
