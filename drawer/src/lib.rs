//! Portal's drawer: replies drawn into the page with DOM calls and text nodes only (nothing a
//! reply holds is ever read as HTML), by the web app and by the package alike.
//!
//! [`draw_reply`] draws a settled or reloaded reply whole. [`LiveReply`] draws one as it streams,
//! played out and paced by core (`portal_core::pacing`) on the page's frames: markdown blocks
//! patched in place, words resolving from their blur (R7), the caret breathing (R8), settling to
//! the DOM `draw_reply` draws (R10), and under reduced motion no blur or breathing (R14). Its
//! DOM stays stable for screen readers (blocks are patched, never drawn again, and the caret is
//! hidden from them); the host announces the reply once, with the text `on_settle` gets.
//! [`LiveDrawing`] is the same drawing on the caller's clock, for tests and for hosts that
//! schedule frames themselves.

mod copy;
mod describe;
#[cfg(feature = "diagrams")]
mod diagram;
mod live;
#[cfg(feature = "maths")]
mod mathml;
mod maths;
pub mod page;
mod patch;
mod reply;

use std::rc::Rc;

#[cfg(feature = "diagrams")]
use wasm_bindgen::JsCast;
use web_sys::Element;

#[cfg(feature = "diagrams")]
pub use diagram::{Diagrams, DrawDiagram};
pub use live::{LiveDrawing, Next};
pub use reply::LiveReply;

use describe::{Drawing, describe};
use page::{document, element};
use patch::{Drawer, group};

/// How replies are drawn.
#[derive(Default, Clone)]
pub struct Options {
    /// Whether motion is reduced (no blur, no breathing: R14); `None` asks the page
    /// (`prefers-reduced-motion`).
    pub reduced_motion: Option<bool>,
    /// Called with a reply's body once it is drawn settled, for a host that colours its code
    /// blocks (the web app passes its highlighter). It is called while the reply is drawn, so it
    /// must not call back into the reply.
    pub on_code: Option<OnCode>,
    /// Fenced code blocks the host draws as diagrams, once each has settled (the `diagrams`
    /// feature).
    #[cfg(feature = "diagrams")]
    pub diagrams: Option<Diagrams>,
}

/// What [`Options::on_code`] calls with a settled reply's body.
pub type OnCode = Rc<dyn Fn(&Element)>;

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("reduced_motion", &self.reduced_motion)
            .field("on_code", &self.on_code.is_some())
            .finish_non_exhaustive()
    }
}

/// Draws a whole reply resolved into `body`, replacing what was there: a settled or reloaded
/// reply, and a live one once it settled, are the same DOM (R10).
pub fn draw_reply(body: &Element, reply: &str, options: &Options) {
    body.set_text_content(None);
    copy::listen(body);
    let document = document();
    let drawing = Drawing {
        reply,
        resolving: None,
    };
    let mut groups = Vec::new();
    let mut words = Vec::new();
    let mut drawer = Drawer::new(&document, 0.0, &mut words);
    for (index, block) in portal_core::markdown::parse(reply).iter().enumerate() {
        let group = group(&document, body, &mut groups, index);
        #[cfg(feature = "diagrams")]
        if let Some(diagram) = diagram::find(block, options.diagrams.as_ref()) {
            let container = drawer.render(&diagram.node());
            let _ = group.append_child(&container);
            diagram.draw(container.unchecked_ref());
            continue;
        }
        let described = describe(block, drawing);
        let _ = group.append_child(&drawer.render(&described.node));
    }
    if let Some(on_code) = &options.on_code {
        on_code(body);
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
/// (5–10 ms each, docs/bench.md); call it once, when the page is first idle.
pub fn warm_up() {
    let options = Options {
        reduced_motion: Some(false),
        ..Options::default()
    };
    let mut live = LiveDrawing::new(element(&document(), "div"), &options);
    let _ = live.push(WARM_UP, 0.0);
    let _ = live.finish(0.0);
    let mut now = 0.0;
    for _ in 0..WARM_UP_FRAMES {
        now += WARM_UP_FRAME_MS;
        if let Next::Settled(_) = live.frame(now, now) {
            return;
        }
    }
    live.settle(now);
}
