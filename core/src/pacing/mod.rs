//! Pacing: when a live reply is drawn, and how its words and caret move on the frames that are
//! (rules R7, R8, R14).
//!
//! A sans-IO state machine over a [`Playout`]. A drawer feeds it text ([`Pacing::push`],
//! [`Pacing::finish`]) and the screen's frames ([`Pacing::frame`]), and does what it answers: ask
//! for a frame or set a timer ([`Wake`], [`After`]), draw a frame ([`Draw`]), let the caret rest,
//! settle. Nothing here reads a clock: every time is an argument in milliseconds.
//!
//! Live text is drawn on every other frame of the screen, or every fourth at reading speed, and
//! the page asks for none in between: every frame costs style, layout, paint and a commit. The
//! caret breathes by an animation the compositor runs at reading speed and while the stream
//! pauses (when no frame is drawn), and by a breath written on each drawn frame when faster text
//! moves it from item to item. Under reduced motion words are drawn resolved at once and the caret
//! stands still (R14).

pub mod motion;

use crate::playout::{Frame, Playout};

/// The shortest time between two drawn frames: a frame that comes sooner (the first after new
/// text arrived) is let go.
pub const DRAW_INTERVAL_MS: f64 = 20.0;
/// After a drawn frame, the next is asked for this much later, so the page has no frame in
/// between: with a 60 Hz screen the next frame is the one 33.3 ms after the drawn one, even when
/// the timer is 5 ms late (a browser that makes frames on demand, as headless Chromium does,
/// draws about 29 ms after)...
pub const NEXT_FRAME_AFTER_MS: u32 = 28;
/// ...or, while text plays out at reading speed (below [`READING_SPEED_CPS`] characters a
/// second), the one 66.7 ms after, even when the timer is 6 ms late (at 62 ms, one drawn frame in
/// twenty or more slipped to the one after it): a drawn frame then shows about two words more,
/// each resolving word moves on one of its 75 ms steps a drawn frame, and every frame costs the
/// page style, layout, paint and a commit whatever it shows (docs/bench.md).
pub const NEXT_FRAME_AFTER_READING_MS: u32 = 60;
/// Below this many characters a second, text plays out at reading speed.
pub const READING_SPEED_CPS: f64 = 400.0;
/// Text that arrives this long before the next frame is due asks for it.
pub const DUE_EARLY_MS: u32 = 5;

/// What to ask the page for after text arrived or a timer fired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// Nothing: a frame, or the timer that asks for one, is on its way, or the reply is over.
    Nothing,
    /// The screen's next frame. A timer [`After::Timer`] set is cleared first: text that arrives
    /// when the next frame is nearly due asks for it, as a timer's task costs the page as much as
    /// a small frame.
    Frame,
}

/// What a screen's frame is for.
#[derive(Debug, Clone, PartialEq)]
pub enum Choice {
    /// It comes too soon after the last drawn frame (or the reply is over): it is let go, and the
    /// page asks as [`Wake`] says.
    LetGo(Wake),
    /// It is drawn; then [`Pacing::drawn`] says what follows.
    Draw(Draw),
}

/// A frame to draw.
#[derive(Debug, Clone, PartialEq)]
pub struct Draw {
    /// What the playout shows on it.
    pub frame: Frame,
    /// Its time, never before a time already seen.
    pub now: f64,
    /// How the caret is drawn on it.
    pub caret: Caret,
}

/// How the caret is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caret {
    /// No caret: everything is shown.
    Gone,
    /// Shown, still: motion is reduced (R14).
    Still,
    /// Breathing, written on this frame: how far into its swell, 0 to 100 ([`motion::breath`]).
    Breathing(u32),
    /// Resting: breathing by an animation begun `into_breath_ms` ago ([`motion::into_breath`]),
    /// which the page runs without frames.
    Resting { into_breath_ms: u64 },
}

/// What follows a drawn frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum After {
    /// Everything is shown and nothing resolves: the reply settles (drawn as a reloaded reply
    /// is), and nothing more is drawn.
    Settle,
    /// Text waits or words resolve: ask for a frame by a timer this long from now, then call
    /// [`Pacing::woken`].
    Timer { after_ms: u32 },
    /// Nothing to draw until text arrives: the caret is drawn as said, with no frame asked for.
    Pause { caret: Caret },
}

/// A live reply's pacing: its playout, and when and how its frames are drawn.
#[derive(Debug, Clone)]
pub struct Pacing {
    playout: Playout,
    reduced_motion: bool,
    /// The latest time seen, from pushes and frames alike.
    clock: f64,
    asked: Asked,
    /// When the last frame was drawn (when its callback ran).
    drawn_at: f64,
    /// The last drawn frame's time, and the clusters visible after it.
    last_drawn: (f64, usize),
    /// The last drawn frame showed everything, and whether more waits to be revealed.
    last_frame: Option<(bool, bool)>,
    /// Text plays out at reading speed, so frames are drawn further apart.
    reading_speed: bool,
    /// The reply settled or was stopped: nothing more is drawn.
    over: bool,
}

/// What the page has been asked for.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Asked {
    Nothing,
    Frame,
    /// A timer, and from when text that arrives asks for a frame instead.
    Timer {
        due: f64,
    },
}

impl Pacing {
    /// The pacing of a reply played out by `playout`; under `reduced_motion` nothing blurs or
    /// breathes (R14).
    pub fn new(playout: Playout, reduced_motion: bool) -> Self {
        Pacing {
            playout,
            reduced_motion,
            clock: 0.0,
            asked: Asked::Nothing,
            drawn_at: f64::NEG_INFINITY,
            last_drawn: (0.0, 0),
            last_frame: None,
            reading_speed: false,
            over: false,
        }
    }

    /// The playout: the text received, and what frames reveal of it.
    pub fn playout(&self) -> &Playout {
        &self.playout
    }

    /// Whether newly revealed words resolve from a blur (R7), or are drawn resolved at once
    /// (R14).
    pub fn words_resolve(&self) -> bool {
        !self.reduced_motion
    }

    /// Whether text plays out at reading speed, as the drawn frames judge it.
    pub fn reading_speed(&self) -> bool {
        self.reading_speed
    }

    /// The reply settled or was stopped.
    pub fn is_over(&self) -> bool {
        self.over
    }

    /// A chunk of the reply arrived at `now`.
    pub fn push(&mut self, text: &str, now: f64) -> Wake {
        let now = self.time(now);
        self.playout.push(text, now);
        if let Asked::Timer { due } = self.asked
            && now >= due
        {
            self.asked = Asked::Nothing;
        }
        self.ask_frame()
    }

    /// The stream ended at `now`: what is left plays out, then the reply settles.
    pub fn finish(&mut self, now: f64) -> Wake {
        let now = self.time(now);
        self.playout.finish(now);
        self.ask_frame()
    }

    /// The timer [`After::Timer`] asked for fired.
    pub fn woken(&mut self) -> Wake {
        if matches!(self.asked, Asked::Timer { .. }) {
            self.asked = Asked::Nothing;
        }
        self.ask_frame()
    }

    /// The reply was withdrawn: nothing more is drawn, and it never settles.
    pub fn stop(&mut self) {
        self.over = true;
        self.asked = Asked::Nothing;
    }

    /// A screen's frame stamped `now`, whose callback runs at `woke` (a browser may run a frame's
    /// callbacks well after the time the frame is stamped with): drawn, or let go when it comes
    /// within [`DRAW_INTERVAL_MS`] of the last drawn one.
    pub fn frame(&mut self, woke: f64, now: f64) -> Choice {
        if matches!(self.asked, Asked::Frame) {
            self.asked = Asked::Nothing;
        }
        if self.over {
            return Choice::LetGo(Wake::Nothing);
        }
        if woke - self.drawn_at < DRAW_INTERVAL_MS {
            return Choice::LetGo(self.ask_frame());
        }
        self.drawn_at = woke;
        let now = self.time(now);
        let frame = self.playout.tick(now);
        let caret = if !frame.caret {
            Caret::Gone
        } else if self.reading_speed {
            self.resting(now)
        } else if self.reduced_motion {
            Caret::Still
        } else {
            Caret::Breathing(motion::breath(now))
        };
        self.judge_speed(&frame, now);
        self.last_frame = Some((frame.done, frame.next_wake_ms.is_some()));
        Choice::Draw(Draw { frame, now, caret })
    }

    /// The frame [`Pacing::frame`] chose was drawn, leaving words `resolving` from their blur or
    /// not: what follows it.
    pub fn drawn(&mut self, resolving: bool) -> After {
        let (done, waiting) = self.last_frame.unwrap_or((false, false));
        if done && !resolving {
            self.over = true;
            self.asked = Asked::Nothing;
            return After::Settle;
        }
        // Frames go on while text waits to be revealed or words to resolve; in a pause the caret
        // rests, breathing without them, until text that arrives asks for one.
        if waiting || resolving {
            let after_ms = if self.reading_speed {
                NEXT_FRAME_AFTER_READING_MS
            } else {
                NEXT_FRAME_AFTER_MS
            };
            self.asked = Asked::Timer {
                due: self.drawn_at + f64::from(after_ms - DUE_EARLY_MS),
            };
            return After::Timer { after_ms };
        }
        After::Pause {
            caret: self.resting(self.clock),
        }
    }

    /// How a resting caret is drawn at `now`.
    fn resting(&self, now: f64) -> Caret {
        if self.reduced_motion {
            Caret::Still
        } else {
            Caret::Resting {
                into_breath_ms: motion::into_breath(now),
            }
        }
    }

    fn ask_frame(&mut self) -> Wake {
        if self.over || self.asked != Asked::Nothing {
            return Wake::Nothing;
        }
        self.asked = Asked::Frame;
        Wake::Frame
    }

    /// Judges from a drawn frame whether text plays out at reading speed; a frame that revealed
    /// nothing leaves the judgement as it was.
    fn judge_speed(&mut self, frame: &Frame, now: f64) {
        let (then, clusters) = self.last_drawn;
        let revealed = frame.visible_clusters.saturating_sub(clusters);
        if revealed > 0 && now > then {
            let per_second = revealed as f64 * 1000.0 / (now - then);
            self.reading_speed = per_second < READING_SPEED_CPS;
        }
        self.last_drawn = (now, frame.visible_clusters);
    }

    /// Times never run backwards: frame stamps can trail the times text arrived at.
    fn time(&mut self, now: f64) -> f64 {
        if now > self.clock {
            self.clock = now;
        }
        self.clock
    }
}
