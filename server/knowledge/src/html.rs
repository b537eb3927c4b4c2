//! A web page read as markdown-like text, for [`crate::chunk`]: headings become `#` lines (so
//! passages keep their headings), lists, tables and links keep markdown's shapes, entities are
//! decoded, and scripts, styles and navigation are left out. The page is read by `htmd`, a
//! converter after turndown.js on html5ever, the parser of Servo; `html2text` was the other
//! choice, but it lays text out for a terminal, in lines of a fixed width.
//!
//! `htmd` walks the parsed tree recursively, and 1,024 nested elements overflowed a 2 MiB stack in
//! a debug build. A page nested deeper than [`MOST_DEPTH`], by a cheap count of its tags before
//! it is parsed, is first flattened: every tag is dropped but for paragraph breaks at block
//! elements and the headings, which the HTML parser never lets nest, and the flat page is read as
//! any other, so its entities are still decoded. The count also spares html5ever such a page: its
//! tree builder looks down the stack of open elements at every tag, and 20,000 nested `div`s took
//! it 30 s to parse in a debug build.

use htmd::HtmlToMarkdown;

/// The deepest nesting of a page read whole, counting open elements whose end tag may not be left
/// out, which is well past the nesting of an ordinary page. The elements the count leaves out
/// (`li`, `td`, `tr`, `p` and the like) and those the parser adds (`tbody`) make a page up to
/// about four times deeper than counted (a table's `tbody`, `tr` and `td` under each `table`), and
/// 512 nested lists, quotes and tables took `htmd` less than a 2 MiB stack in a debug build.
pub const MOST_DEPTH: usize = 128;

/// The elements whose content is left out: not text a reader of the page reads. The head goes
/// too: its title names the page, which is the caller's to keep, not a passage of it.
const LEFT_OUT: [&str; 6] = ["head", "script", "style", "nav", "noscript", "template"];

/// Elements without content or end tag.
const VOID: [&str; 14] = [
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr",
];

/// Elements whose end tag may be left out, each closed by the next of its kind or its parent's end.
const OPTIONAL_END: [&str; 16] = [
    "p", "li", "dt", "dd", "option", "optgroup", "tr", "td", "th", "thead", "tbody", "tfoot",
    "colgroup", "rb", "rt", "rp",
];

/// Elements whose content is text up to their end tag, never tags.
const RAW_TEXT: [&str; 9] = [
    "script", "style", "textarea", "title", "iframe", "noembed", "noframes", "noscript", "xmp",
];

/// Elements a flattened page breaks its paragraphs at.
const BLOCKS: [&str; 26] = [
    "address",
    "article",
    "aside",
    "blockquote",
    "br",
    "dd",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "header",
    "hr",
    "li",
    "main",
    "ol",
    "p",
    "pre",
    "section",
    "table",
    "td",
    "tr",
    "ul",
];

const HEADINGS: [&str; 6] = ["h1", "h2", "h3", "h4", "h5", "h6"];

/// The text of the HTML page `html`, as markdown.
pub fn to_text(html: &str) -> String {
    let converter = HtmlToMarkdown::builder()
        .skip_tags(LEFT_OUT.to_vec())
        .build();
    let flat;
    let html = if too_deep(html) {
        flat = flatten(html);
        &flat
    } else {
        html
    };
    // Parsing a string in memory cannot fail: the result is an `io::Result` for readers.
    converter.convert(html).unwrap_or_default()
}

/// Whether the page nests deeper than [`MOST_DEPTH`]: open elements are counted as a parser
/// keeps them, an end tag closing its element and all opened inside it.
fn too_deep(html: &str) -> bool {
    let mut open: Vec<String> = Vec::new();
    for piece in Pieces::new(html) {
        match piece {
            Piece::Open(name) if !VOID.contains(&&*name) && !OPTIONAL_END.contains(&&*name) => {
                open.push(name);
                if open.len() > MOST_DEPTH {
                    return true;
                }
            }
            Piece::Close(name) => {
                if let Some(at) = open.iter().rposition(|outer| *outer == name) {
                    open.truncate(at);
                }
            }
            Piece::Open(_) | Piece::Text(_) => {}
        }
    }
    false
}

/// The page with its tags dropped but for a paragraph break where a block starts or ends and its
/// headings; its text, entities and all, is kept, but inside navigation.
fn flatten(html: &str) -> String {
    let mut flat = String::new();
    let mut navigation = 0usize;
    let mut at_break = true;
    for piece in Pieces::new(html) {
        match piece {
            Piece::Open(name) if name == "nav" => navigation += 1,
            Piece::Close(name) if name == "nav" => navigation = navigation.saturating_sub(1),
            _ if navigation > 0 => {}
            Piece::Text(text) => {
                flat.push_str(text);
                at_break &= text.trim().is_empty();
            }
            Piece::Open(name) if HEADINGS.contains(&&*name) => {
                flat.push_str(&format!("<{name}>"));
                at_break = true;
            }
            Piece::Close(name) if HEADINGS.contains(&&*name) => {
                flat.push_str(&format!("</{name}>"));
                at_break = true;
            }
            Piece::Open(name) | Piece::Close(name) => {
                if BLOCKS.contains(&&*name) && !at_break {
                    flat.push_str("<p>");
                    at_break = true;
                }
            }
        }
    }
    flat
}

/// A piece of a page, as [`too_deep`] and [`flatten`] read it. Comments, doctypes and the
/// content of raw-text elements such as scripts are passed over.
#[derive(Debug)]
enum Piece<'a> {
    Text(&'a str),
    /// A start tag, by its name in lower case.
    Open(String),
    /// An end tag, by its name in lower case.
    Close(String),
}

/// The pieces of a page, read without building a tree. A `>` ends a tag even in an attribute's
/// quoted value: a page with one reads a little wrong, which a count of depth bears.
struct Pieces<'a> {
    html: &'a str,
    at: usize,
}

impl<'a> Pieces<'a> {
    fn new(html: &'a str) -> Self {
        Pieces { html, at: 0 }
    }

    /// Moves past the first `end` at or after the place read, or to the end of the page.
    fn skip_past(&mut self, end: &str) {
        let rest = &self.html[self.at..];
        self.at += rest.find(end).map_or(rest.len(), |found| found + end.len());
    }
}

impl<'a> Iterator for Pieces<'a> {
    type Item = Piece<'a>;

    fn next(&mut self) -> Option<Piece<'a>> {
        loop {
            let rest = &self.html[self.at..];
            let bytes = rest.as_bytes();
            match bytes {
                [] => return None,
                [b'<', b'!', b'-', b'-', ..] => self.skip_past("-->"),
                [b'<', b'!' | b'?', ..] => self.skip_past(">"),
                [b'<', b'/', first, ..] | [b'<', first, ..] if first.is_ascii_alphabetic() => {
                    let closing = bytes[1] == b'/';
                    let name_at = 1 + usize::from(closing);
                    let name_len = bytes[name_at..]
                        .iter()
                        .take_while(|byte| byte.is_ascii_alphanumeric())
                        .count();
                    let name = rest[name_at..name_at + name_len].to_ascii_lowercase();
                    self.skip_past(">");
                    if !closing && RAW_TEXT.contains(&&*name) {
                        self.at += raw_text_len(&self.html[self.at..], &name);
                    }
                    return Some(if closing {
                        Piece::Close(name)
                    } else {
                        Piece::Open(name)
                    });
                }
                _ => {
                    // A `<` that starts no tag is text, up to the next `<`.
                    let from = usize::from(bytes[0] == b'<');
                    let len = rest[from..].find('<').map_or(rest.len(), |at| at + from);
                    self.at += len;
                    return Some(Piece::Text(&rest[..len]));
                }
            }
        }
    }
}

/// How long the raw text of an element `name` is, up to its end tag in any case.
fn raw_text_len(text: &str, name: &str) -> usize {
    text.match_indices("</")
        .map(|(at, _)| at)
        .find(|&at| {
            text.as_bytes()[at + 2..]
                .get(..name.len())
                .is_some_and(|tag| tag.eq_ignore_ascii_case(name.as_bytes()))
        })
        .unwrap_or(text.len())
}
