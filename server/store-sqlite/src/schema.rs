//! The SQLite schema as an ordered list of migrations, applied at open.
//!
//! The database's `PRAGMA user_version` is the number of migrations applied. A migration is never
//! edited once released; a change to the schema is a new entry at the end of [`MIGRATIONS`].

use rusqlite::{Connection, TransactionBehavior};

use portal_store::check_schema;
use portal_store::{Result, StorageError};

/// The schema version this build writes: the number of migrations it knows.
pub const SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

/// The migrations, oldest first; entry `n` takes the schema from version `n` to `n + 1`.
const MIGRATIONS: &[&str] = &[
    // Version 1: conversations, turns as they stream, usage and attachments.
    r#"
    CREATE TABLE conversations (
        id          TEXT PRIMARY KEY,
        org_id      TEXT NOT NULL,
        user_id     TEXT NOT NULL,
        agent_id    TEXT NOT NULL,
        created_at  INTEGER NOT NULL DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER))
    );
    CREATE INDEX conversations_by_owner ON conversations (org_id, user_id);

    CREATE TABLE turns (
        conversation_id TEXT NOT NULL REFERENCES conversations (id),
        turn            INTEGER NOT NULL,
        kind            TEXT NOT NULL,
        status          TEXT NOT NULL,
        effort          TEXT,
        context_tokens  INTEGER,
        started_at      INTEGER NOT NULL DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)),
        PRIMARY KEY (conversation_id, turn)
    );
    CREATE INDEX turns_running ON turns (status) WHERE status = 'running';

    CREATE TABLE trace_entries (
        conversation_id TEXT NOT NULL,
        turn            INTEGER NOT NULL,
        position        INTEGER NOT NULL,
        entry           TEXT NOT NULL,
        PRIMARY KEY (conversation_id, turn, position),
        FOREIGN KEY (conversation_id, turn) REFERENCES turns (conversation_id, turn)
    );

    CREATE TABLE messages (
        conversation_id TEXT NOT NULL,
        turn            INTEGER NOT NULL,
        message         INTEGER NOT NULL,
        role            TEXT NOT NULL,
        PRIMARY KEY (conversation_id, turn, message),
        FOREIGN KEY (conversation_id, turn) REFERENCES turns (conversation_id, turn)
    );

    CREATE TABLE blocks (
        conversation_id TEXT NOT NULL,
        turn            INTEGER NOT NULL,
        message         INTEGER NOT NULL,
        block           INTEGER NOT NULL,
        kind            TEXT NOT NULL,
        body            TEXT NOT NULL,
        PRIMARY KEY (conversation_id, turn, message, block),
        FOREIGN KEY (conversation_id, turn, message)
            REFERENCES messages (conversation_id, turn, message)
    );

    CREATE TABLE block_chunks (
        id              INTEGER PRIMARY KEY,
        conversation_id TEXT NOT NULL,
        turn            INTEGER NOT NULL,
        message         INTEGER NOT NULL,
        block           INTEGER NOT NULL,
        text            TEXT NOT NULL,
        FOREIGN KEY (conversation_id, turn, message, block)
            REFERENCES blocks (conversation_id, turn, message, block)
    );
    CREATE INDEX block_chunks_by_block
        ON block_chunks (conversation_id, turn, message, block, id);

    CREATE TABLE usage (
        id              INTEGER PRIMARY KEY,
        conversation_id TEXT NOT NULL,
        turn            INTEGER NOT NULL,
        purpose         TEXT NOT NULL,
        model           TEXT NOT NULL,
        input_tokens    INTEGER NOT NULL,
        output_tokens   INTEGER NOT NULL,
        recorded_at     INTEGER NOT NULL DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)),
        FOREIGN KEY (conversation_id, turn) REFERENCES turns (conversation_id, turn)
    );
    CREATE INDEX usage_by_conversation ON usage (conversation_id, turn);

    CREATE TABLE attachments (
        org_id      TEXT NOT NULL,
        id          TEXT NOT NULL,
        user_id     TEXT NOT NULL,
        kind        TEXT NOT NULL,
        metadata    TEXT NOT NULL,
        created_at  INTEGER NOT NULL DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)),
        PRIMARY KEY (org_id, id)
    );

    CREATE TABLE attachment_bytes (
        org_id  TEXT NOT NULL,
        id      TEXT NOT NULL,
        bytes   BLOB NOT NULL,
        PRIMARY KEY (org_id, id),
        FOREIGN KEY (org_id, id) REFERENCES attachments (org_id, id)
    );

    CREATE TABLE message_attachments (
        conversation_id TEXT NOT NULL,
        turn            INTEGER NOT NULL,
        message         INTEGER NOT NULL,
        position        INTEGER NOT NULL,
        org_id          TEXT NOT NULL,
        attachment_id   TEXT NOT NULL,
        PRIMARY KEY (conversation_id, turn, message, position),
        FOREIGN KEY (conversation_id, turn, message)
            REFERENCES messages (conversation_id, turn, message),
        FOREIGN KEY (org_id, attachment_id) REFERENCES attachments (org_id, id)
    );
    "#,
    // Version 2: conversations get a title and their last activity, for the conversation list;
    // sign-in sessions.
    r#"
    ALTER TABLE conversations ADD COLUMN title TEXT NOT NULL DEFAULT '';
    ALTER TABLE conversations ADD COLUMN last_activity INTEGER NOT NULL DEFAULT 0;
    UPDATE conversations SET last_activity = COALESCE(
        (SELECT MAX(started_at) FROM turns WHERE turns.conversation_id = conversations.id),
        created_at
    );
    CREATE INDEX conversations_by_activity
        ON conversations (org_id, user_id, last_activity DESC, id DESC);

    CREATE TABLE sessions (
        id_sha256   TEXT PRIMARY KEY,
        org_id      TEXT NOT NULL,
        user_id     TEXT NOT NULL,
        stamp       TEXT NOT NULL,
        created_at  INTEGER NOT NULL,
        expires_at  INTEGER NOT NULL
    );
    CREATE INDEX sessions_by_user ON sessions (org_id, user_id);
    CREATE INDEX sessions_by_expiry ON sessions (expires_at);
    "#,
    // Version 3: a model call finds a conversation's newest compaction without reading its
    // blocks (rule M1).
    r#"
    CREATE INDEX blocks_compactions ON blocks (conversation_id, turn) WHERE kind = 'compaction';
    "#,
    // Version 4: failed sign-ins, as PostgreSQL's version 3 keeps them (sessions/throttle.rs
    // holds the rule). AUTOINCREMENT: an id a sign-in holds is never given to another row.
    r#"
    CREATE TABLE sign_in_failures (
        id  INTEGER PRIMARY KEY AUTOINCREMENT,
        key TEXT NOT NULL,
        at  INTEGER NOT NULL
    );
    CREATE INDEX sign_in_failures_by_key ON sign_in_failures (key, at);
    CREATE INDEX sign_in_failures_by_time ON sign_in_failures (at);
    "#,
    // Version 5: usage rows are priced and kept apart from the conversation they were spent in
    // (deleting it keeps them, so quotas and reports still count them): each row names its
    // organisation, user and agent, the cached and reasoning parts of its tokens, whether they
    // were estimated, and the price it was priced at when written, with its cost in nano-units.
    r#"
    CREATE TABLE usage_rows (
        id                  INTEGER PRIMARY KEY,
        org_id              TEXT NOT NULL,
        user_id             TEXT NOT NULL,
        agent_id            TEXT NOT NULL,
        conversation_id     TEXT NOT NULL,
        turn                INTEGER NOT NULL,
        purpose             TEXT NOT NULL,
        model               TEXT NOT NULL,
        input_tokens        INTEGER NOT NULL,
        cached_input_tokens INTEGER NOT NULL DEFAULT 0,
        output_tokens       INTEGER NOT NULL,
        reasoning_tokens    INTEGER NOT NULL DEFAULT 0,
        estimated           INTEGER NOT NULL DEFAULT 0,
        currency            TEXT,
        input_price         INTEGER,
        cached_input_price  INTEGER,
        output_price        INTEGER,
        cost_nanos          INTEGER,
        recorded_at         INTEGER NOT NULL DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER))
    );
    INSERT INTO usage_rows (id, org_id, user_id, agent_id, conversation_id, turn, purpose, model,
                            input_tokens, output_tokens, recorded_at)
    SELECT u.id, c.org_id, c.user_id, c.agent_id, u.conversation_id, u.turn, u.purpose, u.model,
           u.input_tokens, u.output_tokens, u.recorded_at
    FROM usage u JOIN conversations c ON c.id = u.conversation_id;
    DROP TABLE usage;
    ALTER TABLE usage_rows RENAME TO usage;
    CREATE INDEX usage_by_conversation ON usage (conversation_id, turn);
    CREATE INDEX usage_by_user ON usage (org_id, user_id, recorded_at);
    CREATE INDEX usage_by_time ON usage (org_id, recorded_at);
    "#,
    // Version 6: the usage report (`portal usage`, `GET /api/usage`) reads an organisation's rows
    // from one index holding every column it groups by, filters on and sums, so it never visits
    // the table: by user over 1,000,000 rows in a third of a second instead of over two
    // (docs/bench.md, "Usage report"). PostgreSQL's parallel scan needs no such index.
    r#"
    CREATE INDEX usage_report ON usage (org_id, user_id, currency, input_tokens,
                                        cached_input_tokens, output_tokens, reasoning_tokens,
                                        estimated, cost_nanos, recorded_at, model, agent_id);
    "#,
    // Version 7: the accounts single sign-on made, one per provider user (`issuer`, `subject`)
    // and one per user id in an organisation.
    r#"
    CREATE TABLE sso_accounts (
        issuer      TEXT NOT NULL,
        subject     TEXT NOT NULL,
        org_id      TEXT NOT NULL,
        user_id     TEXT NOT NULL,
        name        TEXT NOT NULL,
        created_at  INTEGER NOT NULL,
        PRIMARY KEY (issuer, subject),
        UNIQUE (org_id, user_id)
    );
    "#,
    // Version 8: each model call of a turn as it was made, for the prompt inspector
    // (docs/inspector.md): the prompt core built, as JSON, and the request body as sent, each
    // kept up to a bound (a NULL text past it, with its size), and the prompt builder's
    // diagnostics as JSON.
    r#"
    CREATE TABLE model_calls (
        conversation_id TEXT NOT NULL,
        turn            INTEGER NOT NULL,
        call            INTEGER NOT NULL,
        purpose         TEXT NOT NULL,
        model           TEXT NOT NULL,
        prompt          TEXT,
        prompt_bytes    INTEGER NOT NULL,
        body            TEXT,
        body_bytes      INTEGER,
        diagnostics     TEXT NOT NULL,
        recorded_at     INTEGER NOT NULL DEFAULT (CAST(unixepoch('subsec') * 1000 AS INTEGER)),
        PRIMARY KEY (conversation_id, turn, call),
        FOREIGN KEY (conversation_id, turn) REFERENCES turns (conversation_id, turn)
    );
    "#,
    // Version 9: single sign-ons under way, in the database rather than in one server's memory,
    // so that the provider may send the browser back to any replica. A row is found by the
    // SHA-256 digest of its `state` (the state itself is never kept), bound to the digest of
    // the browser's `portal_sso` cookie, counted per client, and removed when claimed or, once
    // expired, as new sign-ins come.
    r#"
    CREATE TABLE sso_sign_ins (
        state_sha256    TEXT PRIMARY KEY,
        binding_sha256  TEXT NOT NULL,
        client          TEXT,
        provider        TEXT NOT NULL,
        verifier        TEXT NOT NULL,
        nonce           TEXT NOT NULL,
        return_to       TEXT NOT NULL,
        expires_at      INTEGER NOT NULL
    );
    CREATE INDEX sso_sign_ins_by_client ON sso_sign_ins (client);
    CREATE INDEX sso_sign_ins_by_expiry ON sso_sign_ins (expires_at);
    "#,
    // Version 10: what a running turn holds back of its user's and organisation's quotas
    // (docs/usage.md): one more model call, in tokens and, for a priced model, in nano-units
    // of its currency. Turns from before hold nothing.
    r#"
    ALTER TABLE turns ADD COLUMN hold_tokens INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE turns ADD COLUMN hold_nanos INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE turns ADD COLUMN hold_currency TEXT;
    "#,
    // Version 11: API keys a person makes for the OpenAI-compatible API (docs/api.md). A key is
    // found by the SHA-256 digest of its secret (the secret is never kept); `agents` is a JSON
    // list of the agents it may use (empty: all its user may use); a revoked key stays, with
    // the time it was revoked.
    r#"
    CREATE TABLE api_keys (
        id          TEXT PRIMARY KEY,
        key_sha256  TEXT NOT NULL UNIQUE,
        hint        TEXT NOT NULL,
        org_id      TEXT NOT NULL,
        user_id     TEXT NOT NULL,
        name        TEXT NOT NULL,
        agents      TEXT NOT NULL,
        created_at  INTEGER NOT NULL,
        expires_at  INTEGER,
        revoked_at  INTEGER
    );
    CREATE INDEX api_keys_by_owner ON api_keys (org_id, user_id);
    "#,
    // Version 12: the pictures tools answered with, each a picture attachment of the
    // conversation's owner, linked to the conversation so that it is deleted with it.
    r#"
    CREATE TABLE tool_pictures (
        conversation_id TEXT NOT NULL,
        org_id          TEXT NOT NULL,
        attachment_id   TEXT NOT NULL,
        PRIMARY KEY (org_id, attachment_id),
        FOREIGN KEY (conversation_id) REFERENCES conversations (id),
        FOREIGN KEY (org_id, attachment_id) REFERENCES attachments (org_id, id)
    );
    CREATE INDEX tool_pictures_by_conversation ON tool_pictures (conversation_id);
    "#,
    // Version 13: share links (docs/share.md), each with the snapshot it shows as transcript
    // JSON. The token is kept as it is, so that its owner can copy the link again: whoever reads
    // this table reads the snapshots too. A revoked link stays, with the time it was revoked;
    // a conversation's links are deleted with it.
    r#"
    CREATE TABLE share_links (
        id              TEXT PRIMARY KEY,
        token           TEXT NOT NULL UNIQUE,
        org_id          TEXT NOT NULL,
        user_id         TEXT NOT NULL,
        conversation_id TEXT NOT NULL REFERENCES conversations (id),
        title           TEXT NOT NULL,
        visibility      TEXT NOT NULL,
        turns           INTEGER NOT NULL,
        snapshot        TEXT NOT NULL,
        created_at      INTEGER NOT NULL,
        expires_at      INTEGER,
        revoked_at      INTEGER
    );
    CREATE INDEX share_links_by_owner ON share_links (org_id, user_id);
    CREATE INDEX share_links_by_conversation ON share_links (conversation_id);
    "#,
    // Version 14: projects (docs/projects.md): a person's conversations kept together, with
    // instructions of their own and the agent a conversation opened in one talks to. A
    // conversation is in one project or in none, and may be pinned, which lists it first: the
    // list's index runs pinned conversations first.
    r#"
    CREATE TABLE projects (
        id           TEXT PRIMARY KEY,
        org_id       TEXT NOT NULL,
        user_id      TEXT NOT NULL,
        name         TEXT NOT NULL,
        instructions TEXT NOT NULL,
        agent_id     TEXT,
        created_at   INTEGER NOT NULL
    );
    CREATE INDEX projects_by_owner ON projects (org_id, user_id);
    ALTER TABLE conversations ADD COLUMN project_id TEXT REFERENCES projects (id);
    ALTER TABLE conversations ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0;
    DROP INDEX conversations_by_activity;
    CREATE INDEX conversations_by_activity
        ON conversations (org_id, user_id, pinned DESC, last_activity DESC, id DESC);
    CREATE INDEX conversations_by_project
        ON conversations (project_id, pinned DESC, last_activity DESC, id DESC);
    "#,
    // Version 15: knowledge (docs/knowledge.md): collections of an organisation's (no user) or
    // of one person's, their documents, and each document's passages, indexed by FTS5 for
    // keyword search. The index holds no copy of the text (`content=`): it reads
    // `knowledge_passages`, and the triggers keep it in step with each insert and delete. Each
    // organisation's totals are kept by triggers too, so its limits are checked without counting
    // its documents.
    r#"
    CREATE TABLE knowledge_collections (
        id          TEXT PRIMARY KEY,
        org_id      TEXT NOT NULL,
        user_id     TEXT,
        name        TEXT NOT NULL,
        description TEXT NOT NULL,
        created_at  INTEGER NOT NULL
    );
    CREATE UNIQUE INDEX knowledge_collections_by_name
        ON knowledge_collections (org_id, COALESCE(user_id, ''), name);

    CREATE TABLE knowledge_documents (
        id            TEXT PRIMARY KEY,
        collection_id TEXT NOT NULL REFERENCES knowledge_collections (id),
        org_id        TEXT NOT NULL,
        name          TEXT NOT NULL,
        media_type    TEXT NOT NULL,
        bytes         INTEGER NOT NULL,
        pages         INTEGER NOT NULL,
        passages      INTEGER NOT NULL,
        created_at    INTEGER NOT NULL,
        source_path   TEXT,
        source_stamp  TEXT
    );
    CREATE INDEX knowledge_documents_by_collection ON knowledge_documents (collection_id, bytes);
    CREATE UNIQUE INDEX knowledge_documents_by_source
        ON knowledge_documents (collection_id, source_path) WHERE source_path IS NOT NULL;

    CREATE TABLE knowledge_totals (
        org_id    TEXT PRIMARY KEY,
        documents INTEGER NOT NULL,
        bytes     INTEGER NOT NULL
    );
    CREATE TRIGGER knowledge_documents_counted AFTER INSERT ON knowledge_documents BEGIN
        INSERT INTO knowledge_totals (org_id, documents, bytes) VALUES (new.org_id, 1, new.bytes)
        ON CONFLICT (org_id) DO UPDATE
            SET documents = documents + 1, bytes = bytes + excluded.bytes;
    END;
    CREATE TRIGGER knowledge_documents_uncounted AFTER DELETE ON knowledge_documents BEGIN
        UPDATE knowledge_totals SET documents = documents - 1, bytes = bytes - old.bytes
        WHERE org_id = old.org_id;
    END;

    CREATE TABLE knowledge_passages (
        id          INTEGER PRIMARY KEY,
        document_id TEXT NOT NULL REFERENCES knowledge_documents (id),
        position    INTEGER NOT NULL,
        page        INTEGER,
        headings    TEXT NOT NULL,
        body        TEXT NOT NULL
    );
    CREATE INDEX knowledge_passages_by_document ON knowledge_passages (document_id, position);

    CREATE VIRTUAL TABLE knowledge_passages_fts USING fts5 (
        headings, body,
        content = 'knowledge_passages', content_rowid = 'id',
        tokenize = 'porter unicode61 remove_diacritics 2'
    );
    CREATE TRIGGER knowledge_passages_indexed AFTER INSERT ON knowledge_passages BEGIN
        INSERT INTO knowledge_passages_fts (rowid, headings, body)
        VALUES (new.id, new.headings, new.body);
    END;
    CREATE TRIGGER knowledge_passages_unindexed AFTER DELETE ON knowledge_passages BEGIN
        INSERT INTO knowledge_passages_fts (knowledge_passages_fts, rowid, headings, body)
        VALUES ('delete', old.id, old.headings, old.body);
    END;
    "#,
];

/// Brings the database to [`SCHEMA_VERSION`], applying the missing migrations in one
/// transaction: either all of them land or none.
pub(super) fn migrate(connection: &mut Connection) -> Result<()> {
    let transaction = connection.transaction_with_behavior(TransactionBehavior::Exclusive)?;
    let found: u32 = transaction.pragma_query_value(None, "user_version", |row| row.get(0))?;
    check_schema("SQLite", found, SCHEMA_VERSION, true)?;
    for (from, sql) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        let version = from as u32 + 1;
        transaction
            .execute_batch(sql)
            .map_err(|source| StorageError::Migration { version, source })?;
    }
    if found < 2 {
        super::conversations::title_untitled(&transaction)?;
    }
    if found < SCHEMA_VERSION {
        transaction.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    }
    transaction.commit()?;
    Ok(())
}

/// Refuses a database this build cannot read as it is, without changing it: one a newer Portal
/// migrated, or one older than this build's schema (`portal usage` reads, it never migrates).
pub(super) fn check_current(connection: &Connection) -> Result<()> {
    let found: u32 = connection.pragma_query_value(None, "user_version", |row| row.get(0))?;
    check_schema("SQLite", found, SCHEMA_VERSION, false)
}
