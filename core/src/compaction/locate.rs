//! Where the newest compaction is and where its kept tail starts (rule C3), found once for memory
//! and for compaction's own view of the transcript.

use crate::block::{Block, CompactionTrigger, TurnsCovered};
use crate::transcript::{Role, Turn};

/// A compaction block and where it sits: turn `turn` (a 0-based place in the transcript's turns),
/// its assistant message and its place in that message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Located<'a> {
    pub turn: usize,
    pub message: usize,
    pub block: usize,
    pub summary: &'a str,
    pub trigger: CompactionTrigger,
    pub covers: TurnsCovered,
    pub kept_messages: u32,
}

/// Where a kept tail starts: a turn's 0-based place and the message within it, and how many of
/// the kept messages were not there to keep (the transcript opens before the tail is complete).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TailStart {
    pub turn: usize,
    pub message: usize,
    pub missing: usize,
}

/// The newest compaction among `turns`' places `places`, looked for from the last place back.
pub(crate) fn newest_among(
    turns: &[Turn],
    places: impl DoubleEndedIterator<Item = usize>,
) -> Option<Located<'_>> {
    places.rev().find_map(|t| newest_in(turns, t))
}

/// The newest compaction block of the turn at place `t`.
pub(crate) fn newest_in(turns: &[Turn], t: usize) -> Option<Located<'_>> {
    let turn = turns.get(t)?;
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
                        trigger,
                        covers,
                        kept_messages,
                    } => Some(Located {
                        turn: t,
                        message: m,
                        block: b,
                        summary,
                        trigger: *trigger,
                        covers: *covers,
                        kept_messages: *kept_messages,
                    }),
                    _ => None,
                })
        })
}

/// Where the kept tail of `compaction` starts: `kept_messages` messages before the compaction's
/// message, counted across turn boundaries, never further back than the turn at place `floor`.
/// Its cost is bounded by the turns it walks back over, not by the transcript.
pub(crate) fn kept_tail_start(turns: &[Turn], compaction: &Located<'_>, floor: usize) -> TailStart {
    let (mut turn, mut message) = (compaction.turn, compaction.message);
    let mut left = compaction.kept_messages as usize;
    if turn < floor {
        return TailStart {
            turn,
            message,
            missing: 0,
        };
    }
    while left > 0 {
        if message > 0 {
            let step = message.min(left);
            message -= step;
            left -= step;
        } else if turn > floor {
            turn -= 1;
            message = turns[turn].messages.len();
        } else {
            break;
        }
    }
    TailStart {
        turn,
        message,
        missing: if turn == 0 { left } else { 0 },
    }
}
