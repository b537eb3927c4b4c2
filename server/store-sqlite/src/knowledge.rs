//! The SQLite queries behind knowledge (docs/knowledge.md): collections, their documents, and
//! each document's passages, found by keyword through the FTS5 index `knowledge_passages_fts`
//! (BM25, Porter stemming, accents folded). The index reads its text from `knowledge_passages`
//! itself and triggers keep it in step, so a passage deleted is out of every search in the same
//! transaction. Making, adding and deleting are storage's rules (`portal_store::knowledge`).

use rusqlite::{Connection, OptionalExtension, Row, params};

use portal_store::knowledge::{headings_of, headings_text, query_words};
use portal_store::{
    Collection, CollectionOwner, DocumentSource, KnowledgeDocument, NewPassage, Passage, Result,
    StorageError,
};

/// A collection's columns, with its documents' count and bytes.
const COLLECTION: &str = "k.id, k.org_id, k.user_id, k.name, k.description, k.created_at,
    (SELECT count(*) FROM knowledge_documents d WHERE d.collection_id = k.id),
    (SELECT COALESCE(SUM(d.bytes), 0) FROM knowledge_documents d WHERE d.collection_id = k.id)";

const DOCUMENT: &str = "id, collection_id, name, media_type, bytes, pages, passages, created_at, source_path, source_stamp";

pub(super) fn list(c: &Connection, org_id: &str, user_id: &str) -> Result<Vec<Collection>> {
    let mut statement = c.prepare_cached(&format!(
        "SELECT {COLLECTION} FROM knowledge_collections k
         WHERE k.org_id = ?1 AND (k.user_id IS NULL OR k.user_id = ?2)
         ORDER BY k.user_id IS NOT NULL, k.name, k.id"
    ))?;
    let rows = statement.query_map([org_id, user_id], read_collection)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

pub(super) fn one(c: &Connection, org_id: &str, user_id: &str, id: &str) -> Result<Collection> {
    c.prepare_cached(&format!(
        "SELECT {COLLECTION} FROM knowledge_collections k
         WHERE k.id = ?1 AND k.org_id = ?2 AND (k.user_id IS NULL OR k.user_id = ?3)"
    ))?
    .query_row(params![id, org_id, user_id], read_collection)
    .optional()?
    .ok_or_else(|| StorageError::CollectionNotFound {
        collection: id.to_string(),
    })
}

pub(super) fn in_org(c: &Connection, org_id: &str, id: &str) -> Result<Option<Collection>> {
    Ok(c.prepare_cached(&format!(
        "SELECT {COLLECTION} FROM knowledge_collections k WHERE k.id = ?1 AND k.org_id = ?2"
    ))?
    .query_row(params![id, org_id], read_collection)
    .optional()?)
}

pub(super) fn exists_in_org(c: &Connection, org_id: &str, id: &str) -> Result<bool> {
    Ok(
        c.prepare_cached("SELECT 1 FROM knowledge_collections WHERE id = ?1 AND org_id = ?2")?
            .exists(params![id, org_id])?,
    )
}

pub(super) fn named(
    c: &Connection,
    owner: &CollectionOwner,
    name: &str,
) -> Result<Option<Collection>> {
    Ok(c.prepare_cached(&format!(
        "SELECT {COLLECTION} FROM knowledge_collections k
         WHERE k.org_id = ?1 AND k.user_id IS ?2 AND k.name = ?3"
    ))?
    .query_row(
        params![owner.org_id(), owner.user_id(), name],
        read_collection,
    )
    .optional()?)
}

pub(super) fn count(c: &Connection, owner: &CollectionOwner) -> Result<u64> {
    Ok(c.prepare_cached(
        "SELECT count(*) FROM knowledge_collections WHERE org_id = ?1 AND user_id IS ?2",
    )?
    .query_row(params![owner.org_id(), owner.user_id()], |row| row.get(0))?)
}

pub(super) fn insert_collection(c: &Connection, collection: &Collection) -> Result<()> {
    c.prepare_cached(
        "INSERT INTO knowledge_collections (id, org_id, user_id, name, description, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        collection.id,
        collection.owner.org_id(),
        collection.owner.user_id(),
        collection.name,
        collection.description,
        collection.created_at_ms
    ])?;
    Ok(())
}

pub(super) fn held(c: &Connection, org_id: &str) -> Result<(u64, u64)> {
    Ok(
        c.prepare_cached("SELECT documents, bytes FROM knowledge_totals WHERE org_id = ?1")?
            .query_row([org_id], |row| Ok((row.get(0)?, row.get(1)?)))
            .optional()?
            .unwrap_or((0, 0)),
    )
}

pub(super) fn insert_document(
    c: &Connection,
    org_id: &str,
    document: &KnowledgeDocument,
    passages: &[NewPassage],
) -> Result<()> {
    c.prepare_cached(
        "INSERT INTO knowledge_documents
             (id, collection_id, org_id, name, media_type, bytes, pages, passages, created_at,
              source_path, source_stamp)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    )?
    .execute(params![
        document.id,
        document.collection_id,
        org_id,
        document.name,
        document.media_type,
        document.bytes,
        document.pages,
        document.passages,
        document.created_at_ms,
        document.source.as_ref().map(|s| &s.path),
        document.source.as_ref().map(|s| &s.stamp)
    ])?;
    let mut insert = c.prepare_cached(
        "INSERT INTO knowledge_passages (document_id, position, page, headings, body)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for (position, passage) in passages.iter().enumerate() {
        let headings = headings_text(&passage.headings);
        insert.execute(params![
            document.id,
            position as i64,
            passage.page,
            headings,
            passage.text
        ])?;
    }
    Ok(())
}

pub(super) fn documents(c: &Connection, collection_id: &str) -> Result<Vec<KnowledgeDocument>> {
    let mut statement = c.prepare_cached(&format!(
        "SELECT {DOCUMENT} FROM knowledge_documents WHERE collection_id = ?1
         ORDER BY created_at DESC, id DESC"
    ))?;
    let rows = statement.query_map([collection_id], read_document)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

pub(super) fn delete_document(
    c: &Connection,
    collection_id: &str,
    document_id: &str,
) -> Result<bool> {
    let found = c
        .prepare_cached("SELECT 1 FROM knowledge_documents WHERE id = ?1 AND collection_id = ?2")?
        .exists(params![document_id, collection_id])?;
    if found {
        c.prepare_cached("DELETE FROM knowledge_passages WHERE document_id = ?1")?
            .execute([document_id])?;
        c.prepare_cached("DELETE FROM knowledge_documents WHERE id = ?1")?
            .execute([document_id])?;
    }
    Ok(found)
}

pub(super) fn delete_collection(c: &Connection, collection_id: &str) -> Result<()> {
    c.prepare_cached(
        "DELETE FROM knowledge_passages WHERE document_id IN
             (SELECT id FROM knowledge_documents WHERE collection_id = ?1)",
    )?
    .execute([collection_id])?;
    c.prepare_cached("DELETE FROM knowledge_documents WHERE collection_id = ?1")?
        .execute([collection_id])?;
    c.prepare_cached("DELETE FROM knowledge_collections WHERE id = ?1")?
        .execute([collection_id])?;
    Ok(())
}

pub(super) fn search(
    c: &Connection,
    org_id: &str,
    collection_ids: &[String],
    query: &str,
    limit: usize,
) -> Result<Vec<Passage>> {
    let words = query_words(query);
    if words.is_empty() || collection_ids.is_empty() || limit == 0 {
        return Ok(Vec::new());
    }
    // Each word quoted is a string to FTS5, never an operator; any of them may match.
    let matching = words
        .iter()
        .map(|word| format!("\"{word}\""))
        .collect::<Vec<_>>()
        .join(" OR ");
    let collections =
        serde_json::to_string(collection_ids).map_err(|e| StorageError::Interrupted {
            detail: format!("the collections could not be listed for a search: {e}"),
        })?;
    let mut statement = c.prepare_cached(
        "SELECT p.id, p.document_id, d.name, d.collection_id, k.name, p.page, p.headings, p.body,
                -bm25(knowledge_passages_fts, 2.0, 1.0) AS score
         FROM knowledge_passages_fts
         JOIN knowledge_passages p ON p.id = knowledge_passages_fts.rowid
         JOIN knowledge_documents d ON d.id = p.document_id
         JOIN knowledge_collections k ON k.id = d.collection_id
         WHERE knowledge_passages_fts MATCH ?1 AND d.org_id = ?2
           AND d.collection_id IN (SELECT value FROM json_each(?3))
         ORDER BY score DESC, p.id
         LIMIT ?4",
    )?;
    let rows = statement.query_map(
        params![matching, org_id, collections, limit as i64],
        |row| {
            let headings: String = row.get(6)?;
            Ok(Passage {
                id: row.get(0)?,
                document_id: row.get(1)?,
                document_name: row.get(2)?,
                collection_id: row.get(3)?,
                collection_name: row.get(4)?,
                page: row.get(5)?,
                headings: headings_of(&headings),
                text: row.get(7)?,
                score: row.get(8)?,
            })
        },
    )?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

fn read_collection(row: &Row) -> rusqlite::Result<Collection> {
    let org_id: String = row.get(1)?;
    let owner = match row.get::<_, Option<String>>(2)? {
        Some(user_id) => CollectionOwner::Person { org_id, user_id },
        None => CollectionOwner::Organisation { org_id },
    };
    Ok(Collection {
        id: row.get(0)?,
        owner,
        name: row.get(3)?,
        description: row.get(4)?,
        created_at_ms: row.get(5)?,
        documents: row.get(6)?,
        bytes: row.get(7)?,
    })
}

fn read_document(row: &Row) -> rusqlite::Result<KnowledgeDocument> {
    Ok(KnowledgeDocument {
        id: row.get(0)?,
        collection_id: row.get(1)?,
        name: row.get(2)?,
        media_type: row.get(3)?,
        bytes: row.get(4)?,
        pages: row.get(5)?,
        passages: row.get(6)?,
        created_at_ms: row.get(7)?,
        source: match (row.get(8)?, row.get(9)?) {
            (Some(path), Some(stamp)) => Some(DocumentSource { path, stamp }),
            _ => None,
        },
    })
}
