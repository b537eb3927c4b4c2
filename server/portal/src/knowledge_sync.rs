//! Knowledge documents read from their bytes, for an upload and a folder alike, and the
//! collections kept from folders (docs/knowledge.md, "Folders"): every [`Config::knowledge_sync`]
//! each organisation's `knowledge/<name>.toml` folders are scanned, and their collections made
//! to hold what the folders hold. Replicas may sync at once: a folder's file is added once (a
//! collection keeps one document per path), and a sync that loses that race leaves it to the
//! winner.
//!
//! [`Config::knowledge_sync`]: crate::Config::knowledge_sync

use std::io::Cursor;
use std::sync::Arc;
use std::time::Duration;

use portal_attachments::{PdfReaders, pdf_reading, sniff_head};
use portal_identity::{Identity, KnowledgeFolder};
use portal_knowledge::folder::{Found, plan, scan};
use portal_knowledge::ingest::{self, IngestError, Kind};
use portal_store::{
    AsyncStorage, CollectionOwner, KnowledgeLimits, NewCollection, NewKnowledgeDocument,
    NewPassage, StorageError,
};

/// How often the folders are synced when `--knowledge-sync-seconds` is not given.
/// **Decision:** 30 seconds: a file saved is searchable within half a minute, and a folder of
/// 50,000 files is listed in well under a second.
pub const DEFAULT_EVERY: Duration = Duration::from_secs(30);

/// The most files one folder syncs; the rest are left out, with a warning. **Decision:**
/// 100,000, ten times the documents an organisation may hold by default.
pub const MOST_FILES: usize = 100_000;

/// A document read: what it is, its pages (a PDF's) and its passages.
#[derive(Debug)]
pub(crate) struct Read {
    pub kind: Kind,
    pub pages: u32,
    pub passages: Vec<NewPassage>,
}

/// Reads the document `bytes` named `name` as its bytes say it is, a PDF in one of `readers`'
/// reader processes. Blocking: run it off the async threads.
pub(crate) fn read(
    place: impl FnOnce() -> portal_attachments::ReaderPlace,
    id: &str,
    name: &str,
    bytes: &[u8],
) -> Result<Read, IngestError> {
    let sniffed = sniff_head(&mut Cursor::new(bytes)).unwrap_or(None);
    let kind = ingest::kind(name, sniffed, bytes)?;
    if kind == Kind::Pdf {
        let (read, pages) = place().read_pages(&pdf_reading(id, name), bytes);
        Ok(Read {
            kind,
            pages: read.pages_read,
            passages: ingest::pages(name, &pages)?,
        })
    } else {
        Ok(Read {
            kind,
            pages: 0,
            passages: ingest::text(name, kind, bytes)?,
        })
    }
}

/// What syncing the folders needs.
#[derive(Debug, Clone)]
pub(crate) struct Sync {
    pub storage: AsyncStorage,
    pub identity: Arc<Identity>,
    pub readers: PdfReaders,
    pub limits: KnowledgeLimits,
    /// The largest file read; a larger one is left out, with a warning.
    pub max_bytes: usize,
}

impl Sync {
    /// Syncs every folder every `every`, for ever.
    pub async fn run(self, every: Duration) {
        loop {
            self.once().await;
            tokio::time::sleep(every).await;
        }
    }

    /// Syncs every organisation's folders once.
    pub async fn once(&self) {
        for organisation in self.identity.organisations() {
            for folder in &organisation.knowledge_folders {
                if let Err(error) = self.folder(&organisation.id, folder).await {
                    tracing::warn!(
                        "the collection `{}` of {} could not be synced from {}: {error}",
                        folder.name,
                        organisation.id,
                        folder.folder.display()
                    );
                }
            }
        }
    }

    async fn folder(&self, org_id: &str, folder: &KnowledgeFolder) -> anyhow::Result<()> {
        let collection_id = self.collection(org_id, folder).await?;
        let path = folder.folder.clone();
        let (found, more) = tokio::task::spawn_blocking(move || scan(&path, MOST_FILES)).await??;
        if more {
            tracing::warn!(
                "{} holds more than {MOST_FILES} files; the collection `{}` keeps the first",
                folder.folder.display(),
                folder.name
            );
        }
        let kept = self
            .storage
            .knowledge_documents(org_id, &collection_id)
            .await?;
        let plan = plan(&found, &kept);
        for document in &plan.remove {
            match self
                .storage
                .delete_knowledge_document(org_id, &collection_id, document)
                .await
            {
                Ok(()) | Err(StorageError::KnowledgeDocumentNotFound { .. }) => {}
                Err(error) => return Err(error.into()),
            }
        }
        for file in plan.add {
            match self.add(org_id, &collection_id, file.clone()).await {
                Ok(()) => {}
                // Past the organisation's limits no other file would be added either.
                Err(error) if is_full(&error) => {
                    tracing::warn!(
                        "the collection `{}` stops at the organisation's limits; the rest of {}'s files are left out: {error}",
                        folder.name,
                        folder.folder.display()
                    );
                    break;
                }
                Err(error) => tracing::warn!(
                    "{} was not added to the collection `{}`: {error}",
                    file.full.display(),
                    folder.name
                ),
            }
        }
        Ok(())
    }

    /// The organisation's collection of the folder's name, made if it is missing.
    async fn collection(&self, org_id: &str, folder: &KnowledgeFolder) -> anyhow::Result<String> {
        let owner = CollectionOwner::Organisation {
            org_id: org_id.to_string(),
        };
        let existing = |collections: Vec<portal_store::Collection>| {
            collections
                .into_iter()
                .find(|c| c.owner == owner && c.name == folder.name)
                .map(|c| c.id)
        };
        if let Some(id) = existing(self.storage.collections(org_id, "").await?) {
            return Ok(id);
        }
        let made = self
            .storage
            .create_collection(
                NewCollection {
                    id: new_id("col")?,
                    owner: owner.clone(),
                    name: folder.name.clone(),
                    description: folder.description.clone(),
                },
                self.limits,
            )
            .await;
        match made {
            Ok(collection) => Ok(collection.id),
            // Another replica made it first.
            Err(StorageError::CollectionNameTaken { .. }) => {
                existing(self.storage.collections(org_id, "").await?)
                    .ok_or_else(|| anyhow::anyhow!("the collection was made and is gone again"))
            }
            Err(error) => Err(error.into()),
        }
    }

    /// Reads the file and adds it as a document of the collection.
    async fn add(&self, org_id: &str, collection_id: &str, file: Found) -> anyhow::Result<()> {
        let size = std::fs::metadata(&file.full)?.len();
        if size > self.max_bytes as u64 {
            anyhow::bail!(
                "it is {size} bytes, past the largest upload ({}); raise --max-upload-bytes to \
                 add it",
                self.max_bytes
            );
        }
        let id = new_id("kdoc")?;
        let readers = self.readers.clone();
        let handle = tokio::runtime::Handle::current();
        let (path, name, reading_id) = (file.full.clone(), file.source.path.clone(), id.clone());
        let read = tokio::task::spawn_blocking(move || {
            let bytes = std::fs::read(&path)?;
            let place = || handle.block_on(readers.place());
            anyhow::Ok((read(place, &reading_id, &name, &bytes)?, bytes.len()))
        })
        .await??;
        let (read, bytes) = read;
        self.storage
            .add_knowledge_document(
                org_id,
                NewKnowledgeDocument {
                    id,
                    collection_id: collection_id.to_string(),
                    name: file.source.path.clone(),
                    media_type: read.kind.media_type().to_string(),
                    bytes: bytes as u64,
                    pages: read.pages,
                    passages: read.passages,
                    source: Some(file.source),
                },
                self.limits,
            )
            .await?;
        Ok(())
    }
}

/// Whether `error` is the organisation's knowledge refused for its limits.
fn is_full(error: &anyhow::Error) -> bool {
    matches!(
        error.downcast_ref::<StorageError>(),
        Some(StorageError::KnowledgeFull { .. })
    )
}

/// A new id: `prefix`, then 24 random hexadecimal digits.
fn new_id(prefix: &str) -> Result<String, getrandom::Error> {
    let mut random = [0u8; 12];
    getrandom::fill(&mut random)?;
    Ok(format!(
        "{prefix}_{}",
        random
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    ))
}
