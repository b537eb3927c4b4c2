//! SQLite's statements for storage's rules ([`rules::Statements`]), run on the writer's
//! transaction.

use portal_core::attachment::Attachment;
use portal_core::effort::Effort;
use portal_core::{Block, Role, TraceEntry, TurnKind, TurnStatus};
use std::io::Read;

use rusqlite::{Connection, MAIN_DB, OptionalExtension, params};

use super::load;
use portal_store::assemble::folded;
use portal_store::codec::{
    UsageColumns, attachment_kind, integer, kind_name, position, quota_measure, spender_ids,
    to_json,
};
use portal_store::quota::{Hold, Limit, Spender};
use portal_store::{
    Collection, CollectionOwner, ConversationId, KnowledgeDocument, NewPassage, Owner, PausedClaim,
    Project, Result, ShareLink, SsoSignIn, StoredApiKey, Usage, rules,
};

/// The rules' statements on one SQLite connection, inside its transaction.
pub(super) struct Statements<'c>(pub(super) &'c Connection);

impl rules::Statements for Statements<'_> {
    fn insert_conversation(&mut self, owner: &Owner, agent_id: &str) -> Result<ConversationId> {
        let id: String = self
            .0
            .prepare_cached(
                "INSERT INTO conversations (id, org_id, user_id, agent_id, last_activity)
                 VALUES (lower(hex(randomblob(16))), ?1, ?2, ?3,
                         CAST(unixepoch('subsec') * 1000 AS INTEGER))
                 RETURNING id",
            )?
            .query_row(params![owner.org_id, owner.user_id, agent_id], |row| {
                row.get(0)
            })?;
        Ok(ConversationId::new(id))
    }

    fn lock_conversation(&mut self, _conversation: &ConversationId) -> Result<()> {
        Ok(())
    }

    fn conversation_org(&mut self, conversation: &ConversationId) -> Result<Option<String>> {
        Ok(self
            .0
            .prepare_cached("SELECT org_id FROM conversations WHERE id = ?1")?
            .query_row([conversation.as_str()], |row| row.get(0))
            .optional()?)
    }

    fn latest_turn(&mut self, conversation: &ConversationId) -> Result<Option<(u32, String)>> {
        Ok(self
            .0
            .prepare_cached(
                "SELECT turn, status FROM turns WHERE conversation_id = ?1
                 ORDER BY turn DESC LIMIT 1",
            )?
            .query_row([conversation.as_str()], |row| {
                Ok((row.get(0)?, row.get(1)?))
            })
            .optional()?)
    }

    fn turn_status(&mut self, conversation: &ConversationId, turn: u32) -> Result<Option<String>> {
        Ok(self
            .0
            .prepare_cached("SELECT status FROM turns WHERE conversation_id = ?1 AND turn = ?2")?
            .query_row(params![conversation.as_str(), turn], |row| row.get(0))
            .optional()?)
    }

    fn insert_turn(
        &mut self,
        conversation: &ConversationId,
        turn: u32,
        kind: TurnKind,
        effort: Option<Effort>,
        hold: &Hold,
    ) -> Result<()> {
        self.0
            .prepare_cached(
                "INSERT INTO turns
                   (conversation_id, turn, kind, status, effort, hold_tokens, hold_nanos, hold_currency)
                 VALUES (?1, ?2, ?3, 'running', ?4, ?5, ?6, ?7)",
            )?
            .execute(params![
                conversation.as_str(),
                turn,
                kind_name(kind),
                effort.map(|e| e.as_str()),
                integer("a turn's hold", hold.tokens)?,
                integer("a turn's hold", hold.cost.as_ref().map_or(0, |c| c.nanos))?,
                hold.cost.as_ref().map(|c| c.currency.as_str()),
            ])?;
        Ok(())
    }

    fn set_status(
        &mut self,
        conversation: &ConversationId,
        turn: u32,
        status: TurnStatus,
    ) -> Result<()> {
        self.0
            .prepare_cached(
                "UPDATE turns SET status = ?3 WHERE conversation_id = ?1 AND turn = ?2",
            )?
            .execute(params![conversation.as_str(), turn, status.as_str()])?;
        Ok(())
    }

    fn claim_paused(
        &mut self,
        conversation: &ConversationId,
        turn: u32,
        messages: usize,
        claim: PausedClaim,
    ) -> Result<bool> {
        // The turn's messages are counted as a transcript loads them: up to its last one with a
        // block (a paused turn has no empty message).
        let claimed = self
            .0
            .prepare_cached(
                "UPDATE turns SET status = ?4
                 WHERE conversation_id = ?1 AND turn = ?2 AND status = 'paused'
                   AND (SELECT COALESCE(MAX(message) + 1, 0) FROM blocks
                        WHERE conversation_id = ?1 AND turn = ?2) = ?3",
            )?
            .execute(params![
                conversation.as_str(),
                turn,
                position("message count", messages)?,
                claim.status().as_str()
            ])?;
        Ok(claimed == 1)
    }

    fn fold_chunks(&mut self, conversation: &ConversationId, turn: u32) -> Result<()> {
        let c = self.0;
        for ((message, block), text) in load::chunks(c, conversation, turn)? {
            let key = params![
                conversation.as_str(),
                turn,
                position("message", message)?,
                position("block", block)?
            ];
            let body: String = c
                .prepare_cached(
                    "SELECT body FROM blocks
                     WHERE conversation_id = ?1 AND turn = ?2 AND message = ?3 AND block = ?4",
                )?
                .query_row(key, |row| row.get(0))?;
            c.prepare_cached(
                "UPDATE blocks SET body = ?5
                 WHERE conversation_id = ?1 AND turn = ?2 AND message = ?3 AND block = ?4",
            )?
            .execute(params![
                conversation.as_str(),
                turn,
                position("message", message)?,
                position("block", block)?,
                folded(&body, &text)?
            ])?;
        }
        c.prepare_cached("DELETE FROM block_chunks WHERE conversation_id = ?1 AND turn = ?2")?
            .execute(params![conversation.as_str(), turn])?;
        Ok(())
    }

    fn insert_trace(
        &mut self,
        conversation: &ConversationId,
        turn: u32,
        entry: &TraceEntry,
    ) -> Result<()> {
        self.0
            .prepare_cached(
                "INSERT INTO trace_entries (conversation_id, turn, position, entry)
                 SELECT ?1, ?2, COALESCE(MAX(position) + 1, 0), ?3 FROM trace_entries
                 WHERE conversation_id = ?1 AND turn = ?2",
            )?
            .execute(params![
                conversation.as_str(),
                turn,
                to_json("trace entry", entry)?
            ])?;
        Ok(())
    }

    fn set_context_tokens(
        &mut self,
        conversation: &ConversationId,
        turn: u32,
        tokens: u64,
    ) -> Result<()> {
        self.0
            .prepare_cached(
                "UPDATE turns SET context_tokens = ?3 WHERE conversation_id = ?1 AND turn = ?2",
            )?
            .execute(params![
                conversation.as_str(),
                turn,
                integer("context tokens", tokens)?
            ])?;
        Ok(())
    }

    fn last_message(&mut self, conversation: &ConversationId, turn: u32) -> Result<usize> {
        Ok(self
            .0
            .prepare_cached(
                "SELECT MAX(message) FROM messages WHERE conversation_id = ?1 AND turn = ?2",
            )?
            .query_row(params![conversation.as_str(), turn], |row| row.get(0))?)
    }

    fn message_exists(
        &mut self,
        conversation: &ConversationId,
        turn: u32,
        message: usize,
    ) -> Result<bool> {
        Ok(self
            .0
            .prepare_cached(
                "SELECT 1 FROM messages WHERE conversation_id = ?1 AND turn = ?2 AND message = ?3",
            )?
            .exists(params![
                conversation.as_str(),
                turn,
                position("message", message)?
            ])?)
    }

    fn message_has_blocks(
        &mut self,
        conversation: &ConversationId,
        turn: u32,
        message: usize,
    ) -> Result<bool> {
        Ok(self
            .0
            .prepare_cached(
                "SELECT 1 FROM blocks WHERE conversation_id = ?1 AND turn = ?2 AND message = ?3",
            )?
            .exists(params![
                conversation.as_str(),
                turn,
                position("message", message)?
            ])?)
    }

    fn insert_message(
        &mut self,
        conversation: &ConversationId,
        turn: u32,
        message: usize,
        role: Role,
    ) -> Result<()> {
        self.0
            .prepare_cached(
                "INSERT INTO messages (conversation_id, turn, message, role)
                 VALUES (?1, ?2, ?3, ?4)",
            )?
            .execute(params![
                conversation.as_str(),
                turn,
                position("message", message)?,
                role.as_str()
            ])?;
        Ok(())
    }

    fn set_message_role(
        &mut self,
        conversation: &ConversationId,
        turn: u32,
        message: usize,
        role: Role,
    ) -> Result<()> {
        self.0
            .prepare_cached(
                "UPDATE messages SET role = ?4
                 WHERE conversation_id = ?1 AND turn = ?2 AND message = ?3",
            )?
            .execute(params![
                conversation.as_str(),
                turn,
                position("message", message)?,
                role.as_str()
            ])?;
        Ok(())
    }

    fn next_block(
        &mut self,
        conversation: &ConversationId,
        turn: u32,
        message: usize,
    ) -> Result<usize> {
        Ok(self
            .0
            .prepare_cached(
                "SELECT COALESCE(MAX(block) + 1, 0) FROM blocks
                 WHERE conversation_id = ?1 AND turn = ?2 AND message = ?3",
            )?
            .query_row(
                params![conversation.as_str(), turn, position("message", message)?],
                |row| row.get(0),
            )?)
    }

    fn insert_block(
        &mut self,
        conversation: &ConversationId,
        turn: u32,
        message: usize,
        block: usize,
        content: &Block,
    ) -> Result<()> {
        self.0
            .prepare_cached(
                "INSERT INTO blocks (conversation_id, turn, message, block, kind, body)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?
            .execute(params![
                conversation.as_str(),
                turn,
                position("message", message)?,
                position("block", block)?,
                content.kind().as_str(),
                to_json("block", content)?
            ])?;
        Ok(())
    }

    fn block_kind(
        &mut self,
        conversation: &ConversationId,
        turn: u32,
        message: usize,
        block: usize,
    ) -> Result<Option<String>> {
        Ok(self
            .0
            .prepare_cached(
                "SELECT kind FROM blocks
                 WHERE conversation_id = ?1 AND turn = ?2 AND message = ?3 AND block = ?4",
            )?
            .query_row(
                params![
                    conversation.as_str(),
                    turn,
                    position("message", message)?,
                    position("block", block)?
                ],
                |row| row.get(0),
            )
            .optional()?)
    }

    fn delete_blocks_from(
        &mut self,
        conversation: &ConversationId,
        turn: u32,
        message: usize,
        from: usize,
    ) -> Result<()> {
        for table in ["block_chunks", "blocks"] {
            self.0
                .prepare_cached(&format!(
                    "DELETE FROM {table}
                     WHERE conversation_id = ?1 AND turn = ?2 AND message = ?3 AND block >= ?4"
                ))?
                .execute(params![
                    conversation.as_str(),
                    turn,
                    position("message", message)?,
                    position("block", from)?
                ])?;
        }
        Ok(())
    }

    fn attachment_stored(&mut self, org_id: &str, attachment_id: &str) -> Result<bool> {
        Ok(self
            .0
            .prepare_cached("SELECT 1 FROM attachments WHERE org_id = ?1 AND id = ?2")?
            .exists(params![org_id, attachment_id])?)
    }

    fn link_tool_picture(
        &mut self,
        conversation: &ConversationId,
        org_id: &str,
        attachment_id: &str,
    ) -> Result<()> {
        self.0
            .prepare_cached(
                "INSERT INTO tool_pictures (conversation_id, org_id, attachment_id)
                 VALUES (?1, ?2, ?3)",
            )?
            .execute(params![conversation.as_str(), org_id, attachment_id])?;
        Ok(())
    }

    fn link_attachment(
        &mut self,
        conversation: &ConversationId,
        turn: u32,
        at: usize,
        org_id: &str,
        attachment_id: &str,
    ) -> Result<()> {
        self.0
            .prepare_cached(
                "INSERT INTO message_attachments
                 (conversation_id, turn, message, position, org_id, attachment_id)
                 VALUES (?1, ?2, 0, ?3, ?4, ?5)",
            )?
            .execute(params![
                conversation.as_str(),
                turn,
                position("attachment position", at)?,
                org_id,
                attachment_id
            ])?;
        Ok(())
    }

    fn insert_usage(
        &mut self,
        conversation: &ConversationId,
        turn: u32,
        usage: &Usage,
    ) -> Result<()> {
        let row = UsageColumns::of(usage)?;
        let [input, cached_input, output, reasoning] = row.tokens;
        let [input_price, cached_input_price, output_price] = row.prices;
        self.0
            .prepare_cached(
                "INSERT INTO usage
                 (org_id, user_id, agent_id, conversation_id, turn, purpose, model,
                  input_tokens, cached_input_tokens, output_tokens, reasoning_tokens, estimated,
                  currency, input_price, cached_input_price, output_price, cost_nanos)
                 SELECT org_id, user_id, agent_id, id, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11,
                        ?12, ?13, ?14
                 FROM conversations WHERE id = ?1",
            )?
            .execute(params![
                conversation.as_str(),
                turn,
                row.purpose,
                usage.model,
                input,
                cached_input,
                output,
                reasoning,
                row.estimated,
                row.currency,
                input_price,
                cached_input_price,
                output_price,
                row.cost_nanos
            ])?;
        Ok(())
    }

    fn lock_uploads(&mut self, _owner: &Owner) -> Result<()> {
        Ok(())
    }

    fn attachment_bytes_used(&mut self, owner: &Owner) -> Result<u64> {
        // length() of a blob reads its size from the row, not its bytes.
        Ok(self
            .0
            .prepare_cached(
                "SELECT COALESCE(SUM(length(b.bytes)), 0)
                 FROM attachments a JOIN attachment_bytes b ON b.org_id = a.org_id AND b.id = a.id
                 WHERE a.org_id = ?1 AND a.user_id = ?2",
            )?
            .query_row(params![owner.org_id, owner.user_id], |row| row.get(0))?)
    }

    fn insert_attachment(
        &mut self,
        owner: &Owner,
        attachment: &Attachment,
        bytes: &mut dyn Read,
        size: u64,
    ) -> Result<()> {
        self.0
            .prepare_cached(
                "INSERT INTO attachments (org_id, id, user_id, kind, metadata)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![
                owner.org_id,
                attachment.id(),
                owner.user_id,
                attachment_kind(attachment),
                to_json("attachment", attachment)?
            ])?;
        // The row is made with zeros of the file's size, which SQLite writes without holding
        // them in memory, and the bytes are written into it in pieces (incremental blob I/O).
        self.0
            .prepare_cached(
                "INSERT INTO attachment_bytes (org_id, id, bytes) VALUES (?1, ?2, zeroblob(?3))",
            )?
            .execute(params![
                owner.org_id,
                attachment.id(),
                integer("attachment size", size)?
            ])?;
        let mut blob = self.0.blob_open(
            MAIN_DB,
            "attachment_bytes",
            "bytes",
            self.0.last_insert_rowid(),
            false,
        )?;
        rules::copy_attachment_bytes(bytes, size, &mut blob)
    }

    fn touch(&mut self, conversation: &ConversationId) -> Result<()> {
        self.0
            .prepare_cached(
                "UPDATE conversations
                 SET last_activity = MAX(last_activity, CAST(unixepoch('subsec') * 1000 AS INTEGER))
                 WHERE id = ?1",
            )?
            .execute([conversation.as_str()])?;
        Ok(())
    }

    fn title_if_untitled(&mut self, conversation: &ConversationId, title: &str) -> Result<()> {
        self.0
            .prepare_cached("UPDATE conversations SET title = ?2 WHERE id = ?1 AND title = ''")?
            .execute(params![conversation.as_str(), title])?;
        Ok(())
    }

    fn lock_owned_conversation(
        &mut self,
        owner: &Owner,
        conversation: &ConversationId,
    ) -> Result<bool> {
        Ok(self
            .0
            .prepare_cached(
                "SELECT 1 FROM conversations WHERE id = ?1 AND org_id = ?2 AND user_id = ?3",
            )?
            .exists(params![conversation.as_str(), owner.org_id, owner.user_id])?)
    }

    fn conversation_attachments(
        &mut self,
        conversation: &ConversationId,
    ) -> Result<Vec<(String, String)>> {
        Ok(self
            .0
            .prepare_cached(
                "SELECT org_id, attachment_id FROM message_attachments WHERE conversation_id = ?1
                 UNION
                 SELECT org_id, attachment_id FROM tool_pictures WHERE conversation_id = ?1",
            )?
            .query_map([conversation.as_str()], |row| {
                Ok((row.get(0)?, row.get(1)?))
            })?
            .collect::<rusqlite::Result<_>>()?)
    }

    fn delete_conversation_rows(&mut self, conversation: &ConversationId) -> Result<()> {
        for table in [
            "share_links",
            "tool_pictures",
            "model_calls",
            "block_chunks",
            "blocks",
            "message_attachments",
            "messages",
            "trace_entries",
            "turns",
        ] {
            self.0
                .prepare_cached(&format!("DELETE FROM {table} WHERE conversation_id = ?1"))?
                .execute([conversation.as_str()])?;
        }
        self.0
            .prepare_cached("DELETE FROM conversations WHERE id = ?1")?
            .execute([conversation.as_str()])?;
        Ok(())
    }

    fn attachment_used(&mut self, org_id: &str, attachment_id: &str) -> Result<bool> {
        Ok(self
            .0
            .prepare_cached(
                "SELECT 1 FROM message_attachments WHERE org_id = ?1 AND attachment_id = ?2
                 UNION ALL
                 SELECT 1 FROM tool_pictures WHERE org_id = ?1 AND attachment_id = ?2",
            )?
            .exists(params![org_id, attachment_id])?)
    }

    fn delete_attachment(&mut self, org_id: &str, attachment_id: &str) -> Result<()> {
        for table in ["attachment_bytes", "attachments"] {
            self.0
                .prepare_cached(&format!(
                    "DELETE FROM {table} WHERE org_id = ?1 AND id = ?2"
                ))?
                .execute(params![org_id, attachment_id])?;
        }
        Ok(())
    }

    /// Nothing: the write transaction is the lock, SQLite having one writer.
    fn lock_keys(&mut self, _keys: &[String]) -> Result<()> {
        Ok(())
    }

    fn spent_since(
        &mut self,
        spender: &Spender,
        limit: &Limit,
        since_ms: i64,
    ) -> Result<(u64, u64)> {
        let (amount, currency) = quota_measure(limit);
        let (org_id, user_id) = spender_ids(spender);
        let (spent, turns): (i64, i64) = self
            .0
            .prepare_cached(&format!(
                "SELECT COALESCE(SUM({amount}), 0), COUNT(DISTINCT conversation_id || '/' || turn)
                 FROM usage
                 WHERE org_id = ?1 AND (?2 IS NULL OR user_id = ?2) AND recorded_at >= ?3
                   AND (?4 IS NULL OR currency = ?4)"
            ))?
            .query_row(params![org_id, user_id, since_ms, currency], |row| {
                Ok((row.get(0)?, row.get(1)?))
            })?;
        Ok((spent.max(0) as u64, turns.max(0) as u64))
    }

    fn running_turns(&mut self, spender: &Spender, limit: &Limit) -> Result<(u64, u64)> {
        let (org_id, user_id) = spender_ids(spender);
        let (_, currency) = quota_measure(limit);
        let (running, held): (i64, i64) = self
            .0
            .prepare_cached(
                "SELECT COUNT(*), COALESCE(SUM(CASE WHEN ?3 IS NULL THEN turns.hold_tokens
                                               WHEN turns.hold_currency = ?3 THEN turns.hold_nanos
                                               ELSE 0 END), 0)
                 FROM turns JOIN conversations ON conversations.id = turns.conversation_id
                 WHERE turns.status = 'running' AND conversations.org_id = ?1
                   AND (?2 IS NULL OR conversations.user_id = ?2)",
            )?
            .query_row(params![org_id, user_id, currency], |row| {
                Ok((row.get(0)?, row.get(1)?))
            })?;
        Ok((running.max(0) as u64, held.max(0) as u64))
    }

    fn now_ms(&mut self) -> Result<i64> {
        Ok(self
            .0
            .prepare_cached("SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)")?
            .query_row([], |row| row.get(0))?)
    }

    fn delete_sign_in_failures_until(&mut self, cutoff_ms: i64) -> Result<()> {
        self.0
            .prepare_cached("DELETE FROM sign_in_failures WHERE at <= ?1")?
            .execute([cutoff_ms])?;
        Ok(())
    }

    fn sign_in_failures_after(&mut self, key: &str, cutoff_ms: i64) -> Result<Vec<i64>> {
        Ok(self
            .0
            .prepare_cached(
                "SELECT at FROM sign_in_failures WHERE key = ?1 AND at > ?2 ORDER BY at, id",
            )?
            .query_map(params![key, cutoff_ms], |row| row.get(0))?
            .collect::<rusqlite::Result<_>>()?)
    }

    fn insert_sign_in_failure(&mut self, key: &str, at_ms: i64) -> Result<i64> {
        Ok(self
            .0
            .prepare_cached("INSERT INTO sign_in_failures (key, at) VALUES (?1, ?2) RETURNING id")?
            .query_row(params![key, at_ms], |row| row.get(0))?)
    }

    fn delete_sign_in_failures_of(&mut self, key: &str) -> Result<()> {
        self.0
            .prepare_cached("DELETE FROM sign_in_failures WHERE key = ?1")?
            .execute([key])?;
        Ok(())
    }

    fn delete_sign_in_failure(&mut self, id: i64) -> Result<()> {
        self.0
            .prepare_cached("DELETE FROM sign_in_failures WHERE id = ?1")?
            .execute([id])?;
        Ok(())
    }

    fn delete_sso_sign_ins_until(&mut self, now_ms: i64) -> Result<()> {
        self.0
            .prepare_cached("DELETE FROM sso_sign_ins WHERE expires_at <= ?1")?
            .execute([now_ms])?;
        Ok(())
    }

    fn sso_sign_ins_held(&mut self, client: Option<&str>) -> Result<(u64, u64)> {
        Ok(self
            .0
            .prepare_cached(
                "SELECT (SELECT count(*) FROM sso_sign_ins),
                        (SELECT count(*) FROM sso_sign_ins WHERE client = ?1)",
            )?
            .query_row([client], |row| Ok((row.get(0)?, row.get(1)?)))?)
    }

    fn live_api_keys(&mut self, owner: &Owner, now_ms: i64) -> Result<u64> {
        super::api_keys::live(self.0, owner, now_ms)
    }

    fn insert_api_key(&mut self, key: &StoredApiKey) -> Result<()> {
        super::api_keys::insert(self.0, key)
    }

    fn live_share_links(&mut self, owner: &Owner, now_ms: i64) -> Result<u64> {
        super::share_links::live(self.0, owner, now_ms)
    }

    fn insert_share_link(&mut self, link: &ShareLink, snapshot: &str) -> Result<()> {
        super::share_links::insert(self.0, link, snapshot)
    }

    fn set_conversation_title(&mut self, conversation: &ConversationId, title: &str) -> Result<()> {
        self.0
            .prepare_cached("UPDATE conversations SET title = ?2 WHERE id = ?1")?
            .execute(params![conversation.as_str(), title])?;
        Ok(())
    }

    fn set_conversation_project(
        &mut self,
        conversation: &ConversationId,
        project: Option<&str>,
    ) -> Result<()> {
        self.0
            .prepare_cached("UPDATE conversations SET project_id = ?2 WHERE id = ?1")?
            .execute(params![conversation.as_str(), project])?;
        Ok(())
    }

    fn set_conversation_pinned(
        &mut self,
        conversation: &ConversationId,
        pinned: bool,
    ) -> Result<()> {
        self.0
            .prepare_cached("UPDATE conversations SET pinned = ?2 WHERE id = ?1")?
            .execute(params![conversation.as_str(), pinned])?;
        Ok(())
    }

    fn lock_owned_project(&mut self, owner: &Owner, id: &str) -> Result<Option<Project>> {
        super::projects::owned(self.0, owner, id)
    }

    fn count_projects(&mut self, owner: &Owner) -> Result<u64> {
        super::projects::count(self.0, owner)
    }

    fn insert_project(&mut self, project: &Project) -> Result<()> {
        super::projects::insert(self.0, project)
    }

    fn update_project(&mut self, project: &Project) -> Result<()> {
        super::projects::update(self.0, project)
    }

    fn project_conversations(&mut self, id: &str) -> Result<Vec<ConversationId>> {
        super::projects::conversations(self.0, id)
    }

    fn delete_project_row(&mut self, id: &str) -> Result<()> {
        super::projects::delete(self.0, id)
    }

    fn count_collections(&mut self, owner: &CollectionOwner) -> Result<u64> {
        super::knowledge::count(self.0, owner)
    }

    fn collection_named(
        &mut self,
        owner: &CollectionOwner,
        name: &str,
    ) -> Result<Option<Collection>> {
        super::knowledge::named(self.0, owner, name)
    }

    fn insert_collection(&mut self, collection: &Collection) -> Result<()> {
        super::knowledge::insert_collection(self.0, collection)
    }

    fn collection_in(&mut self, org_id: &str, id: &str) -> Result<bool> {
        super::knowledge::exists_in_org(self.0, org_id, id)
    }

    fn knowledge_held(&mut self, org_id: &str) -> Result<(u64, u64)> {
        super::knowledge::held(self.0, org_id)
    }

    fn insert_knowledge_document(
        &mut self,
        org_id: &str,
        document: &KnowledgeDocument,
        passages: &[NewPassage],
    ) -> Result<()> {
        super::knowledge::insert_document(self.0, org_id, document, passages)
    }

    fn delete_knowledge_document(
        &mut self,
        collection_id: &str,
        document_id: &str,
    ) -> Result<bool> {
        super::knowledge::delete_document(self.0, collection_id, document_id)
    }

    fn delete_collection_rows(&mut self, collection_id: &str) -> Result<()> {
        super::knowledge::delete_collection(self.0, collection_id)
    }

    fn insert_sso_sign_in(&mut self, sign_in: &SsoSignIn, expires_at_ms: i64) -> Result<()> {
        self.0
            .prepare_cached(&format!(
                "INSERT INTO sso_sign_ins ({SSO_SIGN_IN_COLUMNS}, expires_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
            ))?
            .execute(params![
                sign_in.state_sha256,
                sign_in.binding_sha256,
                sign_in.client,
                sign_in.provider,
                sign_in.verifier,
                sign_in.nonce,
                sign_in.return_to,
                expires_at_ms
            ])?;
        Ok(())
    }

    fn take_sso_sign_in(&mut self, state_sha256: &str) -> Result<Option<(SsoSignIn, i64)>> {
        Ok(self
            .0
            .prepare_cached(&format!(
                "DELETE FROM sso_sign_ins WHERE state_sha256 = ?1
                 RETURNING {SSO_SIGN_IN_COLUMNS}, expires_at"
            ))?
            .query_row([state_sha256], |row| {
                Ok((
                    SsoSignIn {
                        state_sha256: row.get(0)?,
                        binding_sha256: row.get(1)?,
                        client: row.get(2)?,
                        provider: row.get(3)?,
                        verifier: row.get(4)?,
                        nonce: row.get(5)?,
                        return_to: row.get(6)?,
                    },
                    row.get(7)?,
                ))
            })
            .optional()?)
    }
}

/// The columns of a single sign-on under way, as [`SsoSignIn`] holds them.
const SSO_SIGN_IN_COLUMNS: &str =
    "state_sha256, binding_sha256, client, provider, verifier, nonce, return_to";
