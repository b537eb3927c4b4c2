//! [`AsyncStorage`]: the [`Storage`] trait for async code. Each call runs on tokio's blocking
//! pool (`spawn_blocking`), so a slow write, a WAL checkpoint or a long transcript's load never
//! holds up a worker thread that serves requests and streams turns (docs/decisions.md, "Database
//! work off the async workers").

use std::sync::Arc;

use tokio::sync::Semaphore;

use portal_core::attachment::Attachment;
use portal_core::{Block, Role, TraceEntry, Transcript, TurnStatus};

use super::{
    Collection, ConversationChange, ConversationId, ConversationInfo, ConversationPage,
    ConversationQuery, ConversationSummary, ImportedWork, KnowledgeDocument, KnowledgeLimits,
    NewApiKey, NewCollection, NewKnowledgeDocument, NewProject, NewShareLink, NewTurn, Owner,
    Passage, PausedClaim, Project, ProjectChange, ProjectConversations, RecentTurns, Result,
    ShareLink, SignInPlaces, SsoAccount, SsoSignIn, SsoSignInLimits, Storage, StorageError,
    StoredApiKey, StoredSession, ThrottleRule, Usage,
};

/// A [`Storage`] whose calls are awaited. Cloning shares the same storage and the same lanes.
///
/// A call that has started runs to its end even when the future awaiting it is dropped (a
/// cancelled turn): every call is its own transaction, and the storage's guards refuse a write
/// into a turn that has ended meanwhile.
#[derive(Debug, Clone)]
pub struct AsyncStorage {
    storage: Arc<dyn Storage>,
    reads: Arc<Semaphore>,
    writes: Arc<Semaphore>,
}

/// Which lane a call waits in.
#[derive(Debug, Clone, Copy)]
enum Lane {
    Read,
    Write,
}

impl AsyncStorage {
    pub fn new(storage: Arc<dyn Storage>) -> Self {
        let at_once = storage.calls_at_once();
        AsyncStorage {
            storage,
            reads: Arc::new(Semaphore::new(at_once)),
            writes: Arc::new(Semaphore::new(at_once)),
        }
    }

    /// The storage itself, for work that already runs off the async threads (an upload's checks
    /// and a document's reading).
    pub fn blocking(&self) -> &Arc<dyn Storage> {
        &self.storage
    }

    /// Runs `call` on the blocking pool once its lane has room, and awaits its answer. The room
    /// is held until the call ends, even if its caller is gone.
    async fn run<T: Send + 'static>(
        &self,
        lane: Lane,
        call: impl FnOnce(&dyn Storage) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let interrupted = |detail: String| StorageError::Interrupted { detail };
        let room = match lane {
            Lane::Read => &self.reads,
            Lane::Write => &self.writes,
        };
        let room = Arc::clone(room)
            .acquire_owned()
            .await
            .map_err(|error| interrupted(error.to_string()))?;
        let storage = Arc::clone(&self.storage);
        tokio::task::spawn_blocking(move || {
            let answer = call(storage.as_ref());
            drop(room);
            answer
        })
        .await
        .map_err(|error| interrupted(error.to_string()))?
    }

    /// See [`Storage::create_conversation`].
    pub async fn create_conversation(
        &self,
        owner: &Owner,
        agent_id: &str,
    ) -> Result<ConversationId> {
        let (owner, agent_id) = (owner.clone(), agent_id.to_string());
        self.run(Lane::Write, move |s| {
            s.create_conversation(&owner, &agent_id)
        })
        .await
    }

    /// See [`Storage::list_conversations`].
    pub async fn list_conversations(
        &self,
        owner: &Owner,
        query: ConversationQuery,
    ) -> Result<ConversationPage> {
        let owner = owner.clone();
        self.run(Lane::Read, move |s| s.list_conversations(&owner, &query))
            .await
    }

    /// See [`Storage::conversation_summary`].
    pub async fn conversation_summary(
        &self,
        owner: &Owner,
        conversation: &ConversationId,
    ) -> Result<ConversationSummary> {
        let (owner, conversation) = (owner.clone(), conversation.clone());
        self.run(Lane::Read, move |s| {
            s.conversation_summary(&owner, &conversation)
        })
        .await
    }

    /// See [`Storage::change_conversation`].
    pub async fn change_conversation(
        &self,
        owner: &Owner,
        conversation: &ConversationId,
        change: ConversationChange,
    ) -> Result<ConversationSummary> {
        let (owner, conversation) = (owner.clone(), conversation.clone());
        self.run(Lane::Write, move |s| {
            s.change_conversation(&owner, &conversation, &change)
        })
        .await
    }

    /// See [`Storage::create_conversation_in_project`].
    pub async fn create_conversation_in_project(
        &self,
        owner: &Owner,
        agent_id: &str,
        project: &str,
    ) -> Result<ConversationId> {
        let (owner, agent_id, project) = (owner.clone(), agent_id.to_string(), project.to_string());
        self.run(Lane::Write, move |s| {
            s.create_conversation_in_project(&owner, &agent_id, &project)
        })
        .await
    }

    /// See [`Storage::create_project`].
    pub async fn create_project(&self, project: NewProject, most: u64) -> Result<Project> {
        self.run(Lane::Write, move |s| s.create_project(&project, most))
            .await
    }

    /// See [`Storage::projects`].
    pub async fn projects(&self, owner: &Owner) -> Result<Vec<Project>> {
        let owner = owner.clone();
        self.run(Lane::Read, move |s| s.projects(&owner)).await
    }

    /// See [`Storage::project`].
    pub async fn project(&self, owner: &Owner, id: &str) -> Result<Project> {
        let (owner, id) = (owner.clone(), id.to_string());
        self.run(Lane::Read, move |s| s.project(&owner, &id)).await
    }

    /// See [`Storage::change_project`].
    pub async fn change_project(
        &self,
        owner: &Owner,
        id: &str,
        change: ProjectChange,
    ) -> Result<Project> {
        let (owner, id) = (owner.clone(), id.to_string());
        self.run(Lane::Write, move |s| s.change_project(&owner, &id, &change))
            .await
    }

    /// See [`Storage::delete_project`].
    pub async fn delete_project(
        &self,
        owner: &Owner,
        id: &str,
        conversations: ProjectConversations,
    ) -> Result<()> {
        let (owner, id) = (owner.clone(), id.to_string());
        self.run(Lane::Write, move |s| {
            s.delete_project(&owner, &id, conversations)
        })
        .await
    }

    /// See [`Storage::import_conversations`].
    pub async fn import_conversations(
        &self,
        owner: &Owner,
        work: ImportedWork,
    ) -> Result<Vec<ConversationId>> {
        let owner = owner.clone();
        self.run(Lane::Write, move |s| s.import_conversations(&owner, &work))
            .await
    }

    /// See [`Storage::delete_conversation`].
    pub async fn delete_conversation(
        &self,
        owner: &Owner,
        conversation: &ConversationId,
    ) -> Result<()> {
        let (owner, conversation) = (owner.clone(), conversation.clone());
        self.run(Lane::Write, move |s| {
            s.delete_conversation(&owner, &conversation)
        })
        .await
    }

    /// See [`Storage::conversation`].
    pub async fn conversation(
        &self,
        org_id: &str,
        conversation: &ConversationId,
    ) -> Result<ConversationInfo> {
        let (org_id, conversation) = (org_id.to_string(), conversation.clone());
        self.run(Lane::Read, move |s| s.conversation(&org_id, &conversation))
            .await
    }

    /// See [`Storage::load_transcript`].
    pub async fn load_transcript(
        &self,
        org_id: &str,
        conversation: &ConversationId,
    ) -> Result<Transcript> {
        let (org_id, conversation) = (org_id.to_string(), conversation.clone());
        self.run(Lane::Read, move |s| {
            s.load_transcript(&org_id, &conversation)
        })
        .await
    }

    /// See [`Storage::load_recent`].
    pub async fn load_recent(
        &self,
        org_id: &str,
        conversation: &ConversationId,
        past_turns: usize,
    ) -> Result<RecentTurns> {
        let (org_id, conversation) = (org_id.to_string(), conversation.clone());
        self.run(Lane::Read, move |s| {
            s.load_recent(&org_id, &conversation, past_turns)
        })
        .await
    }

    /// See [`Storage::open_turn`].
    pub async fn open_turn(&self, conversation: &ConversationId, turn: NewTurn) -> Result<u32> {
        let conversation = conversation.clone();
        self.run(Lane::Write, move |s| s.open_turn(&conversation, turn))
            .await
    }

    /// See [`Storage::append_message`].
    pub async fn append_message(
        &self,
        conversation: &ConversationId,
        turn: u32,
        role: Role,
    ) -> Result<usize> {
        let conversation = conversation.clone();
        self.run(Lane::Write, move |s| {
            s.append_message(&conversation, turn, role)
        })
        .await
    }

    /// See [`Storage::append_block`].
    pub async fn append_block(
        &self,
        conversation: &ConversationId,
        turn: u32,
        message: usize,
        block: &Block,
    ) -> Result<usize> {
        let (conversation, block) = (conversation.clone(), block.clone());
        self.run(Lane::Write, move |s| {
            s.append_block(&conversation, turn, message, &block)
        })
        .await
    }

    /// See [`Storage::append_block_text`].
    pub async fn append_block_text(
        &self,
        conversation: &ConversationId,
        turn: u32,
        message: usize,
        block: usize,
        delta: &str,
    ) -> Result<()> {
        let (conversation, delta) = (conversation.clone(), delta.to_string());
        self.run(Lane::Write, move |s| {
            s.append_block_text(&conversation, turn, message, block, &delta)
        })
        .await
    }

    /// See [`Storage::withdraw_blocks`].
    pub async fn withdraw_blocks(
        &self,
        conversation: &ConversationId,
        turn: u32,
        message: usize,
        from: usize,
    ) -> Result<()> {
        let conversation = conversation.clone();
        self.run(Lane::Write, move |s| {
            s.withdraw_blocks(&conversation, turn, message, from)
        })
        .await
    }

    /// See [`Storage::claim_paused`].
    pub async fn claim_paused(
        &self,
        conversation: &ConversationId,
        turn: u32,
        messages: usize,
        claim: PausedClaim,
    ) -> Result<()> {
        let conversation = conversation.clone();
        self.run(Lane::Write, move |s| {
            s.claim_paused(&conversation, turn, messages, claim)
        })
        .await
    }

    /// See [`Storage::set_turn_status`].
    pub async fn set_turn_status(
        &self,
        conversation: &ConversationId,
        turn: u32,
        status: TurnStatus,
    ) -> Result<()> {
        let conversation = conversation.clone();
        self.run(Lane::Write, move |s| {
            s.set_turn_status(&conversation, turn, status)
        })
        .await
    }

    /// See [`Storage::add_trace`].
    pub async fn add_trace(
        &self,
        conversation: &ConversationId,
        turn: u32,
        entry: &TraceEntry,
    ) -> Result<()> {
        let (conversation, entry) = (conversation.clone(), entry.clone());
        self.run(Lane::Write, move |s| {
            s.add_trace(&conversation, turn, &entry)
        })
        .await
    }

    /// See [`Storage::record_usage`].
    pub async fn record_usage(
        &self,
        conversation: &ConversationId,
        turn: u32,
        usage: &Usage,
    ) -> Result<()> {
        let (conversation, usage) = (conversation.clone(), usage.clone());
        self.run(Lane::Write, move |s| {
            s.record_usage(&conversation, turn, &usage)
        })
        .await
    }

    /// See [`Storage::record_call`].
    pub async fn record_call(
        &self,
        conversation: &ConversationId,
        turn: u32,
        call: super::NewCall,
    ) -> Result<u32> {
        let conversation = conversation.clone();
        self.run(Lane::Write, move |s| {
            s.record_call(&conversation, turn, &call)
        })
        .await
    }

    /// See [`Storage::calls`].
    pub async fn calls(
        &self,
        org_id: &str,
        conversation: &ConversationId,
        turn: u32,
    ) -> Result<Vec<super::RecordedCall>> {
        let (org_id, conversation) = (org_id.to_string(), conversation.clone());
        self.run(Lane::Read, move |s| s.calls(&org_id, &conversation, turn))
            .await
    }

    /// See [`Storage::usage`].
    pub async fn usage(
        &self,
        org_id: &str,
        conversation: &ConversationId,
    ) -> Result<Vec<super::UsageRecord>> {
        let (org_id, conversation) = (org_id.to_string(), conversation.clone());
        self.run(Lane::Read, move |s| s.usage(&org_id, &conversation))
            .await
    }

    /// See [`Storage::usage_report`].
    pub async fn usage_report(&self, query: super::UsageQuery) -> Result<Vec<super::UsageLine>> {
        self.run(Lane::Read, move |s| s.usage_report(&query)).await
    }

    /// See [`Storage::attachment`].
    pub async fn attachment(&self, owner: &Owner, attachment_id: &str) -> Result<Attachment> {
        let (owner, attachment_id) = (owner.clone(), attachment_id.to_string());
        self.run(Lane::Read, move |s| s.attachment(&owner, &attachment_id))
            .await
    }

    /// One of `owner`'s attachments with its uploaded bytes; anyone else's is not found.
    pub async fn attachment_content(
        &self,
        owner: &Owner,
        attachment_id: &str,
    ) -> Result<(Attachment, Vec<u8>)> {
        let (owner, attachment_id) = (owner.clone(), attachment_id.to_string());
        self.run(Lane::Read, move |s| {
            let attachment = s.attachment(&owner, &attachment_id)?;
            let bytes = s.attachment_bytes(&owner.org_id, &attachment_id)?;
            Ok((attachment, bytes))
        })
        .await
    }

    /// See [`Storage::create_api_key`].
    pub async fn create_api_key(&self, key: NewApiKey, most: u64) -> Result<StoredApiKey> {
        self.run(Lane::Write, move |s| s.create_api_key(&key, most))
            .await
    }

    /// See [`Storage::api_keys`].
    pub async fn api_keys(&self, owner: &Owner) -> Result<Vec<StoredApiKey>> {
        let owner = owner.clone();
        self.run(Lane::Read, move |s| s.api_keys(&owner)).await
    }

    /// See [`Storage::api_key`].
    pub async fn api_key(&self, key_sha256: &str) -> Result<Option<StoredApiKey>> {
        let key_sha256 = key_sha256.to_string();
        self.run(Lane::Read, move |s| s.api_key(&key_sha256)).await
    }

    /// See [`Storage::revoke_api_key`].
    pub async fn revoke_api_key(&self, owner: &Owner, id: &str) -> Result<bool> {
        let (owner, id) = (owner.clone(), id.to_string());
        self.run(Lane::Write, move |s| s.revoke_api_key(&owner, &id))
            .await
    }

    /// See [`Storage::create_share_link`].
    pub async fn create_share_link(&self, link: NewShareLink, most: u64) -> Result<ShareLink> {
        self.run(Lane::Write, move |s| s.create_share_link(&link, most))
            .await
    }

    /// See [`Storage::share_links`].
    pub async fn share_links(&self, owner: &Owner) -> Result<Vec<ShareLink>> {
        let owner = owner.clone();
        self.run(Lane::Read, move |s| s.share_links(&owner)).await
    }

    /// See [`Storage::shared`].
    pub async fn shared(&self, token: &str) -> Result<Option<(ShareLink, Transcript)>> {
        let token = token.to_string();
        self.run(Lane::Read, move |s| s.shared(&token)).await
    }

    /// See [`Storage::revoke_share_link`].
    pub async fn revoke_share_link(&self, owner: &Owner, id: &str) -> Result<bool> {
        let (owner, id) = (owner.clone(), id.to_string());
        self.run(Lane::Write, move |s| s.revoke_share_link(&owner, &id))
            .await
    }

    /// See [`Storage::create_session`].
    pub async fn create_session(&self, session: StoredSession) -> Result<()> {
        self.run(Lane::Write, move |s| s.create_session(&session))
            .await
    }

    /// See [`Storage::session`].
    pub async fn session(&self, id_sha256: &str) -> Result<Option<StoredSession>> {
        let id_sha256 = id_sha256.to_string();
        self.run(Lane::Read, move |s| s.session(&id_sha256)).await
    }

    /// See [`Storage::extend_session`].
    pub async fn extend_session(&self, id_sha256: &str, expires_at_ms: i64) -> Result<()> {
        let id_sha256 = id_sha256.to_string();
        self.run(Lane::Write, move |s| {
            s.extend_session(&id_sha256, expires_at_ms)
        })
        .await
    }

    /// See [`Storage::revoke_session`].
    pub async fn revoke_session(&self, id_sha256: &str) -> Result<()> {
        let id_sha256 = id_sha256.to_string();
        self.run(Lane::Write, move |s| s.revoke_session(&id_sha256))
            .await
    }

    /// See [`Storage::remove_expired_sessions`].
    pub async fn remove_expired_sessions(&self, now_ms: i64) -> Result<u64> {
        self.run(Lane::Write, move |s| s.remove_expired_sessions(now_ms))
            .await
    }

    /// See [`Storage::sso_account`].
    pub async fn sso_account(&self, issuer: &str, subject: &str) -> Result<Option<SsoAccount>> {
        let (issuer, subject) = (issuer.to_string(), subject.to_string());
        self.run(Lane::Read, move |s| s.sso_account(&issuer, &subject))
            .await
    }

    /// See [`Storage::sso_account_of`].
    pub async fn sso_account_of(&self, owner: &Owner) -> Result<Option<SsoAccount>> {
        let owner = owner.clone();
        self.run(Lane::Read, move |s| s.sso_account_of(&owner))
            .await
    }

    /// See [`Storage::create_sso_account`].
    pub async fn create_sso_account(&self, account: SsoAccount) -> Result<()> {
        self.run(Lane::Write, move |s| s.create_sso_account(&account))
            .await
    }

    /// See [`Storage::take_sign_in_places`].
    pub async fn take_sign_in_places(
        &self,
        keys: Vec<String>,
        window_ms: i64,
        rule: ThrottleRule,
    ) -> Result<SignInPlaces> {
        self.run(Lane::Write, move |s| {
            s.take_sign_in_places(&keys, window_ms, rule)
        })
        .await
    }

    /// See [`Storage::forget_sign_in_failures`].
    pub async fn forget_sign_in_failures(&self, keys: Vec<String>, places: Vec<i64>) -> Result<()> {
        self.run(Lane::Write, move |s| {
            s.forget_sign_in_failures(&keys, &places)
        })
        .await
    }

    /// See [`Storage::keep_sso_sign_in`].
    pub async fn keep_sso_sign_in(
        &self,
        sign_in: SsoSignIn,
        limits: SsoSignInLimits,
    ) -> Result<()> {
        self.run(Lane::Write, move |s| s.keep_sso_sign_in(&sign_in, limits))
            .await
    }

    /// See [`Storage::claim_sso_sign_in`].
    pub async fn claim_sso_sign_in(
        &self,
        state_sha256: String,
        binding_sha256: Option<String>,
    ) -> Result<Option<SsoSignIn>> {
        self.run(Lane::Write, move |s| {
            s.claim_sso_sign_in(&state_sha256, binding_sha256.as_deref())
        })
        .await
    }

    /// See [`Storage::collections`].
    pub async fn collections(&self, org_id: &str, user_id: &str) -> Result<Vec<Collection>> {
        let (org_id, user_id) = (org_id.to_string(), user_id.to_string());
        self.run(Lane::Read, move |s| s.collections(&org_id, &user_id))
            .await
    }

    /// See [`Storage::collection`].
    pub async fn collection(&self, org_id: &str, user_id: &str, id: &str) -> Result<Collection> {
        let (org_id, user_id, id) = (org_id.to_string(), user_id.to_string(), id.to_string());
        self.run(Lane::Read, move |s| s.collection(&org_id, &user_id, &id))
            .await
    }

    /// See [`Storage::create_collection`].
    pub async fn create_collection(
        &self,
        collection: NewCollection,
        limits: KnowledgeLimits,
    ) -> Result<Collection> {
        self.run(Lane::Write, move |s| {
            s.create_collection(&collection, &limits)
        })
        .await
    }

    /// See [`Storage::delete_collection`].
    pub async fn delete_collection(&self, org_id: &str, collection_id: &str) -> Result<()> {
        let (org_id, collection_id) = (org_id.to_string(), collection_id.to_string());
        self.run(Lane::Write, move |s| {
            s.delete_collection(&org_id, &collection_id)
        })
        .await
    }

    /// See [`Storage::knowledge_documents`].
    pub async fn knowledge_documents(
        &self,
        org_id: &str,
        collection_id: &str,
    ) -> Result<Vec<KnowledgeDocument>> {
        let (org_id, collection_id) = (org_id.to_string(), collection_id.to_string());
        self.run(Lane::Read, move |s| {
            s.knowledge_documents(&org_id, &collection_id)
        })
        .await
    }

    /// See [`Storage::add_knowledge_document`].
    pub async fn add_knowledge_document(
        &self,
        org_id: &str,
        document: NewKnowledgeDocument,
        limits: KnowledgeLimits,
    ) -> Result<KnowledgeDocument> {
        let org_id = org_id.to_string();
        self.run(Lane::Write, move |s| {
            s.add_knowledge_document(&org_id, &document, &limits)
        })
        .await
    }

    /// See [`Storage::delete_knowledge_document`].
    pub async fn delete_knowledge_document(
        &self,
        org_id: &str,
        collection_id: &str,
        document_id: &str,
    ) -> Result<()> {
        let (org_id, collection_id, document_id) = (
            org_id.to_string(),
            collection_id.to_string(),
            document_id.to_string(),
        );
        self.run(Lane::Write, move |s| {
            s.delete_knowledge_document(&org_id, &collection_id, &document_id)
        })
        .await
    }

    /// See [`Storage::search_knowledge`].
    pub async fn search_knowledge(
        &self,
        org_id: &str,
        collection_ids: Vec<String>,
        query: &str,
        limit: usize,
    ) -> Result<Vec<Passage>> {
        let (org_id, query) = (org_id.to_string(), query.to_string());
        self.run(Lane::Read, move |s| {
            s.search_knowledge(&org_id, &collection_ids, &query, limit)
        })
        .await
    }

    /// See [`Storage::schema_version`].
    pub async fn schema_version(&self) -> Result<u32> {
        self.run(Lane::Read, |s| s.schema_version()).await
    }
}
