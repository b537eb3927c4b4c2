//! When the recent parts of a reply were revealed, so a front end draws each word that is still
//! resolving from its blur as one element, however many frames revealed its letters (R7).

use std::collections::VecDeque;

use unicode_segmentation::UnicodeSegmentation;

/// The reveal times of a reply's last `window_ms` of playout: each frame's revealed end (a byte
/// offset into the reply) and when it was revealed.
#[derive(Debug, Clone)]
pub struct Reveals {
    window_ms: f64,
    /// Revealed ends in increasing order, each with its time.
    frames: VecDeque<(usize, f64)>,
    /// Everything before this byte was revealed longer ago than the window.
    resolved_end: usize,
}

/// A piece of a text leaf: its text, and how long ago its first word was revealed when that is
/// within the window (the piece resolves from its blur), `None` when it is resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece<'a> {
    pub text: &'a str,
    pub age_ms: Option<u32>,
}

impl Reveals {
    /// Reveal times kept for `window_ms`, the time a word takes to resolve.
    pub fn new(window_ms: f64) -> Self {
        Reveals {
            window_ms,
            frames: VecDeque::new(),
            resolved_end: 0,
        }
    }

    /// The reply's bytes up to `end` were revealed by `now`.
    pub fn record(&mut self, end: usize, now: f64) {
        if self.frames.back().is_none_or(|&(last, _)| end > last) {
            self.frames.push_back((end, now));
        }
        while self
            .frames
            .front()
            .is_some_and(|&(_, at)| now - at >= self.window_ms)
        {
            if let Some((end, _)) = self.frames.pop_front() {
                self.resolved_end = end;
            }
        }
    }

    /// Whether some word is still resolving at `now`.
    pub fn resolving(&self, now: f64) -> bool {
        self.frames
            .back()
            .is_some_and(|&(_, at)| now - at < self.window_ms)
    }

    /// `text`, which lies at the reply's byte `start`, in pieces: words revealed in the same
    /// frame (by their first byte) share a piece, and resolved text is one piece.
    pub fn pieces<'a>(&self, text: &'a str, start: usize, now: f64) -> Vec<Piece<'a>> {
        let mut pieces: Vec<Piece<'a>> = Vec::new();
        let mut piece_start = 0;
        let mut piece_age = None;
        for (at, _) in text.split_word_bound_indices() {
            let age = self.age(start + at, now);
            if at > 0 && age != piece_age {
                pieces.push(Piece {
                    text: &text[piece_start..at],
                    age_ms: piece_age,
                });
                piece_start = at;
            }
            piece_age = age;
        }
        if piece_start < text.len() {
            pieces.push(Piece {
                text: &text[piece_start..],
                age_ms: piece_age,
            });
        }
        pieces
    }

    /// How long ago, in whole milliseconds, the frame that revealed byte `offset` was, if that is
    /// within the window.
    fn age(&self, offset: usize, now: f64) -> Option<u32> {
        if offset < self.resolved_end {
            return None;
        }
        let at = self.frames.partition_point(|&(end, _)| end <= offset);
        let (_, revealed) = *self.frames.get(at)?;
        let age = now - revealed;
        // The window is a few hundred milliseconds, so the age fits a u32.
        (age < self.window_ms).then(|| age.max(0.0) as u32)
    }
}
