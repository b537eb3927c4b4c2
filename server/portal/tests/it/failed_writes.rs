//! A write that fails mid-turn ends the turn as failed: recorded `failed` (the status write is
//! retried once as `failed`), its stream ended by a `turn_end` that says why, and the
//! conversation open for the next message. Storage is SQLite wrapped so that one chosen write
//! fails, as a full disk would.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use portal_core::attachment::Attachment;
use portal_core::effort::Effort;
use portal_core::stream::TurnEvent;
use portal_core::{Block, Message, Role, TraceEntry, Transcript, TurnStatus};
use portal_host::turn::{TurnSetup, Turns};
use portal_model::ModelRegistry;
use portal_store::{
    AttachmentRef, ConversationId, ConversationInfo, ConversationPage, ConversationQuery,
    ConversationSummary, NewCall, NewTurn, Owner, PausedClaim, RecentTurns, RecordedCall, Result,
    SsoAccount, Statements, Storage, StorageError, StoredApiKey, StoredSession, TurnRef, Usage,
    UsageLine, UsageQuery, UsageRecord,
};
use portal_store_sqlite::SqliteStorage;
use portal_tools::ToolRegistry;

const REASON: &str = "The server could not record the turn; send the message again, and tell an \
                      administrator if it happens again.";

/// SQLite whose `fail_at`-th turn write (1-based, counting messages, blocks, text, statuses,
/// usage, trace entries and context sizes) fails, and whose first `failing_statuses` status
/// writes fail.
#[derive(Debug)]
struct Failing {
    inner: SqliteStorage,
    writes: AtomicUsize,
    fail_at: usize,
    failing_statuses: AtomicUsize,
}

fn disk_full() -> StorageError {
    StorageError::Database(rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(13),
        Some("database or disk is full".into()),
    ))
}

impl Failing {
    fn write(&self) -> Result<()> {
        let n = self.writes.fetch_add(1, Ordering::SeqCst) + 1;
        if n == self.fail_at {
            Err(disk_full())
        } else {
            Ok(())
        }
    }
}

impl Storage for Failing {
    fn create_conversation(&self, owner: &Owner, agent_id: &str) -> Result<ConversationId> {
        self.inner.create_conversation(owner, agent_id)
    }
    fn list_conversations(
        &self,
        owner: &Owner,
        query: &ConversationQuery,
    ) -> Result<ConversationPage> {
        self.inner.list_conversations(owner, query)
    }
    fn conversation_summary(
        &self,
        owner: &Owner,
        id: &ConversationId,
    ) -> Result<ConversationSummary> {
        self.inner.conversation_summary(owner, id)
    }
    fn rename_conversation(
        &self,
        owner: &Owner,
        id: &ConversationId,
        title: &str,
    ) -> Result<ConversationSummary> {
        self.inner.rename_conversation(owner, id, title)
    }
    fn delete_conversation(&self, owner: &Owner, id: &ConversationId) -> Result<()> {
        self.inner.delete_conversation(owner, id)
    }
    fn conversation(&self, org_id: &str, id: &ConversationId) -> Result<ConversationInfo> {
        self.inner.conversation(org_id, id)
    }
    fn load_transcript(&self, org_id: &str, id: &ConversationId) -> Result<Transcript> {
        self.inner.load_transcript(org_id, id)
    }
    fn load_recent(
        &self,
        org_id: &str,
        id: &ConversationId,
        past_turns: usize,
    ) -> Result<RecentTurns> {
        self.inner.load_recent(org_id, id, past_turns)
    }
    fn open_turn(&self, id: &ConversationId, turn: NewTurn) -> Result<u32> {
        self.inner.open_turn(id, turn)
    }
    fn append_message(&self, id: &ConversationId, turn: u32, role: Role) -> Result<usize> {
        self.write()?;
        self.inner.append_message(id, turn, role)
    }
    fn append_block(
        &self,
        id: &ConversationId,
        turn: u32,
        message: usize,
        block: &Block,
    ) -> Result<usize> {
        self.write()?;
        self.inner.append_block(id, turn, message, block)
    }
    fn append_block_text(
        &self,
        id: &ConversationId,
        turn: u32,
        message: usize,
        block: usize,
        delta: &str,
    ) -> Result<()> {
        self.write()?;
        self.inner
            .append_block_text(id, turn, message, block, delta)
    }
    fn withdraw_blocks(
        &self,
        id: &ConversationId,
        turn: u32,
        message: usize,
        from: usize,
    ) -> Result<()> {
        self.write()?;
        self.inner.withdraw_blocks(id, turn, message, from)
    }
    fn set_turn_status(&self, id: &ConversationId, turn: u32, status: TurnStatus) -> Result<()> {
        self.write()?;
        let failing = self
            .failing_statuses
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
        if failing.is_ok() {
            return Err(disk_full());
        }
        self.inner.set_turn_status(id, turn, status)
    }
    fn claim_paused(
        &self,
        id: &ConversationId,
        turn: u32,
        messages: usize,
        claim: PausedClaim,
    ) -> Result<()> {
        self.write()?;
        self.inner.claim_paused(id, turn, messages, claim)
    }
    fn set_context_tokens(&self, id: &ConversationId, turn: u32, tokens: u64) -> Result<()> {
        self.write()?;
        self.inner.set_context_tokens(id, turn, tokens)
    }
    fn add_trace(&self, id: &ConversationId, turn: u32, entry: &TraceEntry) -> Result<()> {
        self.write()?;
        self.inner.add_trace(id, turn, entry)
    }
    fn record_usage(&self, id: &ConversationId, turn: u32, usage: &Usage) -> Result<()> {
        self.write()?;
        self.inner.record_usage(id, turn, usage)
    }
    fn record_call(&self, id: &ConversationId, turn: u32, call: &NewCall) -> Result<u32> {
        self.inner.record_call(id, turn, call)
    }
    fn calls(&self, org_id: &str, id: &ConversationId, turn: u32) -> Result<Vec<RecordedCall>> {
        self.inner.calls(org_id, id, turn)
    }
    fn usage(&self, org_id: &str, id: &ConversationId) -> Result<Vec<UsageRecord>> {
        self.inner.usage(org_id, id)
    }
    fn usage_report(&self, query: &UsageQuery) -> Result<Vec<UsageLine>> {
        self.inner.usage_report(query)
    }
    fn put_attachment(
        &self,
        owner: &Owner,
        attachment: &Attachment,
        bytes: &mut dyn std::io::Read,
        size: u64,
        quota: u64,
    ) -> Result<()> {
        self.inner
            .put_attachment(owner, attachment, bytes, size, quota)
    }
    fn update_attachment(&self, org_id: &str, attachment: &Attachment) -> Result<()> {
        self.inner.update_attachment(org_id, attachment)
    }
    fn attachment(&self, owner: &Owner, attachment_id: &str) -> Result<Attachment> {
        self.inner.attachment(owner, attachment_id)
    }
    fn attachment_bytes(&self, org_id: &str, attachment_id: &str) -> Result<Vec<u8>> {
        self.inner.attachment_bytes(org_id, attachment_id)
    }
    fn recover(&self) -> Result<Vec<TurnRef>> {
        self.inner.recover()
    }
    fn recover_documents(&self) -> Result<Vec<AttachmentRef>> {
        self.inner.recover_documents()
    }
    fn api_keys(&self, owner: &Owner) -> Result<Vec<StoredApiKey>> {
        self.inner.api_keys(owner)
    }
    fn api_key(&self, key_sha256: &str) -> Result<Option<StoredApiKey>> {
        self.inner.api_key(key_sha256)
    }
    fn revoke_api_key(&self, owner: &Owner, id: &str) -> Result<bool> {
        self.inner.revoke_api_key(owner, id)
    }
    fn share_links(&self, owner: &Owner) -> Result<Vec<portal_store::ShareLink>> {
        self.inner.share_links(owner)
    }
    fn shared(&self, token: &str) -> Result<Option<(portal_store::ShareLink, Transcript)>> {
        self.inner.shared(token)
    }
    fn revoke_share_link(&self, owner: &Owner, id: &str) -> Result<bool> {
        self.inner.revoke_share_link(owner, id)
    }
    fn projects(&self, owner: &Owner) -> Result<Vec<portal_store::Project>> {
        self.inner.projects(owner)
    }
    fn project(&self, owner: &Owner, id: &str) -> Result<portal_store::Project> {
        self.inner.project(owner, id)
    }
    fn collections(&self, org_id: &str, user_id: &str) -> Result<Vec<portal_store::Collection>> {
        self.inner.collections(org_id, user_id)
    }
    fn collection(
        &self,
        org_id: &str,
        user_id: &str,
        id: &str,
    ) -> Result<portal_store::Collection> {
        self.inner.collection(org_id, user_id, id)
    }
    fn knowledge_documents(
        &self,
        org_id: &str,
        collection_id: &str,
    ) -> Result<Vec<portal_store::KnowledgeDocument>> {
        self.inner.knowledge_documents(org_id, collection_id)
    }
    fn search_knowledge(
        &self,
        org_id: &str,
        collection_ids: &[String],
        query: &str,
        limit: usize,
    ) -> Result<Vec<portal_store::Passage>> {
        self.inner
            .search_knowledge(org_id, collection_ids, query, limit)
    }
    fn create_session(&self, session: &StoredSession) -> Result<()> {
        self.inner.create_session(session)
    }
    fn session(&self, id_sha256: &str) -> Result<Option<StoredSession>> {
        self.inner.session(id_sha256)
    }
    fn extend_session(&self, id_sha256: &str, expires_at_ms: i64) -> Result<()> {
        self.inner.extend_session(id_sha256, expires_at_ms)
    }
    fn revoke_session(&self, id_sha256: &str) -> Result<()> {
        self.inner.revoke_session(id_sha256)
    }
    fn remove_expired_sessions(&self, now_ms: i64) -> Result<u64> {
        self.inner.remove_expired_sessions(now_ms)
    }
    fn sso_account(&self, issuer: &str, subject: &str) -> Result<Option<SsoAccount>> {
        self.inner.sso_account(issuer, subject)
    }
    fn sso_account_of(&self, owner: &Owner) -> Result<Option<SsoAccount>> {
        self.inner.sso_account_of(owner)
    }
    fn create_sso_account(&self, account: &SsoAccount) -> Result<()> {
        self.write()?;
        self.inner.create_sso_account(account)
    }
    fn take_sign_in_places(
        &self,
        keys: &[String],
        window_ms: i64,
        rule: portal_store::ThrottleRule,
    ) -> Result<portal_store::SignInPlaces> {
        self.inner.take_sign_in_places(keys, window_ms, rule)
    }
    fn forget_sign_in_failures(&self, keys: &[String], places: &[i64]) -> Result<()> {
        self.inner.forget_sign_in_failures(keys, places)
    }
    fn schema_version(&self) -> Result<u32> {
        self.inner.schema_version()
    }
    fn calls_at_once(&self) -> usize {
        self.inner.calls_at_once()
    }
    fn write_statements(
        &self,
        work: &mut dyn FnMut(&mut dyn Statements) -> Result<()>,
    ) -> Result<()> {
        self.inner.write_statements(work)
    }
}

/// What one turn came to.
struct Run {
    storage: Arc<Failing>,
    _dir: tempfile::TempDir,
    id: ConversationId,
    turns: Arc<Turns>,
    events: Vec<TurnEvent>,
}

impl Run {
    fn status(&self) -> TurnStatus {
        self.storage
            .load_transcript("local", &self.id)
            .expect("the transcript")
            .turns[0]
            .status
    }

    fn end(&self) -> (TurnStatus, Option<String>) {
        match self.events.last() {
            Some(TurnEvent::TurnEnd { status, reason }) => (*status, reason.clone()),
            other => panic!("the stream ends with turn_end, not {other:?}"),
        }
    }

    fn writes(&self) -> usize {
        self.storage.writes.load(Ordering::SeqCst)
    }
}

fn message(text: &str) -> NewTurn {
    NewTurn::chat(Message::new(Role::User, vec![Block::text(text)]))
}

/// Runs one turn of the demo model (no pauses, the demo tools offered, so it calls
/// `count_characters` and then answers) on storage whose `fail_at`-th write fails.
async fn run(fail_at: usize, failing_statuses: usize) -> Run {
    let dir = tempfile::tempdir().expect("tempdir");
    let storage = Arc::new(Failing {
        inner: SqliteStorage::open(dir.path()).expect("opens"),
        writes: AtomicUsize::new(0),
        fail_at,
        failing_statuses: AtomicUsize::new(failing_statuses),
    });
    let turns = Turns::new(
        storage.clone(),
        ToolRegistry::standard(),
        Default::default(),
        Default::default(),
        Default::default(),
        None,
    );
    let id = storage
        .create_conversation(&Owner::new("local", "local"), "assistant")
        .expect("a conversation");
    let models = ModelRegistry::demo_only(0.0);
    let setup = TurnSetup {
        org_id: "local".into(),
        user_id: "local".into(),
        instructions: String::new(),
        project_instructions: String::new(),
        model: Arc::clone(models.default_model()),
        price: None,
        selected_skills: Vec::new(),
        catalogue: Vec::new(),
        effort: Effort::Medium,
        tools: ToolRegistry::standard(),
    };
    let turn = turns
        .start(&id, message("How long is this sentence?"), setup)
        .await
        .expect("the turn opens");
    let events = common::logged_events(&turns, &id, turn).await;
    Run {
        storage,
        _dir: dir,
        id,
        turns,
        events,
    }
}

#[tokio::test]
async fn a_write_failing_at_any_point_of_a_turn_ends_it_failed_with_a_reason() {
    let clean = run(0, 0).await;
    assert_eq!(clean.end(), (TurnStatus::Completed, None));
    let writes = clean.writes();
    let calls = clean
        .storage
        .load_transcript("local", &clean.id)
        .expect("transcript")
        .turns[0]
        .messages
        .iter()
        .flat_map(|m| &m.blocks)
        .filter(|b| matches!(b, Block::ToolUse { .. }))
        .count();
    assert!(
        calls == 1 && writes > 10,
        "the turn calls a tool and writes a lot ({calls} calls, {writes} writes)"
    );

    // Every write of the turn, the last (its status, `completed`) included.
    for fail_at in 1..=writes {
        let failed = run(fail_at, 0).await;
        if failed.writes() < fail_at {
            // The turn joins the model's deltas that wait while it writes (issue 42), so a run on
            // a busier machine may write fewer times: its failing write never came.
            assert_eq!(
                failed.end(),
                (TurnStatus::Completed, None),
                "write {fail_at}"
            );
            continue;
        }
        assert_eq!(
            failed.end(),
            (TurnStatus::Failed, Some(REASON.to_string())),
            "write {fail_at} of {writes} failed"
        );
        assert_eq!(
            failed.status(),
            TurnStatus::Failed,
            "recorded failed after write {fail_at}, never left running"
        );
        let next = failed
            .turns
            .storage()
            .open_turn(&failed.id, message("Again"))
            .await;
        assert_eq!(next.ok(), Some(2), "the next message opens a turn");
    }
}

#[tokio::test]
async fn a_failing_status_write_is_retried_once_as_failed() {
    let once = run(0, 1).await;
    assert_eq!(once.end(), (TurnStatus::Failed, Some(REASON.to_string())));
    assert_eq!(once.status(), TurnStatus::Failed, "the retry recorded it");

    // When the retry fails too, the stream still ends; the turn is left for recovery at the next
    // start (or a cancel), which cuts it off.
    let twice = run(0, 2).await;
    assert_eq!(twice.end(), (TurnStatus::Failed, Some(REASON.to_string())));
    assert_eq!(twice.status(), TurnStatus::Running);
    let recovered = twice.storage.recover().expect("recovers");
    assert_eq!(recovered.len(), 1);
    assert_eq!(twice.status(), TurnStatus::CutOff);
}
