//! Drawing a block's text as markdown: live, played out by core's [`Playout`] from
//! requestAnimationFrame and parsed frame by frame by core's [`StreamingMarkdown`], or settled,
//! drawn whole (web/src/markdown_view.rs).
//!
//! Each frame pushes the text the playout revealed into the markdown, keeps the blocks that did
//! not change, and draws the open block (usually the last) again. The words still resolving from
//! their blur are pieces drawn as far resolved as they are old, so a word resolves as one
//! element however many frames revealed its letters (R7), and a block is drawn once more,
//! resolved, when its last piece has resolved. When the reply settles, the blocks whose drawing
//! differs from [`draw_reply`](crate::markdown_view::draw_reply)'s are patched, so a settled
//! reply is the DOM a reloaded one is (R10) without drawing it all again.
//!
//! Live text is drawn on every other frame of the screen, and the page asks for none in between:
//! text at reading speed reads the same, and every frame costs style, layout, paint and a commit.
//! The words' blur and the caret's breath are set on the frames drawn (web/src/motion.rs).

use std::cell::RefCell;
use std::rc::{Rc, Weak};

use portal_core::markdown::{StreamingMarkdown, Update};
use portal_core::playout::{Frame, Playout, Reveals};
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use web_sys::Element;

use crate::markdown_view::{Drawer, Drawing, Node, caret_home, describe, group};
use crate::motion::{self, RESOLVE_MS};
use crate::page::{document, element, now_ms};

/// The shortest time between two drawn frames of live text: a frame that comes sooner (the first
/// after new text arrived) is let go.
const DRAW_INTERVAL_MS: f64 = 20.0;
/// After a drawn frame, the next is asked for this much later, so the page has no frame in
/// between: with a 60 Hz screen the next frame is then the one 33.3 ms after the drawn one, even
/// when the timer is 5 ms late; a browser that makes frames on demand (headless Chromium) draws
/// about 29 ms after.
const NEXT_FRAME_AFTER_MS: i32 = 28;

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
    /// The resolving words drawn, with when each was revealed and the step it is drawn in.
    words: Vec<(Element, f64, u8)>,
    caret: Element,
    frame: Option<Closure<dyn FnMut(f64)>>,
    /// Asks for the next frame, [`NEXT_FRAME_AFTER_MS`] after a drawn one.
    wake: Option<Closure<dyn FnMut()>>,
    /// A frame, or the timer that asks for one, is on its way.
    frame_requested: bool,
    last_now: f64,
    /// When the last frame was drawn (when its callback ran).
    drawn_at: f64,
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
        let _ = caret.set_attribute("style", &motion::breathing(now_ms()));
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
            words: Vec::new(),
            caret,
            frame: None,
            wake: None,
            frame_requested: false,
            last_now: 0.0,
            drawn_at: f64::NEG_INFINITY,
            settled: false,
            on_settle: Some(Box::new(on_settle)),
        }));
        let weak: Weak<RefCell<Live>> = Rc::downgrade(&live);
        let frame = Closure::<dyn FnMut(f64)>::new(move |now: f64| {
            if let Some(live) = weak.upgrade() {
                on_frame(&live, now);
            }
        });
        let weak: Weak<RefCell<Live>> = Rc::downgrade(&live);
        let wake = Closure::<dyn FnMut()>::new(move || {
            if let Some(live) = weak.upgrade() {
                let mut live = live.borrow_mut();
                live.frame_requested = false;
                live.request_frame();
            }
        });
        live.borrow_mut().frame = Some(frame);
        live.borrow_mut().wake = Some(wake);
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

    /// How much of the reply is drawn, in bytes.
    pub fn drawn_len(&self) -> usize {
        self.0.borrow().markdown.reply().len()
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
        // Measured when the callback runs: a browser may run a frame's callbacks well after the
        // time the frame is stamped with.
        let woke = now_ms();
        if woke - live.drawn_at < DRAW_INTERVAL_MS {
            live.request_frame();
            return;
        }
        live.drawn_at = woke;
        // Frame timestamps can trail the push times taken from performance.now() slightly.
        let now = now.max(live.last_now);
        live.last_now = now;
        let frame = live.playout.tick(now);
        live.draw(&frame, now);
        let resolving = !live.resolving.is_empty();
        if frame.done && !resolving {
            live.settle();
            Some((live.markdown.reply().to_string(), live.on_settle.take()))
        } else {
            // The caret breathes while more is coming, so frames go on while it is shown.
            if frame.next_wake_ms.is_some() || resolving || frame.caret {
                live.request_next_frame();
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

    /// Asks for the frame after the next one, by a timer, as the page draws every other frame.
    fn request_next_frame(&mut self) {
        if self.frame_requested || self.settled {
            return;
        }
        if let (Some(window), Some(wake)) = (web_sys::window(), self.wake.as_ref()) {
            self.frame_requested = window
                .set_timeout_with_callback_and_timeout_and_arguments_0(
                    wake.as_ref().unchecked_ref(),
                    NEXT_FRAME_AFTER_MS,
                )
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
        // Each word still resolving is drawn as far resolved as it is old; a block whose words
        // have all resolved was drawn again without them.
        self.words.retain_mut(|(word, revealed_ms, drawn_step)| {
            let step = motion::resolving_step(now - *revealed_ms);
            if step != *drawn_step {
                word.set_class_name(motion::resolving_class(step));
                *drawn_step = step;
            }
            step < motion::RESOLVE_STEPS
        });
        if frame.caret {
            let _ = self.caret.set_attribute("style", &motion::breathing(now));
        } else {
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
        let blocks = again.into_iter().chain(from..self.markdown.blocks().len());
        self.draw_blocks(blocks, true, now);
        self.place_caret();
    }

    /// The reply settled: every block drawn as a reloaded reply's is, and the caret gone.
    fn settle(&mut self) {
        self.settled = true;
        let now = self.now();
        self.draw_blocks(0..self.markdown.blocks().len(), false, now);
        self.caret.remove();
    }

    /// Draws the blocks at `indices` (with their words resolving if `resolving`), patching the
    /// drawings that changed, and removes drawn blocks the markdown no longer has.
    fn draw_blocks(&mut self, indices: impl Iterator<Item = usize>, resolving: bool, now: f64) {
        let document = document();
        let Live {
            markdown,
            reveals,
            body,
            groups,
            drawn,
            resolving: unresolved,
            words,
            ..
        } = self;
        let mut drawer = Drawer {
            document: &document,
            now,
            words,
        };
        let blocks = markdown.blocks();
        let drawing = Drawing {
            reply: markdown.reply(),
            resolving: resolving.then_some((&*reveals, now)),
        };
        for index in indices {
            let Some(block) = blocks.get(index) else {
                continue;
            };
            let described = describe(block, drawing);
            unresolved.retain(|&(i, _)| i != index);
            if let Some(until) = described.resolved_by {
                unresolved.push((index, until));
            }
            match drawn.get_mut(index) {
                Some((_, old)) if *old == described.node => {}
                Some((element, old)) => {
                    if let Some(fresh) = drawer.patch(element, old, &described.node) {
                        *element = fresh;
                    }
                    *old = described.node;
                }
                None => {
                    let fresh = drawer.render(&described.node);
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
        unresolved.retain(|&(index, _)| index < blocks.len());
    }

    /// Puts the caret after the last drawn text.
    fn place_caret(&mut self) {
        let home = self
            .drawn
            .last()
            .and_then(|(element, _)| element.dyn_ref::<Element>())
            .map_or(self.body.clone(), caret_home);
        let caret: &web_sys::Node = &self.caret;
        if caret.parent_node().as_ref() == Some(&home) && caret.next_sibling().is_none() {
            return;
        }
        let _ = home.append_child(&self.caret);
    }
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
