//! The turn machine against random scripts: model events, overflows, failures, stops and
//! shutdowns in any order, summaries that succeed or are cut off, tools that answer, break,
//! time out or are stopped, decisions and answers, and writes that fail. Whatever happens, the
//! machine never panics nor loops, never answers a call twice, answers every call of a turn
//! that completed, never leaves the turn running, and the turn as stored folds to the same
//! `TurnState` as the events it published (`Sim::check`).

use crate::turn_run_support;

use std::collections::HashMap;

use portal_core::model::FinishReason;
use portal_core::turn_run::Start;
use portal_core::usage::Tokens;
use portal_core::{TurnKind, TurnStatus};
use proptest::prelude::*;
use serde_json::json;
use turn_run_support::*;

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => "[a-z ]{0,12}".prop_map(|t| Step::Event(ModelEvent::TextDelta(t))),
        1 => "[a-z ]{1,8}".prop_map(|t| Step::Event(ModelEvent::ThinkingDelta(t))),
        3 => (0u32..3, prop::sample::select(vec![
                "count", "publish_note", "ask_user", "slow", "stop", "broken", "missing",
            ]))
            .prop_map(|(index, name)| Step::Event(ModelEvent::ToolCallEnd {
                index,
                id: None,
                name: name.into(),
                arguments: Ok(json!({ "title": "T", "question": "Which?", "text": "x" })),
            })),
        1 => Just(bad_call("count", "\"seven\"")),
        1 => (0u64..120_000).prop_map(|input| Step::Event(ModelEvent::Usage(Tokens::reported(input, 10)))),
        2 => prop::sample::select(vec![FinishReason::Stop, FinishReason::ToolCalls, FinishReason::Length])
            .prop_map(|reason| Step::Event(ModelEvent::Finished { reason })),
        1 => Just(Step::Overflow),
        1 => Just(Step::Fail),
        1 => Just(Step::Stop),
        1 => Just(Step::Shutdown),
    ]
}

/// One scripted turn: the model's replies, the summaries, how the user decides, which write
/// kind fails after how many, and whether the turn is a `/compact` one.
#[derive(Debug, Clone)]
struct Script {
    replies: Vec<Vec<Step>>,
    summaries: Vec<bool>,
    approve: Vec<bool>,
    failing: Option<(&'static str, usize)>,
    compact: bool,
    context: Option<u64>,
}

fn script() -> impl Strategy<Value = Script> {
    (
        prop::collection::vec(prop::collection::vec(step(), 0..8), 0..8),
        prop::collection::vec(any::<bool>(), 0..4),
        prop::collection::vec(any::<bool>(), 0..8),
        prop::option::weighted(
            0.2,
            (
                prop::sample::select(vec![
                    "message", "block", "text", "withdraw", "trace", "usage", "status",
                ]),
                0usize..6,
            ),
        ),
        prop::bool::weighted(0.1),
        prop::option::of(0u64..100_000),
    )
        .prop_map(
            |(replies, summaries, approve, failing, compact, context)| Script {
                replies,
                summaries,
                approve,
                failing,
                compact,
                context,
            },
        )
}

fn run(script: Script) -> Sim {
    let kind = if script.compact {
        TurnKind::Compact
    } else {
        TurnKind::Chat
    };
    let mut sim = Sim::new(open(history(6, 30, script.context), kind, "Go on"));
    sim.replies = script.replies.into();
    for good in script.summaries {
        sim.summaries
            .push_back(if good { good_summary() } else { cut_summary() });
    }
    sim.failing.extend(script.failing);
    let mut approve = script.approve.into_iter().cycle();
    let mut start = Start::Fresh;
    for _ in 0..6 {
        if sim.run(start) != TurnStatus::Paused {
            break;
        }
        let awaiting = sim.turn().awaiting();
        start = if awaiting.question {
            Start::Answered("This one".into())
        } else {
            Start::Decided(
                awaiting
                    .approvals
                    .iter()
                    .map(|id| (id.clone(), approve.next().unwrap_or(true)))
                    .collect::<HashMap<_, _>>(),
            )
        };
    }
    sim
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn any_script_ends_with_the_store_and_the_events_agreeing(script in script()) {
        let sim = run(script);
        sim.check();
    }
}
