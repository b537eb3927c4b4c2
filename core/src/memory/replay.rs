//! Replaying one turn as entries: a past turn within the bounds (rules M3–M12), the turn in
//! progress whole (rule M13).

use std::collections::HashMap;

use crate::attachment::{
    Attachment, DocumentBody, PictureGone, document_entry, picture_caption, picture_gone,
    tool_picture_gone,
};
use crate::block::{Block, ToolPicture};
use crate::model::ModelCapabilities;
use crate::prompt::entry::{Answer, Call, Entry, Layer, Part};
use crate::transcript::{Message, Role, Turn};

use super::config::MemoryConfig;
use super::cut::{cut_arguments, cut_prefix};
use super::diagnostic::Diagnostic;
use super::note::{self, Unanswered};
use super::window::Span;

/// How a turn is replayed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// A past turn, `distance` turns back (1 is the closest).
    Past { distance: usize },
    /// The turn in progress.
    Live,
}

impl Mode {
    fn layer(self) -> Layer {
        match self {
            Mode::Past { .. } => Layer::Memory,
            Mode::Live => Layer::NewMessage,
        }
    }
}

/// Replays turns, newest first, keeping the budgets earlier turns share (rules A7, A8).
#[derive(Debug)]
pub(crate) struct Replayer<'a> {
    config: &'a MemoryConfig,
    model: &'a ModelCapabilities,
    inline_left: usize,
    picture_messages_left: usize,
    pub diagnostics: Vec<Diagnostic>,
    /// Whether any replayed message carries a document.
    pub documents: bool,
}

impl<'a> Replayer<'a> {
    pub fn new(config: &'a MemoryConfig, model: &'a ModelCapabilities) -> Self {
        Replayer {
            config,
            model,
            inline_left: config.attachments.inline_replay_budget,
            picture_messages_left: config.attachments.picture_resend_messages,
            diagnostics: Vec::new(),
            documents: false,
        }
    }

    /// The entries of `turn`'s messages in `span`. Past turns must come newest first.
    pub fn turn(&mut self, turn: &Turn, span: Span, mode: Mode) -> Vec<Entry> {
        let messages = &turn.messages;
        let start = span.from_message.min(messages.len());
        let range = start..messages.len();

        // From the end backwards: count the calls, so that the most recent ones hold their place
        // (rule M3), and spend the attachment budgets newest first (rules A7, A8).
        let mut calls = 0;
        let mut attachments: Vec<Vec<Part>> = vec![Vec::new(); range.len()];
        let mut tool_pictures: Vec<Option<PictureGone>> = vec![None; range.len()];
        for m in range.clone().rev() {
            let message = &messages[m];
            match message.role {
                Role::Assistant => {
                    calls += blocks(message, span, m)
                        .iter()
                        .filter(|b| is_call(b))
                        .count()
                }
                Role::User if !message.attachments.is_empty() => {
                    attachments[m - start] = self.attachments(&message.attachments, mode);
                }
                Role::Tool if !self.outcomes_only(mode) && has_pictures(message) => {
                    tool_pictures[m - start] = self.tool_pictures(mode);
                }
                _ => {}
            }
        }
        let omitted = match mode {
            Mode::Past { .. } => calls.saturating_sub(self.config.max_calls_per_turn),
            Mode::Live => 0,
        };

        let mut entries = Vec::new();
        let mut call_number = 0;
        for m in range {
            let message = &messages[m];
            match message.role {
                Role::User => {
                    let mut entry = Entry::new(Role::User, mode.layer());
                    for block in blocks(message, span, m) {
                        if let Block::Text { text } = block {
                            entry.push_text(text.as_str());
                        }
                    }
                    entry.parts.append(&mut attachments[m - start]);
                    if entry.parts.is_empty() {
                        entry.push_text(note::EMPTY_MESSAGE);
                    }
                    entries.push(entry);
                }
                Role::Assistant => {
                    let results = messages
                        .get(m + 1)
                        .filter(|next| next.role == Role::Tool)
                        .map(|next| (next, tool_pictures.get(m + 1 - start).copied().flatten()));
                    self.assistant(
                        blocks(message, span, m),
                        results,
                        mode,
                        (omitted, &mut call_number),
                        &mut entries,
                    );
                }
                Role::Tool => {
                    if m == start || messages[m - 1].role != Role::Assistant {
                        self.diagnostics.push(Diagnostic::OrphanResults {
                            turn: turn.index,
                            message: m + 1,
                        });
                    }
                }
            }
        }
        entries
    }

    /// An assistant message's entry and, when it makes calls, the tool entry answering them.
    /// `results` is the tool message after it, with why its pictures are not shown, if they are
    /// not.
    fn assistant(
        &mut self,
        blocks: &[Block],
        results: Option<(&Message, Option<PictureGone>)>,
        mode: Mode,
        (omitted, call_number): (usize, &mut usize),
        entries: &mut Vec<Entry>,
    ) {
        let last_call = blocks.iter().rposition(is_call);
        let mut entry = Entry::new(Role::Assistant, mode.layer());
        let mut kept: Vec<&str> = Vec::new();
        for (position, block) in blocks.iter().enumerate() {
            match block {
                // Rule M12: thinking never enters memory, nor, in past turns, the narration
                // before the calls.
                Block::Thinking { .. } => {}
                Block::Text { text } => {
                    let narration = matches!(mode, Mode::Past { .. })
                        && last_call.is_some_and(|last| position < last);
                    if !narration {
                        entry.push_text(text.as_str());
                    }
                }
                Block::ClarificationRequest { question, .. } => entry.push_text(question.as_str()),
                Block::ToolUse { id, name, input } => {
                    *call_number += 1;
                    if *call_number <= omitted {
                        if *call_number == omitted {
                            entry.push_text(note::omitted_calls(omitted));
                        }
                        continue;
                    }
                    let arguments = match mode {
                        Mode::Past { .. } => cut_arguments(input, self.config.argument_chars),
                        Mode::Live => input.clone(),
                    };
                    entry.parts.push(Part::Call(Call {
                        id: id.clone(),
                        name: name.clone(),
                        arguments,
                    }));
                    kept.push(id);
                }
                Block::ToolResult { .. }
                | Block::ApprovalRequest { .. }
                | Block::Compaction { .. } => {}
            }
        }
        entries.push(entry);
        if kept.is_empty() {
            return;
        }
        let approvals: Vec<&str> = blocks
            .iter()
            .filter_map(|b| match b {
                Block::ApprovalRequest { call_id, .. } => Some(call_id.as_str()),
                _ => None,
            })
            .collect();
        let (results, gone) = results.map_or((&[][..], None), |(r, gone)| (&r.blocks[..], gone));
        let mut found: HashMap<&str, (&str, bool, &[ToolPicture])> = HashMap::new();
        for block in results {
            if let Block::ToolResult {
                call_id,
                content,
                is_error,
                pictures,
            } = block
            {
                found
                    .entry(call_id.as_str())
                    .or_insert((content.as_str(), *is_error, pictures));
            }
        }
        let mut answers = Entry::new(Role::Tool, mode.layer());
        for id in kept {
            let answer = match found.get(id) {
                Some(&(content, is_error, pictures)) => {
                    let mut content = self.result(content, is_error, id, mode);
                    let pictures = match gone {
                        _ if self.outcomes_only(mode) => Vec::new(),
                        None => pictures.iter().map(|p| p.reference(self.model)).collect(),
                        Some(why) => {
                            for picture in pictures {
                                content.push('\n');
                                content.push_str(&tool_picture_gone(picture, why));
                            }
                            Vec::new()
                        }
                    };
                    Answer {
                        call_id: id.to_string(),
                        content,
                        is_error,
                        pictures,
                    }
                }
                // Rule M9: every replayed call is answered.
                None => {
                    let waiting = approvals.contains(&id);
                    let why = match (mode, waiting) {
                        (Mode::Past { .. }, false) => Unanswered::NeverReturned,
                        (Mode::Past { .. }, true) => Unanswered::NotApproved,
                        (Mode::Live, false) => Unanswered::Pending,
                        (Mode::Live, true) => Unanswered::AwaitingApproval,
                    };
                    Answer {
                        call_id: id.to_string(),
                        content: why.answer().to_string(),
                        is_error: true,
                        pictures: Vec::new(),
                    }
                }
            };
            answers.parts.push(Part::Answer(answer));
        }
        entries.push(answers);
    }

    /// A result as replayed: whole in the turn in progress, cut with a reference in the closest
    /// turns (rule M5), only its outcome further back (rule M7).
    fn result(&self, content: &str, is_error: bool, call_id: &str, mode: Mode) -> String {
        match mode {
            _ if self.outcomes_only(mode) => note::outcome(is_error, call_id),
            _ if content.trim().is_empty() => note::EMPTY_RESULT.to_string(),
            Mode::Live => content.to_string(),
            Mode::Past { .. } => match cut_prefix(content, self.config.result_chars) {
                Some(kept) => note::cut_result(kept, call_id),
                None => content.to_string(),
            },
        }
    }

    /// Whether a turn replayed in `mode` keeps only its results' outcomes (rule M7).
    fn outcomes_only(&self, mode: Mode) -> bool {
        matches!(mode, Mode::Past { distance } if distance > self.config.output_turns)
    }

    /// Rule A8: whether a picture-bearing message resends its pictures: the turn in progress
    /// always, earlier turns only the most recent few, newest first.
    fn resends(&mut self, mode: Mode) -> bool {
        match mode {
            Mode::Live => true,
            Mode::Past { .. } => {
                let resend = self.picture_messages_left > 0;
                self.picture_messages_left = self.picture_messages_left.saturating_sub(1);
                resend
            }
        }
    }

    /// Why a tool message's pictures are not shown, if they are not: a tool message with
    /// pictures is picture-bearing like a user message with attached ones (rules A5, A8).
    fn tool_pictures(&mut self, mode: Mode) -> Option<PictureGone> {
        let resend = self.resends(mode);
        if !self.model.can_see {
            Some(PictureGone::Blind)
        } else if resend {
            None
        } else {
            Some(PictureGone::Older)
        }
    }

    /// The parts a user message's attachments become.
    fn attachments(&mut self, attachments: &[Attachment], mode: Mode) -> Vec<Part> {
        let config = &self.config.attachments;
        let has_picture = attachments
            .iter()
            .any(|a| matches!(a, Attachment::Picture(_)));
        let resend = has_picture && self.resends(mode);
        let mut parts = Vec::new();
        for attachment in attachments {
            match attachment {
                Attachment::Document(doc) => {
                    self.documents = true;
                    let body = match (mode, doc.inline_chars(config)) {
                        // Rule A7: inline text replays within one shared budget, newest first.
                        (Mode::Past { .. }, Some(chars)) if chars <= self.inline_left => {
                            self.inline_left -= chars;
                            DocumentBody::Inline
                        }
                        (Mode::Past { .. }, Some(_)) => DocumentBody::OverBudget,
                        _ => doc.new_message_body(config),
                    };
                    parts.push(Part::Text {
                        text: document_entry(doc, body, config),
                    });
                }
                Attachment::Picture(picture) if !self.model.can_see => {
                    if mode == Mode::Live {
                        self.diagnostics.push(Diagnostic::PictureForBlindModel {
                            attachment_id: picture.id.clone(),
                        });
                    }
                    parts.push(Part::Text {
                        text: picture_gone(picture, PictureGone::Blind),
                    });
                }
                Attachment::Picture(picture) if resend => {
                    let sent = picture.reference(self.model);
                    parts.push(Part::Text {
                        text: picture_caption(picture, &sent),
                    });
                    parts.push(Part::Picture { picture: sent });
                }
                Attachment::Picture(picture) => parts.push(Part::Text {
                    text: picture_gone(picture, PictureGone::Older),
                }),
            }
        }
        parts
    }
}

/// The blocks of message `m` that the span replays.
fn blocks(message: &Message, span: Span, m: usize) -> &[Block] {
    message.blocks.get(span.block_start(m)..).unwrap_or(&[])
}

/// Whether a tool message's results answered with pictures.
fn has_pictures(message: &Message) -> bool {
    message
        .blocks
        .iter()
        .any(|b| matches!(b, Block::ToolResult { pictures, .. } if !pictures.is_empty()))
}

fn is_call(block: &Block) -> bool {
    matches!(block, Block::ToolUse { .. })
}
