//! Portal's embedded database: [`SqliteStorage`], one SQLite file in WAL mode, each write its own
//! small transaction, in a data folder (`--data DIR`) that [`DataLock`] keeps to one server.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use portal_core::Transcript;
use portal_core::attachment::Attachment;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use portal_store::assemble::{self, Turns, not_found, reading_failed, stored_kind};
use portal_store::codec::{
    UsageColumns, attachment_kind, parse_json, position, stopped_note, to_json,
};
use portal_store::rules::{self, Statements as _};
use portal_store::{
    AttachmentRef, Collection, ConversationId, ConversationInfo, ConversationPage,
    ConversationQuery, ConversationSummary, KnowledgeDocument, Owner, Passage, Project,
    RecentTurns, Result, ShareLink, SsoAccount, Storage, StorageError, StoredApiKey, StoredSession,
    TurnRef, UsageLine, UsageQuery, UsageRecord,
};

mod api_keys;
mod calls;
mod conversations;
mod knowledge;
mod load;
mod lock;
mod projects;
mod schema;
mod search;
mod sessions;
mod share_links;
mod statements;
mod usage;

use statements::Statements;

pub use lock::{DataLock, LOCK_FILE};
pub use schema::SCHEMA_VERSION;

/// The database's file name inside the data folder.
pub const DATABASE_FILE: &str = "portal.sqlite3";

/// How long a connection waits for another process's lock before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Conversations in one SQLite database.
///
/// Writes go through one connection, one transaction each; reads of a file database go through a
/// second connection, so that loading a long transcript does not hold up a streaming turn (WAL
/// lets a reader and the writer work at once).
#[derive(Debug)]
pub struct SqliteStorage {
    writer: Mutex<Connection>,
    reader: Option<Mutex<Connection>>,
    path: Option<PathBuf>,
}

impl SqliteStorage {
    /// Opens (creating when needed) the database `portal.sqlite3` in the data folder `dir`,
    /// creating the folder too, and brings its schema up to date.
    pub fn open(dir: &Path) -> Result<Self> {
        std::fs::create_dir_all(dir).map_err(|source| StorageError::DataDir {
            path: dir.to_path_buf(),
            source,
        })?;
        Self::open_file(dir, true)
    }

    /// Opens the database in `dir` for reading as it is (`portal usage`): refused, unchanged,
    /// when its schema is not this build's, since migrating it under running servers of
    /// another version would move their database on.
    pub fn open_without_migrating(dir: &Path) -> Result<Self> {
        Self::open_file(dir, false)
    }

    fn open_file(dir: &Path, migrating: bool) -> Result<Self> {
        let path = dir.join(DATABASE_FILE);
        let opened = |path: &Path| {
            let connection = Connection::open(path)?;
            configure(&connection)?;
            connection.pragma_update_and_check(None, "journal_mode", "WAL", |row| {
                row.get::<_, String>(0)
            })?;
            Ok(connection)
        };
        let open_error = |source| StorageError::Open {
            path: path.clone(),
            source,
        };
        let mut writer = opened(&path).map_err(open_error)?;
        if migrating {
            schema::migrate(&mut writer)?;
        } else {
            schema::check_current(&writer)?;
        }
        let reader = opened(&path).map_err(open_error)?;
        Ok(SqliteStorage {
            writer: Mutex::new(writer),
            reader: Some(Mutex::new(reader)),
            path: Some(path),
        })
    }

    /// A database that lives in memory and is gone when dropped, for tests.
    pub fn in_memory() -> Result<Self> {
        let mut connection = Connection::open_in_memory()?;
        configure(&connection)?;
        schema::migrate(&mut connection)?;
        Ok(SqliteStorage {
            writer: Mutex::new(connection),
            reader: None,
            path: None,
        })
    }

    /// The database file, or none for an in-memory database.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Runs `work` in one write transaction, committed when it succeeds.
    fn write<T>(&self, work: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        let mut connection = lock(&self.writer);
        let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let value = work(&transaction)?;
        transaction.commit()?;
        Ok(value)
    }

    /// Runs `work` in one read transaction, so that it sees one consistent state.
    fn read<T>(&self, work: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        let mut connection = lock(self.reader.as_ref().unwrap_or(&self.writer));
        let transaction = connection.transaction_with_behavior(TransactionBehavior::Deferred)?;
        let value = work(&transaction)?;
        transaction.commit()?;
        Ok(value)
    }
}

impl Storage for SqliteStorage {
    fn list_conversations(
        &self,
        owner: &Owner,
        query: &ConversationQuery,
    ) -> Result<ConversationPage> {
        self.read(|c| conversations::page(c, owner, query))
    }

    fn conversation_summary(
        &self,
        owner: &Owner,
        conversation: &ConversationId,
    ) -> Result<ConversationSummary> {
        self.read(|c| conversations::one(c, owner, conversation))
    }

    fn conversation(
        &self,
        org_id: &str,
        conversation: &ConversationId,
    ) -> Result<ConversationInfo> {
        self.read(|c| {
            c.prepare_cached(
                "SELECT id, org_id, user_id, agent_id, created_at, project_id FROM conversations
                 WHERE id = ?1 AND org_id = ?2",
            )?
            .query_row(params![conversation.as_str(), org_id], info_from_row)
            .optional()?
            .ok_or_else(|| not_found(conversation))
        })
    }

    fn load_transcript(&self, org_id: &str, conversation: &ConversationId) -> Result<Transcript> {
        self.read(|c| {
            require_conversation(c, org_id, conversation)?;
            load::transcript(c, org_id, conversation, Turns::ALL)
        })
    }

    fn load_recent(
        &self,
        org_id: &str,
        conversation: &ConversationId,
        past_turns: usize,
    ) -> Result<RecentTurns> {
        self.read(|c| {
            require_conversation(c, org_id, conversation)?;
            let latest: Option<u32> = c
                .prepare_cached("SELECT MAX(turn) FROM turns WHERE conversation_id = ?1")?
                .query_row([conversation.as_str()], |row| row.get(0))?;
            let newest_compaction: Option<u32> = c
                .prepare_cached(
                    "SELECT MAX(turn) FROM blocks
                     WHERE conversation_id = ?1 AND kind = 'compaction'",
                )?
                .query_row([conversation.as_str()], |row| row.get(0))?;
            let turns = Turns::recent(latest, newest_compaction, past_turns);
            Ok(RecentTurns {
                transcript: load::transcript(c, org_id, conversation, turns)?,
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
        let message_at = position("message", message)?;
        let block_at = position("block", block)?;
        let connection = lock(&self.writer);
        // One statement, so one implicit transaction: it writes the delta only when the block
        // exists, takes streamed text (see `codec::append_text`) and its turn is running.
        let written = connection
            .prepare_cached(
                "INSERT INTO block_chunks (conversation_id, turn, message, block, text)
                 SELECT b.conversation_id, b.turn, b.message, b.block, ?5
                 FROM blocks b JOIN turns t
                   ON t.conversation_id = b.conversation_id AND t.turn = b.turn
                 WHERE b.conversation_id = ?1 AND b.turn = ?2 AND b.message = ?3 AND b.block = ?4
                   AND t.status = 'running'
                   AND b.kind IN ('thinking', 'text', 'tool_result')",
            )?
            .execute(params![
                conversation.as_str(),
                turn,
                message_at,
                block_at,
                delta
            ])?;
        if written == 1 {
            return Ok(());
        }
        Err(rules::text_refused(
            &mut Statements(&connection),
            conversation,
            turn,
            message,
            block,
        )?)
    }

    fn record_call(
        &self,
        conversation: &ConversationId,
        turn: u32,
        call: &portal_store::NewCall,
    ) -> Result<u32> {
        self.write(|c| calls::record(c, conversation, turn, call))
    }

    fn calls(
        &self,
        org_id: &str,
        conversation: &ConversationId,
        turn: u32,
    ) -> Result<Vec<portal_store::RecordedCall>> {
        self.read(|c| {
            require_conversation(c, org_id, conversation)?;
            calls::list(c, conversation, turn)
        })
    }

    fn usage(&self, org_id: &str, conversation: &ConversationId) -> Result<Vec<UsageRecord>> {
        self.read(|c| {
            require_conversation(c, org_id, conversation)?;
            let mut statement = c.prepare_cached(
                "SELECT turn, purpose, model, input_tokens, cached_input_tokens, output_tokens,
                        reasoning_tokens, estimated, currency, input_price, cached_input_price,
                        output_price, recorded_at
                 FROM usage WHERE conversation_id = ?1 ORDER BY id",
            )?;
            let rows = statement.query_map([conversation.as_str()], |row| {
                let columns = UsageColumns {
                    purpose: row.get(1)?,
                    tokens: [row.get(3)?, row.get(4)?, row.get(5)?, row.get(6)?],
                    estimated: row.get(7)?,
                    currency: row.get(8)?,
                    prices: [row.get(9)?, row.get(10)?, row.get(11)?],
                    cost_nanos: None,
                };
                Ok((row.get::<_, u32>(0)?, columns, row.get(2)?, row.get(12)?))
            })?;
            let mut records = Vec::new();
            for row in rows {
                let (turn, columns, model, recorded_at_ms) = row?;
                records.push(UsageRecord {
                    turn,
                    usage: columns.usage(model)?,
                    recorded_at_ms,
                });
            }
            Ok(records)
        })
    }

    fn usage_report(&self, query: &UsageQuery) -> Result<Vec<UsageLine>> {
        self.read(|c| usage::report(c, query))
    }

    fn update_attachment(&self, org_id: &str, attachment: &Attachment) -> Result<()> {
        let metadata = to_json("attachment", attachment)?;
        self.write(|c| {
            let stored: String = c
                .prepare_cached("SELECT kind FROM attachments WHERE org_id = ?1 AND id = ?2")?
                .query_row(params![org_id, attachment.id()], |row| row.get(0))
                .optional()?
                .ok_or_else(|| StorageError::AttachmentNotFound {
                    attachment: attachment.id().to_string(),
                })?;
            if stored != attachment_kind(attachment) {
                return Err(StorageError::AttachmentKindChanged {
                    attachment: attachment.id().to_string(),
                    stored: stored_kind(&stored)?,
                });
            }
            c.prepare_cached("UPDATE attachments SET metadata = ?3 WHERE org_id = ?1 AND id = ?2")?
                .execute(params![org_id, attachment.id(), metadata])?;
            Ok(())
        })
    }

    fn attachment(&self, owner: &Owner, attachment_id: &str) -> Result<Attachment> {
        self.read(|c| {
            let metadata: String = c
                .prepare_cached(
                    "SELECT metadata FROM attachments
                     WHERE org_id = ?1 AND user_id = ?2 AND id = ?3",
                )?
                .query_row(params![owner.org_id, owner.user_id, attachment_id], |row| {
                    row.get(0)
                })
                .optional()?
                .ok_or_else(|| StorageError::AttachmentNotFound {
                    attachment: attachment_id.to_string(),
                })?;
            let mut attachment = parse_json("attachment", &metadata)?;
            assemble::text_from_bytes(&mut attachment, |id| {
                load::attachment_bytes(c, &owner.org_id, id)
            })?;
            Ok(attachment)
        })
    }

    fn attachment_bytes(&self, org_id: &str, attachment_id: &str) -> Result<Vec<u8>> {
        self.read(|c| load::attachment_bytes(c, org_id, attachment_id))
    }

    fn recover(&self) -> Result<Vec<TurnRef>> {
        self.write(|c| {
            let mut statement = c.prepare_cached(
                "UPDATE turns SET status = 'cut_off' WHERE status = 'running'
                 RETURNING conversation_id, turn",
            )?;
            let mut cut_off = statement
                .query_map([], |row| {
                    Ok(TurnRef {
                        conversation: ConversationId::new(row.get::<_, String>(0)?),
                        turn: row.get(1)?,
                    })
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            cut_off.sort_by(|a, b| (&a.conversation, a.turn).cmp(&(&b.conversation, b.turn)));
            for turn in &cut_off {
                Statements(c).fold_chunks(&turn.conversation, turn.turn)?;
                Statements(c).insert_trace(&turn.conversation, turn.turn, &stopped_note())?;
            }
            Ok(cut_off)
        })
    }

    fn recover_documents(&self) -> Result<Vec<AttachmentRef>> {
        self.write(|c| {
            let mut statement = c.prepare_cached(
                "SELECT org_id, id, metadata FROM attachments
                 WHERE kind = 'document' AND json_extract(metadata, '$.status') = 'reading'
                 ORDER BY org_id, id",
            )?;
            let reading = statement
                .query_map([], |row| {
                    Ok((
                        row.get::<_, String>(0)?,
                        row.get::<_, String>(1)?,
                        row.get::<_, String>(2)?,
                    ))
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            let mut failed = Vec::new();
            for (org_id, attachment_id, metadata) in reading {
                let Some(failed_metadata) = reading_failed(&metadata)? else {
                    continue;
                };
                c.prepare_cached(
                    "UPDATE attachments SET metadata = ?3 WHERE org_id = ?1 AND id = ?2",
                )?
                .execute(params![org_id, attachment_id, failed_metadata])?;
                failed.push(AttachmentRef {
                    org_id,
                    attachment_id,
                });
            }
            Ok(failed)
        })
    }

    fn api_keys(&self, owner: &Owner) -> Result<Vec<StoredApiKey>> {
        self.read(|c| api_keys::list(c, owner))
    }

    fn api_key(&self, key_sha256: &str) -> Result<Option<StoredApiKey>> {
        self.read(|c| api_keys::find(c, key_sha256))
    }

    fn revoke_api_key(&self, owner: &Owner, id: &str) -> Result<bool> {
        self.write(|c| api_keys::revoke(c, owner, id))
    }

    fn projects(&self, owner: &Owner) -> Result<Vec<Project>> {
        self.read(|c| projects::list(c, owner))
    }

    fn collections(&self, org_id: &str, user_id: &str) -> Result<Vec<Collection>> {
        self.read(|c| knowledge::list(c, org_id, user_id))
    }

    fn collection(&self, org_id: &str, user_id: &str, id: &str) -> Result<Collection> {
        self.read(|c| knowledge::one(c, org_id, user_id, id))
    }

    fn knowledge_documents(
        &self,
        org_id: &str,
        collection_id: &str,
    ) -> Result<Vec<KnowledgeDocument>> {
        self.read(|c| {
            knowledge::in_org(c, org_id, collection_id)?.ok_or_else(|| {
                StorageError::CollectionNotFound {
                    collection: collection_id.to_string(),
                }
            })?;
            knowledge::documents(c, collection_id)
        })
    }

    fn search_knowledge(
        &self,
        org_id: &str,
        collection_ids: &[String],
        query: &str,
        limit: usize,
    ) -> Result<Vec<Passage>> {
        self.read(|c| knowledge::search(c, org_id, collection_ids, query, limit))
    }

    fn project(&self, owner: &Owner, id: &str) -> Result<Project> {
        self.read(|c| projects::one(c, owner, id))
    }

    fn share_links(&self, owner: &Owner) -> Result<Vec<ShareLink>> {
        self.read(|c| share_links::list(c, owner))
    }

    fn shared(&self, token: &str) -> Result<Option<(ShareLink, Transcript)>> {
        self.read(|c| share_links::find(c, token))
    }

    fn revoke_share_link(&self, owner: &Owner, id: &str) -> Result<bool> {
        self.write(|c| share_links::revoke(c, owner, id))
    }

    fn create_session(&self, session: &StoredSession) -> Result<()> {
        self.write(|c| sessions::create(c, session))
    }

    fn session(&self, id_sha256: &str) -> Result<Option<StoredSession>> {
        self.read(|c| sessions::find(c, id_sha256))
    }

    fn extend_session(&self, id_sha256: &str, expires_at_ms: i64) -> Result<()> {
        self.write(|c| sessions::extend(c, id_sha256, expires_at_ms))
    }

    fn revoke_session(&self, id_sha256: &str) -> Result<()> {
        self.write(|c| sessions::revoke(c, id_sha256))
    }

    fn schema_version(&self) -> Result<u32> {
        self.read(|c| Ok(c.pragma_query_value(None, "user_version", |row| row.get(0))?))
    }

    fn remove_expired_sessions(&self, now_ms: i64) -> Result<u64> {
        self.write(|c| sessions::remove_expired(c, now_ms))
    }

    fn sso_account(&self, issuer: &str, subject: &str) -> Result<Option<SsoAccount>> {
        self.read(|c| sessions::sso_account(c, issuer, subject))
    }

    fn sso_account_of(&self, owner: &Owner) -> Result<Option<SsoAccount>> {
        self.read(|c| sessions::sso_account_of(c, owner))
    }

    fn create_sso_account(&self, account: &SsoAccount) -> Result<()> {
        self.write(|c| sessions::create_sso_account(c, account))
    }

    /// **Decision:** 2 each: SQLite has one writer and one reader connection, so a second call
    /// only waits for the first to finish, ready to start the moment it does.
    fn calls_at_once(&self) -> usize {
        2
    }

    fn write_statements(
        &self,
        work: &mut dyn FnMut(&mut dyn rules::Statements) -> Result<()>,
    ) -> Result<()> {
        self.write(|c| work(&mut Statements(c)))
    }
}

/// Settings every connection needs: foreign keys checked, a wait for locks, and
/// `synchronous = NORMAL`, which in WAL mode never corrupts the database and loses at most the
/// last commits on a power cut (a crashed process loses nothing committed).
fn configure(connection: &Connection) -> rusqlite::Result<()> {
    connection.busy_timeout(BUSY_TIMEOUT)?;
    connection.pragma_update(None, "foreign_keys", true)?;
    connection.pragma_update(None, "synchronous", "NORMAL")?;
    search::register_functions(connection)
}

/// Locks a connection. A panic while it was held rolled its transaction back, so the connection
/// is still sound.
fn lock(connection: &Mutex<Connection>) -> MutexGuard<'_, Connection> {
    connection.lock().unwrap_or_else(|e| e.into_inner())
}

fn info_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<ConversationInfo> {
    Ok(ConversationInfo {
        id: ConversationId::new(row.get::<_, String>(0)?),
        owner: Owner {
            org_id: row.get(1)?,
            user_id: row.get(2)?,
        },
        agent_id: row.get(3)?,
        project: row.get(5)?,
        created_at_ms: row.get(4)?,
    })
}

/// Fails unless the conversation belongs to `org_id`.
fn require_conversation(c: &Connection, org_id: &str, conversation: &ConversationId) -> Result<()> {
    let found = c
        .prepare_cached("SELECT 1 FROM conversations WHERE id = ?1 AND org_id = ?2")?
        .exists(params![conversation.as_str(), org_id])?;
    if found {
        Ok(())
    } else {
        Err(not_found(conversation))
    }
}
