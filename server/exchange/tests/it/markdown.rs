//! A conversation as Markdown: each transcript under `tests/data/markdown-*.json` against its
//! golden file under `tests/it/golden/`.

use expect_test::expect_file;
use portal_exchange::markdown;

fn check(name: &str, title: &str) {
    let json = std::fs::read_to_string(format!(
        "{}/tests/data/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("the fixture is there");
    let transcript =
        portal_core::parse_transcript(&json).expect("the fixture is a valid transcript");
    expect_file![format!("golden/{name}.md")].assert_eq(&markdown::markdown(title, &transcript));
}

#[test]
fn a_reply_keeps_its_words_tools_and_dividers_and_leaves_thinking_out() {
    check("markdown-tour", "Q3 `numbers`");
}

#[test]
fn an_untitled_conversation_is_headed_conversation() {
    let transcript = portal_core::Transcript::new();
    assert_eq!(markdown::markdown("  ", &transcript), "# Conversation\n");
}
