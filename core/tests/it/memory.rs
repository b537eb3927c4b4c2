//! Short-term memory, rule by rule (M1–M13, and C3 on the memory side).

use crate::prompt_support;

use expect_test::{Expect, expect};
use portal_core::memory::{CompactionHint, Diagnostic, MemoryConfig, rebuild};
use portal_core::prompt::{Layer, Part, render_entries};
use portal_core::{Role, TurnStatus};
use prompt_support::*;
use serde_json::json;

/// The data-driven driver: the rebuilt memory of `turns`, rendered.
fn check(turns: Vec<portal_core::Turn>, expected: Expect) {
    let transcript = transcript(turns);
    expected.assert_eq(&render_entries(&memory(&transcript).entries));
}

#[test]
fn m1_rebuild_reads_only_the_window_when_the_host_hints() {
    // A compaction far beyond the window: with the hint that there is none, memory must not
    // find it, which shows the rebuild never looked at those turns.
    let mut turns = vec![turn(
        TurnStatus::Completed,
        vec![
            user("first"),
            assistant(vec![
                compaction("Turns 1–1\n\nOld summary", 1, 0),
                text("ok"),
            ]),
        ],
    )];
    turns.extend((0..100).map(|i| chat(&format!("q{i}"), &format!("a{i}"))));
    let t = transcript(turns);
    let config = MemoryConfig::default();
    let bounded = rebuild(&t, CompactionHint::NoCompaction, &model(), &config);
    assert!(bounded.summary.is_none());
    assert!(bounded.diagnostics.is_empty());
    assert_eq!(bounded.turns, (82..=101).collect::<Vec<u32>>());

    let searched = rebuild(&t, CompactionHint::Search, &model(), &config);
    assert_eq!(searched.summary.map(|s| s.turn), Some(1));
    assert_eq!(searched.diagnostics, vec![Diagnostic::SearchedBeyondWindow]);
    let hinted = rebuild(&t, CompactionHint::NewestInTurn(1), &model(), &config);
    assert_eq!(hinted.summary.map(|s| s.turn), Some(1));
    assert!(hinted.diagnostics.is_empty());
    // Rebuilt on every call from the transcript alone: the same input gives the same memory.
    assert_eq!(
        hinted,
        rebuild(&t, CompactionHint::NewestInTurn(1), &model(), &config)
    );
}

#[test]
fn m1_memory_of_the_part_storage_loads_equals_memory_of_the_whole_conversation() {
    // Storage loads the newest compaction's turn and the window, not the turns between (rule
    // M1); memory rebuilt from that part is the memory of the whole.
    let mut turns: Vec<_> = (1..=3)
        .map(|i| chat(&format!("q{i}"), &format!("a{i}")))
        .collect();
    turns.push(turn(
        TurnStatus::Completed,
        vec![
            user("q4"),
            assistant(vec![compaction("Turns 1–3\n\nSummary", 3, 2), text("a4")]),
        ],
    ));
    turns.extend((5..=60).map(|i| chat(&format!("q{i}"), &format!("a{i}"))));
    turns.push(turn(TurnStatus::Running, vec![user("q61")]));
    let whole = transcript(turns);
    let config = MemoryConfig::default();
    let mut part = whole.clone();
    part.turns.retain(|t| t.index == 4 || t.index >= 41);
    assert_eq!(part.turn(4).map(|t| t.index), Some(4));
    assert_eq!(part.turn(50).map(|t| t.index), Some(50));
    assert!(part.turn(5).is_none(), "a turn the part does not hold");
    let from_whole = rebuild(&whole, CompactionHint::NewestInTurn(4), &model(), &config);
    let from_part = rebuild(&part, CompactionHint::NewestInTurn(4), &model(), &config);
    assert_eq!(from_part, from_whole);
    assert_eq!(from_part.summary.map(|s| s.turn), Some(4));
    assert_eq!(from_part.turns, (41..=60).collect::<Vec<u32>>());
    assert!(
        from_part.diagnostics.is_empty(),
        "{:?}",
        from_part.diagnostics
    );
}

#[test]
fn m1_a_wrong_hint_falls_back_to_the_search() {
    let mut turns = vec![turn(
        TurnStatus::Completed,
        vec![
            user("first"),
            assistant(vec![compaction("S", 1, 0), text("ok")]),
        ],
    )];
    turns.extend((0..30).map(|i| chat(&format!("q{i}"), &format!("a{i}"))));
    let t = transcript(turns);
    let m = rebuild(
        &t,
        CompactionHint::NewestInTurn(3),
        &model(),
        &MemoryConfig::default(),
    );
    assert_eq!(m.summary.map(|s| s.turn), Some(1));
    assert_eq!(
        m.diagnostics,
        vec![
            Diagnostic::HintMissed { turn: 3 },
            Diagnostic::SearchedBeyondWindow
        ]
    );
}

#[test]
fn m2_at_most_twenty_turns_are_replayed() {
    let turns = (1..=25).map(|i| chat(&format!("question {i}"), &format!("answer {i}")));
    let m = memory(&transcript(turns.collect()));
    assert_eq!(m.turns, (6..=25).collect::<Vec<u32>>());
    let text = all_text(&m.entries);
    assert!(text.contains("question 6\n") && text.ends_with("answer 25"));
    assert!(!text.contains("question 5\n"));
    assert_eq!(m.entries.len(), 40);
}

#[test]
fn m2_c3_the_limit_bounds_only_what_follows_the_summary() {
    let mut turns: Vec<_> = (1..=3)
        .map(|i| chat(&format!("q{i}"), &format!("a{i}")))
        .collect();
    turns.push(turn(
        TurnStatus::Completed,
        vec![
            user("q4"),
            assistant(vec![
                compaction("Turns 1–3\n\n## Requests\n- q1", 3, 2),
                text("a4"),
            ]),
        ],
    ));
    turns.extend((5..=30).map(|i| chat(&format!("q{i}"), &format!("a{i}"))));
    let m = memory(&transcript(turns));
    // The summary is beyond the last 20 turns, and still comes first.
    assert_eq!(m.summary.map(|s| s.turn), Some(4));
    assert_eq!(m.turns, (11..=30).collect::<Vec<u32>>());
    let Part::Text { text } = &m.entries[0].parts[0] else {
        panic!("summary first");
    };
    assert!(text.starts_with("[Summary of the conversation so far (turns 1–3"));
    assert!(text.contains("- q1"));
    // The summary note and turn 11's question are adjacent user prose: one entry (rule M11).
    assert_eq!(all_text(&m.entries[..1]), format!("{text}\nq11"));
}

#[test]
fn c3_summary_then_kept_tail_then_what_came_after() {
    // The compaction in turn 3 keeps 3 messages: the tail reaches back into turn 2.
    let turns = vec![
        chat("q1", "a1"),
        with_call("q2", "c2", "r2"),
        turn(
            TurnStatus::Completed,
            vec![
                user("q3"),
                assistant(vec![
                    compaction("Turns 1–2\n\nSummary body", 2, 3),
                    text("a3"),
                ]),
            ],
        ),
        chat("q4", "a4"),
    ];
    check(
        turns,
        expect![[r#"
            === 6 Short-term memory · user ===
            [Summary of the conversation so far (turns 1–2, context compaction). It replaces the messages before it.]

            Turns 1–2

            Summary body
            === 6 Short-term memory · assistant ===
            Answer to q2.
            === 6 Short-term memory · user ===
            q3
            === 6 Short-term memory · assistant ===
            a3
            === 6 Short-term memory · user ===
            q4
            === 6 Short-term memory · assistant ===
            a4
        "#]],
    );
}

#[test]
fn c3_a_kept_tail_opening_on_results_drops_them() {
    // A tail of 3 messages would open on turn 1's tool message: its results have no call in
    // view, so they are left out (rule C4 asks compaction not to do this; memory copes).
    let turns = vec![
        with_call("q1", "c1", "r1"),
        turn(
            TurnStatus::Completed,
            vec![
                user("q2"),
                assistant(vec![compaction("Turns 1–1\n\nS", 1, 3), text("a2")]),
            ],
        ),
    ];
    let t = transcript(turns);
    let m = memory(&t);
    assert!(m.diagnostics.contains(&Diagnostic::OrphanResults {
        turn: 1,
        message: 3
    }));
    assert!(call_ids(&m.entries).is_empty());
    assert!(m.entries.iter().all(|e| e.role != Role::Tool));
}

#[test]
fn c3_a_compaction_in_the_turn_in_progress_replays_its_tail_live() {
    let turns = vec![
        chat("q1", "a1"),
        turn(
            TurnStatus::Running,
            vec![
                user("q2"),
                assistant(vec![call("c1", "search", json!({"q": "x".repeat(500)}))]),
                tool(vec![result("c1", &"r".repeat(500))]),
                assistant(vec![
                    compaction("Turns 1–2\n\nS", 2, 3),
                    call("c2", "read", json!({})),
                ]),
            ],
        ),
    ];
    let m = memory(&transcript(turns));
    assert!(m.turns.is_empty(), "nothing before the tail replays");
    assert_eq!(
        answer(&m.entries, "c1"),
        "r".repeat(500),
        "the tail is live, whole"
    );
    assert_eq!(call_ids(&m.entries), ["c1", "c2"]);
    assert_eq!(
        m.entries[0].layer,
        Layer::NewMessage,
        "summary merged into the live question"
    );
}

#[test]
fn m3_the_eight_most_recent_calls_hold_their_place() {
    let mut messages = vec![user("twelve steps")];
    for i in 1..=12 {
        let id = format!("c{i}");
        messages.push(assistant(vec![call(&id, "step", json!({"n": i}))]));
        messages.push(tool(vec![result(&id, &format!("done {i}"))]));
    }
    messages.push(assistant(vec![text("All done.")]));
    let m = memory(&transcript(vec![turn(TurnStatus::Completed, messages)]));
    assert_eq!(
        call_ids(&m.entries),
        ["c5", "c6", "c7", "c8", "c9", "c10", "c11", "c12"]
    );
    let Part::Text { text } = &m.entries[1].parts[0] else {
        panic!("the line stands where the omitted run was");
    };
    assert_eq!(text, "[4 earlier tool calls of this turn omitted.]");
    assert!(matches!(&m.entries[1].parts[1], Part::Call(c) if c.id == "c5"));
}

#[test]
fn m3_parallel_calls_beyond_eight_are_cut_from_the_front() {
    let calls: Vec<_> = (1..=10)
        .map(|i| call(&format!("p{i}"), "fetch", json!({})))
        .collect();
    let results: Vec<_> = (1..=10)
        .rev()
        .map(|i| result(&format!("p{i}"), "ok"))
        .collect();
    check(
        vec![turn(
            TurnStatus::Completed,
            vec![
                user("fetch ten"),
                assistant(calls),
                tool(results),
                assistant(vec![text("Fetched.")]),
            ],
        )],
        expect![[r#"
            === 6 Short-term memory · user ===
            fetch ten
            === 6 Short-term memory · assistant ===
            [2 earlier tool calls of this turn omitted.]
            → call p3 fetch({})
            → call p4 fetch({})
            → call p5 fetch({})
            → call p6 fetch({})
            → call p7 fetch({})
            → call p8 fetch({})
            → call p9 fetch({})
            → call p10 fetch({})
            === 6 Short-term memory · tool ===
            ← result p3: ok
            ← result p4: ok
            ← result p5: ok
            ← result p6: ok
            ← result p7: ok
            ← result p8: ok
            ← result p9: ok
            ← result p10: ok
            === 6 Short-term memory · assistant ===
            Fetched.
        "#]],
    );
}

#[test]
fn m4_m7_output_only_for_the_three_closest_turns() {
    let turns: Vec<_> = (1..=5)
        .map(|i| with_call(&format!("q{i}"), &format!("c{i}"), &format!("result {i}")))
        .collect();
    let m = memory(&transcript(turns));
    assert_eq!(answer(&m.entries, "c5"), "result 5");
    assert_eq!(answer(&m.entries, "c3"), "result 3");
    // Rule M7: older turns keep name, arguments and outcome, not the result.
    assert_eq!(answer(&m.entries, "c2"), "ok [ref:c2]");
    assert_eq!(answer(&m.entries, "c1"), "ok [ref:c1]");
    let c1 = m
        .entries
        .iter()
        .flat_map(|e| e.calls())
        .find(|c| c.id == "c1")
        .unwrap();
    assert_eq!(
        (c1.name.as_str(), &c1.arguments),
        ("search", &json!({"query": "q1"}))
    );
}

#[test]
fn m7_older_failures_keep_the_outcome_and_lose_the_message() {
    let mut turns = vec![turn(
        TurnStatus::Completed,
        vec![
            user("q1"),
            assistant(vec![call("bad", "fetch", json!({"url": "x"}))]),
            tool(vec![failure("bad", "HTTP 500: secret stack trace")]),
            assistant(vec![text("It failed.")]),
        ],
    )];
    turns.extend((2..=5).map(|i| chat(&format!("q{i}"), "a")));
    let m = memory(&transcript(turns));
    let bad = m
        .entries
        .iter()
        .flat_map(|e| e.answers())
        .find(|a| a.call_id == "bad")
        .unwrap();
    assert_eq!(bad.content, "error [ref:bad]");
    assert!(bad.is_error);
    assert!(!all_text(&m.entries).contains("stack trace"));
}

#[test]
fn m5_results_are_cut_to_300_characters_plus_a_reference() {
    let long = "x".repeat(1_000);
    let turns = vec![
        with_call("long", "c1", &long),
        with_call("short", "c2", &"y".repeat(300)),
    ];
    let m = memory(&transcript(turns));
    let cut = answer(&m.entries, "c1");
    assert_eq!(
        cut,
        format!(
            "{}… (cut; the whole result: read_tool_result [ref:c1])",
            "x".repeat(300)
        )
    );
    // A result that crossed whole carries no reference.
    assert_eq!(answer(&m.entries, "c2"), "y".repeat(300));
}

#[test]
fn m5_the_cut_never_splits_a_zwj_emoji() {
    let family = "👨‍👩‍👧‍👦";
    let content = format!("{}{family}{}", "a".repeat(299), "b".repeat(50));
    let m = memory(&transcript(vec![with_call("emoji", "c1", &content)]));
    let cut = answer(&m.entries, "c1");
    assert!(
        cut.starts_with(&format!("{}{family}…", "a".repeat(299))),
        "{cut}"
    );
    let content = format!("{}{family}", "a".repeat(300));
    let m = memory(&transcript(vec![with_call("emoji", "c1", &content)]));
    assert!(answer(&m.entries, "c1").starts_with(&format!("{}…", "a".repeat(300))));
    assert!(!answer(&m.entries, "c1").contains('\u{200d}'));
}

#[test]
fn m6_argument_strings_are_cut_and_the_json_stays_valid() {
    let huge = "é".repeat(1_000_000);
    let input = json!({"path": "/a", "body": huge, "nested": [{"s": "z".repeat(201)}, 7]});
    let turns = vec![turn(
        TurnStatus::Completed,
        vec![
            user("write"),
            assistant(vec![call("w", "write_file", input)]),
            tool(vec![result("w", "written")]),
            assistant(vec![text("Written.")]),
        ],
    )];
    let m = memory(&transcript(turns));
    let w = m.entries.iter().flat_map(|e| e.calls()).next().unwrap();
    let serialised = w.arguments.to_string();
    assert!(serialised.len() < 1_000, "cut: {} bytes", serialised.len());
    let reparsed: serde_json::Value = serde_json::from_str(&serialised).unwrap();
    assert_eq!(reparsed["path"], "/a");
    assert_eq!(reparsed["body"], format!("{}…[cut]", "é".repeat(200)));
    assert_eq!(
        reparsed["nested"][0]["s"],
        format!("{}…[cut]", "z".repeat(200))
    );
    assert_eq!(reparsed["nested"][1], 7);
}

#[test]
fn m8_past_calls_come_back_as_calls_and_results_in_the_next_entry() {
    check(
        vec![with_call("weather", "c1", "sunny")],
        expect![[r#"
            === 6 Short-term memory · user ===
            weather
            === 6 Short-term memory · assistant ===
            → call c1 search({"query":"weather"})
            === 6 Short-term memory · tool ===
            ← result c1: sunny
            === 6 Short-term memory · assistant ===
            Answer to weather.
        "#]],
    );
}

#[test]
fn m9_every_call_is_answered_even_one_that_never_returned() {
    let cut_off = turn(
        TurnStatus::CutOff,
        vec![
            user("search"),
            assistant(vec![
                call("c1", "search", json!({})),
                call("c2", "search", json!({})),
            ]),
            tool(vec![result("c1", "No hits.")]),
        ],
    );
    let paused = turn(
        TurnStatus::Paused,
        vec![
            user("delete"),
            assistant(vec![
                call("d1", "delete_path", json!({"path": "/drafts"})),
                portal_core::Block::ApprovalRequest {
                    call_id: "d1".into(),
                    summary: "Delete /drafts".into(),
                },
            ]),
        ],
    );
    let m = memory(&transcript(vec![
        cut_off,
        paused,
        chat("never mind", "OK."),
    ]));
    assert_eq!(answer(&m.entries, "c1"), "No hits.");
    assert_eq!(
        answer(&m.entries, "c2"),
        "No result: this call never returned (the turn stopped before it finished)."
    );
    assert_eq!(
        answer(&m.entries, "d1"),
        "Not run: this call was waiting for approval when the turn stopped."
    );
}

#[test]
fn m10_a_cut_off_turn_leaves_what_it_wrote_and_the_calls_it_ran() {
    check(
        vec![
            turn(
                TurnStatus::CutOff,
                vec![
                    user("write a report"),
                    assistant(vec![call("c1", "search", json!({"q": "data"}))]),
                    tool(vec![result("c1", "figures")]),
                    assistant(vec![text("The report so far: sales gr")]),
                ],
            ),
            chat("go on", "Sales grew."),
        ],
        expect![[r#"
            === 6 Short-term memory · user ===
            write a report
            === 6 Short-term memory · assistant ===
            → call c1 search({"q":"data"})
            === 6 Short-term memory · tool ===
            ← result c1: figures
            === 6 Short-term memory · assistant ===
            The report so far: sales gr
            === 6 Short-term memory · user ===
            go on
            === 6 Short-term memory · assistant ===
            Sales grew.
        "#]],
    );
}

#[test]
fn m11_adjacent_prose_of_one_role_is_merged() {
    // A turn cut off before the assistant wrote anything leaves two user messages in a row.
    let m = memory(&transcript(vec![
        turn(TurnStatus::CutOff, vec![user("first try")]),
        chat("second try", "Done."),
    ]));
    assert_eq!(m.entries.len(), 2);
    assert_eq!(m.entries[0].role, Role::User);
    assert_eq!(all_text(&m.entries[..1]), "first try\nsecond try");
    // Two assistant messages of prose merge too.
    let m = memory(&transcript(vec![turn(
        TurnStatus::Completed,
        vec![
            user("q"),
            assistant(vec![text("part one")]),
            assistant(vec![text("part two")]),
        ],
    )]));
    assert_eq!(m.entries.len(), 2);
    assert_eq!(m.entries[1].parts.len(), 2);
}

#[test]
fn m11_an_entry_carrying_a_tools_answer_is_never_merged_into() {
    let m = memory(&transcript(vec![
        turn(
            TurnStatus::CutOff,
            vec![
                user("q1"),
                assistant(vec![call("c1", "search", json!({}))]),
                tool(vec![result("c1", "r1")]),
            ],
        ),
        chat("q2", "a2"),
    ]));
    let roles: Vec<Role> = m.entries.iter().map(|e| e.role).collect();
    assert_eq!(
        roles,
        [
            Role::User,
            Role::Assistant,
            Role::Tool,
            Role::User,
            Role::Assistant
        ]
    );
    assert!(
        m.entries[2]
            .parts
            .iter()
            .all(|p| matches!(p, Part::Answer(_)))
    );
}

#[test]
fn m12_thinking_and_pre_tool_narration_never_enter_memory() {
    check(
        vec![turn(
            TurnStatus::Completed,
            vec![
                user("plan"),
                assistant(vec![
                    thinking("secret reasoning"),
                    text("First I will search."),
                    call("c1", "search", json!({})),
                    text("And then read."),
                    call("c2", "read", json!({})),
                ]),
                tool(vec![result("c1", "r1"), result("c2", "r2")]),
                assistant(vec![thinking("more reasoning")]),
                assistant(vec![thinking("last thought"), text("Here is the plan.")]),
            ],
        )],
        expect![[r#"
            === 6 Short-term memory · user ===
            plan
            === 6 Short-term memory · assistant ===
            → call c1 search({})
            → call c2 read({})
            === 6 Short-term memory · tool ===
            ← result c1: r1
            ← result c2: r2
            === 6 Short-term memory · assistant ===
            Here is the plan.
        "#]],
    );
}

#[test]
fn m13_the_turn_in_progress_is_live_and_whole() {
    let long = "r".repeat(2_000);
    let mut messages = vec![user("now")];
    for i in 1..=10 {
        let id = format!("live{i}");
        messages.push(assistant(vec![
            text("Narration stays live."),
            call(&id, "fetch", json!({"s": "a".repeat(300)})),
        ]));
        messages.push(tool(vec![result(&id, &long)]));
    }
    let turns = vec![
        with_call("before", "old", &long),
        turn(TurnStatus::Running, messages),
    ];
    let m = memory(&transcript(turns));
    assert_eq!(m.turns, [1], "only the earlier turn is past");
    assert_eq!(call_ids(&m.entries).len(), 11, "all ten live calls pass");
    assert_eq!(answer(&m.entries, "live1"), long, "live results are whole");
    assert_ne!(answer(&m.entries, "old"), long, "earlier turns are bounded");
    let live = m
        .entries
        .iter()
        .find(|e| e.calls().any(|c| c.id == "live1"))
        .unwrap();
    assert_eq!(live.layer, Layer::NewMessage);
    assert_eq!(live.calls().next().unwrap().arguments["s"], "a".repeat(300));
    assert!(all_text(&m.entries).contains("Narration stays live."));
    // A live call still running is answered too, so the list stays valid.
    let pending = transcript(vec![turn(
        TurnStatus::Running,
        vec![user("go"), assistant(vec![call("p", "slow", json!({}))])],
    )]);
    assert_eq!(
        answer(&memory(&pending).entries, "p"),
        "No result yet: this call has not returned."
    );
}

#[test]
fn m5_pieces_read_back_never_split_a_zwj_emoji_a_flag_or_a_thai_cluster() {
    use portal_core::tools::page;
    use unicode_segmentation::UnicodeSegmentation;
    let corpus = "ab👨‍👩‍👧‍👦🇯🇵🇫🇷กำลังทดสอบ e\u{301}\r\nok🏳️‍🌈!";
    let clusters: Vec<&str> = corpus.graphemes(true).collect();
    for offset in 0..=clusters.len() + 1 {
        for length in 1..=clusters.len() + 1 {
            let piece = page(corpus, offset, length);
            let first = offset.min(clusters.len());
            let last = (offset + length).min(clusters.len());
            assert_eq!(
                piece.text,
                clusters[first..last].concat(),
                "{offset}+{length}"
            );
            assert_eq!(piece.next_offset, last);
            assert_eq!(piece.remaining, clusters.len() - last);
        }
    }
    for length in 1..=clusters.len() {
        let mut read = String::new();
        let mut offset = 0;
        loop {
            let piece = page(corpus, offset, length);
            read.push_str(piece.text);
            offset = piece.next_offset;
            if piece.remaining == 0 {
                break;
            }
        }
        assert_eq!(read, corpus, "pieces of {length} read back the whole");
    }
}
