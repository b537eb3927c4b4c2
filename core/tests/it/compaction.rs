//! The compaction planner's rules C1–C12 and B2, and the transcript shapes it must survive.

use crate::compaction_support;

use compaction_support::*;
use portal_core::attachment::{Attachment, Picture};
use portal_core::compaction::{
    Basis, CallGuard, CallPurpose, Cause, CompactCommand, CompactRefusal, CompactionError,
    CompactionPlan, Decision, Diagnostic, Outcome, Projection, SUMMARY_NOTE, SummaryFailure,
    check_compact, extractive, parse_compact, plan, project_input, reaches_threshold,
    record_context_size, settle, strip_references,
};
use portal_core::tokens::{TokenCounter, message_tokens};
use portal_core::{
    Block, CompactionTrigger, Message, Role, TraceEntry, Transcript, TurnKind, TurnStatus,
    TurnsCovered, validate,
};
use serde_json::json;

const WINDOW: u64 = 100_000;

fn guard() -> CallGuard {
    CallGuard::new(config(), WINDOW, 500)
}

fn projection(tokens: u64) -> Projection {
    Projection {
        tokens,
        basis: Basis::Estimated,
    }
}

fn planned(decision: Decision) -> CompactionPlan {
    match decision {
        Decision::Compact(plan) => *plan,
        other => panic!("expected a compaction, got {other:?}"),
    }
}

fn committed(outcome: Outcome) -> portal_core::compaction::Commit {
    match outcome {
        Outcome::Commit(commit) => *commit,
        other => panic!("expected a commit, got {other:?}"),
    }
}

fn plan_for(transcript: &Transcript, cause: Cause) -> CompactionPlan {
    plan(transcript, cause, None, WINDOW, &config(), &COUNTER).expect("a plan")
}

/// Five completed exchanges, then a running turn that read a document.
fn history() -> Transcript {
    let mut turns: Vec<_> = (1..=5)
        .map(|i| {
            exchange(
                &format!("Question number {i} about the budget"),
                &format!("Answer {i}."),
            )
        })
        .collect();
    turns.push(running(vec![
        user("Read the plan and tell me the total"),
        call("call_1", "read_document", "docs/plan.md"),
        result("call_1", "The total is 4,200 EUR."),
    ]));
    transcript(turns)
}

/// The host's side of a commit: the block opens the call's assistant message.
fn record(transcript: &mut Transcript, block: Block, answer: &str) {
    let turn = transcript.turns.last_mut().expect("a turn");
    turn.messages.push(Message::new(
        Role::Assistant,
        vec![block, Block::text(answer)],
    ));
    turn.status = TurnStatus::Completed;
}

// ---- C1: when to compact ----

#[test]
fn c1_compacts_when_projected_input_reaches_85_percent() {
    let t = history();
    assert!(matches!(
        guard().before_call(&t, &projection(84_999), &COUNTER),
        Decision::Proceed { trace: None }
    ));
    let plan = planned(guard().before_call(&t, &projection(85_000), &COUNTER));
    assert_eq!(plan.cause, Cause::Threshold { projected: 85_000 });
    assert!(reaches_threshold(85, 100, &config()));
    assert!(!reaches_threshold(84, 100, &config()));
    assert!(
        !reaches_threshold(u64::MAX, 0, &config()),
        "an unknown window never compacts"
    );
}

#[test]
fn c1_projection_is_reported_input_plus_what_was_added_since() {
    let mut t = transcript(vec![exchange("First question", "First answer.")]);
    t.turns[0].context_tokens = Some(50_000);
    t.turns.push(running(vec![user("Second question")]));
    t.turns[1].index = 2;
    let added = (message_tokens(&COUNTER, &say("First answer."))
        + message_tokens(&COUNTER, &user("Second question"))) as u64;
    let p = project_input(&t, &COUNTER, || unreachable!("the report is usable"));
    assert_eq!(
        p,
        Projection {
            tokens: 50_000 + added,
            basis: Basis::Reported {
                reported: 50_000,
                added
            }
        }
    );
}

#[test]
fn c1_projection_without_a_report_is_a_full_estimate() {
    let t = history();
    assert_eq!(
        project_input(&t, &COUNTER, || 1_234),
        Projection {
            tokens: 1_234,
            basis: Basis::Estimated
        }
    );
}

#[test]
fn c1_the_message_after_a_manual_compaction_does_not_trigger_another() {
    // Turn 1 read 90 % of the window; turn 2 compacted it by /compact; turn 3 is a new message.
    let mut t = transcript(vec![exchange("Long work", "Done.")]);
    t.turns[0].context_tokens = Some(90_000);
    let p = plan(&t, Cause::Command, None, WINDOW, &config(), &COUNTER).expect("plan");
    let commit = committed(settle(
        &p,
        Ok("## Requests\n- Long work".into()),
        &t,
        &COUNTER,
    ));
    let mut compact = done(vec![
        user("/compact"),
        Message::new(Role::Assistant, vec![commit.block]),
    ]);
    compact.kind = TurnKind::Compact;
    compact.index = 2;
    t.turns.push(compact);
    let mut next = running(vec![user("Now the next step")]);
    next.index = 3;
    t.turns.push(next);
    validate(&t).expect("valid transcript");

    let small = commit.live_tokens as u64 + 20;
    let p = project_input(&t, &COUNTER, || small);
    assert_eq!(
        p.basis,
        Basis::Estimated,
        "the stale 90 % report is not used"
    );
    assert!(matches!(
        guard().before_call(&t, &p, &COUNTER),
        Decision::Proceed { trace: None }
    ));
}

// ---- C2: overflow ----

#[test]
fn c2_overflow_compacts_and_the_call_is_retried() {
    let t = history();
    let mut g = guard();
    let plan = planned(g.on_overflow(&t, &COUNTER));
    assert_eq!(plan.cause, Cause::Overflow);
    let commit = committed(g.on_summary(&plan, Ok("## Requests\n- …".into()), &t, &COUNTER));
    assert!(matches!(
        commit.block,
        Block::Compaction {
            trigger: CompactionTrigger::Auto,
            ..
        }
    ));
}

#[test]
fn c2_a_second_overflow_after_compaction_fails_clearly_and_never_loops() {
    let t = history();
    let mut g = guard();
    let plan = planned(g.before_call(&t, &projection(90_000), &COUNTER));
    committed(g.on_summary(&plan, Ok("## Facts\n- x".into()), &t, &COUNTER));
    // Once compacted, the attempt never compacts again, whatever the host asks.
    assert!(matches!(
        g.before_call(&t, &projection(99_000), &COUNTER),
        Decision::Proceed { trace: None }
    ));
    for _ in 0..3 {
        match g.on_overflow(&t, &COUNTER) {
            Decision::Fail {
                error: CompactionError::TailTooLarge { window, .. },
                trace: TraceEntry::CompactionFailed { .. },
            } => assert_eq!(window, WINDOW),
            other => panic!("expected a clear failure, got {other:?}"),
        }
    }
}

// Shape: a tail too large for the window even after compaction.
#[test]
fn c2_a_tail_too_large_for_the_window_fails_without_a_summary_call() {
    let huge = "word ".repeat(120_000);
    let t = transcript(vec![
        exchange("First question", "First answer."),
        exchange("Second question", "Second answer."),
        exchange("Third question", "Third answer."),
        running(vec![user(&huge)]),
    ]);
    match guard().on_overflow(&t, &COUNTER) {
        Decision::Fail {
            error: CompactionError::TailTooLarge { tokens, window },
            ..
        } => assert!(tokens >= window),
        other => panic!("expected TailTooLarge, got {other:?}"),
    }
    // Before a call the same history is logged and the call goes ahead; its overflow then fails.
    let mut g = guard();
    assert!(matches!(
        g.before_call(&t, &projection(150_000), &COUNTER),
        Decision::Proceed {
            trace: Some(TraceEntry::CompactionFailed { .. })
        }
    ));
    assert!(matches!(
        g.on_overflow(&t, &COUNTER),
        Decision::Fail {
            error: CompactionError::TailTooLarge { .. },
            ..
        }
    ));
}

#[test]
fn c2_nothing_to_summarise_on_overflow_fails_clearly() {
    let t = transcript(vec![running(vec![user("Only message")])]);
    assert!(matches!(
        guard().on_overflow(&t, &COUNTER),
        Decision::Fail {
            error: CompactionError::TailTooLarge { .. },
            ..
        }
    ));
}

// ---- C3: the live list ----

#[test]
fn c3_after_compaction_the_list_is_the_summary_then_the_last_four_messages() {
    let mut t = history();
    let plan = plan_for(&t, Cause::Overflow);
    let commit = committed(settle(
        &plan,
        Ok("## Requests\n- all of them".into()),
        &t,
        &COUNTER,
    ));
    let all = flat(&t);
    let tail: Vec<Message> = all[all.len() - 4..].iter().map(|m| (*m).clone()).collect();
    assert_eq!(commit.live_messages.len(), 5);
    assert_eq!(&commit.live_messages[1..], tail.as_slice());
    let Block::Text { text } = &commit.live_messages[0].blocks[0] else {
        panic!("the summary note is text");
    };
    assert!(
        text.starts_with(&format!("[{SUMMARY_NOTE} (turns 1–5")),
        "{text}"
    );
    assert!(text.ends_with("## Requests\n- all of them"));
    let Block::Compaction { kept_messages, .. } = commit.block.clone() else {
        panic!("a compaction block");
    };
    assert_eq!(kept_messages, 4);

    // The block opens the call's assistant message and the transcript stays valid.
    record(&mut t, commit.block, "The total is 4,200 EUR.");
    validate(&t).expect("valid after compaction");
}

#[test]
fn c3_a_later_compaction_starts_from_the_newest_summary() {
    let mut t = history();
    let first = plan_for(&t, Cause::Overflow);
    let commit = committed(settle(
        &first,
        Ok("## Requests\n- FIRST SUMMARY".into()),
        &t,
        &COUNTER,
    ));
    record(&mut t, commit.block, "The total is 4,200 EUR.");
    for i in 7..=9 {
        let mut turn = exchange(&format!("Follow-up {i} on the total"), "Noted.");
        turn.index = i;
        t.turns.push(turn);
    }
    let second = plan_for(&t, Cause::Overflow);
    let history = history_part(second.request.history_text());
    assert!(history.contains("FIRST SUMMARY"));
    assert!(
        !history.contains("Question number 1 about"),
        "messages before the newest summary are not replayed: {history}"
    );
    assert!(
        history.contains("Read the plan and tell me the total"),
        "the earlier tail is summarised"
    );
    assert_eq!(second.covers, TurnsCovered { first: 1, last: 7 });
}

// ---- C4: the kept tail's shift ----

// Shape: the tail would open on a tool result.
#[test]
fn c4_a_tail_that_would_open_on_a_tool_result_takes_its_call() {
    // The last four messages are [result(call_1), user, call(call_2), result(call_2)].
    let t = transcript(vec![
        turn(
            TurnStatus::CutOff,
            vec![
                user("Look it up"),
                call("call_1", "search", "prices"),
                result("call_1", "Found."),
            ],
        ),
        running(vec![
            user("And the other one"),
            call("call_2", "search", "more"),
            result("call_2", "Found more."),
        ]),
    ]);
    let plan = plan_for(&t, Cause::Overflow);
    assert_eq!(plan.tail.start, at(1, 1));
    assert_eq!(plan.tail.messages, 5);
    assert!(plan.diagnostics.contains(&Diagnostic::TailShiftedEarlier {
        call_ids: vec!["call_1".into()]
    }));
}

// Shape: a parallel batch split by the cut.
#[test]
fn c4_a_parallel_batch_split_by_the_cut_stays_whole() {
    let t = transcript(vec![
        exchange("Start", "Started."),
        turn(
            TurnStatus::CutOff,
            vec![
                user("Read all three"),
                calls(&["call_a", "call_b", "call_c"]),
                results(&["call_a", "call_b", "call_c"]),
            ],
        ),
        running(vec![
            user("Now write the summary file"),
            call("call_d", "write_file", "out/summary.md"),
            result("call_d", "Written."),
        ]),
    ]);
    // Four messages back is the batch's results; the tail takes the batch's calls too.
    let plan = plan_for(&t, Cause::Overflow);
    assert_eq!(plan.tail.start, at(2, 1));
    let commit = committed(settle(&plan, Ok("## Facts\n- f".into()), &t, &COUNTER));
    let batch = &commit.live_messages[1];
    assert_eq!(batch.blocks.len(), 3);
    assert_eq!(commit.live_messages[2].blocks.len(), 3);
}

// Shape: a call that never returned.
#[test]
fn c4_a_call_that_never_returned_goes_to_the_summary_not_the_tail() {
    let t = transcript(vec![
        exchange("Start", "Started."),
        turn(
            TurnStatus::CutOff,
            vec![
                user("Search the archive"),
                calls(&["call_1", "call_2"]),
                results(&["call_1"]),
            ],
        ),
        running(vec![user("Try again please")]),
    ]);
    validate(&t).expect("valid");
    let plan = plan_for(&t, Cause::Overflow);
    assert_eq!(
        plan.tail.start,
        at(3, 0),
        "the tail starts after the broken batch"
    );
    assert!(plan.diagnostics.contains(&Diagnostic::TailShiftedLater {
        call_ids: vec!["call_2".into()]
    }));
    let history = plan.request.history_text();
    assert!(
        history.contains("<tool_result ref=\"call_2\" outcome=\"never returned\"/>"),
        "{history}"
    );
    assert!(history.contains("<turn number=\"2\" status=\"cut off\">"));
}

// Shape: compaction mid-turn with a call still running.
#[test]
fn c4_mid_turn_with_a_call_still_running_keeps_it_in_the_tail() {
    let mut t = transcript(vec![
        exchange("Start", "Started."),
        exchange("Continue", "Continued."),
        running(vec![
            user("Build the report"),
            call("call_1", "read_document", "docs/a.md"),
            result("call_1", "A."),
            call("call_2", "render", "out/report.pdf"),
        ]),
    ]);
    let plan = plan_for(&t, Cause::Threshold { projected: 90_000 });
    assert_eq!(plan.tail.start, at(3, 0));
    assert!(
        !plan.request.history_text().contains("call_2"),
        "a running call is not summarised"
    );

    // Settled before the result arrives: the host must still answer the running call.
    let early = committed(settle(
        &plan,
        Ok("## Open work\n- [ ] report".into()),
        &t,
        &COUNTER,
    ));
    assert_eq!(early.still_running, vec!["call_2".to_string()]);

    // Settled after the result arrived: kept_messages counts it.
    t.turns[2].messages.push(result("call_2", "Rendered."));
    let late = committed(settle(
        &plan,
        Ok("## Open work\n- [ ] report".into()),
        &t,
        &COUNTER,
    ));
    assert!(late.still_running.is_empty());
    let Block::Compaction { kept_messages, .. } = late.block.clone() else {
        panic!("a compaction block");
    };
    assert_eq!(kept_messages, 5);
    assert_eq!(late.live_messages.len(), 6);
    record(&mut t, late.block, "The report is ready.");
    validate(&t).expect("valid after compaction");
}

// ---- C5: failure policy ----

// Shape: a summary that fails (empty answer, error, stream cut off) commits nothing.
#[test]
fn c5_a_summary_that_fails_before_a_call_is_logged_and_the_call_goes_ahead() {
    let failures: Vec<Result<String, SummaryFailure>> = vec![
        Ok(String::new()),
        Ok("  \n ".into()),
        Ok("Turns 1–6".into()),
        Err(SummaryFailure::Error("HTTP 500".into())),
        Err(SummaryFailure::CutOff),
    ];
    let t = history();
    let before = t.clone();
    for answer in failures {
        let mut g = guard();
        let plan = planned(g.before_call(&t, &projection(90_000), &COUNTER));
        match g.on_summary(&plan, answer.clone(), &t, &COUNTER) {
            Outcome::Proceed {
                trace: TraceEntry::CompactionFailed { reason },
            } => assert!(!reason.is_empty()),
            other => panic!("{answer:?}: expected Proceed, got {other:?}"),
        }
        // The attempt does not try again before its call.
        assert!(matches!(
            g.before_call(&t, &projection(90_000), &COUNTER),
            Decision::Proceed { trace: None }
        ));
        // If the call then overflows, the turn fails rather than looping.
        assert!(matches!(
            g.on_overflow(&t, &COUNTER),
            Decision::Fail {
                error: CompactionError::SummaryFailedAfterOverflow { .. },
                ..
            }
        ));
    }
    assert_eq!(t, before, "nothing in the transcript is lost or rewritten");
}

#[test]
fn c5_a_summary_that_fails_after_an_overflow_fails_the_turn() {
    let t = history();
    for failure in [
        SummaryFailure::Empty,
        SummaryFailure::CutOff,
        SummaryFailure::Error("x".into()),
    ] {
        let mut g = guard();
        let plan = planned(g.on_overflow(&t, &COUNTER));
        match g.on_summary(&plan, Err(failure.clone()), &t, &COUNTER) {
            Outcome::FailTurn {
                error: CompactionError::SummaryFailedAfterOverflow { failure: f },
                trace: TraceEntry::CompactionFailed { .. },
            } => assert_eq!(f, failure),
            other => panic!("expected FailTurn, got {other:?}"),
        }
    }
}

// ---- C6, C7: /compact ----

#[test]
fn c6_parses_compact_and_its_instructions() {
    let cases: &[(&str, Option<Option<&str>>)] = &[
        ("/compact", Some(None)),
        ("  /compact   ", Some(None)),
        (
            "/compact keep the Spanish names",
            Some(Some("keep the Spanish names")),
        ),
        (
            "/compact\nfirst line\nsecond line",
            Some(Some("first line\nsecond line")),
        ),
        ("/compacting now", None),
        ("please /compact", None),
        ("/market-research /compact", None),
        ("", None),
    ];
    for (text, expected) in cases {
        let parsed = parse_compact(text);
        let expected = expected.map(|i| CompactCommand {
            instructions: i.map(String::from),
        });
        assert_eq!(parsed, expected, "{text:?}");
    }
}

#[test]
fn c6_compact_summarises_the_history_keeps_nothing_and_ends_the_turn() {
    let mut t = transcript(vec![
        exchange("Plan a trip to Kyoto", "Here is a plan."),
        exchange("Add a budget", "Budget added."),
    ]);
    check_compact(&t, &[]).expect("allowed");
    let mut compact = turn(TurnStatus::Running, vec![user("/compact keep the budget")]);
    compact.kind = TurnKind::Compact;
    compact.index = 3;
    t.turns.push(compact);
    let command = parse_compact("/compact keep the budget").expect("a command");
    let plan = plan(
        &t,
        Cause::Command,
        command.instructions.as_deref(),
        WINDOW,
        &config(),
        &COUNTER,
    )
    .expect("plan");
    assert_eq!(plan.covers, TurnsCovered { first: 1, last: 2 });
    assert_eq!(plan.tail.start, None);
    let text = plan.request.history_text();
    assert!(text.contains("<user_instructions>\nkeep the budget\n</user_instructions>"));
    assert!(
        !text.contains("/compact"),
        "the command itself is not history"
    );
    let commit = committed(settle(
        &plan,
        Ok("## Requests\n- trip".into()),
        &t,
        &COUNTER,
    ));
    assert_eq!(commit.live_messages.len(), 1);
    let Block::Compaction {
        trigger,
        kept_messages,
        ..
    } = &commit.block
    else {
        panic!("a compaction block");
    };
    assert_eq!((*trigger, *kept_messages), (CompactionTrigger::Manual, 0));
    let turn = t.turns.last_mut().expect("turn");
    turn.messages
        .push(Message::new(Role::Assistant, vec![commit.block]));
    turn.status = TurnStatus::Completed;
    validate(&t).expect("a valid /compact turn");
}

#[test]
fn c6_a_failed_compact_summary_fails_the_turn() {
    let t = history();
    let mut t = t;
    t.turns.last_mut().expect("turn").status = TurnStatus::Completed;
    t.turns
        .last_mut()
        .expect("turn")
        .messages
        .push(say("Done."));
    let plan = plan(&t, Cause::Command, None, WINDOW, &config(), &COUNTER).expect("plan");
    assert!(matches!(
        settle(&plan, Err(SummaryFailure::CutOff), &t, &COUNTER),
        Outcome::FailTurn {
            error: CompactionError::CommandFailed { .. },
            ..
        }
    ));
}

// Shape: /compact during a running turn, right after a compaction, or with an attachment.
#[test]
fn c7_compact_is_refused_while_running_paused_right_after_a_compaction_or_with_attachments() {
    let base = transcript(vec![exchange("Plan a trip", "Planned.")]);
    let with_status = |status| {
        let mut t = base.clone();
        t.turns[0].status = status;
        t
    };
    let picture = Attachment::Picture(Picture {
        id: "pic_1".into(),
        filename: "map.png".into(),
        media_type: "image/png".into(),
        width: 10,
        height: 10,
    });
    let compacted = {
        let mut t = base.clone();
        let p = plan(&t, Cause::Command, None, WINDOW, &config(), &COUNTER).expect("plan");
        let commit = committed(settle(&p, Ok("## Requests\n- trip".into()), &t, &COUNTER));
        let mut compact = done(vec![
            user("/compact"),
            Message::new(Role::Assistant, vec![commit.block]),
        ]);
        compact.kind = TurnKind::Compact;
        compact.index = 2;
        t.turns.push(compact);
        t
    };
    let cases: Vec<RefusalCase> = vec![
        ("idle", base.clone(), vec![], Ok(())),
        (
            "running",
            with_status(TurnStatus::Running),
            vec![],
            Err(CompactRefusal::TurnRunning),
        ),
        (
            "paused",
            with_status(TurnStatus::Paused),
            vec![],
            Err(CompactRefusal::TurnPaused),
        ),
        (
            "attachment",
            base.clone(),
            vec![picture],
            Err(CompactRefusal::Attachments),
        ),
        (
            "right after a compaction",
            compacted.clone(),
            vec![],
            Err(CompactRefusal::NothingSinceLastCompaction),
        ),
        (
            "empty",
            Transcript::new(),
            vec![],
            Err(CompactRefusal::EmptyConversation),
        ),
    ];
    for (name, t, attachments, expected) in cases {
        assert_eq!(check_compact(&t, &attachments), expected, "{name}");
    }
    // Writing after the compaction allows it again.
    let mut later = compacted;
    let mut turn = exchange("Now book the hotel", "Booked.");
    turn.index = 3;
    later.turns.push(turn);
    assert_eq!(check_compact(&later, &[]), Ok(()));
    // Every refusal tells the user what to do.
    for refusal in [
        CompactRefusal::TurnRunning,
        CompactRefusal::TurnPaused,
        CompactRefusal::NothingSinceLastCompaction,
        CompactRefusal::Attachments,
    ] {
        let message = refusal.to_string();
        assert!(message.contains(';'), "{message}");
    }
}

#[test]
fn c7_an_auto_compaction_allows_compact_once_something_follows_it() {
    let mut t = history();
    let p = plan_for(&t, Cause::Overflow);
    let commit = committed(settle(&p, Ok("## Requests\n- x".into()), &t, &COUNTER));
    // The call after the compaction failed: its message holds the block alone.
    let mut failed = t.clone();
    let last = failed.turns.last_mut().expect("turn");
    last.messages
        .push(Message::new(Role::Assistant, vec![commit.block.clone()]));
    last.status = TurnStatus::Failed;
    assert_eq!(
        check_compact(&failed, &[]),
        Err(CompactRefusal::NothingSinceLastCompaction)
    );
    // The call answered after the block: something was written since.
    record(&mut t, commit.block, "The total is 4,200 EUR.");
    assert_eq!(check_compact(&t, &[]), Ok(()));
}

/// A name, a transcript, the message's attachments and the expected answer.
type RefusalCase = (
    &'static str,
    Transcript,
    Vec<Attachment>,
    Result<(), CompactRefusal>,
);

// ---- C8–C10: the summary prompt ----

#[test]
fn c8_the_prompt_asks_for_the_sections_verbatim_requests_and_referenced_facts() {
    let long_request = format!("Compare these vendors: {}", "very long detail ".repeat(400));
    let t = transcript(vec![
        exchange(&long_request, "Compared."),
        running(vec![
            user("Check the totals"),
            call("call_9", "read_document", "docs/totals.xlsx"),
            result("call_9", "Total: 4,200 EUR"),
        ]),
    ]);
    let plan = plan_for(&t, Cause::Overflow);
    let system = &plan.request.system;
    for heading in [
        "## Requests",
        "## Decisions",
        "## Work done",
        "## Open work",
        "## Facts",
    ] {
        assert!(system.contains(heading), "{heading}");
    }
    assert!(system.contains("quoted verbatim"));
    assert!(
        system.contains("[ref:call_12]"),
        "the reference form is shown"
    );
    assert!(system.contains("Work done carries no references"));
    assert!(
        plan.request.history_text().contains(&long_request),
        "requests reach the summary whole"
    );
}

#[test]
fn c9_covers_start_at_turn_one_and_the_summary_opens_with_them() {
    let t = history();
    let plan = plan_for(&t, Cause::Overflow);
    assert_eq!(plan.covers, TurnsCovered { first: 1, last: 5 });
    assert!(plan.request.system.contains("\nTurns 1–5\n"));
    let commit = committed(settle(&plan, Ok("## Requests\n- …".into()), &t, &COUNTER));
    let Block::Compaction {
        summary, covers, ..
    } = &commit.block
    else {
        panic!("a compaction block");
    };
    assert!(summary.starts_with("Turns 1–5\n\n## Requests"), "{summary}");
    assert_eq!(covers.first, 1);
}

#[test]
fn c9_an_earlier_summary_is_named_by_its_note_and_carried_over() {
    let mut t = history();
    let first = plan_for(&t, Cause::Overflow);
    let commit = committed(settle(
        &first,
        Ok("## Facts\n- total 4,200 EUR [ref:call_1]".into()),
        &t,
        &COUNTER,
    ));
    record(&mut t, commit.block, "4,200 EUR.");
    let mut turn = exchange("Thanks, now the schedule", "Scheduled.");
    turn.index = 7;
    t.turns.push(turn);
    let second = plan_for(&t, Cause::Overflow);
    let system = &second.request.system;
    assert!(system.contains(&format!("replayed under the note \"{SUMMARY_NOTE}\"")));
    assert!(system.contains("Carry everything in it into the new summary"));
    assert!(
        second.request.history_text().contains(
            "<earlier_summary note=\"Summary of the conversation so far\" turns=\"1–5\">"
        )
    );
    assert_eq!(second.covers.first, 1);
}

#[test]
fn c10_a_spanish_history_whose_latest_eight_paragraphs_are_japanese_asks_for_japanese() {
    let t = spanish_then_japanese();
    let plan = plan_for(&t, Cause::Overflow);
    let text = plan.request.history_text();
    let sample = text
        .split("<language_sample>")
        .nth(1)
        .expect("a language sample");
    assert_eq!(sample.matches("<paragraph>").count(), 8);
    assert!(
        !sample.contains("Hola"),
        "the Spanish paragraphs are older than the sample"
    );
    for japanese in JAPANESE {
        assert!(sample.contains(japanese), "{japanese}");
    }
    assert!(plan
        .request
        .system
        .contains("write the summary in the language that most of the user's paragraphs quoted under <language_sample> are written in"));
    assert!(
        plan.request
            .system
            .contains("section headings stay in English")
    );
}

#[test]
fn c10_slash_commands_and_two_word_paragraphs_are_left_out_of_the_sample() {
    let t = transcript(vec![
        exchange("/fact-check revisa estas cifras por favor", "Revisado."),
        exchange("Vale, gracias", "De nada."),
        exchange("DOC-2291-B", "Recibido."),
        exchange(
            "[The picture plano.png is no longer available]",
            "Entendido.",
        ),
        exchange(
            "Necesito el presupuesto final\n\nCon todos los impuestos incluidos, por favor",
            "Aquí está.",
        ),
        running(vec![user("¿Puedes resumirlo todo?")]),
    ]);
    let sample = portal_core::compaction::language_sample(&t, &config());
    assert_eq!(
        sample,
        vec![
            "Necesito el presupuesto final",
            "Con todos los impuestos incluidos, por favor",
            "¿Puedes resumirlo todo?",
        ]
    );
}

#[test]
fn c10_a_japanese_sentence_counts_as_at_least_three_words() {
    use portal_core::compaction::word_count;
    assert!(word_count("来週の会議の資料を準備してください") >= 3);
    assert!(word_count("はい") < 3);
    let t = transcript(vec![running(vec![user(
        "来週の会議の資料を準備してください",
    )])]);
    assert_eq!(
        portal_core::compaction::language_sample(&t, &config()).len(),
        1
    );
}

// ---- C11: the summary call ----

#[test]
fn c11_both_triggers_read_the_same_prompt() {
    let t = history();
    let auto = plan_for(&t, Cause::Threshold { projected: 90_000 });
    let overflow = plan_for(&t, Cause::Overflow);
    assert_eq!(auto.request, overflow.request);
    // A manual compaction (no tail) reads the same system text; instructions only add to it.
    let plain = plan(&t, Cause::Command, None, WINDOW, &config(), &COUNTER).expect("plan");
    let with = plan(
        &t,
        Cause::Command,
        Some("keep figures"),
        WINDOW,
        &config(),
        &COUNTER,
    )
    .expect("plan");
    assert!(
        with.request.system.starts_with(
            plain
                .request
                .system
                .trim_end_matches("Write only the summary.")
        )
    );
    assert!(
        with.request
            .history_text()
            .starts_with(plain.request.history_text())
    );
}

#[test]
fn c11_compaction_calls_carry_no_context_size() {
    let mut t = history();
    let turn = t.turns.last_mut().expect("turn");
    assert!(record_context_size(turn, CallPurpose::Turn, 1_000));
    for purpose in [
        CallPurpose::Compaction,
        CallPurpose::Summary,
        CallPurpose::Review,
    ] {
        assert!(!record_context_size(turn, purpose, 99_999));
    }
    assert_eq!(turn.context_tokens, Some(1_000));
    turn.kind = TurnKind::Compact;
    assert!(!record_context_size(turn, CallPurpose::Turn, 5));
}

// ---- C12, B2 ----

#[test]
fn c12_references_are_taken_out_for_display() {
    let cases = [
        ("Total 4,200 EUR [ref:call_3].", "Total 4,200 EUR."),
        ("A [ref:c1] and B [ref:c2]\n- C [ref:c_3]", "A and B\n- C"),
        ("東京の会議 [ref:call_7]。", "東京の会議。"),
        (
            "keep [ref:] and [ref: a b] and [ref:x",
            "keep [ref:] and [ref: a b] and [ref:x",
        ),
        ("no refs 👩🏽‍💻", "no refs 👩🏽‍💻"),
    ];
    for (summary, shown) in cases {
        assert_eq!(strip_references(summary), shown, "{summary:?}");
    }
}

#[test]
fn b2_the_block_holds_summary_trigger_and_turns_covered() {
    let t = history();
    let plan = plan_for(&t, Cause::Threshold { projected: 90_000 });
    let commit = committed(settle(&plan, Ok("## Requests\n- x".into()), &t, &COUNTER));
    let json = serde_json::to_value(&commit.block).expect("serialises");
    assert_eq!(json["type"], "compaction");
    assert_eq!(json["trigger"], "AUTO");
    assert_eq!(json["covers"], json!({ "first": 1, "last": 5 }));
    assert_eq!(json["summary"], "Turns 1–5\n\n## Requests\n- x");
}

// ---- Shapes ----

// Shape: 25 turns with a 12-call turn.
#[test]
fn shape_25_turns_with_a_12_call_turn() {
    let mut turns: Vec<_> = (1..=24)
        .map(|i| {
            exchange(
                &format!("Request {i}: check section {i} of the contract"),
                &format!("Section {i} is fine."),
            )
        })
        .collect();
    let mut last = vec![user("Request 25: audit every appendix")];
    for c in 1..=12 {
        let id = format!("call_{c}");
        last.push(call(
            &id,
            "read_document",
            &format!("contract/appendix-{c}.pdf"),
        ));
        last.push(result(
            &id,
            &format!("Appendix {c} sets a fee of {c}00 EUR."),
        ));
    }
    turns.push(running(last));
    let t = transcript(turns);
    validate(&t).expect("valid");
    let plan = plan_for(&t, Cause::Overflow);
    assert_eq!(plan.covers, TurnsCovered { first: 1, last: 25 });
    assert_eq!(plan.tail.start, at(25, 21));
    assert_eq!(plan.tail.messages, 4);
    let history = plan.request.history_text();
    for i in 1..=25 {
        assert!(
            history.contains(&format!("Request {i}: ")),
            "request {i} is summarised"
        );
    }
    assert_eq!(
        history.matches("<tool_call ").count(),
        10,
        "calls 11 and 12 stay in the tail"
    );
    let summary = extractive::summarise(&plan.request);
    assert_eq!(
        summary,
        extractive::summarise(&plan.request),
        "deterministic"
    );
    assert!(summary.starts_with("Turns 1–25\n"));
    let work = summary
        .split("## Work done")
        .nth(1)
        .and_then(|s| s.split("## Open work").next())
        .expect("a work done section");
    assert!(
        !work.contains("[ref:"),
        "C8: work done carries no references"
    );
    assert!(summary.contains("- Turn 25: Request 25: audit every appendix"));
    assert!(summary.contains("- Turn 25: read_document contract/appendix-10.pdf"));
    assert!(summary.contains("Appendix 10 sets a fee of 1000 EUR. [ref:call_10]"));
}

// Shape: an assistant message of only thinking and calls.
#[test]
fn shape_an_assistant_message_of_only_thinking_and_calls() {
    let thinking_call = Message::new(
        Role::Assistant,
        vec![
            Block::Thinking {
                text: "SECRET REASONING".into(),
            },
            call_block("call_1", "search", json!({ "query": "flights" })),
        ],
    );
    let t = transcript(vec![
        done(vec![
            user("Find flights"),
            thinking_call.clone(),
            result("call_1", "3 flights."),
            say("Three."),
        ]),
        exchange("Cheapest?", "The first."),
        running(vec![
            user("Book it"),
            thinking_call_2(),
            result("call_2", "Booked."),
        ]),
    ]);
    let plan = plan_for(&t, Cause::Overflow);
    let history = plan.request.history_text();
    assert!(
        !history.contains("SECRET"),
        "thinking never reaches the summary"
    );
    assert!(!history.contains("<assistant>\n\n</assistant>"));
    assert!(history.contains(
        "<tool_call ref=\"call_1\" name=\"search\">\n{\"query\":\"flights\"}\n</tool_call>"
    ));
    assert_eq!(plan.tail.start, at(2, 1));
    let commit = committed(settle(&plan, Ok("## Facts\n- f".into()), &t, &COUNTER));
    assert_eq!(
        commit.live_messages[3],
        thinking_call_2(),
        "the tail keeps the message verbatim"
    );
}

fn thinking_call_2() -> Message {
    Message::new(
        Role::Assistant,
        vec![
            Block::Thinking {
                text: "more".into(),
            },
            call_block("call_2", "book", json!({ "flight": "AB123" })),
        ],
    )
}

// Shape: huge arguments.
#[test]
fn shape_huge_arguments_are_cut_in_the_request_and_kept_in_the_tail() {
    let huge = "ß".repeat(1_000_000);
    let big_call = Message::new(
        Role::Assistant,
        vec![call_block(
            "call_1",
            "write_file",
            json!({ "path": "out/big.txt", "content": huge }),
        )],
    );
    let t = transcript(vec![
        done(vec![
            user("Write it"),
            big_call.clone(),
            result("call_1", "Written."),
            say("Done."),
        ]),
        exchange("Again?", "No."),
        exchange("Fine", "Ok."),
    ]);
    let plan = plan_for(&t, Cause::Overflow);
    let history = plan.request.history_text();
    assert!(history.len() < 20_000, "request is {} bytes", history.len());
    let arguments = history
        .split("<tool_call ref=\"call_1\" name=\"write_file\">\n")
        .nth(1)
        .and_then(|rest| rest.split('\n').next())
        .expect("the call's arguments");
    let parsed: serde_json::Value = serde_json::from_str(arguments).expect("still valid JSON");
    assert_eq!(parsed["path"], "out/big.txt");
    assert!(
        parsed["content"]
            .as_str()
            .expect("a string")
            .ends_with("…[cut]")
    );
}

#[test]
fn shape_the_request_fits_its_budget_by_showing_less_of_the_tool_output() {
    let mut turns = Vec::new();
    for i in 1..=30 {
        let id = format!("call_{i}");
        turns.push(done(vec![
            user(&format!("Read part {i}")),
            call(&id, "read_document", &format!("docs/part-{i}.md")),
            result(&id, &"lorem ipsum dolor sit amet ".repeat(200)),
            say("Read."),
        ]));
    }
    let t = transcript(turns);
    let window = 10_000;
    let plan = plan(&t, Cause::Overflow, None, window, &config(), &COUNTER).expect("plan");
    let tokens = COUNTER.count(&plan.request.system)
        + portal_core::tokens::messages_tokens(&COUNTER, &plan.request.messages);
    assert!(tokens as u64 <= window * 75 / 100, "{tokens} tokens");
    assert!(
        plan.diagnostics
            .iter()
            .any(|d| matches!(d, Diagnostic::DetailReduced { .. }))
    );
    assert!(plan.request.history_text().contains("[cut: "));
}

// ---- fixtures ----

/// The request's history, without the language sample and instructions after it.
fn history_part(text: &str) -> &str {
    text.split("</history>").next().unwrap_or_default()
}

const JAPANESE: [&str; 8] = [
    "来週の会議の資料を準備してください",
    "予算の表を更新しました",
    "東京支社の数字も入れてください",
    "締め切りは金曜日の午後です",
    "グラフの色を変えてもらえますか",
    "最後のページに要約を追加してください",
    "田中さんにも送ってください",
    "ありがとうございます、助かりました",
];

fn spanish_then_japanese() -> Transcript {
    let mut turns = vec![
        exchange("Hola, necesito ayuda con el informe trimestral", "Claro."),
        exchange(
            "El informe tiene que incluir las ventas de Madrid\n\nY también las de Barcelona y Valencia",
            "Entendido.",
        ),
        exchange(
            "Revisa las cifras del segundo trimestre, por favor",
            "Revisadas.",
        ),
    ];
    for (i, japanese) in JAPANESE.iter().enumerate() {
        turns.push(done(vec![
            user(japanese),
            say(&format!("了解しました ({i}).")),
        ]));
    }
    turns.push(running(vec![user("はい")]));
    transcript(turns)
}

#[test]
fn c11_the_summary_call_is_a_prompt_without_tools_that_a_model_can_recognise() {
    let t = history();
    let plan = plan_for(&t, Cause::Overflow);
    let prompt = plan.request.prompt();
    assert!(prompt.tools.is_empty());
    assert_eq!(prompt.effort, None);
    assert!(prompt.system_text().contains("## Requests"));
    assert_eq!(
        portal_core::compaction::SummaryRequest::from_prompt(&prompt),
        Some(plan.request.clone())
    );
    // A turn's prompt is not a summary request.
    let mut turn_prompt = prompt;
    turn_prompt.layers[0].text = "You are the portal's assistant.".into();
    assert_eq!(
        portal_core::compaction::SummaryRequest::from_prompt(&turn_prompt),
        None
    );
}
