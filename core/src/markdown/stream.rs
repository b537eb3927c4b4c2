//! A reply's markdown as it plays out: blocks that are whole are parsed once and kept; each
//! update parses only the open block at the visible end again.

use std::ops::Range;

use super::build::Source;
use super::hold::{decided_end, line_start};
use super::parse::{Parsed, parse};
use super::references::{Label, References};
use super::tail::{draw_open, parse_decided};
use super::tree::Block;

/// The markdown of a reply being revealed: push the revealed text, frame by frame, and draw
/// [`StreamingMarkdown::blocks`] as each [`Update`] says.
#[derive(Debug, Clone, Default)]
pub struct StreamingMarkdown {
    reply: String,
    blocks: Vec<Block>,
    /// Where each block lies in the reply.
    sources: Vec<Range<usize>>,
    /// How many blocks are settled: nothing the reply may still add changes them.
    settled: usize,
    /// Where the settled blocks end: the open blocks are parsed from here.
    settled_end: usize,
    /// The link reference definitions drawn so far.
    references: References,
    /// References in settled blocks that no definition answered yet, with their block.
    unresolved: Vec<(Label, usize)>,
    finished: bool,
}

/// What an update changed, so a renderer keeps what it drew of the blocks that did not change.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Update {
    /// The blocks before this index are as the previous update left them; draw the blocks from
    /// it on again (they were open, or are new).
    pub unchanged: usize,
    /// Settled blocks before `unchanged` to draw again: a link reference definition that came
    /// later turned some of their text into links.
    pub redrawn: Vec<usize>,
    /// How many blocks are settled now; the others may still change.
    pub settled: usize,
}

impl StreamingMarkdown {
    pub fn new() -> Self {
        StreamingMarkdown::default()
    }

    /// Text newly revealed at the reply's end (a frame's revealed text). A frame that revealed
    /// nothing changes nothing. Pushing after [`StreamingMarkdown::finish`] opens the last
    /// block again.
    pub fn push(&mut self, revealed: &str) -> Update {
        if revealed.is_empty() {
            return Update {
                unchanged: self.blocks.len(),
                redrawn: Vec::new(),
                settled: self.settled,
            };
        }
        if self.finished {
            self.reopen();
        }
        self.reply.push_str(revealed);
        self.update(false)
    }

    /// The reply is whole: everything is drawn as it stands, with nothing held back, and every
    /// block is settled. The blocks are then what [`parse`](super::parse) gives for the whole
    /// reply.
    pub fn finish(&mut self) -> Update {
        self.finished = true;
        self.update(true)
    }

    /// The reply's blocks: the settled ones first, then the open ones (usually one).
    pub fn blocks(&self) -> &[Block] {
        &self.blocks
    }

    /// How many of [`StreamingMarkdown::blocks`] are settled.
    pub fn settled(&self) -> usize {
        self.settled
    }

    /// The reply revealed so far; the blocks' source ranges index into it.
    pub fn reply(&self) -> &str {
        &self.reply
    }

    fn update(&mut self, whole: bool) -> Update {
        let unchanged = self.settled;
        let from = self.settled_end;
        let decided = if whole {
            self.reply.len()
        } else {
            from + decided_end(&self.reply[from..])
        };
        let mut parsed = parse(
            Source {
                text: &self.reply[from..decided],
                base: from,
                real: decided - from,
                growing: !whole,
                inline_maths: &[],
            },
            &self.references,
        );
        // Every block but the last is settled: nothing after it can change it. Which blocks
        // settle depends on the decided text alone, never on what is held back of the open one.
        let settling = if whole {
            parsed.blocks.len()
        } else {
            parsed.blocks.len().saturating_sub(1)
        };
        let defined = self.define(&parsed, decided, whole);
        self.blocks.truncate(self.settled);
        self.sources.truncate(self.settled);
        for (offset, source) in parsed.sources[..settling].iter().enumerate() {
            for (label, at) in &parsed.unresolved {
                if source.contains(at) {
                    self.unresolved
                        .push((label.clone(), self.blocks.len() + offset));
                }
            }
        }
        self.blocks.extend(parsed.blocks.drain(..settling));
        self.sources.extend(parsed.sources.drain(..settling));
        self.settled += settling;
        self.settled_end = match parsed.sources.first() {
            _ if whole => self.reply.len(),
            Some(first) if settling > 0 => line_start(&self.reply, first.start).max(from),
            _ => from,
        };
        if !whole {
            if settling > 0 {
                parsed = parse_decided(&self.reply, self.settled_end, decided, &self.references);
            }
            let open = draw_open(
                &self.reply,
                self.settled_end,
                decided,
                parsed,
                &self.references,
            );
            self.blocks.extend(open.blocks);
            self.sources.extend(open.sources);
        }
        let redrawn = self.resolve(&defined, unchanged);
        Update {
            unchanged,
            redrawn,
            settled: self.settled,
        }
    }

    /// Keeps the definitions whose line has ended in the reply's text up to `decided`, or every
    /// one once the reply is `whole`: a line still arriving may go on into text that makes it no
    /// definition (`b]: https://x` followed by ` and more`), and nothing after an ended line
    /// changes its destination. Returns the labels that were not defined before.
    fn define(&mut self, parsed: &Parsed, decided: usize, whole: bool) -> Vec<Label> {
        let mut defined = Vec::new();
        for definition in &parsed.definitions {
            let last = definition.source.end.saturating_sub(1);
            let ended = whole
                || self
                    .reply
                    .as_bytes()
                    .get(last..decided)
                    .is_some_and(|after| after.contains(&b'\n'));
            let label = &definition.label;
            if ended
                && self
                    .references
                    .define(label, definition.source.start, &definition.destination)
            {
                defined.push(label.clone());
            }
        }
        defined
    }

    /// Parses again the settled blocks with references to labels just defined; returns those
    /// among the first `before` blocks.
    fn resolve(&mut self, defined: &[Label], before: usize) -> Vec<usize> {
        if defined.is_empty() {
            return Vec::new();
        }
        let mut indices: Vec<usize> = Vec::new();
        for (label, index) in &self.unresolved {
            if defined.contains(label) && !indices.contains(index) {
                indices.push(*index);
            }
        }
        for &index in &indices {
            let source = &self.sources[index];
            let start = line_start(&self.reply, source.start);
            let text = &self.reply[start..source.end];
            let parsed = parse(
                Source {
                    text,
                    base: start,
                    real: text.len(),
                    growing: false,
                    inline_maths: &[],
                },
                &self.references,
            );
            self.unresolved.retain(|(_, block)| *block != index);
            for (label, _) in parsed.unresolved {
                self.unresolved.push((label, index));
            }
            if let Ok([block]) = <[_; 1]>::try_from(parsed.blocks) {
                self.blocks[index] = block;
            }
        }
        indices.retain(|&index| index < before);
        indices
    }

    /// The last block may go on: it is open again.
    fn reopen(&mut self) {
        self.finished = false;
        if let Some(last) = self.settled.checked_sub(1) {
            self.settled = last;
            self.settled_end = line_start(&self.reply, self.sources[last].start);
            self.unresolved.retain(|(_, block)| *block != last);
        }
    }
}
