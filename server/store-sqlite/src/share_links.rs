//! The SQLite queries behind share links (docs/share.md); making one is
//! `rules::create_share_link`, over this database's statements.

use rusqlite::{Connection, OptionalExtension, Row, params};

use portal_core::Transcript;
use portal_store::{ConversationId, Owner, Result, ShareLink, ShareVisibility, StorageError};

const COLUMNS: &str = "id, token, org_id, user_id, conversation_id, title, visibility, turns, \
                       created_at, expires_at, revoked_at";

pub(super) fn live(c: &Connection, owner: &Owner, now_ms: i64) -> Result<u64> {
    Ok(c.prepare_cached(
        "SELECT count(*) FROM share_links WHERE org_id = ?1 AND user_id = ?2
             AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?3)",
    )?
    .query_row(params![owner.org_id, owner.user_id, now_ms], |row| {
        row.get(0)
    })?)
}

pub(super) fn insert(c: &Connection, link: &ShareLink, snapshot: &str) -> Result<()> {
    c.prepare_cached(&format!(
        "INSERT INTO share_links ({COLUMNS}, snapshot)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)"
    ))?
    .execute(params![
        link.id,
        link.token,
        link.owner.org_id,
        link.owner.user_id,
        link.conversation.as_str(),
        link.title,
        link.visibility.as_str(),
        link.turns,
        link.created_at_ms,
        link.expires_at_ms,
        link.revoked_at_ms,
        snapshot
    ])?;
    Ok(())
}

pub(super) fn list(c: &Connection, owner: &Owner) -> Result<Vec<ShareLink>> {
    let mut statement = c.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM share_links WHERE org_id = ?1 AND user_id = ?2
             ORDER BY created_at DESC, id DESC"
    ))?;
    let rows = statement.query_map([&owner.org_id, &owner.user_id], read)?;
    rows.map(|row| row?).collect()
}

pub(super) fn find(c: &Connection, token: &str) -> Result<Option<(ShareLink, Transcript)>> {
    let found = c
        .prepare_cached(&format!(
            "SELECT {COLUMNS}, snapshot FROM share_links WHERE token = ?1"
        ))?
        .query_row([token], |row| Ok((read(row)?, row.get::<_, String>(11)?)))
        .optional()?;
    let Some((link, snapshot)) = found else {
        return Ok(None);
    };
    Ok(Some((link?, snapshot_of(&snapshot)?)))
}

pub(super) fn revoke(c: &Connection, owner: &Owner, id: &str) -> Result<bool> {
    let found = c
        .prepare_cached(
            "UPDATE share_links
                 SET revoked_at = coalesce(revoked_at, CAST(unixepoch('subsec') * 1000 AS INTEGER))
                 WHERE org_id = ?1 AND user_id = ?2 AND id = ?3",
        )?
        .execute(params![owner.org_id, owner.user_id, id])?;
    Ok(found > 0)
}

/// A stored snapshot as a transcript.
fn snapshot_of(json: &str) -> Result<Transcript> {
    serde_json::from_str(json).map_err(|error| StorageError::Unreadable {
        what: "a share link's snapshot",
        detail: error.to_string(),
    })
}

/// A row as a link; a visibility this build does not know is unreadable.
fn read(row: &Row<'_>) -> rusqlite::Result<Result<ShareLink>> {
    let visibility: String = row.get(6)?;
    let Some(visibility) = ShareVisibility::named(&visibility) else {
        return Ok(Err(StorageError::Unreadable {
            what: "a share link's visibility",
            detail: visibility,
        }));
    };
    Ok(Ok(ShareLink {
        id: row.get(0)?,
        token: row.get(1)?,
        owner: Owner::new(row.get::<_, String>(2)?, row.get::<_, String>(3)?),
        conversation: ConversationId::new(row.get::<_, String>(4)?),
        title: row.get(5)?,
        visibility,
        turns: row.get(7)?,
        created_at_ms: row.get(8)?,
        expires_at_ms: row.get(9)?,
        revoked_at_ms: row.get(10)?,
    }))
}
