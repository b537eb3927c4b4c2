//! What can go wrong in storage, each said with what to do about it.

use std::path::PathBuf;

use portal_core::{BlockKind, TurnStatus};
use thiserror::Error;

use super::ConversationId;

/// Why a storage call failed.
#[derive(Debug, Error)]
pub enum StorageError {
    #[error(
        "cannot create the data folder {path}: {source}; pass --data a folder Portal may write to"
    )]
    DataDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "the data folder {} is in use by another `portal serve`{}; stop that server first, or give this one a folder of its own with --data",
        .path.display(),
        .process.map(|p| format!(" (process {p})")).unwrap_or_default()
    )]
    InUse {
        path: PathBuf,
        /// The process holding the folder, as it wrote itself in the lock file.
        process: Option<u32>,
    },
    #[error(
        "cannot lock {path}: {source}; check that --data names a folder Portal may write to, on a file system with file locks"
    )]
    Lock {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "cannot open the database {path}: {source}; check that --data names a folder Portal may write to and that the file is a Portal database"
    )]
    Open {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error(
        "the database failed: {0}; check that the disk has room and the data folder is writable, then retry"
    )]
    Database(#[from] rusqlite::Error),
    #[error(
        "the PostgreSQL database failed: {0}; check that the server at --database is running and has room, then retry"
    )]
    Postgres(#[from] postgres::Error),
    #[error(
        "`{url}` is not a PostgreSQL connection URL ({source}); write it as postgres://USER@HOST:PORT/DATABASE?sslmode=verify-full&sslrootcert=CA.pem"
    )]
    PostgresConnect {
        url: String,
        source: postgres::Error,
    },
    #[error(
        "cannot reach the PostgreSQL database {url} ({detail}); check that it runs, that the host and port are right, and that the user may connect"
    )]
    PostgresUnreachable { url: String, detail: String },
    #[error(
        "the --database URL {url} cannot be used: {problem} (docs/deploy.md, \"TLS to PostgreSQL\")"
    )]
    PostgresTlsSetting { url: String, problem: String },
    #[error(
        "cannot use {} as the certificate authority of the PostgreSQL server (sslrootcert): {problem}; give sslrootcert the PEM file of the authority that signed the server's certificate",
        .path.display()
    )]
    PostgresCaFile { path: PathBuf, problem: String },
    #[error(
        "the PostgreSQL server at {url} presented a certificate that the certificate authority in {ca} did not sign ({detail}); give sslrootcert the authority that signed the server's certificate, or check that --database names the right server"
    )]
    PostgresCertificateUntrusted {
        url: String,
        ca: String,
        detail: String,
    },
    #[error(
        "the PostgreSQL server's certificate is not for {host}, the host --database connects to ({detail}); connect by a name the certificate holds, or have its certificate made for {host}"
    )]
    PostgresCertificateWrongHost {
        url: String,
        host: String,
        detail: String,
    },
    #[error(
        "the TLS connection to the PostgreSQL server at {url} failed ({detail}); check the server's certificate and that it accepts TLS 1.2 or 1.3"
    )]
    PostgresTls { url: String, detail: String },
    #[error(
        "the PostgreSQL server at {url} does not accept TLS, which sslmode={mode} requires; turn on ssl in its postgresql.conf, or check that --database names the right server"
    )]
    PostgresWithoutTls { url: String, mode: String },
    #[error(
        "the PostgreSQL server at {url} refused an unencrypted connection ({detail}); connect with TLS: add sslmode=verify-full&sslrootcert=CA.pem to --database (docs/deploy.md, \"TLS to PostgreSQL\")"
    )]
    PostgresNeedsTls { url: String, detail: String },
    #[error(
        "the PostgreSQL server at {url} refused the password of user `{user}`; check the password given in PORTAL_DATABASE_PASSWORD, in the file --database-password-file names, or in the URL"
    )]
    PostgresPasswordRefused { url: String, user: String },
    #[error(
        "no connection to the PostgreSQL database is free or it stopped answering ({detail}); retry, and check the database if it happens again"
    )]
    PostgresUnavailable { detail: String },
    #[error(
        "migrating the PostgreSQL database to schema version {version} failed: {source}; nothing was changed, so check that the user may create tables"
    )]
    PostgresMigration {
        version: u32,
        source: postgres::Error,
    },
    #[error(
        "the {database} database has schema version {found}, but this build (Portal {build}) knows versions up to {known}: a newer Portal migrated it; run that newer build (on every replica), or restore the backup taken before the upgrade to go back to this one",
        build = env!("CARGO_PKG_VERSION")
    )]
    SchemaTooNew {
        /// `SQLite` or `PostgreSQL`.
        database: &'static str,
        /// The version the database holds.
        found: u32,
        /// The newest version this build knows.
        known: u32,
    },
    #[error(
        "the {database} database has schema version {found}, older than this build's {known} (Portal {build}), and this command reads without migrating: run it with the Portal build that serves the database, or upgrade the servers first (`portal serve` of this build migrates it)",
        build = env!("CARGO_PKG_VERSION")
    )]
    SchemaTooOld {
        /// `SQLite` or `PostgreSQL`.
        database: &'static str,
        /// The version the database holds.
        found: u32,
        /// The version this build reads.
        known: u32,
    },
    #[error(
        "migrating the database to schema version {version} failed: {source}; nothing was changed, so restore a backup if the file was edited outside Portal"
    )]
    Migration {
        version: u32,
        source: rusqlite::Error,
    },
    #[error(
        "there is no conversation `{conversation}` of yours (it was deleted, never existed, or is someone else's); GET /api/conversations lists yours, POST /api/conversations opens one"
    )]
    ConversationNotFound { conversation: ConversationId },
    #[error(
        "there is no project `{project}` of yours (it was deleted, never existed, or is someone else's); GET /api/projects lists yours, POST /api/projects makes one"
    )]
    ProjectNotFound { project: String },
    #[error("conversation `{conversation}` has no turn {turn}; open the turn before writing to it")]
    TurnNotFound {
        conversation: ConversationId,
        turn: u32,
    },
    #[error(
        "turn {turn} of conversation `{conversation}` has no message at position {message}; start the message before writing its blocks"
    )]
    MessageNotFound {
        conversation: ConversationId,
        turn: u32,
        message: usize,
    },
    #[error(
        "message {message} of turn {turn} of conversation `{conversation}` has no block at position {block}; append the block before streaming its text"
    )]
    BlockNotFound {
        conversation: ConversationId,
        turn: u32,
        message: usize,
        block: usize,
    },
    #[error(
        "a {kind} block takes no streamed text; stream into thinking, text and tool_result blocks only"
    )]
    NotStreamable { kind: BlockKind },
    /// A usage quota refused the turn (docs/usage.md); the sentence says which and when it
    /// resets.
    #[error(transparent)]
    UsageQuota(#[from] crate::quota::QuotaRefusal),
    /// The user has the most turns running at once already.
    #[error(
        "You have {running} replies being written at once, the most one person may have; wait for one to finish, or stop one, then send this message again."
    )]
    TurnsAtOnce { running: u64, most: u64 },
    #[error(
        "turn {turn} of conversation `{conversation}` is still running; wait for it to end, or cut it off, before opening another"
    )]
    TurnStillRunning {
        conversation: ConversationId,
        turn: u32,
    },
    #[error(
        "turn {turn} of the imported conversation is {}; import it as stopped, completed or failed", status.in_words()
    )]
    ImportedTurnOpen { turn: u32, status: TurnStatus },
    #[error(
        "turn {turn} of conversation `{conversation}` is {status}, so it takes no more messages or blocks; set a paused turn running again to resume it, or open a new turn"
    )]
    TurnNotRunning {
        conversation: ConversationId,
        turn: u32,
        status: TurnStatus,
    },
    #[error(
        "turn {turn} of conversation `{conversation}` was already answered or decided, and it has moved on; read the conversation to see what followed"
    )]
    AlreadyResumed {
        conversation: ConversationId,
        turn: u32,
    },
    #[error(
        "turn {turn} of conversation `{conversation}` ended {status} and can no longer change; open a new turn instead"
    )]
    TurnEnded {
        conversation: ConversationId,
        turn: u32,
        status: TurnStatus,
    },
    #[error("a turn opens with the user's message, but {problem}")]
    NotAUserMessage { problem: &'static str },
    #[error(
        "there is no attachment `{attachment}` of yours; upload the file with POST /api/attachments, then send its id"
    )]
    AttachmentNotFound { attachment: String },
    #[error(
        "attachment id `{attachment}` is already used in this organisation; give every upload its own id"
    )]
    AttachmentExists { attachment: String },
    #[error(
        "attachment `{attachment}` was stored as a {stored}, and an attachment's kind is decided once at upload (rule A1); store a new attachment instead"
    )]
    AttachmentKindChanged {
        attachment: String,
        stored: &'static str,
    },
    #[error(
        "storing {size} more bytes would bring the uploads you keep to more than your quota of {quota} bytes ({used} bytes are stored already); send a smaller file, or ask an administrator to raise the quota"
    )]
    QuotaExceeded { used: u64, size: u64, quota: u64 },
    #[error(
        "too many sign-ins through an identity provider are under way (at most {most} in all, and {from_one_client} from one client); try again in a few minutes, once older ones have finished or expired"
    )]
    SsoSignInsFull { most: u64, from_one_client: u64 },
    #[error(
        "you have {most} live API keys, the most one person may have; revoke one you no longer use, then make this one"
    )]
    ApiKeysFull { most: u64 },
    #[error(
        "you have {most} live share links, the most one person may have; revoke one you no longer need, then make this one"
    )]
    ShareLinksFull { most: u64 },
    #[error(
        "you have {most} projects, the most one person may have; delete one you no longer need, or move its conversations into another, then make this one"
    )]
    ProjectsFull { most: u64 },
    #[error(
        "there is no collection `{collection}` you may use; list the collections to find its id"
    )]
    CollectionNotFound { collection: String },
    #[error(
        "there is no document `{document}` in this collection; list its documents to find its id"
    )]
    KnowledgeDocumentNotFound { document: String },
    #[error(
        "there are {most} collections already, the most one owner may have; delete one you no longer need, then make this one"
    )]
    CollectionsFull { most: u64 },
    #[error("there is a collection named `{name}` already; choose another name")]
    CollectionNameTaken { name: String },
    #[error(
        "this document would take the organisation's knowledge past its limit of {documents} documents or {bytes} bytes; delete documents it no longer needs, or ask the operator to raise --knowledge-documents or --knowledge-bytes"
    )]
    KnowledgeFull { documents: u64, bytes: u64 },
    #[error(
        "the import would make {new} projects, and you have {have} of the {most} one person may have; delete projects you no longer need, or import fewer conversations, then import it again; nothing was imported"
    )]
    ImportProjectsFull { have: u64, new: u64, most: u64 },
    #[error(
        "the uploaded file could not be copied into the database ({detail}); send it again, and tell an administrator if it happens again"
    )]
    UploadUnread { detail: String },
    #[error(
        "a stored {what} cannot be read ({detail}); the database was changed outside Portal or by a newer build, so restore a backup"
    )]
    Unreadable { what: &'static str, detail: String },
    #[error(
        "a storage call stopped before it answered ({detail}); retry, and tell an administrator if it happens again"
    )]
    Interrupted { detail: String },
    #[error(
        "{what} {value} is too large to store; the database keeps integers up to 9223372036854775807"
    )]
    TooLarge { what: &'static str, value: u64 },
}

/// Refuses a `database` of schema version `found` that this build, which knows versions up to
/// `known`, cannot use: one a newer build migrated, and one older unless the caller `migrates`
/// it (`portal usage` reads as it is).
pub fn check_schema(
    database: &'static str,
    found: u32,
    known: u32,
    migrates: bool,
) -> Result<(), StorageError> {
    if found > known {
        return Err(StorageError::SchemaTooNew {
            database,
            found,
            known,
        });
    }
    if found < known && !migrates {
        return Err(StorageError::SchemaTooOld {
            database,
            found,
            known,
        });
    }
    Ok(())
}
