//! [`PostgresStorage`]: conversations in PostgreSQL, shared by any number of `portal serve`
//! replicas. Each write is its own transaction, as in SQLite; where SQLite's single writer
//! serialises everything, here every write that changes a conversation's turns first locks the
//! conversation's row, so writes to one conversation take turns and writes to others run at once.

mod connection;
mod conversations;
mod load;
mod replicas;
mod sessions;
mod target;

pub mod schema;

pub use replicas::{LOG_CHANNEL, LeaseHolder, LogOp};

use std::time::Duration;

use portal_core::attachment::Attachment;
use portal_core::{Block, BlockKind, Role, TraceEntry, Transcript, TurnKind, TurnStatus};
use postgres::Row;
use postgres::types::ToSql;

use connection::{Manager, Tx};
use target::Target;

use super::assemble::{
    self, Turns, check_user_message, folded, not_found, reading_failed, require_open,
    status_or_missing, stored_kind,
};
use super::codec::{
    attachment_kind, integer, kind_name, parse_name, parse_status, position, to_json,
};
use super::{
    AttachmentRef, CallPurpose, ConversationId, ConversationInfo, ConversationPage,
    ConversationQuery, ConversationSummary, NewTurn, Owner, PausedClaim, RecentTurns, Result,
    SignInPlaces, Storage, StorageError, StoredSession, ThrottleRule, TurnRef, Usage, UsageRecord,
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
        std::thread::scope(|scope| {
            scope
                .spawn(|| Self::connect_here(url))
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
    }

    fn connect_here(url: &str) -> Result<Self> {
        let target = Target::parse(url)?;
        let manager = Manager {
            config: target.config.clone().into(),
            tls: target.tls.clone(),
        };
        let mut first = first_connection(&manager, &target)?;
        schema::migrate(&mut first)?;
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
    fn create_conversation(&self, owner: &Owner, agent_id: &str) -> Result<ConversationId> {
        let id = new_id()?;
        self.write(|t| {
            t.execute(
                "INSERT INTO conversations (id, org_id, user_id, agent_id) VALUES ($1, $2, $3, $4)",
                &[&id, &owner.org_id, &owner.user_id, &agent_id],
            )?;
            Ok(ConversationId::new(id))
        })
    }

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

    fn rename_conversation(
        &self,
        owner: &Owner,
        conversation: &ConversationId,
        title: &str,
    ) -> Result<ConversationSummary> {
        self.write(|t| conversations::rename(t, owner, conversation, title))
    }

    fn delete_conversation(&self, owner: &Owner, conversation: &ConversationId) -> Result<()> {
        self.write(|t| conversations::delete(t, owner, conversation))
    }

    fn conversation(
        &self,
        org_id: &str,
        conversation: &ConversationId,
    ) -> Result<ConversationInfo> {
        self.read(|t| {
            let row = t
                .query_opt(
                    "SELECT id, org_id, user_id, agent_id, created_at FROM conversations
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
                created_at_ms: row.get(4),
            })
        })
    }

    fn load_transcript(&self, org_id: &str, conversation: &ConversationId) -> Result<Transcript> {
        self.read(|t| {
            require_conversation(t, org_id, conversation)?;
            load::transcript(t, conversation, Turns::ALL)
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
                transcript: load::transcript(t, conversation, turns)?,
                newest_compaction,
            })
        })
    }

    fn open_turn(&self, conversation: &ConversationId, turn: NewTurn) -> Result<u32> {
        check_user_message(&turn)?;
        self.write(|t| {
            let org_id = lock_conversation(t, conversation)?;
            let id = conversation.as_str();
            let latest = t.query_opt(
                "SELECT turn, status FROM turns WHERE conversation_id = $1
                 ORDER BY turn DESC LIMIT 1",
                &[&id],
            )?;
            let index = match latest {
                Some(row) => {
                    let latest = turn_number(row.get(0))?;
                    if parse_status(row.get(1))? == TurnStatus::Running {
                        return Err(StorageError::TurnStillRunning {
                            conversation: conversation.clone(),
                            turn: latest,
                        });
                    }
                    latest + 1
                }
                None => 1,
            };
            t.execute(
                "INSERT INTO turns (conversation_id, turn, kind, status, effort, lease_until)
                 VALUES ($1, $2, $3, 'running', $4, portal_now_ms() + $5)",
                &[
                    &id,
                    &i64::from(index),
                    &kind_name(turn.kind),
                    &turn.effort.map(|e| e.as_str()),
                    &replicas::UNCLAIMED_LEASE_MS,
                ],
            )?;
            for entry in &turn.trace {
                insert_trace(t, conversation, index, entry)?;
            }
            insert_message(t, conversation, index, 0, Role::User)?;
            for (b, block) in turn.message.blocks.iter().enumerate() {
                insert_block(t, conversation, index, 0, b, block)?;
            }
            for (a, attachment) in turn.message.attachments.iter().enumerate() {
                let stored = t
                    .query_opt(
                        "SELECT 1 FROM attachments WHERE org_id = $1 AND id = $2",
                        &[&org_id, &attachment.id()],
                    )?
                    .is_some();
                if !stored {
                    return Err(StorageError::AttachmentNotFound {
                        attachment: attachment.id().to_string(),
                    });
                }
                t.execute(
                    "INSERT INTO message_attachments
                     (conversation_id, turn, message, position, org_id, attachment_id)
                     VALUES ($1, $2, 0, $3, $4, $5)",
                    &[
                        &id,
                        &i64::from(index),
                        &position("attachment position", a)?,
                        &org_id,
                        &attachment.id(),
                    ],
                )?;
            }
            conversations::touch(t, conversation)?;
            if turn.kind == TurnKind::Chat {
                conversations::title_after(t, conversation, &turn.message)?;
            }
            Ok(index)
        })
    }

    fn append_message(
        &self,
        conversation: &ConversationId,
        turn: u32,
        role: Role,
    ) -> Result<usize> {
        self.write(|t| {
            lock_conversation(t, conversation)?;
            require_running(t, conversation, turn)?;
            let id = conversation.as_str();
            let at = i64::from(turn);
            let last: i64 = t
                .query_one(
                    "SELECT MAX(message) FROM messages WHERE conversation_id = $1 AND turn = $2",
                    &[&id, &at],
                )?
                .get(0);
            let last_has_blocks = t
                .query_opt(
                    "SELECT 1 FROM blocks
                     WHERE conversation_id = $1 AND turn = $2 AND message = $3 LIMIT 1",
                    &[&id, &at, &last],
                )?
                .is_some();
            let last = place(last)?;
            if last_has_blocks {
                insert_message(t, conversation, turn, last + 1, role)?;
                return Ok(last + 1);
            }
            t.execute(
                "UPDATE messages SET role = $4
                 WHERE conversation_id = $1 AND turn = $2 AND message = $3",
                &[&id, &at, &position("message", last)?, &role.as_str()],
            )?;
            Ok(last)
        })
    }

    fn append_block(
        &self,
        conversation: &ConversationId,
        turn: u32,
        message: usize,
        block: &Block,
    ) -> Result<usize> {
        self.write(|t| {
            lock_conversation(t, conversation)?;
            require_running(t, conversation, turn)?;
            let id = conversation.as_str();
            let at = i64::from(turn);
            let message_at = position("message", message)?;
            let exists = t
                .query_opt(
                    "SELECT 1 FROM messages
                     WHERE conversation_id = $1 AND turn = $2 AND message = $3",
                    &[&id, &at, &message_at],
                )?
                .is_some();
            if !exists {
                return Err(StorageError::MessageNotFound {
                    conversation: conversation.clone(),
                    turn,
                    message,
                });
            }
            let next: i64 = t
                .query_one(
                    "SELECT COALESCE(MAX(block) + 1, 0) FROM blocks
                     WHERE conversation_id = $1 AND turn = $2 AND message = $3",
                    &[&id, &at, &message_at],
                )?
                .get(0);
            let next = place(next)?;
            insert_block(t, conversation, turn, message, next, block)?;
            Ok(next)
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
        let kind = self.read(|t| {
            require_running(t, conversation, turn)?;
            Ok(t.query_opt(
                "SELECT kind FROM blocks
                 WHERE conversation_id = $1 AND turn = $2 AND message = $3 AND block = $4",
                &[&id, &at, &message_at, &block_at],
            )?)
        })?;
        match kind {
            Some(row) => Err(StorageError::NotStreamable {
                kind: parse_name::<BlockKind>("block kind", row.get(0))?,
            }),
            None => Err(StorageError::BlockNotFound {
                conversation: conversation.clone(),
                turn,
                message,
                block,
            }),
        }
    }

    fn withdraw_blocks(
        &self,
        conversation: &ConversationId,
        turn: u32,
        message: usize,
        from: usize,
    ) -> Result<()> {
        let message_at = position("message", message)?;
        let from_at = position("block", from)?;
        self.write(|t| {
            lock_conversation(t, conversation)?;
            require_running(t, conversation, turn)?;
            for table in ["block_chunks", "blocks"] {
                t.execute(
                    &format!(
                        "DELETE FROM {table}
                         WHERE conversation_id = $1 AND turn = $2 AND message = $3
                           AND block >= $4"
                    ),
                    &[
                        &conversation.as_str(),
                        &i64::from(turn),
                        &message_at,
                        &from_at,
                    ],
                )?;
            }
            Ok(())
        })
    }

    fn set_turn_status(
        &self,
        conversation: &ConversationId,
        turn: u32,
        status: TurnStatus,
    ) -> Result<()> {
        self.write(|t| {
            lock_conversation(t, conversation)?;
            let current = turn_status(t, conversation, turn)?;
            if current == status {
                return Ok(());
            }
            require_open(conversation, turn, current)?;
            t.execute(
                "UPDATE turns SET status = $3, changed_at = portal_now_ms()
                 WHERE conversation_id = $1 AND turn = $2",
                &[&conversation.as_str(), &i64::from(turn), &status.as_str()],
            )?;
            if status != TurnStatus::Running {
                fold_chunks(t, conversation, turn)?;
            }
            conversations::touch(t, conversation)
        })
    }

    fn claim_paused(
        &self,
        conversation: &ConversationId,
        turn: u32,
        messages: usize,
        claim: PausedClaim,
    ) -> Result<()> {
        let messages = position("message count", messages)?;
        self.write(|t| {
            lock_conversation(t, conversation)?;
            // The turn's messages are counted as a transcript loads them: up to its last one with
            // a block (a paused turn has no empty message).
            let paused = "conversation_id = $1 AND turn = $2 AND status = 'paused'
                AND (SELECT COALESCE(MAX(message) + 1, 0) FROM blocks
                     WHERE conversation_id = $1 AND turn = $2) = $3";
            let (id, turn_at) = (conversation.as_str(), i64::from(turn));
            let claimed = match claim {
                // The resumed turn waits for its run's lease.
                PausedClaim::Resume => t.execute(
                    &format!(
                        "UPDATE turns SET status = 'running', changed_at = portal_now_ms(),
                           lease_replica = NULL, lease_until = portal_now_ms() + $4
                         WHERE {paused}"
                    ),
                    &[&id, &turn_at, &messages, &replicas::UNCLAIMED_LEASE_MS],
                )?,
                PausedClaim::CutOff => t.execute(
                    &format!(
                        "UPDATE turns SET status = 'cut_off', changed_at = portal_now_ms()
                         WHERE {paused}"
                    ),
                    &[&id, &turn_at, &messages],
                )?,
            };
            if claimed == 1 {
                if claim == PausedClaim::CutOff {
                    fold_chunks(t, conversation, turn)?;
                }
                return conversations::touch(t, conversation);
            }
            let status = turn_status(t, conversation, turn)?;
            require_open(conversation, turn, status)?;
            Err(StorageError::AlreadyResumed {
                conversation: conversation.clone(),
                turn,
            })
        })
    }

    fn set_context_tokens(
        &self,
        conversation: &ConversationId,
        turn: u32,
        tokens: u64,
    ) -> Result<()> {
        self.write(|t| {
            require_open(conversation, turn, turn_status(t, conversation, turn)?)?;
            update_context_tokens(t, conversation, turn, tokens)
        })
    }

    fn add_trace(
        &self,
        conversation: &ConversationId,
        turn: u32,
        entry: &TraceEntry,
    ) -> Result<()> {
        self.write(|t| {
            lock_conversation(t, conversation)?;
            require_open(conversation, turn, turn_status(t, conversation, turn)?)?;
            insert_trace(t, conversation, turn, entry)
        })
    }

    fn record_usage(&self, conversation: &ConversationId, turn: u32, usage: &Usage) -> Result<()> {
        self.write(|t| {
            let status = turn_status(t, conversation, turn)?;
            t.execute(
                "INSERT INTO usage
                 (conversation_id, turn, purpose, model, input_tokens, output_tokens)
                 VALUES ($1, $2, $3, $4, $5, $6)",
                &[
                    &conversation.as_str(),
                    &i64::from(turn),
                    &usage.purpose.as_str(),
                    &usage.model,
                    &integer("input tokens", usage.input_tokens)?,
                    &integer("output tokens", usage.output_tokens)?,
                ],
            )?;
            if usage.purpose == CallPurpose::Turn && status.is_open() {
                update_context_tokens(t, conversation, turn, usage.input_tokens)?;
            }
            Ok(())
        })
    }

    fn usage(&self, org_id: &str, conversation: &ConversationId) -> Result<Vec<UsageRecord>> {
        self.read(|t| {
            require_conversation(t, org_id, conversation)?;
            let rows = t.query(
                "SELECT turn, purpose, model, input_tokens, output_tokens, recorded_at FROM usage
                 WHERE conversation_id = $1 ORDER BY id",
                &[&conversation.as_str()],
            )?;
            rows.iter()
                .map(|row| {
                    Ok(UsageRecord {
                        turn: turn_number(row.get(0))?,
                        usage: Usage {
                            purpose: parse_name("usage purpose", row.get(1))?,
                            model: row.get(2),
                            input_tokens: count(row.get(3))?,
                            output_tokens: count(row.get(4))?,
                        },
                        recorded_at_ms: row.get(5),
                    })
                })
                .collect()
        })
    }

    fn put_attachment(
        &self,
        owner: &Owner,
        attachment: &Attachment,
        bytes: &[u8],
        quota: u64,
    ) -> Result<()> {
        let metadata = to_json("attachment", attachment)?;
        let size = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
        self.write(|t| {
            // Uploads of one user take turns, so two at once cannot pass the quota together.
            t.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
                &[&format!("quota {} {}", owner.org_id, owner.user_id)],
            )?;
            let taken = t
                .query_opt(
                    "SELECT 1 FROM attachments WHERE org_id = $1 AND id = $2",
                    &[&owner.org_id, &attachment.id()],
                )?
                .is_some();
            if taken {
                return Err(StorageError::AttachmentExists {
                    attachment: attachment.id().to_string(),
                });
            }
            let used: i64 = t
                .query_one(
                    "SELECT COALESCE(SUM(size), 0)::BIGINT FROM attachments
                     WHERE org_id = $1 AND user_id = $2",
                    &[&owner.org_id, &owner.user_id],
                )?
                .get(0);
            let used = count(used)?;
            if used.saturating_add(size) > quota {
                return Err(StorageError::QuotaExceeded { used, size, quota });
            }
            t.execute(
                "INSERT INTO attachments (org_id, id, user_id, kind, metadata, size)
                 VALUES ($1, $2, $3, $4, $5, $6)",
                &[
                    &owner.org_id,
                    &attachment.id(),
                    &owner.user_id,
                    &attachment_kind(attachment),
                    &metadata,
                    &integer("attachment size", size)?,
                ],
            )?;
            t.execute(
                "INSERT INTO attachment_bytes (org_id, id, bytes) VALUES ($1, $2, $3)",
                &[&owner.org_id, &attachment.id(), &bytes],
            )?;
            Ok(())
        })
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
        let metadata: String = self.read(|t| {
            Ok(t.query_opt(
                "SELECT metadata FROM attachments WHERE org_id = $1 AND user_id = $2 AND id = $3",
                &[&owner.org_id, &owner.user_id, &attachment_id],
            )?
            .ok_or_else(|| StorageError::AttachmentNotFound {
                attachment: attachment_id.to_string(),
            })?
            .get(0))
        })?;
        super::codec::parse_json("attachment", &metadata)
    }

    fn attachment_bytes(&self, org_id: &str, attachment_id: &str) -> Result<Vec<u8>> {
        self.read(|t| {
            Ok(t.query_opt(
                "SELECT bytes FROM attachment_bytes WHERE org_id = $1 AND id = $2",
                &[&org_id, &attachment_id],
            )?
            .ok_or_else(|| StorageError::AttachmentNotFound {
                attachment: attachment_id.to_string(),
            })?
            .get(0))
        })
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
                fold_chunks(t, &turn.conversation, turn.turn)?;
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

    fn take_sign_in_places(
        &self,
        keys: &[String],
        window_ms: i64,
        rule: ThrottleRule,
    ) -> Result<SignInPlaces> {
        self.write(|t| sessions::take_places(t, keys, window_ms, rule))
    }

    fn forget_sign_in_failures(&self, keys: &[String], places: &[i64]) -> Result<()> {
        self.write(|t| sessions::forget(t, keys, places))
    }

    /// **Decision:** 6 reads and 6 writes: together with a replica's own calls (publishing,
    /// leases, following) they stay within the pool's connections, and writes to different
    /// conversations run at once.
    fn calls_at_once(&self) -> usize {
        6
    }
}

/// A new conversation id: 128 random bits in hexadecimal, unguessable.
fn new_id() -> Result<String> {
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

/// Locks the conversation's row until the transaction ends, so writes to one conversation take
/// turns, and returns its organisation.
fn lock_conversation(t: &mut Tx<'_>, conversation: &ConversationId) -> Result<String> {
    Ok(t.query_opt(
        "SELECT org_id FROM conversations WHERE id = $1 FOR UPDATE",
        &[&conversation.as_str()],
    )?
    .ok_or_else(|| not_found(conversation))?
    .get(0))
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

/// The turn's status, or which of the conversation and the turn is missing.
fn turn_status(c: &mut Tx<'_>, conversation: &ConversationId, turn: u32) -> Result<TurnStatus> {
    let status: Option<String> = c
        .query_opt(
            "SELECT status FROM turns WHERE conversation_id = $1 AND turn = $2",
            &[&conversation.as_str(), &i64::from(turn)],
        )?
        .map(|row| row.get(0));
    let conversation_exists = || {
        Ok(c.query_opt(
            "SELECT 1 FROM conversations WHERE id = $1",
            &[&conversation.as_str()],
        )?
        .is_some())
    };
    status_or_missing(status, conversation_exists, conversation, turn)
}

/// Fails unless the turn is running: only a running turn takes messages, blocks and text.
fn require_running(c: &mut Tx<'_>, conversation: &ConversationId, turn: u32) -> Result<()> {
    assemble::require_running(conversation, turn, turn_status(c, conversation, turn)?)
}

fn insert_message(
    t: &mut Tx<'_>,
    conversation: &ConversationId,
    turn: u32,
    message: usize,
    role: Role,
) -> Result<()> {
    t.execute(
        "INSERT INTO messages (conversation_id, turn, message, role) VALUES ($1, $2, $3, $4)",
        &[
            &conversation.as_str(),
            &i64::from(turn),
            &position("message", message)?,
            &role.as_str(),
        ],
    )?;
    Ok(())
}

fn insert_block(
    t: &mut Tx<'_>,
    conversation: &ConversationId,
    turn: u32,
    message: usize,
    block: usize,
    content: &Block,
) -> Result<()> {
    t.execute(
        "INSERT INTO blocks (conversation_id, turn, message, block, kind, body)
         VALUES ($1, $2, $3, $4, $5, $6)",
        &[
            &conversation.as_str(),
            &i64::from(turn),
            &position("message", message)?,
            &position("block", block)?,
            &content.kind().as_str(),
            &to_json("block", content)?,
        ],
    )?;
    Ok(())
}

fn insert_trace(
    t: &mut Tx<'_>,
    conversation: &ConversationId,
    turn: u32,
    entry: &TraceEntry,
) -> Result<()> {
    t.execute(
        "INSERT INTO trace_entries (conversation_id, turn, position, entry)
         SELECT $1, $2, COALESCE(MAX(position) + 1, 0), $3 FROM trace_entries
         WHERE conversation_id = $1 AND turn = $2",
        &[
            &conversation.as_str(),
            &i64::from(turn),
            &to_json("trace entry", entry)?,
        ],
    )?;
    Ok(())
}

fn update_context_tokens(
    t: &mut Tx<'_>,
    conversation: &ConversationId,
    turn: u32,
    tokens: u64,
) -> Result<()> {
    t.execute(
        "UPDATE turns SET context_tokens = $3 WHERE conversation_id = $1 AND turn = $2",
        &[
            &conversation.as_str(),
            &i64::from(turn),
            &integer("context tokens", tokens)?,
        ],
    )?;
    Ok(())
}

/// Moves the turn's streamed text into its blocks, once the turn stops streaming, so that a
/// finished turn is stored as whole blocks.
fn fold_chunks(t: &mut Tx<'_>, conversation: &ConversationId, turn: u32) -> Result<()> {
    let id = conversation.as_str();
    let at = i64::from(turn);
    for ((message, block), text) in load::chunks(t, conversation, turn)? {
        let key: [&(dyn ToSql + Sync); 4] = [
            &id,
            &at,
            &position("message", message)?,
            &position("block", block)?,
        ];
        let body: String = t
            .query_one(
                "SELECT body FROM blocks
                 WHERE conversation_id = $1 AND turn = $2 AND message = $3 AND block = $4",
                &key,
            )?
            .get(0);
        let body = folded(&body, &text)?;
        let mut params = key.to_vec();
        params.push(&body);
        t.execute(
            "UPDATE blocks SET body = $5
             WHERE conversation_id = $1 AND turn = $2 AND message = $3 AND block = $4",
            &params,
        )?;
    }
    t.execute(
        "DELETE FROM block_chunks WHERE conversation_id = $1 AND turn = $2",
        &[&id, &at],
    )?;
    Ok(())
}

/// Reads column `index` of a row as a message or block position.
fn place_at(row: &Row, index: usize) -> Result<usize> {
    place(row.get(index))
}
