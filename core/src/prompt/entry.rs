//! The provider-neutral message list: entries of parts, each tagged with its layer.

use serde::{Deserialize, Serialize};

use crate::attachment::PictureRef;
use crate::transcript::Role;

/// The seven layers every model call reads, in order (rule L1). Layers 1–5 make the system text;
/// 6 and 7 are the message list. Written in camelCase (`"newMessage"`), like the whole
/// provider-neutral prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Layer {
    Floor,
    Instructions,
    /// The instructions of the project the conversation is in (issue 45): the person's own,
    /// narrowing the author's for every conversation of the project.
    Project,
    Skills,
    Catalogue,
    /// Earlier turns rebuilt from the transcript, after the newest summary.
    Memory,
    /// The new message with its attachments, and what the turn in progress has done since.
    NewMessage,
}

impl Layer {
    /// All layers, in reading order.
    pub const ALL: [Layer; 7] = [
        Layer::Floor,
        Layer::Instructions,
        Layer::Project,
        Layer::Skills,
        Layer::Catalogue,
        Layer::Memory,
        Layer::NewMessage,
    ];

    /// The layer's place in the reading order, from 1.
    pub fn number(self) -> u8 {
        match self {
            Layer::Floor => 1,
            Layer::Instructions => 2,
            Layer::Project => 3,
            Layer::Skills => 4,
            Layer::Catalogue => 5,
            Layer::Memory => 6,
            Layer::NewMessage => 7,
        }
    }

    /// The layer's label, as the prompt names it.
    pub fn label(self) -> &'static str {
        match self {
            Layer::Floor => "Portal floor",
            Layer::Instructions => "Author instructions",
            Layer::Project => "Project instructions",
            Layer::Skills => "Selected skills",
            Layer::Catalogue => "Skill catalogue",
            Layer::Memory => "Short-term memory",
            Layer::NewMessage => "New message",
        }
    }
}

/// One entry of the message list. A `tool` entry carries only answers (with the pictures they
/// answered with), and follows the assistant entry whose calls it answers, each exactly once and
/// in call order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub role: Role,
    pub layer: Layer,
    pub parts: Vec<Part>,
}

/// A piece of an entry, tagged by `type`; a picture's reference fields sit beside the tag
/// (`{ "type": "picture", "attachmentId": …, "width": … }`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Part {
    Text {
        text: String,
    },
    Picture {
        #[serde(flatten)]
        picture: PictureRef,
    },
    Call(Call),
    Answer(Answer),
}

/// A tool call in an assistant entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Call {
    pub id: String,
    pub name: String,
    pub arguments: serde_json::Value,
}

/// The answer to a call, in the tool entry after it, with the pictures the tool answered with
/// that the model is shown (rules A4, A8), each at the size it is sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Answer {
    pub call_id: String,
    pub content: String,
    pub is_error: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pictures: Vec<PictureRef>,
}

impl Entry {
    /// An entry with no parts yet.
    pub fn new(role: Role, layer: Layer) -> Self {
        Entry {
            role,
            layer,
            parts: Vec::new(),
        }
    }

    /// The calls the entry makes.
    pub fn calls(&self) -> impl Iterator<Item = &Call> {
        self.parts.iter().filter_map(|p| match p {
            Part::Call(call) => Some(call),
            _ => None,
        })
    }

    /// The answers the entry carries.
    pub fn answers(&self) -> impl Iterator<Item = &Answer> {
        self.parts.iter().filter_map(|p| match p {
            Part::Answer(answer) => Some(answer),
            _ => None,
        })
    }

    /// Whether the entry makes any call.
    pub fn has_calls(&self) -> bool {
        self.calls().next().is_some()
    }

    pub(crate) fn push_text(&mut self, text: impl Into<String>) {
        let text = text.into();
        if !text.trim().is_empty() {
            self.parts.push(Part::Text { text });
        }
    }
}
