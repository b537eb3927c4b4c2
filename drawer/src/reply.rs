//! A live reply on the page's frames: [`LiveDrawing`] driven by requestAnimationFrame and the
//! timers core's pacing asks for.

use std::cell::RefCell;
use std::rc::{Rc, Weak};

use portal_core::pacing::Wake;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use web_sys::Element;

use crate::Options;
use crate::live::{LiveDrawing, Next};
use crate::page::now_ms;

/// A live reply: feed it with [`LiveReply::push`] and [`LiveReply::finish`]; it draws itself into
/// its body element and settles there. Clones share one reply.
#[derive(Clone)]
pub struct LiveReply(Rc<RefCell<Inner>>);

impl std::fmt::Debug for LiveReply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LiveReply")
    }
}

struct Inner {
    drawing: LiveDrawing,
    on_settle: Option<Box<dyn FnOnce(String)>>,
    frame: Option<Closure<dyn FnMut(f64)>>,
    /// Asks for a frame when the timer core's pacing asked for fires.
    wake: Option<Closure<dyn FnMut()>>,
    /// The timer set, to clear if text that arrives asks for the frame first.
    timer: Option<i32>,
    /// The animation frame asked for, to cancel if the reply is stopped or let go of first.
    asked_frame: Option<i32>,
    /// The drawn text's length in bytes when last measured, and in UTF-16 code units.
    drawn_utf16: (usize, usize),
}

impl LiveReply {
    /// Starts drawing into `body`; `on_settle` gets the whole text once it is settled.
    pub fn new(body: Element, options: Options, on_settle: impl FnOnce(String) + 'static) -> Self {
        let inner = Rc::new(RefCell::new(Inner {
            drawing: LiveDrawing::new(body, &options),
            on_settle: Some(Box::new(on_settle)),
            frame: None,
            wake: None,
            timer: None,
            asked_frame: None,
            drawn_utf16: (0, 0),
        }));
        let weak: Weak<RefCell<Inner>> = Rc::downgrade(&inner);
        let frame = Closure::<dyn FnMut(f64)>::new(move |now: f64| {
            if let Some(inner) = weak.upgrade() {
                on_frame(&inner, now);
            }
        });
        let weak: Weak<RefCell<Inner>> = Rc::downgrade(&inner);
        let wake = Closure::<dyn FnMut()>::new(move || {
            if let Some(inner) = weak.upgrade() {
                let mut inner = inner.borrow_mut();
                inner.timer = None;
                let wake = inner.drawing.woken();
                inner.ask(wake);
            }
        });
        inner.borrow_mut().frame = Some(frame);
        inner.borrow_mut().wake = Some(wake);
        LiveReply(inner)
    }

    /// Starts drawing into `body` after `shown`, text the reader has already seen, drawn plain
    /// where the playout goes on; `on_settle` gets the whole text, `shown` included.
    pub fn resumed(
        body: Element,
        shown: &str,
        options: Options,
        on_settle: impl FnOnce(String) + 'static,
    ) -> Self {
        let reply = LiveReply::new(body, options, on_settle);
        reply.0.borrow_mut().drawing.show(shown, now_ms());
        reply
    }

    /// More text arrived.
    pub fn push(&self, text: &str) {
        let mut inner = self.0.borrow_mut();
        let wake = inner.drawing.push(text, now_ms());
        inner.ask(wake);
    }

    /// The stream ended: what is left plays out, then the reply settles.
    pub fn finish(&self) {
        let mut inner = self.0.borrow_mut();
        let wake = inner.drawing.finish(now_ms());
        inner.ask(wake);
    }

    /// The reply was withdrawn or cancelled: nothing more is played out or drawn, and it never
    /// settles.
    pub fn stop(&self) {
        let mut inner = self.0.borrow_mut();
        inner.drawing.stop();
        inner.on_settle = None;
        inner.cancel_asks();
    }

    /// The reader wants the rest at once, once the stream has ended: everything that arrived is
    /// drawn whole and the reply settles now, unless it already settled or was stopped.
    pub fn settle_now(&self) {
        let settled = {
            let mut inner = self.0.borrow_mut();
            let Some(on_settle) = inner.on_settle.take() else {
                return;
            };
            inner.cancel_asks();
            (on_settle, inner.drawing.settle_whole(now_ms()))
        };
        // Called once the reply is let go of, as it may drop the reply.
        let (on_settle, text) = settled;
        on_settle(text);
    }

    /// How much of the reply is drawn, in UTF-16 code units (as JavaScript measures a string):
    /// only what was drawn since the last call is counted.
    pub fn drawn_utf16_len(&self) -> usize {
        let mut inner = self.0.borrow_mut();
        let Inner {
            drawing,
            drawn_utf16,
            ..
        } = &mut *inner;
        let drawn = drawing.drawn();
        let (from, counted) = if drawn.len() >= drawn_utf16.0 {
            *drawn_utf16
        } else {
            (0, 0)
        };
        if let Some(more) = drawn.get(from..) {
            *drawn_utf16 = (drawn.len(), counted + more.encode_utf16().count());
        }
        drawn_utf16.1
    }
}

fn on_frame(inner: &Rc<RefCell<Inner>>, now: f64) {
    let settled = {
        let mut inner = inner.borrow_mut();
        inner.asked_frame = None;
        // Measured when the callback runs: a browser may run a frame's callbacks well after the
        // time the frame is stamped with.
        match inner.drawing.frame(now_ms(), now) {
            Next::Wake(wake) => {
                inner.ask(wake);
                None
            }
            Next::Timer { after_ms } => {
                inner.set_timer(after_ms);
                None
            }
            Next::Wait => None,
            Next::Settled(text) => inner.on_settle.take().map(|on_settle| (on_settle, text)),
        }
    };
    // Called once the reply is let go of, as it may drop the reply.
    if let Some((on_settle, text)) = settled {
        on_settle(text);
    }
}

impl Inner {
    fn ask(&mut self, wake: Wake) {
        if wake != Wake::Frame {
            return;
        }
        self.clear_timer();
        if let (Some(window), Some(frame)) = (web_sys::window(), self.frame.as_ref()) {
            self.asked_frame = window
                .request_animation_frame(frame.as_ref().unchecked_ref())
                .ok();
        }
    }

    fn set_timer(&mut self, after_ms: u32) {
        let after = i32::try_from(after_ms).unwrap_or(i32::MAX);
        if let (Some(window), Some(wake)) = (web_sys::window(), self.wake.as_ref()) {
            self.timer = window
                .set_timeout_with_callback_and_timeout_and_arguments_0(
                    wake.as_ref().unchecked_ref(),
                    after,
                )
                .ok();
        }
    }

    /// Cancels the frame and the timer asked for, so neither calls a closure let go of.
    fn cancel_asks(&mut self) {
        if let (Some(handle), Some(window)) = (self.asked_frame.take(), web_sys::window()) {
            let _ = window.cancel_animation_frame(handle);
        }
        self.clear_timer();
    }

    fn clear_timer(&mut self) {
        if let (Some(handle), Some(window)) = (self.timer.take(), web_sys::window()) {
            window.clear_timeout_with_handle(handle);
        }
    }
}

/// A reply let go of (its host dropped it, or a package user freed it) while a frame or a timer
/// was asked for cancels them: the browser would otherwise call closures already dropped.
impl Drop for Inner {
    fn drop(&mut self) {
        self.cancel_asks();
    }
}
