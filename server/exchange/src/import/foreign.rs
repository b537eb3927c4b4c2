//! What ChatGPT's and Claude's exports share once their messages are read: turns made from a run
//! of user messages and replies, and the notes saying in words what was left out.

use portal_core::block::Block;
use portal_core::transcript::{
    FORMAT_VERSION, Message, Role, Transcript, Turn, TurnKind, TurnStatus,
};

use super::{Imported, clean_text, clean_title};

/// Something a user's message held whose content the export does not carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Missing {
    Picture,
    Recording,
    /// A file, by its name as the export gives it.
    File(String),
    /// A part of a kind the import does not know, by the export's name for the kind.
    Part(String),
}

/// A conversation's turns as its messages are read in order, with its notes.
#[derive(Debug, Default)]
pub(super) struct Turns {
    turns: Vec<Turn>,
    /// The turn the user's latest message opened, without its reply yet.
    open: Option<Turn>,
    reply: Vec<Block>,
    notes: Vec<String>,
    replies_before_user: usize,
    tool_calls: usize,
    tool_results: usize,
    tool_names: Vec<String>,
    unknown_parts: usize,
    unknown_kinds: Vec<String>,
}

impl Turns {
    /// Opens a turn with the user's message `text`, which held `missing` besides.
    pub(super) fn user(&mut self, text: &str, missing: &[Missing]) {
        self.close();
        let index = u32::try_from(self.turns.len() + 1).unwrap_or(u32::MAX);
        let mut text = clean_text(text);
        if text.trim().is_empty() {
            // A user message needs a text block; it says what the message was.
            text = if missing.is_empty() {
                "[No text in the export]".to_string()
            } else {
                format!("[{} left out of the import]", capitalised(&phrase(missing)))
            };
        }
        if !missing.is_empty() {
            let reason = if missing.iter().all(|m| *m == Missing::Picture) {
                "the export holds no picture files"
            } else if missing.iter().all(|m| !matches!(m, Missing::Part(_))) {
                "the export holds no files"
            } else {
                "the import cannot make them from the export"
            };
            self.notes.push(format!(
                "Turn {index}'s {} {} left out: {reason}.",
                phrase(missing),
                if missing.len() == 1 { "was" } else { "were" }
            ));
        }
        self.open = Some(Turn {
            index,
            kind: TurnKind::Chat,
            status: TurnStatus::CutOff,
            effort: None,
            context_tokens: None,
            trace: Vec::new(),
            messages: vec![Message::new(Role::User, vec![Block::text(text)])],
        });
    }

    /// Adds one message's thinking and text blocks to the open turn's reply; empty ones are
    /// dropped, and a reply before the user's first message is left out.
    pub(super) fn reply(&mut self, blocks: impl IntoIterator<Item = Block>) {
        let blocks: Vec<Block> = blocks.into_iter().filter_map(cleaned).collect();
        if blocks.is_empty() {
            return;
        }
        if self.open.is_none() {
            self.replies_before_user += 1;
            return;
        }
        self.reply.extend(blocks);
    }

    /// Counts a tool call left out, made to the tool `name`.
    pub(super) fn tool_call(&mut self, name: Option<&str>) {
        self.tool_calls += 1;
        self.tool_named(name);
    }

    /// Counts a tool result left out, from the tool `name`.
    pub(super) fn tool_result(&mut self, name: Option<&str>) {
        self.tool_results += 1;
        self.tool_named(name);
    }

    /// Counts a part left out whose kind, `kind`, the import does not know.
    pub(super) fn unknown(&mut self, kind: &str) {
        self.unknown_parts += 1;
        let kind = clean_title(kind);
        if !self.unknown_kinds.contains(&kind) {
            self.unknown_kinds.push(kind);
        }
    }

    /// Adds a note about the whole conversation.
    pub(super) fn note(&mut self, note: String) {
        self.notes.push(note);
    }

    /// The conversation titled `title`, with its notes.
    pub(super) fn finish(mut self, title: &str) -> Imported {
        self.close();
        if self.replies_before_user > 0 {
            let n = self.replies_before_user;
            self.notes.push(format!(
                "{} before the user's first message {} left out: a Portal turn opens with the user's message.",
                counted(n, "reply", "replies"),
                if n == 1 { "was" } else { "were" }
            ));
        }
        if self.tool_calls + self.tool_results > 0 {
            let mut counts = Vec::new();
            if self.tool_calls > 0 {
                counts.push(counted(self.tool_calls, "tool call", "tool calls"));
            }
            if self.tool_results > 0 {
                counts.push(counted(self.tool_results, "tool result", "tool results"));
            }
            let names = if self.tool_names.is_empty() {
                String::new()
            } else {
                format!(" ({})", self.tool_names.join(", "))
            };
            self.notes.push(format!(
                "{}{names} {} left out: Portal imports what was said, not what tools did.",
                counts.join(" and "),
                if self.tool_calls + self.tool_results == 1 {
                    "was"
                } else {
                    "were"
                }
            ));
        }
        if self.unknown_parts > 0 {
            self.notes.push(format!(
                "{} of a kind the import does not know ({}) {} left out.",
                counted(self.unknown_parts, "part", "parts"),
                self.unknown_kinds.join(", "),
                if self.unknown_parts == 1 {
                    "was"
                } else {
                    "were"
                }
            ));
        }
        if self.turns.is_empty() {
            self.notes
                .push("The conversation holds no message of the user to import.".to_string());
        }
        Imported {
            title: clean_title(title),
            agent: None,
            project: None,
            pinned: false,
            transcript: Transcript {
                version: FORMAT_VERSION,
                turns: self.turns,
            },
            notes: self.notes,
        }
    }

    /// Ends the open turn: completed when its reply ends on text, cut off otherwise.
    fn close(&mut self) {
        let Some(mut turn) = self.open.take() else {
            return;
        };
        let reply = std::mem::take(&mut self.reply);
        if matches!(reply.last(), Some(Block::Text { .. })) {
            turn.status = TurnStatus::Completed;
        } else if reply.is_empty() {
            self.notes.push(format!(
                "Turn {} has no answer in the export; it is imported as cut off.",
                turn.index
            ));
        } else {
            self.notes.push(format!(
                "Turn {}'s reply does not end on an answer in text; it is imported as cut off.",
                turn.index
            ));
        }
        if !reply.is_empty() {
            turn.messages.push(Message::new(Role::Assistant, reply));
        }
        self.turns.push(turn);
    }

    fn tool_named(&mut self, name: Option<&str>) {
        let name = clean_title(name.unwrap_or_default());
        if !name.is_empty() && !self.tool_names.contains(&name) {
            self.tool_names.push(name);
        }
    }
}

/// `block` without NUL; `None` when it is a text or thinking with nothing but spaces.
fn cleaned(block: Block) -> Option<Block> {
    match block {
        Block::Text { text } => {
            let text = clean_text(&text);
            (!text.trim().is_empty()).then_some(Block::Text { text })
        }
        Block::Thinking { text } => {
            let text = clean_text(&text);
            (!text.trim().is_empty()).then_some(Block::Thinking { text })
        }
        other => Some(other),
    }
}

/// What was missing, in words: "picture", "2 pictures and file notes.pdf".
fn phrase(missing: &[Missing]) -> String {
    let pictures = missing.iter().filter(|m| **m == Missing::Picture).count();
    let recordings = missing.iter().filter(|m| **m == Missing::Recording).count();
    let mut items = Vec::new();
    if pictures > 0 {
        items.push(counted_bare(pictures, "picture", "pictures"));
    }
    if recordings > 0 {
        items.push(counted_bare(
            recordings,
            "voice recording",
            "voice recordings",
        ));
    }
    let files: Vec<String> = missing
        .iter()
        .filter_map(|m| match m {
            Missing::File(name) => Some(name.clone()),
            _ => None,
        })
        .collect();
    match files.as_slice() {
        [] => {}
        [one] => items.push(format!("file {one}")),
        many => items.push(format!("files {}", listed(many))),
    }
    for item in missing {
        if let Missing::Part(kind) = item {
            items.push(format!("{kind} part"));
        }
    }
    listed(&items)
}

/// `items` as a list in words: "a", "a and b", "a, b and c".
fn listed(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// "1 reply", "2 replies".
fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// "picture", "2 pictures": a count after a possessive, where one needs no number.
fn counted_bare(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        one.to_string()
    } else {
        counted(n, one, many)
    }
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
