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
//! Live text is drawn on every other frame of the screen, or every fourth at reading speed, and
//! the page asks for none in between: every frame costs style, layout, paint and a commit. The
//! words' blur is set on the frames drawn (web/src/motion.rs). The caret breathes on the
//! compositor at reading speed and while the stream pauses (when no frame is drawn), and by a
//! breath written on each drawn frame when faster text moves it from item to item.

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
/// between: with a 60 Hz screen the next frame is the one 33.3 ms after the drawn one, even when
/// the timer is 5 ms late (a browser that makes frames on demand, as headless Chromium does,
/// draws about 29 ms after)...
const NEXT_FRAME_AFTER_MS: i32 = 28;
/// ...or, while text plays out at reading speed (below [`READING_SPEED_CPS`] characters a
/// second), the one 66.7 ms after, even when the timer is 6 ms late (at 62 ms, one drawn frame in
/// twenty or more slipped to the one after it): a drawn frame then shows about two words more,
/// each resolving word moves on one of its 75 ms steps a drawn frame, and every frame costs the
/// page style, layout, paint and a commit whatever it shows (docs/bench.md).
const NEXT_FRAME_AFTER_READING_MS: i32 = 60;
const READING_SPEED_CPS: f64 = 400.0;
/// Text that arrives this long before the next frame is due asks for it.
const DUE_EARLY_MS: i32 = 5;

/// A top-level block as drawn.
struct DrawnBlock {
    element: web_sys::Node,
    /// What it was drawn from.
    node: Node,
    /// It was drawn from a settled block with every word resolved: as a reloaded reply draws it.
    done: bool,
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
    /// The reply's markdown: text shown before the playout began (a reply followed again after a
    /// reload), then what the playout revealed.
    markdown: StreamingMarkdown,
    markdown_finished: bool,
    reveals: Reveals,
    body: Element,
    groups: Vec<Element>,
    /// Each drawn top-level block.
    drawn: Vec<DrawnBlock>,
    /// Drawn blocks with pieces still resolving, and when the last of them will have resolved.
    resolving: Vec<(usize, f64)>,
    /// The resolving words drawn, with when each was revealed and the step it is drawn in.
    words: Vec<(Element, f64, u8)>,
    caret: Element,
    /// The caret breathes by a CSS animation: at reading speed, where it seldom moves, and in a
    /// pause; faster text moves it from item to item, and each move would begin the animation
    /// again, so there its breath is written on each drawn frame.
    caret_resting: bool,
    frame: Option<Closure<dyn FnMut(f64)>>,
    /// Asks for the next frame, [`NEXT_FRAME_AFTER_MS`] after a drawn one.
    wake: Option<Closure<dyn FnMut()>>,
    /// The timer that will ask for the next frame, and from when text that arrives asks instead.
    wake_timer: Option<(i32, f64)>,
    /// A frame, or the timer that asks for one, is on its way.
    frame_requested: bool,
    last_now: f64,
    /// When the last frame was drawn (when its callback ran).
    drawn_at: f64,
    /// The last drawn frame's time, and the clusters visible after it.
    last_drawn: (f64, usize),
    /// Text plays out at reading speed, so frames are drawn further apart.
    reading_speed: bool,
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
            caret_resting: false,
            frame: None,
            wake: None,
            wake_timer: None,
            frame_requested: false,
            last_now: 0.0,
            drawn_at: f64::NEG_INFINITY,
            last_drawn: (0.0, 0),
            reading_speed: false,
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
                live.wake_timer = None;
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
        // Text that arrives when the next frame is nearly due asks for it, and the timer that
        // would have asked is let go: a timer's task costs the page as much as a small frame.
        if let Some((handle, due)) = live.wake_timer
            && now >= due
        {
            if let Some(window) = web_sys::window() {
                window.clear_timeout_with_handle(handle);
            }
            live.wake_timer = None;
            live.frame_requested = false;
        }
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

/// A short reply with every kind of block live text draws, played out by [`warm_up`].
const WARM_UP: &str = "# A\n\n**b** *c* `d` ~~e~~ [f](https://g.h)\n\n- i\n- [x] j\n\n1. k\n\n> l\n\n\
    ```m\nn\n```\n\n| o | p |\n|---|--:|\n| q | r |\n\n---\n\ns";
/// The clock [`warm_up`] plays [`WARM_UP`] out by moves on this much a frame, and gives up after
/// [`WARM_UP_FRAMES`].
const WARM_UP_FRAME_MS: f64 = 100.0;
const WARM_UP_FRAMES: usize = 200;

/// Plays [`WARM_UP`] out, frame by frame on a clock of its own, into an element that is not in
/// the page, and settles it. A browser compiles a module's functions the first time they are
/// called, so without this a session's first reply compiles the drawing code in its first frames
/// (5–10 ms each, docs/bench.md); the app calls it once, when the page is first idle.
pub fn warm_up() {
    let live = LiveText::new(element(&document(), "div"), |_| {});
    let mut live = live.0.borrow_mut();
    live.playout.push(WARM_UP, 0.0);
    live.playout.finish(0.0);
    let mut now = 0.0;
    for _ in 0..WARM_UP_FRAMES {
        now += WARM_UP_FRAME_MS;
        if live.play(now).done && live.resolving.is_empty() {
            break;
        }
    }
    live.settle();
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
        let frame = live.play(now);
        let resolving = !live.resolving.is_empty();
        if frame.done && !resolving {
            live.settle();
            Some((live.markdown.reply().to_string(), live.on_settle.take()))
        } else {
            // Frames go on while text waits to be revealed or words to resolve; in a pause the
            // caret rests, breathing without them, until text that arrives asks for one.
            if frame.next_wake_ms.is_some() || resolving {
                live.request_next_frame();
            } else if frame.caret {
                live.rest_caret(now);
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

    /// Asks for the frame after the next one (or the fourth from now at reading speed), by a
    /// timer, as the page draws every other frame (or every fourth).
    fn request_next_frame(&mut self) {
        if self.frame_requested || self.settled {
            return;
        }
        let after = if self.reading_speed {
            NEXT_FRAME_AFTER_READING_MS
        } else {
            NEXT_FRAME_AFTER_MS
        };
        if let (Some(window), Some(wake)) = (web_sys::window(), self.wake.as_ref())
            && let Ok(handle) = window.set_timeout_with_callback_and_timeout_and_arguments_0(
                wake.as_ref().unchecked_ref(),
                after,
            )
        {
            self.frame_requested = true;
            self.wake_timer = Some((handle, self.drawn_at + f64::from(after - DUE_EARLY_MS)));
        }
    }

    /// Plays out and draws the frame at `now`.
    fn play(&mut self, now: f64) -> Frame {
        let frame = self.playout.tick(now);
        self.draw(&frame, now);
        self.measure_speed(&frame, now);
        frame
    }

    /// Judges from a drawn frame whether text plays out at reading speed; a frame that revealed
    /// nothing leaves the judgement as it was.
    fn measure_speed(&mut self, frame: &Frame, now: f64) {
        let (then, clusters) = self.last_drawn;
        let revealed = frame.visible_clusters.saturating_sub(clusters);
        if revealed > 0 && now > then {
            let per_second = revealed as f64 * 1000.0 / (now - then);
            self.reading_speed = per_second < READING_SPEED_CPS;
        }
        self.last_drawn = (now, frame.visible_clusters);
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
        // Each word still resolving is drawn as far resolved as it is old; a block whose words
        // have all resolved is drawn again without them.
        self.words.retain_mut(|(word, revealed_ms, drawn_step)| {
            let step = motion::resolving_step(now - *revealed_ms);
            if step != *drawn_step {
                word.set_class_name(motion::resolving_class(step));
                *drawn_step = step;
            }
            step < motion::RESOLVE_STEPS
        });
        self.redraw(&update, now);
        if !frame.caret {
            self.caret.remove();
        } else if self.reading_speed {
            self.rest_caret(now);
        } else {
            if self.caret_resting {
                self.caret_resting = false;
                self.caret.set_class_name("caret");
            }
            let _ = self.caret.set_attribute("style", &motion::breathing(now));
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

    /// The reply settled: every block drawn as a reloaded reply's is, and the caret gone. Blocks
    /// already drawn so are left alone, so settling a long reply costs its last blocks only.
    fn settle(&mut self) {
        self.settled = true;
        let now = self.now();
        let undone: Vec<usize> = (0..self.markdown.blocks().len())
            .filter(|&index| !self.drawn.get(index).is_some_and(|block| block.done))
            .collect();
        self.draw_blocks(undone.into_iter(), false, now);
        self.caret.remove();
        crate::highlight::highlight_code(&self.body);
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
        let mut drawer = Drawer::new(&document, now, words);
        let blocks = markdown.blocks();
        let settled = markdown.settled();
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
            // Drawn with no word resolving, a description is what a reloaded reply draws.
            let done = index < settled && described.resolved_by.is_none();
            match drawn.get_mut(index) {
                Some(old) if old.node == described.node => old.done = done,
                Some(old) => {
                    if let Some(fresh) = drawer.patch(&old.element, &old.node, &described.node) {
                        old.element = fresh;
                    }
                    old.node = described.node;
                    old.done = done;
                }
                None => {
                    let element = drawer.render(&described.node);
                    let _ = group(&document, body, groups, index).append_child(&element);
                    drawn.push(DrawnBlock {
                        element,
                        node: described.node,
                        done,
                    });
                }
            }
        }
        for block in drawn.drain(blocks.len().min(drawn.len())..) {
            if let Some(parent) = block.element.parent_node() {
                let _ = parent.remove_child(&block.element);
            }
        }
        drawer.finish();
        unresolved.retain(|&(index, _)| index < blocks.len());
    }

    /// Lets the caret breathe by itself (style.css's `.caret.resting`), in its phase at `now`.
    fn rest_caret(&mut self, now: f64) {
        if self.caret_resting {
            return;
        }
        self.caret_resting = true;
        self.caret.set_class_name("caret resting");
        let _ = self.caret.set_attribute("style", &motion::resting(now));
    }

    /// Puts the caret after the last drawn text.
    fn place_caret(&mut self) {
        let home = self
            .drawn
            .last()
            .and_then(|block| block.element.dyn_ref::<Element>())
            .map_or(self.body.clone(), caret_home);
        let caret: &web_sys::Node = &self.caret;
        if caret.parent_node().as_ref() == Some(&home) && caret.next_sibling().is_none() {
            return;
        }
        let _ = home.append_child(&self.caret);
        // A moved element's animation begins again: a resting caret breathes on in its phase.
        if self.caret_resting {
            let _ = self
                .caret
                .set_attribute("style", &motion::resting(now_ms()));
        }
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
