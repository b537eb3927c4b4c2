//! The PostgreSQL queries behind the conversation list: a page of a user's conversations
//! (searched, of one project, or not) and one conversation's summary (changing one is
//! `rules::change_conversation`, deleting one `rules::delete_conversation`).

use super::connection::Tx;
use postgres::types::ToSql;

use portal_store::assemble::{self, SummaryRow, not_found, summary};
use portal_store::codec::without_accents;
use portal_store::{
    ConversationId, ConversationPage, ConversationQuery, ConversationSummary, Owner, ProjectFilter,
    Result,
};

/// The columns of a [`ConversationSummary`], for `c` a conversations row.
const SUMMARY: &str = "c.id, c.title, c.created_at, c.last_activity,
    (SELECT t.status FROM turns t WHERE t.conversation_id = c.id ORDER BY t.turn DESC LIMIT 1),
    c.project_id, c.pinned";

/// Text as search compares it: in Unicode lowercase whatever the database's locale, so that
/// "Über" finds "über" (as in SQLite, which folds with Rust's `to_lowercase`), without its
/// accents (decomposed, the combining diacritical marks taken off, as `codec::without_accents`
/// does), so that "café" finds "cafe" and a "café" written with a combining accent.
fn folded(column: &str) -> String {
    format!(
        "lower(regexp_replace(normalize(({column}), NFD), '[\\u0300-\\u036f]', '', 'g') COLLATE \"und-x-icu\")"
    )
}

pub(super) fn page(
    t: &mut Tx<'_>,
    owner: &Owner,
    query: &ConversationQuery,
) -> Result<ConversationPage> {
    let mut sql =
        format!("SELECT {SUMMARY} FROM conversations c WHERE c.org_id = $1 AND c.user_id = $2");
    let mut params: Vec<&(dyn ToSql + Sync)> = vec![&owner.org_id, &owner.user_id];
    let after = query
        .after
        .as_ref()
        .map(|cursor| (cursor.pinned, cursor.last_activity_ms, cursor.id.as_str()));
    if let Some((pinned, at, id)) = &after {
        params.extend([pinned as &(dyn ToSql + Sync), at, id]);
        let n = params.len();
        sql.push_str(&format!(
            " AND (c.pinned, c.last_activity, c.id) < (${}, ${}, ${n})",
            n - 2,
            n - 1
        ));
    }
    match &query.project {
        ProjectFilter::Any => {}
        ProjectFilter::Outside => sql.push_str(" AND c.project_id IS NULL"),
        ProjectFilter::Within(project) => {
            params.push(project);
            sql.push_str(&format!(" AND c.project_id = ${}", params.len()));
        }
    }
    let search = query
        .search
        .as_deref()
        .map(|text| without_accents(&text.to_lowercase()));
    if let Some(search) = &search {
        params.push(search);
        let n = params.len();
        sql.push_str(&format!(
            " AND (strpos({}, ${n}) > 0 OR EXISTS (
                SELECT 1 FROM blocks b WHERE b.conversation_id = c.id AND b.kind = 'text'
                AND strpos({}, ${n}) > 0))",
            folded("c.title"),
            folded("b.body::json ->> 'text'"),
        ));
    }
    let limit = i64::from(query.limit) + 1;
    params.push(&limit);
    sql.push_str(&format!(
        " ORDER BY c.pinned DESC, c.last_activity DESC, c.id DESC LIMIT ${}",
        params.len()
    ));
    let rows = t
        .query(&sql, &params)?
        .iter()
        .map(summary_row)
        .collect::<Vec<_>>();
    assemble::page(rows, query)
}

pub(super) fn one(
    t: &mut Tx<'_>,
    owner: &Owner,
    conversation: &ConversationId,
) -> Result<ConversationSummary> {
    let row = t
        .query_opt(
            &format!(
                "SELECT {SUMMARY} FROM conversations c
                 WHERE c.id = $1 AND c.org_id = $2 AND c.user_id = $3"
            ),
            &[&conversation.as_str(), &owner.org_id, &owner.user_id],
        )?
        .ok_or_else(|| not_found(conversation))?;
    summary(summary_row(&row))
}

fn summary_row(row: &postgres::Row) -> SummaryRow {
    (
        row.get(0),
        row.get(1),
        row.get(2),
        row.get(3),
        row.get(4),
        row.get(5),
        row.get(6),
    )
}
