//! Knowledge (docs/knowledge.md): `GET /api/collections` lists the collections the caller may
//! search (their organisation's, then their own), `POST /api/collections` makes one (`shared`:
//! the organisation's, which only its administrators may make and change; otherwise the
//! caller's own), `GET /api/collections/{id}` reads one with its documents, `DELETE` deletes it
//! with them, `POST /api/collections/{id}/documents?filename=<name>` adds a document (the body is
//! its bytes: a PDF, Markdown, HTML or plain text, sniffed as an upload is), read and split into
//! passages before it is answered, and `DELETE /api/collections/{id}/documents/{document}`
//! deletes one, its passages out of every search at once.
//!
//! A collection the caller may not search (another person's, another organisation's) is 404 on
//! every route, as one that does not exist; the organisation's is 403 to a member who would
//! change it.

use std::io::{BufReader, Read, Seek};

use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{delete, get, post};
use axum::{Json, Router};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};

use portal_attachments::{UploadError, clean_filename};
use portal_identity::Caller;
use portal_knowledge::ingest::IngestError;
use portal_store::{
    Collection, CollectionOwner, KnowledgeDocument, NewCollection, NewKnowledgeDocument,
};

use super::attachments::{FILE_BUFFER, Upload, receive, refused};
use super::checks::text_within;
use super::keys::random;
use super::projects::{NAME_LIMIT, clean_project_name};
use super::{ApiError, AppState};
use crate::knowledge_sync;

/// The longest collection description, in characters. **Decision:** 2,000, a paragraph or two.
pub const DESCRIPTION_LIMIT: usize = 2_000;

pub(super) fn router() -> Router<AppState> {
    Router::new()
        .route("/api/collections", get(list).post(create))
        .route("/api/collections/{id}", get(show).delete(remove))
        .route("/api/collections/{id}/documents", post(add_document))
        .route(
            "/api/collections/{id}/documents/{document}",
            delete(remove_document),
        )
}

/// Whether `path` is `/api/collections/{id}/documents`, where a document is uploaded.
pub(super) fn is_document_upload(path: &str) -> bool {
    path.strip_prefix("/api/collections/")
        .and_then(|rest| rest.strip_suffix("/documents"))
        .is_some_and(|id| !id.is_empty() && !id.contains('/'))
}

/// A collection as the API shows it.
#[derive(Debug, Serialize)]
struct CollectionEntry {
    id: String,
    name: String,
    description: String,
    /// Whether it is the organisation's (its administrators manage it) rather than the
    /// caller's own.
    shared: bool,
    /// Whether the caller may add and delete its documents, and delete it.
    manageable: bool,
    documents: u64,
    bytes: u64,
    /// Milliseconds since the Unix epoch.
    created: i64,
}

impl CollectionEntry {
    fn of(collection: Collection, caller: &Caller) -> Self {
        CollectionEntry {
            manageable: may_manage(&collection, caller),
            shared: collection.owner.user_id().is_none(),
            id: collection.id,
            name: collection.name,
            description: collection.description,
            documents: collection.documents,
            bytes: collection.bytes,
            created: collection.created_at_ms,
        }
    }
}

#[derive(Debug, Serialize)]
struct CollectionList {
    collections: Vec<CollectionEntry>,
}

async fn list(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Json<CollectionList>, ApiError> {
    let collections = state
        .turns
        .storage()
        .collections(&caller.organisation, &caller.user)
        .await?;
    Ok(Json(CollectionList {
        collections: collections
            .into_iter()
            .map(|c| CollectionEntry::of(c, &caller))
            .collect(),
    }))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NewCollectionRequest {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    shared: bool,
}

async fn create(
    State(state): State<AppState>,
    caller: Caller,
    body: Bytes,
) -> Result<(StatusCode, Json<CollectionEntry>), ApiError> {
    let request: NewCollectionRequest = serde_json::from_slice(&body).map_err(|e| {
        ApiError(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!(
                "the body is not a new collection ({e}); send {{\"name\", \"description\"?, \
                 \"shared\"?}}"
            ),
        )
    })?;
    if request.shared && !caller.admin {
        return Err(not_an_administrator());
    }
    let name = clean_project_name(&request.name).map_err(|length| {
        ApiError(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!(
                "a collection's name has 1 to {NAME_LIMIT} characters, not counting the control \
                 and bidirectional characters left out; this one has {length}; write a name of \
                 that length"
            ),
        )
    })?;
    let description = request.description.trim().to_string();
    text_within("description", &description, DESCRIPTION_LIMIT, "shorten it")?;
    let owner = if request.shared {
        CollectionOwner::Organisation {
            org_id: caller.organisation.clone(),
        }
    } else {
        CollectionOwner::Person {
            org_id: caller.organisation.clone(),
            user_id: caller.user.clone(),
        }
    };
    let collection = NewCollection {
        id: new_id("col")?,
        owner,
        name,
        description,
    };
    let kept = state
        .turns
        .storage()
        .create_collection(collection, state.limits.knowledge())
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(CollectionEntry::of(kept, &caller)),
    ))
}

/// A collection with its documents.
#[derive(Debug, Serialize)]
struct CollectionWithDocuments {
    collection: CollectionEntry,
    /// Newest first.
    documents: Vec<KnowledgeDocument>,
}

async fn show(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<CollectionWithDocuments>, ApiError> {
    let storage = state.turns.storage();
    let collection = storage
        .collection(&caller.organisation, &caller.user, &id)
        .await?;
    let documents = storage
        .knowledge_documents(&caller.organisation, &collection.id)
        .await?;
    Ok(Json(CollectionWithDocuments {
        collection: CollectionEntry::of(collection, &caller),
        documents,
    }))
}

async fn remove(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    let collection = managed(&state, &caller, &id).await?;
    state
        .turns
        .storage()
        .delete_collection(&caller.organisation, &collection.id)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn add_document(
    State(state): State<AppState>,
    Path(id): Path<String>,
    upload: Upload,
    body: Body,
) -> Result<(StatusCode, Json<KnowledgeDocument>), ApiError> {
    let Upload {
        caller,
        filename,
        in_flight,
        length,
    } = upload;
    let collection = managed(&state, &caller, &id).await?;
    let config = state.limits.uploads.clone();
    let file = receive(body, length, &filename, &config).await?;
    let name = clean_filename(&filename, &config);
    if name.is_empty() {
        return Err(refused(UploadError::Empty { filename: name }));
    }
    let document_id = new_id("kdoc")?;
    let readers = state.gates.pdf_readers.clone();
    let handle = tokio::runtime::Handle::current();
    let (reading_id, shown) = (document_id.clone(), name.clone());
    let (read, size) = blocking(move || {
        let mut bytes = Vec::new();
        let mut file = file;
        file.rewind()
            .and_then(|()| BufReader::with_capacity(FILE_BUFFER, file).read_to_end(&mut bytes))
            .map_err(|source| {
                refused(UploadError::Unreadable {
                    filename: shown.clone(),
                    source,
                })
            })?;
        // A PDF waits for one of the server's reader places, and is read in a reader process.
        let place = || handle.block_on(readers.place());
        let read =
            knowledge_sync::read(place, &reading_id, &shown, &bytes).map_err(ingest_refused)?;
        Ok((read, bytes.len() as u64))
    })
    .await?;
    let document = NewKnowledgeDocument {
        id: document_id,
        collection_id: collection.id,
        name,
        media_type: read.kind.media_type().to_string(),
        bytes: size,
        pages: read.pages,
        passages: read.passages,
        source: None,
    };
    let kept = state
        .turns
        .storage()
        .add_knowledge_document(&caller.organisation, document, state.limits.knowledge())
        .await?;
    drop(in_flight);
    Ok((StatusCode::CREATED, Json(kept)))
}

async fn remove_document(
    State(state): State<AppState>,
    caller: Caller,
    Path((id, document)): Path<(String, String)>,
) -> Result<StatusCode, ApiError> {
    let collection = managed(&state, &caller, &id).await?;
    state
        .turns
        .storage()
        .delete_knowledge_document(&caller.organisation, &collection.id, &document)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Whether `caller` may change `collection`: the organisation's if they administer it, their
/// own always.
fn may_manage(collection: &Collection, caller: &Caller) -> bool {
    match collection.owner.user_id() {
        None => caller.admin,
        Some(user_id) => user_id == caller.user,
    }
}

/// The collection `id` if `caller` may change it: 404 when they may not even search it, 403
/// when it is the organisation's and they are not its administrator.
async fn managed(state: &AppState, caller: &Caller, id: &str) -> Result<Collection, ApiError> {
    let collection = state
        .turns
        .storage()
        .collection(&caller.organisation, &caller.user, id)
        .await?;
    if !may_manage(&collection, caller) {
        return Err(not_an_administrator());
    }
    Ok(collection)
}

fn not_an_administrator() -> ApiError {
    ApiError(
        StatusCode::FORBIDDEN,
        "only an administrator of the organisation may make or change its shared collections; \
         ask one, or keep the documents in a collection of your own"
            .into(),
    )
}

fn ingest_refused(error: IngestError) -> ApiError {
    let status = match error {
        IngestError::Unsupported { .. } => StatusCode::UNSUPPORTED_MEDIA_TYPE,
        IngestError::NoText { .. } => StatusCode::UNPROCESSABLE_ENTITY,
    };
    ApiError(status, error.to_string())
}

/// Runs `work` off the async threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ApiError(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))?
}

/// A new id: `prefix` and 16 random characters.
fn new_id(prefix: &str) -> Result<String, ApiError> {
    Ok(format!(
        "{prefix}_{}",
        URL_SAFE_NO_PAD.encode(random::<12>()?)
    ))
}
