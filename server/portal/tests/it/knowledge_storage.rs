//! Knowledge in storage, run unchanged on SQLite and on PostgreSQL: collections belong to an
//! organisation or to one person and are seen only by whom they belong to; passages are found by
//! keyword (stemmed, accents folded, headings weighing more), only in the collections asked and
//! the caller's organisation; a deleted document's passages are gone from the next search; the
//! organisation's limits are kept when documents arrive at once through two storages.

use crate::databases;

use databases::Database;

use portal_store::{
    CollectionOwner, KnowledgeLimits, NewCollection, NewKnowledgeDocument, NewPassage, Storage,
    StorageError,
};

const LIMITS: KnowledgeLimits = KnowledgeLimits {
    collections: 10,
    documents: 100,
    bytes: 1_000_000,
};

fn organisation(org_id: &str) -> CollectionOwner {
    CollectionOwner::Organisation {
        org_id: org_id.into(),
    }
}

fn person(org_id: &str, user_id: &str) -> CollectionOwner {
    CollectionOwner::Person {
        org_id: org_id.into(),
        user_id: user_id.into(),
    }
}

fn collection(id: &str, owner: CollectionOwner, name: &str) -> NewCollection {
    NewCollection {
        id: id.into(),
        owner,
        name: name.into(),
        description: String::new(),
    }
}

/// A document of one passage per `(headings, text)`.
fn document(id: &str, collection_id: &str, passages: &[(&[&str], &str)]) -> NewKnowledgeDocument {
    NewKnowledgeDocument {
        id: id.into(),
        collection_id: collection_id.into(),
        name: format!("{id}.md"),
        media_type: "text/markdown".into(),
        bytes: passages.iter().map(|(_, t)| t.len() as u64).sum(),
        pages: 0,
        passages: passages
            .iter()
            .map(|(headings, text)| NewPassage {
                text: (*text).into(),
                page: None,
                headings: headings.iter().map(|h| (*h).into()).collect(),
            })
            .collect(),
        source: None,
    }
}

/// The documents of what a search found, in its order.
fn found(storage: &dyn Storage, org_id: &str, collections: &[&str], query: &str) -> Vec<String> {
    let ids: Vec<String> = collections.iter().map(|c| (*c).into()).collect();
    storage
        .search_knowledge(org_id, &ids, query, 5)
        .expect("searched")
        .into_iter()
        .map(|p| p.document_id)
        .collect()
}

// A collection is seen by whom it belongs to: the organisation's by each of its people, a
// person's by them alone; another organisation's is not found, on every call.
fn a_collection_is_seen_only_by_whom_it_belongs_to(db: &Database) {
    let storage = db.open();
    let handbook = storage
        .create_collection(
            &collection("col_h", organisation("acme"), "handbook"),
            &LIMITS,
        )
        .expect("made");
    assert_eq!(handbook.documents, 0);
    storage
        .create_collection(
            &collection("col_n", person("acme", "alice"), "notes"),
            &LIMITS,
        )
        .expect("made");
    storage
        .create_collection(
            &collection("col_g", organisation("globex"), "handbook"),
            &LIMITS,
        )
        .expect("globex has a handbook of its own");
    let names = |org: &str, user: &str| -> Vec<String> {
        storage
            .collections(org, user)
            .expect("listed")
            .into_iter()
            .map(|c| c.id)
            .collect()
    };
    assert_eq!(names("acme", "alice"), ["col_h", "col_n"]);
    assert_eq!(names("acme", "bob"), ["col_h"]);
    assert_eq!(names("globex", "alice"), ["col_g"]);
    assert!(matches!(
        storage.collection("acme", "bob", "col_n"),
        Err(StorageError::CollectionNotFound { .. })
    ));
    assert!(matches!(
        storage.collection("acme", "alice", "col_g"),
        Err(StorageError::CollectionNotFound { .. })
    ));
    assert!(matches!(
        storage.knowledge_documents("acme", "col_g"),
        Err(StorageError::CollectionNotFound { .. })
    ));
    assert!(matches!(
        storage.add_knowledge_document("acme", &document("d", "col_g", &[]), &LIMITS),
        Err(StorageError::CollectionNotFound { .. })
    ));
    assert!(matches!(
        storage.delete_collection("acme", "col_g"),
        Err(StorageError::CollectionNotFound { .. })
    ));
    let taken = storage.create_collection(
        &collection("col_h2", organisation("acme"), "handbook"),
        &LIMITS,
    );
    assert!(
        matches!(taken, Err(StorageError::CollectionNameTaken { .. })),
        "{taken:?}"
    );
    storage
        .create_collection(
            &collection("col_h3", person("acme", "bob"), "handbook"),
            &LIMITS,
        )
        .expect("a person may name theirs as the organisation's is named");
}

// Keyword search finds passages by stemmed words with accents folded, ranks a passage whose
// heading holds the word above one whose text merely mentions it, reads a query's punctuation as
// nothing but separators, and looks only in the collections asked, of the caller's organisation.
fn passages_are_found_by_keyword_in_the_collections_asked_alone(db: &Database) {
    let storage = db.open();
    for (id, owner, name) in [
        ("col_a", organisation("acme"), "handbook"),
        ("col_b", organisation("acme"), "engineering"),
        ("col_g", organisation("globex"), "handbook"),
    ] {
        storage
            .create_collection(&collection(id, owner, name), &LIMITS)
            .expect("made");
    }
    let add = |org: &str, doc: NewKnowledgeDocument| {
        storage
            .add_knowledge_document(org, &doc, &LIMITS)
            .expect("added")
    };
    add(
        "acme",
        document(
            "holidays",
            "col_a",
            &[(
                &["Holidays"],
                "Everyone takes twenty-five days of leave a year.",
            )],
        ),
    );
    add(
        "acme",
        document(
            "travel",
            "col_a",
            &[(
                &["Travel"],
                "Book trains for journeys under four hours; holidays are not travel.",
            )],
        ),
    );
    add(
        "acme",
        document(
            "cafe",
            "col_a",
            &[(&["Office"], "The café on the third floor opens at eight.")],
        ),
    );
    let vacuum = add(
        "acme",
        document(
            "vacuum",
            "col_b",
            &[(
                &["Maintenance"],
                "Vacuuming a table reclaims its dead rows.",
            )],
        ),
    );
    assert_eq!(vacuum.passages, 1);
    add(
        "globex",
        document(
            "globex",
            "col_g",
            &[(&["Holidays"], "Globex staff take thirty holidays.")],
        ),
    );

    assert_eq!(
        found(&*storage, "acme", &["col_a"], "How many holidays?"),
        ["holidays", "travel"],
        "{}: the heading's word ranks first",
        db.name()
    );
    assert_eq!(
        found(&*storage, "acme", &["col_a"], "cafe"),
        ["cafe"],
        "{}: accents folded",
        db.name()
    );
    assert_eq!(
        found(&*storage, "acme", &["col_b"], "vacuum tables"),
        ["vacuum"],
        "{}: stemmed",
        db.name()
    );
    assert!(found(&*storage, "acme", &["col_b"], "holidays").is_empty());
    assert!(
        found(&*storage, "acme", &["col_g"], "holidays").is_empty(),
        "{}: another organisation's collection finds nothing",
        db.name()
    );
    assert!(found(&*storage, "acme", &["col_a"], "\"*:&|!() NEAR( OR").is_empty());
    let passage = storage
        .search_knowledge("acme", &["col_a".into()], "leave", 5)
        .expect("searched")
        .remove(0);
    assert_eq!(passage.document_name, "holidays.md");
    assert_eq!(passage.collection_name, "handbook");
    assert_eq!(passage.headings, ["Holidays"]);
    assert!(passage.text.starts_with("Everyone takes"));
}

// A deleted document's passages are gone from the next search, and a deleted collection's
// documents with it; the organisation's counts fall with them.
fn a_deleted_documents_passages_are_never_found_again(db: &Database) {
    let storage = db.open();
    storage
        .create_collection(
            &collection("col_a", organisation("acme"), "handbook"),
            &LIMITS,
        )
        .expect("made");
    for id in ["one", "two"] {
        storage
            .add_knowledge_document(
                "acme",
                &document(id, "col_a", &[(&[], "The secret word is heron.")]),
                &LIMITS,
            )
            .expect("added");
    }
    assert_eq!(found(&*storage, "acme", &["col_a"], "heron").len(), 2);
    storage
        .delete_knowledge_document("acme", "col_a", "one")
        .expect("deleted");
    assert_eq!(found(&*storage, "acme", &["col_a"], "heron"), ["two"]);
    assert!(matches!(
        storage.delete_knowledge_document("acme", "col_a", "one"),
        Err(StorageError::KnowledgeDocumentNotFound { .. })
    ));
    assert!(matches!(
        storage.delete_knowledge_document("globex", "col_a", "two"),
        Err(StorageError::CollectionNotFound { .. })
    ));
    let kept = storage.collection("acme", "anyone", "col_a").expect("kept");
    assert_eq!((kept.documents, kept.bytes), (1, 25));
    storage.delete_collection("acme", "col_a").expect("deleted");
    assert!(found(&*storage, "acme", &["col_a"], "heron").is_empty());
    assert!(
        storage
            .collections("acme", "anyone")
            .expect("listed")
            .is_empty()
    );
}

// The organisation's documents and bytes, its people's collections included, are kept under
// its limits, refused in words; so are an owner's collections.
fn knowledge_past_its_limits_is_refused_in_words(db: &Database) {
    let storage = db.open();
    let limits = KnowledgeLimits {
        collections: 1,
        documents: 2,
        bytes: 100,
    };
    storage
        .create_collection(&collection("col_a", organisation("acme"), "a"), &limits)
        .expect("made");
    let full = storage.create_collection(&collection("col_b", organisation("acme"), "b"), &limits);
    assert!(
        matches!(full, Err(StorageError::CollectionsFull { most: 1 })),
        "{full:?}"
    );
    storage
        .create_collection(&collection("col_p", person("acme", "alice"), "p"), &limits)
        .expect("a person's own count apart");
    let text = "x".repeat(60);
    storage
        .add_knowledge_document("acme", &document("d1", "col_a", &[(&[], &text)]), &limits)
        .expect("room");
    let bytes =
        storage.add_knowledge_document("acme", &document("d2", "col_p", &[(&[], &text)]), &limits);
    let refused = bytes.expect_err("past the bytes");
    assert!(matches!(refused, StorageError::KnowledgeFull { .. }));
    assert!(
        refused.to_string().contains("delete documents"),
        "{refused}"
    );
    storage
        .add_knowledge_document("acme", &document("d2", "col_p", &[(&[], "y")]), &limits)
        .expect("room for a small one");
    assert!(matches!(
        storage.add_knowledge_document("acme", &document("d3", "col_a", &[(&[], "z")]), &limits),
        Err(StorageError::KnowledgeFull { .. })
    ));
}

// Documents added at once through two storages (two replicas) never pass the organisation's
// limit together.
fn documents_added_at_once_through_two_storages_keep_the_limit(db: &Database) {
    let (a, b) = (db.open(), db.open());
    let limits = KnowledgeLimits {
        collections: 10,
        documents: 5,
        bytes: 1_000_000,
    };
    a.create_collection(&collection("col_a", organisation("acme"), "a"), &limits)
        .expect("made");
    let added = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..12)
            .map(|n| {
                let storage = if n % 2 == 0 { &a } else { &b };
                let doc = document(&format!("d{n}"), "col_a", &[(&[], "words")]);
                scope.spawn(move || {
                    storage
                        .add_knowledge_document("acme", &doc, &limits)
                        .is_ok()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("joined"))
            .filter(|added| *added)
            .count()
    });
    assert_eq!(added, 5, "{}", db.name());
}

on_every_database!(
    a_collection_is_seen_only_by_whom_it_belongs_to,
    passages_are_found_by_keyword_in_the_collections_asked_alone,
    a_deleted_documents_passages_are_never_found_again,
    knowledge_past_its_limits_is_refused_in_words,
    documents_added_at_once_through_two_storages_keep_the_limit,
);
