//! The PostgreSQL queries behind share links (docs/share.md); making one is
//! `rules::create_share_link`, over this database's statements.

use postgres::Row;

use super::connection::Tx;
use super::count;

use portal_core::Transcript;
use portal_store::{ConversationId, Owner, Result, ShareLink, ShareVisibility, StorageError};

const COLUMNS: &str = "id, token, org_id, user_id, conversation_id, title, visibility, turns, \
                       created_at, expires_at, revoked_at";

pub(super) fn live(t: &mut Tx<'_>, owner: &Owner, now_ms: i64) -> Result<u64> {
    let row = t.query_one(
        "SELECT count(*) FROM share_links WHERE org_id = $1 AND user_id = $2
             AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $3)",
        &[&owner.org_id, &owner.user_id, &now_ms],
    )?;
    count(row.get(0))
}

pub(super) fn insert(t: &mut Tx<'_>, link: &ShareLink, snapshot: &str) -> Result<()> {
    t.execute(
        &format!(
            "INSERT INTO share_links ({COLUMNS}, snapshot)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
        ),
        &[
            &link.id,
            &link.token,
            &link.owner.org_id,
            &link.owner.user_id,
            &link.conversation.as_str(),
            &link.title,
            &link.visibility.as_str(),
            &i64::from(link.turns),
            &link.created_at_ms,
            &link.expires_at_ms,
            &link.revoked_at_ms,
            &snapshot,
        ],
    )?;
    Ok(())
}

pub(super) fn list(t: &mut Tx<'_>, owner: &Owner) -> Result<Vec<ShareLink>> {
    t.query(
        &format!(
            "SELECT {COLUMNS} FROM share_links WHERE org_id = $1 AND user_id = $2
                 ORDER BY created_at DESC, id DESC"
        ),
        &[&owner.org_id, &owner.user_id],
    )?
    .iter()
    .map(read)
    .collect()
}

pub(super) fn find(t: &mut Tx<'_>, token: &str) -> Result<Option<(ShareLink, Transcript)>> {
    let Some(row) = t.query_opt(
        &format!("SELECT {COLUMNS}, snapshot FROM share_links WHERE token = $1"),
        &[&token],
    )?
    else {
        return Ok(None);
    };
    let snapshot: String = row.get(11);
    let snapshot = serde_json::from_str(&snapshot).map_err(|error| StorageError::Unreadable {
        what: "a share link's snapshot",
        detail: error.to_string(),
    })?;
    Ok(Some((read(&row)?, snapshot)))
}

pub(super) fn revoke(t: &mut Tx<'_>, owner: &Owner, id: &str) -> Result<bool> {
    let found = t.execute(
        "UPDATE share_links SET revoked_at = coalesce(revoked_at, portal_now_ms())
             WHERE org_id = $1 AND user_id = $2 AND id = $3",
        &[&owner.org_id, &owner.user_id, &id],
    )?;
    Ok(found > 0)
}

/// A row as a link; a visibility this build does not know is unreadable.
fn read(row: &Row) -> Result<ShareLink> {
    let visibility: String = row.get(6);
    let turns: i64 = row.get(7);
    Ok(ShareLink {
        id: row.get(0),
        token: row.get(1),
        owner: Owner::new(row.get::<_, String>(2), row.get::<_, String>(3)),
        conversation: ConversationId::new(row.get::<_, String>(4)),
        title: row.get(5),
        visibility: ShareVisibility::named(&visibility).ok_or(StorageError::Unreadable {
            what: "a share link's visibility",
            detail: visibility.clone(),
        })?,
        turns: u32::try_from(turns).unwrap_or(u32::MAX),
        created_at_ms: row.get(8),
        expires_at_ms: row.get(9),
        revoked_at_ms: row.get(10),
    })
}
