//! Deciding whole grapheme clusters as a reply arrives in chunks (rule R6).
//!
//! A boundary between two clusters depends only on the text before it and the one character
//! after it, so every boundary before the last character received is final. Only the last
//! cluster is undecided: the next chunk may extend it (a combining mark, a ZWJ and the next
//! emoji, a second regional indicator, LF after CR). Segmentation restarts at the last decided
//! boundary, so the text already decided is never segmented again.

use std::collections::VecDeque;

use unicode_segmentation::UnicodeSegmentation;

/// The reply so far: decided clusters waiting to be shown, then the undecided tail.
#[derive(Debug, Clone, Default)]
pub(super) struct Clusters {
    text: String,
    /// Where the undecided tail begins; everything before it is whole clusters.
    decided_end: usize,
    /// End offsets of the decided clusters not yet shown, oldest first.
    waiting: VecDeque<usize>,
}

/// What one chunk decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Decided {
    /// How many clusters became whole.
    pub count: usize,
    /// Whether the newest of them had arrived completely before this chunk, so that the chunk
    /// only proved it whole.
    pub newest_arrived_earlier: bool,
}

impl Clusters {
    /// The whole reply received so far.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// How many decided clusters wait to be shown.
    pub fn waiting(&self) -> usize {
        self.waiting.len()
    }

    /// Whether text remains that has not been decided.
    pub fn has_tail(&self) -> bool {
        self.decided_end < self.text.len()
    }

    /// The end offset of the `index`-th waiting cluster, or of the last one if fewer wait.
    pub fn waiting_end(&self, index: usize) -> Option<usize> {
        self.waiting
            .get(index)
            .or_else(|| self.waiting.back())
            .copied()
    }

    /// Appends a chunk and decides every cluster that can no longer change.
    pub fn push(&mut self, chunk: &str) -> Decided {
        let before = self.text.len();
        self.text.push_str(chunk);
        let newest = self.decide(false);
        Decided {
            count: newest.map_or(0, |(count, _)| count),
            newest_arrived_earlier: newest.is_some_and(|(_, end)| end <= before),
        }
    }

    /// The stream has ended: the tail is whole. Returns how many clusters that decided.
    pub fn finish(&mut self) -> usize {
        self.decide(true).map_or(0, |(count, _)| count)
    }

    /// Removes the oldest `count` waiting clusters and returns where the last of them ends.
    pub fn take(&mut self, count: usize) -> Option<usize> {
        let mut end = None;
        for _ in 0..count {
            end = self.waiting.pop_front().or(end);
        }
        end
    }

    /// Decides clusters in the tail; returns how many and where the newest ends.
    fn decide(&mut self, complete: bool) -> Option<(usize, usize)> {
        let start = self.decided_end;
        let mut clusters = self.text[start..].grapheme_indices(true).peekable();
        let mut count = 0;
        while let Some((offset, cluster)) = clusters.next() {
            let last = clusters.peek().is_none();
            if last && !complete && !ends_in_hard_break(cluster) {
                break;
            }
            self.waiting.push_back(start + offset + cluster.len());
            count += 1;
        }
        if count == 0 {
            return None;
        }
        let end = *self.waiting.back()?;
        self.decided_end = end;
        Some((count, end))
    }
}

/// Whether nothing that follows can join this cluster: it ends in a line break or another
/// control character (UAX #29 rule GB4), except CR, which LF may still join.
fn ends_in_hard_break(cluster: &str) -> bool {
    cluster.chars().next_back().is_some_and(|c| {
        matches!(c, '\n' | '\u{2028}' | '\u{2029}') || (c.is_control() && c != '\r')
    })
}
