//! Which part of the transcript memory replays: the turn in progress, the newest compaction and
//! the past turns after it, found from the end backwards at a cost bounded by the window, with
//! the host's hint for a compaction further back.

use serde::{Deserialize, Serialize};

use crate::compaction::locate::{self, Located};
use crate::transcript::{Transcript, TurnKind};

use super::config::MemoryConfig;
use super::diagnostic::Diagnostic;

/// What the host knows about the newest compaction beyond the replay window. Written `"search"`,
/// `"none"` or `{ "newestInTurn": n }`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum CompactionHint {
    /// Nothing: look back through the whole transcript (cost grows with the distance back to the
    /// newest compaction, or with the transcript when there is none).
    #[default]
    Search,
    /// The transcript holds no compaction before the window.
    #[serde(rename = "none")]
    NoCompaction,
    /// The newest compaction is in this turn (1-based). Checked; a wrong hint falls back to
    /// [`CompactionHint::Search`] with a diagnostic.
    NewestInTurn(u32),
}

/// The messages of one turn that are replayed: from `from_message` on, leaving out the blocks
/// of message `skip.0` up to and including block `skip.1` (the compaction and what it replaced).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    pub turn: usize,
    pub from_message: usize,
    pub skip: Option<(usize, usize)>,
}

impl Span {
    /// The first block of message `m` that is replayed.
    pub fn block_start(&self, m: usize) -> usize {
        match self.skip {
            Some((message, block)) if message == m => block + 1,
            _ => 0,
        }
    }
}

/// What memory replays.
#[derive(Debug)]
pub(crate) struct Window<'a> {
    pub compaction: Option<Located<'a>>,
    /// Past chat turns, newest first.
    pub past: Vec<Span>,
    /// The turn in progress.
    pub live: Option<Span>,
}

pub(crate) fn window<'a>(
    transcript: &'a Transcript,
    hint: CompactionHint,
    config: &MemoryConfig,
    diagnostics: &mut Vec<Diagnostic>,
) -> Window<'a> {
    let turns = &transcript.turns;
    let n = turns.len();
    let live = n
        .checked_sub(1)
        .filter(|&last| turns[last].status.is_open());
    let past_end = live.unwrap_or(n);
    let window_start = past_end.saturating_sub(config.max_turns);

    let compaction = find_compaction(transcript, window_start, hint, diagnostics);
    let (tail_turn, tail_message) = match &compaction {
        Some(c) => {
            let tail = locate::kept_tail_start(turns, c, window_start);
            if tail.missing > 0 {
                diagnostics.push(Diagnostic::KeptTailShort {
                    kept_messages: c.kept_messages,
                    missing: tail.missing,
                });
            }
            (tail.turn, tail.message)
        }
        None => (window_start, 0),
    };

    let first = tail_turn.max(window_start);
    let span = |turn: usize| Span {
        turn,
        from_message: if turn == tail_turn { tail_message } else { 0 },
        skip: compaction
            .filter(|c| c.turn == turn)
            .map(|c| (c.message, c.block)),
    };
    let past = (first..past_end)
        .rev()
        .filter(|&t| turns[t].kind == TurnKind::Chat)
        .map(span)
        .collect();
    Window {
        compaction,
        past,
        live: live.map(span),
    }
}

/// The newest compaction: looked for in the turn in progress and the window's past turns, then,
/// when the window holds none, where the hint says.
fn find_compaction<'a>(
    transcript: &'a Transcript,
    window_start: usize,
    hint: CompactionHint,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Located<'a>> {
    let turns = &transcript.turns;
    if let Some(found) = locate::newest_among(turns, window_start..turns.len()) {
        return Some(found);
    }
    let search = |diagnostics: &mut Vec<Diagnostic>| {
        let found = locate::newest_among(turns, 0..window_start);
        if found.is_some() {
            diagnostics.push(Diagnostic::SearchedBeyondWindow);
        }
        found
    };
    match hint {
        CompactionHint::NoCompaction => None,
        CompactionHint::Search => search(diagnostics),
        CompactionHint::NewestInTurn(index) => {
            let t = transcript.place_of(index).filter(|&t| t < window_start);
            match t.and_then(|t| locate::newest_in(turns, t)) {
                Some(found) => Some(found),
                None => {
                    diagnostics.push(Diagnostic::HintMissed { turn: index });
                    search(diagnostics)
                }
            }
        }
    }
}
