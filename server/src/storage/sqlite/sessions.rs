//! The SQLite queries behind sign-in sessions (the failed sign-ins the throttle counts are
//! `rules::take_sign_in_places`, over this database's statements).

use rusqlite::{Connection, OptionalExtension, params};

use super::super::{Owner, Result, StoredSession};

pub(super) fn create(c: &Connection, session: &StoredSession) -> Result<()> {
    c.prepare_cached(
        "INSERT INTO sessions (id_sha256, org_id, user_id, stamp, created_at, expires_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        session.id_sha256,
        session.owner.org_id,
        session.owner.user_id,
        session.stamp,
        session.created_at_ms,
        session.expires_at_ms
    ])?;
    Ok(())
}

pub(super) fn find(c: &Connection, id_sha256: &str) -> Result<Option<StoredSession>> {
    Ok(c.prepare_cached(
        "SELECT id_sha256, org_id, user_id, stamp, created_at, expires_at FROM sessions
             WHERE id_sha256 = ?1",
    )?
    .query_row([id_sha256], |row| {
        Ok(StoredSession {
            id_sha256: row.get(0)?,
            owner: Owner {
                org_id: row.get(1)?,
                user_id: row.get(2)?,
            },
            stamp: row.get(3)?,
            created_at_ms: row.get(4)?,
            expires_at_ms: row.get(5)?,
        })
    })
    .optional()?)
}

pub(super) fn extend(c: &Connection, id_sha256: &str, expires_at_ms: i64) -> Result<()> {
    c.prepare_cached("UPDATE sessions SET expires_at = ?2 WHERE id_sha256 = ?1")?
        .execute(params![id_sha256, expires_at_ms])?;
    Ok(())
}

pub(super) fn revoke(c: &Connection, id_sha256: &str) -> Result<()> {
    c.prepare_cached("DELETE FROM sessions WHERE id_sha256 = ?1")?
        .execute([id_sha256])?;
    Ok(())
}

pub(super) fn remove_expired(c: &Connection, now_ms: i64) -> Result<u64> {
    let removed = c
        .prepare_cached("DELETE FROM sessions WHERE expires_at < ?1")?
        .execute([now_ms])?;
    Ok(removed as u64)
}
