//! Drawing a block's text: live, played out by core's [`Playout`] from requestAnimationFrame, or
//! settled, as plain paragraphs.
//!
//! Live text is a sequence of `<p>` elements; each frame appends only to the last one, so layout
//! touches only what changed. The words a frame reveals appear together, so they resolve from a
//! blur together (R7), in one inline `<span class="w">`: one animated element a frame however
//! fast the text plays out. Once its animation is over the span is merged into the paragraph's
//! text node, with the text around it, so a paragraph holds one text node plus the spans still
//! resolving, and a settled reply is exactly the plain paragraphs a reloaded one is drawn as
//! (R10).
//!
//! The browser lays out and shapes a paragraph again whenever its content changes, so an earlier
//! paragraph's spans are merged together, once the last of them has resolved. It also lays out
//! every child of a changed element again (from its cache), so the paragraphs are grouped in
//! `<div class="paragraphs">` elements of [`PARAGRAPHS_PER_GROUP`] (style.css keeps the margins
//! as without them): otherwise a frame would cost more the longer the reply.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::{Rc, Weak};

use portal_core::display::paragraphs;
use portal_core::playout::{Frame, Playout};
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use web_sys::{Document, Element, Node, Text};

/// How long a word takes to resolve from its blur; matches `.w` in style.css.
const RESOLVE_MS: f64 = 450.0;

/// How many paragraphs of live text share a group element.
const PARAGRAPHS_PER_GROUP: usize = 32;

/// Draws `text` into `body` as settled plain paragraphs, replacing what was there.
pub fn draw_plain(body: &Element, text: &str) {
    body.set_text_content(None);
    let document = document();
    for paragraph in paragraphs(text) {
        if let Ok(p) = document.create_element("p") {
            p.set_text_content(Some(paragraph));
            let _ = body.append_child(&p);
        }
    }
}

/// A live block: feed it with [`LiveText::push`] and [`LiveText::finish`]; it draws itself.
#[derive(Clone)]
pub struct LiveText(Rc<RefCell<Live>>);

impl std::fmt::Debug for LiveText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LiveText")
    }
}

struct Live {
    playout: Playout,
    /// Text that was shown before the playout began (a reply followed again after a reload),
    /// drawn plain ahead of it.
    shown: String,
    body: Element,
    /// The group element the live paragraph is in.
    group: Element,
    paragraph: Element,
    /// The live paragraph's number, counting from zero.
    paragraph_number: usize,
    caret: Element,
    /// The paragraph's drawn text ends with one newline; a second one opens a new paragraph.
    trailing_newline: bool,
    /// Word elements still resolving, oldest first.
    resolving: VecDeque<Resolving>,
    frame: Option<Closure<dyn FnMut(f64)>>,
    frame_requested: bool,
    last_now: f64,
    settled: bool,
    on_settle: Option<Box<dyn FnOnce(String)>>,
}

/// A word element resolving from its blur: the words one frame revealed.
struct Resolving {
    span: Element,
    text: String,
    since: f64,
    paragraph_number: usize,
}

impl LiveText {
    /// Starts drawing into `body`; `on_settle` gets the whole text once it is settled.
    pub fn new(body: Element, on_settle: impl FnOnce(String) + 'static) -> Self {
        let document = document();
        let group = group(&document);
        let paragraph = element(&document, "p");
        let caret = element(&document, "span");
        caret.set_class_name("caret");
        let _ = caret.set_attribute("aria-hidden", "true");
        let _ = paragraph.append_child(&caret);
        let _ = group.append_child(&paragraph);
        let _ = body.append_child(&group);
        let live = Rc::new(RefCell::new(Live {
            playout: Playout::default(),
            shown: String::new(),
            body,
            group,
            paragraph,
            paragraph_number: 0,
            caret,
            trailing_newline: false,
            resolving: VecDeque::new(),
            frame: None,
            frame_requested: false,
            last_now: 0.0,
            settled: false,
            on_settle: Some(Box::new(on_settle)),
        }));
        let weak: Weak<RefCell<Live>> = Rc::downgrade(&live);
        let frame = Closure::<dyn FnMut(f64)>::new(move |now: f64| {
            if let Some(live) = weak.upgrade() {
                on_frame(&live, now);
            }
        });
        live.borrow_mut().frame = Some(frame);
        LiveText(live)
    }

    /// Starts drawing into `body` after `shown`, text the reader has already seen, drawn plain
    /// where the playout goes on; `on_settle` gets the whole text, `shown` included.
    pub fn resumed(body: Element, shown: &str, on_settle: impl FnOnce(String) + 'static) -> Self {
        let live = LiveText::new(body, on_settle);
        live.0.borrow_mut().show(shown);
        live
    }

    /// More text arrived.
    pub fn push(&self, text: &str) {
        let mut live = self.0.borrow_mut();
        let now = live.now();
        live.playout.push(text, now);
        live.request_frame();
    }

    /// The stream ended: what is left plays out, then the block settles.
    pub fn finish(&self) {
        let mut live = self.0.borrow_mut();
        let now = live.now();
        live.playout.finish(now);
        live.request_frame();
    }
}

fn on_frame(live: &Rc<RefCell<Live>>, now: f64) {
    let settled_text = {
        let mut live = live.borrow_mut();
        live.frame_requested = false;
        // Frame timestamps can trail the push times taken from performance.now() slightly.
        let now = now.max(live.last_now);
        live.last_now = now;
        let frame = live.playout.tick(now);
        live.draw(&frame, now);
        live.resolve_until(now - RESOLVE_MS);
        if frame.done && live.resolving.is_empty() && !live.settled {
            live.settled = true;
            let text = format!("{}{}", live.shown, live.playout.text());
            draw_plain(&live.body, &text);
            Some((text, live.on_settle.take()))
        } else {
            if frame.next_wake_ms.is_some() || !live.resolving.is_empty() {
                live.request_frame();
            }
            None
        }
    };
    if let Some((text, Some(on_settle))) = settled_text {
        on_settle(text);
    }
}

impl Live {
    fn now(&mut self) -> f64 {
        let now = web_sys::window()
            .and_then(|w| w.performance())
            .map_or(self.last_now, |p| p.now());
        self.last_now = self.last_now.max(now);
        self.last_now
    }

    fn request_frame(&mut self) {
        if self.frame_requested || self.settled {
            return;
        }
        if let (Some(window), Some(frame)) = (web_sys::window(), self.frame.as_ref()) {
            self.frame_requested = window
                .request_animation_frame(frame.as_ref().unchecked_ref())
                .is_ok();
        }
    }

    /// Draws `text` as plain text, as the playout would once it resolved, and keeps it.
    fn show(&mut self, text: &str) {
        let document = document();
        for (index, line) in text.split('\n').enumerate() {
            if index > 0 {
                self.newline(&document);
            }
            if !line.is_empty() {
                self.append_text(&document, line);
            }
        }
        self.shown = text.to_string();
    }

    fn draw(&mut self, frame: &Frame, now: f64) {
        let document = document();
        let revealed = self
            .playout
            .text()
            .get(frame.revealed.clone())
            .unwrap_or_default()
            .to_string();
        for (index, line) in revealed.split('\n').enumerate() {
            if index > 0 {
                self.newline(&document);
            }
            if line.trim().is_empty() {
                if !line.is_empty() {
                    self.append_text(&document, line);
                }
            } else {
                self.reveal(&document, line, now);
            }
        }
        if !frame.caret {
            self.caret.remove();
        }
    }

    /// Shows the words a frame revealed in one word element, which resolves from a blur (R7).
    fn reveal(&mut self, document: &Document, text: &str, now: f64) {
        let span = element(document, "span");
        span.set_class_name("w");
        span.set_text_content(Some(text));
        self.insert(&span);
        self.resolving.push_back(Resolving {
            span,
            text: text.to_string(),
            since: now,
            paragraph_number: self.paragraph_number,
        });
    }

    /// Adds plain text at the paragraph's end, into the text node already there if there is one.
    fn append_text(&mut self, document: &Document, text: &str) {
        match self.last_text() {
            Some(last) => {
                let _ = last.append_data(text);
                self.trailing_newline = false;
            }
            None => self.insert(&document.create_text_node(text)),
        }
    }

    /// The text node at the paragraph's end (before the caret), if that is a text node.
    fn last_text(&self) -> Option<Text> {
        let last = match self.caret_here() {
            Some(caret) => caret.previous_sibling(),
            None => self.paragraph.last_child(),
        };
        last.and_then(|n| n.dyn_into::<Text>().ok())
    }

    fn insert(&mut self, node: &Node) {
        self.trailing_newline = false;
        let _ = self
            .paragraph
            .insert_before(node, self.caret_here().as_ref());
    }

    /// The caret, when it stands in the current paragraph.
    fn caret_here(&self) -> Option<Node> {
        let caret: &Node = &self.caret;
        (caret.parent_node().as_ref() == Some(&self.paragraph)).then(|| caret.clone())
    }

    fn newline(&mut self, document: &Document) {
        if !self.trailing_newline {
            self.append_text(document, "\n");
            self.trailing_newline = true;
            return;
        }
        // A blank line: drop the newline drawn at the paragraph's end and open a new paragraph.
        if let Some(text) = self.last_text() {
            let length = text.length();
            let _ = text.delete_data(length.saturating_sub(1), 1);
            if text.length() == 0 {
                text.remove();
            }
        }
        self.paragraph_number += 1;
        if self.paragraph_number.is_multiple_of(PARAGRAPHS_PER_GROUP) {
            self.group = group(document);
            let _ = self.body.append_child(&self.group);
        }
        let paragraph = element(document, "p");
        let _ = paragraph.append_child(&self.caret);
        let _ = self.group.append_child(&paragraph);
        self.paragraph = paragraph;
        self.trailing_newline = false;
    }

    /// Merges the word elements that appeared before `cutoff`, each with the text after it,
    /// into the text before it: in the live paragraph, which this frame changes anyway, one by
    /// one; in an earlier paragraph, all together once the last of them has resolved.
    fn resolve_until(&mut self, cutoff: f64) {
        while let Some(oldest) = self.resolving.front() {
            let paragraph = oldest.paragraph_number;
            let words = if paragraph == self.paragraph_number {
                1
            } else {
                self.resolving
                    .iter()
                    .take_while(|word| word.paragraph_number == paragraph)
                    .count()
            };
            // Words appear in time order, so the last of them is the last to resolve.
            if self.resolving[words - 1].since > cutoff {
                break;
            }
            for word in self.resolving.drain(..words) {
                merge(word);
            }
        }
    }
}

/// Merges a word element, and the text node after it if there is one, into the text before it.
fn merge(word: Resolving) {
    let Resolving { span, mut text, .. } = word;
    if let Some(after) = span.next_sibling().and_then(|n| n.dyn_into::<Text>().ok()) {
        text.push_str(&after.data());
        after.remove();
    }
    match span
        .previous_sibling()
        .and_then(|n| n.dyn_into::<Text>().ok())
    {
        Some(before) => {
            let _ = before.append_data(&text);
            span.remove();
        }
        None => {
            let node = document().create_text_node(&text);
            let _ = span.replace_with_with_node_1(&node);
        }
    }
}

fn document() -> Document {
    web_sys::window()
        .and_then(|w| w.document())
        .expect("the portal runs in a page with a document")
}

fn group(document: &Document) -> Element {
    let group = element(document, "div");
    group.set_class_name("paragraphs");
    group
}

fn element(document: &Document, tag: &str) -> Element {
    document
        .create_element(tag)
        .expect("creating a plain HTML element succeeds")
}
