//! Conversations in and out: `GET /api/conversations/{id}/export?format=markdown|json` downloads
//! one of the caller's conversations, `GET /api/export` all of their work as one ZIP archive, and
//! `POST /api/conversations/import` makes conversations from an export's JSON file (Portal's,
//! ChatGPT's or Claude's `conversations.json`), a Portal file's in the projects it names, whole
//! or not at all, answering what each became and what of it did not map (docs/export.md).

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
    ConversationId, ConversationQuery, ImportedConversation, ImportedProject, ImportedWork, Owner,
    Storage, StorageError,
};
use serde::{Deserialize, Serialize};
use tokio_util::io::ReaderStream;

use super::checks::text_within;
use super::projects::{NAME_LIMIT, clean_project_name, new_project_id};
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
    /// The projects it made (those of the same name as one of the importer's are not made).
    projects: Vec<MadeProject>,
}

#[derive(Debug, Serialize)]
struct ImportedItem {
    id: String,
    title: String,
    turns: usize,
    /// The project it went in, or null.
    project: Option<String>,
    pinned: bool,
    /// What of it did not map, each a sentence.
    notes: Vec<String>,
}

#[derive(Debug, Serialize)]
struct MadeProject {
    id: String,
    name: String,
    /// What of it did not map, each a sentence.
    notes: Vec<String>,
}

/// Where an import's conversations go: the projects it makes, with their notes, and the id of
/// the project each name stands for.
#[derive(Debug, Default)]
struct Placing {
    made: Vec<(ImportedProject, Vec<String>)>,
    ids: HashMap<String, String>,
}

/// Places a Portal file's conversations in the caller's projects by their names: a name is the
/// caller's project of that name (the newest, if they have several), or a project made for it
/// from the archive's `projects.json` (its instructions, and its default agent when the caller
/// may use it), or, when the file holds none of that name, one made with no instructions. Every
/// project of `projects.json` is made unless the caller has one of its name, so an archive
/// brings back empty projects too. A name or instructions past the limits refuse the whole
/// import; how many projects the caller may have is checked as they are written.
async fn place_in_projects(
    state: &AppState,
    caller: &Caller,
    read: &import::Import,
) -> Result<Placing, ApiError> {
    let named = read.conversations.iter().any(|c| c.project.is_some());
    if read.projects.is_empty() && !named {
        return Ok(Placing::default());
    }
    let mut placing = Placing::default();
    for project in state.turns.storage().projects(&owner_of(caller)).await? {
        placing.ids.entry(project.name).or_insert(project.id);
    }
    let mut in_file: HashMap<String, usize> = HashMap::new();
    for project in &read.projects {
        *in_file
            .entry(imported_project_name(&project.name)?)
            .or_default() += 1;
    }
    for project in &read.projects {
        let name = imported_project_name(&project.name)?;
        if placing.ids.contains_key(&name) {
            continue;
        }
        let shown: String = name.chars().take(40).collect();
        text_within(
            &format!("text of the instructions of the file's project `{shown}`"),
            &project.instructions,
            state.limits.project_instructions_chars,
            "shorten them in the archive's projects.json and import it again; nothing was imported",
        )?;
        let mut notes = Vec::new();
        let agent_id = match &project.agent {
            Some(id) if state.identity.agent(caller, id).is_some() => Some(id.clone()),
            Some(id) => {
                notes.push(format!(
                    "Its default agent `{id}` is not one you can use here; it has none, so a conversation opened in it talks to your organisation's first agent."
                ));
                None
            }
            None => None,
        };
        let times = in_file[&name];
        if times > 1 {
            notes.push(format!(
                "The file holds {times} projects of this name; this one has the first one's instructions and default agent, and the conversations of them all."
            ));
        }
        placing.add(name, project.instructions.clone(), agent_id, notes)?;
    }
    for conversation in &read.conversations {
        let Some(name) = &conversation.project else {
            continue;
        };
        let name = imported_project_name(name)?;
        if !placing.ids.contains_key(&name) {
            let notes = vec![
                "Its instructions and default agent were not in the file (an archive keeps them in projects.json); it has none.".to_string(),
            ];
            placing.add(name, String::new(), None, notes)?;
        }
    }
    Ok(placing)
}

impl Placing {
    /// Makes a project named `name` for the import.
    fn add(
        &mut self,
        name: String,
        instructions: String,
        agent_id: Option<String>,
        notes: Vec<String>,
    ) -> Result<(), ApiError> {
        let id = new_project_id()?;
        self.ids.insert(name.clone(), id.clone());
        self.made.push((
            ImportedProject {
                id,
                name,
                instructions,
                agent_id,
            },
            notes,
        ));
        Ok(())
    }
}

/// The name of a project a file names, refused in words unless it has 1 to [`NAME_LIMIT`]
/// characters once cleaned.
fn imported_project_name(name: &str) -> Result<String, ApiError> {
    clean_project_name(name).map_err(|length| {
        let shown: String = name.chars().take(40).collect();
        ApiError(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!(
                "the file's project `{shown}` has {length} characters once control and \
                 bidirectional characters are left out, where a project's name has 1 to \
                 {NAME_LIMIT}; give it a name of that length in the file and import it again; \
                 nothing was imported"
            ),
        )
    })
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
    let placing = place_in_projects(&state, &caller, &read).await?;
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
        let project = conversation
            .project
            .as_deref()
            .and_then(|name| clean_project_name(name).ok())
            .and_then(|name| placing.ids.get(&name).cloned());
        made.push((
            ImportedConversation {
                project,
                pinned: conversation.pinned,
                ..ImportedConversation::new(agent_id, conversation.title, conversation.transcript)
            },
            conversation.notes,
        ));
    }
    let (conversations, notes): (Vec<_>, Vec<_>) = made.into_iter().unzip();
    let placed: Vec<(usize, Option<String>, bool)> = conversations
        .iter()
        .map(|c| (c.transcript.turns.len(), c.project.clone(), c.pinned))
        .collect();
    let (projects, project_notes): (Vec<_>, Vec<_>) = placing.made.into_iter().unzip();
    let made_projects: Vec<(String, String)> = projects
        .iter()
        .map(|p| (p.id.clone(), p.name.clone()))
        .collect();
    let work = ImportedWork {
        projects,
        most_projects: state.limits.projects_per_user,
        conversations,
    };
    let ids = storage.import_conversations(&owner, work).await?;
    let mut items = Vec::with_capacity(ids.len());
    for ((id, notes), (turns, project, pinned)) in ids.into_iter().zip(notes).zip(placed) {
        let title = storage
            .conversation_summary(&owner, &id)
            .await
            .map(|s| s.title)
            .unwrap_or_default();
        items.push(ImportedItem {
            id: ConversationId::as_str(&id).to_string(),
            title,
            turns,
            project,
            pinned,
            notes,
        });
    }
    Ok((
        StatusCode::CREATED,
        Json(Imported {
            source: read.source.name(),
            conversations: items,
            projects: made_projects
                .into_iter()
                .zip(project_notes)
                .map(|((id, name), notes)| MadeProject { id, name, notes })
                .collect(),
        }),
    ))
}

fn refused(error: ImportError) -> ApiError {
    ApiError(StatusCode::UNPROCESSABLE_ENTITY, error.to_string())
}
