//! Whole turns through the turn machine on simulated time (`turn_run_support`): each case
//! scripts the model, the summaries and the tools, and its golden file under
//! `tests/turn_run/` holds every action the machine asked for, every event it published and the
//! turn as stored. `UPDATE_EXPECT=1 cargo test -p portal-core --test it turn_run::` rewrites them.

use crate::turn_run_support;

use std::collections::HashMap;

use expect_test::expect_file;
use portal_core::turn_run::Start;
use portal_core::{Block, TraceEntry, TurnKind, TurnStatus};
use serde_json::json;
use turn_run_support::*;

fn decided(pairs: &[(&str, bool)]) -> Start {
    Start::Decided(
        pairs
            .iter()
            .map(|(id, approved)| (id.to_string(), *approved))
            .collect::<HashMap<_, _>>(),
    )
}

fn chat(text: &str) -> Sim {
    Sim::new(open(history(2, 10, None), TurnKind::Chat, text))
}

#[test]
fn approvals_in_two_rounds() {
    let mut sim = chat("Publish the two notes")
        .reply(calls(
            "First the budget.",
            &[count("budget"), note("Budget")],
        ))
        .reply(calls("", &[note("Plan")]))
        .reply(says("Both are handled."));
    assert_eq!(sim.run(Start::Fresh), TurnStatus::Paused);
    assert_eq!(
        sim.run(decided(&[("call_3_1_1", true)])),
        TurnStatus::Paused
    );
    assert_eq!(
        sim.run(decided(&[("call_3_3_0", false)])),
        TurnStatus::Completed
    );
    sim.check();
    expect_file!["turn_run/approvals_in_two_rounds.txt"].assert_eq(&sim.golden());
}

#[test]
fn a_clarification_answers_the_other_calls_not_run_and_resumes_with_the_answer() {
    let mut sim = chat("Publish it")
        .reply(calls("", &[count("x"), question("Which note?")]))
        .reply(says("Published the blue one."));
    assert_eq!(sim.run(Start::Fresh), TurnStatus::Paused);
    assert_eq!(
        sim.run(Start::Answered("The blue one".into())),
        TurnStatus::Completed
    );
    sim.check();
    expect_file!["turn_run/clarification.txt"].assert_eq(&sim.golden());
}

#[test]
fn c2_an_overflow_mid_stream_withdraws_the_output_compacts_and_calls_again() {
    let mut sim = Sim::new(open(history(6, 40, None), TurnKind::Chat, "And Porto?"))
        .reply(vec![
            Step::Event(ModelEvent::TextDelta("Porto's budget".into())),
            Step::Overflow,
        ])
        .summary(good_summary())
        .reply(says("Porto's budget is 30,000 euros."));
    assert_eq!(sim.run(Start::Fresh), TurnStatus::Completed);
    sim.check();
    expect_file!["turn_run/overflow_mid_stream.txt"].assert_eq(&sim.golden());
}

#[test]
fn c1_automatic_compaction_at_85_percent_before_the_call() {
    let mut sim = Sim::new(open(
        history(6, 40, Some(90_000)),
        TurnKind::Chat,
        "And Porto?",
    ))
    .summary(good_summary())
    .reply(says("30,000 euros."));
    assert_eq!(sim.run(Start::Fresh), TurnStatus::Completed);
    sim.check();
    let turn = sim.turn();
    assert!(matches!(
        turn.messages[1].blocks.as_slice(),
        [Block::Compaction { .. }, Block::Text { .. }]
    ));
    assert_eq!(sim.usage[0].purpose.as_str(), "compaction");
    expect_file!["turn_run/compaction_at_85_percent.txt"].assert_eq(&sim.golden());
}

#[test]
fn c5_a_summary_failing_before_a_call_is_noted_and_the_call_goes_ahead() {
    let mut sim = Sim::new(open(
        history(6, 40, Some(90_000)),
        TurnKind::Chat,
        "And Porto?",
    ))
    .summary(cut_summary())
    .reply(says("30,000 euros."));
    assert_eq!(sim.run(Start::Fresh), TurnStatus::Completed);
    sim.check();
    let turn = sim.turn();
    assert!(matches!(
        turn.trace.as_slice(),
        [TraceEntry::CompactionFailed { .. }]
    ));
    assert!(
        turn.messages
            .iter()
            .flat_map(|m| &m.blocks)
            .all(|b| !matches!(b, Block::Compaction { .. })),
        "no block written"
    );
    expect_file!["turn_run/summary_fails_before_a_call.txt"].assert_eq(&sim.golden());
}

#[test]
fn c5_a_summary_failing_after_an_overflow_fails_the_turn() {
    let mut sim = Sim::new(open(history(6, 40, None), TurnKind::Chat, "And Porto?"))
        .reply(vec![Step::Overflow])
        .summary(cut_summary());
    assert_eq!(sim.run(Start::Fresh), TurnStatus::Failed);
    sim.check();
    assert_eq!(sim.usage.len(), 1, "one summary call");
    expect_file!["turn_run/summary_fails_after_an_overflow.txt"].assert_eq(&sim.golden());
}

#[test]
fn c2_a_second_overflow_fails_the_turn_after_one_compaction() {
    let mut sim = Sim::new(open(history(6, 40, None), TurnKind::Chat, "And Porto?"))
        .reply(vec![Step::Overflow])
        .summary(good_summary())
        .reply(vec![Step::Overflow]);
    assert_eq!(sim.run(Start::Fresh), TurnStatus::Failed);
    sim.check();
    assert_eq!(sim.usage.len(), 1, "one summary call");
    expect_file!["turn_run/second_overflow.txt"].assert_eq(&sim.golden());
}

#[test]
fn c6_a_compact_turn_is_its_block_alone_and_a_failed_one_writes_none() {
    let mut sim = Sim::new(open(
        history(6, 40, None),
        TurnKind::Compact,
        "/compact keep the Lisbon figures",
    ))
    .summary(good_summary());
    assert_eq!(sim.run(Start::Fresh), TurnStatus::Completed);
    sim.check();
    let turn = sim.turn();
    assert_eq!(turn.messages.len(), 2);
    assert!(matches!(
        turn.messages[1].blocks.as_slice(),
        [Block::Compaction { .. }]
    ));
    let mut failed =
        Sim::new(open(history(6, 40, None), TurnKind::Compact, "/compact")).summary(cut_summary());
    assert_eq!(failed.run(Start::Fresh), TurnStatus::Failed);
    failed.check();
    assert!(
        failed.turn().messages[1..]
            .iter()
            .all(|m| m.blocks.is_empty()),
        "nothing written"
    );
    expect_file!["turn_run/compact_command.txt"].assert_eq(&format!(
        "{}\n{}",
        sim.golden(),
        failed.golden()
    ));
}

#[test]
fn m10_a_cancel_while_a_tool_runs_cuts_the_turn_off_with_what_it_wrote() {
    let mut sim = chat("Wait for it").reply(calls("Waiting.", &[("stop", json!({}))]));
    assert_eq!(sim.run(Start::Fresh), TurnStatus::CutOff);
    sim.check();
    expect_file!["turn_run/cancel_while_a_tool_runs.txt"].assert_eq(&sim.golden());
}

#[test]
fn b3_a_model_that_never_ends_on_text_fails_the_turn() {
    let mut sim = chat("Think").reply(vec![
        Step::Event(ModelEvent::ThinkingDelta("Hmm.".into())),
        Step::Event(ModelEvent::Finished {
            reason: portal_core::model::FinishReason::Stop,
        }),
    ]);
    assert_eq!(sim.run(Start::Fresh), TurnStatus::Failed);
    sim.check();
    expect_file!["turn_run/never_ends_on_text.txt"].assert_eq(&sim.golden());
}

#[test]
fn the_call_limit_fails_a_turn_whose_model_keeps_calling() {
    let mut sim = chat("Count forever");
    sim.limits.model_calls = 3;
    for i in 0..5 {
        sim.replies
            .push_back(calls("", &[count(&format!("round {i}"))]));
    }
    assert_eq!(sim.run(Start::Fresh), TurnStatus::Failed);
    sim.check();
    assert_eq!(sim.replies.len(), 2, "three calls made");
    expect_file!["turn_run/call_limit.txt"].assert_eq(&sim.golden());
}

#[test]
fn a_tool_past_its_time_is_stopped_and_the_model_reads_why() {
    let mut sim = chat("Run the slow one")
        .reply(calls("", &[("slow", json!({}))]))
        .reply(says("It timed out."));
    assert_eq!(sim.run(Start::Fresh), TurnStatus::Completed);
    sim.check();
    expect_file!["turn_run/tool_timeout.txt"].assert_eq(&sim.golden());
}

#[test]
fn d2_a_stopping_server_cuts_a_streaming_turn_off_with_the_reason() {
    let mut sim = chat("Write a lot").reply(vec![
        Step::Event(ModelEvent::TextDelta("The first part".into())),
        Step::Shutdown,
    ]);
    assert_eq!(sim.run(Start::Fresh), TurnStatus::CutOff);
    sim.check();
    expect_file!["turn_run/shutdown.txt"].assert_eq(&sim.golden());
}

#[test]
fn a_status_that_cannot_be_written_is_recorded_failed_instead() {
    let mut sim = chat("Hello").reply(says("Hi."));
    sim.failing.push(("status", 0));
    sim.run(Start::Fresh);
    expect_file!["turn_run/status_write_fails.txt"].assert_eq(&sim.golden());
    let mut sim = chat("Hello").reply(says("Hi."));
    sim.failing.push(("text", 0));
    assert_eq!(sim.run(Start::Fresh), TurnStatus::Failed);
    sim.check();
}

#[test]
fn a_failed_model_call_fails_the_turn_with_the_hosts_words() {
    let mut sim = chat("Hello").reply(vec![
        Step::Event(ModelEvent::TextDelta("Half".into())),
        Step::Fail,
    ]);
    assert_eq!(sim.run(Start::Fresh), TurnStatus::Failed);
    sim.check();
    expect_file!["turn_run/model_fails.txt"].assert_eq(&sim.golden());
}

#[test]
fn arguments_that_are_not_an_object_are_answered_without_running() {
    let mut sim = chat("Count")
        .reply(vec![
            bad_call("count", "\"seven\""),
            Step::Event(ModelEvent::Finished {
                reason: portal_core::model::FinishReason::ToolCalls,
            }),
        ])
        .reply(says("Sorry."));
    assert_eq!(sim.run(Start::Fresh), TurnStatus::Completed);
    sim.check();
    expect_file!["turn_run/bad_arguments.txt"].assert_eq(&sim.golden());
}

#[test]
fn an_answer_that_comes_out_of_turn_leaves_the_run_as_it_was() {
    use portal_core::compaction::{CallPurpose, SummaryCall};
    use portal_core::turn_run::{Action, Loaded, RunLimits, TurnRun};
    use portal_core::usage::{Tokens, Usage};
    use std::sync::Arc;

    let store = open(history(2, 10, None), TurnKind::Chat, "Hello");
    let mut run = TurnRun::new(
        setup(3, RunLimits::default()),
        Arc::new(portal_core::tokens::EstimateCounter),
        Start::Fresh,
    );
    assert!(matches!(run.poll_action(0), Some(Action::Load(_))));
    run.handle_summary(SummaryCall {
        answer: Ok("late".into()),
        usage: Usage {
            purpose: CallPurpose::Compaction,
            model: "sim".into(),
            tokens: Tokens::reported(1, 1),
            price: None,
        },
    });
    run.handle_model_end();
    run.handle_gates(Vec::new());
    assert!(!run.is_finished(), "still waiting for its load");
    run.handle_loaded(Loaded {
        transcript: Arc::new(store),
        newest_compaction: None,
    });
    assert!(matches!(run.poll_action(0), Some(Action::CallModel(_))));
}
