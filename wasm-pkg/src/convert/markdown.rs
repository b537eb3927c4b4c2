//! Conversions for markdown: the document tree with its source ranges in UTF-16 code units.
//!
//! The tree is written as JSON text by hand, in core's serde format (`kind`-tagged camelCase
//! objects, fields in their declared order), each range converted as it is written: 1.0 KB
//! gzipped smaller in the wasm than serde's code for the tree and a converted copy of it. An
//! update is written by the same hand, which leaves serde's code for it out of the wasm too.

use std::ops::Range;

use portal_core::markdown::{Alignment, Block, Cell, Inline, ListItem, Text, Update};
use wasm_bindgen::JsValue;

use super::utf16_length;

/// `blocks` as `MarkdownBlock` objects, their UTF-8 byte ranges into `reply` turned into UTF-16
/// code-unit offsets (what JavaScript's string indices count). `reply_length` is the UTF-16
/// length of `reply`: the offsets are counted back from its end, so converting the open blocks
/// at the end of a long reply costs in proportion to them, not to the reply.
pub fn blocks(blocks: &[Block], reply: &str, reply_length: usize) -> Result<JsValue, JsValue> {
    let mut json = Json::new(reply, reply_length);
    json.blocks(blocks);
    json.parse()
}

/// One block as a `MarkdownBlock` object, as [`blocks`] converts them.
pub fn block(block: &Block, reply: &str, reply_length: usize) -> Result<JsValue, JsValue> {
    let mut json = Json::new(reply, reply_length);
    json.block(block);
    json.parse()
}

/// An update as a `MarkdownUpdate` object.
pub fn update(update: &Update) -> Result<JsValue, JsValue> {
    let mut json = Json::new("", 0);
    json.raw("{\"unchanged\":");
    json.number(update.unchanged as u64);
    json.key("redrawn");
    json.raw("[");
    for &index in &update.redrawn {
        json.comma();
        json.number(index as u64);
    }
    json.raw("]");
    json.key("settled");
    json.number(update.settled as u64);
    json.raw("}");
    json.parse()
}

/// The JSON text being written, and a place in the reply, as a byte offset and the UTF-16 offset
/// it falls at, moved from one range to the next: the ranges of a tree come in source order, so
/// each move is short.
struct Json<'a> {
    out: Vec<u8>,
    reply: &'a str,
    byte: usize,
    utf16: usize,
}

impl<'a> Json<'a> {
    /// Nothing written yet, at the end of `reply`, whose UTF-16 length is `length`.
    fn new(reply: &'a str, length: usize) -> Self {
        Json {
            out: Vec::new(),
            reply,
            byte: reply.len(),
            utf16: length,
        }
    }

    fn parse(self) -> Result<JsValue, JsValue> {
        // Only whole strings are written, so the text is UTF-8 and nothing is lost.
        js_sys::JSON::parse(&String::from_utf8_lossy(&self.out))
    }

    fn block(&mut self, block: &Block) {
        match block {
            Block::Paragraph { content } => {
                self.kind("paragraph");
                self.inlines("content", content);
            }
            Block::Heading { level, content } => {
                self.kind("heading");
                self.key("level");
                self.number(u64::from(*level));
                self.inlines("content", content);
            }
            Block::Quote { blocks } => {
                self.kind("quote");
                self.key("blocks");
                self.blocks(blocks);
            }
            Block::List {
                start,
                tight,
                items,
            } => {
                self.kind("list");
                self.key("start");
                match start {
                    Some(start) => self.number(*start),
                    None => self.raw("null"),
                }
                self.key("tight");
                self.boolean(*tight);
                self.key("items");
                self.raw("[");
                for item in items {
                    self.comma();
                    self.item(item);
                }
                self.raw("]");
            }
            Block::Code { language, content } => {
                self.kind("code");
                self.key("language");
                match language {
                    Some(language) => self.string(language),
                    None => self.raw("null"),
                }
                self.texts(content);
            }
            Block::Table {
                alignments,
                head,
                rows,
            } => {
                self.kind("table");
                self.key("alignments");
                self.raw("[");
                for alignment in alignments {
                    self.comma();
                    self.alignment(*alignment);
                }
                self.raw("]");
                self.key("head");
                self.row(head);
                self.key("rows");
                self.raw("[");
                for row in rows {
                    self.comma();
                    self.row(row);
                }
                self.raw("]");
            }
            Block::Rule => self.kind("rule"),
            Block::Html { content } => {
                self.kind("html");
                self.texts(content);
            }
        }
        self.raw("}");
    }

    fn item(&mut self, item: &ListItem) {
        self.raw("{\"task\":");
        match item.task {
            Some(checked) => self.boolean(checked),
            None => self.raw("null"),
        }
        self.key("blocks");
        self.blocks(&item.blocks);
        self.raw("}");
    }

    fn alignment(&mut self, alignment: Alignment) {
        self.raw(match alignment {
            Alignment::None => "\"none\"",
            Alignment::Left => "\"left\"",
            Alignment::Center => "\"center\"",
            Alignment::Right => "\"right\"",
        });
    }

    fn inline(&mut self, inline: &Inline) {
        match inline {
            Inline::Text(text) => {
                self.kind("text");
                self.text_fields(&text.text, &text.source);
            }
            Inline::Emphasis { content } => {
                self.kind("emphasis");
                self.inlines("content", content);
            }
            Inline::Strong { content } => {
                self.kind("strong");
                self.inlines("content", content);
            }
            Inline::Strikethrough { content } => {
                self.kind("strikethrough");
                self.inlines("content", content);
            }
            Inline::Code { text, source } => {
                self.kind("code");
                self.text_fields(text, source);
            }
            Inline::Math {
                text,
                display,
                source,
            } => {
                self.kind("math");
                self.key("text");
                self.string(text);
                self.key("display");
                self.boolean(*display);
                self.source(source);
            }
            Inline::Link {
                href,
                pending,
                image,
                content,
            } => {
                self.kind("link");
                self.key("href");
                match href {
                    Some(href) => self.string(href),
                    None => self.raw("null"),
                }
                self.key("pending");
                self.boolean(*pending);
                self.key("image");
                self.boolean(*image);
                self.inlines("content", content);
            }
            Inline::SoftBreak => self.kind("softBreak"),
            Inline::HardBreak => self.kind("hardBreak"),
        }
        self.raw("}");
    }

    /// `"content"`: the texts of code or raw HTML.
    fn texts(&mut self, content: &[Text]) {
        self.key("content");
        self.raw("[");
        for text in content {
            self.comma();
            self.raw("{\"text\":");
            self.string(&text.text);
            self.source(&text.source);
            self.raw("}");
        }
        self.raw("]");
    }

    /// `"text"` and `"source"` after an object's opening fields.
    fn text_fields(&mut self, text: &str, source: &Range<usize>) {
        self.key("text");
        self.string(text);
        self.source(source);
    }

    /// `"source"`: the range in UTF-16 code units.
    fn source(&mut self, range: &Range<usize>) {
        let start = self.at(range.start);
        let end = self.at(range.end);
        self.key("source");
        self.raw("{\"start\":");
        self.number(start as u64);
        self.raw(",\"end\":");
        self.number(end as u64);
        self.raw("}");
    }

    /// Opens an object with its `kind`; the caller closes it.
    fn kind(&mut self, kind: &str) {
        self.raw("{\"kind\":\"");
        self.raw(kind);
        self.raw("\"");
    }

    fn blocks(&mut self, blocks: &[Block]) {
        self.raw("[");
        for block in blocks {
            self.comma();
            self.block(block);
        }
        self.raw("]");
    }

    fn inlines(&mut self, key: &str, content: &[Inline]) {
        self.key(key);
        self.content(content);
    }

    fn content(&mut self, content: &[Inline]) {
        self.raw("[");
        for inline in content {
            self.comma();
            self.inline(inline);
        }
        self.raw("]");
    }

    fn row(&mut self, cells: &[Cell]) {
        self.raw("[");
        for cell in cells {
            self.comma();
            self.content(cell);
        }
        self.raw("]");
    }

    /// The comma before an array's element, unless it is the first.
    fn comma(&mut self) {
        if self.out.last() != Some(&b'[') {
            self.raw(",");
        }
    }

    /// `,"key":` after an object's earlier fields.
    fn key(&mut self, key: &str) {
        self.raw(",\"");
        self.raw(key);
        self.raw("\":");
    }

    fn raw(&mut self, text: &str) {
        self.out.extend_from_slice(text.as_bytes());
    }

    fn boolean(&mut self, value: bool) {
        self.raw(if value { "true" } else { "false" });
    }

    // serde_json writes numbers and escaped strings; writing into a Vec cannot fail.
    fn number(&mut self, value: u64) {
        let _ = serde_json::to_writer(&mut self.out, &value);
    }

    fn string(&mut self, text: &str) {
        let _ = serde_json::to_writer(&mut self.out, text);
    }

    /// The UTF-16 offset of the reply's byte `byte`, a character boundary.
    fn at(&mut self, byte: usize) -> usize {
        let between = |from: usize, to: usize| self.reply.get(from..to).map_or(0, utf16_length);
        if byte >= self.byte {
            self.utf16 += between(self.byte, byte);
        } else {
            self.utf16 -= between(byte, self.byte);
        }
        self.byte = byte;
        self.utf16
    }
}
