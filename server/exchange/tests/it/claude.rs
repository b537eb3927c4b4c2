use expect_test::expect_file;
use portal_exchange::import::read;
use serde_json::json;

use crate::check;

#[test]
fn claude_export_maps_thinking_and_attached_texts_and_notes_what_was_left_out() {
    check("claude.json", expect_file!["golden/claude.txt"]);
}

#[test]
fn a_claude_conversation_whose_messages_are_not_a_list_refuses_the_whole_import() {
    let export = json!([
        { "name": "Fine", "chat_messages": [] },
        { "name": "Broken", "chat_messages": "none" }
    ]);
    let error = read(&export.to_string()).expect_err("the export is refused");
    let message = error.to_string();
    assert!(
        message.starts_with(
            "conversation 2 of the Claude export cannot be read: its messages are not laid out \
             as Claude writes them"
        ),
        "{message}"
    );
}
