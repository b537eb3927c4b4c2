//! Replies drawn as the model meant them: CommonMark and GitHub's tables, strikethrough and task
//! lists, parsed by pulldown-cmark into a plain-data document tree (no HTML) that the web app
//! and the JavaScript package draw.
//!
//! A settled or reloaded reply is parsed whole with [`parse`]. A reply playing out is fed to a
//! [`StreamingMarkdown`] frame by frame: whole blocks are parsed once, and each update parses
//! only the open block at the visible end, drawn without flashes of raw syntax. Raw HTML is
//! text, links open only over http, https and mailto, and nesting is bounded.
//! `docs/markdown.md` states the rules.

mod bare_urls;
mod build;
mod closers;
mod hold;
mod href;
mod parse;
mod references;
mod scan;
mod stream;
mod tail;
mod tex;
mod tree;

pub use stream::{StreamingMarkdown, Update};
pub use tree::{Alignment, Block, Cell, Inline, ListItem, Text};

/// The blocks of a whole reply.
pub fn parse(reply: &str) -> Vec<Block> {
    let source = build::Source {
        text: reply,
        base: 0,
        real: reply.len(),
        growing: false,
        inline_maths: &[],
    };
    parse::parse(source, &references::References::default()).blocks
}
