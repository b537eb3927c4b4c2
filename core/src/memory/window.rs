//! Which part of the transcript memory replays: the turn in progress, the newest compaction and
//! the past turns after it, found from the end backwards at a cost bounded by the window.

use crate::block::{Block, TurnsCovered};
use crate::transcript::{Role, Transcript, Turn, TurnKind};

use super::{CompactionHint, Diagnostic, MemoryConfig};

/// The newest compaction block and where it sits.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Compaction<'a> {
    pub turn: usize,
    pub message: usize,
    pub block: usize,
    pub summary: &'a str,
    pub covers: TurnsCovered,
    pub kept_messages: u32,
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
    pub compaction: Option<Compaction<'a>>,
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

    let compaction = find_compaction(turns, window_start, hint, diagnostics);
    let (tail_turn, tail_message) = match compaction {
        Some(c) => kept_tail_start(turns, c, window_start, diagnostics),
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
    turns: &'a [Turn],
    window_start: usize,
    hint: CompactionHint,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Compaction<'a>> {
    if let Some(found) = (window_start..turns.len())
        .rev()
        .find_map(|t| compaction_in(turns, t))
    {
        return Some(found);
    }
    let search = |diagnostics: &mut Vec<Diagnostic>| {
        let found = (0..window_start)
            .rev()
            .find_map(|t| compaction_in(turns, t));
        if found.is_some() {
            diagnostics.push(Diagnostic::SearchedBeyondWindow);
        }
        found
    };
    match hint {
        CompactionHint::NoCompaction => None,
        CompactionHint::Search => search(diagnostics),
        CompactionHint::NewestInTurn(index) => {
            let t = (index as usize)
                .checked_sub(1)
                .filter(|&t| t < window_start);
            match t.and_then(|t| compaction_in(turns, t)) {
                Some(found) => Some(found),
                None => {
                    diagnostics.push(Diagnostic::HintMissed { turn: index });
                    search(diagnostics)
                }
            }
        }
    }
}

/// The newest compaction block of turn `t`.
fn compaction_in(turns: &[Turn], t: usize) -> Option<Compaction<'_>> {
    let turn = &turns[t];
    turn.messages
        .iter()
        .enumerate()
        .rev()
        .filter(|(_, m)| m.role == Role::Assistant)
        .find_map(|(m, message)| {
            message
                .blocks
                .iter()
                .enumerate()
                .rev()
                .find_map(|(b, block)| match block {
                    Block::Compaction {
                        summary,
                        covers,
                        kept_messages,
                        ..
                    } => Some(Compaction {
                        turn: t,
                        message: m,
                        block: b,
                        summary,
                        covers: *covers,
                        kept_messages: *kept_messages,
                    }),
                    _ => None,
                })
        })
}

/// Where the kept tail begins: `kept_messages` messages before the compaction's message,
/// counted across turn boundaries, never further back than the window reaches.
fn kept_tail_start(
    turns: &[Turn],
    compaction: Compaction<'_>,
    window_start: usize,
    diagnostics: &mut Vec<Diagnostic>,
) -> (usize, usize) {
    let (mut turn, mut message) = (compaction.turn, compaction.message);
    if turn < window_start {
        return (turn, message);
    }
    let mut left = compaction.kept_messages as usize;
    while left > 0 {
        if message > 0 {
            let step = message.min(left);
            message -= step;
            left -= step;
        } else if turn > window_start {
            turn -= 1;
            message = turns[turn].messages.len();
        } else {
            break;
        }
    }
    if left > 0 && turn == 0 {
        diagnostics.push(Diagnostic::KeptTailShort {
            kept_messages: compaction.kept_messages,
            missing: left,
        });
    }
    (turn, message)
}
