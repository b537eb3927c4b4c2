//! Conversations in and out: Markdown and Portal's export checked directly, imports of ChatGPT's
//! and Claude's exports against golden renderings of what they became.

mod archive;
mod chatgpt;
mod claude;
mod markdown;
mod portal;

use std::fmt::Write;
use std::path::Path;

use expect_test::ExpectFile;
use portal_core::block::Block;
use portal_core::validate::validate;
use portal_exchange::import::{Import, read};

/// Imports the export `fixture` of `tests/data` and compares what it became with `expect`.
fn check(fixture: &str, expect: ExpectFile) {
    let import = import(fixture);
    for conversation in &import.conversations {
        validate(&conversation.transcript).expect("every imported transcript validates");
    }
    expect.assert_eq(&render(&import));
}

fn import(fixture: &str) -> Import {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(fixture);
    let json = std::fs::read_to_string(&path).expect("the fixture is readable");
    read(&json).unwrap_or_else(|e| panic!("{fixture} is refused: {e}"))
}

/// An import compactly: its source, and each conversation's title, turns and notes.
fn render(import: &Import) -> String {
    let mut out = format!("source: {}\n", import.source.name());
    for (i, conversation) in import.conversations.iter().enumerate() {
        let _ = writeln!(out, "\nconversation {}: {:?}", i + 1, conversation.title);
        for turn in &conversation.transcript.turns {
            let _ = writeln!(out, "  turn {} {}", turn.index, turn.status.as_str());
            for message in &turn.messages {
                let _ = writeln!(out, "    {}", message.role.as_str());
                for block in &message.blocks {
                    let text = match block {
                        Block::Text { text } | Block::Thinking { text } => format!("{text:?}"),
                        other => format!("{other:?}"),
                    };
                    let _ = writeln!(out, "      {}: {text}", block.kind().as_str());
                }
            }
        }
        for note in &conversation.notes {
            let _ = writeln!(out, "  note: {note}");
        }
    }
    out
}
