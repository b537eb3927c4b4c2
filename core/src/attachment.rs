//! Attachments carried by a user message (rule A1: a document or a picture, decided once).

use serde::{Deserialize, Serialize};

/// An attachment, decided at upload to be a document or a picture and never re-decided.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Attachment {
    Document(Document),
    Picture(Picture),
}

/// A document as the prompt sees it: its manifest and, once read, its text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Document {
    pub id: String,
    pub filename: String,
    pub media_type: String,
    pub status: ReadingStatus,
    /// Pages read so far and pages in all, for the reading progress.
    #[serde(default)]
    pub pages_read: u32,
    #[serde(default)]
    pub pages_total: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unreadable_pages: Vec<u32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headings: Vec<String>,
    /// The extracted text, once there is any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// Where reading a document has got to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReadingStatus {
    Reading,
    Finished,
    Failed,
}

/// A picture as stored: its original size; the reduced size is computed per model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Picture {
    pub id: String,
    pub filename: String,
    pub media_type: String,
    pub width: u32,
    pub height: u32,
}

impl Attachment {
    /// The attachment's id.
    pub fn id(&self) -> &str {
        match self {
            Attachment::Document(d) => &d.id,
            Attachment::Picture(p) => &p.id,
        }
    }
}
