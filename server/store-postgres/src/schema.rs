//! The PostgreSQL schema as an ordered list of migrations, applied at connect.
//!
//! The table `portal_schema` holds the number of migrations applied. Replicas starting at once
//! take turns through an advisory lock, so each migration runs once. A migration is never edited
//! once released; a change to the schema is a new entry at the end of [`MIGRATIONS`].

use super::connection::Connection;

use portal_store::check_schema;
use portal_store::{Result, StorageError};

/// The schema version this build writes: the number of migrations it knows.
pub const SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

/// The advisory lock migrations hold: any number, the same in every build.
pub const MIGRATION_LOCK: i64 = 0x706f_7274_616c;

/// The migrations, oldest first; entry `n` takes the schema from version `n` to `n + 1`. The
/// tables are SQLite's (`sqlite/schema.rs`), with PostgreSQL's types: every integer is a
/// `BIGINT`, bytes are `BYTEA`, and times are milliseconds since the Unix epoch by the database's
/// clock, which every replica shares.
const MIGRATIONS: &[&str] = &[
    // Version 1: conversations, turns as they stream, usage, attachments and sign-in sessions.
    r#"
    CREATE FUNCTION portal_now_ms() RETURNS BIGINT LANGUAGE sql VOLATILE
        AS $$ SELECT (extract(epoch FROM clock_timestamp()) * 1000)::BIGINT $$;

    CREATE TABLE conversations (
        id            TEXT PRIMARY KEY,
        org_id        TEXT NOT NULL,
        user_id       TEXT NOT NULL,
        agent_id      TEXT NOT NULL,
        title         TEXT NOT NULL DEFAULT '',
        created_at    BIGINT NOT NULL DEFAULT portal_now_ms(),
        last_activity BIGINT NOT NULL DEFAULT portal_now_ms()
    );
    CREATE INDEX conversations_by_activity
        ON conversations (org_id, user_id, last_activity DESC, id DESC);

    CREATE TABLE turns (
        conversation_id TEXT NOT NULL REFERENCES conversations (id),
        turn            BIGINT NOT NULL,
        kind            TEXT NOT NULL,
        status          TEXT NOT NULL,
        effort          TEXT,
        context_tokens  BIGINT,
        started_at      BIGINT NOT NULL DEFAULT portal_now_ms(),
        PRIMARY KEY (conversation_id, turn)
    );
    CREATE INDEX turns_running ON turns (status) WHERE status = 'running';

    CREATE TABLE trace_entries (
        conversation_id TEXT NOT NULL,
        turn            BIGINT NOT NULL,
        position        BIGINT NOT NULL,
        entry           TEXT NOT NULL,
        PRIMARY KEY (conversation_id, turn, position),
        FOREIGN KEY (conversation_id, turn) REFERENCES turns (conversation_id, turn)
    );

    CREATE TABLE messages (
        conversation_id TEXT NOT NULL,
        turn            BIGINT NOT NULL,
        message         BIGINT NOT NULL,
        role            TEXT NOT NULL,
        PRIMARY KEY (conversation_id, turn, message),
        FOREIGN KEY (conversation_id, turn) REFERENCES turns (conversation_id, turn)
    );

    CREATE TABLE blocks (
        conversation_id TEXT NOT NULL,
        turn            BIGINT NOT NULL,
        message         BIGINT NOT NULL,
        block           BIGINT NOT NULL,
        kind            TEXT NOT NULL,
        body            TEXT NOT NULL,
        PRIMARY KEY (conversation_id, turn, message, block),
        FOREIGN KEY (conversation_id, turn, message)
            REFERENCES messages (conversation_id, turn, message)
    );
    CREATE INDEX blocks_compactions ON blocks (conversation_id, turn) WHERE kind = 'compaction';

    CREATE TABLE block_chunks (
        id              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        conversation_id TEXT NOT NULL,
        turn            BIGINT NOT NULL,
        message         BIGINT NOT NULL,
        block           BIGINT NOT NULL,
        text            TEXT NOT NULL,
        FOREIGN KEY (conversation_id, turn, message, block)
            REFERENCES blocks (conversation_id, turn, message, block)
    );
    CREATE INDEX block_chunks_by_block
        ON block_chunks (conversation_id, turn, message, block, id);

    CREATE TABLE usage (
        id              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        conversation_id TEXT NOT NULL,
        turn            BIGINT NOT NULL,
        purpose         TEXT NOT NULL,
        model           TEXT NOT NULL,
        input_tokens    BIGINT NOT NULL,
        output_tokens   BIGINT NOT NULL,
        recorded_at     BIGINT NOT NULL DEFAULT portal_now_ms(),
        FOREIGN KEY (conversation_id, turn) REFERENCES turns (conversation_id, turn)
    );
    CREATE INDEX usage_by_conversation ON usage (conversation_id, turn);

    CREATE TABLE attachments (
        org_id      TEXT NOT NULL,
        id          TEXT NOT NULL,
        user_id     TEXT NOT NULL,
        kind        TEXT NOT NULL,
        metadata    TEXT NOT NULL,
        size        BIGINT NOT NULL,
        created_at  BIGINT NOT NULL DEFAULT portal_now_ms(),
        PRIMARY KEY (org_id, id)
    );
    CREATE INDEX attachments_by_owner ON attachments (org_id, user_id);

    CREATE TABLE attachment_bytes (
        org_id  TEXT NOT NULL,
        id      TEXT NOT NULL,
        bytes   BYTEA NOT NULL,
        PRIMARY KEY (org_id, id),
        FOREIGN KEY (org_id, id) REFERENCES attachments (org_id, id)
    );

    CREATE TABLE message_attachments (
        conversation_id TEXT NOT NULL,
        turn            BIGINT NOT NULL,
        message         BIGINT NOT NULL,
        position        BIGINT NOT NULL,
        org_id          TEXT NOT NULL,
        attachment_id   TEXT NOT NULL,
        PRIMARY KEY (conversation_id, turn, message, position),
        FOREIGN KEY (conversation_id, turn, message)
            REFERENCES messages (conversation_id, turn, message),
        FOREIGN KEY (org_id, attachment_id) REFERENCES attachments (org_id, id)
    );
    CREATE INDEX message_attachments_by_attachment
        ON message_attachments (org_id, attachment_id);

    CREATE TABLE sessions (
        id_sha256   TEXT PRIMARY KEY,
        org_id      TEXT NOT NULL,
        user_id     TEXT NOT NULL,
        stamp       TEXT NOT NULL,
        created_at  BIGINT NOT NULL,
        expires_at  BIGINT NOT NULL
    );
    CREATE INDEX sessions_by_user ON sessions (org_id, user_id);
    CREATE INDEX sessions_by_expiry ON sessions (expires_at);
    "#,
    // Version 2: replicas. A running turn's lease (which replica runs it, until when), the log
    // of its events as the replica running it publishes them, so a reader on any replica follows
    // it, and the decisions taken on a paused turn's approvals, wherever they were posted.
    r#"
    ALTER TABLE turns ADD COLUMN lease_replica TEXT;
    ALTER TABLE turns ADD COLUMN lease_until BIGINT;
    ALTER TABLE turns ADD COLUMN changed_at BIGINT NOT NULL DEFAULT portal_now_ms();
    CREATE INDEX turns_by_lease ON turns (lease_until) WHERE status = 'running';

    CREATE TABLE turn_log (
        conversation_id TEXT NOT NULL,
        turn            BIGINT NOT NULL,
        seq             BIGINT NOT NULL,
        op              TEXT NOT NULL,
        PRIMARY KEY (conversation_id, turn, seq)
    );

    CREATE TABLE turn_decisions (
        conversation_id TEXT NOT NULL,
        turn            BIGINT NOT NULL,
        messages        BIGINT NOT NULL,
        call_id         TEXT NOT NULL,
        approve         BOOLEAN NOT NULL,
        PRIMARY KEY (conversation_id, turn, messages, call_id)
    );
    "#,
    // Version 3: failed sign-ins, counted in the database so that every replica counts them
    // together (sessions/throttle.rs holds the rule). A row is one failure, or one sign-in being
    // checked, against a key (`user ORG/USER` or `client ADDRESS`) at a time by the database's
    // clock; rows older than the throttle's window are removed as sign-ins come.
    r#"
    CREATE TABLE sign_in_failures (
        id  BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        key TEXT NOT NULL,
        at  BIGINT NOT NULL
    );
    CREATE INDEX sign_in_failures_by_key ON sign_in_failures (key, at);
    CREATE INDEX sign_in_failures_by_time ON sign_in_failures (at);
    "#,
    // Version 4: usage rows are priced and kept apart from the conversation they were spent in
    // (deleting it keeps them, so quotas and reports still count them): each row names its
    // organisation, user and agent, the cached and reasoning parts of its tokens, whether they
    // were estimated, and the price it was priced at when written, with its cost in nano-units.
    r#"
    ALTER TABLE usage DROP CONSTRAINT IF EXISTS usage_conversation_id_turn_fkey;
    ALTER TABLE usage
        ADD COLUMN org_id TEXT,
        ADD COLUMN user_id TEXT,
        ADD COLUMN agent_id TEXT,
        ADD COLUMN cached_input_tokens BIGINT NOT NULL DEFAULT 0,
        ADD COLUMN reasoning_tokens BIGINT NOT NULL DEFAULT 0,
        ADD COLUMN estimated BOOLEAN NOT NULL DEFAULT FALSE,
        ADD COLUMN currency TEXT,
        ADD COLUMN input_price BIGINT,
        ADD COLUMN cached_input_price BIGINT,
        ADD COLUMN output_price BIGINT,
        ADD COLUMN cost_nanos BIGINT;
    UPDATE usage SET org_id = c.org_id, user_id = c.user_id, agent_id = c.agent_id
    FROM conversations c WHERE c.id = usage.conversation_id;
    DELETE FROM usage WHERE org_id IS NULL;
    ALTER TABLE usage
        ALTER COLUMN org_id SET NOT NULL,
        ALTER COLUMN user_id SET NOT NULL,
        ALTER COLUMN agent_id SET NOT NULL;
    CREATE INDEX usage_by_user ON usage (org_id, user_id, recorded_at);
    CREATE INDEX usage_by_time ON usage (org_id, recorded_at);
    "#,
    // Version 5: the accounts single sign-on made, as SQLite's version 7 keeps them.
    r#"
    CREATE TABLE sso_accounts (
        issuer      TEXT NOT NULL,
        subject     TEXT NOT NULL,
        org_id      TEXT NOT NULL,
        user_id     TEXT NOT NULL,
        name        TEXT NOT NULL,
        created_at  BIGINT NOT NULL,
        PRIMARY KEY (issuer, subject),
        UNIQUE (org_id, user_id)
    );
    "#,
    // Version 6: each model call of a turn as it was made, for the prompt inspector, as
    // SQLite's version 8 keeps them.
    r#"
    CREATE TABLE model_calls (
        conversation_id TEXT NOT NULL,
        turn            BIGINT NOT NULL,
        call            BIGINT NOT NULL,
        purpose         TEXT NOT NULL,
        model           TEXT NOT NULL,
        prompt          TEXT,
        prompt_bytes    BIGINT NOT NULL,
        body            TEXT,
        body_bytes      BIGINT,
        diagnostics     TEXT NOT NULL,
        recorded_at     BIGINT NOT NULL DEFAULT portal_now_ms(),
        PRIMARY KEY (conversation_id, turn, call),
        FOREIGN KEY (conversation_id, turn) REFERENCES turns (conversation_id, turn)
    );
    "#,
    // Version 7: single sign-ons under way, as SQLite's version 9 keeps them, shared by the
    // replicas: the provider may send the browser back to any of them.
    r#"
    CREATE TABLE sso_sign_ins (
        state_sha256    TEXT PRIMARY KEY,
        binding_sha256  TEXT NOT NULL,
        client          TEXT,
        provider        TEXT NOT NULL,
        verifier        TEXT NOT NULL,
        nonce           TEXT NOT NULL,
        return_to       TEXT NOT NULL,
        expires_at      BIGINT NOT NULL
    );
    CREATE INDEX sso_sign_ins_by_client ON sso_sign_ins (client);
    CREATE INDEX sso_sign_ins_by_expiry ON sso_sign_ins (expires_at);
    "#,
    // Version 8: what a running turn holds back of the quotas, as SQLite's version 10 keeps it.
    r#"
    ALTER TABLE turns ADD COLUMN hold_tokens BIGINT NOT NULL DEFAULT 0;
    ALTER TABLE turns ADD COLUMN hold_nanos BIGINT NOT NULL DEFAULT 0;
    ALTER TABLE turns ADD COLUMN hold_currency TEXT;
    "#,
    // Version 9: API keys, as SQLite's version 11 keeps them.
    r#"
    CREATE TABLE api_keys (
        id          TEXT PRIMARY KEY,
        key_sha256  TEXT NOT NULL UNIQUE,
        hint        TEXT NOT NULL,
        org_id      TEXT NOT NULL,
        user_id     TEXT NOT NULL,
        name        TEXT NOT NULL,
        agents      TEXT NOT NULL,
        created_at  BIGINT NOT NULL,
        expires_at  BIGINT,
        revoked_at  BIGINT
    );
    CREATE INDEX api_keys_by_owner ON api_keys (org_id, user_id);
    "#,
    // Version 10: the pictures tools answered with, as SQLite's version 12 keeps them.
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
    // Version 11: share links, as SQLite's version 13 keeps them.
    r#"
    CREATE TABLE share_links (
        id              TEXT PRIMARY KEY,
        token           TEXT NOT NULL UNIQUE,
        org_id          TEXT NOT NULL,
        user_id         TEXT NOT NULL,
        conversation_id TEXT NOT NULL REFERENCES conversations (id),
        title           TEXT NOT NULL,
        visibility      TEXT NOT NULL,
        turns           BIGINT NOT NULL,
        snapshot        TEXT NOT NULL,
        created_at      BIGINT NOT NULL,
        expires_at      BIGINT,
        revoked_at      BIGINT
    );
    CREATE INDEX share_links_by_owner ON share_links (org_id, user_id);
    CREATE INDEX share_links_by_conversation ON share_links (conversation_id);
    "#,
    // Version 12: projects, as SQLite's version 14 keeps them.
    r#"
    CREATE TABLE projects (
        id           TEXT PRIMARY KEY,
        org_id       TEXT NOT NULL,
        user_id      TEXT NOT NULL,
        name         TEXT NOT NULL,
        instructions TEXT NOT NULL,
        agent_id     TEXT,
        created_at   BIGINT NOT NULL
    );
    CREATE INDEX projects_by_owner ON projects (org_id, user_id);
    ALTER TABLE conversations ADD COLUMN project_id TEXT REFERENCES projects (id);
    ALTER TABLE conversations ADD COLUMN pinned BOOLEAN NOT NULL DEFAULT false;
    DROP INDEX conversations_by_activity;
    CREATE INDEX conversations_by_activity
        ON conversations (org_id, user_id, pinned DESC, last_activity DESC, id DESC);
    CREATE INDEX conversations_by_project
        ON conversations (project_id, pinned DESC, last_activity DESC, id DESC);
    "#,
    // Version 13: knowledge, as SQLite's version 15 keeps it, searched through a generated
    // `tsvector` (headings weighed A, text B, accents taken off as `codec::without_accents`
    // takes them) and its GIN index; each organisation's totals kept by a trigger.
    r#"
    CREATE TABLE knowledge_collections (
        id          TEXT PRIMARY KEY,
        org_id      TEXT NOT NULL,
        user_id     TEXT,
        name        TEXT NOT NULL,
        description TEXT NOT NULL,
        created_at  BIGINT NOT NULL
    );
    CREATE UNIQUE INDEX knowledge_collections_by_name
        ON knowledge_collections (org_id, COALESCE(user_id, ''), name);

    CREATE TABLE knowledge_documents (
        id            TEXT PRIMARY KEY,
        collection_id TEXT NOT NULL REFERENCES knowledge_collections (id),
        org_id        TEXT NOT NULL,
        name          TEXT NOT NULL,
        media_type    TEXT NOT NULL,
        bytes         BIGINT NOT NULL,
        pages         BIGINT NOT NULL,
        passages      BIGINT NOT NULL,
        created_at    BIGINT NOT NULL,
        source_path   TEXT,
        source_stamp  TEXT
    );
    CREATE INDEX knowledge_documents_by_collection ON knowledge_documents (collection_id, bytes);
    CREATE UNIQUE INDEX knowledge_documents_by_source
        ON knowledge_documents (collection_id, source_path) WHERE source_path IS NOT NULL;

    CREATE TABLE knowledge_totals (
        org_id    TEXT PRIMARY KEY,
        documents BIGINT NOT NULL,
        bytes     BIGINT NOT NULL
    );
    CREATE FUNCTION knowledge_documents_count() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'INSERT' THEN
            INSERT INTO knowledge_totals (org_id, documents, bytes)
            VALUES (NEW.org_id, 1, NEW.bytes)
            ON CONFLICT (org_id) DO UPDATE SET documents = knowledge_totals.documents + 1,
                bytes = knowledge_totals.bytes + EXCLUDED.bytes;
        ELSE
            UPDATE knowledge_totals SET documents = documents - 1, bytes = bytes - OLD.bytes
            WHERE org_id = OLD.org_id;
        END IF;
        RETURN NULL;
    END
    $$;
    CREATE TRIGGER knowledge_documents_counted AFTER INSERT OR DELETE ON knowledge_documents
        FOR EACH ROW EXECUTE FUNCTION knowledge_documents_count();

    CREATE TABLE knowledge_passages (
        id          BIGSERIAL PRIMARY KEY,
        document_id TEXT NOT NULL REFERENCES knowledge_documents (id),
        position    BIGINT NOT NULL,
        page        BIGINT,
        headings    TEXT NOT NULL,
        body        TEXT NOT NULL,
        search      tsvector GENERATED ALWAYS AS (
            setweight(to_tsvector('english',
                regexp_replace(normalize(headings, NFD), '[\u0300-\u036f]', '', 'g')), 'A') ||
            setweight(to_tsvector('english',
                regexp_replace(normalize(body, NFD), '[\u0300-\u036f]', '', 'g')), 'B')
        ) STORED
    );
    CREATE INDEX knowledge_passages_by_document ON knowledge_passages (document_id, position);
    CREATE INDEX knowledge_passages_search ON knowledge_passages USING GIN (search);
    "#,
];

/// Brings the database to [`SCHEMA_VERSION`], applying the missing migrations in one
/// transaction: either all of them land or none.
pub(super) fn migrate(connection: &mut Connection) -> Result<()> {
    let mut transaction = connection.transaction(false)?;
    transaction.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])?;
    transaction.batch_execute(
        "CREATE TABLE IF NOT EXISTS portal_schema (version BIGINT NOT NULL);
         INSERT INTO portal_schema (version)
         SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM portal_schema);",
    )?;
    let found: i64 = transaction
        .query_one("SELECT version FROM portal_schema", &[])?
        .get(0);
    let found = u32::try_from(found).unwrap_or(u32::MAX);
    check_schema("PostgreSQL", found, SCHEMA_VERSION, true)?;
    for (from, sql) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        let version = from as u32 + 1;
        transaction
            .batch_execute(sql)
            .map_err(|source| StorageError::PostgresMigration { version, source })?;
    }
    if found < SCHEMA_VERSION {
        transaction.execute(
            "UPDATE portal_schema SET version = $1",
            &[&i64::from(SCHEMA_VERSION)],
        )?;
    }
    transaction.commit()?;
    Ok(())
}

/// Refuses a database this build cannot read as it is, without changing it: one a newer Portal
/// migrated, or one older than this build's schema (`portal usage` reads, it never migrates).
pub(super) fn check_current(connection: &mut Connection) -> Result<()> {
    let mut transaction = connection.transaction(false)?;
    let exists: bool = transaction
        .query_one("SELECT to_regclass('portal_schema') IS NOT NULL", &[])?
        .get(0);
    let found: i64 = if exists {
        transaction
            .query_one("SELECT version FROM portal_schema", &[])?
            .get(0)
    } else {
        0
    };
    transaction.commit()?;
    check_schema(
        "PostgreSQL",
        u32::try_from(found).unwrap_or(u32::MAX),
        SCHEMA_VERSION,
        false,
    )
}
