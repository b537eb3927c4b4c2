//! A block described as a [`Node`] tree in Rust, so two frames' drawings can be compared and the
//! second patched into the first (`crate::patch`). Every text is a text node and every attribute
//! one core's markdown tree allows: links only where core gave them an `href` (http, https,
//! mailto), opening in a new tab without the page's referrer; images are links showing their alt
//! text. While a reply plays out, the words still resolving from their blur are pieces timed from
//! the frame that revealed them (core's [`Reveals`]).

use std::ops::Range;

use portal_core::markdown::{Alignment, Block, Cell, Inline, Text};
use portal_core::pacing::motion::RESOLVE_MS;
use portal_core::playout::Reveals;

/// How words are drawn: resolved, or resolving as `reveals` says at `now`.
#[derive(Clone, Copy)]
pub(crate) struct Drawing<'a> {
    pub reply: &'a str,
    pub resolving: Option<(&'a Reveals, f64)>,
}

/// What a block is drawn as, described in Rust so two frames' drawings can be compared.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Node {
    Text(String),
    Element {
        tag: &'static str,
        attributes: Vec<(&'static str, String)>,
        children: Vec<Node>,
    },
    /// Words resolving from their blur, revealed at `revealed_ms` (a `.w` span).
    Piece {
        text: String,
        revealed_ms: f64,
    },
    /// A math span's TeX, drawn as MathML (`crate::maths`). It arrives whole: core's markdown
    /// holds maths back until its closing delimiter.
    Math {
        tex: String,
        display: bool,
    },
}

/// A top-level block's description, and when its last piece will have resolved if it has one.
pub(crate) struct Described {
    pub node: Node,
    pub resolved_by: Option<f64>,
}

/// Describes one top-level block.
pub(crate) fn describe(block: &Block, drawing: Drawing<'_>) -> Described {
    let mut painter = Painter {
        drawing,
        resolved_by: None,
    };
    Described {
        node: painter.block(block),
        resolved_by: painter.resolved_by,
    }
}

impl Node {
    pub(crate) fn is_piece_revealed_at(&self, at: f64) -> bool {
        matches!(self, Node::Piece { revealed_ms, .. } if *revealed_ms == at)
    }

    /// Whether `other` can be drawn by patching a drawing of `self`.
    pub(crate) fn same_kind(&self, other: &Node) -> bool {
        match (self, other) {
            (Node::Text(_), Node::Text(_)) => true,
            (Node::Piece { revealed_ms: a, .. }, Node::Piece { revealed_ms: b, .. }) => a == b,
            (
                Node::Element {
                    tag: a,
                    attributes: was,
                    ..
                },
                Node::Element {
                    tag: b,
                    attributes: is,
                    ..
                },
            ) => a == b && was == is,
            (Node::Math { .. }, Node::Math { .. }) => self == other,
            _ => false,
        }
    }
}

struct Painter<'a> {
    drawing: Drawing<'a>,
    resolved_by: Option<f64>,
}

/// An element's description.
fn node(tag: &'static str, attributes: Vec<(&'static str, String)>, children: Vec<Node>) -> Node {
    Node::Element {
        tag,
        attributes,
        children,
    }
}

fn class(name: &str) -> Vec<(&'static str, String)> {
    vec![("class", name.to_string())]
}

impl Painter<'_> {
    fn block(&mut self, block: &Block) -> Node {
        match block {
            Block::Paragraph { content } => node("p", Vec::new(), self.inlines(content)),
            Block::Heading { level, content } => {
                let tag = match level {
                    1 => "h1",
                    2 => "h2",
                    3 => "h3",
                    4 => "h4",
                    5 => "h5",
                    _ => "h6",
                };
                node(tag, Vec::new(), self.inlines(content))
            }
            Block::Quote { blocks } => {
                let inner = blocks.iter().map(|b| self.block(b)).collect();
                node("blockquote", Vec::new(), inner)
            }
            Block::List {
                start,
                tight,
                items,
            } => {
                let mut attributes = Vec::new();
                if let Some(start) = start.filter(|s| *s != 1) {
                    attributes.push(("start", start.to_string()));
                }
                let items = items
                    .iter()
                    .map(|item| {
                        let mut children = Vec::new();
                        let mut attributes = Vec::new();
                        if let Some(checked) = item.task {
                            attributes = class("task");
                            let mut box_attributes = vec![
                                ("type", "checkbox".to_string()),
                                ("disabled", String::new()),
                            ];
                            if checked {
                                box_attributes.push(("checked", String::new()));
                            }
                            children.push(node("input", box_attributes, Vec::new()));
                        }
                        for inner in &item.blocks {
                            match inner {
                                // A tight list's paragraphs are drawn without the space between
                                // them.
                                Block::Paragraph { content } if *tight => {
                                    for inline in self.inlines(content) {
                                        push(&mut children, inline);
                                    }
                                }
                                _ => children.push(self.block(inner)),
                            }
                        }
                        node("li", attributes, children)
                    })
                    .collect();
                node(if start.is_some() { "ol" } else { "ul" }, attributes, items)
            }
            Block::Code { language, content } => {
                // The language and a Copy button above code that scrolls sideways.
                let head = node(
                    "div",
                    class("code-head"),
                    vec![
                        node(
                            "span",
                            class("code-language"),
                            vec![Node::Text(
                                language.as_deref().unwrap_or("code").to_string(),
                            )],
                        ),
                        node(
                            "button",
                            vec![
                                ("class", "code-copy".to_string()),
                                ("type", "button".to_string()),
                            ],
                            vec![Node::Text("Copy".to_string())],
                        ),
                    ],
                );
                let code = node("code", Vec::new(), self.texts(content));
                node(
                    "div",
                    class("code-block"),
                    vec![head, node("pre", Vec::new(), vec![code])],
                )
            }
            Block::Table {
                alignments,
                head,
                rows,
            } => {
                let row = |tag: &'static str, cells: &[Cell], painter: &mut Self| {
                    let cells = cells
                        .iter()
                        .zip(alignments)
                        .map(|(cell, alignment)| {
                            node(tag, align(*alignment), painter.inlines(cell))
                        })
                        .collect();
                    node("tr", Vec::new(), cells)
                };
                let mut table = vec![node("thead", Vec::new(), vec![row("th", head, self)])];
                if !rows.is_empty() {
                    let body = rows.iter().map(|r| row("td", r, self)).collect();
                    table.push(node("tbody", Vec::new(), body));
                }
                // The wrapper scrolls sideways when the table is wider than the column.
                node(
                    "div",
                    class("table-scroll"),
                    vec![node("table", Vec::new(), table)],
                )
            }
            Block::Rule => node("hr", Vec::new(), Vec::new()),
            Block::Html { content } => node("pre", class("raw-html"), self.texts(content)),
        }
    }

    fn texts(&mut self, content: &[Text]) -> Vec<Node> {
        let mut children = Vec::new();
        for text in content {
            self.leaf(&mut children, &text.text, text.source.clone());
        }
        children
    }

    fn inlines(&mut self, content: &[Inline]) -> Vec<Node> {
        let mut children = Vec::new();
        for inline in content {
            self.inline(&mut children, inline);
        }
        children
    }

    fn inline(&mut self, out: &mut Vec<Node>, inline: &Inline) {
        match inline {
            Inline::Text(text) => self.leaf(out, &text.text, text.source.clone()),
            Inline::Emphasis { content } => out.push(node("em", Vec::new(), self.inlines(content))),
            Inline::Strong { content } => {
                out.push(node("strong", Vec::new(), self.inlines(content)))
            }
            Inline::Strikethrough { content } => {
                out.push(node("del", Vec::new(), self.inlines(content)))
            }
            Inline::Code { text, source } => {
                let mut code = Vec::new();
                self.leaf(&mut code, text, source.clone());
                out.push(node("code", Vec::new(), code));
            }
            Inline::Math { text, display, .. } => out.push(Node::Math {
                tex: text.clone(),
                display: *display,
            }),
            Inline::Link {
                href,
                pending,
                image,
                content,
            } => match href {
                Some(href) => {
                    let mut attributes = vec![
                        ("href", href.clone()),
                        ("rel", "noopener noreferrer nofollow".to_string()),
                        ("target", "_blank".to_string()),
                    ];
                    if *image {
                        attributes.push(("class", "image-link".to_string()));
                        attributes.push((
                            "title",
                            "An image, not loaded: opens its address".to_string(),
                        ));
                    }
                    out.push(node("a", attributes, self.inlines(content)));
                }
                None if *pending => {
                    out.push(node("span", class("link pending"), self.inlines(content)))
                }
                None => {
                    for inline in self.inlines(content) {
                        push(out, inline);
                    }
                }
            },
            Inline::SoftBreak => push(out, Node::Text("\n".to_string())),
            Inline::HardBreak => out.push(node("br", Vec::new(), Vec::new())),
        }
    }

    /// A leaf's text, drawn from the reply's bytes `source`: where it lies in them (a code span's
    /// text after its backticks), or timed from their start (a character reference).
    fn leaf(&mut self, out: &mut Vec<Node>, text: &str, source: Range<usize>) {
        let Some((reveals, now)) = self.drawing.resolving else {
            push(out, Node::Text(text.to_string()));
            return;
        };
        let start = self
            .drawing
            .reply
            .get(source.clone())
            .and_then(|written| written.find(text))
            .map_or(source.start, |at| source.start + at);
        for piece in reveals.pieces(text, start, now) {
            match piece.revealed_ms {
                None => push(out, Node::Text(piece.text.to_string())),
                Some(revealed_ms) => {
                    out.push(Node::Piece {
                        text: piece.text.to_string(),
                        revealed_ms,
                    });
                    let by = revealed_ms + RESOLVE_MS;
                    self.resolved_by = Some(self.resolved_by.map_or(by, |b| b.max(by)));
                }
            }
        }
    }
}

/// Adds a node, joining text to the text before it, so a drawing holds one text node where the
/// reply has one run of text.
fn push(out: &mut Vec<Node>, added: Node) {
    if let (Some(Node::Text(last)), Node::Text(text)) = (out.last_mut(), &added) {
        last.push_str(text);
        return;
    }
    out.push(added);
}

fn align(alignment: Alignment) -> Vec<(&'static str, String)> {
    let style = match alignment {
        Alignment::None => return Vec::new(),
        Alignment::Left => "text-align: left",
        Alignment::Center => "text-align: center",
        Alignment::Right => "text-align: right",
    };
    vec![("style", style.to_string())]
}
