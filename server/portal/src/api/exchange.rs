//! Conversations in and out: `GET /api/conversations/{id}/export?format=markdown|json` downloads
//! one of the caller's conversations, `GET /api/export` all of their work as one ZIP archive, and
//! `POST /api/conversations/import` makes conversations from an export's JSON file (Portal's,
//! ChatGPT's or Claude's `conversations.json`), whole or not at all, answering what each became
//! and what of it did not map (docs/export.md).

use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use std::collections::HashMap;
use std::io::{Seek, SeekFrom};
use std::sync::Arc;

use portal_core::attachment::Attachment;
use portal_exchange::archive::{self, ArchiveSource};
use portal_exchange::import::{
    self, Exported, ExportedProject, ImportError, leave_out_attachments,
};
use portal_identity::{Caller, DEFAULT_AGENT};
use portal_store::{
    ConversationId, ConversationQuery, ImportedConversation, Owner, Storage, StorageError,
};
use serde::{Deserialize, Serialize};
use tokio_util::io::ReaderStream;

use super::{ApiError, AppState, owner_of};

pub(super) fn router() -> Router<AppState> {
    Router::new()
        .route("/api/conversations/{id}/export", get(export))
        .route("/api/conversations/import", post(import_file))
        .route("/api/export", get(archive))
}

/// All of the caller's work as one ZIP archive (`portal_exchange::archive`), written to a
/// temporary file off the async threads and then streamed from it.
async fn archive(State(state): State<AppState>, caller: Caller) -> Result<Response, ApiError> {
    let _asked = state.gates.archives_sent.take(&caller).ok_or_else(|| {
        ApiError(
            StatusCode::TOO_MANY_REQUESTS,
            "your archive is still being written; wait for that download, then ask again".into(),
        )
    })?;
    let _writing = state.gates.archives.acquire().await.map_err(|_| {
        ApiError(
            StatusCode::SERVICE_UNAVAILABLE,
            "the server is stopping; ask for the archive again in a moment".into(),
        )
    })?;
    let mut work = StoredWork {
        storage: state.turns.storage().blocking().clone(),
        owner: owner_of(&caller),
        project_names: HashMap::new(),
    };
    let written = tokio::task::spawn_blocking(move || {
        let file = tempfile::tempfile().map_err(|e| {
            ApiError(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("the archive has nowhere to be written ({e}); check the server's temporary folder"),
            )
        })?;
        let (mut file, archived) = archive::write(file, &mut work)
            .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?;
        let size = file.seek(SeekFrom::End(0)).and_then(|size| {
            file.seek(SeekFrom::Start(0))?;
            Ok(size)
        });
        let size = size.map_err(|e| {
            ApiError(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("the archive could not be read back ({e}); try again"),
            )
        })?;
        Ok::<_, ApiError>((file, size, archived))
    })
    .await
    .map_err(|_| {
        ApiError(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the archive could not be written; try again".into(),
        )
    })??;
    let (file, size, archived) = written;
    let body = Body::from_stream(ReaderStream::new(tokio::fs::File::from_std(file)));
    let mut headers = HeaderMap::new();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/zip"),
    );
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(size));
    headers.insert(
        header::CONTENT_DISPOSITION,
        HeaderValue::from_static("attachment; filename=\"portal-archive.zip\""),
    );
    headers.insert("x-portal-projects", HeaderValue::from(archived.projects));
    headers.insert(
        "x-portal-conversations",
        HeaderValue::from(archived.conversations),
    );
    headers.insert("x-portal-files", HeaderValue::from(archived.files));
    Ok((headers, body).into_response())
}

/// A person's projects, conversations and files in storage, read for their archive.
struct StoredWork {
    storage: Arc<dyn Storage>,
    owner: Owner,
    /// The names of the projects in the archive's `projects.json`, by id: a conversation names
    /// its project by one of them, or is written in none.
    project_names: HashMap<String, String>,
}

impl ArchiveSource for StoredWork {
    type Error = StorageError;

    fn projects(&mut self) -> Result<Vec<ExportedProject>, StorageError> {
        let projects = self.storage.projects(&self.owner)?;
        self.project_names = projects
            .iter()
            .map(|p| (p.id.clone(), p.name.clone()))
            .collect();
        Ok(projects
            .into_iter()
            .map(|p| ExportedProject {
                name: p.name,
                instructions: p.instructions,
                agent: p.agent_id,
                created: p.created_at_ms,
            })
            .collect())
    }

    fn conversation_ids(&mut self) -> Result<Vec<String>, StorageError> {
        let mut ids = Vec::new();
        let mut query = ConversationQuery {
            limit: 100,
            ..ConversationQuery::default()
        };
        loop {
            let page = self.storage.list_conversations(&self.owner, &query)?;
            ids.extend(
                page.conversations
                    .into_iter()
                    .map(|c| c.id.as_str().to_string()),
            );
            match page.next {
                Some(next) => query.after = Some(next),
                None => return Ok(ids),
            }
        }
    }

    fn conversation(&mut self, id: &str) -> Result<Option<Exported>, StorageError> {
        let id = ConversationId::new(id);
        let gone = |e: StorageError| match e {
            StorageError::ConversationNotFound { .. } => Ok(None),
            other => Err(other),
        };
        let summary = match self.storage.conversation_summary(&self.owner, &id) {
            Ok(summary) => summary,
            Err(e) => return gone(e),
        };
        let org = &self.owner.org_id;
        let read = self
            .storage
            .conversation(org, &id)
            .and_then(|info| Ok((info, self.storage.load_transcript(org, &id)?)));
        let project = summary
            .project
            .and_then(|id| self.project_names.get(&id).cloned());
        match read {
            Ok((info, transcript)) => Ok(Some(
                Exported::new(&summary.title, &info.agent_id, transcript)
                    .placed(project, summary.pinned),
            )),
            Err(e) => gone(e),
        }
    }

    fn file(&mut self, id: &str) -> Result<Option<(Attachment, Vec<u8>)>, StorageError> {
        let read = self
            .storage
            .attachment(&self.owner, id)
            .and_then(|attachment| {
                let bytes = self.storage.attachment_bytes(&self.owner.org_id, id)?;
                Ok((attachment, bytes))
            });
        match read {
            Ok(file) => Ok(Some(file)),
            Err(StorageError::AttachmentNotFound { .. }) => Ok(None),
            Err(other) => Err(other),
        }
    }
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
            let project = match &summary.project {
                Some(id) => match storage.project(&owner_of(&caller), id).await {
                    Ok(project) => Some(project.name),
                    Err(StorageError::ProjectNotFound { .. }) => None,
                    Err(error) => return Err(error.into()),
                },
                None => None,
            };
            let exported = Exported::new(&summary.title, &conversation.agent_id, transcript)
                .placed(project, summary.pinned);
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

/// `Content-Disposition` for a download named after `title`, its name made safe as names inside
/// an archive are ([`archive::safe_name`]), "conversation" when nothing is left.
fn attachment_named(title: &str, extension: &str) -> HeaderValue {
    let name = archive::safe_name(title, "conversation");
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
    // Reading an export holds several times its size in memory: files are read a few at once.
    let _reading = state.gates.imports.acquire().await.map_err(|_| {
        ApiError(
            StatusCode::SERVICE_UNAVAILABLE,
            "the server is stopping; import the file again in a moment".into(),
        )
    })?;
    let read =
        tokio::task::spawn_blocking(move || import::read_file(&bytes, most).map_err(refused))
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
