//! Storage's rules, written once for both databases: which turn a conversation may open, what a
//! running turn takes, when a turn's status may change, what an attachment may be stored under
//! the quota, what deleting a conversation takes with it, whose project a conversation may be
//! moved into and what deleting a project does with its conversations, how failed sign-ins are
//! counted, how a single sign-on under way is kept and claimed once, and which refusal says why. Each database
//! implements [`Statements`], its statements run inside one of its transactions, and decides
//! nothing itself (docs/storage.md, "One set of rules").

use std::io::{Read, Write};

use portal_core::attachment::Attachment;
use portal_core::effort::Effort;
use portal_core::{Block, BlockKind, Message, Role, TraceEntry, TurnKind, TurnStatus};

use super::assemble::{not_found, title_of};
use super::codec::{parse_name, parse_status};
use subtle::ConstantTimeEq;

use super::{
    CallPurpose, ConversationChange, ConversationId, ImportedWork, NewApiKey, NewProject,
    NewShareLink, NewTurn, Owner, PausedClaim, Project, ProjectChange, ProjectConversations,
    Result, ShareLink, SignInPlaces, SsoSignIn, SsoSignInLimits, StorageError, StoredApiKey,
    ThrottleRule, Usage,
};
use crate::knowledge::{Collection, CollectionOwner, KnowledgeDocument, NewPassage};
use crate::quota::{Hold, Limit, Spender, Spending};

/// One database's statements, run inside one of its transactions ([`super::Storage::write_statements`]).
/// They read and write rows as asked and decide nothing: storage's rules, below, call them.
pub trait Statements {
    /// Adds an empty conversation of `owner`'s with `agent_id`, its id made here, and answers
    /// the id.
    fn insert_conversation(&mut self, owner: &Owner, agent_id: &str) -> Result<ConversationId>;

    /// Locks the conversation's row until the transaction ends, so writes to one conversation
    /// take turns, where the database locks rows: SQLite's one writer already serialises writes,
    /// and runs no statement for it. A conversation that is not there locks nothing.
    fn lock_conversation(&mut self, conversation: &ConversationId) -> Result<()>;

    /// The conversation's organisation, `None` when there is no such conversation.
    fn conversation_org(&mut self, conversation: &ConversationId) -> Result<Option<String>>;

    /// The conversation's newest turn and its stored status name.
    fn latest_turn(&mut self, conversation: &ConversationId) -> Result<Option<(u32, String)>>;

    /// The turn's stored status name, `None` when there is no such turn.
    fn turn_status(&mut self, conversation: &ConversationId, turn: u32) -> Result<Option<String>>;

    /// Adds the turn, running (and, on PostgreSQL, waiting for a replica's lease).
    fn insert_turn(
        &mut self,
        conversation: &ConversationId,
        turn: u32,
        kind: TurnKind,
        effort: Option<Effort>,
        hold: &Hold,
    ) -> Result<()>;

    /// Sets the turn's status.
    fn set_status(
        &mut self,
        conversation: &ConversationId,
        turn: u32,
        status: TurnStatus,
    ) -> Result<()>;

    /// Gives a paused turn whose stored messages number `messages` the status `claim` asks
    /// for (a resumed turn waits for its run's lease); whether it was such a turn.
    fn claim_paused(
        &mut self,
        conversation: &ConversationId,
        turn: u32,
        messages: usize,
        claim: PausedClaim,
    ) -> Result<bool>;

    /// Moves the turn's streamed text into its blocks.
    fn fold_chunks(&mut self, conversation: &ConversationId, turn: u32) -> Result<()>;

    /// Adds `entry` after the turn's trace.
    fn insert_trace(
        &mut self,
        conversation: &ConversationId,
        turn: u32,
        entry: &TraceEntry,
    ) -> Result<()>;

    /// Sets the turn's context tokens.
    fn set_context_tokens(
        &mut self,
        conversation: &ConversationId,
        turn: u32,
        tokens: u64,
    ) -> Result<()>;

    /// The turn's last message's position (a turn always has its user's).
    fn last_message(&mut self, conversation: &ConversationId, turn: u32) -> Result<usize>;

    /// Whether the message exists.
    fn message_exists(
        &mut self,
        conversation: &ConversationId,
        turn: u32,
        message: usize,
    ) -> Result<bool>;

    /// Whether the message has a block.
    fn message_has_blocks(
        &mut self,
        conversation: &ConversationId,
        turn: u32,
        message: usize,
    ) -> Result<bool>;

    /// Adds an empty message.
    fn insert_message(
        &mut self,
        conversation: &ConversationId,
        turn: u32,
        message: usize,
        role: Role,
    ) -> Result<()>;

    /// Sets a message's role.
    fn set_message_role(
        &mut self,
        conversation: &ConversationId,
        turn: u32,
        message: usize,
        role: Role,
    ) -> Result<()>;

    /// The position after the message's last block.
    fn next_block(
        &mut self,
        conversation: &ConversationId,
        turn: u32,
        message: usize,
    ) -> Result<usize>;

    /// Adds a block.
    fn insert_block(
        &mut self,
        conversation: &ConversationId,
        turn: u32,
        message: usize,
        block: usize,
        content: &Block,
    ) -> Result<()>;

    /// The stored kind name of a block, `None` when there is no such block.
    fn block_kind(
        &mut self,
        conversation: &ConversationId,
        turn: u32,
        message: usize,
        block: usize,
    ) -> Result<Option<String>>;

    /// Removes the message's blocks from `from` on, with their streamed text.
    fn delete_blocks_from(
        &mut self,
        conversation: &ConversationId,
        turn: u32,
        message: usize,
        from: usize,
    ) -> Result<()>;

    /// Whether the organisation holds the attachment.
    fn attachment_stored(&mut self, org_id: &str, attachment_id: &str) -> Result<bool>;

    /// Links the attachment to the conversation as a picture a tool answered with there.
    fn link_tool_picture(
        &mut self,
        conversation: &ConversationId,
        org_id: &str,
        attachment_id: &str,
    ) -> Result<()>;

    /// Lists the attachment as the user message's `position`th.
    fn link_attachment(
        &mut self,
        conversation: &ConversationId,
        turn: u32,
        position: usize,
        org_id: &str,
        attachment_id: &str,
    ) -> Result<()>;

    /// Adds a model call's usage to the turn.
    fn insert_usage(
        &mut self,
        conversation: &ConversationId,
        turn: u32,
        usage: &Usage,
    ) -> Result<()>;

    /// Makes the user's uploads take turns until the transaction ends, where the database runs
    /// transactions at once (SQLite's one writer already makes them), so two at once cannot
    /// pass the quota together.
    fn lock_uploads(&mut self, owner: &Owner) -> Result<()>;

    /// The bytes the user's attachments take.
    fn attachment_bytes_used(&mut self, owner: &Owner) -> Result<u64>;

    /// Adds the user's attachment and its `size` bytes, read from `bytes` in pieces as they are
    /// written; refused with [`StorageError::UploadUnread`] when `bytes` fail or hold another
    /// number of bytes.
    fn insert_attachment(
        &mut self,
        owner: &Owner,
        attachment: &Attachment,
        bytes: &mut dyn Read,
        size: u64,
    ) -> Result<()>;

    /// Moves the conversation's last activity to now.
    fn touch(&mut self, conversation: &ConversationId) -> Result<()>;

    /// Titles the conversation `title` if it has none.
    fn title_if_untitled(&mut self, conversation: &ConversationId, title: &str) -> Result<()>;

    /// Locks `owner`'s conversation for a change; false when there is no such conversation of
    /// theirs.
    fn lock_owned_conversation(
        &mut self,
        owner: &Owner,
        conversation: &ConversationId,
    ) -> Result<bool>;

    /// The attachments the conversation's messages use, each once, as (organisation, id).
    fn conversation_attachments(
        &mut self,
        conversation: &ConversationId,
    ) -> Result<Vec<(String, String)>>;

    /// Removes the conversation and every row of its turns.
    fn delete_conversation_rows(&mut self, conversation: &ConversationId) -> Result<()>;

    /// Whether any message uses the attachment.
    fn attachment_used(&mut self, org_id: &str, attachment_id: &str) -> Result<bool>;

    /// Removes the attachment and its bytes.
    fn delete_attachment(&mut self, org_id: &str, attachment_id: &str) -> Result<()>;

    /// Locks `keys` until the transaction ends against other transactions locking any of them,
    /// on any server (sign-ins taking places, quotas being checked), where the database runs
    /// transactions at once (SQLite's one writer already serialises them).
    fn lock_keys(&mut self, keys: &[String]) -> Result<()>;

    /// What `spender` spent since `since_ms` in `limit`'s unit (tokens, or nano-units of its
    /// currency), and how many turns spent it.
    fn spent_since(
        &mut self,
        spender: &Spender,
        limit: &Limit,
        since_ms: i64,
    ) -> Result<(u64, u64)>;

    /// How many of `spender`'s turns are running, and what they hold back in `limit`'s unit
    /// (tokens, or nano-units of its currency).
    fn running_turns(&mut self, spender: &Spender, limit: &Limit) -> Result<(u64, u64)>;

    /// The time now by the database's clock, in milliseconds since the Unix epoch.
    fn now_ms(&mut self) -> Result<i64>;

    /// Removes the failed sign-ins recorded at or before `cutoff_ms`, of every key, except those
    /// another sign-in holds locked.
    fn delete_sign_in_failures_until(&mut self, cutoff_ms: i64) -> Result<()>;

    /// The times of `key`'s failed sign-ins after `cutoff_ms`, oldest first.
    fn sign_in_failures_after(&mut self, key: &str, cutoff_ms: i64) -> Result<Vec<i64>>;

    /// Records a failed sign-in of `key` at `at_ms`; returns its id.
    fn insert_sign_in_failure(&mut self, key: &str, at_ms: i64) -> Result<i64>;

    /// Removes every failed sign-in of `key`.
    fn delete_sign_in_failures_of(&mut self, key: &str) -> Result<()>;

    /// Removes the failed sign-in `id`.
    fn delete_sign_in_failure(&mut self, id: i64) -> Result<()>;

    /// Removes the single sign-ons under way that expired at or before `now_ms`.
    fn delete_sso_sign_ins_until(&mut self, now_ms: i64) -> Result<()>;

    /// How many single sign-ons are under way, and how many of them `client` started (none
    /// when it is `None`).
    fn sso_sign_ins_held(&mut self, client: Option<&str>) -> Result<(u64, u64)>;

    /// Keeps a single sign-on under way until `expires_at_ms`.
    fn insert_sso_sign_in(&mut self, sign_in: &SsoSignIn, expires_at_ms: i64) -> Result<()>;

    /// Removes the single sign-on under way whose `state` hashes to `state_sha256`, in one
    /// statement, and answers it with its expiry; `None` when there is none.
    fn take_sso_sign_in(&mut self, state_sha256: &str) -> Result<Option<(SsoSignIn, i64)>>;

    /// How many of `owner`'s API keys are live at `now_ms` (neither revoked nor expired).
    fn live_api_keys(&mut self, owner: &Owner, now_ms: i64) -> Result<u64>;

    /// Keeps an API key.
    fn insert_api_key(&mut self, key: &StoredApiKey) -> Result<()>;

    /// How many of `owner`'s share links are live at `now_ms` (neither revoked nor expired).
    fn live_share_links(&mut self, owner: &Owner, now_ms: i64) -> Result<u64>;

    /// Keeps a share link with its snapshot, as transcript JSON.
    fn insert_share_link(&mut self, link: &ShareLink, snapshot: &str) -> Result<()>;

    /// Sets the conversation's title.
    fn set_conversation_title(&mut self, conversation: &ConversationId, title: &str) -> Result<()>;

    /// Puts the conversation in the project `project`, or in none.
    fn set_conversation_project(
        &mut self,
        conversation: &ConversationId,
        project: Option<&str>,
    ) -> Result<()>;

    /// Pins or unpins the conversation.
    fn set_conversation_pinned(
        &mut self,
        conversation: &ConversationId,
        pinned: bool,
    ) -> Result<()>;

    /// Locks `owner`'s project `id` until the transaction ends, where the database locks rows,
    /// and reads it; `None` when there is no such project of theirs.
    fn lock_owned_project(&mut self, owner: &Owner, id: &str) -> Result<Option<Project>>;

    /// How many projects `owner` has.
    fn count_projects(&mut self, owner: &Owner) -> Result<u64>;

    /// Keeps a project.
    fn insert_project(&mut self, project: &Project) -> Result<()>;

    /// Writes a project's name, instructions and default agent.
    fn update_project(&mut self, project: &Project) -> Result<()>;

    /// The conversations in the project.
    fn project_conversations(&mut self, id: &str) -> Result<Vec<ConversationId>>;

    /// Removes the project's row (its conversations are out of it already).
    fn delete_project_row(&mut self, id: &str) -> Result<()>;

    /// How many collections `owner` has.
    fn count_collections(&mut self, owner: &CollectionOwner) -> Result<u64>;

    /// `owner`'s collection named `name`, if they have one.
    fn collection_named(
        &mut self,
        owner: &CollectionOwner,
        name: &str,
    ) -> Result<Option<Collection>>;

    /// Keeps a collection.
    fn insert_collection(&mut self, collection: &Collection) -> Result<()>;

    /// Whether the collection `id` is in the organisation `org_id` (its own or one of its
    /// people's).
    fn collection_in(&mut self, org_id: &str, id: &str) -> Result<bool>;

    /// How many documents, and how many bytes of them, the organisation's collections hold, as
    /// the database keeps them counted (its triggers), not counted again.
    fn knowledge_held(&mut self, org_id: &str) -> Result<(u64, u64)>;

    /// Keeps a document of the organisation `org_id` and its passages, searchable at once.
    fn insert_knowledge_document(
        &mut self,
        org_id: &str,
        document: &KnowledgeDocument,
        passages: &[NewPassage],
    ) -> Result<()>;

    /// Removes a document of the collection with its passages; `false` when it has none of that
    /// id.
    fn delete_knowledge_document(&mut self, collection_id: &str, document_id: &str)
    -> Result<bool>;

    /// Removes a collection with its documents and their passages.
    fn delete_collection_rows(&mut self, collection_id: &str) -> Result<()>;
}

/// Opens the conversation's next turn with its user's message: refused while the newest turn is
/// running, or when an attachment is not the conversation's organisation's. Returns its number.
pub fn open_turn(
    s: &mut dyn Statements,
    conversation: &ConversationId,
    turn: &NewTurn,
) -> Result<u32> {
    check_user_message(turn)?;
    s.lock_conversation(conversation)?;
    let org_id = s
        .conversation_org(conversation)?
        .ok_or_else(|| not_found(conversation))?;
    let index = match s.latest_turn(conversation)? {
        Some((latest, status)) => {
            if parse_status(&status)? == TurnStatus::Running {
                return Err(StorageError::TurnStillRunning {
                    conversation: conversation.clone(),
                    turn: latest,
                });
            }
            latest + 1
        }
        None => 1,
    };
    check_running(s, turn)?;
    s.insert_turn(conversation, index, turn.kind, turn.effort, &turn.hold)?;
    for entry in &turn.trace {
        s.insert_trace(conversation, index, entry)?;
    }
    s.insert_message(conversation, index, 0, Role::User)?;
    for (b, block) in turn.message.blocks.iter().enumerate() {
        s.insert_block(conversation, index, 0, b, block)?;
    }
    for (a, attachment) in turn.message.attachments.iter().enumerate() {
        if !s.attachment_stored(&org_id, attachment.id())? {
            return Err(StorageError::AttachmentNotFound {
                attachment: attachment.id().to_string(),
            });
        }
        s.link_attachment(conversation, index, a, &org_id, attachment.id())?;
    }
    s.touch(conversation)?;
    if turn.kind == TurnKind::Chat {
        title_after(s, conversation, &turn.message)?;
    }
    Ok(index)
}

/// Refuses a turn whose user has the most turns running already, or past any of its quotas,
/// under a lock on its user and its quotas' spenders held until the turn is opened, so two turns
/// at once cannot both take the last place or pass a quota's last part (docs/usage.md).
fn check_running(s: &mut dyn Statements, turn: &NewTurn) -> Result<()> {
    let mut keys: Vec<String> = turn.quotas.iter().map(|q| q.spender.lock_key()).collect();
    keys.extend(turn.at_once.iter().map(|a| a.user.lock_key()));
    if keys.is_empty() {
        return Ok(());
    }
    s.lock_keys(&keys)?;
    if let Some(at_once) = &turn.at_once {
        let (running, _) = s.running_turns(&at_once.user, &Limit::Tokens(0))?;
        if running >= at_once.most {
            return Err(StorageError::TurnsAtOnce {
                running,
                most: at_once.most,
            });
        }
    }
    let now = s.now_ms()?;
    for quota in &turn.quotas {
        let (start, _) = quota.period.around(now);
        let (spent, _) = s.spent_since(&quota.spender, &quota.limit, start)?;
        let (running, held) = s.running_turns(&quota.spender, &quota.limit)?;
        quota.check(
            Spending {
                spent,
                running,
                held,
            },
            now,
        )?;
    }
    Ok(())
}

/// Titles an untitled conversation after `message`, its newest user message (the rule of
/// [`title_of`]); a conversation with a title keeps it.
pub fn title_after(
    s: &mut dyn Statements,
    conversation: &ConversationId,
    message: &Message,
) -> Result<()> {
    let title = title_of(message);
    if title.is_empty() {
        return Ok(());
    }
    s.title_if_untitled(conversation, &title)
}

/// Starts the running turn's next message with `role`; the last message is reused when it has
/// no block yet. Returns its position.
pub fn append_message(
    s: &mut dyn Statements,
    conversation: &ConversationId,
    turn: u32,
    role: Role,
) -> Result<usize> {
    s.lock_conversation(conversation)?;
    require_running(s, conversation, turn)?;
    let last = s.last_message(conversation, turn)?;
    if s.message_has_blocks(conversation, turn, last)? {
        s.insert_message(conversation, turn, last + 1, role)?;
        return Ok(last + 1);
    }
    s.set_message_role(conversation, turn, last, role)?;
    Ok(last)
}

/// Adds `block` after the running turn's message's last; returns its position.
pub fn append_block(
    s: &mut dyn Statements,
    conversation: &ConversationId,
    turn: u32,
    message: usize,
    block: &Block,
) -> Result<usize> {
    s.lock_conversation(conversation)?;
    require_running(s, conversation, turn)?;
    if !s.message_exists(conversation, turn, message)? {
        return Err(StorageError::MessageNotFound {
            conversation: conversation.clone(),
            turn,
            message,
        });
    }
    let next = s.next_block(conversation, turn, message)?;
    s.insert_block(conversation, turn, message, next, block)?;
    Ok(next)
}

/// Why streamed text for the block was not written: the turn is not running, there is no such
/// block, or the block takes no streamed text.
pub fn text_refused(
    s: &mut dyn Statements,
    conversation: &ConversationId,
    turn: u32,
    message: usize,
    block: usize,
) -> Result<StorageError> {
    require_running(s, conversation, turn)?;
    Ok(match s.block_kind(conversation, turn, message, block)? {
        Some(kind) => StorageError::NotStreamable {
            kind: parse_name::<BlockKind>("block kind", &kind)?,
        },
        None => StorageError::BlockNotFound {
            conversation: conversation.clone(),
            turn,
            message,
            block,
        },
    })
}

/// Removes the running turn's message's blocks from `from` on.
pub fn withdraw_blocks(
    s: &mut dyn Statements,
    conversation: &ConversationId,
    turn: u32,
    message: usize,
    from: usize,
) -> Result<()> {
    s.lock_conversation(conversation)?;
    require_running(s, conversation, turn)?;
    s.delete_blocks_from(conversation, turn, message, from)
}

/// Moves an open turn to `status` (the same status again changes nothing); a turn that stops
/// streaming has its streamed text folded into its blocks.
pub fn set_turn_status(
    s: &mut dyn Statements,
    conversation: &ConversationId,
    turn: u32,
    status: TurnStatus,
) -> Result<()> {
    s.lock_conversation(conversation)?;
    let current = turn_status(s, conversation, turn)?;
    if current == status {
        return Ok(());
    }
    require_open(conversation, turn, current)?;
    s.set_status(conversation, turn, status)?;
    if status != TurnStatus::Running {
        s.fold_chunks(conversation, turn)?;
    }
    s.touch(conversation)
}

/// Claims a paused turn whose stored messages number `messages` for `claim`, once: a second
/// claim, or one made after the turn moved on, is refused.
pub fn claim_paused(
    s: &mut dyn Statements,
    conversation: &ConversationId,
    turn: u32,
    messages: usize,
    claim: PausedClaim,
) -> Result<()> {
    s.lock_conversation(conversation)?;
    if s.claim_paused(conversation, turn, messages, claim)? {
        if claim == PausedClaim::CutOff {
            s.fold_chunks(conversation, turn)?;
        }
        return s.touch(conversation);
    }
    require_open(conversation, turn, turn_status(s, conversation, turn)?)?;
    Err(StorageError::AlreadyResumed {
        conversation: conversation.clone(),
        turn,
    })
}

/// Sets an open turn's context tokens.
pub fn set_context_tokens(
    s: &mut dyn Statements,
    conversation: &ConversationId,
    turn: u32,
    tokens: u64,
) -> Result<()> {
    require_open(conversation, turn, turn_status(s, conversation, turn)?)?;
    s.set_context_tokens(conversation, turn, tokens)
}

/// Adds `entry` to an open turn's trace.
pub fn add_trace(
    s: &mut dyn Statements,
    conversation: &ConversationId,
    turn: u32,
    entry: &TraceEntry,
) -> Result<()> {
    s.lock_conversation(conversation)?;
    require_open(conversation, turn, turn_status(s, conversation, turn)?)?;
    s.insert_trace(conversation, turn, entry)
}

/// Records a model call's usage for the turn; a turn's own call, while the turn is open, also
/// gives it its context tokens.
pub fn record_usage(
    s: &mut dyn Statements,
    conversation: &ConversationId,
    turn: u32,
    usage: &Usage,
) -> Result<()> {
    let status = turn_status(s, conversation, turn)?;
    s.insert_usage(conversation, turn, usage)?;
    if usage.purpose == CallPurpose::Turn && status.is_open() {
        s.set_context_tokens(conversation, turn, usage.tokens.input)?;
    }
    Ok(())
}

/// Stores the user's attachment with its `size` bytes, read from `bytes`: refused when the id is
/// taken in the organisation, or when the bytes would take the user past `quota`.
pub fn put_attachment(
    s: &mut dyn Statements,
    owner: &Owner,
    attachment: &Attachment,
    bytes: &mut dyn Read,
    size: u64,
    quota: u64,
) -> Result<()> {
    s.lock_uploads(owner)?;
    if s.attachment_stored(&owner.org_id, attachment.id())? {
        return Err(StorageError::AttachmentExists {
            attachment: attachment.id().to_string(),
        });
    }
    let used = s.attachment_bytes_used(owner)?;
    if used.saturating_add(size) > quota {
        return Err(StorageError::QuotaExceeded { used, size, quota });
    }
    s.insert_attachment(owner, attachment, bytes, size)
}

/// Stores a picture a tool answered with in `owner`'s `conversation` as [`put_attachment`] stores
/// an upload (within their quota), and links it to the conversation, which it is deleted with.
pub fn put_tool_picture(
    s: &mut dyn Statements,
    owner: &Owner,
    conversation: &ConversationId,
    attachment: &Attachment,
    bytes: &mut dyn Read,
    size: u64,
    quota: u64,
) -> Result<()> {
    put_attachment(s, owner, attachment, bytes, size, quota)?;
    s.link_tool_picture(conversation, &owner.org_id, attachment.id())
}

/// The pieces an attachment's bytes are copied into a database in. **Decision:** 64 KiB, the one
/// buffer an upload takes on its way in: a 20 MiB file is 320 writes.
const COPY_PIECE: usize = 64 * 1024;

/// Copies the `size` bytes `bytes` hold into `stored` in pieces of 64 KiB; refused with
/// [`StorageError::UploadUnread`] when `bytes` fail or end early, or `stored` takes no more.
pub fn copy_attachment_bytes(
    bytes: &mut dyn Read,
    size: u64,
    stored: &mut dyn Write,
) -> Result<()> {
    let unread = |error: std::io::Error| StorageError::UploadUnread {
        detail: error.to_string(),
    };
    // `io::copy` reads straight into a `BufWriter`'s buffer: one piece at a time is in memory.
    let mut pieces = std::io::BufWriter::with_capacity(COPY_PIECE, stored);
    let copied = std::io::copy(&mut bytes.take(size), &mut pieces).map_err(unread)?;
    pieces.flush().map_err(unread)?;
    if copied != size {
        return Err(StorageError::UploadUnread {
            detail: format!("{copied} of its {size} bytes could be read"),
        });
    }
    Ok(())
}

/// Deletes `owner`'s conversation with its turns, and the attachments its messages used that no
/// other conversation uses: refused while its latest turn runs; anyone else's is not found.
pub fn delete_conversation(
    s: &mut dyn Statements,
    owner: &Owner,
    conversation: &ConversationId,
) -> Result<()> {
    if !s.lock_owned_conversation(owner, conversation)? {
        return Err(not_found(conversation));
    }
    if let Some((turn, status)) = s.latest_turn(conversation)?
        && parse_status(&status)? == TurnStatus::Running
    {
        return Err(StorageError::TurnStillRunning {
            conversation: conversation.clone(),
            turn,
        });
    }
    let attachments = s.conversation_attachments(conversation)?;
    s.delete_conversation_rows(conversation)?;
    for (org_id, attachment_id) in attachments {
        if !s.attachment_used(&org_id, &attachment_id)? {
            s.delete_attachment(&org_id, &attachment_id)?;
        }
    }
    Ok(())
}

/// Changes `owner`'s conversation as `change` asks: refused as not found when it is not theirs,
/// and with [`StorageError::ProjectNotFound`] when the project it is moved into is not theirs.
/// The project is locked before the conversation, as [`delete_project`] locks them, so a move
/// and a deletion at once take turns.
pub fn change_conversation(
    s: &mut dyn Statements,
    owner: &Owner,
    conversation: &ConversationId,
    change: &ConversationChange,
) -> Result<()> {
    if let Some(Some(project)) = &change.project {
        owned_project(s, owner, project)?;
    }
    if !s.lock_owned_conversation(owner, conversation)? {
        return Err(not_found(conversation));
    }
    if let Some(title) = &change.title {
        s.set_conversation_title(conversation, title)?;
    }
    if let Some(project) = &change.project {
        s.set_conversation_project(conversation, project.as_deref())?;
    }
    if let Some(pinned) = change.pinned {
        s.set_conversation_pinned(conversation, pinned)?;
    }
    Ok(())
}

/// Opens an empty conversation of `owner`'s in their project `project`; refused with
/// [`StorageError::ProjectNotFound`] when the project is not theirs.
pub fn create_conversation_in_project(
    s: &mut dyn Statements,
    owner: &Owner,
    agent_id: &str,
    project: &str,
) -> Result<ConversationId> {
    owned_project(s, owner, project)?;
    let id = s.insert_conversation(owner, agent_id)?;
    s.set_conversation_project(&id, Some(project))?;
    Ok(id)
}

/// Keeps a new project unless its owner has `most` (`Storage::create_project`), under a lock on
/// the owner.
pub fn create_project(s: &mut dyn Statements, project: &NewProject, most: u64) -> Result<Project> {
    s.lock_keys(&[projects_lock(&project.owner)])?;
    if s.count_projects(&project.owner)? >= most {
        return Err(StorageError::ProjectsFull { most });
    }
    let kept = Project {
        id: project.id.clone(),
        owner: project.owner.clone(),
        name: project.name.clone(),
        instructions: project.instructions.clone(),
        agent_id: project.agent_id.clone(),
        created_at_ms: s.now_ms()?,
    };
    s.insert_project(&kept)?;
    Ok(kept)
}

/// Changes `owner`'s project as `change` asks and answers it changed; anyone else's is not
/// found.
pub fn change_project(
    s: &mut dyn Statements,
    owner: &Owner,
    id: &str,
    change: &ProjectChange,
) -> Result<Project> {
    let mut project = owned_project(s, owner, id)?;
    if let Some(name) = &change.name {
        project.name = name.clone();
    }
    if let Some(instructions) = &change.instructions {
        project.instructions = instructions.clone();
    }
    if let Some(agent_id) = &change.agent_id {
        project.agent_id = agent_id.clone();
    }
    s.update_project(&project)?;
    Ok(project)
}

/// Deletes `owner`'s project, whole or not at all: its conversations are taken out of it, or
/// each deleted by [`delete_conversation`] (so one running a turn refuses the whole deletion,
/// and each takes its attachments and share links with it). Anyone else's is not found.
pub fn delete_project(
    s: &mut dyn Statements,
    owner: &Owner,
    id: &str,
    conversations: ProjectConversations,
) -> Result<()> {
    owned_project(s, owner, id)?;
    for conversation in s.project_conversations(id)? {
        match conversations {
            ProjectConversations::Keep => s.set_conversation_project(&conversation, None)?,
            ProjectConversations::Delete => delete_conversation(s, owner, &conversation)?,
        }
    }
    s.delete_project_row(id)
}

/// What projects made at once for one owner lock, on every server, so they take turns to count
/// the owner's projects.
fn projects_lock(owner: &Owner) -> String {
    format!("projects/{}/{}", owner.org_id, owner.user_id)
}

/// `owner`'s project `id`, locked; anyone else's is not found.
fn owned_project(s: &mut dyn Statements, owner: &Owner, id: &str) -> Result<Project> {
    s.lock_owned_project(owner, id)?
        .ok_or_else(|| StorageError::ProjectNotFound {
            project: id.to_string(),
        })
}

/// Writes what an import made as `owner`'s, whole or not at all: its projects, refused when they
/// would bring `owner`'s past the most (under the lock [`create_project`] takes); then each
/// conversation in its project (one of `owner`'s, locked as a move locks it, or one just made),
/// pinned or not, with its turns as they ended (a turn still open is refused, since no run would
/// ever end it), its messages' attachments (which must be the organisation's) and its title, or
/// one made from its first message when it has none. Answers the conversations' ids in order.
pub fn import_conversations(
    s: &mut dyn Statements,
    owner: &Owner,
    work: &ImportedWork,
) -> Result<Vec<ConversationId>> {
    if !work.projects.is_empty() {
        s.lock_keys(&[projects_lock(owner)])?;
        let have = s.count_projects(owner)?;
        let new = work.projects.len() as u64;
        if have.saturating_add(new) > work.most_projects {
            return Err(StorageError::ImportProjectsFull {
                have,
                new,
                most: work.most_projects,
            });
        }
        let now = s.now_ms()?;
        // A millisecond apart, newest first, so that the list shows them in the import's order.
        for (made, project) in (0_i64..).zip(&work.projects) {
            s.insert_project(&Project {
                id: project.id.clone(),
                owner: owner.clone(),
                name: project.name.clone(),
                instructions: project.instructions.clone(),
                agent_id: project.agent_id.clone(),
                created_at_ms: now.saturating_sub(made),
            })?;
        }
    }
    let mut placed = std::collections::BTreeSet::new();
    for project in work
        .conversations
        .iter()
        .filter_map(|c| c.project.as_deref())
    {
        if placed.insert(project) {
            owned_project(s, owner, project)?;
        }
    }
    let conversations = &work.conversations;
    let mut ids = Vec::with_capacity(conversations.len());
    for conversation in conversations {
        let id = s.insert_conversation(owner, &conversation.agent_id)?;
        if let Some(project) = &conversation.project {
            s.set_conversation_project(&id, Some(project))?;
        }
        if conversation.pinned {
            s.set_conversation_pinned(&id, true)?;
        }
        for turn in &conversation.transcript.turns {
            if turn.status.is_open() {
                return Err(StorageError::ImportedTurnOpen {
                    turn: turn.index,
                    status: turn.status,
                });
            }
            s.insert_turn(&id, turn.index, turn.kind, turn.effort, &Hold::default())?;
            s.set_status(&id, turn.index, turn.status)?;
            if let Some(tokens) = turn.context_tokens {
                s.set_context_tokens(&id, turn.index, tokens)?;
            }
            for entry in &turn.trace {
                s.insert_trace(&id, turn.index, entry)?;
            }
            for (m, message) in turn.messages.iter().enumerate() {
                s.insert_message(&id, turn.index, m, message.role)?;
                for (b, block) in message.blocks.iter().enumerate() {
                    s.insert_block(&id, turn.index, m, b, block)?;
                }
                for (a, attachment) in message.attachments.iter().enumerate() {
                    if !s.attachment_stored(&owner.org_id, attachment.id())? {
                        return Err(StorageError::AttachmentNotFound {
                            attachment: attachment.id().to_string(),
                        });
                    }
                    s.link_attachment(&id, turn.index, a, &owner.org_id, attachment.id())?;
                }
            }
        }
        if conversation.title.is_empty() {
            let first = conversation
                .transcript
                .turns
                .iter()
                .find(|t| t.kind == TurnKind::Chat)
                .and_then(|t| t.messages.first());
            if let Some(message) = first {
                title_after(s, &id, message)?;
            }
        } else {
            s.title_if_untitled(&id, &conversation.title)?;
        }
        s.touch(&id)?;
        ids.push(id);
    }
    Ok(ids)
}

/// Takes a place among the failed sign-ins of each of `keys` if `rule` lets the sign-in try
/// (`Storage::take_sign_in_places`), under a lock on the keys.
pub fn take_sign_in_places(
    s: &mut dyn Statements,
    keys: &[String],
    window_ms: i64,
    rule: ThrottleRule,
) -> Result<SignInPlaces> {
    let locks: Vec<String> = keys.iter().map(|key| format!("sign-in {key}")).collect();
    s.lock_keys(&locks)?;
    let now = s.now_ms()?;
    let cutoff = now.saturating_sub(window_ms);
    s.delete_sign_in_failures_until(cutoff)?;
    let failures = keys
        .iter()
        .map(|key| s.sign_in_failures_after(key, cutoff))
        .collect::<Result<Vec<_>>>()?;
    if let Some(wait) = rule(&failures, now) {
        return Ok(SignInPlaces::Wait(wait));
    }
    let places = keys
        .iter()
        .map(|key| s.insert_sign_in_failure(key, now))
        .collect::<Result<Vec<_>>>()?;
    Ok(SignInPlaces::Taken(places))
}

/// Removes every failure of `keys` and the failures `places` (`Storage::forget_sign_in_failures`).
pub fn forget_sign_in_failures(
    s: &mut dyn Statements,
    keys: &[String],
    places: &[i64],
) -> Result<()> {
    for key in keys {
        s.delete_sign_in_failures_of(key)?;
    }
    for place in places {
        s.delete_sign_in_failure(*place)?;
    }
    Ok(())
}

/// What every server locks to keep a single sign-on under way, so that the limits hold for
/// sign-ins started at once on any replica.
const SSO_SIGN_INS: &str = "sso sign-ins";

/// Keeps a single sign-on under way for `limits.lifetime_ms`, unless `limits.most` are under
/// way or `limits.from_one_client` from its client (`Storage::keep_sso_sign_in`); those that
/// expired are removed first, under a lock on every sign-in.
pub fn keep_sso_sign_in(
    s: &mut dyn Statements,
    sign_in: &SsoSignIn,
    limits: SsoSignInLimits,
) -> Result<()> {
    s.lock_keys(&[SSO_SIGN_INS.to_string()])?;
    let now = s.now_ms()?;
    s.delete_sso_sign_ins_until(now)?;
    let (held, from_client) = s.sso_sign_ins_held(sign_in.client.as_deref())?;
    if held >= limits.most || from_client >= limits.from_one_client {
        return Err(StorageError::SsoSignInsFull {
            most: limits.most,
            from_one_client: limits.from_one_client,
        });
    }
    s.insert_sso_sign_in(sign_in, now.saturating_add(limits.lifetime_ms))
}

/// Keeps a new API key unless its owner holds `most` live ones (`Storage::create_api_key`),
/// under a lock on the owner.
pub fn create_api_key(s: &mut dyn Statements, key: &NewApiKey, most: u64) -> Result<StoredApiKey> {
    s.lock_keys(&[format!(
        "api-keys/{}/{}",
        key.owner.org_id, key.owner.user_id
    )])?;
    let now = s.now_ms()?;
    if s.live_api_keys(&key.owner, now)? >= most {
        return Err(StorageError::ApiKeysFull { most });
    }
    let kept = StoredApiKey {
        id: key.id.clone(),
        key_sha256: key.key_sha256.clone(),
        hint: key.hint.clone(),
        owner: key.owner.clone(),
        name: key.name.clone(),
        agents: key.agents.clone(),
        created_at_ms: now,
        expires_at_ms: key.lifetime_ms.map(|ms| now.saturating_add(ms)),
        revoked_at_ms: None,
    };
    s.insert_api_key(&kept)?;
    Ok(kept)
}

/// Keeps a new share link of an owner's conversation unless they hold `most` live ones
/// (`Storage::create_share_link`), under a lock on the conversation and one on the owner.
pub fn create_share_link(
    s: &mut dyn Statements,
    link: &NewShareLink,
    most: u64,
) -> Result<ShareLink> {
    if !s.lock_owned_conversation(&link.owner, &link.conversation)? {
        return Err(not_found(&link.conversation));
    }
    s.lock_keys(&[format!(
        "share-links/{}/{}",
        link.owner.org_id, link.owner.user_id
    )])?;
    let now = s.now_ms()?;
    if s.live_share_links(&link.owner, now)? >= most {
        return Err(StorageError::ShareLinksFull { most });
    }
    let snapshot = serde_json::to_string(&link.snapshot).map_err(|e| StorageError::Unreadable {
        what: "a share link's snapshot",
        detail: e.to_string(),
    })?;
    let kept = ShareLink {
        id: link.id.clone(),
        token: link.token.clone(),
        owner: link.owner.clone(),
        conversation: link.conversation.clone(),
        title: link.title.clone(),
        visibility: link.visibility,
        turns: u32::try_from(link.snapshot.turns.len()).unwrap_or(u32::MAX),
        created_at_ms: now,
        expires_at_ms: link.lifetime_ms.map(|ms| now.saturating_add(ms)),
        revoked_at_ms: None,
    };
    s.insert_share_link(&kept, &snapshot)?;
    Ok(kept)
}

/// Takes the single sign-on under way whose `state` hashes to `state_sha256`, once
/// (`Storage::claim_sso_sign_in`): it is removed whatever follows, and answered only to the
/// browser holding its binding (compared in constant time) before it expires.
pub fn claim_sso_sign_in(
    s: &mut dyn Statements,
    state_sha256: &str,
    binding_sha256: Option<&str>,
) -> Result<Option<SsoSignIn>> {
    let Some((sign_in, expires_at_ms)) = s.take_sso_sign_in(state_sha256)? else {
        return Ok(None);
    };
    let bound = binding_sha256.is_some_and(|presented| {
        bool::from(
            presented
                .as_bytes()
                .ct_eq(sign_in.binding_sha256.as_bytes()),
        )
    });
    if !bound || expires_at_ms <= s.now_ms()? {
        return Ok(None);
    }
    Ok(Some(sign_in))
}

/// Fails when the turn has ended: an ended turn is never rewritten.
fn require_open(conversation: &ConversationId, turn: u32, status: TurnStatus) -> Result<()> {
    if status.is_open() {
        Ok(())
    } else {
        Err(StorageError::TurnEnded {
            conversation: conversation.clone(),
            turn,
            status,
        })
    }
}

/// The turn's status, or which of the conversation and the turn is missing.
fn turn_status(
    s: &mut dyn Statements,
    conversation: &ConversationId,
    turn: u32,
) -> Result<TurnStatus> {
    if let Some(status) = s.turn_status(conversation, turn)? {
        return parse_status(&status);
    }
    Err(if s.conversation_org(conversation)?.is_some() {
        StorageError::TurnNotFound {
            conversation: conversation.clone(),
            turn,
        }
    } else {
        not_found(conversation)
    })
}

/// Fails unless the turn is running: only a running turn takes messages, blocks and text.
fn require_running(s: &mut dyn Statements, conversation: &ConversationId, turn: u32) -> Result<()> {
    match turn_status(s, conversation, turn)? {
        TurnStatus::Running => Ok(()),
        status => Err(StorageError::TurnNotRunning {
            conversation: conversation.clone(),
            turn,
            status,
        }),
    }
}

/// Fails unless a new turn opens with the user's message of text blocks.
fn check_user_message(turn: &NewTurn) -> Result<()> {
    let message = &turn.message;
    let problem = if message.role != Role::User {
        "the message given is not the user's"
    } else if message.blocks.is_empty() {
        "the message given has no blocks"
    } else if message.blocks.iter().any(|b| b.kind() != BlockKind::Text) {
        "the message given carries a block other than text"
    } else {
        return Ok(());
    };
    Err(StorageError::NotAUserMessage { problem })
}
