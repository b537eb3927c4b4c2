//! The pacing of a live reply's drawing on a virtual clock (rules R7, R8, R14): which frames are
//! drawn, when the next is asked for, how words resolve and the caret breathes, when the reply
//! settles. Nothing here sleeps: a simulated page makes a screen frame every 16.7 ms that one is
//! asked for, and fires timers on the millisecond.

use portal_core::pacing::motion::{
    BREATH_MS, RESOLVE_MS, RESOLVE_STEPS, breath, into_breath, resolving_step,
};
use portal_core::pacing::{
    After, Caret, Choice, DRAW_INTERVAL_MS, NEXT_FRAME_AFTER_MS, NEXT_FRAME_AFTER_READING_MS,
    Pacing, Wake,
};
use portal_core::playout::Playout;

/// A 60 Hz screen's frame interval.
const VSYNC_MS: f64 = 1000.0 / 60.0;

/// A page driving a [`Pacing`] as a drawer does: it asks for frames and sets timers as told, and
/// counts words as resolving for [`RESOLVE_MS`] after the last frame that revealed text.
struct Page {
    pacing: Pacing,
    frame_asked: bool,
    timer_at: Option<f64>,
    last_reveal: Option<f64>,
    /// Each drawn frame: its time and the caret drawn on it.
    drawn: Vec<(f64, Caret)>,
    /// Each pause: its time and the caret left resting.
    pauses: Vec<(f64, Caret)>,
    settled_at: Option<f64>,
    let_go: usize,
}

impl Page {
    fn new(reduced_motion: bool) -> Self {
        Page {
            pacing: Pacing::new(Playout::default(), reduced_motion),
            frame_asked: false,
            timer_at: None,
            last_reveal: None,
            drawn: Vec::new(),
            pauses: Vec::new(),
            settled_at: None,
            let_go: 0,
        }
    }

    fn wake(&mut self, wake: Wake) {
        if wake == Wake::Frame {
            self.timer_at = None;
            self.frame_asked = true;
        }
    }

    fn push(&mut self, text: &str, now: f64) {
        let wake = self.pacing.push(text, now);
        self.wake(wake);
    }

    fn finish(&mut self, now: f64) {
        let wake = self.pacing.finish(now);
        self.wake(wake);
    }

    /// Runs the page from `from` to `to` (milliseconds), one millisecond at a time.
    fn run(&mut self, from: u32, to: u32) {
        for ms in from..to {
            let now = f64::from(ms);
            if self.timer_at.is_some_and(|at| at <= now) {
                self.timer_at = None;
                let wake = self.pacing.woken();
                self.wake(wake);
            }
            let vsync = (now / VSYNC_MS).floor() != ((now - 1.0) / VSYNC_MS).floor();
            if self.frame_asked && vsync {
                self.frame_asked = false;
                self.screen_frame(now);
            }
        }
    }

    fn screen_frame(&mut self, now: f64) {
        match self.pacing.frame(now, now) {
            Choice::LetGo(wake) => {
                self.let_go += 1;
                self.wake(wake);
            }
            Choice::Draw(draw) => {
                if !draw.frame.revealed.is_empty() {
                    self.last_reveal = Some(draw.now);
                }
                self.drawn.push((draw.now, draw.caret));
                let resolving = self.pacing.words_resolve()
                    && self
                        .last_reveal
                        .is_some_and(|at| draw.now < at + RESOLVE_MS);
                match self.pacing.drawn(resolving) {
                    After::Settle => self.settled_at = Some(now),
                    After::Timer { after_ms } => self.timer_at = Some(now + f64::from(after_ms)),
                    After::Pause { caret } => self.pauses.push((now, caret)),
                }
            }
        }
    }

    fn drawn_between(&self, from: f64, to: f64) -> Vec<f64> {
        self.drawn
            .iter()
            .map(|&(at, _)| at)
            .filter(|at| (from..to).contains(at))
            .collect()
    }
}

/// A reply of `chars` characters at `cps` characters a second, in chunks every 20 ms, from 0.
fn stream(page: &mut Page, chars: usize, cps: f64) -> u32 {
    let text = "word ".repeat(chars.div_ceil(5));
    let text = &text[..chars];
    let mut sent = 0;
    let mut ms = 0;
    while sent < chars {
        let due = ((f64::from(ms) / 1000.0 * cps) as usize).min(chars);
        if due > sent {
            page.push(&text[sent..due], f64::from(ms));
            sent = due;
        }
        page.run(ms, ms + 20);
        ms += 20;
    }
    page.finish(f64::from(ms));
    ms
}

#[test]
fn a_frame_within_the_draw_interval_of_the_last_drawn_one_is_let_go() {
    let mut pacing = Pacing::new(Playout::default(), false);
    assert_eq!(pacing.push("Hello there", 0.0), Wake::Frame);
    assert!(matches!(pacing.frame(700.0, 700.0), Choice::Draw(_)));
    assert!(matches!(pacing.drawn(true), After::Timer { .. }));
    assert_eq!(pacing.woken(), Wake::Frame);
    let soon = 700.0 + DRAW_INTERVAL_MS - 1.0;
    assert_eq!(pacing.frame(soon, soon), Choice::LetGo(Wake::Frame));
    let later = 700.0 + DRAW_INTERVAL_MS;
    assert!(matches!(pacing.frame(later, later), Choice::Draw(_)));
}

#[test]
fn frames_are_drawn_every_other_screen_frame_and_every_fourth_at_reading_speed() {
    // 1,000 characters a second: the page draws about every 33 ms (every other frame).
    let mut fast = Page::new(false);
    stream(&mut fast, 6_000, 1_000.0);
    let fast_frames = fast.drawn_between(2_000.0, 4_000.0);
    let fast_gaps: Vec<f64> = fast_frames.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(
        fast_gaps
            .iter()
            .all(|gap| *gap >= f64::from(NEXT_FRAME_AFTER_MS) && *gap < 2.5 * VSYNC_MS),
        "every other frame: {fast_gaps:?}"
    );
    assert!(!fast.pacing.reading_speed());

    // 100 characters a second is reading speed: about every 67 ms (every fourth frame).
    let mut slow = Page::new(false);
    stream(&mut slow, 500, 100.0);
    let slow_frames = slow.drawn_between(2_000.0, 4_000.0);
    let slow_gaps: Vec<f64> = slow_frames.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(
        slow_gaps
            .iter()
            .all(|gap| *gap >= f64::from(NEXT_FRAME_AFTER_READING_MS) && *gap < 4.5 * VSYNC_MS),
        "every fourth frame: {slow_gaps:?}"
    );
    assert!(slow.pacing.reading_speed());
}

#[test]
fn text_arriving_just_before_the_next_frame_is_due_asks_for_it_instead_of_the_timer() {
    let mut pacing = Pacing::new(Playout::default(), false);
    let _ = pacing.push("A long enough sentence to play out over many frames.", 0.0);
    let Choice::Draw(_) = pacing.frame(800.0, 800.0) else {
        panic!("the first frame is drawn");
    };
    let After::Timer { after_ms } = pacing.drawn(true) else {
        panic!("words resolve and text waits: a timer asks for the next frame");
    };
    assert!([NEXT_FRAME_AFTER_MS, NEXT_FRAME_AFTER_READING_MS].contains(&after_ms));
    let due = 800.0 + f64::from(after_ms);
    // Well before the timer's frame is due, arriving text leaves the timer to ask.
    assert_eq!(pacing.push(" More", due - 10.0), Wake::Nothing);
    // Within five milliseconds of it, the text asks for the frame (and the timer is cleared).
    assert_eq!(pacing.push(" more", due - 5.0), Wake::Frame);
    assert_eq!(pacing.push(" and more", due - 4.0), Wake::Nothing);
}

#[test]
fn a_stalled_stream_draws_no_frames_and_the_caret_rests() {
    let mut page = Page::new(false);
    page.push("The first part of a reply, then nothing for a while. ", 0.0);
    page.run(0, 3_000);
    let before_stall = page.drawn.len();
    assert!(before_stall > 0);
    // Played out and resolved: no frame is asked for, the caret rests on the compositor.
    let (paused_at, caret) = *page.pauses.last().expect("the stream paused");
    assert!(paused_at < 3_000.0);
    assert!(matches!(caret, Caret::Resting { .. }), "{caret:?}");
    assert!(!page.frame_asked && page.timer_at.is_none());
    page.run(3_000, 10_000);
    assert_eq!(page.drawn.len(), before_stall, "no frame in the stall");
    assert_eq!(page.let_go, 0);
    // Text that arrives after the stall asks for frames again.
    page.push("Then more.", 10_000.0);
    page.run(10_000, 10_100);
    assert!(page.drawn.len() > before_stall);
}

#[test]
fn r7_words_resolve_from_a_blur_in_steps() {
    assert_eq!(resolving_step(0.0), 0);
    assert_eq!(resolving_step(RESOLVE_MS / 2.0), 3);
    assert_eq!(resolving_step(RESOLVE_MS * 0.99), RESOLVE_STEPS - 1);
    assert_eq!(resolving_step(RESOLVE_MS), RESOLVE_STEPS);
    assert_eq!(resolving_step(-1.0), 0);
    assert_eq!(resolving_step(10.0 * RESOLVE_MS), RESOLVE_STEPS);
    // Each step lasts as long: 75 ms.
    let step_ms = RESOLVE_MS / f64::from(RESOLVE_STEPS);
    for step in 0..RESOLVE_STEPS {
        assert_eq!(resolving_step(f64::from(step) * step_ms + 1.0), step);
    }
}

#[test]
fn r7_frames_go_on_while_words_resolve_after_the_text_is_shown() {
    let mut page = Page::new(false);
    page.push("Short.", 0.0);
    page.finish(0.0);
    page.run(0, 5_000);
    let settled = page.settled_at.expect("the reply settles");
    let last_reveal = page.last_reveal.expect("text was revealed");
    // Settled on the first frame after the last word resolved, not when the text was shown.
    assert!(
        settled >= last_reveal + RESOLVE_MS,
        "{settled} {last_reveal}"
    );
    assert!(settled < last_reveal + RESOLVE_MS + 100.0);
    assert!(page.drawn_between(last_reveal + 1.0, settled).len() >= 4);
}

#[test]
fn r8_the_caret_breathes_once_every_breath() {
    assert_eq!(breath(0.0), 0);
    assert_eq!(breath(350.0), 50);
    assert_eq!(breath(700.0), 100);
    assert_eq!(breath(BREATH_MS as f64), breath(0.0));
}

#[test]
fn r8_a_resting_caret_breathes_on_in_its_phase() {
    assert_eq!(into_breath(0.0), 0);
    assert_eq!(into_breath(350.0), 350);
    assert_eq!(into_breath(1_750.0), into_breath(350.0));
    assert_eq!(into_breath(-5.0), into_breath(0.0));
}

#[test]
fn r8_the_caret_breathes_on_drawn_frames_rests_at_reading_speed_and_goes_when_done() {
    let mut fast = Page::new(false);
    stream(&mut fast, 3_000, 1_000.0);
    fast.run(3_000, 8_000);
    let mid: Vec<Caret> = fast
        .drawn
        .iter()
        .filter(|(at, _)| (1_500.0..2_500.0).contains(at))
        .map(|&(_, caret)| caret)
        .collect();
    assert!(!mid.is_empty());
    assert!(
        mid.iter()
            .all(|caret| matches!(caret, Caret::Breathing(b) if *b <= 100)),
        "{mid:?}"
    );
    assert_eq!(
        fast.drawn.last().map(|&(_, caret)| caret),
        Some(Caret::Gone)
    );
    assert!(fast.settled_at.is_some());

    let mut slow = Page::new(false);
    stream(&mut slow, 300, 100.0);
    let resting = slow
        .drawn
        .iter()
        .filter(|(at, _)| (1_500.0..2_500.0).contains(at))
        .all(|(_, caret)| matches!(caret, Caret::Resting { .. }));
    assert!(resting, "at reading speed the caret rests");
}

#[test]
fn r10_the_reply_settles_once_played_out_and_resolved_and_draws_nothing_after() {
    let mut page = Page::new(false);
    let end = stream(&mut page, 2_000, 500.0);
    page.run(end, end + 5_000);
    let settled = page.settled_at.expect("the reply settles");
    assert_eq!(page.drawn.last().map(|&(at, _)| at), Some(settled));
    assert!(page.pacing.is_over());
    assert!(page.pacing.playout().is_done());
    // Nothing is asked for after it settled, whatever arrives.
    assert_eq!(
        page.pacing.push("late", end as f64 + 6_000.0),
        Wake::Nothing
    );
    assert_eq!(
        page.pacing
            .frame(end as f64 + 6_100.0, end as f64 + 6_100.0),
        Choice::LetGo(Wake::Nothing)
    );
}

#[test]
fn a_stopped_reply_draws_nothing_more_and_never_settles() {
    let mut page = Page::new(false);
    page.push("Some text that is withdrawn", 0.0);
    page.run(0, 800);
    let drawn = page.drawn.len();
    page.pacing.stop();
    page.finish(800.0);
    page.run(800, 5_000);
    assert_eq!(page.drawn.len(), drawn);
    assert_eq!(page.settled_at, None);
}

#[test]
fn r14_under_reduced_motion_words_do_not_resolve_the_caret_stands_still_and_the_reply_settles_when_played_out()
 {
    let mut page = Page::new(true);
    assert!(!page.pacing.words_resolve());
    page.push("A reply under reduced motion, then a pause. ", 0.0);
    page.run(0, 3_000);
    assert!(
        page.drawn
            .iter()
            .all(|(_, caret)| matches!(caret, Caret::Still | Caret::Gone))
    );
    assert!(page.pauses.iter().all(|(_, caret)| *caret == Caret::Still));
    // Text still plays out in order, frame by frame.
    assert!(page.drawn.len() > 5);
    page.finish(3_000.0);
    page.run(3_000, 4_000);
    let settled = page.settled_at.expect("the reply settles");
    // On the frame that showed the last text: nothing resolves after it.
    assert_eq!(Some(settled), page.last_reveal);
    assert!(settled < 3_100.0, "{settled}");
}
