//! Conversations in and out: `GET /api/conversations/{id}/export?format=markdown|json` downloads
//! one of the caller's conversations, and `POST /api/conversations/import` makes conversations
//! from an export's JSON file (Portal's, ChatGPT's or Claude's `conversations.json`), whole or
//! not at all, answering what each became and what of it did not map (docs/export.md).

use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use portal_exchange::import::{self, Exported, ImportError, leave_out_attachments};
use portal_identity::{Caller, DEFAULT_AGENT};
use portal_store::{ConversationId, ImportedConversation};
use serde::{Deserialize, Serialize};

use super::{ApiError, AppState, owner_of};

pub(super) fn router() -> Router<AppState> {
    Router::new()
        .route("/api/conversations/{id}/export", get(export))
        .route("/api/conversations/import", post(import_file))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExportQuery {
    #[serde(default)]
    format: Option<String>,
}

/// One of the caller's conversations as a file to keep: Markdown to read (the default), or the
/// transcript JSON that `POST /api/conversations/import` reads back.
async fn export(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    query: Result<Query<ExportQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiError> {
    let format = query
        .ok()
        .and_then(|Query(q)| q.format.map_or(Some(Format::Markdown), |f| Format::named(&f)))
        .ok_or_else(|| {
            ApiError(
                StatusCode::BAD_REQUEST,
                "`format` is `markdown` or `json`; ask for one of them, or leave it out for Markdown"
                    .into(),
            )
        })?;
    let conversation = state.conversation(&caller, &id).await?;
    let storage = state.turns.storage();
    let summary = storage
        .conversation_summary(&owner_of(&caller), &conversation.id)
        .await?;
    let transcript = storage
        .load_transcript(&caller.organisation, &conversation.id)
        .await?;
    let (body, content_type) = match format {
        Format::Markdown => (
            portal_exchange::markdown::markdown(&summary.title, &transcript),
            "text/markdown; charset=utf-8",
        ),
        Format::Json => {
            let exported = Exported::new(&summary.title, &conversation.agent_id, transcript);
            let json = serde_json::to_string_pretty(&exported).map_err(|e| {
                ApiError(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    format!("the conversation could not be written as JSON ({e}); try again"),
                )
            })?;
            (json, "application/json")
        }
    };
    let mut headers = HeaderMap::new();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(
        header::CONTENT_DISPOSITION,
        attachment_named(&summary.title, format.extension()),
    );
    Ok((headers, body).into_response())
}

#[derive(Debug, Clone, Copy)]
enum Format {
    Markdown,
    Json,
}

impl Format {
    fn named(name: &str) -> Option<Self> {
        match name {
            "markdown" | "md" => Some(Format::Markdown),
            "json" => Some(Format::Json),
            _ => None,
        }
    }

    fn extension(self) -> &'static str {
        match self {
            Format::Markdown => "md",
            Format::Json => "json",
        }
    }
}

/// `Content-Disposition` for a download named after `title`: its letters, digits and dashes,
/// other runs of characters a dash, at most 80 characters, "conversation" when nothing is left.
fn attachment_named(title: &str, extension: &str) -> HeaderValue {
    let mut name = String::new();
    for c in title.chars() {
        if c.is_ascii_alphanumeric() {
            name.push(c);
        } else if !name.is_empty() && !name.ends_with('-') {
            name.push('-');
        }
    }
    let name: String = name.trim_end_matches('-').chars().take(80).collect();
    let name = if name.is_empty() {
        "conversation".to_string()
    } else {
        name
    };
    HeaderValue::from_str(&format!("attachment; filename=\"{name}.{extension}\""))
        .unwrap_or_else(|_| HeaderValue::from_static("attachment"))
}

/// What an import made.
#[derive(Debug, Serialize)]
struct Imported {
    /// Where the export came from: `Portal`, `ChatGPT` or `Claude`.
    source: &'static str,
    conversations: Vec<ImportedItem>,
}

#[derive(Debug, Serialize)]
struct ImportedItem {
    id: String,
    title: String,
    turns: usize,
    /// What of it did not map, each a sentence.
    notes: Vec<String>,
}

async fn import_file(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    body: Body,
) -> Result<(StatusCode, Json<Imported>), ApiError> {
    let most = state.limits.import_bytes;
    let too_large = || {
        ApiError(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "the file is larger than the {} MiB one import reads; export fewer conversations, or split the file",
                most / (1024 * 1024)
            ),
        )
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|length| length > most) {
        return Err(too_large());
    }
    let _sending = state.gates.imports_sent.take(&caller).ok_or_else(|| {
        ApiError(
            StatusCode::TOO_MANY_REQUESTS,
            "one of your imports is still under way; wait for it to end, then import the next file"
                .into(),
        )
    })?;
    let bytes = axum::body::to_bytes(body, usize::try_from(most).unwrap_or(usize::MAX))
        .await
        .map_err(|_| {
            ApiError(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!(
                    "the file is larger than the {} MiB one import reads, or its sending broke off; export fewer conversations, or split the file, and send it again",
                    most / (1024 * 1024)
                ),
            )
        })?;
    // Reading an export takes about ten times its size in memory: files are read a few at once.
    let _reading = state.gates.imports.acquire().await.map_err(|_| {
        ApiError(
            StatusCode::SERVICE_UNAVAILABLE,
            "the server is stopping; import the file again in a moment".into(),
        )
    })?;
    let read = tokio::task::spawn_blocking(move || {
        let text = std::str::from_utf8(&bytes).map_err(|_| {
            ApiError(
                StatusCode::UNPROCESSABLE_ENTITY,
                "the file is not UTF-8 text; import the export's JSON file as it was downloaded"
                    .into(),
            )
        })?;
        import::read(text).map_err(refused)
    })
    .await
    .map_err(|_| {
        ApiError(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the file could not be read; try again".into(),
        )
    })??;
    let owner = owner_of(&caller);
    let storage = state.turns.storage();
    let fallback = state
        .identity
        .agents(&caller)
        .first()
        .map_or_else(|| DEFAULT_AGENT.to_string(), |a| a.id.clone());
    let mut made = Vec::with_capacity(read.conversations.len());
    for mut conversation in read.conversations {
        let mut owned = std::collections::HashSet::new();
        for id in import::attachments_used(&conversation.transcript) {
            if storage.attachment(&owner, &id).await.is_ok() {
                owned.insert(id);
            }
        }
        leave_out_attachments(&mut conversation, |id| owned.contains(id));
        let agent_id = match conversation.agent.as_deref() {
            Some(id) if state.identity.agent(&caller, id).is_some() => id.to_string(),
            Some(id) => {
                conversation.notes.push(format!(
                    "It talked to the agent `{id}`, which you cannot use here; it goes on with `{fallback}`."
                ));
                fallback.clone()
            }
            None => fallback.clone(),
        };
        made.push((
            ImportedConversation {
                agent_id,
                title: conversation.title,
                transcript: conversation.transcript,
            },
            conversation.notes,
        ));
    }
    let (conversations, notes): (Vec<_>, Vec<_>) = made.into_iter().unzip();
    let turns: Vec<usize> = conversations
        .iter()
        .map(|c| c.transcript.turns.len())
        .collect();
    let ids = storage.import_conversations(&owner, conversations).await?;
    let mut items = Vec::with_capacity(ids.len());
    for ((id, notes), turns) in ids.into_iter().zip(notes).zip(turns) {
        let title = storage
            .conversation_summary(&owner, &id)
            .await
            .map(|s| s.title)
            .unwrap_or_default();
        items.push(ImportedItem {
            id: ConversationId::as_str(&id).to_string(),
            title,
            turns,
            notes,
        });
    }
    Ok((
        StatusCode::CREATED,
        Json(Imported {
            source: read.source.name(),
            conversations: items,
        }),
    ))
}

fn refused(error: ImportError) -> ApiError {
    ApiError(StatusCode::UNPROCESSABLE_ENTITY, error.to_string())
}
