//! Drawing core's markdown tree into the page with DOM calls and text nodes only: nothing a reply
//! holds is ever read as HTML. Links open only where core gave them an `href` (http, https,
//! mailto), in a new tab without the page's referrer; images are links showing their alt text.
//!
//! While a reply plays out, the words still resolving from their blur are drawn as `.w` pieces
//! whose animation starts as far along as the words are old (core's [`Reveals`]), so a block
//! drawn again each frame keeps every word resolving smoothly (R7).

use std::ops::Range;

use portal_core::markdown::{Alignment, Block, Inline, Text};
use portal_core::playout::Reveals;
use wasm_bindgen::JsCast;
use web_sys::{Document, Element};

/// How words are drawn: resolved, or resolving as `reveals` says at `now`.
#[derive(Clone, Copy)]
pub struct Drawing<'a> {
    pub reply: &'a str,
    pub resolving: Option<(&'a Reveals, f64)>,
}

/// A drawn top-level block: its element, and the age of its youngest resolving piece if it has
/// one (it is drawn again, resolved, once that piece has resolved).
pub struct Drawn {
    pub element: Element,
    pub youngest_ms: Option<u32>,
}

/// Draws a whole reply resolved into `body`, replacing what was there: a settled or reloaded
/// reply, and a live one once it settles, are the same DOM (R10).
pub fn draw_reply(body: &Element, reply: &str) {
    body.set_text_content(None);
    let document = document();
    let drawing = Drawing {
        reply,
        resolving: None,
    };
    for block in portal_core::markdown::parse(reply) {
        let drawn = draw_block(&document, &block, drawing);
        let _ = body.append_child(&drawn.element);
    }
}

/// Draws one top-level block.
pub fn draw_block(document: &Document, block: &Block, drawing: Drawing<'_>) -> Drawn {
    let mut painter = Painter {
        document,
        drawing,
        youngest_ms: None,
    };
    let element = painter.block(block);
    Drawn {
        element,
        youngest_ms: painter.youngest_ms,
    }
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
    document: &'a Document,
    drawing: Drawing<'a>,
    youngest_ms: Option<u32>,
}

impl Painter<'_> {
    fn block(&mut self, block: &Block) -> Element {
        match block {
            Block::Paragraph { content } => {
                let p = self.element("p");
                self.inlines(&p, content);
                p
            }
            Block::Heading { level, content } => {
                let heading = self.element(match level {
                    1 => "h1",
                    2 => "h2",
                    3 => "h3",
                    4 => "h4",
                    5 => "h5",
                    _ => "h6",
                });
                self.inlines(&heading, content);
                heading
            }
            Block::Quote { blocks } => {
                let quote = self.element("blockquote");
                for inner in blocks {
                    let drawn = self.block(inner);
                    let _ = quote.append_child(&drawn);
                }
                quote
            }
            Block::List {
                start,
                tight,
                items,
            } => {
                let list = self.element(if start.is_some() { "ol" } else { "ul" });
                if let Some(start) = start.filter(|s| *s != 1) {
                    let _ = list.set_attribute("start", &start.to_string());
                }
                for item in items {
                    let li = self.element("li");
                    if let Some(checked) = item.task {
                        li.set_class_name("task");
                        let box_ = self.element("input");
                        let _ = box_.set_attribute("type", "checkbox");
                        let _ = box_.set_attribute("disabled", "");
                        if checked {
                            let _ = box_.set_attribute("checked", "");
                        }
                        let _ = li.append_child(&box_);
                    }
                    for inner in &item.blocks {
                        match inner {
                            // A tight list's paragraphs are drawn without the space between them.
                            Block::Paragraph { content } if *tight => self.inlines(&li, content),
                            _ => {
                                let drawn = self.block(inner);
                                let _ = li.append_child(&drawn);
                            }
                        }
                    }
                    let _ = list.append_child(&li);
                }
                list
            }
            Block::Code { language, content } => self.code_block(language.as_deref(), content),
            Block::Table {
                alignments,
                head,
                rows,
            } => {
                // The wrapper scrolls sideways when the table is wider than the column.
                let scroll = self.element("div");
                scroll.set_class_name("table-scroll");
                let table = self.element("table");
                let thead = self.element("thead");
                let tr = self.element("tr");
                for (cell, alignment) in head.iter().zip(alignments) {
                    let th = self.cell("th", *alignment);
                    self.inlines(&th, cell);
                    let _ = tr.append_child(&th);
                }
                let _ = thead.append_child(&tr);
                let _ = table.append_child(&thead);
                if !rows.is_empty() {
                    let tbody = self.element("tbody");
                    for row in rows {
                        let tr = self.element("tr");
                        for (cell, alignment) in row.iter().zip(alignments) {
                            let td = self.cell("td", *alignment);
                            self.inlines(&td, cell);
                            let _ = tr.append_child(&td);
                        }
                        let _ = tbody.append_child(&tr);
                    }
                    let _ = table.append_child(&tbody);
                }
                let _ = scroll.append_child(&table);
                scroll
            }
            Block::Rule => self.element("hr"),
            Block::Html { content } => {
                let pre = self.element("pre");
                pre.set_class_name("raw-html");
                for text in content {
                    self.text(&pre, text);
                }
                pre
            }
        }
    }

    /// A code block: its language and a Copy button above, the code scrolling sideways below.
    fn code_block(&mut self, language: Option<&str>, content: &[Text]) -> Element {
        let block = self.element("div");
        block.set_class_name("code-block");
        let head = self.element("div");
        head.set_class_name("code-head");
        let label = self.element("span");
        label.set_class_name("code-language");
        label.set_text_content(Some(language.unwrap_or("code")));
        let copy = self.element("button");
        copy.set_class_name("code-copy");
        let _ = copy.set_attribute("type", "button");
        copy.set_text_content(Some("Copy"));
        let _ = head.append_child(&label);
        let _ = head.append_child(&copy);
        let pre = self.element("pre");
        let code = self.element("code");
        for text in content {
            self.text(&code, text);
        }
        let _ = pre.append_child(&code);
        let _ = block.append_child(&head);
        let _ = block.append_child(&pre);
        block
    }

    fn cell(&self, tag: &str, alignment: Alignment) -> Element {
        let cell = self.element(tag);
        let align = match alignment {
            Alignment::None => None,
            Alignment::Left => Some("left"),
            Alignment::Center => Some("center"),
            Alignment::Right => Some("right"),
        };
        if let Some(align) = align {
            let _ = cell.set_attribute("style", &format!("text-align: {align}"));
        }
        cell
    }

    fn inlines(&mut self, parent: &Element, content: &[Inline]) {
        for inline in content {
            self.inline(parent, inline);
        }
    }

    fn inline(&mut self, parent: &Element, inline: &Inline) {
        match inline {
            Inline::Text(text) => self.text(parent, text),
            Inline::Emphasis { content } => self.wrapped(parent, "em", content),
            Inline::Strong { content } => self.wrapped(parent, "strong", content),
            Inline::Strikethrough { content } => self.wrapped(parent, "del", content),
            Inline::Code { text, source } => {
                let code = self.element("code");
                self.leaf(&code, text, source.clone());
                let _ = parent.append_child(&code);
            }
            Inline::Math {
                text,
                display,
                source,
            } => {
                let code = self.element("code");
                code.set_class_name(if *display { "math display" } else { "math" });
                self.leaf(&code, text, source.clone());
                let _ = parent.append_child(&code);
            }
            Inline::Link {
                href,
                pending,
                image,
                content,
            } => match href {
                Some(href) => {
                    let link = self.element("a");
                    let _ = link.set_attribute("href", href);
                    let _ = link.set_attribute("rel", "noopener noreferrer nofollow");
                    let _ = link.set_attribute("target", "_blank");
                    if *image {
                        link.set_class_name("image-link");
                        let _ =
                            link.set_attribute("title", "An image, not loaded: opens its address");
                    }
                    self.inlines(&link, content);
                    let _ = parent.append_child(&link);
                }
                None if *pending => {
                    let link = self.element("span");
                    link.set_class_name("link pending");
                    self.inlines(&link, content);
                    let _ = parent.append_child(&link);
                }
                None => self.inlines(parent, content),
            },
            Inline::SoftBreak => self.plain(parent, "\n"),
            Inline::HardBreak => {
                let br = self.element("br");
                let _ = parent.append_child(&br);
            }
        }
    }

    fn wrapped(&mut self, parent: &Element, tag: &str, content: &[Inline]) {
        let element = self.element(tag);
        self.inlines(&element, content);
        let _ = parent.append_child(&element);
    }

    fn text(&mut self, parent: &Element, text: &Text) {
        self.leaf(parent, &text.text, text.source.clone());
    }

    /// A leaf's text, drawn from the reply's bytes `source`: where it lies in them (a code span's
    /// text after its backticks), or timed from their start (a character reference).
    fn leaf(&mut self, parent: &Element, text: &str, source: Range<usize>) {
        let Some((reveals, now)) = self.drawing.resolving else {
            self.plain(parent, text);
            return;
        };
        let start = self
            .drawing
            .reply
            .get(source.clone())
            .and_then(|written| written.find(text))
            .map_or(source.start, |at| source.start + at);
        for piece in reveals.pieces(text, start, now) {
            match piece.age_ms {
                None => self.plain(parent, piece.text),
                Some(age) => {
                    let word = self.element("span");
                    word.set_class_name("w");
                    // A negative delay starts the blur's animation as far along as the words are
                    // old, so drawing the block again does not restart it.
                    let _ = word.set_attribute("style", &format!("animation-delay: -{age}ms"));
                    word.set_text_content(Some(piece.text));
                    let _ = parent.append_child(&word);
                    self.youngest_ms = Some(self.youngest_ms.map_or(age, |y| y.min(age)));
                }
            }
        }
    }

    /// Plain text, joined to the text node before it when there is one.
    fn plain(&self, parent: &Element, text: &str) {
        match parent
            .last_child()
            .and_then(|n| n.dyn_into::<web_sys::Text>().ok())
        {
            Some(last) => {
                let _ = last.append_data(text);
            }
            None => {
                let _ = parent.append_child(&self.document.create_text_node(text));
            }
        }
    }

    fn element(&self, tag: &str) -> Element {
        self.document
            .create_element(tag)
            .expect("creating a plain HTML element succeeds")
    }
}

fn document() -> Document {
    web_sys::window()
        .and_then(|w| w.document())
        .expect("the portal runs in a page with a document")
}
