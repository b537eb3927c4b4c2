//! The SQLite queries behind the conversation list: a page of a user's conversations (searched,
//! of one project, or not) and one conversation's summary (changing one is
//! `rules::change_conversation`, deleting one `rules::delete_conversation`).

use portal_core::{Block, Message};
use rusqlite::{Connection, OptionalExtension, params};

use super::search::{FINDS, FINDS_IN_TEXT_BLOCK};
use super::statements::Statements;
use portal_store::assemble::{self, SummaryRow, not_found, summary};
use portal_store::codec::parse_json;
use portal_store::rules;
use portal_store::{
    ConversationId, ConversationPage, ConversationQuery, ConversationSummary, Owner, ProjectFilter,
    Result,
};

/// The columns of a [`ConversationSummary`], for `c` a conversations row.
const SUMMARY: &str = "c.id, c.title, c.created_at, c.last_activity,
    (SELECT t.status FROM turns t WHERE t.conversation_id = c.id ORDER BY t.turn DESC LIMIT 1),
    c.project_id, c.pinned";

pub(super) fn page(
    c: &Connection,
    owner: &Owner,
    query: &ConversationQuery,
) -> Result<ConversationPage> {
    let mut sql =
        format!("SELECT {SUMMARY} FROM conversations c WHERE c.org_id = ?1 AND c.user_id = ?2");
    if query.after.is_some() {
        sql.push_str(" AND (c.pinned, c.last_activity, c.id) < (?3, ?4, ?5)");
    }
    if query.search.is_some() {
        sql.push_str(&format!(
            " AND ({FINDS}(c.title, ?6) OR EXISTS (
                SELECT 1 FROM blocks b WHERE b.conversation_id = c.id AND b.kind = 'text'
                AND {FINDS_IN_TEXT_BLOCK}(b.body, ?6)))"
        ));
    }
    let project = match &query.project {
        ProjectFilter::Any => None,
        ProjectFilter::Outside => {
            sql.push_str(" AND c.project_id IS NULL");
            None
        }
        ProjectFilter::Within(project) => {
            sql.push_str(" AND c.project_id = ?7");
            Some(project.as_str())
        }
    };
    sql.push_str(" ORDER BY c.pinned DESC, c.last_activity DESC, c.id DESC LIMIT ?8");
    let (after_pinned, after_at, after_id) = match &query.after {
        Some(cursor) => (
            Some(cursor.pinned),
            Some(cursor.last_activity_ms),
            Some(cursor.id.as_str()),
        ),
        None => (None, None, None),
    };
    let search = query.search.as_deref().map(str::to_lowercase);
    let mut statement = c.prepare_cached(&sql)?;
    // Unused parameters are still bound, so every variant takes the same eight.
    let rows = statement
        .query_map(
            params![
                owner.org_id,
                owner.user_id,
                after_pinned,
                after_at,
                after_id,
                search,
                project,
                i64::from(query.limit) + 1
            ],
            summary_row,
        )?
        .collect::<rusqlite::Result<_>>()?;
    assemble::page(rows, query)
}

pub(super) fn one(
    c: &Connection,
    owner: &Owner,
    conversation: &ConversationId,
) -> Result<ConversationSummary> {
    let row = c
        .prepare_cached(&format!(
            "SELECT {SUMMARY} FROM conversations c
             WHERE c.id = ?1 AND c.org_id = ?2 AND c.user_id = ?3"
        ))?
        .query_row(
            params![conversation.as_str(), owner.org_id, owner.user_id],
            summary_row,
        )
        .optional()?
        .ok_or_else(|| not_found(conversation))?;
    summary(row)
}

/// Titles every untitled conversation after its first user message, for conversations stored
/// before conversations had titles.
pub(super) fn title_untitled(c: &Connection) -> Result<()> {
    let firsts: Vec<(String, String)> = c
        .prepare(
            "SELECT c.id, b.body FROM conversations c
             JOIN blocks b ON b.conversation_id = c.id AND b.turn = 1 AND b.message = 0
             WHERE c.title = '' AND b.kind = 'text' ORDER BY c.id, b.block",
        )?
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut messages: Vec<(ConversationId, Message)> = Vec::new();
    for (id, body) in firsts {
        let block: Block = parse_json("block", &body)?;
        match messages.last_mut() {
            Some((last, message)) if last.as_str() == id => message.blocks.push(block),
            _ => messages.push((
                ConversationId::new(id),
                Message {
                    role: portal_core::Role::User,
                    blocks: vec![block],
                    attachments: Vec::new(),
                },
            )),
        }
    }
    for (conversation, message) in messages {
        rules::title_after(&mut Statements(c), &conversation, &message)?;
    }
    Ok(())
}

fn summary_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<SummaryRow> {
    Ok((
        row.get(0)?,
        row.get(1)?,
        row.get(2)?,
        row.get(3)?,
        row.get(4)?,
        row.get(5)?,
        row.get(6)?,
    ))
}
