//! A plain-text view of a prompt, for people: golden files, logs and a "show prompt" screen.

use std::fmt::Write;

use crate::attachment::PictureRef;

use super::entry::{Entry, Part};
use super::neutral::Prompt;

/// The prompt as text: the system text, then each entry under a header naming its layer and
/// role, then the tools and the effort.
pub fn render(prompt: &Prompt) -> String {
    let mut out = String::new();
    out.push_str("=== system ===\n");
    out.push_str(&prompt.system_text());
    out.push('\n');
    out.push_str(&render_entries(&prompt.entries));
    let tools: Vec<&str> = prompt.tools.iter().map(|t| t.name.as_str()).collect();
    let tools = if tools.is_empty() {
        "none".to_string()
    } else {
        tools.join(", ")
    };
    let _ = writeln!(out, "=== tools: {tools} ===");
    match prompt.effort {
        Some(effort) => {
            let _ = writeln!(out, "=== effort: {} ===", effort.as_str());
        }
        None => out.push_str("=== effort: not sent ===\n"),
    }
    out
}

/// Entries as text, each under a `=== <layer number> <layer label> · <role> ===` header.
pub fn render_entries(entries: &[Entry]) -> String {
    let mut out = String::new();
    for entry in entries {
        let _ = writeln!(
            out,
            "=== {} {} · {} ===",
            entry.layer.number(),
            entry.layer.label(),
            entry.role.as_str()
        );
        for part in &entry.parts {
            match part {
                Part::Text { text } => {
                    let _ = writeln!(out, "{text}");
                }
                Part::Picture { picture } => picture_line(&mut out, picture),
                Part::Call(call) => {
                    let _ = writeln!(out, "→ call {} {}({})", call.id, call.name, call.arguments);
                }
                Part::Answer(answer) => {
                    let _ = writeln!(
                        out,
                        "← {} {}: {}",
                        if answer.is_error { "error" } else { "result" },
                        answer.call_id,
                        answer.content
                    );
                    for picture in &answer.pictures {
                        picture_line(&mut out, picture);
                    }
                }
            }
        }
    }
    out
}

fn picture_line(out: &mut String, picture: &PictureRef) {
    let _ = writeln!(
        out,
        "(picture {} {} {}×{}{})",
        picture.attachment_id,
        picture.media_type,
        picture.width,
        picture.height,
        if picture.reduced { ", reduced" } else { "" }
    );
}
