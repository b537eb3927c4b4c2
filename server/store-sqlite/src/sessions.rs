//! The SQLite queries behind sign-in sessions (the failed sign-ins the throttle counts are
//! `rules::take_sign_in_places`, over this database's statements).

use rusqlite::{Connection, OptionalExtension, params};

use portal_store::{Owner, Result, SsoAccount, StoredSession};

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

const SSO_COLUMNS: &str = "issuer, subject, org_id, user_id, name, created_at";

pub(super) fn sso_account(
    c: &Connection,
    issuer: &str,
    subject: &str,
) -> Result<Option<SsoAccount>> {
    Ok(c.prepare_cached(&format!(
        "SELECT {SSO_COLUMNS} FROM sso_accounts WHERE issuer = ?1 AND subject = ?2"
    ))?
    .query_row([issuer, subject], sso_row)
    .optional()?)
}

pub(super) fn sso_account_of(c: &Connection, owner: &Owner) -> Result<Option<SsoAccount>> {
    Ok(c.prepare_cached(&format!(
        "SELECT {SSO_COLUMNS} FROM sso_accounts WHERE org_id = ?1 AND user_id = ?2"
    ))?
    .query_row([&owner.org_id, &owner.user_id], sso_row)
    .optional()?)
}

pub(super) fn create_sso_account(c: &Connection, account: &SsoAccount) -> Result<()> {
    c.prepare_cached(&format!(
        "INSERT INTO sso_accounts ({SSO_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
    ))?
    .execute(params![
        account.issuer,
        account.subject,
        account.owner.org_id,
        account.owner.user_id,
        account.name,
        account.created_at_ms
    ])?;
    Ok(())
}

fn sso_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<SsoAccount> {
    Ok(SsoAccount {
        issuer: row.get(0)?,
        subject: row.get(1)?,
        owner: Owner {
            org_id: row.get(2)?,
            user_id: row.get(3)?,
        },
        name: row.get(4)?,
        created_at_ms: row.get(5)?,
    })
}
