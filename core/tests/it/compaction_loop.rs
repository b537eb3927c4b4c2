//! A host driving one call attempt through the [`CallGuard`], against scripted model and summary
//! answers (rules C1, C2, C5): each case names its rules, what the model does and what the host
//! must end with. However the model answers, an attempt makes at most one summary call and two
//! model calls, and ends; a failed or refused compaction leaves the transcript as it was.

use crate::compaction_support;

use compaction_support::*;
use portal_core::compaction::{
    Basis, CallGuard, CompactionError, Decision, Outcome, Projection, SummaryFailure,
};
use portal_core::{Block, CompactionTrigger, TraceEntry, Transcript};

const WINDOW: u64 = 100_000;

/// What the model does with each call of the attempt, in order.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Call {
    Answers,
    Overflows,
}

/// How the attempt ended.
#[derive(Debug, Clone, PartialEq)]
enum Ended {
    Answered,
    Failed(Failure),
}

/// The kind of a turn-failing error, without its numbers.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Failure {
    TailTooLarge,
    SummaryFailedAfterOverflow,
}

/// What the host saw during one attempt.
#[derive(Debug, Clone, PartialEq)]
struct Run {
    ended: Ended,
    summary_calls: usize,
    model_calls: usize,
    committed: bool,
    failure_traces: usize,
}

/// Runs one call attempt as the server's turn loop does. The loop is bounded only to turn a
/// regression into a failed test rather than a hung one.
fn attempt(
    t: &Transcript,
    projected: u64,
    calls: &[Call],
    summaries: &[Result<String, SummaryFailure>],
) -> Run {
    let mut guard = CallGuard::new(config(), WINDOW, 500);
    let projection = Projection {
        tokens: projected,
        basis: Basis::Estimated,
    };
    let mut run = Run {
        ended: Ended::Answered,
        summary_calls: 0,
        model_calls: 0,
        committed: false,
        failure_traces: 0,
    };
    let mut decision = guard.before_call(t, &projection, &COUNTER);
    for _ in 0..16 {
        decision = match decision {
            Decision::Proceed { trace } => {
                run.failure_traces += usize::from(trace.is_some());
                let call = calls
                    .get(run.model_calls)
                    .copied()
                    .unwrap_or(Call::Overflows);
                run.model_calls += 1;
                if call == Call::Answers {
                    run.ended = Ended::Answered;
                    return run;
                }
                guard.on_overflow(t, &COUNTER)
            }
            Decision::Compact(plan) => {
                let answer = summaries
                    .get(run.summary_calls)
                    .cloned()
                    .unwrap_or(Ok("## Facts\n- more".into()));
                run.summary_calls += 1;
                match guard.on_summary(&plan, answer, t, &COUNTER) {
                    Outcome::Commit(commit) => {
                        assert!(matches!(
                            commit.block,
                            Block::Compaction {
                                trigger: CompactionTrigger::Auto,
                                ..
                            }
                        ));
                        run.committed = true;
                        Decision::Proceed { trace: None }
                    }
                    Outcome::Proceed { trace } => Decision::Proceed { trace: Some(trace) },
                    Outcome::FailTurn { error, trace } => Decision::Fail { error, trace },
                }
            }
            Decision::Fail { error, trace } => {
                assert!(matches!(trace, TraceEntry::CompactionFailed { .. }));
                assert!(
                    error.to_string().contains(';'),
                    "the error says what to do: {error}"
                );
                run.failure_traces += 1;
                run.ended = Ended::Failed(match error {
                    CompactionError::TailTooLarge { .. } => Failure::TailTooLarge,
                    CompactionError::SummaryFailedAfterOverflow { .. } => {
                        Failure::SummaryFailedAfterOverflow
                    }
                    CompactionError::CommandFailed { .. } => {
                        panic!("an agent-loop call never fails as a /compact")
                    }
                });
                return run;
            }
        };
    }
    panic!("the attempt did not end: {run:?}");
}

/// Five finished exchanges and a running turn: enough history to summarise.
fn history() -> Transcript {
    let mut turns: Vec<_> = (1..=5)
        .map(|i| {
            exchange(
                &format!("Question {i} on the budget"),
                &format!("Answer {i}."),
            )
        })
        .collect();
    turns.push(running(vec![
        user("Read the plan"),
        call("call_1", "read_document", "docs/plan.md"),
        result("call_1", "The total is 4,200 EUR."),
    ]));
    transcript(turns)
}

/// The same history whose newest message alone is larger than the window.
fn huge_tail() -> Transcript {
    let mut t = history();
    let mut turn = running(vec![user(&"word ".repeat(120_000))]);
    turn.index = 7;
    t.turns.last_mut().expect("a turn").status = portal_core::TurnStatus::Completed;
    t.turns
        .last_mut()
        .expect("a turn")
        .messages
        .push(say("Done."));
    t.turns.push(turn);
    t
}

struct Case {
    name: &'static str,
    transcript: Transcript,
    projected: u64,
    calls: &'static [Call],
    summaries: Vec<Result<String, SummaryFailure>>,
    expected: Run,
}

fn run(ended: Ended, summary_calls: usize, model_calls: usize, committed: bool) -> Run {
    Run {
        ended,
        summary_calls,
        model_calls,
        committed,
        failure_traces: 0,
    }
}

fn check(case: Case) {
    let before = case.transcript.clone();
    let got = attempt(
        &case.transcript,
        case.projected,
        case.calls,
        &case.summaries,
    );
    let expected = Run {
        failure_traces: got.failure_traces,
        ..case.expected
    };
    assert_eq!(got, expected, "{}", case.name);
    assert!(
        got.summary_calls <= 1,
        "{}: one compaction per attempt",
        case.name
    );
    assert!(got.model_calls <= 2, "{}: one retry per attempt", case.name);
    if !got.committed && got.summary_calls > 0 {
        assert!(
            got.failure_traces >= 1,
            "{}: a failed summary is logged",
            case.name
        );
    }
    assert_eq!(
        case.transcript, before,
        "{}: nothing is rewritten",
        case.name
    );
}

use Call::*;
use Ended::*;
use Failure::*;

#[test]
fn c1_c2_c5_an_attempt_compacts_at_most_once_and_always_ends() {
    let empty = || Ok::<_, SummaryFailure>(String::new());
    let cases = vec![
        Case {
            name: "C1 below the threshold: no summary",
            transcript: history(),
            projected: 84_999,
            calls: &[Answers],
            summaries: vec![],
            expected: run(Answered, 0, 1, false),
        },
        Case {
            name: "C1 at the threshold: compact, then the call answers",
            transcript: history(),
            projected: 85_000,
            calls: &[Answers],
            summaries: vec![],
            expected: run(Answered, 1, 1, true),
        },
        Case {
            name: "C2 overflow: compact, retry once, the retry answers",
            transcript: history(),
            projected: 10_000,
            calls: &[Overflows, Answers],
            summaries: vec![],
            expected: run(Answered, 1, 2, true),
        },
        Case {
            name: "C2 a tail too large even after compaction: the retry overflows, the turn fails",
            transcript: history(),
            projected: 10_000,
            calls: &[Overflows, Overflows, Overflows],
            summaries: vec![],
            expected: run(Failed(TailTooLarge), 1, 2, true),
        },
        Case {
            name: "C1 C2 compacted before the call, which still overflows: no second compaction",
            transcript: history(),
            projected: 95_000,
            calls: &[Overflows, Answers],
            summaries: vec![],
            expected: run(Failed(TailTooLarge), 1, 1, true),
        },
        Case {
            name: "C2 the tail alone exceeds the window: no summary call, a clear failure",
            transcript: huge_tail(),
            projected: 10_000,
            calls: &[Overflows],
            summaries: vec![],
            expected: run(Failed(TailTooLarge), 0, 1, false),
        },
        Case {
            name: "C1 C2 the tail alone exceeds the window before the call: logged, the call overflows, fails",
            transcript: huge_tail(),
            projected: 150_000,
            calls: &[Overflows],
            summaries: vec![],
            expected: run(Failed(TailTooLarge), 0, 1, false),
        },
        Case {
            name: "C5 an empty summary before a call: logged, the call answers uncompacted",
            transcript: history(),
            projected: 90_000,
            calls: &[Answers],
            summaries: vec![empty()],
            expected: run(Answered, 1, 1, false),
        },
        Case {
            name: "C5 a summary cut off before a call, then the call overflows: the turn fails",
            transcript: history(),
            projected: 90_000,
            calls: &[Overflows, Answers],
            summaries: vec![Err(SummaryFailure::CutOff)],
            expected: run(Failed(SummaryFailedAfterOverflow), 1, 1, false),
        },
        Case {
            name: "C5 a summary error after an overflow: the turn fails, no retry",
            transcript: history(),
            projected: 10_000,
            calls: &[Overflows, Answers],
            summaries: vec![Err(SummaryFailure::Error("HTTP 500".into()))],
            expected: run(Failed(SummaryFailedAfterOverflow), 1, 1, false),
        },
        Case {
            name: "C5 a summary that is only its header after an overflow: the turn fails",
            transcript: history(),
            projected: 10_000,
            calls: &[Overflows, Answers],
            summaries: vec![Ok("Turns 1–6".into())],
            expected: run(Failed(SummaryFailedAfterOverflow), 1, 1, false),
        },
    ];
    for case in cases {
        check(case);
    }
}

/// After an automatic compaction, the turn's next call is projected from what the compacted call
/// reported, so it does not compact again.
#[test]
fn c1_the_call_after_an_automatic_compaction_does_not_compact_again() {
    let mut t = history();
    let mut guard = CallGuard::new(config(), WINDOW, 500);
    let projection = Projection {
        tokens: 90_000,
        basis: Basis::Estimated,
    };
    let Decision::Compact(plan) = guard.before_call(&t, &projection, &COUNTER) else {
        panic!("90 % compacts");
    };
    let Outcome::Commit(commit) = guard.on_summary(&plan, Ok("## Facts\n- f".into()), &t, &COUNTER)
    else {
        panic!("a commit");
    };
    // The host records the block with the call's answer and the input the call reported.
    let turn = t.turns.last_mut().expect("a turn");
    turn.messages.push(portal_core::Message::new(
        portal_core::Role::Assistant,
        vec![
            commit.block,
            call_block(
                "call_2",
                "read_document",
                serde_json::json!({ "path": "b.md" }),
            ),
        ],
    ));
    turn.messages.push(result("call_2", "B."));
    turn.context_tokens = Some(500 + commit.live_tokens as u64);
    let next = portal_core::compaction::project_input(&t, &COUNTER, || unreachable!("reported"));
    assert!(next.tokens < 10_000, "{next:?}");
    let mut guard = CallGuard::new(config(), WINDOW, 500);
    assert_eq!(
        guard.before_call(&t, &next, &COUNTER),
        Decision::Proceed { trace: None }
    );
    portal_core::validate(&t).expect("valid");
}
