//! [`PostgresStorage`]: conversations in PostgreSQL, shared by any number of `portal serve`
//! replicas. Each write is its own transaction, as in SQLite; where SQLite's single writer
//! serialises everything, here every write that changes a conversation's turns first locks the
//! conversation's row, so writes to one conversation take turns and writes to others run at once.

mod api_keys;
mod calls;
mod connection;
mod conversations;
mod knowledge;
mod load;
mod projects;
mod replicas;
mod sessions;
mod share_links;
mod statements;
mod target;
mod usage;

mod schema;

pub use replicas::{LOG_CHANNEL, LeaseHolder, LogOp};
pub use schema::{MIGRATION_LOCK, SCHEMA_VERSION};

use std::time::Duration;

use portal_core::Transcript;
use portal_core::attachment::Attachment;
use postgres::Row;

use connection::{Manager, Tx};
use statements::Statements;
use target::Target;

use portal_store::assemble::{self, Turns, not_found, reading_failed, stored_kind};
use portal_store::codec::{
    UsageColumns, attachment_kind, integer, position, stopped_note, to_json,
};
use portal_store::rules::{self, Statements as _};
use portal_store::{
    AttachmentRef, Collection, ConversationId, ConversationInfo, ConversationPage,
    ConversationQuery, ConversationSummary, KnowledgeDocument, Owner, Passage, Project,
    RecentTurns, Result, ShareLink, SsoAccount, Storage, StorageError, StoredApiKey, StoredSession,
    TurnRef, UsageLine, UsageQuery, UsageRecord,
};

/// How many connections one server keeps to the database. **Decision:** 16: enough for the
/// storage lanes of `AsyncStorage` (6 + 6) and a replica's own calls, well under PostgreSQL's
/// default of 100 connections for a handful of replicas (each also keeps one to listen on).
const POOL_SIZE: u32 = 16;

/// How long a call waits for a free connection before it fails.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

type Pool = r2d2::Pool<Manager>;

/// Conversations in a PostgreSQL database.
///
/// It uses the blocking client, as the [`Storage`] trait is called off the async threads
/// (`AsyncStorage`). That client runs a small runtime of its own per connection, which must
/// not be started or dropped on an async thread: [`PostgresStorage::connect`] and the drop of
/// the connections therefore run on a thread of their own.
pub struct PostgresStorage {
    /// Always there; taken only when dropped.
    pool: Option<Pool>,
    /// The database it connects to, and how (TLS).
    target: Target,
}

/// Shown without the password.
impl std::fmt::Debug for PostgresStorage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStorage")
            .field("url", &self.target.shown)
            .finish_non_exhaustive()
    }
}

impl PostgresStorage {
    /// Connects to the database at `url` (`postgres://user:password@host:port/database`, with
    /// `sslmode` and `sslrootcert` for TLS), and brings its schema up to date. A first connection
    /// is made before the pool, so a refusal says why (a certificate, the password, TLS) at once.
    pub fn connect(url: &str) -> Result<Self> {
        Self::connect_off_runtime(url, true)
    }

    /// Connects to read the database as it is (`portal usage`): refused, unchanged, when its
    /// schema is not this build's, since migrating it under running replicas of another version
    /// would move their database on.
    pub fn connect_without_migrating(url: &str) -> Result<Self> {
        Self::connect_off_runtime(url, false)
    }

    fn connect_off_runtime(url: &str, migrating: bool) -> Result<Self> {
        std::thread::scope(|scope| {
            scope
                .spawn(|| Self::connect_here(url, migrating))
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
    }

    fn connect_here(url: &str, migrating: bool) -> Result<Self> {
        let target = Target::parse(url)?;
        let manager = Manager {
            config: target.config.clone().into(),
            tls: target.tls.clone(),
        };
        let mut first = first_connection(&manager, &target)?;
        if migrating {
            schema::migrate(&mut first)?;
        } else {
            schema::check_current(&mut first)?;
        }
        drop(first);
        let unreachable = |error: r2d2::Error| StorageError::PostgresUnreachable {
            url: target.shown.clone(),
            detail: error.to_string(),
        };
        let pool = r2d2::Pool::builder()
            .max_size(POOL_SIZE)
            .min_idle(Some(1))
            .connection_timeout(CONNECT_TIMEOUT)
            .error_handler(Box::new(r2d2::NopErrorHandler))
            .build(manager)
            .map_err(unreachable)?;
        Ok(PostgresStorage {
            pool: Some(pool),
            target,
        })
    }

    /// Runs `work` in one transaction, committed when it succeeds.
    fn write<T>(&self, work: impl FnOnce(&mut Tx<'_>) -> Result<T>) -> Result<T> {
        let mut connection = self.connection()?;
        let mut transaction = connection.transaction(false)?;
        let value = work(&mut transaction)?;
        transaction.commit()?;
        Ok(value)
    }

    /// Runs `work` in one read-only transaction that sees one snapshot of the database.
    fn read<T>(&self, work: impl FnOnce(&mut Tx<'_>) -> Result<T>) -> Result<T> {
        let mut connection = self.connection()?;
        let mut transaction = connection.transaction(true)?;
        let value = work(&mut transaction)?;
        transaction.commit()?;
        Ok(value)
    }

    fn connection(&self) -> Result<r2d2::PooledConnection<Manager>> {
        let pool = self.pool.as_ref().expect("the pool is there until dropped");
        pool.get()
            .map_err(|error| StorageError::PostgresUnavailable {
                detail: error.to_string(),
            })
    }
}

/// The first connection to the database. A server that cannot be reached yet, or is still
/// starting, is tried again until [`CONNECT_TIMEOUT`], as the pool would; what trying again
/// cannot change (a certificate, TLS, the password, a database that is not there) is said at
/// once.
fn first_connection(manager: &Manager, target: &Target) -> Result<connection::Connection> {
    let deadline = std::time::Instant::now() + CONNECT_TIMEOUT;
    loop {
        let error = match r2d2::ManageConnection::connect(manager) {
            Ok(connection) => return Ok(connection),
            Err(error) => error,
        };
        let starting = error
            .as_db_error()
            .is_none_or(|db| *db.code() == postgres::error::SqlState::CANNOT_CONNECT_NOW);
        let refused = target.refused(&error);
        let again = starting
            && matches!(refused, StorageError::PostgresUnreachable { .. })
            && std::time::Instant::now() < deadline;
        if !again {
            return Err(refused);
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

impl Drop for PostgresStorage {
    fn drop(&mut self) {
        if let Some(pool) = self.pool.take() {
            let _ = std::thread::spawn(move || drop(pool)).join();
        }
    }
}

impl Storage for PostgresStorage {
    fn list_conversations(
        &self,
        owner: &Owner,
        query: &ConversationQuery,
    ) -> Result<ConversationPage> {
        self.read(|t| conversations::page(t, owner, query))
    }

    fn conversation_summary(
        &self,
        owner: &Owner,
        conversation: &ConversationId,
    ) -> Result<ConversationSummary> {
        self.read(|t| conversations::one(t, owner, conversation))
    }

    fn conversation(
        &self,
        org_id: &str,
        conversation: &ConversationId,
    ) -> Result<ConversationInfo> {
        self.read(|t| {
            let row = t
                .query_opt(
                    "SELECT id, org_id, user_id, agent_id, created_at, project_id FROM conversations
                     WHERE id = $1 AND org_id = $2",
                    &[&conversation.as_str(), &org_id],
                )?
                .ok_or_else(|| not_found(conversation))?;
            Ok(ConversationInfo {
                id: ConversationId::new(row.get::<_, String>(0)),
                owner: Owner {
                    org_id: row.get(1),
                    user_id: row.get(2),
                },
                agent_id: row.get(3),
                project: row.get(5),
                created_at_ms: row.get(4),
            })
        })
    }

    fn load_transcript(&self, org_id: &str, conversation: &ConversationId) -> Result<Transcript> {
        self.read(|t| {
            require_conversation(t, org_id, conversation)?;
            load::transcript(t, org_id, conversation, Turns::ALL)
        })
    }

    fn load_recent(
        &self,
        org_id: &str,
        conversation: &ConversationId,
        past_turns: usize,
    ) -> Result<RecentTurns> {
        self.read(|t| {
            require_conversation(t, org_id, conversation)?;
            let id = conversation.as_str();
            let latest: Option<i64> = t
                .query_one(
                    "SELECT MAX(turn) FROM turns WHERE conversation_id = $1",
                    &[&id],
                )?
                .get(0);
            let newest_compaction: Option<i64> = t
                .query_one(
                    "SELECT MAX(turn) FROM blocks
                     WHERE conversation_id = $1 AND kind = 'compaction'",
                    &[&id],
                )?
                .get(0);
            let latest = latest.map(turn_number).transpose()?;
            let newest_compaction = newest_compaction.map(turn_number).transpose()?;
            let turns = Turns::recent(latest, newest_compaction, past_turns);
            Ok(RecentTurns {
                transcript: load::transcript(t, org_id, conversation, turns)?,
                newest_compaction,
            })
        })
    }

    fn append_block_text(
        &self,
        conversation: &ConversationId,
        turn: u32,
        message: usize,
        block: usize,
        delta: &str,
    ) -> Result<()> {
        let id = conversation.as_str();
        let at = i64::from(turn);
        let message_at = position("message", message)?;
        let block_at = position("block", block)?;
        let mut connection = self.connection()?;
        // One statement, so one implicit transaction: it writes the delta only when the block
        // exists, takes streamed text (see `codec::append_text`) and its turn is running. It
        // holds the turn's row for share, so a status change waits for it, and it rereads the
        // status when it had to wait for one: no text lands in a turn that ended.
        let written = connection.execute(
            "INSERT INTO block_chunks (conversation_id, turn, message, block, text)
             SELECT b.conversation_id, b.turn, b.message, b.block, $5
             FROM blocks b JOIN turns t
               ON t.conversation_id = b.conversation_id AND t.turn = b.turn
             WHERE b.conversation_id = $1 AND b.turn = $2 AND b.message = $3 AND b.block = $4
               AND t.status = 'running'
               AND b.kind IN ('thinking', 'text', 'tool_result')
             FOR SHARE OF t",
            &[&id, &at, &message_at, &block_at, &delta],
        )?;
        if written == 1 {
            return Ok(());
        }
        // It was not written: say why, from one snapshot.
        drop(connection);
        Err(self.read(|t| {
            rules::text_refused(&mut Statements(t), conversation, turn, message, block)
        })?)
    }

    fn record_call(
        &self,
        conversation: &ConversationId,
        turn: u32,
        call: &portal_store::NewCall,
    ) -> Result<u32> {
        self.write(|t| calls::record(t, conversation, turn, call))
    }

    fn calls(
        &self,
        org_id: &str,
        conversation: &ConversationId,
        turn: u32,
    ) -> Result<Vec<portal_store::RecordedCall>> {
        self.read(|t| {
            require_conversation(t, org_id, conversation)?;
            calls::list(t, conversation, turn)
        })
    }

    fn usage(&self, org_id: &str, conversation: &ConversationId) -> Result<Vec<UsageRecord>> {
        self.read(|t| {
            require_conversation(t, org_id, conversation)?;
            let rows = t.query(
                "SELECT turn, purpose, model, input_tokens, cached_input_tokens, output_tokens,
                        reasoning_tokens, estimated, currency, input_price, cached_input_price,
                        output_price, recorded_at
                 FROM usage WHERE conversation_id = $1 ORDER BY id",
                &[&conversation.as_str()],
            )?;
            rows.iter()
                .map(|row| {
                    let columns = UsageColumns {
                        purpose: row.get(1),
                        tokens: [row.get(3), row.get(4), row.get(5), row.get(6)],
                        estimated: row.get(7),
                        currency: row.get(8),
                        prices: [row.get(9), row.get(10), row.get(11)],
                        cost_nanos: None,
                    };
                    Ok(UsageRecord {
                        turn: turn_number(row.get(0))?,
                        usage: columns.usage(row.get(2))?,
                        recorded_at_ms: row.get(12),
                    })
                })
                .collect()
        })
    }

    fn usage_report(&self, query: &UsageQuery) -> Result<Vec<UsageLine>> {
        self.read(|t| usage::report(t, query))
    }

    fn update_attachment(&self, org_id: &str, attachment: &Attachment) -> Result<()> {
        let metadata = to_json("attachment", attachment)?;
        self.write(|t| {
            let stored: String = t
                .query_opt(
                    "SELECT kind FROM attachments WHERE org_id = $1 AND id = $2 FOR UPDATE",
                    &[&org_id, &attachment.id()],
                )?
                .ok_or_else(|| StorageError::AttachmentNotFound {
                    attachment: attachment.id().to_string(),
                })?
                .get(0);
            if stored != attachment_kind(attachment) {
                return Err(StorageError::AttachmentKindChanged {
                    attachment: attachment.id().to_string(),
                    stored: stored_kind(&stored)?,
                });
            }
            t.execute(
                "UPDATE attachments SET metadata = $3 WHERE org_id = $1 AND id = $2",
                &[&org_id, &attachment.id(), &metadata],
            )?;
            Ok(())
        })
    }

    fn attachment(&self, owner: &Owner, attachment_id: &str) -> Result<Attachment> {
        self.read(|t| {
            let metadata: String = t
                .query_opt(
                    "SELECT metadata FROM attachments
                     WHERE org_id = $1 AND user_id = $2 AND id = $3",
                    &[&owner.org_id, &owner.user_id, &attachment_id],
                )?
                .ok_or_else(|| StorageError::AttachmentNotFound {
                    attachment: attachment_id.to_string(),
                })?
                .get(0);
            let mut attachment = portal_store::codec::parse_json("attachment", &metadata)?;
            assemble::text_from_bytes(&mut attachment, |id| {
                load::attachment_bytes(t, &owner.org_id, id)
            })?;
            Ok(attachment)
        })
    }

    fn attachment_bytes(&self, org_id: &str, attachment_id: &str) -> Result<Vec<u8>> {
        self.read(|t| load::attachment_bytes(t, org_id, attachment_id))
    }

    fn recover(&self) -> Result<Vec<TurnRef>> {
        self.write(|t| {
            let rows = t.query(
                "UPDATE turns SET status = 'cut_off', changed_at = portal_now_ms()
                 WHERE status = 'running'
                 RETURNING conversation_id, turn",
                &[],
            )?;
            let mut cut_off = rows
                .iter()
                .map(|row| {
                    Ok(TurnRef {
                        conversation: ConversationId::new(row.get::<_, String>(0)),
                        turn: turn_number(row.get(1))?,
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            cut_off.sort_by(|a, b| (&a.conversation, a.turn).cmp(&(&b.conversation, b.turn)));
            for turn in &cut_off {
                Statements(t).fold_chunks(&turn.conversation, turn.turn)?;
                Statements(t).insert_trace(&turn.conversation, turn.turn, &stopped_note())?;
            }
            Ok(cut_off)
        })
    }

    fn recover_documents(&self) -> Result<Vec<AttachmentRef>> {
        self.write(|t| {
            let reading = t.query(
                "SELECT org_id, id, metadata FROM attachments
                 WHERE kind = 'document' AND (metadata::json ->> 'status') = 'reading'
                 ORDER BY org_id, id FOR UPDATE",
                &[],
            )?;
            let mut failed = Vec::new();
            for row in reading {
                let (org_id, attachment_id): (String, String) = (row.get(0), row.get(1));
                let Some(metadata) = reading_failed(row.get(2))? else {
                    continue;
                };
                t.execute(
                    "UPDATE attachments SET metadata = $3 WHERE org_id = $1 AND id = $2",
                    &[&org_id, &attachment_id, &metadata],
                )?;
                failed.push(AttachmentRef {
                    org_id,
                    attachment_id,
                });
            }
            Ok(failed)
        })
    }

    fn api_keys(&self, owner: &Owner) -> Result<Vec<StoredApiKey>> {
        self.read(|t| api_keys::list(t, owner))
    }

    fn api_key(&self, key_sha256: &str) -> Result<Option<StoredApiKey>> {
        self.read(|t| api_keys::find(t, key_sha256))
    }

    fn revoke_api_key(&self, owner: &Owner, id: &str) -> Result<bool> {
        self.write(|t| api_keys::revoke(t, owner, id))
    }

    fn projects(&self, owner: &Owner) -> Result<Vec<Project>> {
        self.read(|t| projects::list(t, owner))
    }

    fn project(&self, owner: &Owner, id: &str) -> Result<Project> {
        self.read(|t| projects::one(t, owner, id))
    }

    fn collections(&self, org_id: &str, user_id: &str) -> Result<Vec<Collection>> {
        self.read(|t| knowledge::list(t, org_id, user_id))
    }

    fn collection(&self, org_id: &str, user_id: &str, id: &str) -> Result<Collection> {
        self.read(|t| knowledge::one(t, org_id, user_id, id))
    }

    fn knowledge_documents(
        &self,
        org_id: &str,
        collection_id: &str,
    ) -> Result<Vec<KnowledgeDocument>> {
        self.read(|t| {
            knowledge::in_org(t, org_id, collection_id)?.ok_or_else(|| {
                StorageError::CollectionNotFound {
                    collection: collection_id.to_string(),
                }
            })?;
            knowledge::documents(t, collection_id)
        })
    }

    fn search_knowledge(
        &self,
        org_id: &str,
        collection_ids: &[String],
        query: &str,
        limit: usize,
    ) -> Result<Vec<Passage>> {
        self.read(|t| knowledge::search(t, org_id, collection_ids, query, limit))
    }

    fn share_links(&self, owner: &Owner) -> Result<Vec<ShareLink>> {
        self.read(|t| share_links::list(t, owner))
    }

    fn shared(&self, token: &str) -> Result<Option<(ShareLink, Transcript)>> {
        self.read(|t| share_links::find(t, token))
    }

    fn revoke_share_link(&self, owner: &Owner, id: &str) -> Result<bool> {
        self.write(|t| share_links::revoke(t, owner, id))
    }

    fn create_session(&self, session: &StoredSession) -> Result<()> {
        self.write(|t| sessions::create(t, session))
    }

    fn session(&self, id_sha256: &str) -> Result<Option<StoredSession>> {
        self.read(|t| sessions::find(t, id_sha256))
    }

    fn extend_session(&self, id_sha256: &str, expires_at_ms: i64) -> Result<()> {
        self.write(|t| sessions::extend(t, id_sha256, expires_at_ms))
    }

    fn revoke_session(&self, id_sha256: &str) -> Result<()> {
        self.write(|t| sessions::revoke(t, id_sha256))
    }

    fn schema_version(&self) -> Result<u32> {
        self.read(|t| {
            let version: i64 = t
                .query_one("SELECT version FROM portal_schema", &[])?
                .get(0);
            Ok(u32::try_from(version).unwrap_or(u32::MAX))
        })
    }

    fn remove_expired_sessions(&self, now_ms: i64) -> Result<u64> {
        self.write(|t| sessions::remove_expired(t, now_ms))
    }

    fn sso_account(&self, issuer: &str, subject: &str) -> Result<Option<SsoAccount>> {
        self.read(|t| sessions::sso_account(t, issuer, subject))
    }

    fn sso_account_of(&self, owner: &Owner) -> Result<Option<SsoAccount>> {
        self.read(|t| sessions::sso_account_of(t, owner))
    }

    fn create_sso_account(&self, account: &SsoAccount) -> Result<()> {
        self.write(|t| sessions::create_sso_account(t, account))
    }

    /// **Decision:** 6 reads and 6 writes: together with a replica's own calls (publishing,
    /// leases, following) they stay within the pool's connections, and writes to different
    /// conversations run at once.
    fn calls_at_once(&self) -> usize {
        6
    }

    fn write_statements(
        &self,
        work: &mut dyn FnMut(&mut dyn rules::Statements) -> Result<()>,
    ) -> Result<()> {
        self.write(|t| work(&mut Statements(t)))
    }
}

/// A new conversation id: 128 random bits in hexadecimal, unguessable.
pub(crate) fn new_id() -> Result<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|error| StorageError::Interrupted {
        detail: format!("no randomness for a conversation id: {error}"),
    })?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// A stored turn number.
fn turn_number(value: i64) -> Result<u32> {
    u32::try_from(value).map_err(|_| unreadable_number("turn number", value))
}

/// A stored message or block position.
fn place(value: i64) -> Result<usize> {
    usize::try_from(value).map_err(|_| unreadable_number("position", value))
}

/// A stored count of tokens or bytes.
fn count(value: i64) -> Result<u64> {
    u64::try_from(value).map_err(|_| unreadable_number("count", value))
}

fn unreadable_number(what: &'static str, value: i64) -> StorageError {
    StorageError::Unreadable {
        what,
        detail: format!("{value} is out of range"),
    }
}

/// Fails unless the conversation belongs to `org_id`.
fn require_conversation(t: &mut Tx<'_>, org_id: &str, conversation: &ConversationId) -> Result<()> {
    t.query_opt(
        "SELECT 1 FROM conversations WHERE id = $1 AND org_id = $2",
        &[&conversation.as_str(), &org_id],
    )?
    .map(|_| ())
    .ok_or_else(|| not_found(conversation))
}

/// Reads column `index` of a row as a message or block position.
fn place_at(row: &Row, index: usize) -> Result<usize> {
    place(row.get(index))
}
