use expect_test::expect_file;
use portal_exchange::import::{ImportError, Source, read};
use serde_json::json;

use crate::check;

#[test]
fn chatgpt_export_keeps_the_shown_branch_and_notes_what_was_left_out() {
    check("chatgpt.json", expect_file!["golden/chatgpt.txt"]);
}

#[test]
fn a_loop_in_parent_links_ends_the_branch_where_it_closes() {
    let message = |role: &str, text: &str| json!({ "author": { "role": role }, "content": { "content_type": "text", "parts": [text] } });
    let export = json!([{
        "title": "Loop",
        "mapping": {
            "a": { "message": message("user", "Question"), "parent": "b", "children": ["b"] },
            "b": { "message": message("assistant", "Answer"), "parent": "a", "children": ["a"] }
        },
        "current_node": "b"
    }, {
        "title": "Loop without a current node",
        "mapping": {
            "a": { "message": message("user", "Question"), "parent": "a", "children": ["a"] }
        }
    }]);
    let import = read(&export.to_string()).expect("a loop is read, not refused");
    let first = &import.conversations[0];
    assert_eq!(first.transcript.turns.len(), 1);
    assert_eq!(first.transcript.turns[0].messages.len(), 2);
    assert!(
        first.notes.iter().any(|n| n.contains("loop")),
        "{:?}",
        first.notes
    );
    let second = &import.conversations[1];
    assert!(second.transcript.turns.is_empty());
    assert!(
        second.notes.iter().any(|n| n.contains("loop")),
        "{:?}",
        second.notes
    );
}

#[test]
fn a_branch_thousands_of_messages_long_is_read_whole() {
    const MESSAGES: usize = 20_000;
    let mut mapping = serde_json::Map::new();
    for i in 0..MESSAGES {
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        mapping.insert(
            i.to_string(),
            json!({
                "message": { "author": { "role": role }, "content": { "content_type": "text", "parts": [format!("Message {i}")] } },
                "parent": i.checked_sub(1).map(|p| p.to_string()),
                "children": [(i + 1).to_string()]
            }),
        );
    }
    // No current node: the branch is found by walking the whole tree.
    let export = json!([{ "title": "Long", "mapping": mapping }]);
    let import = read(&export.to_string()).expect("a long branch is read");
    assert_eq!(import.conversations[0].transcript.turns.len(), MESSAGES / 2);
}

#[test]
fn a_conversation_without_mapping_refuses_the_whole_import_naming_its_position() {
    let export = json!([
        { "title": "Fine", "mapping": {}, "current_node": null },
        { "title": "Broken", "current_node": "x" }
    ]);
    let error = read(&export.to_string()).expect_err("the export is refused");
    assert!(
        matches!(
            &error,
            ImportError::Conversation { position: 2, source_name, .. } if *source_name == Source::ChatGpt.name()
        ),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "conversation 2 of the ChatGPT export cannot be read: it has no `mapping`, where ChatGPT \
         keeps a conversation's messages; nothing was imported"
    );
}
