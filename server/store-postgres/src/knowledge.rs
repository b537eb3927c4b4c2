//! The PostgreSQL queries behind knowledge (docs/knowledge.md): collections, their documents, and
//! each document's passages, found by keyword through a GIN index on a generated `tsvector`
//! (English stemming, headings weighed above text, ranked by `ts_rank_cd`). Making, adding and
//! deleting are storage's rules (`portal_store::knowledge`), as on SQLite.

use postgres::Row;

use super::connection::Tx;
use super::count;

use portal_store::knowledge::{headings_of, headings_text, query_words};
use portal_store::{
    Collection, CollectionOwner, DocumentSource, KnowledgeDocument, NewPassage, Passage, Result,
    StorageError,
};

/// A collection's columns, with its documents' count and bytes.
const COLLECTION: &str = "k.id, k.org_id, k.user_id, k.name, k.description, k.created_at,
    (SELECT count(*) FROM knowledge_documents d WHERE d.collection_id = k.id),
    (SELECT COALESCE(SUM(d.bytes), 0)::BIGINT FROM knowledge_documents d
        WHERE d.collection_id = k.id)";

const DOCUMENT: &str = "id, collection_id, name, media_type, bytes, pages, passages, created_at, source_path, source_stamp";

pub(super) fn list(t: &mut Tx<'_>, org_id: &str, user_id: &str) -> Result<Vec<Collection>> {
    t.query(
        &format!(
            "SELECT {COLLECTION} FROM knowledge_collections k
             WHERE k.org_id = $1 AND (k.user_id IS NULL OR k.user_id = $2)
             ORDER BY k.user_id IS NOT NULL, k.name, k.id"
        ),
        &[&org_id, &user_id],
    )?
    .iter()
    .map(read_collection)
    .collect()
}

pub(super) fn one(t: &mut Tx<'_>, org_id: &str, user_id: &str, id: &str) -> Result<Collection> {
    let row = t
        .query_opt(
            &format!(
                "SELECT {COLLECTION} FROM knowledge_collections k
                 WHERE k.id = $1 AND k.org_id = $2 AND (k.user_id IS NULL OR k.user_id = $3)"
            ),
            &[&id, &org_id, &user_id],
        )?
        .ok_or_else(|| StorageError::CollectionNotFound {
            collection: id.to_string(),
        })?;
    read_collection(&row)
}

pub(super) fn in_org(t: &mut Tx<'_>, org_id: &str, id: &str) -> Result<Option<Collection>> {
    t.query_opt(
        &format!(
            "SELECT {COLLECTION} FROM knowledge_collections k WHERE k.id = $1 AND k.org_id = $2"
        ),
        &[&id, &org_id],
    )?
    .as_ref()
    .map(read_collection)
    .transpose()
}

pub(super) fn exists_in_org(t: &mut Tx<'_>, org_id: &str, id: &str) -> Result<bool> {
    Ok(t.query_opt(
        "SELECT 1 FROM knowledge_collections WHERE id = $1 AND org_id = $2",
        &[&id, &org_id],
    )?
    .is_some())
}

pub(super) fn named(
    t: &mut Tx<'_>,
    owner: &CollectionOwner,
    name: &str,
) -> Result<Option<Collection>> {
    t.query_opt(
        &format!(
            "SELECT {COLLECTION} FROM knowledge_collections k
             WHERE k.org_id = $1 AND k.user_id IS NOT DISTINCT FROM $2 AND k.name = $3"
        ),
        &[&owner.org_id(), &owner.user_id(), &name],
    )?
    .as_ref()
    .map(read_collection)
    .transpose()
}

pub(super) fn count_owned(t: &mut Tx<'_>, owner: &CollectionOwner) -> Result<u64> {
    let row = t.query_one(
        "SELECT count(*) FROM knowledge_collections
         WHERE org_id = $1 AND user_id IS NOT DISTINCT FROM $2",
        &[&owner.org_id(), &owner.user_id()],
    )?;
    count(row.get(0))
}

pub(super) fn insert_collection(t: &mut Tx<'_>, collection: &Collection) -> Result<()> {
    t.execute(
        "INSERT INTO knowledge_collections (id, org_id, user_id, name, description, created_at)
         VALUES ($1, $2, $3, $4, $5, $6)",
        &[
            &collection.id,
            &collection.owner.org_id(),
            &collection.owner.user_id(),
            &collection.name,
            &collection.description,
            &collection.created_at_ms,
        ],
    )?;
    Ok(())
}

pub(super) fn held(t: &mut Tx<'_>, org_id: &str) -> Result<(u64, u64)> {
    match t.query_opt(
        "SELECT documents, bytes FROM knowledge_totals WHERE org_id = $1",
        &[&org_id],
    )? {
        Some(row) => Ok((count(row.get(0))?, count(row.get(1))?)),
        None => Ok((0, 0)),
    }
}

pub(super) fn insert_document(
    t: &mut Tx<'_>,
    org_id: &str,
    document: &KnowledgeDocument,
    passages: &[NewPassage],
) -> Result<()> {
    t.execute(
        "INSERT INTO knowledge_documents
             (id, collection_id, org_id, name, media_type, bytes, pages, passages, created_at,
              source_path, source_stamp)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
        &[
            &document.id,
            &document.collection_id,
            &org_id,
            &document.name,
            &document.media_type,
            &big(document.bytes),
            &i64::from(document.pages),
            &big(document.passages),
            &document.created_at_ms,
            &document.source.as_ref().map(|s| &s.path),
            &document.source.as_ref().map(|s| &s.stamp),
        ],
    )?;
    for (position, passage) in passages.iter().enumerate() {
        let headings = headings_text(&passage.headings);
        t.execute(
            "INSERT INTO knowledge_passages (document_id, position, page, headings, body)
             VALUES ($1, $2, $3, $4, $5)",
            &[
                &document.id,
                &(position as i64),
                &passage.page.map(i64::from),
                &headings,
                &passage.text,
            ],
        )?;
    }
    Ok(())
}

pub(super) fn documents(t: &mut Tx<'_>, collection_id: &str) -> Result<Vec<KnowledgeDocument>> {
    t.query(
        &format!(
            "SELECT {DOCUMENT} FROM knowledge_documents WHERE collection_id = $1
             ORDER BY created_at DESC, id DESC"
        ),
        &[&collection_id],
    )?
    .iter()
    .map(read_document)
    .collect()
}

pub(super) fn delete_document(
    t: &mut Tx<'_>,
    collection_id: &str,
    document_id: &str,
) -> Result<bool> {
    let found = t
        .query_opt(
            "SELECT 1 FROM knowledge_documents WHERE id = $1 AND collection_id = $2 FOR UPDATE",
            &[&document_id, &collection_id],
        )?
        .is_some();
    if found {
        t.execute(
            "DELETE FROM knowledge_passages WHERE document_id = $1",
            &[&document_id],
        )?;
        t.execute(
            "DELETE FROM knowledge_documents WHERE id = $1",
            &[&document_id],
        )?;
    }
    Ok(found)
}

pub(super) fn delete_collection(t: &mut Tx<'_>, collection_id: &str) -> Result<()> {
    t.execute(
        "DELETE FROM knowledge_passages WHERE document_id IN
             (SELECT id FROM knowledge_documents WHERE collection_id = $1)",
        &[&collection_id],
    )?;
    t.execute(
        "DELETE FROM knowledge_documents WHERE collection_id = $1",
        &[&collection_id],
    )?;
    t.execute(
        "DELETE FROM knowledge_collections WHERE id = $1",
        &[&collection_id],
    )?;
    Ok(())
}

pub(super) fn search(
    t: &mut Tx<'_>,
    org_id: &str,
    collection_ids: &[String],
    query: &str,
    limit: usize,
) -> Result<Vec<Passage>> {
    let words = query_words(query);
    if words.is_empty() || collection_ids.is_empty() || limit == 0 {
        return Ok(Vec::new());
    }
    // Letters and digits alone are never `to_tsquery` syntax; any of the words may match.
    let matching = words.join(" | ");
    t.query(
        "SELECT p.id, p.document_id, d.name, d.collection_id, k.name, p.page, p.headings, p.body,
                ts_rank_cd(p.search, q)::FLOAT8 AS score
         FROM knowledge_passages p
         JOIN knowledge_documents d ON d.id = p.document_id
         JOIN knowledge_collections k ON k.id = d.collection_id,
              to_tsquery('english', $1) q
         WHERE p.search @@ q AND d.org_id = $2 AND d.collection_id = ANY($3)
         ORDER BY score DESC, p.id
         LIMIT $4",
        &[&matching, &org_id, &collection_ids, &(limit as i64)],
    )?
    .iter()
    .map(|row| {
        let headings: String = row.get(6);
        Ok(Passage {
            id: row.get(0),
            document_id: row.get(1),
            document_name: row.get(2),
            collection_id: row.get(3),
            collection_name: row.get(4),
            page: row
                .get::<_, Option<i64>>(5)
                .and_then(|page| u32::try_from(page).ok()),
            headings: headings_of(&headings),
            text: row.get(7),
            score: row.get(8),
        })
    })
    .collect()
}

fn big(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

fn read_collection(row: &Row) -> Result<Collection> {
    let org_id: String = row.get(1);
    let owner = match row.get::<_, Option<String>>(2) {
        Some(user_id) => CollectionOwner::Person { org_id, user_id },
        None => CollectionOwner::Organisation { org_id },
    };
    Ok(Collection {
        id: row.get(0),
        owner,
        name: row.get(3),
        description: row.get(4),
        created_at_ms: row.get(5),
        documents: count(row.get(6))?,
        bytes: count(row.get(7))?,
    })
}

fn read_document(row: &Row) -> Result<KnowledgeDocument> {
    Ok(KnowledgeDocument {
        id: row.get(0),
        collection_id: row.get(1),
        name: row.get(2),
        media_type: row.get(3),
        bytes: count(row.get(4))?,
        pages: u32::try_from(row.get::<_, i64>(5)).unwrap_or(u32::MAX),
        passages: count(row.get(6))?,
        created_at_ms: row.get(7),
        source: match (row.get(8), row.get(9)) {
            (Some(path), Some(stamp)) => Some(DocumentSource { path, stamp }),
            _ => None,
        },
    })
}
