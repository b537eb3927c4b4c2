//! The limits the server holds every request and every user to (docs/security.md, "Limits"): the
//! numbers, each a `portal serve` flag where an operator may want another value, and the counters
//! that enforce the "at once" ones. A refusal names the limit and its value.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::Semaphore;

use portal_attachments::{PdfReaders, UploadConfig};
use portal_identity::Caller;

/// What one request and one user may take. [`Limits::DEFAULT`] holds every default; `portal
/// serve` takes each flag below.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Limits {
    /// Attachments one message may carry; an id listed twice is refused, not counted once.
    #[arg(long = "max-attachments", default_value_t = Limits::DEFAULT.attachments_per_message)]
    pub attachments_per_message: usize,
    /// Characters (Unicode scalar values) a message's text may have.
    #[arg(long = "max-message-chars", default_value_t = Limits::DEFAULT.message_chars)]
    pub message_chars: usize,
    /// Characters (Unicode scalar values) an answer to a clarification question may have.
    #[arg(long = "max-answer-chars", default_value_t = Limits::DEFAULT.answer_chars)]
    pub answer_chars: usize,
    /// Uploads one user may have in flight at once: from the request to the upload stored and,
    /// for a PDF, read.
    #[arg(
        long = "max-uploads-in-flight",
        default_value_t = Limits::DEFAULT.uploads_in_flight,
        value_parser = at_least_one
    )]
    pub uploads_in_flight: usize,
    /// Bytes of uploads one user may store in all.
    #[arg(long = "upload-quota-bytes", default_value_t = Limits::DEFAULT.upload_quota_bytes)]
    pub upload_quota_bytes: u64,
    /// Event streams one user may hold open at once.
    #[arg(
        long = "max-streams-per-user",
        default_value_t = Limits::DEFAULT.streams_per_user,
        value_parser = at_least_one
    )]
    pub streams_per_user: usize,
    /// Replies one user may have being written at once, in all their conversations; a message
    /// past it is refused until one ends.
    #[arg(
        long = "max-turns-at-once",
        default_value_t = Limits::DEFAULT.turns_at_once,
        value_parser = at_least_one
    )]
    pub turns_at_once: usize,
    /// Live API keys (neither revoked nor expired) one user may hold.
    #[arg(
        long = "max-api-keys",
        default_value_t = Limits::DEFAULT.api_keys_per_user,
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub api_keys_per_user: u64,
    /// Live share links one user may hold (docs/share.md); revoked and expired ones do not count.
    #[arg(
        long = "max-share-links",
        default_value_t = Limits::DEFAULT.share_links_per_user,
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub share_links_per_user: u64,
    /// Projects one user may have (docs/projects.md).
    #[arg(
        long = "max-projects",
        default_value_t = Limits::DEFAULT.projects_per_user,
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub projects_per_user: u64,
    /// Knowledge collections one owner (the organisation, or one person) may have
    /// (docs/knowledge.md).
    #[arg(
        long = "knowledge-collections",
        default_value_t = Limits::DEFAULT.knowledge_collections,
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub knowledge_collections: u64,
    /// Documents one organisation's knowledge may hold, its people's collections included.
    #[arg(
        long = "knowledge-documents",
        default_value_t = Limits::DEFAULT.knowledge_documents,
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub knowledge_documents: u64,
    /// Bytes of documents, as uploaded, one organisation's knowledge may hold.
    #[arg(
        long = "knowledge-bytes",
        default_value_t = Limits::DEFAULT.knowledge_bytes,
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub knowledge_bytes: u64,
    /// Characters (Unicode scalar values) a project's instructions may have.
    #[arg(
        long = "max-project-instructions-chars",
        default_value_t = Limits::DEFAULT.project_instructions_chars
    )]
    pub project_instructions_chars: usize,
    /// Messages one request to `POST /v1/chat/completions` may carry (the conversation so far
    /// and the new message).
    #[arg(
        long = "max-api-messages",
        default_value_t = Limits::DEFAULT.api_messages,
        value_parser = at_least_one
    )]
    pub api_messages: usize,
    /// Pictures decoded at once, over all users; others wait their turn.
    #[arg(
        long = "picture-decodes",
        default_value_t = Limits::DEFAULT.picture_decodes,
        value_parser = at_least_one
    )]
    pub picture_decodes: usize,
    /// PDFs read at once, over all users, each in a reader process of its own; others wait
    /// their turn. Together they take at most this many times `--pdf-reader-memory-bytes`.
    #[arg(
        long = "pdf-readers",
        default_value_t = Limits::DEFAULT.pdf_readers,
        value_parser = at_least_one
    )]
    pub pdf_readers: usize,
    /// Bytes one import's file may have (`POST /api/conversations/import`).
    #[arg(long = "max-import-bytes", default_value_t = Limits::DEFAULT.import_bytes)]
    pub import_bytes: u64,
    /// Imports read at once, over all users; others wait their turn.
    #[arg(
        long = "imports-at-once",
        default_value_t = Limits::DEFAULT.imports_at_once,
        value_parser = at_least_one
    )]
    pub imports_at_once: usize,
    /// Archives of a person's work (`GET /api/export`) written at once, over all users; others
    /// wait their turn.
    #[arg(
        long = "archives-at-once",
        default_value_t = Limits::DEFAULT.archives_at_once,
        value_parser = at_least_one
    )]
    pub archives_at_once: usize,
    #[command(flatten)]
    pub uploads: UploadConfig,
}

impl Limits {
    /// Every default. **Decisions:** 20 attachments a message (the size of a generous batch of
    /// photos); 100,000 characters a message and 20,000 an answer (about 25,000 and 5,000
    /// tokens, well inside a context window); 4 uploads in flight a user; 1 GiB of uploads a
    /// user; 16 event streams a user (a browser tab reads one at a time); 4 replies being
    /// written at once a user (a person follows one or two; a burst of sends from a script is
    /// held to a few turns' cost, see docs/usage.md); 20 live API keys a user (one a script or
    /// tool, with room to rotate them); 100 live share links a user (each keeps its snapshot in the
    /// database); 100 projects a user (more than a sidebar shows; each turn in one reads its
    /// instructions) with instructions of at most 20,000 characters (about 5,000 tokens, the
    /// length of an answer, kept well inside a context window beside the author's); 100
    /// knowledge collections an owner, and 10,000 documents or 2 GiB of them an organisation
    /// (a company handbook, its policies and a product's manuals, with room to spare); 500 messages a chat completion request (a conversation
    /// of 250 turns sent back whole; a longer one continues with its new message alone, see
    /// docs/api.md); 2 picture decodes at
    /// once (the development machine's cores; each may take 160 MB, see
    /// [`UploadConfig::max_picture_pixels`]); 2 PDFs read at once (the cores again; together at
    /// most 1 GiB, see [`UploadConfig::pdf_memory_bytes`]); imports of at most 64 MiB, 2 read at once
    /// (each holds several times its size while it is read); 1 archive written at once (it reads
    /// every conversation and file of a person, and the database's other work comes first).
    pub const DEFAULT: Limits = Limits {
        attachments_per_message: 20,
        message_chars: 100_000,
        answer_chars: 20_000,
        uploads_in_flight: 4,
        upload_quota_bytes: 1024 * 1024 * 1024,
        streams_per_user: 16,
        turns_at_once: 4,
        api_keys_per_user: 20,
        share_links_per_user: 100,
        projects_per_user: 100,
        knowledge_collections: 100,
        knowledge_documents: 10_000,
        knowledge_bytes: 2 * 1024 * 1024 * 1024,
        project_instructions_chars: 20_000,
        api_messages: 500,
        picture_decodes: 2,
        pdf_readers: 2,
        import_bytes: 64 * 1024 * 1024,
        imports_at_once: 2,
        archives_at_once: 1,
        uploads: UploadConfig::DEFAULT,
    };
}

impl Limits {
    /// What one organisation's knowledge may hold.
    pub fn knowledge(&self) -> portal_store::KnowledgeLimits {
        portal_store::KnowledgeLimits {
            collections: self.knowledge_collections,
            documents: self.knowledge_documents,
            bytes: self.knowledge_bytes,
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}

/// A count that must be at least one, or nothing could ever run.
fn at_least_one(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("0 would refuse everything; give 1 or more".to_string()),
        Ok(count) => Ok(count),
        Err(error) => Err(format!("`{text}` is not a count ({error})")),
    }
}

/// The counters behind the "at once" limits, shared by every request.
#[derive(Debug, Clone)]
pub struct Gates {
    /// Uploads in flight, per user.
    pub uploads: PerUser,
    /// Open event streams, per user.
    pub streams: PerUser,
    /// Picture decodes running, over all users.
    pub decodes: Arc<Semaphore>,
    /// PDF reader processes, over all users.
    pub pdf_readers: PdfReaders,
    /// Imports being sent, one a user.
    pub imports_sent: PerUser,
    /// Imports being read and written, over all users.
    pub imports: Arc<Semaphore>,
    /// Archives being asked for, one a user.
    pub archives_sent: PerUser,
    /// Archives being written, over all users.
    pub archives: Arc<Semaphore>,
}

impl Gates {
    /// The counters for `limits`; picture decodes share `decodes` with the turn loop's, and PDFs
    /// are read by running `pdf_reader` (the `portal` program).
    pub fn new(limits: &Limits, decodes: Arc<Semaphore>, pdf_reader: PathBuf) -> Self {
        Gates {
            uploads: PerUser::new(limits.uploads_in_flight),
            streams: PerUser::new(limits.streams_per_user),
            decodes,
            pdf_readers: PdfReaders::new(
                pdf_reader,
                limits.uploads.pdf_limits(),
                limits.pdf_readers,
            ),
            imports_sent: PerUser::new(1),
            imports: Arc::new(Semaphore::new(limits.imports_at_once)),
            archives_sent: PerUser::new(1),
            archives: Arc::new(Semaphore::new(limits.archives_at_once)),
        }
    }
}

/// How many of something each user holds at once, at most `limit`.
#[derive(Debug, Clone)]
pub struct PerUser {
    held: Arc<Mutex<HashMap<(String, String), usize>>>,
    limit: usize,
}

impl PerUser {
    pub fn new(limit: usize) -> Self {
        PerUser {
            held: Arc::default(),
            limit,
        }
    }

    /// The most one user may hold.
    pub fn limit(&self) -> usize {
        self.limit
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<(String, String), usize>> {
        self.held.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes one of `caller`'s places, given back when the [`Held`] is dropped; `None` when they
    /// hold [`PerUser::limit`] already.
    pub fn take(&self, caller: &Caller) -> Option<Held> {
        let key = (caller.organisation.clone(), caller.user.clone());
        let mut held = self.lock();
        let count = held.entry(key.clone()).or_insert(0);
        if *count >= self.limit {
            return None;
        }
        *count += 1;
        Some(Held {
            counter: self.clone(),
            key,
        })
    }
}

/// One place a user holds; dropping it gives it back.
#[derive(Debug)]
pub struct Held {
    counter: PerUser,
    key: (String, String),
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut held = self.counter.lock();
        if let Some(count) = held.get_mut(&self.key) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                held.remove(&self.key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caller(user: &str) -> Caller {
        Caller {
            organisation: "acme".into(),
            user: user.into(),
            admin: false,
        }
    }

    #[test]
    fn each_user_holds_at_most_the_limit_and_a_dropped_place_is_given_back() {
        let counter = PerUser::new(2);
        let alice = caller("alice");
        let first = counter.take(&alice).expect("first");
        let second = counter.take(&alice).expect("second");
        assert!(counter.take(&alice).is_none(), "the third is refused");
        assert!(counter.take(&caller("bob")).is_some(), "bob has his own");
        drop(first);
        let third = counter.take(&alice).expect("a place was given back");
        assert!(counter.take(&alice).is_none(), "two held again");
        drop((second, third));
        assert_eq!(counter.lock().get(&("acme".into(), "alice".into())), None);
    }

    #[test]
    fn a_count_flag_of_zero_is_refused() {
        assert_eq!(at_least_one("3"), Ok(3));
        assert!(at_least_one("0").is_err());
        assert!(at_least_one("-1").is_err());
    }
}
