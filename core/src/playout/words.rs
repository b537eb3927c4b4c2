//! Word segments (UAX #29) of the text each frame reveals, for the blur (rule R7).

use std::ops::Range;

use unicode_segmentation::UnicodeSegmentation;

/// How far back a word cut by the previous frame's edge is read again, so that its continuation
/// segments as part of it. A longer run (a pasted hash, a long URL) is continued from the edge
/// instead, which keeps each frame's cost bounded.
const WORD_CONTEXT_MAX_BYTES: usize = 256;

/// Where the word that the previous frame's edge ran through begins.
#[derive(Debug, Clone, Default)]
pub(super) struct WordCursor {
    open_word: usize,
}

impl WordCursor {
    /// The word segments covering `revealed`, clipped to it: a word cut by either edge of the
    /// frame is cut there. `known_end` is how far decided text reaches, the lookahead that
    /// decides the boundaries near the frame's end.
    pub fn segment(
        &mut self,
        text: &str,
        revealed: Range<usize>,
        known_end: usize,
    ) -> Vec<Range<usize>> {
        let mut words = Vec::new();
        if revealed.is_empty() {
            return words;
        }
        let from = self.open_word.min(revealed.start);
        let known_end = known_end.max(revealed.end);
        let mut open_word = revealed.end;
        for (offset, word) in text[from..known_end].split_word_bound_indices() {
            let start = from + offset;
            let end = start + word.len();
            if end <= revealed.start {
                continue;
            }
            words.push(start.max(revealed.start)..end.min(revealed.end));
            if end >= revealed.end {
                let boundary_known = end == revealed.end && end < known_end;
                if !boundary_known {
                    open_word = start;
                }
                break;
            }
        }
        self.open_word = if revealed.end - open_word > WORD_CONTEXT_MAX_BYTES {
            revealed.end
        } else {
            open_word
        };
        words
    }
}
