//! The SQLite queries behind API keys (docs/api.md); making one is `rules::create_api_key`,
//! over this database's statements.

use rusqlite::{Connection, OptionalExtension, Row, params};

use portal_store::{Owner, Result, StorageError, StoredApiKey};

const COLUMNS: &str =
    "id, key_sha256, hint, org_id, user_id, name, agents, created_at, expires_at, revoked_at";

pub(super) fn live(c: &Connection, owner: &Owner, now_ms: i64) -> Result<u64> {
    Ok(c.prepare_cached(
        "SELECT count(*) FROM api_keys WHERE org_id = ?1 AND user_id = ?2
             AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?3)",
    )?
    .query_row(params![owner.org_id, owner.user_id, now_ms], |row| {
        row.get(0)
    })?)
}

pub(super) fn insert(c: &Connection, key: &StoredApiKey) -> Result<()> {
    c.prepare_cached(&format!(
        "INSERT INTO api_keys ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
    ))?
    .execute(params![
        key.id,
        key.key_sha256,
        key.hint,
        key.owner.org_id,
        key.owner.user_id,
        key.name,
        agents_text(&key.agents),
        key.created_at_ms,
        key.expires_at_ms,
        key.revoked_at_ms
    ])?;
    Ok(())
}

pub(super) fn list(c: &Connection, owner: &Owner) -> Result<Vec<StoredApiKey>> {
    let mut statement = c.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM api_keys WHERE org_id = ?1 AND user_id = ?2
             ORDER BY created_at DESC, id DESC"
    ))?;
    let rows = statement.query_map([&owner.org_id, &owner.user_id], read)?;
    rows.map(|row| row?).collect()
}

pub(super) fn find(c: &Connection, key_sha256: &str) -> Result<Option<StoredApiKey>> {
    c.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM api_keys WHERE key_sha256 = ?1"
    ))?
    .query_row([key_sha256], read)
    .optional()?
    .transpose()
}

pub(super) fn revoke(c: &Connection, owner: &Owner, id: &str) -> Result<bool> {
    let found = c
        .prepare_cached(
            "UPDATE api_keys
                 SET revoked_at = coalesce(revoked_at, CAST(unixepoch('subsec') * 1000 AS INTEGER))
                 WHERE org_id = ?1 AND user_id = ?2 AND id = ?3",
        )?
        .execute(params![owner.org_id, owner.user_id, id])?;
    Ok(found > 0)
}

fn agents_text(agents: &[String]) -> String {
    serde_json::to_string(agents).unwrap_or_else(|_| "[]".into())
}

/// A row as a key; an `agents` column that is not a JSON list of names is unreadable.
fn read(row: &Row<'_>) -> rusqlite::Result<Result<StoredApiKey>> {
    let agents: String = row.get(6)?;
    let agents = match serde_json::from_str(&agents) {
        Ok(agents) => agents,
        Err(error) => {
            return Ok(Err(StorageError::Unreadable {
                what: "an API key's agents",
                detail: error.to_string(),
            }));
        }
    };
    Ok(Ok(StoredApiKey {
        id: row.get(0)?,
        key_sha256: row.get(1)?,
        hint: row.get(2)?,
        owner: Owner::new(row.get::<_, String>(3)?, row.get::<_, String>(4)?),
        name: row.get(5)?,
        agents,
        created_at_ms: row.get(7)?,
        expires_at_ms: row.get(8)?,
        revoked_at_ms: row.get(9)?,
    }))
}
