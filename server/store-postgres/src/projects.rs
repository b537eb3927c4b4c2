//! The PostgreSQL queries behind projects (docs/projects.md); making, changing and deleting one,
//! and moving a conversation into one, are storage's rules (`rules::create_project` and the
//! rest), over this database's statements.

use postgres::Row;

use super::connection::Tx;
use super::count;

use portal_store::{ConversationId, Owner, Project, Result, StorageError};

const COLUMNS: &str = "id, org_id, user_id, name, instructions, agent_id, created_at";

pub(super) fn list(t: &mut Tx<'_>, owner: &Owner) -> Result<Vec<Project>> {
    Ok(t.query(
        &format!(
            "SELECT {COLUMNS} FROM projects WHERE org_id = $1 AND user_id = $2
                     ORDER BY created_at DESC, id DESC"
        ),
        &[&owner.org_id, &owner.user_id],
    )?
    .iter()
    .map(read)
    .collect())
}

pub(super) fn one(t: &mut Tx<'_>, owner: &Owner, id: &str) -> Result<Project> {
    let row = t
        .query_opt(
            &format!(
                "SELECT {COLUMNS} FROM projects WHERE id = $1 AND org_id = $2 AND user_id = $3"
            ),
            &[&id, &owner.org_id, &owner.user_id],
        )?
        .ok_or_else(|| StorageError::ProjectNotFound {
            project: id.to_string(),
        })?;
    Ok(read(&row))
}

/// `owner`'s project `id`, locked until the transaction ends, if they have one.
pub(super) fn lock_owned(t: &mut Tx<'_>, owner: &Owner, id: &str) -> Result<Option<Project>> {
    Ok(t.query_opt(
        &format!(
            "SELECT {COLUMNS} FROM projects WHERE id = $1 AND org_id = $2 AND user_id = $3
                     FOR UPDATE"
        ),
        &[&id, &owner.org_id, &owner.user_id],
    )?
    .as_ref()
    .map(read))
}

pub(super) fn count_owned(t: &mut Tx<'_>, owner: &Owner) -> Result<u64> {
    let row = t.query_one(
        "SELECT count(*) FROM projects WHERE org_id = $1 AND user_id = $2",
        &[&owner.org_id, &owner.user_id],
    )?;
    count(row.get(0))
}

pub(super) fn insert(t: &mut Tx<'_>, project: &Project) -> Result<()> {
    t.execute(
        &format!("INSERT INTO projects ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)"),
        &[
            &project.id,
            &project.owner.org_id,
            &project.owner.user_id,
            &project.name,
            &project.instructions,
            &project.agent_id,
            &project.created_at_ms,
        ],
    )?;
    Ok(())
}

pub(super) fn update(t: &mut Tx<'_>, project: &Project) -> Result<()> {
    t.execute(
        "UPDATE projects SET name = $2, instructions = $3, agent_id = $4 WHERE id = $1",
        &[
            &project.id,
            &project.name,
            &project.instructions,
            &project.agent_id,
        ],
    )?;
    Ok(())
}

pub(super) fn conversations(t: &mut Tx<'_>, id: &str) -> Result<Vec<ConversationId>> {
    Ok(t.query(
        "SELECT id FROM conversations WHERE project_id = $1 ORDER BY id",
        &[&id],
    )?
    .iter()
    .map(|row| ConversationId::new(row.get::<_, String>(0)))
    .collect())
}

pub(super) fn delete(t: &mut Tx<'_>, id: &str) -> Result<()> {
    t.execute("DELETE FROM projects WHERE id = $1", &[&id])?;
    Ok(())
}

fn read(row: &Row) -> Project {
    Project {
        id: row.get(0),
        owner: Owner::new(row.get::<_, String>(1), row.get::<_, String>(2)),
        name: row.get(3),
        instructions: row.get(4),
        agent_id: row.get(5),
        created_at_ms: row.get(6),
    }
}
