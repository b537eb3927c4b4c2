//! Drawing core's markdown tree into the page with DOM calls and text nodes only: nothing a reply
//! holds is ever read as HTML. Links open only where core gave them an `href` (http, https,
//! mailto), in a new tab without the page's referrer; images are links showing their alt text.
//!
//! A block is first described as a [`Node`] tree in Rust, then drawn, or patched into what the
//! previous frame drew: a growing block changes only its last text and pieces, so a frame costs
//! a few DOM calls, not the block. While a reply plays out, the words still resolving from their
//! blur are `.w` pieces timed from the frame that revealed them (core's [`Reveals`]), drawn in
//! the step of their resolving their age has reached (web/src/motion.rs, R7).

use std::ops::Range;

use portal_core::markdown::{Alignment, Block, Cell, Inline, Text};
use portal_core::playout::Reveals;
use wasm_bindgen::JsCast;
use web_sys::{CharacterData, Document, Element};

use crate::motion::{self, RESOLVE_MS};
use crate::page::{document, element};

/// How words are drawn: resolved, or resolving as `reveals` says at `now`.
#[derive(Clone, Copy)]
pub struct Drawing<'a> {
    pub reply: &'a str,
    pub resolving: Option<(&'a Reveals, f64)>,
}

/// What a block is drawn as, described in Rust so two frames' drawings can be compared.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
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
}

/// A top-level block's description, and when its last piece will have resolved if it has one.
pub struct Described {
    pub node: Node,
    pub resolved_by: Option<f64>,
}

/// How many top-level blocks share a `<div class="blocks">` group. The browser lays out every
/// child of a changed element again (from its cache), so a live reply's frame would otherwise
/// cost more the longer the reply; style.css keeps the spacing as without the groups.
pub const BLOCKS_PER_GROUP: usize = 32;

/// Draws a whole reply resolved into `body`, replacing what was there: a settled or reloaded
/// reply, and a live one once it settled, are the same DOM (R10).
pub fn draw_reply(body: &Element, reply: &str) {
    body.set_text_content(None);
    let document = document();
    let drawing = Drawing {
        reply,
        resolving: None,
    };
    let mut groups = Vec::new();
    let mut words = Vec::new();
    let mut drawer = Drawer::new(&document, 0.0, &mut words);
    for (index, block) in portal_core::markdown::parse(reply).iter().enumerate() {
        let described = describe(block, drawing);
        let _ = group(&document, body, &mut groups, index)
            .append_child(&drawer.render(&described.node));
    }
    crate::highlight::highlight_code(body);
}

/// The group element block `index` belongs in, made when it is the first of its group.
pub fn group(
    document: &Document,
    body: &Element,
    groups: &mut Vec<Element>,
    index: usize,
) -> Element {
    let number = index / BLOCKS_PER_GROUP;
    while groups.len() <= number {
        let group = element(document, "div");
        group.set_class_name("blocks");
        let _ = body.append_child(&group);
        groups.push(group);
    }
    groups[number].clone()
}

/// Describes one top-level block.
pub fn describe(block: &Block, drawing: Drawing<'_>) -> Described {
    let mut painter = Painter {
        drawing,
        resolved_by: None,
    };
    Described {
        node: painter.block(block),
        resolved_by: painter.resolved_by,
    }
}

/// Draws descriptions into the page at `now`, and keeps each resolving word it draws.
pub struct Drawer<'a> {
    pub document: &'a Document,
    pub now: f64,
    /// The resolving words drawn (`.w` pieces), each with when it was revealed and its step:
    /// the live text moves them on as they age, frame by frame.
    pub words: &'a mut Vec<(Element, f64, u8)>,
    /// Text that grew, appended by [`Drawer::finish`] once everything else is changed. Chromium
    /// shapes a paragraph again on the spot when text is appended to a page with no other change
    /// waiting, and again at layout once the frame's pieces moved; appended last, it is shaped
    /// once, at layout.
    pub appended: Vec<(web_sys::Node, String)>,
}

impl<'a> Drawer<'a> {
    /// A drawer that draws into `document` at `now`, keeping the resolving words it draws in
    /// `words`.
    pub fn new(document: &'a Document, now: f64, words: &'a mut Vec<(Element, f64, u8)>) -> Self {
        Drawer {
            document,
            now,
            words,
            appended: Vec::new(),
        }
    }

    /// Appends the text that grew.
    pub fn finish(self) {
        for (node, more) in self.appended {
            let _ = node.unchecked_ref::<CharacterData>().append_data(&more);
        }
    }

    /// Draws a description; resolving pieces are drawn as far resolved as they are old.
    pub fn render(&mut self, node: &Node) -> web_sys::Node {
        match node {
            Node::Text(text) => self.document.create_text_node(text).into(),
            Node::Piece { text, revealed_ms } => {
                let word = element(self.document, "span");
                let step = motion::resolving_step(self.now - revealed_ms);
                word.set_class_name(motion::resolving_class(step));
                word.set_text_content(Some(text));
                self.words.push((word.clone(), *revealed_ms, step));
                word.into()
            }
            Node::Element {
                tag,
                attributes,
                children,
            } => {
                let drawn = element(self.document, tag);
                for (name, value) in attributes {
                    let _ = drawn.set_attribute(name, value);
                }
                for child in children {
                    let _ = drawn.append_child(&self.render(child));
                }
                drawn.into()
            }
        }
    }

    /// Changes `drawn`, drawn from `old`, into a drawing of `new`, keeping every node that did
    /// not change; returns the node that replaced `drawn` if it had to be replaced.
    pub fn patch(
        &mut self,
        drawn: &web_sys::Node,
        old: &Node,
        new: &Node,
    ) -> Option<web_sys::Node> {
        if !old.same_kind(new) {
            let fresh = self.render(new);
            if let Some(parent) = drawn.parent_node() {
                let _ = parent.replace_child(&fresh, drawn);
            }
            return Some(fresh);
        }
        match (old, new) {
            (Node::Text(was), Node::Text(is)) => {
                // Text that grew is appended to, after the frame's other changes (see
                // `Drawer::appended`). A text description is always drawn as a text node.
                match is.strip_prefix(was.as_str()) {
                    Some("") => {}
                    Some(more) => self.appended.push((drawn.clone(), more.to_string())),
                    None => drawn.set_node_value(Some(is)),
                }
            }
            (Node::Piece { text: was, .. }, Node::Piece { text: is, .. }) if was != is => {
                drawn.set_text_content(Some(is));
            }
            (
                Node::Element {
                    children: was_children,
                    ..
                },
                Node::Element { children, .. },
            ) => self.patch_children(drawn, was_children, children),
            // A piece whose text is the same needs nothing; `same_kind` pairs nodes of one kind.
            _ => {}
        }
        None
    }

    /// Changes the children of `parent`, drawn from `old`, into drawings of `new`. A piece is
    /// kept by when it was revealed, so as the text before it grows and the pieces before it
    /// resolve into it, each frame adds the newest piece and removes the resolved ones rather
    /// than drawing every piece again.
    fn patch_children(&mut self, parent: &web_sys::Node, old: &[Node], new: &[Node]) {
        // The live caret may stand after the drawn children; it stays where it is.
        let caret = parent.last_child().filter(is_caret);
        let mut olds = old.iter().peekable();
        let mut current = parent.first_child();
        for is in new {
            // Pieces before the one that is kept have resolved into the text before them.
            if let Node::Piece { revealed_ms, .. } = is
                && olds
                    .clone()
                    .any(|was| was.is_piece_revealed_at(*revealed_ms))
            {
                while olds
                    .next_if(|was| !was.is_piece_revealed_at(*revealed_ms))
                    .is_some()
                {
                    if let Some(node) = current.take() {
                        current = node.next_sibling();
                        let _ = parent.remove_child(&node);
                    }
                }
            }
            match (olds.peek(), current.clone()) {
                (Some(was), Some(node)) if was.same_kind(is) => {
                    current = node.next_sibling();
                    if *was != is {
                        self.patch(&node, was, is);
                    }
                    olds.next();
                }
                _ => {
                    let _ =
                        parent.insert_before(&self.render(is), current.as_ref().or(caret.as_ref()));
                }
            }
        }
        while let Some(node) = current {
            current = node.next_sibling();
            if Some(&node) != caret.as_ref() {
                let _ = parent.remove_child(&node);
            }
        }
    }
}

impl Node {
    fn is_piece_revealed_at(&self, at: f64) -> bool {
        matches!(self, Node::Piece { revealed_ms, .. } if *revealed_ms == at)
    }

    /// Whether `other` can be drawn by patching a drawing of `self`.
    fn same_kind(&self, other: &Node) -> bool {
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
            _ => false,
        }
    }
}

fn is_caret(node: &web_sys::Node) -> bool {
    node.dyn_ref::<Element>()
        .is_some_and(|e| e.class_list().contains("caret"))
}

/// Where the caret goes in a drawn block: after its last text, inside the innermost element that
/// holds it.
pub fn caret_home(block: &Element) -> Element {
    let mut home = block.clone();
    while let Some(last) = home.last_element_child() {
        let holds_text = matches!(
            last.tag_name().as_str(),
            "P" | "LI"
                | "BLOCKQUOTE"
                | "UL"
                | "OL"
                | "PRE"
                | "CODE"
                | "TABLE"
                | "THEAD"
                | "TBODY"
                | "TR"
                | "TH"
                | "TD"
                | "DIV"
                | "H1"
                | "H2"
                | "H3"
                | "H4"
                | "H5"
                | "H6"
        );
        if !holds_text || last.class_list().contains("code-head") {
            break;
        }
        home = last;
    }
    home
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
            Inline::Math {
                text,
                display,
                source,
            } => {
                let mut code = Vec::new();
                self.leaf(&mut code, text, source.clone());
                let name = if *display { "math display" } else { "math" };
                out.push(node("code", class(name), code));
            }
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
