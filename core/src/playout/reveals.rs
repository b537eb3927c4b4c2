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

/// A piece of a text leaf: its text, and when its first word was revealed if that is within the
/// window (the piece resolves from its blur), `None` when it is resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct Piece<'a> {
    pub text: &'a str,
    pub revealed_ms: Option<f64>,
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

    /// `text`, which lies at the reply's byte `start`, in pieces: words revealed in the same
    /// frame (by their first byte) share a piece, and resolved text is one piece.
    pub fn pieces<'a>(&self, text: &'a str, start: usize, now: f64) -> Vec<Piece<'a>> {
        let mut pieces: Vec<Piece<'a>> = Vec::new();
        // Text up to the last white space before the window is resolved whatever its words, so
        // a long paragraph is not segmented again every frame, only its recent end.
        let resolved = self.resolved_end.saturating_sub(start).min(text.len());
        let plain = text
            .get(..resolved)
            .and_then(|before| before.rfind(char::is_whitespace))
            .map_or(0, |at| {
                at + text[at..].chars().next().map_or(0, char::len_utf8)
            });
        if plain > 0 {
            pieces.push(Piece {
                text: &text[..plain],
                revealed_ms: None,
            });
        }
        let whole = text;
        let (start, text) = (start + plain, &text[plain..]);
        let mut piece_start = 0;
        let mut piece_revealed = None;
        for (at, _) in text.split_word_bound_indices() {
            let revealed = self.revealed(start + at, now);
            if at > 0 && revealed != piece_revealed {
                pieces.push(Piece {
                    text: &text[piece_start..at],
                    revealed_ms: piece_revealed,
                });
                piece_start = at;
            }
            piece_revealed = revealed;
        }
        if piece_start < text.len() {
            pieces.push(Piece {
                text: &text[piece_start..],
                revealed_ms: piece_revealed,
            });
        }
        // The resolved text before the window and the first resolved words after it are one
        // piece: they lie side by side in `text`.
        if plain > 0 && pieces.len() > 1 && pieces[1].revealed_ms.is_none() {
            let joined = plain + pieces[1].text.len();
            pieces[0].text = &whole[..joined];
            pieces.remove(1);
        }
        pieces
    }

    /// When the frame that revealed byte `offset` was, if that is within the window before `now`.
    fn revealed(&self, offset: usize, now: f64) -> Option<f64> {
        if offset < self.resolved_end {
            return None;
        }
        let at = self.frames.partition_point(|&(end, _)| end <= offset);
        let (_, revealed) = *self.frames.get(at)?;
        (now - revealed < self.window_ms).then_some(revealed)
    }
}
