//! PostgreSQL's statements for storage's rules ([`rules::Statements`]), run on one transaction.

use std::io::{Read, Write};

use portal_core::attachment::Attachment;
use portal_core::effort::Effort;
use portal_core::{Block, Role, TraceEntry, TurnKind, TurnStatus};
use postgres::types::ToSql;

use super::connection::Tx;
use super::{count, load, place};
use portal_store::assemble::folded;
use portal_store::codec::{
    UsageColumns, attachment_kind, integer, kind_name, position, quota_measure, spender_ids,
    to_json,
};
use portal_store::quota::{Hold, Limit, Spender};
use portal_store::{
    Collection, CollectionOwner, ConversationId, KnowledgeDocument, NewPassage, Owner, PausedClaim,
    Project, Result, ShareLink, SsoSignIn, StorageError, StoredApiKey, Usage, rules,
};

/// How long a turn that opened or resumed is left to the replica that is about to run it
/// before anyone may take it for abandoned: a replica takes its lease right after, so this only
/// covers a replica that stops in between.
const UNCLAIMED_LEASE_MS: i64 = 30_000;

/// The rules' statements on one PostgreSQL transaction.
pub(super) struct Statements<'a, 't>(pub(super) &'a mut Tx<'t>);

impl rules::Statements for Statements<'_, '_> {
    fn insert_conversation(&mut self, owner: &Owner, agent_id: &str) -> Result<ConversationId> {
        let id = super::new_id()?;
        self.0.execute(
            "INSERT INTO conversations (id, org_id, user_id, agent_id) VALUES ($1, $2, $3, $4)",
            &[&id, &owner.org_id, &owner.user_id, &agent_id],
        )?;
        Ok(ConversationId::new(id))
    }

    fn lock_conversation(&mut self, conversation: &ConversationId) -> Result<()> {
        self.0.execute(
            "SELECT 1 FROM conversations WHERE id = $1 FOR UPDATE",
            &[&conversation.as_str()],
        )?;
        Ok(())
    }

    fn conversation_org(&mut self, conversation: &ConversationId) -> Result<Option<String>> {
        Ok(self
            .0
            .query_opt(
                "SELECT org_id FROM conversations WHERE id = $1",
                &[&conversation.as_str()],
            )?
            .map(|row| row.get(0)))
    }

    fn latest_turn(&mut self, conversation: &ConversationId) -> Result<Option<(u32, String)>> {
        let latest = self.0.query_opt(
            "SELECT turn, status FROM turns WHERE conversation_id = $1
             ORDER BY turn DESC LIMIT 1",
            &[&conversation.as_str()],
        )?;
        latest
            .map(|row| Ok((super::turn_number(row.get(0))?, row.get(1))))
            .transpose()
    }

    fn turn_status(&mut self, conversation: &ConversationId, turn: u32) -> Result<Option<String>> {
        Ok(self
            .0
            .query_opt(
                "SELECT status FROM turns WHERE conversation_id = $1 AND turn = $2",
                &[&conversation.as_str(), &i64::from(turn)],
            )?
            .map(|row| row.get(0)))
    }

    fn insert_turn(
        &mut self,
        conversation: &ConversationId,
        turn: u32,
        kind: TurnKind,
        effort: Option<Effort>,
        hold: &Hold,
    ) -> Result<()> {
        // A new turn waits for its run's lease.
        self.0.execute(
            "INSERT INTO turns (conversation_id, turn, kind, status, effort, lease_until,
                                hold_tokens, hold_nanos, hold_currency)
             VALUES ($1, $2, $3, 'running', $4, portal_now_ms() + $5, $6, $7, $8)",
            &[
                &conversation.as_str(),
                &i64::from(turn),
                &kind_name(kind),
                &effort.map(|e| e.as_str()),
                &UNCLAIMED_LEASE_MS,
                &integer("a turn's hold", hold.tokens)?,
                &integer("a turn's hold", hold.cost.as_ref().map_or(0, |c| c.nanos))?,
                &hold.cost.as_ref().map(|c| c.currency.as_str()),
            ],
        )?;
        Ok(())
    }

    fn set_status(
        &mut self,
        conversation: &ConversationId,
        turn: u32,
        status: TurnStatus,
    ) -> Result<()> {
        self.0.execute(
            "UPDATE turns SET status = $3, changed_at = portal_now_ms()
             WHERE conversation_id = $1 AND turn = $2",
            &[&conversation.as_str(), &i64::from(turn), &status.as_str()],
        )?;
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
        let paused = "conversation_id = $1 AND turn = $2 AND status = 'paused'
            AND (SELECT COALESCE(MAX(message) + 1, 0) FROM blocks
                 WHERE conversation_id = $1 AND turn = $2) = $3";
        let (id, turn_at) = (conversation.as_str(), i64::from(turn));
        let messages = position("message count", messages)?;
        let claimed = match claim {
            // The resumed turn waits for its run's lease.
            PausedClaim::Resume => self.0.execute(
                &format!(
                    "UPDATE turns SET status = 'running', changed_at = portal_now_ms(),
                       lease_replica = NULL, lease_until = portal_now_ms() + $4
                     WHERE {paused}"
                ),
                &[&id, &turn_at, &messages, &UNCLAIMED_LEASE_MS],
            )?,
            PausedClaim::CutOff => self.0.execute(
                &format!(
                    "UPDATE turns SET status = 'cut_off', changed_at = portal_now_ms()
                     WHERE {paused}"
                ),
                &[&id, &turn_at, &messages],
            )?,
        };
        Ok(claimed == 1)
    }

    fn fold_chunks(&mut self, conversation: &ConversationId, turn: u32) -> Result<()> {
        let t = &mut *self.0;
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

    fn insert_trace(
        &mut self,
        conversation: &ConversationId,
        turn: u32,
        entry: &TraceEntry,
    ) -> Result<()> {
        self.0.execute(
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

    fn set_context_tokens(
        &mut self,
        conversation: &ConversationId,
        turn: u32,
        tokens: u64,
    ) -> Result<()> {
        self.0.execute(
            "UPDATE turns SET context_tokens = $3 WHERE conversation_id = $1 AND turn = $2",
            &[
                &conversation.as_str(),
                &i64::from(turn),
                &integer("context tokens", tokens)?,
            ],
        )?;
        Ok(())
    }

    fn last_message(&mut self, conversation: &ConversationId, turn: u32) -> Result<usize> {
        let last: i64 = self
            .0
            .query_one(
                "SELECT MAX(message) FROM messages WHERE conversation_id = $1 AND turn = $2",
                &[&conversation.as_str(), &i64::from(turn)],
            )?
            .get(0);
        place(last)
    }

    fn message_exists(
        &mut self,
        conversation: &ConversationId,
        turn: u32,
        message: usize,
    ) -> Result<bool> {
        Ok(self
            .0
            .query_opt(
                "SELECT 1 FROM messages WHERE conversation_id = $1 AND turn = $2 AND message = $3",
                &[
                    &conversation.as_str(),
                    &i64::from(turn),
                    &position("message", message)?,
                ],
            )?
            .is_some())
    }

    fn message_has_blocks(
        &mut self,
        conversation: &ConversationId,
        turn: u32,
        message: usize,
    ) -> Result<bool> {
        Ok(self
            .0
            .query_opt(
                "SELECT 1 FROM blocks
                 WHERE conversation_id = $1 AND turn = $2 AND message = $3 LIMIT 1",
                &[
                    &conversation.as_str(),
                    &i64::from(turn),
                    &position("message", message)?,
                ],
            )?
            .is_some())
    }

    fn insert_message(
        &mut self,
        conversation: &ConversationId,
        turn: u32,
        message: usize,
        role: Role,
    ) -> Result<()> {
        self.0.execute(
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

    fn set_message_role(
        &mut self,
        conversation: &ConversationId,
        turn: u32,
        message: usize,
        role: Role,
    ) -> Result<()> {
        self.0.execute(
            "UPDATE messages SET role = $4
             WHERE conversation_id = $1 AND turn = $2 AND message = $3",
            &[
                &conversation.as_str(),
                &i64::from(turn),
                &position("message", message)?,
                &role.as_str(),
            ],
        )?;
        Ok(())
    }

    fn next_block(
        &mut self,
        conversation: &ConversationId,
        turn: u32,
        message: usize,
    ) -> Result<usize> {
        let next: i64 = self
            .0
            .query_one(
                "SELECT COALESCE(MAX(block) + 1, 0) FROM blocks
                 WHERE conversation_id = $1 AND turn = $2 AND message = $3",
                &[
                    &conversation.as_str(),
                    &i64::from(turn),
                    &position("message", message)?,
                ],
            )?
            .get(0);
        place(next)
    }

    fn insert_block(
        &mut self,
        conversation: &ConversationId,
        turn: u32,
        message: usize,
        block: usize,
        content: &Block,
    ) -> Result<()> {
        self.0.execute(
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

    fn block_kind(
        &mut self,
        conversation: &ConversationId,
        turn: u32,
        message: usize,
        block: usize,
    ) -> Result<Option<String>> {
        Ok(self
            .0
            .query_opt(
                "SELECT kind FROM blocks
                 WHERE conversation_id = $1 AND turn = $2 AND message = $3 AND block = $4",
                &[
                    &conversation.as_str(),
                    &i64::from(turn),
                    &position("message", message)?,
                    &position("block", block)?,
                ],
            )?
            .map(|row| row.get(0)))
    }

    fn delete_blocks_from(
        &mut self,
        conversation: &ConversationId,
        turn: u32,
        message: usize,
        from: usize,
    ) -> Result<()> {
        for table in ["block_chunks", "blocks"] {
            self.0.execute(
                &format!(
                    "DELETE FROM {table}
                     WHERE conversation_id = $1 AND turn = $2 AND message = $3 AND block >= $4"
                ),
                &[
                    &conversation.as_str(),
                    &i64::from(turn),
                    &position("message", message)?,
                    &position("block", from)?,
                ],
            )?;
        }
        Ok(())
    }

    fn attachment_stored(&mut self, org_id: &str, attachment_id: &str) -> Result<bool> {
        Ok(self
            .0
            .query_opt(
                "SELECT 1 FROM attachments WHERE org_id = $1 AND id = $2",
                &[&org_id, &attachment_id],
            )?
            .is_some())
    }

    fn link_tool_picture(
        &mut self,
        conversation: &ConversationId,
        org_id: &str,
        attachment_id: &str,
    ) -> Result<()> {
        self.0.execute(
            "INSERT INTO tool_pictures (conversation_id, org_id, attachment_id)
             VALUES ($1, $2, $3)",
            &[&conversation.as_str(), &org_id, &attachment_id],
        )?;
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
        self.0.execute(
            "INSERT INTO message_attachments
             (conversation_id, turn, message, position, org_id, attachment_id)
             VALUES ($1, $2, 0, $3, $4, $5)",
            &[
                &conversation.as_str(),
                &i64::from(turn),
                &position("attachment position", at)?,
                &org_id,
                &attachment_id,
            ],
        )?;
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
        self.0.execute(
            "INSERT INTO usage
             (org_id, user_id, agent_id, conversation_id, turn, purpose, model,
              input_tokens, cached_input_tokens, output_tokens, reasoning_tokens, estimated,
              currency, input_price, cached_input_price, output_price, cost_nanos)
             SELECT org_id, user_id, agent_id, id, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11,
                    $12, $13, $14
             FROM conversations WHERE id = $1",
            &[
                &conversation.as_str(),
                &i64::from(turn),
                &row.purpose,
                &usage.model,
                &input,
                &cached_input,
                &output,
                &reasoning,
                &row.estimated,
                &row.currency,
                &input_price,
                &cached_input_price,
                &output_price,
                &row.cost_nanos,
            ],
        )?;
        Ok(())
    }

    fn lock_uploads(&mut self, owner: &Owner) -> Result<()> {
        self.0.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
            &[&format!("quota {} {}", owner.org_id, owner.user_id)],
        )?;
        Ok(())
    }

    fn attachment_bytes_used(&mut self, owner: &Owner) -> Result<u64> {
        let used: i64 = self
            .0
            .query_one(
                "SELECT COALESCE(SUM(size), 0)::BIGINT FROM attachments
                 WHERE org_id = $1 AND user_id = $2",
                &[&owner.org_id, &owner.user_id],
            )?
            .get(0);
        count(used)
    }

    fn insert_attachment(
        &mut self,
        owner: &Owner,
        attachment: &Attachment,
        bytes: &mut dyn Read,
        size: u64,
    ) -> Result<()> {
        self.0.execute(
            "INSERT INTO attachments (org_id, id, user_id, kind, metadata, size)
             VALUES ($1, $2, $3, $4, $5, $6)",
            &[
                &owner.org_id,
                &attachment.id(),
                &owner.user_id,
                &attachment_kind(attachment),
                &to_json("attachment", attachment)?,
                &integer("attachment size", size)?,
            ],
        )?;
        // The row goes in through a binary `COPY`, its bytes written to the server in pieces as
        // they are read: a bound parameter would be encoded whole in memory first.
        let mut copy = self
            .0
            .copy_in("COPY attachment_bytes (org_id, id, bytes) FROM STDIN (FORMAT binary)")?;
        copy_row_start(&mut copy, &owner.org_id, attachment.id(), size)?;
        rules::copy_attachment_bytes(bytes, size, &mut copy)?;
        copy.write_all(&COPY_TRAILER).map_err(copy_failed)?;
        copy.finish()?;
        Ok(())
    }

    fn touch(&mut self, conversation: &ConversationId) -> Result<()> {
        self.0.execute(
            "UPDATE conversations SET last_activity = GREATEST(last_activity, portal_now_ms())
             WHERE id = $1",
            &[&conversation.as_str()],
        )?;
        Ok(())
    }

    fn title_if_untitled(&mut self, conversation: &ConversationId, title: &str) -> Result<()> {
        self.0.execute(
            "UPDATE conversations SET title = $2 WHERE id = $1 AND title = ''",
            &[&conversation.as_str(), &title],
        )?;
        Ok(())
    }

    fn lock_owned_conversation(
        &mut self,
        owner: &Owner,
        conversation: &ConversationId,
    ) -> Result<bool> {
        Ok(self
            .0
            .query_opt(
                "SELECT 1 FROM conversations WHERE id = $1 AND org_id = $2 AND user_id = $3
                 FOR UPDATE",
                &[&conversation.as_str(), &owner.org_id, &owner.user_id],
            )?
            .is_some())
    }

    fn conversation_attachments(
        &mut self,
        conversation: &ConversationId,
    ) -> Result<Vec<(String, String)>> {
        Ok(self
            .0
            .query(
                "SELECT org_id, attachment_id FROM message_attachments WHERE conversation_id = $1
                 UNION
                 SELECT org_id, attachment_id FROM tool_pictures WHERE conversation_id = $1",
                &[&conversation.as_str()],
            )?
            .iter()
            .map(|row| (row.get(0), row.get(1)))
            .collect())
    }

    fn delete_conversation_rows(&mut self, conversation: &ConversationId) -> Result<()> {
        let id = conversation.as_str();
        for table in [
            "share_links",
            "tool_pictures",
            "model_calls",
            "block_chunks",
            "blocks",
            "message_attachments",
            "messages",
            "trace_entries",
            "turn_log",
            "turn_decisions",
            "turns",
        ] {
            self.0.execute(
                &format!("DELETE FROM {table} WHERE conversation_id = $1"),
                &[&id],
            )?;
        }
        self.0
            .execute("DELETE FROM conversations WHERE id = $1", &[&id])?;
        Ok(())
    }

    fn attachment_used(&mut self, org_id: &str, attachment_id: &str) -> Result<bool> {
        Ok(self
            .0
            .query_opt(
                "SELECT 1 FROM message_attachments WHERE org_id = $1 AND attachment_id = $2
                 UNION ALL
                 SELECT 1 FROM tool_pictures WHERE org_id = $1 AND attachment_id = $2
                 LIMIT 1",
                &[&org_id, &attachment_id],
            )?
            .is_some())
    }

    fn delete_attachment(&mut self, org_id: &str, attachment_id: &str) -> Result<()> {
        for table in ["attachment_bytes", "attachments"] {
            self.0.execute(
                &format!("DELETE FROM {table} WHERE org_id = $1 AND id = $2"),
                &[&org_id, &attachment_id],
            )?;
        }
        Ok(())
    }

    /// An advisory lock per key, taken in sorted order so that two sign-ins never wait on each
    /// other.
    fn lock_keys(&mut self, keys: &[String]) -> Result<()> {
        // In one order everywhere, so two transactions locking the same keys cannot deadlock.
        let mut locked: Vec<&String> = keys.iter().collect();
        locked.sort();
        locked.dedup();
        for key in locked {
            self.0.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
                &[key],
            )?;
        }
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
        let row = self.0.query_one(
            &format!(
                "SELECT COALESCE(SUM({amount}), 0)::BIGINT, COUNT(DISTINCT (conversation_id, turn))
                 FROM usage
                 WHERE org_id = $1 AND ($2::TEXT IS NULL OR user_id = $2) AND recorded_at >= $3
                   AND ($4::TEXT IS NULL OR currency = $4)"
            ),
            &[&org_id, &user_id, &since_ms, &currency],
        )?;
        let (spent, turns): (i64, i64) = (row.get(0), row.get(1));
        Ok((spent.max(0) as u64, turns.max(0) as u64))
    }

    fn running_turns(&mut self, spender: &Spender, limit: &Limit) -> Result<(u64, u64)> {
        let (org_id, user_id) = spender_ids(spender);
        let (_, currency) = quota_measure(limit);
        let row = self.0.query_one(
            "SELECT COUNT(*), COALESCE(SUM(CASE WHEN $3::TEXT IS NULL THEN turns.hold_tokens
                                           WHEN turns.hold_currency = $3 THEN turns.hold_nanos
                                           ELSE 0 END), 0)::BIGINT
             FROM turns JOIN conversations ON conversations.id = turns.conversation_id
             WHERE turns.status = 'running' AND conversations.org_id = $1
               AND ($2::TEXT IS NULL OR conversations.user_id = $2)",
            &[&org_id, &user_id, &currency],
        )?;
        let (running, held): (i64, i64) = (row.get(0), row.get(1));
        Ok((running.max(0) as u64, held.max(0) as u64))
    }

    fn now_ms(&mut self) -> Result<i64> {
        Ok(self.0.query_one("SELECT portal_now_ms()", &[])?.get(0))
    }

    /// Failures another sign-in holds are skipped (`SKIP LOCKED`), so sign-ins never wait on
    /// this.
    fn delete_sign_in_failures_until(&mut self, cutoff_ms: i64) -> Result<()> {
        self.0.execute(
            "DELETE FROM sign_in_failures WHERE id IN
                 (SELECT id FROM sign_in_failures WHERE at <= $1 FOR UPDATE SKIP LOCKED)",
            &[&cutoff_ms],
        )?;
        Ok(())
    }

    fn sign_in_failures_after(&mut self, key: &str, cutoff_ms: i64) -> Result<Vec<i64>> {
        Ok(self
            .0
            .query(
                "SELECT at FROM sign_in_failures WHERE key = $1 AND at > $2 ORDER BY at, id",
                &[&key, &cutoff_ms],
            )?
            .iter()
            .map(|row| row.get(0))
            .collect())
    }

    fn insert_sign_in_failure(&mut self, key: &str, at_ms: i64) -> Result<i64> {
        Ok(self
            .0
            .query_one(
                "INSERT INTO sign_in_failures (key, at) VALUES ($1, $2) RETURNING id",
                &[&key, &at_ms],
            )?
            .get(0))
    }

    fn delete_sign_in_failures_of(&mut self, key: &str) -> Result<()> {
        self.0
            .execute("DELETE FROM sign_in_failures WHERE key = $1", &[&key])?;
        Ok(())
    }

    fn delete_sign_in_failure(&mut self, id: i64) -> Result<()> {
        self.0
            .execute("DELETE FROM sign_in_failures WHERE id = $1", &[&id])?;
        Ok(())
    }

    fn delete_sso_sign_ins_until(&mut self, now_ms: i64) -> Result<()> {
        self.0.execute(
            "DELETE FROM sso_sign_ins WHERE expires_at <= $1",
            &[&now_ms],
        )?;
        Ok(())
    }

    fn sso_sign_ins_held(&mut self, client: Option<&str>) -> Result<(u64, u64)> {
        let row = self.0.query_one(
            "SELECT (SELECT count(*) FROM sso_sign_ins),
                    (SELECT count(*) FROM sso_sign_ins WHERE client = $1)",
            &[&client],
        )?;
        Ok((count(row.get(0))?, count(row.get(1))?))
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
        self.0.execute(
            "UPDATE conversations SET title = $2 WHERE id = $1",
            &[&conversation.as_str(), &title],
        )?;
        Ok(())
    }

    fn set_conversation_project(
        &mut self,
        conversation: &ConversationId,
        project: Option<&str>,
    ) -> Result<()> {
        self.0.execute(
            "UPDATE conversations SET project_id = $2 WHERE id = $1",
            &[&conversation.as_str(), &project],
        )?;
        Ok(())
    }

    fn set_conversation_pinned(
        &mut self,
        conversation: &ConversationId,
        pinned: bool,
    ) -> Result<()> {
        self.0.execute(
            "UPDATE conversations SET pinned = $2 WHERE id = $1",
            &[&conversation.as_str(), &pinned],
        )?;
        Ok(())
    }

    fn lock_owned_project(&mut self, owner: &Owner, id: &str) -> Result<Option<Project>> {
        super::projects::lock_owned(self.0, owner, id)
    }

    fn count_projects(&mut self, owner: &Owner) -> Result<u64> {
        super::projects::count_owned(self.0, owner)
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
        super::knowledge::count_owned(self.0, owner)
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
        self.0.execute(
            &format!(
                "INSERT INTO sso_sign_ins ({SSO_SIGN_IN_COLUMNS}, expires_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
            ),
            &[
                &sign_in.state_sha256,
                &sign_in.binding_sha256,
                &sign_in.client,
                &sign_in.provider,
                &sign_in.verifier,
                &sign_in.nonce,
                &sign_in.return_to,
                &expires_at_ms,
            ],
        )?;
        Ok(())
    }

    fn take_sso_sign_in(&mut self, state_sha256: &str) -> Result<Option<(SsoSignIn, i64)>> {
        Ok(self
            .0
            .query_opt(
                &format!(
                    "DELETE FROM sso_sign_ins WHERE state_sha256 = $1
                     RETURNING {SSO_SIGN_IN_COLUMNS}, expires_at"
                ),
                &[&state_sha256],
            )?
            .map(|row| {
                (
                    SsoSignIn {
                        state_sha256: row.get(0),
                        binding_sha256: row.get(1),
                        client: row.get(2),
                        provider: row.get(3),
                        verifier: row.get(4),
                        nonce: row.get(5),
                        return_to: row.get(6),
                    },
                    row.get(7),
                )
            }))
    }
}

/// The columns of a single sign-on under way, as [`SsoSignIn`] holds them.
const SSO_SIGN_IN_COLUMNS: &str =
    "state_sha256, binding_sha256, client, provider, verifier, nonce, return_to";

/// The binary `COPY` format's header: its signature, no flags and no header extension
/// (PostgreSQL's documentation, "COPY", "Binary Format").
const COPY_HEADER: [u8; 19] = *b"PGCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\0";

/// The binary `COPY` format's end: a field count of -1.
const COPY_TRAILER: [u8; 2] = (-1i16).to_be_bytes();

/// Writes the copy's header and the start of its one row of `attachment_bytes`: three fields,
/// the two ids, then the length of the bytes that follow.
fn copy_row_start(copy: &mut dyn Write, org_id: &str, id: &str, size: u64) -> Result<()> {
    let length = |value: u64| {
        i32::try_from(value).map_err(|_| StorageError::UploadUnread {
            detail: format!("a value of {value} bytes is past the 2 GiB a binary copy takes"),
        })
    };
    let mut start = COPY_HEADER.to_vec();
    start.extend_from_slice(&3i16.to_be_bytes());
    for text in [org_id, id] {
        start.extend_from_slice(&length(text.len() as u64)?.to_be_bytes());
        start.extend_from_slice(text.as_bytes());
    }
    start.extend_from_slice(&length(size)?.to_be_bytes());
    copy.write_all(&start).map_err(copy_failed)
}

/// A write to a `COPY` that failed: the connection's, as the database answers nothing else.
fn copy_failed(error: std::io::Error) -> StorageError {
    StorageError::UploadUnread {
        detail: error.to_string(),
    }
}
