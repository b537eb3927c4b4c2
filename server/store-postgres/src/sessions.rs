//! The PostgreSQL queries behind sign-in sessions (the failed sign-ins the throttle counts are
//! `rules::take_sign_in_places`, over this database's statements).

use super::connection::Tx;

use portal_store::{Owner, Result, SsoAccount, StoredSession};

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

const SSO_COLUMNS: &str = "issuer, subject, org_id, user_id, name, created_at";

pub(super) fn sso_account(
    t: &mut Tx<'_>,
    issuer: &str,
    subject: &str,
) -> Result<Option<SsoAccount>> {
    Ok(t.query_opt(
        &format!("SELECT {SSO_COLUMNS} FROM sso_accounts WHERE issuer = $1 AND subject = $2"),
        &[&issuer, &subject],
    )?
    .map(|row| sso_row(&row)))
}

pub(super) fn sso_account_of(t: &mut Tx<'_>, owner: &Owner) -> Result<Option<SsoAccount>> {
    Ok(t.query_opt(
        &format!("SELECT {SSO_COLUMNS} FROM sso_accounts WHERE org_id = $1 AND user_id = $2"),
        &[&owner.org_id, &owner.user_id],
    )?
    .map(|row| sso_row(&row)))
}

pub(super) fn create_sso_account(t: &mut Tx<'_>, account: &SsoAccount) -> Result<()> {
    t.execute(
        &format!("INSERT INTO sso_accounts ({SSO_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)"),
        &[
            &account.issuer,
            &account.subject,
            &account.owner.org_id,
            &account.owner.user_id,
            &account.name,
            &account.created_at_ms,
        ],
    )?;
    Ok(())
}

fn sso_row(row: &postgres::Row) -> SsoAccount {
    SsoAccount {
        issuer: row.get(0),
        subject: row.get(1),
        owner: Owner {
            org_id: row.get(2),
            user_id: row.get(3),
        },
        name: row.get(4),
        created_at_ms: row.get(5),
    }
}
