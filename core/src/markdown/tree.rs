//! The document tree a reply is drawn from: plain data, no HTML. It serialises as tagged
//! camelCase objects (`{"kind": "paragraph", "content": [...]}`) for the JavaScript binding.
//!
//! Nesting is bounded (`docs/markdown.md`), so walking, cloning, serialising and dropping a tree
//! never runs deep.

use std::ops::Range;

use serde::Serialize;

/// A block of a reply: one of the reply's top-level blocks, or a block inside a quote or a list
/// item. (Not a transcript block: a whole reply is one transcript text block.)
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Block {
    Paragraph {
        content: Vec<Inline>,
    },
    /// A heading; `level` is 1 to 6.
    Heading {
        level: u8,
        content: Vec<Inline>,
    },
    Quote {
        blocks: Vec<Block>,
    },
    /// A list: ordered from `start` when it has one, bulleted otherwise. In a tight list the
    /// items' paragraphs are drawn without the space between paragraphs.
    List {
        start: Option<u64>,
        tight: bool,
        items: Vec<ListItem>,
    },
    /// Fenced or indented code, drawn preformatted; `language` is the first word of the fence's
    /// info string.
    Code {
        language: Option<String>,
        content: Vec<Text>,
    },
    /// A table: every row has one cell per alignment.
    Table {
        alignments: Vec<Alignment>,
        head: Vec<Cell>,
        rows: Vec<Vec<Cell>>,
    },
    /// A thematic break.
    Rule,
    /// Raw HTML, drawn as preformatted plain text: never interpreted.
    Html {
        content: Vec<Text>,
    },
}

/// One item of a list. `task` is `Some(checked)` for a task list item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListItem {
    pub task: Option<bool>,
    pub blocks: Vec<Block>,
}

/// The content of one table cell.
pub type Cell = Vec<Inline>;

/// How a table column's cells are aligned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Alignment {
    None,
    Left,
    Center,
    Right,
}

/// Inline content: text and the formatting around it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum Inline {
    Text(Text),
    Emphasis {
        content: Vec<Inline>,
    },
    Strong {
        content: Vec<Inline>,
    },
    Strikethrough {
        content: Vec<Inline>,
    },
    /// Inline code; `source` covers its backticks too.
    Code {
        text: String,
        source: Range<usize>,
    },
    /// A math span (`$…$`, or `$$…$$` when `display`), drawn as code-styled text; `source` covers
    /// its dollar signs too.
    Math {
        text: String,
        display: bool,
        source: Range<usize>,
    },
    /// A link, an autolink or an image (drawn as a link showing its alt text, never fetched).
    /// `href` is set only for a whole http, https or mailto link; without it the content is drawn
    /// as plain text, styled as a link still arriving when `pending`.
    Link {
        href: Option<String>,
        pending: bool,
        image: bool,
        content: Vec<Inline>,
    },
    /// A line break inside a paragraph that CommonMark draws as a space.
    SoftBreak,
    HardBreak,
}

/// Text drawn as it is, with where it comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Text {
    pub text: String,
    /// The byte range of the reply the text comes from. Either `text` is that range verbatim, or
    /// it is one character reference (`&amp;`) that is shown only once whole.
    pub source: Range<usize>,
}

impl Text {
    /// The text split where the reply's byte `offset` falls: what comes from before it and what
    /// from after, to tell the part a frame newly revealed. A character reference is never split.
    pub fn split_at<'a>(&'a self, reply: &str, offset: usize) -> (&'a str, &'a str) {
        let verbatim = reply.get(self.source.clone()) == Some(self.text.as_str());
        let at = if offset <= self.source.start {
            0
        } else if offset >= self.source.end || !verbatim {
            self.text.len()
        } else {
            offset - self.source.start
        };
        match self.text.split_at_checked(at) {
            Some(parts) => parts,
            None => (self.text.as_str(), ""),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Text;

    #[test]
    fn text_splits_where_the_visible_end_falls() {
        let reply = "say &amp; café";
        let word = Text {
            text: "café".to_string(),
            source: 10..15,
        };
        let reference = Text {
            text: "&".to_string(),
            source: 4..9,
        };
        for (text, offset, expected) in [
            (&word, 0, ("", "café")),
            (&word, 10, ("", "café")),
            (&word, 12, ("ca", "fé")),
            (&word, 15, ("café", "")),
            (&word, 20, ("café", "")),
            (&reference, 4, ("", "&")),
            (&reference, 6, ("&", "")),
            (&reference, 9, ("&", "")),
        ] {
            assert_eq!(
                text.split_at(reply, offset),
                expected,
                "{text:?} at {offset}"
            );
        }
    }
}
