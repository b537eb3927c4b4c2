//! A conversation as Markdown, for a person to keep: each turn's message with the names of its
//! attachments, and the reply as the page shows it once settled (its text, a tool call as a line
//! naming the tool and its arguments with the result fenced under it, a question, an approval
//! asked for), a compaction as a divider over its summary. Thinking stays out, as it stays closed
//! on the page; so do tool pictures' bytes, named by their line in the result.

use std::fmt::Write;

use portal_core::block::Block;
use portal_core::compaction::{parse_compact, strip_references};
use portal_core::transcript::{Message, Role, Transcript, Turn, TurnKind, TurnStatus};

/// `transcript` as Markdown under the heading `title` (the conversation's name; "Conversation"
/// when it has none).
pub fn markdown(title: &str, transcript: &Transcript) -> String {
    let title = title.trim();
    let mut out = format!(
        "# {}\n",
        if title.is_empty() {
            "Conversation"
        } else {
            title
        }
    );
    for turn in &transcript.turns {
        for message in &turn.messages {
            match message.role {
                Role::User if turn.kind == TurnKind::Compact => {
                    let said = message.text();
                    let instructions = parse_compact(&said)
                        .and_then(|command| command.instructions)
                        .unwrap_or_default();
                    let _ = write!(out, "\n---\n\n*{}. You asked for a summary", turn.index);
                    if instructions.is_empty() {
                        out.push_str(".*\n");
                    } else {
                        let _ = writeln!(out, ":* {instructions}");
                    }
                }
                Role::User => {
                    let _ = writeln!(out, "\n## {}. You\n", turn.index);
                    let said = message.text();
                    if !said.trim().is_empty() {
                        let _ = writeln!(out, "{}", said.trim_end());
                    }
                    if !message.attachments.is_empty() {
                        let names: Vec<String> = message
                            .attachments
                            .iter()
                            .map(|a| code(a.filename()))
                            .collect();
                        let _ = writeln!(out, "\nAttached: {}", names.join(", "));
                    }
                }
                Role::Assistant | Role::Tool => {
                    if message.role == Role::Assistant && opens_reply(turn, message) {
                        let _ = writeln!(out, "\n## {}. Assistant", turn.index);
                    }
                    for block in &message.blocks {
                        reply_block(&mut out, block);
                    }
                }
            }
        }
        let ended = match turn.status {
            TurnStatus::CutOff => "The reply was stopped here",
            TurnStatus::Failed => "The reply failed here",
            TurnStatus::Paused => "The reply waits for you here",
            TurnStatus::Running => "The reply was still being written",
            TurnStatus::Completed => continue,
        };
        match turn.end_reason() {
            Some(reason) => {
                let _ = writeln!(out, "\n*{ended}: {}*", reason.trim());
            }
            None => {
                let _ = writeln!(out, "\n*{ended}.*");
            }
        }
    }
    out
}

/// Whether `message` is the first assistant message of a chat turn, under which its reply is
/// headed; a `/compact` turn's summary is its divider alone.
fn opens_reply(turn: &Turn, message: &Message) -> bool {
    turn.kind == TurnKind::Chat
        && turn
            .messages
            .iter()
            .find(|m| m.role == Role::Assistant)
            .is_some_and(|first| std::ptr::eq(first, message))
}

fn reply_block(out: &mut String, block: &Block) {
    match block {
        Block::Thinking { .. } => {}
        Block::Text { text } => {
            let _ = writeln!(out, "\n{}", text.trim_end());
        }
        Block::ToolUse { name, input, .. } => {
            let arguments = input.to_string();
            if arguments == "{}" || input.is_null() {
                let _ = writeln!(out, "\n> Used {}", code(name));
            } else {
                let _ = writeln!(out, "\n> Used {} with {}", code(name), code(&arguments));
            }
        }
        Block::ToolResult {
            content, is_error, ..
        } => {
            let said = if *is_error {
                "It failed:"
            } else {
                "It answered:"
            };
            let _ = writeln!(out, ">\n> {said}\n>");
            for line in fenced(content).lines() {
                let _ = writeln!(out, "> {line}");
            }
        }
        Block::ClarificationRequest { question, .. } => {
            let _ = writeln!(out, "\n**The assistant asks:** {}", question.trim());
        }
        Block::ApprovalRequest { summary, .. } => {
            let _ = writeln!(
                out,
                "\n**The assistant asks for your approval:** {}",
                summary.trim()
            );
        }
        Block::Compaction { summary, .. } => {
            let _ = writeln!(
                out,
                "\n*The conversation so far, summarised:*\n\n{}\n\n---",
                strip_references(summary).trim()
            );
        }
    }
}

/// `text` as inline code, its backticks held inside a longer run.
fn code(text: &str) -> String {
    let ticks = "`".repeat(longest_run(text, '`') + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{ticks}{pad}{text}{pad}{ticks}")
}

/// `text` in a fenced block whose fence is longer than any run of backticks inside it.
fn fenced(text: &str) -> String {
    let fence = "`".repeat((longest_run(text, '`') + 1).max(3));
    format!("{fence}\n{}\n{fence}", text.trim_end())
}

fn longest_run(text: &str, c: char) -> usize {
    let mut longest = 0;
    let mut run = 0;
    for ch in text.chars() {
        run = if ch == c { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    longest
}
