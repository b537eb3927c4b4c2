//! The SQLite queries behind projects (docs/projects.md); making, changing and deleting one, and
//! moving a conversation into one, are storage's rules (`rules::create_project` and the rest),
//! over this database's statements.

use rusqlite::{Connection, OptionalExtension, Row, params};

use portal_store::{ConversationId, Owner, Project, Result, StorageError};

const COLUMNS: &str = "id, org_id, user_id, name, instructions, agent_id, created_at";

pub(super) fn list(c: &Connection, owner: &Owner) -> Result<Vec<Project>> {
    let mut statement = c.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM projects WHERE org_id = ?1 AND user_id = ?2
             ORDER BY created_at DESC, id DESC"
    ))?;
    let rows = statement.query_map([&owner.org_id, &owner.user_id], read)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

pub(super) fn one(c: &Connection, owner: &Owner, id: &str) -> Result<Project> {
    owned(c, owner, id)?.ok_or_else(|| StorageError::ProjectNotFound {
        project: id.to_string(),
    })
}

/// `owner`'s project `id`, if they have one.
pub(super) fn owned(c: &Connection, owner: &Owner, id: &str) -> Result<Option<Project>> {
    Ok(c.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM projects WHERE id = ?1 AND org_id = ?2 AND user_id = ?3"
    ))?
    .query_row(params![id, owner.org_id, owner.user_id], read)
    .optional()?)
}

pub(super) fn count(c: &Connection, owner: &Owner) -> Result<u64> {
    Ok(
        c.prepare_cached("SELECT count(*) FROM projects WHERE org_id = ?1 AND user_id = ?2")?
            .query_row(params![owner.org_id, owner.user_id], |row| row.get(0))?,
    )
}

pub(super) fn insert(c: &Connection, project: &Project) -> Result<()> {
    c.prepare_cached(&format!(
        "INSERT INTO projects ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"
    ))?
    .execute(params![
        project.id,
        project.owner.org_id,
        project.owner.user_id,
        project.name,
        project.instructions,
        project.agent_id,
        project.created_at_ms
    ])?;
    Ok(())
}

pub(super) fn update(c: &Connection, project: &Project) -> Result<()> {
    c.prepare_cached(
        "UPDATE projects SET name = ?2, instructions = ?3, agent_id = ?4 WHERE id = ?1",
    )?
    .execute(params![
        project.id,
        project.name,
        project.instructions,
        project.agent_id
    ])?;
    Ok(())
}

pub(super) fn conversations(c: &Connection, id: &str) -> Result<Vec<ConversationId>> {
    let mut statement =
        c.prepare_cached("SELECT id FROM conversations WHERE project_id = ?1 ORDER BY id")?;
    let rows = statement.query_map([id], |row| row.get::<_, String>(0))?;
    rows.map(|id| Ok(ConversationId::new(id?))).collect()
}

pub(super) fn delete(c: &Connection, id: &str) -> Result<()> {
    c.prepare_cached("DELETE FROM projects WHERE id = ?1")?
        .execute([id])?;
    Ok(())
}

fn read(row: &Row<'_>) -> rusqlite::Result<Project> {
    Ok(Project {
        id: row.get(0)?,
        owner: Owner::new(row.get::<_, String>(1)?, row.get::<_, String>(2)?),
        name: row.get(3)?,
        instructions: row.get(4)?,
        agent_id: row.get(5)?,
        created_at_ms: row.get(6)?,
    })
}
