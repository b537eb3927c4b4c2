//! Playout: live text revealed one grapheme cluster at a time, about a lag behind its arrival
//! (rules R3–R10, the core side of R7 and R8).
//!
//! A sans-IO state machine. Time is an argument in milliseconds (a frame's timestamp or a
//! virtual clock); nothing here reads a clock. Feed it with [`Playout::push`] as chunks arrive
//! and [`Playout::finish`] when the stream ends, and call [`Playout::tick`] once per frame.
//! Each push and each tick costs in proportion to the text it adds or reveals, never to the
//! whole reply. `docs/playout.md` describes the algorithm.

mod clusters;
mod config;
mod reveals;
mod speed;
mod utf8;
mod words;

use std::ops::Range;

pub use config::{PlayoutConfig, PlayoutConfigError};
pub use reveals::{Piece, Reveals};

use clusters::{Clusters, Decided};
use speed::{Backlog, Controller};
use utf8::Utf8Tail;
use words::WordCursor;

/// How many decided clusters past a frame's end the word segmentation may look at.
const WORD_LOOKAHEAD_CLUSTERS: usize = 8;

/// What one tick shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    /// Whole grapheme clusters visible after this tick, in total.
    pub visible_clusters: usize,
    /// The byte range of the reply text newly revealed by this tick (empty if none).
    pub revealed: Range<usize>,
    /// UAX #29 word segments covering `revealed` exactly, as byte ranges into the reply text.
    /// A word cut by the frame's edge ends at the edge; its continuation opens the next frame.
    pub words: Vec<Range<usize>>,
    /// The caret breathes: more is coming (the stream has not finished, or text still waits).
    pub caret: bool,
    /// The stream has finished and everything is shown: the reply is settled plain text.
    pub done: bool,
    /// When the next tick can reveal something, or `None` when there is nothing to do until the
    /// next push or finish (or ever, once done).
    pub next_wake_ms: Option<f64>,
}

/// A live reply's playout.
#[derive(Debug, Clone)]
pub struct Playout {
    config: PlayoutConfig,
    clusters: Clusters,
    bytes: Utf8Tail,
    controller: Controller,
    words: WordCursor,
    /// Clusters decided so far, shown or waiting.
    decided: usize,
    newest_arrival_ms: f64,
    last_push_ms: f64,
    visible_clusters: usize,
    visible_end: usize,
    /// The time of the last tick that counted as a frame, and how many clusters it revealed.
    last_frame: Option<(f64, usize)>,
    finished: bool,
}

impl Default for Playout {
    fn default() -> Self {
        Playout::with_valid_config(PlayoutConfig::default())
    }
}

impl Playout {
    /// A playout with the given numbers, or an error naming the one that cannot work.
    pub fn new(config: PlayoutConfig) -> Result<Self, PlayoutConfigError> {
        config.validate()?;
        Ok(Playout::with_valid_config(config))
    }

    fn with_valid_config(config: PlayoutConfig) -> Self {
        Playout {
            controller: Controller::new(&config),
            config,
            clusters: Clusters::default(),
            bytes: Utf8Tail::default(),
            words: WordCursor::default(),
            decided: 0,
            newest_arrival_ms: 0.0,
            last_push_ms: 0.0,
            visible_clusters: 0,
            visible_end: 0,
            last_frame: None,
            finished: false,
        }
    }

    /// The configuration in use.
    pub fn config(&self) -> &PlayoutConfig {
        &self.config
    }

    /// A chunk of the reply arrived at `now_ms`. It may end inside a grapheme cluster; the
    /// undecided tail waits for the next chunk or for [`Playout::finish`]. Text pushed after
    /// finish is appended and plays out as whole clusters at once.
    pub fn push(&mut self, text: &str, now_ms: f64) {
        let now = self.time(now_ms);
        self.advance(now);
        self.append(text, now);
    }

    /// Like [`Playout::push`] for raw UTF-8, whose chunks may also end inside a character.
    /// Invalid bytes become U+FFFD.
    pub fn push_bytes(&mut self, bytes: &[u8], now_ms: f64) {
        let text = self.bytes.decode(bytes);
        self.push(&text, now_ms);
    }

    /// The stream ended at `now_ms`: the tail is whole, and what waits plays out at the eased
    /// speed before the playout is done.
    pub fn finish(&mut self, now_ms: f64) {
        let now = self.time(now_ms);
        self.advance(now);
        if let Some(replacement) = self.bytes.flush() {
            self.append(replacement.encode_utf8(&mut [0; 4]), now);
        }
        self.finished = true;
        let count = self.clusters.finish();
        self.note_decided(count, true, now);
    }

    /// A frame at `now_ms`: reveals the clusters that are due, never more than the frame growth
    /// allows after the previous frame. A tick at or before the previous tick's time reveals
    /// nothing.
    pub fn tick(&mut self, now_ms: f64) -> Frame {
        let now = self.time(now_ms);
        self.advance(now);
        let start = self.visible_end;
        let is_new_frame = self.last_frame.is_none_or(|(at, _)| now > at);
        if is_new_frame {
            let (frame_ms, previous) = self
                .last_frame
                .map_or((0.0, 0), |(at, count)| (now - at, count));
            let count = self
                .controller
                .due(frame_ms)
                .saturating_sub(self.visible_clusters)
                .min(self.clusters.waiting())
                .min(self.config.frame_allowance(previous));
            if let Some(end) = self.clusters.take(count) {
                self.visible_end = end;
            }
            self.visible_clusters += count;
            self.last_frame = Some((now, count));
        }
        let revealed = start..self.visible_end;
        let known_end = self
            .clusters
            .waiting_end(WORD_LOOKAHEAD_CLUSTERS - 1)
            .unwrap_or(self.visible_end);
        let words = self
            .words
            .segment(self.clusters.text(), revealed.clone(), known_end);
        let done = self.is_done();
        Frame {
            visible_clusters: self.visible_clusters,
            revealed,
            words,
            caret: !done,
            done,
            next_wake_ms: self.next_wake_ms(),
        }
    }

    /// When a tick can next reveal something, or `None` while nothing waits (before the next
    /// push or finish, or for good once done).
    pub fn next_wake_ms(&self) -> Option<f64> {
        if self.clusters.waiting() == 0 {
            return None;
        }
        self.controller.next_reveal_ms(self.visible_clusters)
    }

    /// The whole reply received so far; frame ranges index into it.
    pub fn text(&self) -> &str {
        self.clusters.text()
    }

    /// The visible prefix of the reply: whole clusters only.
    pub fn visible(&self) -> &str {
        &self.clusters.text()[..self.visible_end]
    }

    /// How many whole clusters are visible.
    pub fn visible_clusters(&self) -> usize {
        self.visible_clusters
    }

    /// How many whole clusters have arrived and wait to be shown.
    pub fn waiting(&self) -> usize {
        self.clusters.waiting()
    }

    /// The stream has finished and everything is shown.
    pub fn is_done(&self) -> bool {
        self.finished && self.clusters.waiting() == 0 && !self.clusters.has_tail()
    }

    /// The current reveal speed in characters a second (for diagnostics and tests).
    pub fn speed_cps(&self) -> f64 {
        self.controller.speed()
    }

    /// The speed the reveal eases toward, in characters a second (for diagnostics and tests).
    pub fn target_cps(&self) -> f64 {
        let now = self.controller.clock().unwrap_or(0.0);
        self.controller.target(now, self.backlog(), &self.config)
    }

    fn append(&mut self, text: &str, now: f64) {
        if text.is_empty() {
            return;
        }
        let Decided {
            count,
            newest_arrived_earlier,
        } = self.clusters.push(text);
        self.note_decided(count, newest_arrived_earlier, now);
        self.last_push_ms = now;
        if self.finished {
            let count = self.clusters.finish();
            self.note_decided(count, false, now);
        }
    }

    fn note_decided(&mut self, count: usize, newest_arrived_earlier: bool, now: f64) {
        if count == 0 {
            return;
        }
        self.decided += count;
        self.newest_arrival_ms = if newest_arrived_earlier {
            self.last_push_ms
        } else {
            now
        };
    }

    /// Event times never run backwards; a time that is earlier than the last one, or not a
    /// number, counts as the last one.
    fn time(&self, now_ms: f64) -> f64 {
        match self.controller.clock() {
            Some(clock) if !(now_ms.is_finite() && now_ms >= clock) => clock,
            None if !now_ms.is_finite() => 0.0,
            _ => now_ms,
        }
    }

    fn advance(&mut self, now: f64) {
        let backlog = self.backlog();
        self.controller.advance(now, backlog, &self.config);
    }

    fn backlog(&self) -> Backlog {
        Backlog {
            decided: self.decided,
            newest_arrival_ms: self.newest_arrival_ms,
        }
    }
}
