//! The SQLite queries behind sign-in sessions and the failed sign-ins the throttle counts.

use rusqlite::{Connection, OptionalExtension, params};

use super::super::{Owner, Result, SignInPlaces, StoredSession, ThrottleRule};

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

/// See `Storage::take_sign_in_places`. The write transaction it runs in is the lock: SQLite
/// has one writer.
pub(super) fn take_places(
    c: &Connection,
    keys: &[String],
    window_ms: i64,
    rule: ThrottleRule,
) -> Result<SignInPlaces> {
    let now: i64 = c
        .prepare_cached("SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)")?
        .query_row([], |row| row.get(0))?;
    let cutoff = now.saturating_sub(window_ms);
    c.prepare_cached("DELETE FROM sign_in_failures WHERE at <= ?1")?
        .execute([cutoff])?;
    let mut failures = Vec::with_capacity(keys.len());
    for key in keys {
        let times = c
            .prepare_cached(
                "SELECT at FROM sign_in_failures WHERE key = ?1 AND at > ?2 ORDER BY at, id",
            )?
            .query_map(params![key, cutoff], |row| row.get(0))?
            .collect::<rusqlite::Result<Vec<i64>>>()?;
        failures.push(times);
    }
    if let Some(wait) = rule(&failures, now) {
        return Ok(SignInPlaces::Wait(wait));
    }
    let mut places = Vec::with_capacity(keys.len());
    for key in keys {
        places.push(
            c.prepare_cached(
                "INSERT INTO sign_in_failures (key, at) VALUES (?1, ?2) RETURNING id",
            )?
            .query_row(params![key, now], |row| row.get(0))?,
        );
    }
    Ok(SignInPlaces::Taken(places))
}

/// See `Storage::forget_sign_in_failures`.
pub(super) fn forget(c: &Connection, keys: &[String], places: &[i64]) -> Result<()> {
    for key in keys {
        c.prepare_cached("DELETE FROM sign_in_failures WHERE key = ?1")?
            .execute([key])?;
    }
    for place in places {
        c.prepare_cached("DELETE FROM sign_in_failures WHERE id = ?1")?
            .execute([place])?;
    }
    Ok(())
}
