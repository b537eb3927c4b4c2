//! A live reply drawn frame by frame on the caller's clock: played out by core's [`Pacing`] and
//! parsed by core's [`StreamingMarkdown`]. [`crate::LiveReply`] drives it by the page's frames
//! and timers; tests drive it by virtual times.
//!
//! Each drawn frame pushes the text the playout revealed into the markdown, keeps the blocks that
//! did not change, and patches the open block (usually the last). The words still resolving from
//! their blur are pieces drawn as far resolved as they are old, so a word resolves as one element
//! however many frames revealed its letters (R7), and a block is drawn once more, resolved, when
//! its last piece has resolved. When the reply settles, the blocks whose drawing differs from
//! [`draw_reply`](crate::draw_reply)'s are patched, so a settled reply is the DOM a reloaded one
//! is (R10) without drawing it all again.

use portal_core::markdown::{StreamingMarkdown, Update};
use portal_core::pacing::motion::{RESOLVE_MS, RESOLVE_STEPS, into_breath, resolving_step};
use portal_core::pacing::{After, Caret, Choice, Pacing, Wake};
use portal_core::playout::{Frame, Playout, Reveals};
use wasm_bindgen::JsCast;
use web_sys::Element;

#[cfg(feature = "diagrams")]
use crate::Diagrams;
#[cfg(feature = "diagrams")]
use crate::describe::Described;
use crate::describe::{Drawing, Node, describe};
#[cfg(feature = "diagrams")]
use crate::diagram;
use crate::page::{document, element, prefers_reduced_motion};
use crate::patch::{Drawer, caret_home, group, resolving_class};
use crate::{OnCode, Options};

/// What follows a screen's frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// Ask as core's [`Wake`] says (the frame was let go, coming too soon after a drawn one).
    Wake(Wake),
    /// Ask for a frame by a timer this long from now, and call [`LiveDrawing::woken`] when it
    /// fires.
    Timer { after_ms: u32 },
    /// Nothing until more text arrives: the caret rests.
    Wait,
    /// The reply settled, drawn as a reloaded reply is: its whole text.
    Settled(String),
}

/// A live reply's drawing into its body element, on the caller's clock.
pub struct LiveDrawing {
    pacing: Pacing,
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
    /// The caret breathes by a CSS animation (`.caret.resting`).
    caret_resting: bool,
    on_code: Option<OnCode>,
    #[cfg(feature = "diagrams")]
    diagrams: Option<Diagrams>,
}

impl std::fmt::Debug for LiveDrawing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveDrawing")
            .field("pacing", &self.pacing)
            .field("drawn_blocks", &self.drawn.len())
            .finish_non_exhaustive()
    }
}

/// A top-level block as drawn.
struct DrawnBlock {
    element: web_sys::Node,
    /// What it was drawn from.
    node: Node,
    /// It was drawn from a settled block with every word resolved: as a reloaded reply draws it.
    done: bool,
}

impl LiveDrawing {
    /// Starts drawing into `body`, after its caret (hidden from screen readers).
    pub fn new(body: Element, options: &Options) -> Self {
        let reduced_motion = options
            .reduced_motion
            .unwrap_or_else(prefers_reduced_motion);
        let caret = element(&document(), "span");
        caret.set_class_name("caret");
        let _ = caret.set_attribute("aria-hidden", "true");
        let _ = body.append_child(&caret);
        crate::copy::listen(&body);
        LiveDrawing {
            pacing: Pacing::new(Playout::default(), reduced_motion),
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
            on_code: options.on_code.clone(),
            #[cfg(feature = "diagrams")]
            diagrams: options.diagrams.clone(),
        }
    }

    /// Draws `text` at `now` resolved, as already seen, ahead of what the playout reveals.
    pub fn show(&mut self, text: &str, now: f64) {
        if text.is_empty() {
            return;
        }
        let update = self.markdown.push(text);
        // Revealed before any frame: resolved from the start.
        self.reveals.record(text.len(), f64::NEG_INFINITY);
        self.redraw(&update, now);
    }

    /// More text arrived at `now`.
    pub fn push(&mut self, text: &str, now: f64) -> Wake {
        self.pacing.push(text, now)
    }

    /// The stream ended at `now`: what is left plays out, then the reply settles.
    pub fn finish(&mut self, now: f64) -> Wake {
        self.pacing.finish(now)
    }

    /// The timer [`Next::Timer`] asked for fired.
    pub fn woken(&mut self) -> Wake {
        self.pacing.woken()
    }

    /// The reply was withdrawn: nothing more is drawn, and it never settles.
    pub fn stop(&mut self) {
        self.pacing.stop();
    }

    /// The reply as drawn so far.
    pub fn drawn(&self) -> &str {
        self.markdown.reply()
    }

    /// A screen's frame stamped `now`, whose callback runs at `woke`: drawn as core's pacing
    /// says, or let go.
    pub fn frame(&mut self, woke: f64, now: f64) -> Next {
        let draw = match self.pacing.frame(woke, now) {
            Choice::LetGo(wake) => return Next::Wake(wake),
            Choice::Draw(draw) => draw,
        };
        self.draw(&draw.frame, draw.now);
        self.draw_caret(draw.caret);
        match self.pacing.drawn(!self.resolving.is_empty()) {
            After::Settle => Next::Settled(self.settle(draw.now)),
            After::Timer { after_ms } => Next::Timer { after_ms },
            After::Pause { caret } => {
                self.draw_caret(caret);
                Next::Wait
            }
        }
    }

    /// The reader wants the rest at once (Stop while the last words play out): everything that
    /// arrived is drawn, and the reply settles at `now`. Returns the whole text.
    pub fn settle_whole(&mut self, now: f64) -> String {
        let playout = self.pacing.playout();
        let rest = playout.text()[playout.visible().len()..].to_string();
        self.markdown.push(&rest);
        if !self.markdown_finished {
            self.markdown_finished = true;
            self.markdown.finish();
        }
        self.settle(now)
    }

    /// Settles the reply at `now`: every block drawn as a reloaded reply's is, and the caret gone.
    /// Blocks already drawn so are left alone, so settling a long reply costs its last blocks
    /// only. Returns the whole text.
    pub fn settle(&mut self, now: f64) -> String {
        self.pacing.stop();
        let undone: Vec<usize> = (0..self.markdown.blocks().len())
            .filter(|&index| !self.drawn.get(index).is_some_and(|block| block.done))
            .collect();
        self.draw_blocks(&undone, false, now);
        self.caret.remove();
        if let Some(on_code) = &self.on_code {
            on_code(&self.body);
        }
        self.markdown.reply().to_string()
    }

    fn draw(&mut self, frame: &Frame, now: f64) {
        let revealed = self
            .pacing
            .playout()
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
            let step = resolving_step(now - *revealed_ms);
            if step != *drawn_step {
                word.set_class_name(resolving_class(step));
                *drawn_step = step;
            }
            step < RESOLVE_STEPS
        });
        self.redraw(&update, now);
    }

    fn draw_caret(&mut self, caret: Caret) {
        match caret {
            Caret::Gone => self.caret.remove(),
            Caret::Still => {}
            Caret::Breathing(breath) => {
                if self.caret_resting {
                    self.caret_resting = false;
                    self.caret.set_class_name("caret");
                }
                let _ = self
                    .caret
                    .set_attribute("style", &format!("--breath:{breath}"));
            }
            Caret::Resting { into_breath_ms } => {
                if !self.caret_resting {
                    self.caret_resting = true;
                    self.caret.set_class_name("caret resting");
                    self.rest_caret_at(into_breath_ms);
                }
            }
        }
    }

    /// Begins the resting caret's animation `into_breath_ms` into a breath.
    fn rest_caret_at(&self, into_breath_ms: u64) {
        let _ = self
            .caret
            .set_attribute("style", &format!("animation-delay:-{into_breath_ms}ms"));
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
        again.extend(from..self.markdown.blocks().len());
        self.draw_blocks(&again, true, now);
        self.place_caret(now);
    }

    /// Draws the blocks at `indices` (with their words resolving if `resolving` and motion is not
    /// reduced), patching the drawings that changed, and removes drawn blocks the markdown no
    /// longer has. A settled block of a diagram language is drawn as its container, and handed
    /// to the host once the container is in the page. A slice, not an iterator, so the function
    /// is compiled once for its two callers (1.8 KB gzipped less in the package).
    fn draw_blocks(&mut self, indices: &[usize], resolving: bool, now: f64) {
        let document = document();
        let resolving = resolving && self.pacing.words_resolve();
        let LiveDrawing {
            markdown,
            reveals,
            body,
            groups,
            drawn,
            resolving: unresolved,
            words,
            #[cfg(feature = "diagrams")]
            diagrams,
            ..
        } = self;
        #[cfg(feature = "diagrams")]
        let mut containers = Vec::new();
        let mut drawer = Drawer::new(&document, now, words);
        let blocks = markdown.blocks();
        let settled = markdown.settled();
        let drawing = Drawing {
            reply: markdown.reply(),
            resolving: resolving.then_some((&*reveals, now)),
        };
        for &index in indices {
            let Some(block) = blocks.get(index) else {
                continue;
            };
            #[cfg(feature = "diagrams")]
            let diagram = (index < settled)
                .then(|| diagram::find(block, diagrams.as_ref()))
                .flatten();
            #[cfg(feature = "diagrams")]
            let described = match &diagram {
                Some(diagram) => Described {
                    node: diagram.node(),
                    resolved_by: None,
                },
                None => describe(block, drawing),
            };
            #[cfg(not(feature = "diagrams"))]
            let described = describe(block, drawing);
            unresolved.retain(|&(i, _)| i != index);
            if let Some(until) = described.resolved_by {
                unresolved.push((index, until));
            }
            // Drawn with no word resolving, a description is what a reloaded reply draws.
            let done = index < settled && described.resolved_by.is_none();
            // The block's element before it is drawn, to tell a container drawn anew.
            #[cfg(feature = "diagrams")]
            let was = diagram
                .as_ref()
                .and_then(|_| drawn.get(index))
                .map(|b| b.element.clone());
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
            // A container is empty when drawn (a different description replaces, never patches,
            // it) and left alone while it stays one: it is handed over when it is new.
            #[cfg(feature = "diagrams")]
            if let (Some(diagram), Some(block)) = (diagram, drawn.get(index))
                && was.as_ref() != Some(&block.element)
            {
                containers.push((diagram, block.element.clone()));
            }
        }
        for block in drawn.drain(blocks.len().min(drawn.len())..) {
            if let Some(parent) = block.element.parent_node() {
                let _ = parent.remove_child(&block.element);
            }
        }
        drawer.finish();
        unresolved.retain(|&(index, _)| index < blocks.len());
        #[cfg(feature = "diagrams")]
        for (diagram, container) in containers {
            diagram.draw(container.unchecked_ref());
        }
    }

    /// Puts the caret after the last drawn text.
    fn place_caret(&mut self, now: f64) {
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
            self.rest_caret_at(into_breath(now));
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
