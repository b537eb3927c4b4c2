//! What the new message carries, as the demo reads it from the prompt: each document by its
//! manifest (rule A2), which the demo reads with `read_document` (rule A3), and each picture it
//! was handed (rule A4), attached or from a tool, which it describes from what the picture path
//! gave it.

use portal_core::Role;
use portal_core::attachment::PictureRef;
use portal_core::prompt::{Answer, Layer, Part, PictureSource, Prompt};
use portal_core::tools::READ_DOCUMENT;
use serde_json::json;

use super::quote::opening;

/// How many characters of a document the demo quotes.
const DOCUMENT_QUOTE_CHARS: usize = 200;

/// A document the new message carries, as its manifest names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    pub id: String,
    pub name: String,
}

/// A picture the new message hands the model, with the name and size its caption gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Picture {
    pub name: String,
    pub sent: PictureRef,
    /// The stored size when the picture was reduced for the model (`4000×3000`).
    pub reduced_from: Option<String>,
}

/// The documents and pictures of the turn's new message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Attached {
    pub documents: Vec<Document>,
    pub pictures: Vec<Picture>,
}

impl Attached {
    /// What the first user entry of the new-message layer carries.
    pub fn of(prompt: &Prompt) -> Self {
        let mut attached = Attached::default();
        let Some(entry) = prompt
            .entries
            .iter()
            .find(|e| e.layer == Layer::NewMessage && e.role == Role::User)
        else {
            return attached;
        };
        let mut caption: Option<&str> = None;
        for part in &entry.parts {
            match part {
                Part::Text { text } if text.starts_with("<document ") => {
                    let head = text.lines().next().unwrap_or_default();
                    if let (Some(id), Some(name)) = (
                        portal_core::tag::value(head, "id"),
                        portal_core::tag::value(head, "name"),
                    ) {
                        attached.documents.push(Document { id, name });
                    }
                }
                Part::Text { text } if text.starts_with("<picture ") => caption = Some(text),
                Part::Picture { picture } => {
                    // The caption just before a picture names it and the size it is sent at.
                    let caption = caption.take().filter(|c| {
                        portal_core::tag::value(c, "id").as_deref() == Some(&picture.attachment_id)
                    });
                    attached.pictures.push(Picture {
                        name: caption
                            .and_then(|c| portal_core::tag::value(c, "name"))
                            .unwrap_or_else(|| picture.attachment_id.clone()),
                        sent: picture.clone(),
                        reduced_from: caption
                            .and_then(|c| portal_core::tag::value(c, "reduced-from")),
                    });
                }
                _ => {}
            }
        }
        attached
    }

    /// The first document the turn in progress has not read yet, with the arguments of the
    /// `read_document` call that reads it.
    pub fn next_to_read(&self, prompt: &Prompt) -> Option<(&Document, serde_json::Value)> {
        let read: Vec<&str> = live_calls(prompt)
            .filter(|c| c.name == READ_DOCUMENT)
            .filter_map(|c| c.arguments.get("document_id")?.as_str())
            .collect();
        self.documents
            .iter()
            .find(|d| !read.contains(&d.id.as_str()))
            .map(|d| (d, json!({ "document_id": d.id })))
    }

    /// What the demo says of each picture the new message carries.
    pub fn picture_notes(&self, pictures: &dyn PictureSource) -> Vec<String> {
        self.pictures.iter().map(|p| p.note(pictures)).collect()
    }
}

impl Picture {
    /// The pictures a tool's answer in the turn in progress hands the model, each named after
    /// its tool.
    pub fn of_answer(prompt: &Prompt, answer: &Answer) -> Vec<Picture> {
        let tool = live_calls(prompt)
            .find(|c| c.id == answer.call_id)
            .map_or("the tool", |c| c.name.as_str());
        answer
            .pictures
            .iter()
            .enumerate()
            .map(|(n, sent)| Picture {
                name: format!("{tool} picture {}", n + 1),
                sent: sent.clone(),
                reduced_from: None,
            })
            .collect()
    }

    /// What the demo says of the picture: what the picture path handed it, since the demo cannot
    /// tell what a picture shows.
    pub fn note(&self, pictures: &dyn PictureSource) -> String {
        let sent = &self.sent;
        let reduced = match &self.reduced_from {
            Some(from) => format!(", reduced from {from}"),
            None if sent.reduced => ", reduced".to_string(),
            None => String::new(),
        };
        match pictures.picture(sent) {
            Some(encoded) => format!(
                "I looked at the picture “{}”: it reached me as {} of {}×{} pixels{reduced}, {} \
                 bytes. As a demo I cannot tell what it shows; a model that can see would \
                 describe it here.",
                self.name,
                encoded.media_type,
                sent.width,
                sent.height,
                base64_len(&encoded.base64)
            ),
            None => format!(
                "The picture “{}” ({}×{}{reduced}) could not be loaded, so I did not see it.",
                self.name, sent.width, sent.height
            ),
        }
    }
}

/// What the demo says of each document the turn read with `read_document`, in the order read:
/// the opening of its text, quoted in whole words.
pub fn reading_notes(prompt: &Prompt) -> Vec<String> {
    let reads: Vec<&str> = live_calls(prompt)
        .filter(|c| c.name == READ_DOCUMENT)
        .map(|c| c.id.as_str())
        .collect();
    live_answers(prompt)
        .filter(|a| reads.contains(&a.call_id.as_str()))
        .map(|answer| {
            if answer.is_error {
                return format!("I could not read the document: {}", answer.content);
            }
            let head = answer.content.lines().next().unwrap_or_default();
            let name =
                portal_core::tag::value(head, "name").unwrap_or_else(|| "the document".into());
            let text = answer
                .content
                .split_once('\n')
                .and_then(|(_, rest)| rest.split_once("\n</document>"))
                .map_or("", |(text, _)| text);
            match opening(text, DOCUMENT_QUOTE_CHARS).quoted() {
                Some(quote) => format!("I read “{name}” with read_document. It says: {quote}"),
                None => format!("I read “{name}” with read_document; it has no text I can quote."),
            }
        })
        .collect()
}

/// The calls of the turn in progress.
fn live_calls(prompt: &Prompt) -> impl Iterator<Item = &portal_core::prompt::Call> {
    prompt
        .entries
        .iter()
        .filter(|e| e.layer == Layer::NewMessage)
        .flat_map(|e| e.calls())
}

/// The answers of the turn in progress.
fn live_answers(prompt: &Prompt) -> impl Iterator<Item = &Answer> {
    prompt
        .entries
        .iter()
        .filter(|e| e.layer == Layer::NewMessage)
        .flat_map(|e| e.answers())
}

/// The bytes base64 text stands for.
fn base64_len(data: &str) -> usize {
    let padding = data.bytes().rev().take_while(|&b| b == b'=').count();
    (data.len() / 4 * 3).saturating_sub(padding)
}
