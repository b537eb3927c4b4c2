//! Where conversations are kept: the [`Storage`] trait the turn loop writes through, the rules
//! every database follows (`rules`), the values stored, usage quotas (`quota`) and the usage
//! report (`usage`). The databases are crates of their own: `portal-store-sqlite`, the embedded
//! default under `--data DIR`, and `portal-store-postgres` (`--database postgres://…`), which
//! implement [`Statements`]; the `portal` binary chooses one at start.
//!
//! A turn is written as it happens: its user message when it opens, then each message, block and
//! streamed piece of text as its own small transaction. A crash mid-turn therefore leaves the turn
//! with everything it wrote up to the last committed piece (rule M10), never a half-written row;
//! [`Storage::recover`] marks such turns `cut_off` at the next start. The schema is described in
//! `docs/storage.md`.
//!
//! The trait is synchronous. Async code calls it through [`AsyncStorage`], which runs each call
//! on tokio's blocking pool, so no database work happens on the async worker threads; see
//! `docs/storage.md` for the measured numbers.

// What the backends (`portal-store-sqlite`, `portal-store-postgres`) build their statements from.
pub mod assemble;
pub mod codec;
pub mod knowledge;
pub mod report;
pub mod rules;

mod calls;
mod days;
mod error;
mod location;
mod off_thread;
pub mod quota;
pub mod usage;

use std::fmt;

use crate::quota::{Hold, Quota, Spender};
use portal_core::attachment::Attachment;
use portal_core::effort::Effort;
use portal_core::{Block, Message, Role, TraceEntry, Transcript, TurnKind, TurnStatus};
use serde::{Deserialize, Serialize};

pub use calls::{KeptText, MAX_KEPT_BYTES, NewCall, RecordedCall};
pub use days::DAY_MS;
pub use error::{StorageError, check_schema};
pub use knowledge::{
    Collection, CollectionOwner, DocumentSource, KnowledgeDocument, KnowledgeLimits, NewCollection,
    NewKnowledgeDocument, NewPassage, Passage,
};
pub use location::{
    Location, LocationError, PASSWORD_VARIABLE, PasswordError, PasswordSources, redacted,
};
pub use off_thread::AsyncStorage;
pub use report::{UsageGrouping, UsageLine, UsageQuery};
pub use rules::Statements;

/// A schema version for each database: what `portal --version` prints, and what a readiness
/// probe may report. A database a newer build migrated further is refused at start
/// ([`StorageError::SchemaTooNew`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SchemaVersions {
    /// SQLite's, kept in `PRAGMA user_version`.
    pub sqlite: u32,
    /// PostgreSQL's, kept in the table `portal_schema`.
    pub postgres: u32,
}

impl SchemaVersions {
    /// The version for the database at `location`.
    pub fn of(&self, location: &Location) -> u32 {
        match location {
            Location::Sqlite(_) => self.sqlite,
            Location::Postgres(_) => self.postgres,
        }
    }
}

/// `SQLite 3, PostgreSQL 2`.
impl fmt::Display for SchemaVersions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SQLite {}, PostgreSQL {}", self.sqlite, self.postgres)
    }
}

/// The data folder used when `--data` is not given.
pub const DEFAULT_DATA_DIR: &str = "./portal-data";

/// What every storage method returns.
pub type Result<T, E = StorageError> = std::result::Result<T, E>;

/// A store of conversations. Implementations keep every write durable on its own, so that the
/// turn loop never depends on which database sits behind it.
///
/// Positions follow the transcript: turns are 1-based, messages and blocks 0-based within their
/// turn and message (as [`portal_core::stream::TurnEvent`] counts them).
///
/// Isolation: every method that starts from a request takes the caller's organisation and reports
/// another organisation's conversation or attachment as not found. The turn loop's writes take only
/// the conversation id, which the loop got from such a lookup.
pub trait Storage: Send + Sync + fmt::Debug {
    /// Opens a new, empty conversation for `owner` with `agent_id` and returns its id.
    fn create_conversation(&self, owner: &Owner, agent_id: &str) -> Result<ConversationId> {
        in_write(self, |s| s.insert_conversation(owner, agent_id))
    }

    /// A page of the conversations `owner` opened, newest activity first, those matching the
    /// query's search only.
    fn list_conversations(
        &self,
        owner: &Owner,
        query: &ConversationQuery,
    ) -> Result<ConversationPage>;

    /// One of `owner`'s conversations as the list shows it; anyone else's is not found.
    fn conversation_summary(
        &self,
        owner: &Owner,
        conversation: &ConversationId,
    ) -> Result<ConversationSummary>;

    /// Renames one of `owner`'s conversations; anyone else's is not found.
    fn rename_conversation(
        &self,
        owner: &Owner,
        conversation: &ConversationId,
        title: &str,
    ) -> Result<ConversationSummary> {
        let change = ConversationChange {
            title: Some(title.to_string()),
            ..ConversationChange::default()
        };
        self.change_conversation(owner, conversation, &change)
    }

    /// Changes one of `owner`'s conversations as `change` asks, all of it or nothing
    /// ([`rules::change_conversation`]): its title, the project it is in (one of `owner`'s, or
    /// none) and whether it is pinned. Anyone else's conversation is not found, and anyone
    /// else's project [`StorageError::ProjectNotFound`].
    fn change_conversation(
        &self,
        owner: &Owner,
        conversation: &ConversationId,
        change: &ConversationChange,
    ) -> Result<ConversationSummary> {
        in_write(self, |s| {
            rules::change_conversation(s, owner, conversation, change)
        })?;
        self.conversation_summary(owner, conversation)
    }

    /// Opens a new, empty conversation for `owner` with `agent_id` in their project `project`
    /// and returns its id; anyone else's project is [`StorageError::ProjectNotFound`].
    fn create_conversation_in_project(
        &self,
        owner: &Owner,
        agent_id: &str,
        project: &str,
    ) -> Result<ConversationId> {
        in_write(self, |s| {
            rules::create_conversation_in_project(s, owner, agent_id, project)
        })
    }

    /// Keeps a new project of `project.owner`'s, made now by the database's clock, and returns it
    /// as kept. Under a lock on its owner (projects made at once, on every replica, take turns),
    /// it is refused with [`StorageError::ProjectsFull`] when they have `most` projects.
    fn create_project(&self, project: &NewProject, most: u64) -> Result<Project> {
        in_write(self, |s| rules::create_project(s, project, most))
    }

    /// `owner`'s projects, newest first.
    fn projects(&self, owner: &Owner) -> Result<Vec<Project>>;

    /// One of `owner`'s projects; anyone else's is [`StorageError::ProjectNotFound`].
    fn project(&self, owner: &Owner, id: &str) -> Result<Project>;

    /// Changes one of `owner`'s projects as `change` asks and returns it changed; anyone else's
    /// is [`StorageError::ProjectNotFound`].
    fn change_project(&self, owner: &Owner, id: &str, change: &ProjectChange) -> Result<Project> {
        in_write(self, |s| rules::change_project(s, owner, id, change))
    }

    /// Deletes one of `owner`'s projects, all of it or nothing ([`rules::delete_project`]): its
    /// conversations are moved out of it ([`ProjectConversations::Keep`]), or deleted with it as
    /// [`Storage::delete_conversation`] deletes one, attachments and share links too, refused
    /// with [`StorageError::TurnStillRunning`] while any of them runs a turn
    /// ([`ProjectConversations::Delete`]). Anyone else's is [`StorageError::ProjectNotFound`].
    fn delete_project(
        &self,
        owner: &Owner,
        id: &str,
        conversations: ProjectConversations,
    ) -> Result<()> {
        in_write(self, |s| rules::delete_project(s, owner, id, conversations))
    }

    /// Deletes one of `owner`'s conversations with its turns, and the attachments its messages
    /// used that no other conversation uses. Refused with [`StorageError::TurnStillRunning`]
    /// while its latest turn runs; anyone else's is not found.
    fn delete_conversation(&self, owner: &Owner, conversation: &ConversationId) -> Result<()> {
        in_write(self, |s| rules::delete_conversation(s, owner, conversation))
    }

    /// Writes what an import made as `owner`'s, its projects and conversations all in one
    /// transaction, so an import that fails leaves nothing behind; answers the conversations'
    /// ids in order ([`rules::import_conversations`]). Under a lock on `owner` (as
    /// [`Storage::create_project`] takes it), it is refused with
    /// [`StorageError::ImportProjectsFull`] when its projects would bring theirs past
    /// [`ImportedWork::most_projects`].
    fn import_conversations(
        &self,
        owner: &Owner,
        work: &ImportedWork,
    ) -> Result<Vec<ConversationId>> {
        in_write(self, |s| rules::import_conversations(s, owner, work))
    }

    /// Who owns a conversation. Another organisation's conversation is not found.
    fn conversation(&self, org_id: &str, conversation: &ConversationId)
    -> Result<ConversationInfo>;

    /// The conversation's transcript, assembled from what was written. A message without blocks
    /// (a crash between opening a message and writing its first block) is left out; the result is
    /// not validated here, so a caller that needs the invariants runs `portal_core::validate`.
    fn load_transcript(&self, org_id: &str, conversation: &ConversationId) -> Result<Transcript>;

    /// The part of a conversation a model call replays (rule M1): its latest `past_turns + 1`
    /// turns, and the turn holding its newest compaction when that lies further back, so a call
    /// reads what memory needs however long the conversation is. Another organisation's
    /// conversation is not found.
    fn load_recent(
        &self,
        org_id: &str,
        conversation: &ConversationId,
        past_turns: usize,
    ) -> Result<RecentTurns>;

    /// Opens the next turn with the user's message, status `running`, and returns its index.
    /// Refused while the latest turn is still running. The message's attachments are referenced
    /// by id and must have been stored with [`Storage::put_attachment`] in the conversation's
    /// organisation; a loaded transcript shows their stored metadata.
    fn open_turn(&self, conversation: &ConversationId, turn: NewTurn) -> Result<u32> {
        in_write(self, |s| rules::open_turn(s, conversation, &turn))
    }

    /// Starts a message in a running turn and returns its position. When the turn's last message
    /// has no block yet, it is reused with the new role, so an empty message never sits between
    /// two others.
    fn append_message(
        &self,
        conversation: &ConversationId,
        turn: u32,
        role: Role,
    ) -> Result<usize> {
        in_write(self, |s| rules::append_message(s, conversation, turn, role))
    }

    /// Appends a whole block (or the empty start of a streamed one) to a message of a running
    /// turn and returns its position.
    fn append_block(
        &self,
        conversation: &ConversationId,
        turn: u32,
        message: usize,
        block: &Block,
    ) -> Result<usize> {
        in_write(self, |s| {
            rules::append_block(s, conversation, turn, message, block)
        })
    }

    /// Appends streamed text to a thinking or text block's text, or a tool result's content, of a
    /// running turn. Each call writes only the delta, so its cost does not grow with the block.
    fn append_block_text(
        &self,
        conversation: &ConversationId,
        turn: u32,
        message: usize,
        block: usize,
        delta: &str,
    ) -> Result<()>;

    /// Removes the blocks of a message of a running turn from position `from` on, with their
    /// streamed text: the output of a model call that reported a context overflow (rule C2). The
    /// message stays, and when it is left empty the next [`Storage::append_message`] reuses it.
    /// Nothing before `from` is touched; removing blocks that are not there removes nothing.
    fn withdraw_blocks(
        &self,
        conversation: &ConversationId,
        turn: u32,
        message: usize,
        from: usize,
    ) -> Result<()> {
        in_write(self, |s| {
            rules::withdraw_blocks(s, conversation, turn, message, from)
        })
    }

    /// Sets a turn's status. A turn that ended (completed, cut off or failed) keeps its status;
    /// setting another is refused.
    fn set_turn_status(
        &self,
        conversation: &ConversationId,
        turn: u32,
        status: TurnStatus,
    ) -> Result<()> {
        in_write(self, |s| {
            rules::set_turn_status(s, conversation, turn, status)
        })
    }

    /// Claims a paused turn for the one request that moves it on: the run that resumes it after
    /// an answer or its decisions ([`PausedClaim::Resume`]), or a cancel
    /// ([`PausedClaim::CutOff`]). Sets its status only if it is still `paused` with the
    /// `messages` messages it had when the caller read it, in one conditional update. Of any
    /// number of claims at once, resumes and cancels alike, exactly one succeeds; the others get
    /// [`StorageError::AlreadyResumed`] (it resumed, and perhaps paused again further on) or
    /// [`StorageError::TurnEnded`] (it was cut off).
    fn claim_paused(
        &self,
        conversation: &ConversationId,
        turn: u32,
        messages: usize,
        claim: PausedClaim,
    ) -> Result<()> {
        in_write(self, |s| {
            rules::claim_paused(s, conversation, turn, messages, claim)
        })
    }

    /// Overwrites an open turn's context size (rule C11). [`Storage::record_usage`] already does
    /// this for calls on the turn's own model.
    fn set_context_tokens(
        &self,
        conversation: &ConversationId,
        turn: u32,
        tokens: u64,
    ) -> Result<()> {
        in_write(self, |s| {
            rules::set_context_tokens(s, conversation, turn, tokens)
        })
    }

    /// Adds a runtime note to an open turn.
    fn add_trace(
        &self,
        conversation: &ConversationId,
        turn: u32,
        entry: &TraceEntry,
    ) -> Result<()> {
        in_write(self, |s| rules::add_trace(s, conversation, turn, entry))
    }

    /// Leaves a usage row for one model call of the turn, compaction calls included (rule C11).
    /// A [`CallPurpose::Turn`] call on an open turn also overwrites the turn's context size with
    /// its input tokens; other purposes carry none. Rows are kept for ended turns too: the call
    /// was made.
    fn record_usage(&self, conversation: &ConversationId, turn: u32, usage: &Usage) -> Result<()> {
        in_write(self, |s| rules::record_usage(s, conversation, turn, usage))
    }

    /// Keeps one model call of a turn as it was made, numbered after the turn's calls kept
    /// before it; answers its number.
    fn record_call(&self, conversation: &ConversationId, turn: u32, call: &NewCall) -> Result<u32>;

    /// The model calls kept for a turn of one of `org_id`'s conversations, in the order they
    /// were made.
    fn calls(
        &self,
        org_id: &str,
        conversation: &ConversationId,
        turn: u32,
    ) -> Result<Vec<RecordedCall>>;

    /// The conversation's usage rows in the order they were recorded.
    fn usage(&self, org_id: &str, conversation: &ConversationId) -> Result<Vec<UsageRecord>>;

    /// The usage report: the rows the query selects summed per day, user, model or agent by the
    /// database, a line per key in key order (days oldest first), each cost in its currency.
    /// Rows of deleted conversations count; rows keep the cost they were priced at.
    fn usage_report(&self, query: &UsageQuery) -> Result<Vec<UsageLine>>;

    /// Stores an uploaded attachment: its metadata, which decides once whether it is a document
    /// or a picture (rule A1), and its `size` bytes, read from `bytes` in pieces as they are
    /// written, so an upload is never held whole in memory. Ids are unique within an
    /// organisation. Refused with [`StorageError::QuotaExceeded`] when the bytes `owner` stored
    /// already and these would pass `quota`, checked in the same transaction as the write, so
    /// uploads at once cannot pass it together. A text document is stored without its text,
    /// which is read from its bytes when it is loaded ([`assemble::text_from_bytes`]).
    fn put_attachment(
        &self,
        owner: &Owner,
        attachment: &Attachment,
        bytes: &mut dyn std::io::Read,
        size: u64,
        quota: u64,
    ) -> Result<()> {
        in_write(self, |s| {
            rules::put_attachment(s, owner, attachment, bytes, size, quota)
        })
    }

    /// Stores a picture a tool answered with in `owner`'s `conversation` as
    /// [`Storage::put_attachment`] stores an upload (refused past `quota` alike), linked to the
    /// conversation so that it is deleted with it.
    fn put_tool_picture(
        &self,
        owner: &Owner,
        conversation: &ConversationId,
        attachment: &Attachment,
        bytes: &mut dyn std::io::Read,
        size: u64,
        quota: u64,
    ) -> Result<()> {
        in_write(self, |s| {
            rules::put_tool_picture(s, owner, conversation, attachment, bytes, size, quota)
        })
    }

    /// Replaces an attachment's metadata, for reading progress and extracted text. Its kind
    /// cannot change (rule A1).
    fn update_attachment(&self, org_id: &str, attachment: &Attachment) -> Result<()>;

    /// One of `owner`'s attachments' metadata, a text document with its text. Anyone else's
    /// attachment is not found.
    fn attachment(&self, owner: &Owner, attachment_id: &str) -> Result<Attachment>;

    /// An attachment's uploaded bytes. Another organisation's attachment is not found.
    fn attachment_bytes(&self, org_id: &str, attachment_id: &str) -> Result<Vec<u8>>;

    /// Marks every turn left `running` by a process that stopped as `cut_off` (rule M10) and
    /// returns them. It answers nothing: memory answers a call that never returned (rule M9).
    /// Call it once at start, before serving, while no other process writes to the same store.
    fn recover(&self) -> Result<Vec<TurnRef>>;

    /// Marks every document left `reading` by a process that stopped as `failed`, keeping the
    /// pages it had read, and returns them. Reading is not started again: the file may be what
    /// stopped the process. Call it once at start, with [`Storage::recover`].
    fn recover_documents(&self) -> Result<Vec<AttachmentRef>>;

    /// Keeps a new sign-in session.
    fn create_session(&self, session: &StoredSession) -> Result<()>;

    /// The session whose id hashes to `id_sha256`, expired or not; `None` when there is none
    /// (never made, signed out, or removed).
    fn session(&self, id_sha256: &str) -> Result<Option<StoredSession>>;

    /// Moves a session's expiry, for sessions that slide with use.
    fn extend_session(&self, id_sha256: &str, expires_at_ms: i64) -> Result<()>;

    /// Removes a session (signing out). Removing one that is gone does nothing.
    fn revoke_session(&self, id_sha256: &str) -> Result<()>;

    /// Removes the sessions that expired before `now_ms`, and returns how many.
    fn remove_expired_sessions(&self, now_ms: i64) -> Result<u64>;

    /// The account single sign-on made for the user `subject` of the provider `issuer`, if any.
    fn sso_account(&self, issuer: &str, subject: &str) -> Result<Option<SsoAccount>>;

    /// The account single sign-on made for `owner`, if they are one.
    fn sso_account_of(&self, owner: &Owner) -> Result<Option<SsoAccount>>;

    /// Keeps an account a first single sign-on made. An account for the same provider user, or
    /// the same user id in the organisation, is a conflict and keeps nothing.
    fn create_sso_account(&self, account: &SsoAccount) -> Result<()>;

    /// Keeps a new API key, made now by the database's clock and expiring `key.lifetime_ms`
    /// after, and returns it as kept. Under a lock on its owner (keys made at once, on every
    /// replica, take turns), it is refused with [`StorageError::ApiKeysFull`] when its owner
    /// holds `most` live keys (neither revoked nor expired).
    fn create_api_key(&self, key: &NewApiKey, most: u64) -> Result<StoredApiKey> {
        in_write(self, |s| rules::create_api_key(s, key, most))
    }

    /// `owner`'s API keys, revoked and expired ones too, newest first.
    fn api_keys(&self, owner: &Owner) -> Result<Vec<StoredApiKey>>;

    /// The API key whose secret hashes to `key_sha256`, revoked or expired or not; `None` when
    /// there is none.
    fn api_key(&self, key_sha256: &str) -> Result<Option<StoredApiKey>>;

    /// Revokes `owner`'s API key `id` now, by the database's clock, and answers whether they
    /// have one (anyone else's is not found). A key revoked before keeps its first time.
    fn revoke_api_key(&self, owner: &Owner, id: &str) -> Result<bool>;

    /// Keeps a new share link of `link.owner`'s conversation with its snapshot, made now by the
    /// database's clock and expiring `link.lifetime_ms` after, and returns it as kept. Refused as
    /// not found when the conversation is not the owner's (or was deleted meanwhile), and with
    /// [`StorageError::ShareLinksFull`] when the owner holds `most` live links.
    fn create_share_link(&self, link: &NewShareLink, most: u64) -> Result<ShareLink> {
        in_write(self, |s| rules::create_share_link(s, link, most))
    }

    /// `owner`'s share links, revoked and expired ones too, newest first.
    fn share_links(&self, owner: &Owner) -> Result<Vec<ShareLink>>;

    /// The share link whose token is `token`, revoked or expired or not, with its snapshot;
    /// `None` when there is none.
    fn shared(&self, token: &str) -> Result<Option<(ShareLink, Transcript)>>;

    /// Revokes `owner`'s share link `id` now, by the database's clock, and answers whether they
    /// have one (anyone else's is not found). A link revoked before keeps its first time.
    fn revoke_share_link(&self, owner: &Owner, id: &str) -> Result<bool>;

    /// Takes a place among the failed sign-ins of each of `keys` for a sign-in about to be
    /// checked, if `rule` lets it try. Under a lock on the keys (sign-ins at once, on every
    /// replica, take turns): removes the failures older than `window_ms` (of every key), reads
    /// the failures left of each key, oldest first, with the time now by the database's clock,
    /// and asks `rule`. When it lets the sign-in try, records a failure now against each key
    /// and returns their ids, in the keys' order; else how long to wait.
    fn take_sign_in_places(
        &self,
        keys: &[String],
        window_ms: i64,
        rule: ThrottleRule,
    ) -> Result<SignInPlaces> {
        in_write(self, |s| {
            rules::take_sign_in_places(s, keys, window_ms, rule)
        })
    }

    /// Keeps a single sign-on under way until its browser comes back from the provider, for
    /// `limits.lifetime_ms` by the database's clock. Under a lock every server takes (sign-ins
    /// started at once, on every replica, take turns): removes the sign-ins that expired, and
    /// refuses this one with [`StorageError::SsoSignInsFull`] when `limits.most` are under way,
    /// or `limits.from_one_client` from its client.
    fn keep_sso_sign_in(&self, sign_in: &SsoSignIn, limits: SsoSignInLimits) -> Result<()> {
        in_write(self, |s| rules::keep_sso_sign_in(s, sign_in, limits))
    }

    /// Takes the sign-in whose `state` hashes to `state_sha256`, removing it in the same
    /// statement, so that of any number of claims at once, on any replica, one at most gets it.
    /// It is answered only to the browser whose `portal_sso` cookie hashes to
    /// `binding_sha256`, and only before it expires: a claim with another binding, with none,
    /// or too late uses it up and gets `None`, like one of a `state` never kept or used before.
    fn claim_sso_sign_in(
        &self,
        state_sha256: &str,
        binding_sha256: Option<&str>,
    ) -> Result<Option<SsoSignIn>> {
        in_write(self, |s| {
            rules::claim_sso_sign_in(s, state_sha256, binding_sha256)
        })
    }

    /// Removes every failure of `keys`, and the failures `places` ([`Storage::take_sign_in_places`]'s
    /// ids): a right password forgets its user's failures and gives its address's place back; a
    /// sign-in never checked gives its places back. Removing what is gone does nothing.
    fn forget_sign_in_failures(&self, keys: &[String], places: &[i64]) -> Result<()> {
        in_write(self, |s| rules::forget_sign_in_failures(s, keys, places))
    }

    /// The collections `user_id` of `org_id` may search: the organisation's, then their own,
    /// each by name.
    fn collections(&self, org_id: &str, user_id: &str) -> Result<Vec<Collection>>;

    /// One collection `user_id` of `org_id` may search (the organisation's, or their own);
    /// anyone else's is [`StorageError::CollectionNotFound`].
    fn collection(&self, org_id: &str, user_id: &str, id: &str) -> Result<Collection>;

    /// Makes a collection ([`knowledge::create_collection`]).
    fn create_collection(
        &self,
        collection: &NewCollection,
        limits: &KnowledgeLimits,
    ) -> Result<Collection> {
        in_write(self, |s| {
            knowledge::create_collection(s, collection, limits)
        })
    }

    /// Deletes a collection of `org_id`'s with its documents and their passages
    /// ([`knowledge::delete_collection`]).
    fn delete_collection(&self, org_id: &str, collection_id: &str) -> Result<()> {
        in_write(self, |s| {
            knowledge::delete_collection(s, org_id, collection_id)
        })
    }

    /// The documents of a collection of `org_id`'s, newest first.
    fn knowledge_documents(
        &self,
        org_id: &str,
        collection_id: &str,
    ) -> Result<Vec<KnowledgeDocument>>;

    /// Adds a document and its passages to a collection of `org_id`'s
    /// ([`knowledge::add_document`]).
    fn add_knowledge_document(
        &self,
        org_id: &str,
        document: &NewKnowledgeDocument,
        limits: &KnowledgeLimits,
    ) -> Result<KnowledgeDocument> {
        in_write(self, |s| {
            knowledge::add_document(s, org_id, document, limits)
        })
    }

    /// Deletes a document of a collection of `org_id`'s with its passages
    /// ([`knowledge::delete_document`]).
    fn delete_knowledge_document(
        &self,
        org_id: &str,
        collection_id: &str,
        document_id: &str,
    ) -> Result<()> {
        in_write(self, |s| {
            knowledge::delete_document(s, org_id, collection_id, document_id)
        })
    }

    /// The passages of the collections `collection_ids` of `org_id`'s that match the words of
    /// `query` ([`knowledge::query_words`]) best, at most `limit`, best first: the database's
    /// keyword ranking (BM25 on SQLite, `ts_rank_cd` on PostgreSQL), headings weighing more
    /// than text. A collection of another organisation's finds nothing.
    fn search_knowledge(
        &self,
        org_id: &str,
        collection_ids: &[String],
        query: &str,
        limit: usize,
    ) -> Result<Vec<Passage>>;

    /// The schema version the database holds now. It is [`SCHEMA_VERSIONS`]'s for this
    /// database once opened, unless a newer build has migrated it since: a replica still
    /// running on it is then older than its database (a readiness probe can say so).
    fn schema_version(&self) -> Result<u32>;

    /// How many reads, and how many writes, [`AsyncStorage`] runs on the blocking pool at once;
    /// calls beyond that wait in order as tasks, not as blocked threads.
    fn calls_at_once(&self) -> usize;

    /// Runs `work` on this database's statements inside one write transaction, committed when
    /// `work` succeeds and rolled back when it fails. Storage's rules (`storage/rules.rs`) run
    /// through it: the methods above that write turns and attachments are theirs.
    fn write_statements(
        &self,
        work: &mut dyn FnMut(&mut dyn Statements) -> Result<()>,
    ) -> Result<()>;
}

/// Runs `rule` in one write transaction of `storage` and returns what it decided.
fn in_write<T>(
    storage: &(impl Storage + ?Sized),
    rule: impl FnOnce(&mut dyn Statements) -> Result<T>,
) -> Result<T> {
    let mut rule = Some(rule);
    let mut decided = None;
    storage.write_statements(&mut |s| {
        if let Some(rule) = rule.take() {
            decided = Some(rule(s)?);
        }
        Ok(())
    })?;
    decided.ok_or_else(not_run)
}

fn not_run() -> StorageError {
    StorageError::Interrupted {
        detail: "a storage rule's transaction ended without running it".into(),
    }
}

/// The rule a sign-in is judged by (`sessions::throttle::rule`), given the failures of each of its
/// keys (times in milliseconds, oldest first) and the time now: `None` lets it try, `Some(wait)`
/// refuses it for that long. Storage runs it inside the transaction that takes the places, so
/// the rule is written once and each database holds only its statements.
pub type ThrottleRule = fn(failures: &[Vec<i64>], now_ms: i64) -> Option<std::time::Duration>;

/// What [`Storage::take_sign_in_places`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignInPlaces {
    /// The sign-in may be checked: the ids of the failures recorded for it, one per key.
    Taken(Vec<i64>),
    /// It may not, for this long.
    Wait(std::time::Duration),
}

/// A conversation's id: opaque text, unguessable for the SQLite store.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ConversationId(String);

impl ConversationId {
    /// Wraps an id, for one that comes from a URL.
    pub fn new(id: impl Into<String>) -> Self {
        ConversationId(id.into())
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ConversationId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Whose a conversation or an attachment is.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Owner {
    pub org_id: String,
    pub user_id: String,
}

impl Owner {
    /// The user `user_id` of organisation `org_id`.
    pub fn new(org_id: impl Into<String>, user_id: impl Into<String>) -> Self {
        Owner {
            org_id: org_id.into(),
            user_id: user_id.into(),
        }
    }
}

/// A conversation as listed: who owns it, with which agent, and in which of its owner's
/// projects.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConversationInfo {
    pub id: ConversationId,
    pub owner: Owner,
    pub agent_id: String,
    /// The project it is in, if any.
    pub project: Option<String>,
    /// When it was opened, in milliseconds since the Unix epoch (the database's clock).
    pub created_at_ms: i64,
}

/// Which of a user's conversations to list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConversationQuery {
    /// Only conversations whose title or message text contains this, ignoring case.
    pub search: Option<String>,
    /// Only the conversations of one project, or those in none.
    pub project: ProjectFilter,
    /// Only conversations listed after this point (the previous page's `next`).
    pub after: Option<ListCursor>,
    /// At most this many.
    pub limit: u32,
}

/// Which conversations a list takes by their project.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ProjectFilter {
    /// Every conversation, in a project or not.
    #[default]
    Any,
    /// Those in no project.
    Outside,
    /// Those in this project.
    Within(String),
}

/// A place in the conversation list: the last conversation of a page. The list runs pinned
/// conversations first, each part newest activity first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListCursor {
    pub pinned: bool,
    pub last_activity_ms: i64,
    pub id: ConversationId,
}

impl ListCursor {
    /// The cursor as the API hands it out: opaque to clients. A pinned conversation's opens
    /// with `p`.
    pub fn encode(&self) -> String {
        let pinned = if self.pinned { "p" } else { "" };
        format!("{pinned}{}.{}", self.last_activity_ms, self.id)
    }

    /// Reads a cursor [`ListCursor::encode`] made; `None` for anything else.
    pub fn decode(text: &str) -> Option<Self> {
        let (pinned, text) = match text.strip_prefix('p') {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let (at, id) = text.split_once('.')?;
        let digits = !at.is_empty() && at.bytes().all(|b| b.is_ascii_digit());
        let id_like =
            !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_alphanumeric());
        if !digits || !id_like {
            return None;
        }
        Some(ListCursor {
            pinned,
            last_activity_ms: at.parse().ok()?,
            id: ConversationId::new(id),
        })
    }
}

/// A conversation as the list shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConversationSummary {
    pub id: ConversationId,
    /// Empty until the first message with words names it, or the user renames it.
    pub title: String,
    pub created_at_ms: i64,
    /// When its latest turn opened or changed status, or when it was opened.
    pub last_activity_ms: i64,
    /// Its latest turn's status; `None` before the first message.
    pub status: Option<TurnStatus>,
    /// The project it is in, if any.
    pub project: Option<String>,
    /// Whether its owner pinned it, which lists it before the others.
    pub pinned: bool,
}

/// A change to one of a person's conversations ([`Storage::change_conversation`]); what is
/// `None` stays as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConversationChange {
    pub title: Option<String>,
    /// The project to move it into, or `Some(None)` to take it out of its project.
    pub project: Option<Option<String>>,
    pub pinned: Option<bool>,
}

/// A project (docs/projects.md): conversations its owner keeps together, with instructions of
/// their own that every turn in them reads (the prompt's layer 3), and the agent a conversation
/// opened in it talks to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Project {
    pub id: String,
    pub owner: Owner,
    pub name: String,
    /// Empty for none.
    pub instructions: String,
    /// The agent a conversation opened in the project talks to when none is asked for; `None`:
    /// the organisation's first, as outside a project.
    pub agent_id: Option<String>,
    pub created_at_ms: i64,
}

/// A project to keep ([`Storage::create_project`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewProject {
    pub id: String,
    pub owner: Owner,
    pub name: String,
    pub instructions: String,
    pub agent_id: Option<String>,
}

/// A change to a project ([`Storage::change_project`]); what is `None` stays as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProjectChange {
    pub name: Option<String>,
    pub instructions: Option<String>,
    /// The default agent, or `Some(None)` for none.
    pub agent_id: Option<Option<String>>,
}

/// What deleting a project does with its conversations ([`Storage::delete_project`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProjectConversations {
    /// They stay, in no project.
    Keep,
    /// They are deleted with it.
    Delete,
}

/// One page of a conversation list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConversationPage {
    pub conversations: Vec<ConversationSummary>,
    /// Where the next page starts; `None` on the last page.
    pub next: Option<ListCursor>,
}

/// A sign-in session as storage keeps it: never the session's id, only its SHA-256 digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSession {
    /// The SHA-256 digest of the session id, in lowercase hexadecimal.
    pub id_sha256: String,
    pub owner: Owner,
    /// The fingerprint of the password hash the user signed in with.
    pub stamp: String,
    pub created_at_ms: i64,
    pub expires_at_ms: i64,
}

/// An API key as storage keeps it (docs/api.md): never the secret, only its SHA-256 digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredApiKey {
    /// The key's public id, which its owner sees and revokes it by.
    pub id: String,
    /// The SHA-256 digest of the secret, in lowercase hexadecimal.
    pub key_sha256: String,
    /// The secret's first characters, for its owner to recognise it by.
    pub hint: String,
    pub owner: Owner,
    pub name: String,
    /// The agents it may use; none listed: every agent its user may use.
    pub agents: Vec<String>,
    pub created_at_ms: i64,
    pub expires_at_ms: Option<i64>,
    pub revoked_at_ms: Option<i64>,
}

impl StoredApiKey {
    /// Whether it signs in at `now_ms`: not revoked, and not expired.
    pub fn live(&self, now_ms: i64) -> bool {
        self.revoked_at_ms.is_none() && self.expires_at_ms.is_none_or(|at| now_ms < at)
    }
}

/// An API key to keep ([`Storage::create_api_key`]): what its owner chose, and its digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewApiKey {
    pub id: String,
    pub key_sha256: String,
    pub hint: String,
    pub owner: Owner,
    pub name: String,
    pub agents: Vec<String>,
    /// How long it lives from its making; `None`: until revoked.
    pub lifetime_ms: Option<i64>,
}

/// Who may open a share link (docs/share.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShareVisibility {
    /// The signed-in people of the owner's organisation.
    Organisation,
    /// Anyone with the link, signed in or not, where the organisation allows it.
    Public,
}

impl ShareVisibility {
    /// The visibility's name, as stored and as the API says it.
    pub fn as_str(self) -> &'static str {
        match self {
            ShareVisibility::Organisation => "organisation",
            ShareVisibility::Public => "public",
        }
    }

    /// The visibility `name` names.
    pub fn named(name: &str) -> Option<Self> {
        match name {
            "organisation" => Some(ShareVisibility::Organisation),
            "public" => Some(ShareVisibility::Public),
            _ => None,
        }
    }
}

/// A read-only snapshot of one of `owner`'s conversations, opened by the token in its link
/// (docs/share.md). The snapshot itself is read with [`Storage::shared`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShareLink {
    /// The link's public id, which its owner revokes it by.
    pub id: String,
    /// The secret in the link's address (`/s/<token>`): 128 random bits or more.
    pub token: String,
    pub owner: Owner,
    pub conversation: ConversationId,
    /// The conversation's title when it was shared.
    pub title: String,
    pub visibility: ShareVisibility,
    /// How many turns the snapshot holds.
    pub turns: u32,
    pub created_at_ms: i64,
    pub expires_at_ms: Option<i64>,
    pub revoked_at_ms: Option<i64>,
}

impl ShareLink {
    /// Whether it opens at `now_ms`: not revoked, and not expired.
    pub fn live(&self, now_ms: i64) -> bool {
        self.revoked_at_ms.is_none() && self.expires_at_ms.is_none_or(|at| now_ms < at)
    }
}

/// A share link to keep, with its snapshot.
#[derive(Debug, Clone)]
pub struct NewShareLink {
    pub id: String,
    pub token: String,
    pub owner: Owner,
    pub conversation: ConversationId,
    pub title: String,
    pub visibility: ShareVisibility,
    /// What the link shows: the conversation as it was, with what is not shared taken out.
    pub snapshot: Transcript,
    /// How long it lives from its making; `None`: until revoked.
    pub lifetime_ms: Option<i64>,
}

/// An account a first single sign-on made (docs/identity.md, "Single sign-on"): the provider's
/// `iss` and `sub` name the person, and the organisation and user id are theirs in the portal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SsoAccount {
    pub issuer: String,
    pub subject: String,
    pub owner: Owner,
    /// The name shown for them, from the provider's `name` claim when it sent one.
    pub name: String,
    pub created_at_ms: i64,
}

/// A single sign-on under way (docs/identity.md, "Single sign-on"): what the portal sent a
/// browser to its provider with, kept until the provider sends the browser back with its
/// `state`. Never the `state` itself, nor the browser's cookie: only their SHA-256 digests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SsoSignIn {
    /// The SHA-256 digest of the sign-in's `state`, in lowercase hexadecimal.
    pub state_sha256: String,
    /// The SHA-256 digest of the browser's `portal_sso` cookie value, in lowercase hexadecimal.
    pub binding_sha256: String,
    /// The client that started it (its address, or its IPv6 /64), when known.
    pub client: Option<String>,
    /// The provider's id.
    pub provider: String,
    /// The PKCE code verifier, sent to the provider with the code.
    pub verifier: String,
    /// The nonce the ID token must carry.
    pub nonce: String,
    /// Where the browser goes once signed in: a path of the portal.
    pub return_to: String,
}

/// How long sign-ins under way last, and how many are kept ([`Storage::keep_sso_sign_in`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SsoSignInLimits {
    /// How long one lasts, in milliseconds.
    pub lifetime_ms: i64,
    /// The most under way at once.
    pub most: u64,
    /// The most under way at once from one client.
    pub from_one_client: u64,
}

/// The latest turns of a conversation, as [`Storage::load_recent`] loads them.
#[derive(Debug, Clone, PartialEq)]
pub struct RecentTurns {
    /// The turns, in order; turns between the newest compaction's and the latest ones are left
    /// out.
    pub transcript: Transcript,
    /// The turn holding the conversation's newest compaction, if it has one.
    pub newest_compaction: Option<u32>,
}

/// What an import writes as one person's, whole or not at all
/// ([`Storage::import_conversations`]): the projects it makes and its conversations.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ImportedWork {
    /// The projects to make, in the order a list shows them (newest first).
    pub projects: Vec<ImportedProject>,
    /// The most projects the person may have once these are made (`--max-projects`).
    pub most_projects: u64,
    pub conversations: Vec<ImportedConversation>,
}

impl ImportedWork {
    /// `conversations` alone, in no project and making none.
    pub fn conversations(conversations: Vec<ImportedConversation>) -> Self {
        ImportedWork {
            conversations,
            ..ImportedWork::default()
        }
    }
}

/// A project an import makes ([`ImportedWork`]): its name, instructions and default agent
/// checked as a project made over HTTP is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportedProject {
    pub id: String,
    pub name: String,
    pub instructions: String,
    pub agent_id: Option<String>,
}

/// A conversation made from an export, to be written whole ([`Storage::import_conversations`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedConversation {
    /// The agent it goes on with.
    pub agent_id: String,
    /// Its title; empty to name it after its first message, as a new conversation is.
    pub title: String,
    /// The project it goes in: one of the importer's, or one the import makes; `None` for none.
    pub project: Option<String>,
    /// Whether it is pinned.
    pub pinned: bool,
    /// Its turns, every one ended and valid (`portal_core::validate`).
    pub transcript: Transcript,
}

impl ImportedConversation {
    /// `transcript`, titled `title`, going on with `agent_id`, in no project and not pinned.
    pub fn new(agent_id: String, title: String, transcript: Transcript) -> Self {
        ImportedConversation {
            agent_id,
            title,
            project: None,
            pinned: false,
            transcript,
        }
    }
}

/// What a new turn opens with.
#[derive(Debug, Clone, PartialEq)]
pub struct NewTurn {
    pub kind: TurnKind,
    /// The effort level that won for this turn (rule E2).
    pub effort: Option<Effort>,
    /// Notes known when the turn opens, such as the skills its message selected (rule S4).
    pub trace: Vec<TraceEntry>,
    /// The user's message: at least one text block.
    pub message: Message,
    /// The usage quotas the turn may not start past (docs/usage.md).
    pub quotas: Vec<Quota>,
    /// What the turn holds back of those quotas while it runs.
    pub hold: Hold,
    /// The most turns its user may have running at once, this one included.
    pub at_once: Option<AtOnce>,
}

/// How many turns one user may have running at once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AtOnce {
    /// The user, as a quota's spender.
    pub user: Spender,
    pub most: u64,
}

impl NewTurn {
    /// A chat turn opened by `message`, with no effort recorded and no notes.
    pub fn chat(message: Message) -> Self {
        NewTurn {
            kind: TurnKind::Chat,
            effort: None,
            trace: Vec::new(),
            message,
            quotas: Vec::new(),
            hold: Hold::default(),
            at_once: None,
        }
    }
}

/// What a claim on a paused turn ([`Storage::claim_paused`]) makes of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PausedClaim {
    /// Sets it `running`, for the one run that resumes it.
    Resume,
    /// Records it `cut_off`, for a cancel.
    CutOff,
}

impl PausedClaim {
    /// The status the claimed turn is given.
    pub fn status(self) -> TurnStatus {
        match self {
            PausedClaim::Resume => TurnStatus::Running,
            PausedClaim::CutOff => TurnStatus::CutOff,
        }
    }
}

/// One turn of one conversation.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TurnRef {
    pub conversation: ConversationId,
    pub turn: u32,
}

/// One attachment of one organisation.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct AttachmentRef {
    pub org_id: String,
    pub attachment_id: String,
}

pub use portal_core::usage::{CallPurpose, Usage};

/// A stored usage row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsageRecord {
    pub turn: u32,
    pub usage: Usage,
    /// When it was recorded, in milliseconds since the Unix epoch (the database's clock).
    pub recorded_at_ms: i64,
}
