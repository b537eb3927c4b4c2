//! The conversation list as storage keeps it: pages newest activity first, search over titles and
//! message text, titles from the first message, renaming and deleting, each user's own only. Run
//! on SQLite and on PostgreSQL (`databases`).

use crate::databases;

use databases::Database;

use portal_core::{Block, Message, Role, TurnStatus};
use portal_store::{
    ConversationId, ConversationQuery, ListCursor, NewTurn, Owner, Storage, StorageError,
};
use portal_store_sqlite::SqliteStorage;

fn alice() -> Owner {
    Owner::new("acme", "alice")
}

/// Opens a conversation for `owner` whose one turn asks `question` and is answered `answer`.
fn conversation(
    storage: &dyn Storage,
    owner: &Owner,
    question: &str,
    answer: &str,
) -> ConversationId {
    let id = storage
        .create_conversation(owner, "assistant")
        .expect("opens");
    let turn = storage
        .open_turn(
            &id,
            NewTurn::chat(Message::new(Role::User, vec![Block::text(question)])),
        )
        .expect("turn");
    let message = storage
        .append_message(&id, turn, Role::Assistant)
        .expect("message");
    let block = storage
        .append_block(&id, turn, message, &Block::text(""))
        .expect("block");
    storage
        .append_block_text(&id, turn, message, block, answer)
        .expect("text");
    storage
        .set_turn_status(&id, turn, TurnStatus::Completed)
        .expect("ends");
    id
}

/// The titles `query` lists for alice, and whether there is a next page.
fn check(storage: &dyn Storage, query: ConversationQuery, expected: &[&str], more: bool) {
    let page = storage.list_conversations(&alice(), &query).expect("lists");
    let titles: Vec<&str> = page
        .conversations
        .iter()
        .map(|c| c.title.as_str())
        .collect();
    assert_eq!(titles, expected, "{query:?}");
    assert_eq!(page.next.is_some(), more, "{query:?}");
}

fn search(text: &str) -> ConversationQuery {
    ConversationQuery {
        search: Some(text.into()),
        limit: 50,
        ..Default::default()
    }
}

fn pages_run_newest_activity_first_and_search_finds_titles_and_message_text(db: &Database) {
    let storage = db.open();
    conversation(
        &*storage,
        &alice(),
        "Plan the launch",
        "Start with the press list.",
    );
    std::thread::sleep(std::time::Duration::from_millis(3));
    conversation(
        &*storage,
        &alice(),
        "/market-research Size of the Über market",
        "About 12 billion.",
    );
    std::thread::sleep(std::time::Duration::from_millis(3));
    let newest = conversation(&*storage, &alice(), "Hello", "Hi! How can I help?");
    conversation(
        &*storage,
        &Owner::new("acme", "bob"),
        "Bob's launch plan",
        "Bob's answer.",
    );
    conversation(
        &*storage,
        &Owner::new("globex", "alice"),
        "Another alice's launch",
        "No.",
    );

    let all = ConversationQuery {
        limit: 50,
        ..Default::default()
    };
    check(
        &*storage,
        all.clone(),
        &["Hello", "Size of the Über market", "Plan the launch"],
        false,
    );
    check(&*storage, search("launch"), &["Plan the launch"], false);
    check(&*storage, search("PRESS LIST"), &["Plan the launch"], false);
    check(
        &*storage,
        search("über"),
        &["Size of the Über market"],
        false,
    );
    check(
        &*storage,
        search("billion"),
        &["Size of the Über market"],
        false,
    );
    check(&*storage, search("text"), &[], false);
    check(&*storage, search("type"), &[], false);
    check(&*storage, search("%"), &[], false);

    let first = ConversationQuery {
        limit: 2,
        ..Default::default()
    };
    let page = storage.list_conversations(&alice(), &first).expect("lists");
    check(
        &*storage,
        first,
        &["Hello", "Size of the Über market"],
        true,
    );
    let next = page.next.expect("a next page");
    assert_eq!(ListCursor::decode(&next.encode()), Some(next.clone()));
    check(
        &*storage,
        ConversationQuery {
            after: Some(next),
            limit: 2,
            ..Default::default()
        },
        &["Plan the launch"],
        false,
    );

    storage
        .rename_conversation(&alice(), &newest, "Greetings")
        .expect("renamed");
    let turn = storage
        .open_turn(
            &newest,
            NewTurn::chat(Message::new(Role::User, vec![Block::text("Another")])),
        )
        .expect("turn");
    let summary = storage
        .conversation_summary(&alice(), &newest)
        .expect("summary");
    assert_eq!(
        summary.title, "Greetings",
        "a later message does not retitle it"
    );
    assert_eq!(summary.status, Some(TurnStatus::Running));
    assert!(
        matches!(
            storage.delete_conversation(&alice(), &newest),
            Err(StorageError::TurnStillRunning { .. })
        ),
        "a running conversation is not deleted"
    );
    storage
        .set_turn_status(&newest, turn, TurnStatus::CutOff)
        .expect("cut off");
    check(
        &*storage,
        all.clone(),
        &["Greetings", "Size of the Über market", "Plan the launch"],
        false,
    );
}

fn only_the_owner_renames_or_deletes_and_deleting_takes_turns_and_unshared_attachments(
    db: &Database,
) {
    use portal_core::attachment::{Attachment, Picture};
    let storage = db.open();
    let picture = |id: &str| {
        Attachment::Picture(Picture {
            id: id.into(),
            filename: format!("{id}.png"),
            media_type: "image/png".into(),
            width: 1,
            height: 1,
        })
    };
    for id in ["att_only", "att_shared"] {
        storage
            .put_attachment(&alice(), &picture(id), &mut &b"\x89PNG"[..], 4, u64::MAX)
            .expect("stored");
    }
    let with = |ids: &[&str]| {
        let mut message = Message::new(Role::User, vec![Block::text("Look")]);
        message.attachments = ids.iter().map(|id| picture(id)).collect();
        message
    };
    let doomed = storage
        .create_conversation(&alice(), "assistant")
        .expect("opens");
    let turn = storage
        .open_turn(&doomed, NewTurn::chat(with(&["att_only", "att_shared"])))
        .expect("turn");
    storage
        .set_turn_status(&doomed, turn, TurnStatus::Completed)
        .expect("ends");
    let kept = storage
        .create_conversation(&alice(), "assistant")
        .expect("opens");
    storage
        .open_turn(&kept, NewTurn::chat(with(&["att_shared"])))
        .expect("turn");

    let bob = Owner::new("acme", "bob");
    for result in [
        storage.rename_conversation(&bob, &doomed, "mine").map(drop),
        storage.delete_conversation(&bob, &doomed),
        storage.conversation_summary(&bob, &doomed).map(drop),
    ] {
        assert!(
            matches!(result, Err(StorageError::ConversationNotFound { .. })),
            "{result:?}"
        );
    }
    storage
        .delete_conversation(&alice(), &doomed)
        .expect("deleted");
    assert!(matches!(
        storage.load_transcript("acme", &doomed),
        Err(StorageError::ConversationNotFound { .. })
    ));
    assert!(matches!(
        storage.delete_conversation(&alice(), &doomed),
        Err(StorageError::ConversationNotFound { .. })
    ));
    assert!(
        storage.attachment(&alice(), "att_only").is_err(),
        "used only there: gone"
    );
    assert!(storage.attachment_bytes("acme", "att_only").is_err());
    assert!(
        storage.attachment(&alice(), "att_shared").is_ok(),
        "still used elsewhere"
    );
    assert_eq!(
        storage
            .load_transcript("acme", &kept)
            .expect("kept")
            .turns
            .len(),
        1
    );
}

#[test]
fn a_version_1_database_gets_titles_from_first_messages_when_it_migrates() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join(portal_store_sqlite::DATABASE_FILE);
    {
        let storage = SqliteStorage::open(dir.path()).expect("opens");
        conversation(
            &storage,
            &alice(),
            "What is the capital of France?",
            "Paris.",
        );
    }
    let connection = rusqlite::Connection::open(&path).expect("raw");
    connection
        .execute_batch(
            "DROP TABLE knowledge_totals;
             DROP TABLE knowledge_passages_fts;
             DROP TABLE knowledge_passages;
             DROP TABLE knowledge_documents;
             DROP TABLE knowledge_collections;
             DROP INDEX conversations_by_project;
             DROP INDEX conversations_by_activity;
             ALTER TABLE conversations DROP COLUMN pinned;
             ALTER TABLE conversations DROP COLUMN project_id;
             DROP TABLE projects;
             DROP TABLE share_links;
             DROP TABLE tool_pictures;
             DROP TABLE api_keys;
             ALTER TABLE turns DROP COLUMN hold_tokens;
             ALTER TABLE turns DROP COLUMN hold_nanos;
             ALTER TABLE turns DROP COLUMN hold_currency;
             DROP TABLE sso_sign_ins;
             DROP TABLE model_calls;
             DROP TABLE sso_accounts;
             DROP TABLE sign_in_failures;
             DROP INDEX blocks_compactions;
             DROP TABLE sessions;
             ALTER TABLE conversations DROP COLUMN title;
             ALTER TABLE conversations DROP COLUMN last_activity;
             PRAGMA user_version = 1;",
        )
        .expect("back to version 1");
    drop(connection);
    let storage = SqliteStorage::open(dir.path()).expect("migrates");
    let page = storage
        .list_conversations(
            &alice(),
            &ConversationQuery {
                limit: 10,
                ..Default::default()
            },
        )
        .expect("lists");
    assert_eq!(
        page.conversations[0].title,
        "What is the capital of France?"
    );
    assert!(page.conversations[0].last_activity_ms >= page.conversations[0].created_at_ms);
}

// Search reads a reply's text as it was written, whatever its stored JSON escapes (quotes, a
// backslash, line breaks, tabs, control characters), and folds it to lowercase in every script.
fn search_reads_escaped_text_as_written_and_folds_every_script(db: &Database) {
    let storage = db.open();
    conversation(
        &*storage,
        &alice(),
        "Escapes",
        "She said \"Hi\tthere\" \\ ok\nΟΔΟΣ 😀 \u{1}end",
    );
    for found in [
        "said \"hi\tthere\"",
        "\\ ok\n",
        "οδος",
        "ΟΔΟΣ",
        "😀 \u{1}end",
        "e",
    ] {
        check(&*storage, search(found), &["Escapes"], false);
    }
    for missed in ["ok n", "hi\\tthere", "said hi", "text\":", "endx"] {
        check(&*storage, search(missed), &[], false);
    }

    // Long text is searched a piece at a time (16 KiB on SQLite): a match across two pieces, in
    // plain text, in escapes and in characters of two bytes, is found all the same.
    for (title, answer, found) in [
        ("Plain", format!("{}Needle", "x".repeat(16_380)), "needle"),
        (
            "Escaped",
            format!("{}Thread", "\n".repeat(16_380)),
            "\nthread",
        ),
        ("Accented", format!("{}ÜBER", "é".repeat(8_190)), "éüber"),
    ] {
        conversation(&*storage, &alice(), title, &answer);
        check(&*storage, search(found), &[title], false);
    }
}

#[test]
fn cursors_that_were_not_handed_out_are_not_read() {
    for text in [
        "",
        ".",
        "12",
        "12.",
        ".abc",
        "-5.abc",
        "+5.abc",
        "1.a'b",
        "1.a b",
        "99999999999999999999.a",
    ] {
        assert_eq!(ListCursor::decode(text), None, "{text:?}");
    }
}

/// Issue 32: search leaves accents out on both sides, so "café" finds a reply whose "café" is
/// written with a combining accent, "cafe" finds "Café", and "résumé" finds "RESUME".
fn search_leaves_accents_out(db: &Database) {
    let storage = db.open();
    conversation(
        &*storage,
        &alice(),
        "Café plans",
        "Meet at the cafe\u{301} at nine",
    );
    conversation(&*storage, &alice(), "Jobs", "Send the RESUME by Friday");
    for (text, found) in [
        ("café", vec!["Café plans"]),
        ("cafe", vec!["Café plans"]),
        ("CAFÉ AT", vec!["Café plans"]),
        ("résumé", vec!["Jobs"]),
        ("cafè", vec!["Café plans"]),
    ] {
        check(&*storage, search(text), &found, false);
    }
    check(&*storage, search("caff"), &[], false);
}

on_every_database!(
    pages_run_newest_activity_first_and_search_finds_titles_and_message_text,
    search_reads_escaped_text_as_written_and_folds_every_script,
    search_leaves_accents_out,
    only_the_owner_renames_or_deletes_and_deleting_takes_turns_and_unshared_attachments,
);
