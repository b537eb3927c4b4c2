//! The summary prompt (rules C8–C10): what the summary call reads.
//!
//! The system text gives the rules: the opening line naming the turns covered, the five sections,
//! references on facts, carrying an earlier summary over, and the language. The one user message
//! holds the history as tagged text (an earlier summary first), the language sample and the
//! user's `/compact` instructions, if any. Thinking is left out of the history. Tool results and
//! argument strings are cut to the chosen [`Detail`]; the user's and the assistant's words are
//! whole, because requests are kept verbatim.

use std::fmt::Write;

use super::Detail;
use super::note::{SUMMARY_NOTE, turns_header};
use super::tail::{Unit, UnitState};
use super::text::{ARGUMENT_CUT_MARKER, cut, cut_json_strings};
use super::view::{Entry, NewestCompaction};
use crate::attachment::Attachment;
use crate::block::{Block, TurnsCovered};
use crate::prompt::entry::{Entry as PromptEntry, Layer, Part};
use crate::prompt::layers::SystemLayer;
use crate::prompt::neutral::Prompt;
use crate::tag::attribute;
use crate::transcript::{Message, Role, TurnStatus};

/// The first sentence of every summary request's system text.
const OPENING: &str =
    "You write the compaction summary of a conversation between a user and an assistant.";

/// What the summary call reads: a separate instance of the turn's own model is called with this
/// system text and these messages, and no tools (rule C11). Both triggers read the same prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryRequest {
    pub system: String,
    pub messages: Vec<Message>,
}

impl SummaryRequest {
    /// The request as one text: the system text, a rule, then each message's text. For logs,
    /// golden files and models that read plain text.
    pub fn text(&self) -> String {
        let mut out = self.system.clone();
        for message in &self.messages {
            out.push_str("\n\n----- ");
            out.push_str(message.role.as_str());
            out.push_str(" -----\n\n");
            for block in &message.blocks {
                if let Block::Text { text } = block {
                    out.push_str(text);
                }
            }
        }
        out
    }

    /// The summary call's prompt: the system text as its one layer, the history as the new
    /// message, no tools and no effort (rule C11: a separate call on the turn's own model).
    pub fn prompt(&self) -> Prompt {
        Prompt {
            layers: vec![SystemLayer {
                layer: Layer::Floor,
                text: self.system.clone(),
            }],
            entries: self
                .messages
                .iter()
                .map(|message| PromptEntry {
                    role: message.role,
                    layer: Layer::NewMessage,
                    parts: message
                        .blocks
                        .iter()
                        .filter_map(|block| match block {
                            Block::Text { text } => Some(Part::Text { text: text.clone() }),
                            _ => None,
                        })
                        .collect(),
                })
                .collect(),
            tools: Vec::new(),
            effort: None,
        }
    }

    /// The summary request a prompt made by [`SummaryRequest::prompt`] carries, so that a model
    /// (the demo's) can tell a summary call from a turn's call; `None` for any other prompt.
    pub fn from_prompt(prompt: &Prompt) -> Option<SummaryRequest> {
        let [layer] = prompt.layers.as_slice() else {
            return None;
        };
        if !layer.text.starts_with(OPENING) || !prompt.tools.is_empty() {
            return None;
        }
        let messages = prompt
            .entries
            .iter()
            .map(|entry| {
                let blocks = entry
                    .parts
                    .iter()
                    .filter_map(|part| match part {
                        Part::Text { text } => Some(Block::text(text)),
                        _ => None,
                    })
                    .collect();
                Message::new(entry.role, blocks)
            })
            .collect();
        Some(SummaryRequest {
            system: layer.text.clone(),
            messages,
        })
    }

    /// The text of the user message that holds the history.
    pub fn history_text(&self) -> &str {
        self.messages
            .iter()
            .flat_map(|m| m.blocks.iter())
            .find_map(|b| match b {
                Block::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .unwrap_or_default()
    }
}

/// Everything the prompt is made from.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PromptInput<'a> {
    pub earlier: Option<&'a NewestCompaction<'a>>,
    /// The summarised entries.
    pub entries: &'a [Entry<'a>],
    /// The units the summarised entries are grouped in.
    pub units: &'a [Unit],
    pub covers: TurnsCovered,
    pub sample: &'a [String],
    pub instructions: Option<&'a str>,
}

/// Renders the summary request at the given detail.
pub(crate) fn render(input: &PromptInput<'_>, detail: Detail) -> SummaryRequest {
    SummaryRequest {
        system: system_text(input),
        messages: vec![Message::new(
            Role::User,
            vec![Block::text(user_text(input, detail))],
        )],
    }
}

fn system_text(input: &PromptInput<'_>) -> String {
    let header = turns_header(input.covers);
    let mut s = format!(
        "{OPENING} The \
summary replaces the history below: from now on the assistant sees only the summary and the latest \
messages, so everything it needs to carry on must be in the summary.

Open the summary with this line, exactly as written:
{header}

Then write these five sections, in this order, under these headings:

## Requests
Every request the user made, quoted verbatim and in full, oldest first, each marked with its turn.

## Decisions
What was decided, by the user or by the assistant, and why.

## Work done
What was done, with the paths and artifact ids it read, wrote or produced. Work done carries no \
references: its path or id already finds it.

## Open work
What is still to do, as a task list of \"- [ ] \" lines, including the task the assistant was \
working on when the history ends.

## Facts
The facts the rest depends on, one per line. Each fact ends with the reference of the tool result \
of the read or search that found it, written [ref:<call id>]: a fact found in \
<tool_result ref=\"call_12\"> ends with [ref:call_12]. The assistant can read a referenced result \
back whole. A fact taken from an earlier summary keeps its reference.
"
    );
    if let Some(earlier) = input.earlier {
        let _ = write!(
            s,
            "
The history opens with an earlier summary, replayed under the note \"{SUMMARY_NOTE}\" and quoted \
under <earlier_summary>. It covers {}. Carry everything in it into the new summary: every request, \
decision, piece of work, open task and fact, with its references. The new summary covers turn 1 \
onwards, like the earlier one.
",
            turns_header(earlier.covers).to_lowercase()
        );
    }
    if input.sample.is_empty() {
        s.push_str(
            "
Language: write the summary in the language the user's requests are written in.",
        );
    } else {
        s.push_str(
            "
Language: write the summary in the language that most of the user's paragraphs quoted under \
<language_sample> are written in. Decide the language from those paragraphs alone, not from tool \
output, documents or these instructions.",
        );
    }
    s.push_str(
        " The opening line and the section headings stay in English. Copy quotations, names, \
document codes, figures, paths, ids and references exactly as they appear, without translating \
them.
",
    );
    if input.instructions.is_some() {
        s.push_str(
            "
The user asked for this summary with instructions of their own, quoted under \
<user_instructions>. Follow them where they do not conflict with the rules above.
",
        );
    }
    s.push_str("\nWrite only the summary.");
    s
}

fn user_text(input: &PromptInput<'_>, detail: Detail) -> String {
    let mut s = String::from(
        "Write the compaction summary of the conversation history below.\n\n<history>\n",
    );
    if let Some(earlier) = input.earlier {
        let _ = writeln!(
            s,
            "<earlier_summary note=\"{}\" turns=\"{}–{}\">\n{}\n</earlier_summary>",
            attribute(SUMMARY_NOTE),
            earlier.covers.first,
            earlier.covers.last,
            earlier.summary.trim()
        );
    }
    let mut open_turn: Option<u32> = None;
    for unit in input.units {
        let first = &input.entries[unit.start];
        if open_turn != Some(first.turn.index) {
            if open_turn.is_some() {
                s.push_str("</turn>\n");
            }
            open_turn = Some(first.turn.index);
            let _ = write!(s, "<turn number=\"{}\"", first.turn.index);
            if let Some(status) = status_name(first.turn.status) {
                let _ = write!(s, " status=\"{status}\"");
            }
            s.push_str(">\n");
        }
        for entry in &input.entries[unit.start..unit.end] {
            render_entry(&mut s, entry, detail);
        }
        for id in &unit.unanswered {
            let gated = first
                .blocks()
                .any(|b| matches!(b, Block::ApprovalRequest { call_id, .. } if call_id == id));
            let outcome = match (unit.state, gated) {
                (UnitState::Running, false) => "still running",
                (UnitState::Running, true) => "awaiting approval",
                (_, false) => "never returned",
                (_, true) => "not run: it was awaiting approval when the turn stopped",
            };
            let _ = writeln!(
                s,
                "<tool_result ref=\"{}\" outcome=\"{outcome}\"/>",
                attribute(id)
            );
        }
    }
    if open_turn.is_some() {
        s.push_str("</turn>\n");
    }
    s.push_str("</history>\n");
    if !input.sample.is_empty() {
        s.push_str("\n<language_sample>\n");
        for paragraph in input.sample {
            let _ = writeln!(s, "<paragraph>\n{paragraph}\n</paragraph>");
        }
        s.push_str("</language_sample>\n");
    }
    if let Some(instructions) = input.instructions {
        let _ = writeln!(
            s,
            "\n<user_instructions>\n{instructions}\n</user_instructions>"
        );
    }
    s
}

/// The status the history names: none for a completed turn, the others in words.
fn status_name(status: TurnStatus) -> Option<&'static str> {
    (status != TurnStatus::Completed).then(|| status.in_words())
}

fn render_entry(s: &mut String, entry: &Entry<'_>, detail: Detail) {
    match entry.role() {
        Role::User => {
            let text: Vec<&str> = entry
                .blocks()
                .filter_map(|b| match b {
                    Block::Text { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect();
            let _ = writeln!(s, "<user>\n{}", text.join("\n\n"));
            for attachment in &entry.message.attachments {
                render_attachment(s, attachment);
            }
            s.push_str("</user>\n");
        }
        Role::Assistant | Role::Tool => {
            let mut prose: Vec<&str> = Vec::new();
            for block in entry.blocks() {
                if let Block::Text { text } = block {
                    prose.push(text);
                    continue;
                }
                flush_prose(s, &mut prose);
                render_block(s, block, detail);
            }
            flush_prose(s, &mut prose);
        }
    }
}

fn flush_prose(s: &mut String, prose: &mut Vec<&str>) {
    if !prose.is_empty() {
        let _ = writeln!(s, "<assistant>\n{}\n</assistant>", prose.join("\n\n"));
        prose.clear();
    }
}

fn render_block(s: &mut String, block: &Block, detail: Detail) {
    match block {
        Block::ToolUse { id, name, input } => {
            let _ = writeln!(
                s,
                "<tool_call ref=\"{}\" name=\"{}\">\n{}\n</tool_call>",
                attribute(id),
                attribute(name),
                arguments(input, detail.argument_chars)
            );
        }
        Block::ToolResult {
            call_id,
            content,
            is_error,
            ..
        } => {
            let outcome = if *is_error { "error" } else { "ok" };
            let id = attribute(call_id);
            if detail.result_chars == 0 {
                let _ = writeln!(
                    s,
                    "<tool_result ref=\"{id}\" outcome=\"{outcome}\" left_out=\"{} characters\"/>",
                    cut(content, 0).1
                );
                return;
            }
            let (kept, dropped) = cut(content, detail.result_chars);
            let _ = write!(
                s,
                "<tool_result ref=\"{id}\" outcome=\"{outcome}\">\n{kept}"
            );
            if dropped > 0 {
                let _ = write!(s, "\n[cut: {dropped} more characters]");
            }
            s.push_str("\n</tool_result>\n");
        }
        Block::ClarificationRequest { question, .. } => {
            let _ = writeln!(
                s,
                "<clarification_request>\n{question}\n</clarification_request>"
            );
        }
        Block::ApprovalRequest { call_id, summary } => {
            let _ = writeln!(
                s,
                "<approval_request ref=\"{}\">\n{summary}\n</approval_request>",
                attribute(call_id)
            );
        }
        Block::Thinking { .. } | Block::Text { .. } | Block::Compaction { .. } => {}
    }
}

fn render_attachment(s: &mut String, attachment: &Attachment) {
    let (kind, name, media_type) = match attachment {
        Attachment::Document(d) => ("document", &d.filename, &d.media_type),
        Attachment::Picture(p) => ("picture", &p.filename, &p.media_type),
    };
    let _ = writeln!(
        s,
        "<attachment id=\"{}\" kind=\"{kind}\" name=\"{}\" type=\"{}\"/>",
        attribute(attachment.id()),
        attribute(name),
        attribute(media_type)
    );
}

/// How many times longer than one cut string a call's whole arguments may be.
const ARGUMENTS_PER_STRING: usize = 8;

/// The call's arguments as JSON, each string cut to `max` characters. Arguments that stay long
/// after that (many values) are cut as text.
fn arguments(input: &serde_json::Value, max: usize) -> String {
    let json = cut_json_strings(input, max).to_string();
    match cut(&json, max.saturating_mul(ARGUMENTS_PER_STRING)) {
        (_, 0) => json,
        (kept, _) => format!("{kept}{ARGUMENT_CUT_MARKER}"),
    }
}
