//! A stored turn read back as the events its runs published: each message after the one that
//! opened the turn, each block whole, a `turn_end` where the turn paused, and its end once it
//! ended, with the reason its note kept.

use crate::reply::paused_after;
use crate::stream::{TurnEvent, block_events};
use crate::{Turn, TurnStatus};

/// Why a failed turn failed when it kept no `TURN_FAILED` note (turns stored before the note
/// existed, or whose note could not be written).
pub const UNNOTED_FAILURE: &str = "The turn failed; the server's log says why. Send the message \
                                   again.";

/// The events the runs of `turn` published, as storage holds it. A streamed block is one delta
/// here; the events' ids (their weights) are the same either way.
pub fn replay(turn: &Turn) -> Vec<TurnEvent> {
    let mut events = Vec::new();
    let messages = &turn.messages;
    let mut paused_last = false;
    for (m, message) in messages.iter().enumerate().skip(1) {
        if message.blocks.is_empty() {
            continue;
        }
        events.push(TurnEvent::MessageStart {
            message: m,
            role: message.role,
        });
        for (b, block) in message.blocks.iter().enumerate() {
            events.extend(block_events(m, b, block, &message.blocks));
        }
        paused_last = paused_after(messages, m);
        if paused_last {
            events.push(TurnEvent::TurnEnd {
                status: TurnStatus::Paused,
                reason: None,
            });
        }
    }
    match turn.status {
        TurnStatus::Running => {}
        TurnStatus::Paused if paused_last => {}
        status => events.push(TurnEvent::TurnEnd {
            status,
            reason: match (status, turn.end_reason()) {
                (_, Some(reason)) => Some(reason.to_string()),
                (TurnStatus::Failed, None) => Some(UNNOTED_FAILURE.to_string()),
                _ => None,
            },
        }),
    }
    events
}
