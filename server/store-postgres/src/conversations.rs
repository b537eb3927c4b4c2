//! The PostgreSQL queries behind the conversation list: a page of a user's conversations
//! (searched or not), one conversation's summary and renaming
//! (deleting is `rules::delete_conversation`).

use super::connection::Tx;
use postgres::types::ToSql;

use portal_store::assemble::{self, SummaryRow, not_found, summary};
use portal_store::codec::without_accents;
use portal_store::{
    ConversationId, ConversationPage, ConversationQuery, ConversationSummary, Owner, Result,
};

/// The columns of a [`ConversationSummary`], for `c` a conversations row.
const SUMMARY: &str = "c.id, c.title, c.created_at, c.last_activity,
    (SELECT t.status FROM turns t WHERE t.conversation_id = c.id ORDER BY t.turn DESC LIMIT 1)";

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
        .map(|cursor| (cursor.last_activity_ms, cursor.id.as_str()));
    if let Some((at, id)) = &after {
        params.extend([at as &(dyn ToSql + Sync), id]);
        sql.push_str(&format!(
            " AND (c.last_activity, c.id) < (${}, ${})",
            params.len() - 1,
            params.len()
        ));
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
        " ORDER BY c.last_activity DESC, c.id DESC LIMIT ${}",
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

pub(super) fn rename(
    t: &mut Tx<'_>,
    owner: &Owner,
    conversation: &ConversationId,
    title: &str,
) -> Result<ConversationSummary> {
    let changed = t.execute(
        "UPDATE conversations SET title = $4 WHERE id = $1 AND org_id = $2 AND user_id = $3",
        &[
            &conversation.as_str(),
            &owner.org_id,
            &owner.user_id,
            &title,
        ],
    )?;
    if changed == 0 {
        return Err(not_found(conversation));
    }
    one(t, owner, conversation)
}

fn summary_row(row: &postgres::Row) -> SummaryRow {
    (row.get(0), row.get(1), row.get(2), row.get(3), row.get(4))
}
