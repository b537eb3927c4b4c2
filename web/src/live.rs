//! Drawing a block's text as markdown: live, played out by core's [`Playout`] from
//! requestAnimationFrame and parsed frame by frame by core's [`StreamingMarkdown`], or settled,
//! drawn whole (web/src/markdown_view.rs).
//!
//! Each frame pushes the text the playout revealed into the markdown, keeps the blocks that did
//! not change, and draws the open block (usually the last) again. The words still resolving from
//! their blur are pieces whose animation starts as far along as they are old, so a word resolves
//! as one element however many frames revealed its letters (R7), and a block is drawn once more,
//! resolved, when its last piece has resolved. A settled reply is drawn whole with
//! [`draw_reply`], as a reloaded one is (R10).
//!
//! The browser lays out every child of a changed element again (from its cache), so the live
//! blocks are grouped in `<div class="blocks">` elements of [`BLOCKS_PER_GROUP`] (style.css
//! keeps the margins as without them): otherwise a frame would cost more the longer the reply.

use std::cell::RefCell;
use std::rc::{Rc, Weak};

use portal_core::markdown::{StreamingMarkdown, Update};
use portal_core::playout::{Frame, Playout, Reveals};
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use web_sys::{Document, Element};

use crate::markdown_view::{
    Drawing, Node, RESOLVE_MS, caret_home, describe, draw_reply, patch, render,
};
use crate::page::{document, element, now_ms};

/// How many top-level blocks of live text share a group element.
const BLOCKS_PER_GROUP: usize = 32;

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
    /// The reply's markdown: text shown before the playout began (a reply followed again after a
    /// reload), then what the playout revealed.
    markdown: StreamingMarkdown,
    markdown_finished: bool,
    reveals: Reveals,
    body: Element,
    groups: Vec<Element>,
    /// Each drawn top-level block: its element and what it was drawn from.
    drawn: Vec<(web_sys::Node, Node)>,
    /// Drawn blocks with pieces still resolving, and when the last of them will have resolved.
    resolving: Vec<(usize, f64)>,
    caret: Element,
    frame: Option<Closure<dyn FnMut(f64)>>,
    frame_requested: bool,
    last_now: f64,
    settled: bool,
    on_settle: Option<Box<dyn FnOnce(String)>>,
}

impl LiveText {
    /// Starts drawing into `body`; `on_settle` gets the whole text once it is settled.
    pub fn new(body: Element, on_settle: impl FnOnce(String) + 'static) -> Self {
        let document = document();
        let caret = element(&document, "span");
        caret.set_class_name("caret");
        let _ = caret.set_attribute("aria-hidden", "true");
        keep_phase(&caret, now_ms());
        let _ = body.append_child(&caret);
        let live = Rc::new(RefCell::new(Live {
            playout: Playout::default(),
            markdown: StreamingMarkdown::new(),
            markdown_finished: false,
            reveals: Reveals::new(RESOLVE_MS),
            body,
            groups: Vec::new(),
            drawn: Vec::new(),
            resolving: Vec::new(),
            caret,
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

    /// The block was withdrawn (rule C2): nothing more is played out or drawn, and it never
    /// settles.
    pub fn stop(&self) {
        let mut live = self.0.borrow_mut();
        live.settled = true;
        live.on_settle = None;
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
        if live.settled {
            return;
        }
        // Frame timestamps can trail the push times taken from performance.now() slightly.
        let now = now.max(live.last_now);
        live.last_now = now;
        let frame = live.playout.tick(now);
        live.draw(&frame, now);
        let resolving = !live.resolving.is_empty();
        if frame.done && !resolving {
            live.settled = true;
            let text = live.markdown.reply().to_string();
            draw_reply(&live.body, &text);
            Some((text, live.on_settle.take()))
        } else {
            if frame.next_wake_ms.is_some() || resolving {
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
        self.last_now = self.last_now.max(now_ms());
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

    /// Draws `text` resolved, as already seen, ahead of what the playout reveals.
    fn show(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        let update = self.markdown.push(text);
        // Revealed before any frame: resolved from the start.
        self.reveals.record(text.len(), f64::NEG_INFINITY);
        let now = self.now();
        self.redraw(&update, now);
    }

    fn draw(&mut self, frame: &Frame, now: f64) {
        let revealed = self
            .playout
            .text()
            .get(frame.revealed.clone())
            .unwrap_or_default();
        let mut update = None;
        if !revealed.is_empty() {
            update = Some(self.markdown.push(revealed));
            self.reveals.record(self.markdown.reply().len(), now);
        }
        if frame.done && !self.markdown_finished {
            self.markdown_finished = true;
            let finished = self.markdown.finish();
            update = Some(match update {
                Some(pushed) => both(pushed, finished),
                None => finished,
            });
        }
        let update = update.unwrap_or_else(|| Update {
            unchanged: self.drawn.len(),
            redrawn: Vec::new(),
            settled: self.markdown.settled(),
        });
        self.redraw(&update, now);
        if !frame.caret {
            self.caret.remove();
        }
    }

    /// Draws the blocks `update` says changed, and the blocks whose pieces have all resolved, by
    /// patching what was drawn of them, then puts the caret after the last text.
    fn redraw(&mut self, update: &Update, now: f64) {
        let from = update.unchanged.min(self.drawn.len());
        let mut again: Vec<usize> = update
            .redrawn
            .iter()
            .copied()
            .filter(|&i| i < from)
            .collect();
        again.extend(
            self.resolving
                .iter()
                .filter(|&&(index, until)| until <= now && index < from)
                .map(|&(index, _)| index),
        );
        if again.is_empty() && from == self.drawn.len() && from == self.markdown.blocks().len() {
            return;
        }
        let document = document();
        let Live {
            markdown,
            reveals,
            body,
            groups,
            drawn,
            resolving,
            ..
        } = self;
        let blocks = markdown.blocks();
        let drawing = Drawing {
            reply: markdown.reply(),
            resolving: Some((&*reveals, now)),
        };
        for index in again.into_iter().chain(from..blocks.len()) {
            let Some(block) = blocks.get(index) else {
                continue;
            };
            let described = describe(block, drawing);
            resolving.retain(|&(i, _)| i != index);
            if let Some(until) = described.resolved_by {
                resolving.push((index, until));
            }
            match drawn.get_mut(index) {
                Some((element, old)) => {
                    if let Some(fresh) = patch(&document, element, old, &described.node, now) {
                        *element = fresh;
                    }
                    *old = described.node;
                }
                None => {
                    let fresh = render(&document, &described.node, now);
                    let _ = group(&document, body, groups, index).append_child(&fresh);
                    drawn.push((fresh, described.node));
                }
            }
        }
        for (element, _) in drawn.drain(blocks.len().min(drawn.len())..) {
            if let Some(parent) = element.parent_node() {
                let _ = parent.remove_child(&element);
            }
        }
        resolving.retain(|&(index, _)| index < blocks.len());
        self.place_caret(now);
    }

    /// Puts the caret after the last drawn text, keeping its breathing's phase (R8).
    fn place_caret(&mut self, now: f64) {
        let home = self
            .drawn
            .last()
            .and_then(|(element, _)| element.dyn_ref::<Element>())
            .map_or(self.body.clone(), caret_home);
        let caret: &web_sys::Node = &self.caret;
        if caret.parent_node().as_ref() == Some(&home) && caret.next_sibling().is_none() {
            return;
        }
        keep_phase(&self.caret, now);
        let _ = home.append_child(&self.caret);
    }
}

/// The group element block `index` belongs in, made when it is the first of its group.
fn group(document: &Document, body: &Element, groups: &mut Vec<Element>, index: usize) -> Element {
    let number = index / BLOCKS_PER_GROUP;
    while groups.len() <= number {
        let group = element(document, "div");
        group.set_class_name("blocks");
        let _ = body.append_child(&group);
        groups.push(group);
    }
    groups[number].clone()
}

/// Starts the caret's breathing at the page's time origin whenever it is (re)inserted, so moving
/// it does not restart the animation.
fn keep_phase(caret: &Element, now: f64) {
    let _ = caret.set_attribute(
        "style",
        &format!("animation-delay: -{}ms", now.max(0.0) as u64),
    );
}

/// One update for a frame that both revealed text and finished the markdown.
fn both(pushed: Update, finished: Update) -> Update {
    let mut redrawn = pushed.redrawn;
    redrawn.extend(finished.redrawn);
    Update {
        unchanged: pushed.unchanged.min(finished.unchanged),
        redrawn,
        settled: finished.settled,
    }
}
