//! The PostgreSQL queries behind API keys (docs/api.md); making one is `rules::create_api_key`,
//! over this database's statements.

use postgres::Row;

use super::connection::Tx;
use super::count;

use portal_store::{Owner, Result, StorageError, StoredApiKey};

const COLUMNS: &str =
    "id, key_sha256, hint, org_id, user_id, name, agents, created_at, expires_at, revoked_at";

pub(super) fn live(t: &mut Tx<'_>, owner: &Owner, now_ms: i64) -> Result<u64> {
    let row = t.query_one(
        "SELECT count(*) FROM api_keys WHERE org_id = $1 AND user_id = $2
             AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $3)",
        &[&owner.org_id, &owner.user_id, &now_ms],
    )?;
    count(row.get(0))
}

pub(super) fn insert(t: &mut Tx<'_>, key: &StoredApiKey) -> Result<()> {
    let agents = serde_json::to_string(&key.agents).unwrap_or_else(|_| "[]".into());
    t.execute(
        &format!(
            "INSERT INTO api_keys ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
        ),
        &[
            &key.id,
            &key.key_sha256,
            &key.hint,
            &key.owner.org_id,
            &key.owner.user_id,
            &key.name,
            &agents,
            &key.created_at_ms,
            &key.expires_at_ms,
            &key.revoked_at_ms,
        ],
    )?;
    Ok(())
}

pub(super) fn list(t: &mut Tx<'_>, owner: &Owner) -> Result<Vec<StoredApiKey>> {
    t.query(
        &format!(
            "SELECT {COLUMNS} FROM api_keys WHERE org_id = $1 AND user_id = $2
                 ORDER BY created_at DESC, id DESC"
        ),
        &[&owner.org_id, &owner.user_id],
    )?
    .iter()
    .map(read)
    .collect()
}

pub(super) fn find(t: &mut Tx<'_>, key_sha256: &str) -> Result<Option<StoredApiKey>> {
    t.query_opt(
        &format!("SELECT {COLUMNS} FROM api_keys WHERE key_sha256 = $1"),
        &[&key_sha256],
    )?
    .as_ref()
    .map(read)
    .transpose()
}

pub(super) fn revoke(t: &mut Tx<'_>, owner: &Owner, id: &str) -> Result<bool> {
    let found = t.execute(
        "UPDATE api_keys SET revoked_at = coalesce(revoked_at, portal_now_ms())
             WHERE org_id = $1 AND user_id = $2 AND id = $3",
        &[&owner.org_id, &owner.user_id, &id],
    )?;
    Ok(found > 0)
}

/// A row as a key; an `agents` column that is not a JSON list of names is unreadable.
fn read(row: &Row) -> Result<StoredApiKey> {
    let agents: String = row.get(6);
    let agents = serde_json::from_str(&agents).map_err(|error| StorageError::Unreadable {
        what: "an API key's agents",
        detail: error.to_string(),
    })?;
    Ok(StoredApiKey {
        id: row.get(0),
        key_sha256: row.get(1),
        hint: row.get(2),
        owner: Owner::new(row.get::<_, String>(3), row.get::<_, String>(4)),
        name: row.get(5),
        agents,
        created_at_ms: row.get(7),
        expires_at_ms: row.get(8),
        revoked_at_ms: row.get(9),
    })
}
