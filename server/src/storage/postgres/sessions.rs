//! The PostgreSQL queries behind sign-in sessions and the failed sign-ins the throttle counts.

use super::connection::Tx;

use super::super::{Owner, Result, SignInPlaces, StoredSession, ThrottleRule};

pub(super) fn create(t: &mut Tx<'_>, session: &StoredSession) -> Result<()> {
    t.execute(
        "INSERT INTO sessions (id_sha256, org_id, user_id, stamp, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6)",
        &[
            &session.id_sha256,
            &session.owner.org_id,
            &session.owner.user_id,
            &session.stamp,
            &session.created_at_ms,
            &session.expires_at_ms,
        ],
    )?;
    Ok(())
}

pub(super) fn find(t: &mut Tx<'_>, id_sha256: &str) -> Result<Option<StoredSession>> {
    Ok(t.query_opt(
        "SELECT id_sha256, org_id, user_id, stamp, created_at, expires_at FROM sessions
             WHERE id_sha256 = $1",
        &[&id_sha256],
    )?
    .map(|row| StoredSession {
        id_sha256: row.get(0),
        owner: Owner {
            org_id: row.get(1),
            user_id: row.get(2),
        },
        stamp: row.get(3),
        created_at_ms: row.get(4),
        expires_at_ms: row.get(5),
    }))
}

pub(super) fn extend(t: &mut Tx<'_>, id_sha256: &str, expires_at_ms: i64) -> Result<()> {
    t.execute(
        "UPDATE sessions SET expires_at = $2 WHERE id_sha256 = $1",
        &[&id_sha256, &expires_at_ms],
    )?;
    Ok(())
}

pub(super) fn revoke(t: &mut Tx<'_>, id_sha256: &str) -> Result<()> {
    t.execute("DELETE FROM sessions WHERE id_sha256 = $1", &[&id_sha256])?;
    Ok(())
}

pub(super) fn remove_expired(t: &mut Tx<'_>, now_ms: i64) -> Result<u64> {
    Ok(t.execute("DELETE FROM sessions WHERE expires_at < $1", &[&now_ms])?)
}

/// See `Storage::take_sign_in_places`. Each key is locked with an advisory lock, in sorted
/// order so that two sign-ins never wait on each other; old failures of other keys are removed
/// where no other sign-in holds them (`SKIP LOCKED`), so sign-ins never wait on that either.
pub(super) fn take_places(
    t: &mut Tx<'_>,
    keys: &[String],
    window_ms: i64,
    rule: ThrottleRule,
) -> Result<SignInPlaces> {
    let mut locked: Vec<&String> = keys.iter().collect();
    locked.sort();
    locked.dedup();
    for key in locked {
        t.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
            &[&format!("sign-in {key}")],
        )?;
    }
    let now: i64 = t.query_one("SELECT portal_now_ms()", &[])?.get(0);
    let cutoff = now.saturating_sub(window_ms);
    t.execute(
        "DELETE FROM sign_in_failures WHERE id IN
             (SELECT id FROM sign_in_failures WHERE at <= $1 FOR UPDATE SKIP LOCKED)",
        &[&cutoff],
    )?;
    let mut failures = Vec::with_capacity(keys.len());
    for key in keys {
        let rows = t.query(
            "SELECT at FROM sign_in_failures WHERE key = $1 AND at > $2 ORDER BY at, id",
            &[key, &cutoff],
        )?;
        failures.push(rows.iter().map(|row| row.get(0)).collect());
    }
    if let Some(wait) = rule(&failures, now) {
        return Ok(SignInPlaces::Wait(wait));
    }
    let mut places = Vec::with_capacity(keys.len());
    for key in keys {
        places.push(
            t.query_one(
                "INSERT INTO sign_in_failures (key, at) VALUES ($1, $2) RETURNING id",
                &[key, &now],
            )?
            .get(0),
        );
    }
    Ok(SignInPlaces::Taken(places))
}

/// See `Storage::forget_sign_in_failures`.
pub(super) fn forget(t: &mut Tx<'_>, keys: &[String], places: &[i64]) -> Result<()> {
    for key in keys {
        t.execute("DELETE FROM sign_in_failures WHERE key = $1", &[key])?;
    }
    for place in places {
        t.execute("DELETE FROM sign_in_failures WHERE id = $1", &[place])?;
    }
    Ok(())
}
