//! Conversions for markdown: the document tree with its source ranges in UTF-16 code units.

use std::ops::Range;

use portal_core::markdown::{Block, Inline};
use wasm_bindgen::JsValue;

use super::{to_js, utf16_length};

/// `blocks` as `MarkdownBlock` objects, their UTF-8 byte ranges into `reply` turned into UTF-16
/// code-unit offsets (what JavaScript's string indices count). `reply_length` is the UTF-16
/// length of `reply`: the offsets are counted back from its end, so converting the open blocks
/// at the end of a long reply costs in proportion to them, not to the reply.
pub fn blocks(blocks: &[Block], reply: &str, reply_length: usize) -> Result<JsValue, JsValue> {
    let mut blocks = blocks.to_vec();
    Offsets::end_of(reply, reply_length).blocks(&mut blocks);
    to_js(&blocks)
}

/// One block as a `MarkdownBlock` object, as [`blocks`] converts them.
pub fn block(block: &Block, reply: &str, reply_length: usize) -> Result<JsValue, JsValue> {
    let mut block = block.clone();
    Offsets::end_of(reply, reply_length).blocks(std::slice::from_mut(&mut block));
    to_js(&block)
}

/// A place in the reply, as a byte offset and the UTF-16 offset it falls at, moved from one
/// range to the next: the ranges of a tree come in source order, so each move is short.
struct Offsets<'a> {
    reply: &'a str,
    byte: usize,
    utf16: usize,
}

impl<'a> Offsets<'a> {
    /// The end of `reply`, whose UTF-16 length is `length`.
    fn end_of(reply: &'a str, length: usize) -> Self {
        Offsets {
            reply,
            byte: reply.len(),
            utf16: length,
        }
    }

    fn blocks(&mut self, blocks: &mut [Block]) {
        for block in blocks {
            match block {
                Block::Paragraph { content } | Block::Heading { content, .. } => {
                    self.inlines(content);
                }
                Block::Quote { blocks } => self.blocks(blocks),
                Block::List { items, .. } => {
                    for item in items {
                        self.blocks(&mut item.blocks);
                    }
                }
                Block::Code { content, .. } | Block::Html { content } => {
                    for text in content {
                        self.range(&mut text.source);
                    }
                }
                Block::Table { head, rows, .. } => {
                    for cell in head.iter_mut().chain(rows.iter_mut().flatten()) {
                        self.inlines(cell);
                    }
                }
                Block::Rule => {}
            }
        }
    }

    fn inlines(&mut self, inlines: &mut [Inline]) {
        for inline in inlines {
            match inline {
                Inline::Text(text) => self.range(&mut text.source),
                Inline::Code { source, .. } | Inline::Math { source, .. } => self.range(source),
                Inline::Emphasis { content }
                | Inline::Strong { content }
                | Inline::Strikethrough { content }
                | Inline::Link { content, .. } => self.inlines(content),
                Inline::SoftBreak | Inline::HardBreak => {}
            }
        }
    }

    fn range(&mut self, range: &mut Range<usize>) {
        *range = self.at(range.start)..self.at(range.end);
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
