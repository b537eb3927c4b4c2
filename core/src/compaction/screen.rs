//! What the screen shows of compaction (rules R11–R13, C7, C12), decided here so that every front
//! end draws it the same way: the divider, the clock while a summary is written, the `/compact`
//! pill, the composer's refusal and the context meter.

use super::CompactionConfig;
use super::command::{CompactRefusal, parse_compact};
use super::note::{strip_references, summary_note};
use super::projection::project_input;
use super::view::View;
use crate::block::{Block, CompactionTrigger, TurnsCovered};
use crate::tokens::{TokenCounter, message_tokens};
use crate::transcript::{Transcript, TurnStatus};

/// A "Context summarised" divider (rule R12).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Divider {
    /// The agent chose to compact (85 % of the window, or an overflow) rather than the user.
    pub automatic: bool,
    /// The summary as shown when the divider opens: references taken out (rule C12).
    pub summary: String,
    pub covers: TurnsCovered,
}

/// The divider a block is drawn as; `None` for any block but a compaction.
pub fn divider(block: &Block) -> Option<Divider> {
    match block {
        Block::Compaction {
            summary,
            trigger,
            covers,
            ..
        } => Some(Divider {
            automatic: *trigger == CompactionTrigger::Auto,
            summary: strip_references(summary),
            covers: *covers,
        }),
        _ => None,
    }
}

/// The clock beside "Summarising conversation" (rule R11): the elapsed time as `m:ss`, once the
/// summary has taken `config.clock_delay_ms`; `None` before.
pub fn summarising_clock(elapsed_ms: u64, config: &CompactionConfig) -> Option<String> {
    if elapsed_ms < config.clock_delay_ms {
        return None;
    }
    let seconds = elapsed_ms / 1_000;
    Some(format!("{}:{:02}", seconds / 60, seconds % 60))
}

/// A sent message drawn as the "Compact" pill (rule R13): the instructions after the command,
/// or `None` when the message is not `/compact`.
pub fn compact_pill(text: &str) -> Option<Option<String>> {
    parse_compact(text).map(|command| command.instructions)
}

/// Why the composer refuses to send `text` now (rule C7): `/compact` while the latest turn is
/// running or paused. Any other message, or `/compact` with no turn open, is not refused here;
/// the server checks the rest of C7 when it arrives.
pub fn composer_refusal(text: &str, latest: Option<TurnStatus>) -> Option<CompactRefusal> {
    parse_compact(text)?;
    match latest? {
        TurnStatus::Running => Some(CompactRefusal::TurnRunning),
        TurnStatus::Paused => Some(CompactRefusal::TurnPaused),
        TurnStatus::Completed | TurnStatus::CutOff | TurnStatus::Failed => None,
    }
}

/// The context meter: how much of the model's window the conversation fills, and where
/// automatic compaction starts (rule C1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextMeter {
    /// The share of the window in use, in whole percent, at most 100.
    pub used_percent: u32,
    /// The line at which the agent compacts on its own, in percent.
    pub threshold_percent: u32,
    /// The input tokens of the latest call and the window, for the meter's label.
    pub tokens: u64,
    pub window: u64,
}

/// The meter for a conversation whose latest call read `tokens` of a `window`-token context;
/// `None` when the window is unknown.
pub fn context_meter(tokens: u64, window: u64, config: &CompactionConfig) -> Option<ContextMeter> {
    (window > 0).then(|| ContextMeter {
        used_percent: (u128::from(tokens) * 100 / u128::from(window)).min(100) as u32,
        threshold_percent: config.threshold_percent,
        tokens,
        window,
    })
}

/// The tokens the conversation takes in the model's window, for the meter: the latest call's
/// reported input plus what was added since, or, without a usable report (none yet, or a
/// compaction after it), an estimate of the newest summary and the messages after it (rule C1's
/// projection, without the system text and tools, which only the server knows).
pub fn context_in_use(transcript: &Transcript, counter: &dyn TokenCounter) -> u64 {
    project_input(transcript, counter, || {
        let view = View::of(transcript);
        let summary = view.earlier.map_or(0, |earlier| {
            counter.count(&summary_note(earlier.covers, earlier.summary))
        });
        let rest: usize = view
            .entries
            .iter()
            .map(|entry| message_tokens(counter, &entry.live_message()))
            .sum();
        (summary + rest) as u64
    })
    .tokens
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r12_c12_a_divider_is_marked_automatic_and_shows_no_references() {
        let cases = [
            (CompactionTrigger::Auto, true),
            (CompactionTrigger::Manual, false),
        ];
        for (trigger, automatic) in cases {
            let block = Block::Compaction {
                summary: "Turns 1–3\n\n## Facts\n- Total 4,200 EUR [ref:call_1].".into(),
                trigger,
                covers: TurnsCovered { first: 1, last: 3 },
                kept_messages: 4,
            };
            let shown = divider(&block).expect("a divider");
            assert_eq!(shown.automatic, automatic, "{trigger:?}");
            assert_eq!(shown.summary, "Turns 1–3\n\n## Facts\n- Total 4,200 EUR.");
        }
        assert_eq!(divider(&Block::text("hello")), None);
    }

    #[test]
    fn r11_the_clock_shows_after_three_seconds() {
        let config = CompactionConfig::default();
        let cases = [
            (0, None),
            (2_999, None),
            (3_000, Some("0:03")),
            (59_999, Some("0:59")),
            (61_000, Some("1:01")),
            (600_000, Some("10:00")),
        ];
        for (elapsed, shown) in cases {
            assert_eq!(
                summarising_clock(elapsed, &config).as_deref(),
                shown,
                "{elapsed} ms"
            );
        }
    }

    #[test]
    fn r13_a_sent_compact_is_a_pill_with_its_instructions() {
        let cases = [
            ("/compact", Some(None)),
            ("/compact keep the figures", Some(Some("keep the figures"))),
            ("compact this", None),
            ("/compacted", None),
        ];
        for (text, pill) in cases {
            assert_eq!(
                compact_pill(text),
                pill.map(|i| i.map(String::from)),
                "{text}"
            );
        }
    }

    #[test]
    fn c7_the_composer_refuses_compact_while_a_turn_runs() {
        use TurnStatus::*;
        let cases = [
            ("/compact", Some(Running), Some(CompactRefusal::TurnRunning)),
            (
                "/compact now",
                Some(Paused),
                Some(CompactRefusal::TurnPaused),
            ),
            ("/compact", Some(Completed), None),
            ("/compact", Some(Failed), None),
            ("/compact", None, None),
            ("Carry on", Some(Running), None),
        ];
        for (text, latest, refusal) in cases {
            assert_eq!(composer_refusal(text, latest), refusal, "{text} {latest:?}");
        }
    }

    #[test]
    fn c1_the_meter_shows_the_share_in_use_and_the_85_percent_line() {
        let config = CompactionConfig::default();
        let cases = [
            (0, 1_000, Some(0)),
            (849, 1_000, Some(84)),
            (850, 1_000, Some(85)),
            (5_000, 1_000, Some(100)),
            (u64::MAX, 1, Some(100)),
            (10, 0, None),
        ];
        for (tokens, window, used) in cases {
            let meter = context_meter(tokens, window, &config);
            assert_eq!(meter.map(|m| m.used_percent), used, "{tokens}/{window}");
            if let Some(meter) = meter {
                assert_eq!(meter.threshold_percent, 85);
            }
        }
    }

    #[test]
    fn c1_the_meter_reads_the_report_or_estimates_after_a_compaction() {
        use crate::tokens::EstimateCounter;
        use crate::transcript::{Message, Role, Turn, TurnKind};
        let counter = EstimateCounter;
        let turn = |index, kind, messages| Turn {
            index,
            kind,
            status: TurnStatus::Completed,
            effort: None,
            context_tokens: None,
            trace: Vec::new(),
            messages,
        };
        let long = "many words in a long request ".repeat(200);
        let mut t = Transcript::new();
        let mut first = turn(
            1,
            TurnKind::Chat,
            vec![
                Message::new(Role::User, vec![Block::text(&long)]),
                Message::new(Role::Assistant, vec![Block::text("Done.")]),
            ],
        );
        first.context_tokens = Some(40_000);
        t.turns.push(first);
        assert_eq!(
            context_in_use(&t, &counter),
            40_000 + message_tokens(&counter, &t.turns[0].messages[1]) as u64
        );
        t.turns.push(turn(
            2,
            TurnKind::Compact,
            vec![
                Message::new(Role::User, vec![Block::text("/compact")]),
                Message::new(
                    Role::Assistant,
                    vec![Block::Compaction {
                        summary: "Turns 1–1\n\n## Requests\n- long".into(),
                        trigger: CompactionTrigger::Manual,
                        covers: TurnsCovered { first: 1, last: 1 },
                        kept_messages: 0,
                    }],
                ),
            ],
        ));
        let after = context_in_use(&t, &counter);
        assert!(after > 0 && after < 100, "the summary alone: {after}");
    }
}
