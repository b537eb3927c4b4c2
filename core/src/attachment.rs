//! Attachments carried by a user message (rules A1–A8).
//!
//! An attachment is a document or a picture, decided once at upload and never re-decided (A1):
//! the prompt treats each by its stored kind whatever its media type says. This module writes the
//! words a message carries for each: a document's manifest (A2) with its text inline when it is
//! finished and short (A3), a picture's caption naming the size it is sent at (A4), and the line
//! an older picture leaves behind (A8). The replay budgets of A6–A8 are applied by memory, newest
//! first. The pixel work is the server's: core only computes the reduced size.

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::block::ToolPicture;
use crate::memory::cut::{count_up_to, cut_prefix};
use crate::model::{ModelCapabilities, PictureLimit};
use crate::tag::attribute;

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
    /// Pages read so far and pages in all, for the reading progress. A finished document with
    /// fewer pages read than it has was stopped at its host's reading limit.
    #[serde(default)]
    pub pages_read: u32,
    #[serde(default)]
    pub pages_total: u32,
    /// The host's limit that stopped reading before the end, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_by: Option<ReadingLimit>,
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

/// Which of its host's limits stopped reading a document before its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReadingLimit {
    /// The pages a document is read to.
    Pages,
    /// The time a document is read for.
    Time,
    /// The memory reading may take: a stream, a page or the document grew past it.
    Memory,
}

impl ReadingLimit {
    /// The limit in the words a progress note uses.
    pub fn name(self) -> &'static str {
        match self {
            ReadingLimit::Pages => "page limit",
            ReadingLimit::Time => "time limit",
            ReadingLimit::Memory => "memory limit",
        }
    }
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

    /// The name the file was uploaded with.
    pub fn filename(&self) -> &str {
        match self {
            Attachment::Document(d) => &d.filename,
            Attachment::Picture(p) => &p.filename,
        }
    }

    /// Whether the attachment is a document still being read, so a host asks again for its
    /// progress.
    pub fn is_reading(&self) -> bool {
        matches!(self, Attachment::Document(d) if d.status == ReadingStatus::Reading)
    }

    /// What the composer shows beside the attachment's name, in words for the person: `Ready`
    /// once it can be sent as it is, `Reading… page 3 of 12` while a document is read, and what
    /// stopped or failed reading and which pages could not be read (rule A2's facts).
    pub fn progress_note(&self) -> String {
        let Attachment::Document(doc) = self else {
            return "Ready".to_string();
        };
        let (read, total) = (doc.pages_read, doc.pages_total);
        let mut note = match (doc.status, total) {
            (ReadingStatus::Reading, 0) => "Reading…".to_string(),
            (ReadingStatus::Reading, _) => {
                format!(
                    "Reading… page {} of {total}",
                    read.saturating_add(1).min(total)
                )
            }
            (ReadingStatus::Finished, _) if read < total || doc.stopped_by.is_some() => {
                format!("Ready; {}", progress(doc))
            }
            (ReadingStatus::Finished, _) => "Ready".to_string(),
            (ReadingStatus::Failed, 0) => "Could not be read".to_string(),
            (ReadingStatus::Failed, _) => {
                format!("Could not be read after {read} of {total} pages")
            }
        };
        if !doc.unreadable_pages.is_empty() {
            note.push_str("; unreadable pages: ");
            note.push_str(&page_ranges(&doc.unreadable_pages));
        }
        note
    }
}

/// A text document's text from its uploaded bytes (rule A2): without a leading byte-order mark,
/// each `\r\n` made a `\n`, and white space trimmed from both ends; `None` when nothing else is
/// left. Bytes that are not UTF-8 (uploads are sniffed, so none is stored) are read lossily.
/// The text is made in the bytes' own buffer: a large file is never copied.
pub fn text_from_bytes(bytes: Vec<u8>) -> Option<String> {
    let mut bytes = utf8(bytes).into_bytes();
    let start = if bytes.starts_with("\u{feff}".as_bytes()) {
        3
    } else {
        0
    };
    // Every `\r` followed by a `\n` is left out, as `str::replace("\r\n", "\n")` would leave it;
    // the bytes are moved down over the gaps. Leaving out an ASCII byte keeps the text UTF-8.
    let mut kept = 0;
    for at in start..bytes.len() {
        if !(bytes[at] == b'\r' && bytes.get(at + 1) == Some(&b'\n')) {
            bytes[kept] = bytes[at];
            kept += 1;
        }
    }
    bytes.truncate(kept);
    let mut text = utf8(bytes);
    text.truncate(text.trim_end().len());
    text.drain(..text.len() - text.trim_start().len());
    (!text.is_empty()).then_some(text)
}

/// `bytes` as text, read lossily when they are not UTF-8.
fn utf8(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes)
        .unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned())
}

/// Why a file was not attached, naming it: the server's refusals name the file already; any
/// other reason (the connection, a signed-out session) is said of the file `filename`.
pub fn upload_refusal(filename: &str, reason: &str) -> String {
    if reason.contains(filename) {
        let mut sentence = reason.to_string();
        if let Some(first) = sentence.get(..1) {
            let upper = first.to_uppercase();
            sentence.replace_range(..1, &upper);
        }
        sentence
    } else {
        format!("“{filename}” was not attached: {reason}")
    }
}

/// A size in bytes as people write it: `512 bytes`, `1.5 KB`, `25.3 MB`, `20 MB`, counted in
/// 1,024s as file managers do, with one decimal unless it is zero.
pub fn file_size(bytes: u64) -> String {
    if bytes == 1 {
        return "1 byte".to_string();
    }
    if bytes < 1024 {
        return format!("{bytes} bytes");
    }
    let mut unit = 0;
    let mut scaled = bytes as f64 / 1024.0;
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    while scaled >= 1024.0 && unit + 1 < UNITS.len() {
        scaled /= 1024.0;
        unit += 1;
    }
    let mut tenths = (scaled * 10.0).round() as u64;
    if tenths >= 10_240 && unit + 1 < UNITS.len() {
        tenths = 10;
        unit += 1;
    }
    if tenths.is_multiple_of(10) {
        format!("{} {}", tenths / 10, UNITS[unit])
    } else {
        format!("{}.{} {}", tenths / 10, tenths % 10, UNITS[unit])
    }
}

/// The attachment numbers, each a default from the product rules or a documented decision.
/// Written in camelCase like [`crate::memory::MemoryConfig`], which holds it; a missing field
/// keeps its default.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct AttachmentConfig {
    /// A finished document of at most this many characters is placed in the message whole (A3).
    pub inline_document_chars: usize,
    /// The manifest lists this many section headings at most (A2).
    pub manifest_headings: usize,
    /// Each listed heading is cut to this many characters. **Decision:** 200.
    pub heading_chars: usize,
    /// Inline document text replayed from earlier turns shares this budget, newest first (A7).
    pub inline_replay_budget: usize,
    /// Only this many of the most recent picture-bearing earlier messages resend their pictures
    /// (A8).
    pub picture_resend_messages: usize,
}

impl Default for AttachmentConfig {
    fn default() -> Self {
        AttachmentConfig {
            inline_document_chars: 6_000,
            manifest_headings: 20,
            heading_chars: 200,
            inline_replay_budget: 24_000,
            picture_resend_messages: 3,
        }
    }
}

/// A picture as the prompt hands it to the model: which attachment, and the size it is sent at.
/// The host turns it into bytes (reduced to `width` × `height` when `reduced`) at conversion.
/// Part of a prompt, not of the transcript: serialised in camelCase like the prompt's entries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PictureRef {
    pub attachment_id: String,
    pub media_type: String,
    pub width: u32,
    pub height: u32,
    /// Whether the size is smaller than the stored picture.
    pub reduced: bool,
}

/// Why a message's attachments cannot go to the model.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AttachmentError {
    /// Rule A5: a picture needs a model that can see.
    #[error(
        "the model “{model}” cannot see pictures, and “{filename}” is a picture; remove the picture or choose a model that can see"
    )]
    PictureNeedsVision { model: String, filename: String },
}

/// Refuses a message carrying a picture when the model cannot see (rule A5). The host calls it
/// before it records anything of the turn.
pub fn check_can_see(
    attachments: &[Attachment],
    model: &ModelCapabilities,
) -> Result<(), AttachmentError> {
    if model.can_see {
        return Ok(());
    }
    match attachments.iter().find_map(|a| match a {
        Attachment::Picture(p) => Some(p),
        Attachment::Document(_) => None,
    }) {
        Some(picture) => Err(AttachmentError::PictureNeedsVision {
            model: model.id.clone(),
            filename: picture.filename.clone(),
        }),
        None => Ok(()),
    }
}

/// The size a `width` × `height` picture is sent at: reduced, aspect kept, until it fits `limit`
/// (rule A4). Sides are rounded down and never below one pixel.
pub fn reduced_size(width: u32, height: u32, limit: Option<PictureLimit>) -> (u32, u32) {
    let Some(limit) = limit else {
        return (width, height);
    };
    if width == 0 || height == 0 {
        return (width, height);
    }
    let (w, h) = (u64::from(width), u64::from(height));
    let long = w.max(h);
    let edge = u64::from(limit.long_edge.max(1));
    let (mut w, mut h) = if long > edge {
        (scale(w, edge, long), scale(h, edge, long))
    } else {
        (w, h)
    };
    if let Some(pixels) = limit.pixels.filter(|&p| p > 0)
        && w * h > pixels
    {
        let factor = (pixels as f64 / (w * h) as f64).sqrt();
        w = ((w as f64 * factor).floor() as u64).max(1);
        h = ((h as f64 * factor).floor() as u64).max(1);
        while w * h > pixels && (w > 1 || h > 1) {
            if w >= h {
                w -= 1;
            } else {
                h -= 1;
            }
        }
    }
    (w as u32, h as u32)
}

fn scale(side: u64, numerator: u64, denominator: u64) -> u64 {
    (side * numerator / denominator).max(1)
}

impl Picture {
    /// The picture as sent to `model`.
    pub fn reference(&self, model: &ModelCapabilities) -> PictureRef {
        let (width, height) = reduced_size(self.width, self.height, model.largest_picture);
        PictureRef {
            attachment_id: self.id.clone(),
            media_type: self.media_type.clone(),
            width,
            height,
            reduced: (width, height) != (self.width, self.height),
        }
    }
}

impl ToolPicture {
    /// A tool's picture as sent to `model`, reduced like an attached one (rule A4).
    pub fn reference(&self, model: &ModelCapabilities) -> PictureRef {
        let (width, height) = reduced_size(self.width, self.height, model.largest_picture);
        PictureRef {
            attachment_id: self.attachment_id.clone(),
            media_type: self.media_type.clone(),
            width,
            height,
            reduced: (width, height) != (self.width, self.height),
        }
    }
}

/// The caption that goes with a picture handed to the model, naming the size it is sent at.
pub fn picture_caption(picture: &Picture, sent: &PictureRef) -> String {
    let reduced = if sent.reduced {
        format!(" reduced-from=\"{}×{}\"", picture.width, picture.height)
    } else {
        String::new()
    };
    format!(
        "<picture id=\"{}\" name=\"{}\" size=\"{}×{}\"{reduced}/>",
        attribute(&picture.id),
        attribute(&picture.filename),
        sent.width,
        sent.height
    )
}

/// Why a picture is not shown, in the words its message carries instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PictureGone {
    /// An older picture-bearing message: only the most recent few resend (rule A8).
    Older,
    /// The model cannot see (a later model than the one the picture was sent to).
    Blind,
}

/// The line a picture leaves in its message when it is not shown, naming it (rule A8).
pub fn picture_gone(picture: &Picture, why: PictureGone) -> String {
    let words = match why {
        PictureGone::Older => {
            "This picture was shown in an earlier turn and is no longer attached."
        }
        PictureGone::Blind => "This picture is not shown: the model cannot see pictures.",
    };
    format!(
        "<picture id=\"{}\" name=\"{}\">{words}</picture>",
        attribute(&picture.id),
        attribute(&picture.filename)
    )
}

/// The line a tool's picture adds to its result when it is not shown, naming it.
pub fn tool_picture_gone(picture: &ToolPicture, why: PictureGone) -> String {
    let words = match why {
        PictureGone::Older => "This picture was shown in an earlier turn and is no longer sent.",
        PictureGone::Blind => "This picture is not shown: the model cannot see pictures.",
    };
    format!(
        "<picture id=\"{}\">{words}</picture>",
        attribute(&picture.attachment_id)
    )
}

/// How much of a document's text its message carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocumentBody {
    /// The whole text (rule A3).
    Inline,
    /// The manifest only, because the text is longer than the inline limit (rule A3).
    TooLong,
    /// The manifest only, because the shared replay budget is spent (rule A7).
    OverBudget,
    /// The manifest only, because there is no finished text.
    NoText,
}

impl Document {
    /// Whether the document is a text file, plain or markdown, whose text is its bytes as
    /// [`text_from_bytes`] reads them.
    pub fn is_text_file(&self) -> bool {
        matches!(self.media_type.as_str(), "text/plain" | "text/markdown")
    }

    /// The reading progress and unreadable pages, as the manifest says them to the model (rule
    /// A2): `Reading: in progress, 2 of 5 pages read; unreadable pages: 2`.
    pub fn progress_note(&self) -> String {
        let mut note = format!("Reading: {}", progress(self));
        if !self.unreadable_pages.is_empty() {
            note.push_str("; unreadable pages: ");
            note.push_str(&page_ranges(&self.unreadable_pages));
        }
        note
    }

    /// The length of the text in characters when the document may be placed inline: finished and
    /// at most the inline limit (rule A3).
    pub fn inline_chars(&self, config: &AttachmentConfig) -> Option<usize> {
        let text = self.text.as_deref()?;
        if self.status != ReadingStatus::Finished {
            return None;
        }
        let limit = config.inline_document_chars;
        let count = count_up_to(text, limit + 1);
        (count <= limit).then_some(count)
    }

    /// The body the document gets in a new message: whole when it may be inline.
    pub fn new_message_body(&self, config: &AttachmentConfig) -> DocumentBody {
        if self.inline_chars(config).is_some() {
            DocumentBody::Inline
        } else if self.status == ReadingStatus::Finished && self.text.is_some() {
            DocumentBody::TooLong
        } else {
            DocumentBody::NoText
        }
    }
}

/// The document as its message carries it: the manifest (rule A2) and the body.
pub fn document_entry(doc: &Document, body: DocumentBody, config: &AttachmentConfig) -> String {
    let mut out = format!(
        "<document id=\"{}\" name=\"{}\" type=\"{}\">\n",
        attribute(&doc.id),
        attribute(&doc.filename),
        attribute(&doc.media_type),
    );
    out.push_str(&doc.progress_note());
    let headings: Vec<&str> = doc
        .headings
        .iter()
        .take(config.manifest_headings)
        .map(|h| cut_prefix(h, config.heading_chars).unwrap_or(h))
        .collect();
    if !headings.is_empty() {
        out.push_str("\nSections: ");
        out.push_str(&headings.join("; "));
        if doc.headings.len() > headings.len() {
            out.push_str("; …");
        }
    }
    let tools = format!(
        "read it with read_document and search it with search_attachments (id {})",
        doc.id
    );
    match (body, doc.text.as_deref()) {
        (DocumentBody::Inline, Some(text)) => {
            out.push_str("\nText:\n");
            out.push_str(text);
        }
        (DocumentBody::TooLong, _) => {
            out.push_str(&format!(
                "\nThe text is longer than {} characters: {tools}.",
                config.inline_document_chars
            ));
        }
        (DocumentBody::OverBudget, _) => {
            out.push_str(&format!("\nThe text is not replayed here: {tools}."));
        }
        (DocumentBody::Inline | DocumentBody::NoText, _) => match doc.status {
            ReadingStatus::Reading => out.push_str(&format!(
                "\nStill being read: search what is read so far with search_attachments (id {}).",
                doc.id
            )),
            ReadingStatus::Failed => out.push_str("\nThe text could not be read."),
            ReadingStatus::Finished => out.push_str("\nNo text was found."),
        },
    }
    out.push_str("\n</document>");
    out
}

fn progress(doc: &Document) -> String {
    let (read, total) = (doc.pages_read, doc.pages_total);
    match (doc.status, total) {
        (ReadingStatus::Reading, 0) => "in progress".to_string(),
        (ReadingStatus::Reading, _) => format!("in progress, {read} of {total} pages read"),
        (ReadingStatus::Finished, 0) => match doc.stopped_by {
            Some(limit) => format!("stopped at the {} before any page was read", limit.name()),
            None => "finished".to_string(),
        },
        // The host stopped reading at one of its limits: the rest was never read. A document
        // stored before the limit was recorded names none.
        (ReadingStatus::Finished, _) if read < total || doc.stopped_by.is_some() => {
            let limit = doc.stopped_by.map_or("reading limit", ReadingLimit::name);
            format!("stopped at the {limit}, {read} of {total} pages read")
        }
        (ReadingStatus::Finished, 1) => "finished, 1 page".to_string(),
        (ReadingStatus::Finished, _) => format!("finished, {total} pages"),
        (ReadingStatus::Failed, 0) => "failed".to_string(),
        (ReadingStatus::Failed, _) => format!("failed after {read} of {total} pages"),
    }
}

/// Page numbers as sorted ranges: `3, 7–9, 12`.
fn page_ranges(pages: &[u32]) -> String {
    // Each page put in its place as it comes: the lists are short, and a sort would bring the
    // standard library's sorting code into the web app (3 KB) for them alone.
    let mut sorted: Vec<u32> = Vec::with_capacity(pages.len());
    for &page in pages {
        if let Err(at) = sorted.binary_search(&page) {
            sorted.insert(at, page);
        }
    }
    let mut ranges: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end.saturating_add(1) {
            i += 1;
            end = sorted[i];
        }
        ranges.push(if start == end {
            start.to_string()
        } else {
            format!("{start}–{end}")
        });
        i += 1;
    }
    ranges.join(", ")
}
