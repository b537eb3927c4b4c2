//! Knowledge (docs/knowledge.md): collections of documents an agent searches, each document kept
//! as the passages it was split into, found by keyword. A collection belongs to an organisation
//! (its administrators manage it, every member's agents may search it) or to one person (theirs
//! alone). Making a collection, adding a document and deleting either are storage's rules
//! ([`create_collection`] and the rest), over each database's [`Statements`]; the passages of a
//! deleted document are gone in the same transaction.

use serde::Serialize;

use super::codec::without_accents;
use super::rules::Statements;
use super::{Result, StorageError};

/// Who a collection belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CollectionOwner {
    /// The organisation: its administrators manage it, and its members' agents search it.
    Organisation { org_id: String },
    /// One person of an organisation, alone.
    Person { org_id: String, user_id: String },
}

impl CollectionOwner {
    /// The organisation it is in.
    pub fn org_id(&self) -> &str {
        match self {
            CollectionOwner::Organisation { org_id } | CollectionOwner::Person { org_id, .. } => {
                org_id
            }
        }
    }

    /// The person it belongs to, or `None` for the organisation's.
    pub fn user_id(&self) -> Option<&str> {
        match self {
            CollectionOwner::Organisation { .. } => None,
            CollectionOwner::Person { user_id, .. } => Some(user_id),
        }
    }
}

/// A collection to make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewCollection {
    /// Its id, made by the caller (`col_…`).
    pub id: String,
    pub owner: CollectionOwner,
    /// Its name, unique among its owner's collections: an agent's file names the organisation's
    /// by it (`knowledge = ["handbook"]`).
    pub name: String,
    pub description: String,
}

/// A collection as kept, with what it holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Collection {
    pub id: String,
    pub owner: CollectionOwner,
    pub name: String,
    pub description: String,
    /// When it was made, in milliseconds since the epoch, by the database's clock.
    pub created_at_ms: i64,
    /// How many documents it holds.
    pub documents: u64,
    /// The bytes of the documents it holds, as uploaded.
    pub bytes: u64,
}

/// A document to add to a collection, already read and split into passages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewKnowledgeDocument {
    /// Its id, made by the caller (`kdoc_…`).
    pub id: String,
    pub collection_id: String,
    /// Its file name, as shown with its passages.
    pub name: String,
    pub media_type: String,
    /// Its size as uploaded, counted against its organisation's limit.
    pub bytes: u64,
    /// Its pages, for a PDF; 0 otherwise.
    pub pages: u32,
    /// Its passages, in the document's order.
    pub passages: Vec<NewPassage>,
    /// Where it was read from, for a collection kept from a folder: its path in the folder and
    /// the stamp (size and time changed) it had, so a sync finds what changed.
    pub source: Option<DocumentSource>,
}

/// Where a document kept from a folder was read from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DocumentSource {
    /// Its path within the folder, `/`-separated.
    pub path: String,
    /// Its size and the time it was changed, as the folder's sync compares them.
    pub stamp: String,
}

/// One passage of a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewPassage {
    pub text: String,
    /// The page it starts on, for a PDF.
    pub page: Option<u32>,
    /// The headings in force where it starts, outermost first.
    pub headings: Vec<String>,
}

/// A document as kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KnowledgeDocument {
    pub id: String,
    pub collection_id: String,
    pub name: String,
    pub media_type: String,
    pub bytes: u64,
    pub pages: u32,
    /// How many passages it was split into.
    pub passages: u64,
    pub created_at_ms: i64,
    /// Where it was read from, for a collection kept from a folder.
    pub source: Option<DocumentSource>,
}

/// A passage a search found, with where it comes from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Passage {
    /// Its id, which names it in a reference (`knowledge:<id>`).
    pub id: i64,
    pub document_id: String,
    pub document_name: String,
    pub collection_id: String,
    pub collection_name: String,
    pub page: Option<u32>,
    pub headings: Vec<String>,
    pub text: String,
    /// How well it matched, higher is better; comparable only within one search.
    pub score: f64,
}

/// What one organisation's knowledge may hold (docs/knowledge.md, "Limits").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnowledgeLimits {
    /// Collections of one owner (the organisation, or one person).
    pub collections: u64,
    /// Documents in all of the organisation's collections, its people's included.
    pub documents: u64,
    /// Bytes of those documents, as uploaded.
    pub bytes: u64,
}

/// The words a keyword search looks for: runs of letters and digits, lowercase and without
/// accents (as the passages are indexed), at most [`MAX_QUERY_WORDS`] of at most
/// [`MAX_WORD_CHARS`] characters each, in order and without repeats. Both databases build their
/// query from these alone, so no character of a person's (or a model's) query is ever read as
/// search syntax.
pub fn query_words(query: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for word in without_accents(query)
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let word: String = word.chars().take(MAX_WORD_CHARS).collect::<String>();
        let word = word.to_lowercase();
        if !words.contains(&word) {
            words.push(word);
        }
        if words.len() == MAX_QUERY_WORDS {
            break;
        }
    }
    words
}

/// A passage's headings as both databases keep them: one text, a line each, so that the keyword
/// index searches them as a column of their own.
pub fn headings_text(headings: &[String]) -> String {
    headings.join("\n")
}

/// A passage's headings from [`headings_text`]'s text.
pub fn headings_of(text: &str) -> Vec<String> {
    text.split('\n')
        .filter(|h| !h.is_empty())
        .map(str::to_string)
        .collect()
}

/// The most words of a query searched for. **Decision:** 32: a question is rarely longer, and
/// each word is one more term every passage is scored on.
pub const MAX_QUERY_WORDS: usize = 32;

/// A query word is cut to this many characters.
pub const MAX_WORD_CHARS: usize = 64;

/// Makes a collection under a lock on its organisation's knowledge: refused with
/// [`StorageError::CollectionsFull`] when its owner has `limits.collections`, and with
/// [`StorageError::CollectionNameTaken`] when they have one of that name.
pub fn create_collection(
    s: &mut dyn Statements,
    collection: &NewCollection,
    limits: &KnowledgeLimits,
) -> Result<Collection> {
    s.lock_keys(&[knowledge_lock(collection.owner.org_id())])?;
    if s.count_collections(&collection.owner)? >= limits.collections {
        return Err(StorageError::CollectionsFull {
            most: limits.collections,
        });
    }
    if s.collection_named(&collection.owner, &collection.name)?
        .is_some()
    {
        return Err(StorageError::CollectionNameTaken {
            name: collection.name.clone(),
        });
    }
    let kept = Collection {
        id: collection.id.clone(),
        owner: collection.owner.clone(),
        name: collection.name.clone(),
        description: collection.description.clone(),
        created_at_ms: s.now_ms()?,
        documents: 0,
        bytes: 0,
    };
    s.insert_collection(&kept)?;
    Ok(kept)
}

/// Adds a document and its passages to a collection of `org_id`'s, under the organisation's
/// lock: refused with [`StorageError::KnowledgeFull`] when it would take the organisation past
/// its documents or bytes; another organisation's collection is
/// [`StorageError::CollectionNotFound`].
pub fn add_document(
    s: &mut dyn Statements,
    org_id: &str,
    document: &NewKnowledgeDocument,
    limits: &KnowledgeLimits,
) -> Result<KnowledgeDocument> {
    s.lock_keys(&[knowledge_lock(org_id)])?;
    collection_of(s, org_id, &document.collection_id)?;
    let (documents, bytes) = s.knowledge_held(org_id)?;
    if documents + 1 > limits.documents || bytes.saturating_add(document.bytes) > limits.bytes {
        return Err(StorageError::KnowledgeFull {
            documents: limits.documents,
            bytes: limits.bytes,
        });
    }
    let kept = KnowledgeDocument {
        id: document.id.clone(),
        collection_id: document.collection_id.clone(),
        name: document.name.clone(),
        media_type: document.media_type.clone(),
        bytes: document.bytes,
        pages: document.pages,
        passages: document.passages.len() as u64,
        created_at_ms: s.now_ms()?,
        source: document.source.clone(),
    };
    s.insert_knowledge_document(org_id, &kept, &document.passages)?;
    Ok(kept)
}

/// Deletes a document of a collection of `org_id`'s with all its passages; another
/// organisation's is not found.
pub fn delete_document(
    s: &mut dyn Statements,
    org_id: &str,
    collection_id: &str,
    document_id: &str,
) -> Result<()> {
    s.lock_keys(&[knowledge_lock(org_id)])?;
    collection_of(s, org_id, collection_id)?;
    if !s.delete_knowledge_document(collection_id, document_id)? {
        return Err(StorageError::KnowledgeDocumentNotFound {
            document: document_id.to_string(),
        });
    }
    Ok(())
}

/// Deletes a collection of `org_id`'s with its documents and their passages.
pub fn delete_collection(s: &mut dyn Statements, org_id: &str, collection_id: &str) -> Result<()> {
    s.lock_keys(&[knowledge_lock(org_id)])?;
    collection_of(s, org_id, collection_id)?;
    s.delete_collection_rows(collection_id)
}

/// Refuses a collection `id` that is not `org_id`'s.
fn collection_of(s: &mut dyn Statements, org_id: &str, id: &str) -> Result<()> {
    if s.collection_in(org_id, id)? {
        Ok(())
    } else {
        Err(StorageError::CollectionNotFound {
            collection: id.to_string(),
        })
    }
}

/// What knowledge written at once for one organisation locks, on every server, so that its
/// limits are counted one write at a time and no document is added to a collection being
/// deleted.
fn knowledge_lock(org_id: &str) -> String {
    format!("knowledge/{org_id}")
}

#[cfg(test)]
mod tests {
    use super::query_words;

    #[test]
    fn query_words_are_letters_and_digits_alone_without_repeats() {
        assert_eq!(
            query_words(r#"How do I "vacuum" a table? NEAR(x) -- OR * vacuum"#),
            ["how", "do", "i", "vacuum", "a", "table", "near", "x", "or"]
        );
        assert_eq!(
            query_words("Ünïcode café cafe\u{301} 東京"),
            ["unicode", "cafe", "東京"]
        );
        assert!(query_words("\"*:&|!()").is_empty());
        assert_eq!(query_words(&"w ".repeat(100)).len(), 1);
        let many: String = (0..100).map(|n| format!("w{n} ")).collect();
        assert_eq!(query_words(&many).len(), super::MAX_QUERY_WORDS);
    }
}
