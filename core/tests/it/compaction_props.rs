//! Property tests: the kept tail's invariants (C3, C4) over generated transcripts, cuts on
//! character boundaries at every cut point, repeated compaction keeping transcripts valid.

use crate::compaction_support;

use compaction_support::*;
use portal_core::compaction::{
    Cause, CompactionConfig, Detail, MessagePosition, Outcome, extractive, language_sample, plan,
    settle, strip_references,
};
use portal_core::tokens::{EstimateCounter, TokenCounter};
use portal_core::{Block, Message, Role, Transcript, Turn, TurnStatus, validate};
use proptest::prelude::*;
use serde_json::json;
use unicode_segmentation::UnicodeSegmentation;

/// Grapheme clusters chosen to break naive cuts: combining marks, ZWJ emoji, flags, skin tones,
/// CJK, Thai with a vowel sign, Devanagari with a virama, CRLF.
const CLUSTERS: &[&str] = &[
    "a",
    "Z",
    " ",
    "é",
    "e\u{301}",
    "👩🏽‍💻",
    "🇯🇵",
    "🏳️‍🌈",
    "東",
    "語",
    "กำ",
    "क्षि",
    "\r\n",
    "ß",
    ",",
    "1",
];

fn text(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(CLUSTERS), 0..max).prop_map(|v| v.concat())
}

/// How a generated turn ends.
#[derive(Debug, Clone, Copy)]
enum Ending {
    Answered,
    NeverReturned,
    PartlyReturned,
    AfterResults,
}

/// How the generated last turn, still running, stands.
#[derive(Debug, Clone, Copy)]
enum Now {
    JustAsked,
    AfterResults,
    CallRunning,
}

#[derive(Debug, Clone)]
struct TurnSpec {
    request: String,
    batches: Vec<usize>,
    thinking: bool,
    ending: Ending,
}

fn turn_spec() -> impl Strategy<Value = TurnSpec> {
    (
        text(12),
        prop::collection::vec(1usize..4, 0..4),
        any::<bool>(),
        prop_oneof![
            4 => Just(Ending::Answered),
            1 => Just(Ending::NeverReturned),
            1 => Just(Ending::PartlyReturned),
            1 => Just(Ending::AfterResults),
        ],
    )
        .prop_map(|(request, batches, thinking, ending)| TurnSpec {
            request,
            batches,
            thinking,
            ending,
        })
}

fn history() -> impl Strategy<Value = Transcript> {
    (
        prop::collection::vec(turn_spec(), 0..10),
        turn_spec(),
        prop_oneof![
            Just(Now::JustAsked),
            Just(Now::AfterResults),
            Just(Now::CallRunning)
        ],
    )
        .prop_map(|(specs, last, now)| build(&specs, &last, now))
}

fn build(specs: &[TurnSpec], last: &TurnSpec, now: Now) -> Transcript {
    let mut next_id = 0;
    let mut id = move || {
        next_id += 1;
        format!("call_{next_id}")
    };
    let mut batch = |size: usize, thinking: bool, answered: usize, out: &mut Vec<Message>| {
        let ids: Vec<String> = (0..size).map(|_| id()).collect();
        let mut blocks = Vec::new();
        if thinking {
            blocks.push(Block::Thinking { text: "…".into() });
        }
        blocks.extend(
            ids.iter()
                .map(|i| call_block(i, "read", json!({ "path": format!("{i}.txt") }))),
        );
        out.push(Message::new(Role::Assistant, blocks));
        if answered > 0 {
            out.push(Message::new(
                Role::Tool,
                ids.iter()
                    .take(answered)
                    .map(|i| result_block(i, "ok"))
                    .collect(),
            ));
        }
    };
    let mut turns = Vec::new();
    for spec in specs {
        let mut messages = vec![user(&format!("ask {}", spec.request))];
        for &size in &spec.batches {
            batch(size, spec.thinking, size, &mut messages);
        }
        let status = match spec.ending {
            Ending::Answered => {
                messages.push(say("answer"));
                TurnStatus::Completed
            }
            Ending::NeverReturned => {
                batch(1, false, 0, &mut messages);
                TurnStatus::CutOff
            }
            Ending::PartlyReturned => {
                batch(2, false, 1, &mut messages);
                TurnStatus::CutOff
            }
            Ending::AfterResults => TurnStatus::CutOff,
        };
        turns.push(turn(status, messages));
    }
    let mut messages = vec![user(&format!("now {}", last.request))];
    match now {
        Now::JustAsked => {}
        Now::AfterResults => {
            for &size in last.batches.iter().chain([1].iter()) {
                batch(size, last.thinking, size, &mut messages);
            }
        }
        Now::CallRunning => {
            for &size in &last.batches {
                batch(size, last.thinking, size, &mut messages);
            }
            batch(2, false, 0, &mut messages);
        }
    }
    turns.push(running(messages));
    transcript(turns)
}

/// The flat place of a message position.
fn flat_index(t: &Transcript, position: MessagePosition) -> usize {
    t.turns
        .iter()
        .take_while(|turn| turn.index < position.turn)
        .map(|turn| turn.messages.len())
        .sum::<usize>()
        + position.message
}

fn calls_of(m: &Message) -> Vec<&str> {
    m.blocks
        .iter()
        .filter_map(|b| match b {
            Block::ToolUse { id, .. } => Some(id.as_str()),
            _ => None,
        })
        .collect()
}

fn results_of(m: &Message) -> Vec<&str> {
    m.blocks
        .iter()
        .filter_map(|b| match b {
            Block::ToolResult { call_id, .. } => Some(call_id.as_str()),
            _ => None,
        })
        .collect()
}

/// The byte offsets at which `text` may be cut.
fn boundaries(text: &str) -> Vec<usize> {
    let mut b: Vec<usize> = text.grapheme_indices(true).map(|(i, _)| i).collect();
    b.push(text.len());
    b
}

fn is_character_prefix(kept: &str, whole: &str) -> bool {
    whole.starts_with(kept) && boundaries(whole).contains(&kept.len())
}

/// Answers the running calls, settles the plan and records the block as the host would.
fn compact_and_record(t: &mut Transcript, cause: Cause) -> Option<Block> {
    let p = plan(t, cause, None, 1_000_000, &config(), &COUNTER).ok()?;
    if let Some(last) = t.turns.last_mut() {
        let pending: Vec<String> = last
            .messages
            .last()
            .filter(|m| m.role == Role::Assistant)
            .map(|m| calls_of(m).into_iter().map(String::from).collect())
            .unwrap_or_default();
        if !pending.is_empty() {
            last.messages.push(Message::new(
                Role::Tool,
                pending.iter().map(|i| result_block(i, "late")).collect(),
            ));
        }
    }
    let summary = extractive::summarise(&p.request);
    let Outcome::Commit(commit) = settle(&p, Ok(summary), t, &COUNTER) else {
        return None;
    };
    assert!(commit.still_running.is_empty());
    let last = t.turns.last_mut()?;
    last.messages.push(Message::new(
        Role::Assistant,
        vec![commit.block.clone(), Block::text("carried on")],
    ));
    last.status = TurnStatus::Completed;
    Some(commit.block)
}

fn next_turn(t: &mut Transcript, request: &str) {
    let mut turn: Turn = exchange(request, "fine");
    turn.index = t.turns.len() as u32 + 1;
    t.turns.push(turn);
}

proptest! {
    /// C4: the kept tail never opens on a tool result or on a call without its result, and holds
    /// no unanswered call except the running turn's last; C3: the live list is the note then the
    /// tail verbatim, and `kept_messages` counts the tail.
    #[test]
    fn c4_tail_never_opens_on_a_result_or_an_unanswered_call(t in history()) {
        validate(&t).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let Ok(p) = plan(&t, Cause::Overflow, None, 1_000_000, &config(), &COUNTER) else {
            return Ok(());
        };
        prop_assert_eq!(p.covers.first, 1);
        prop_assert!(p.covers.last >= 1 && p.covers.last <= t.turns.len() as u32);
        let all = flat(&t);
        let start = flat_index(&t, p.tail.start.expect("an auto compaction keeps a tail"));
        let tail = &all[start..];
        prop_assert_eq!(tail.len(), p.tail.messages);
        prop_assert!(!tail.is_empty());
        prop_assert!(tail[0].role != Role::Tool, "the tail opens on a tool result");
        for (i, m) in tail.iter().enumerate() {
            let calls = calls_of(m);
            if !calls.is_empty() {
                let answered = tail.get(i + 1).map(|n| results_of(n)).unwrap_or_default();
                let last_of_running = i + 1 == tail.len()
                    && t.turns.last().is_some_and(|turn| turn.status.is_open());
                for c in calls {
                    prop_assert!(answered.contains(&c) || last_of_running, "call {} unanswered in the tail", c);
                }
            }
            if m.role == Role::Tool {
                let asked = if i == 0 { Vec::new() } else { calls_of(tail[i - 1]) };
                for r in results_of(m) {
                    prop_assert!(asked.contains(&r), "result {} without its call", r);
                }
            }
        }
        let Outcome::Commit(commit) = settle(&p, Ok("## Facts\n- f".into()), &t, &COUNTER) else {
            return Err(TestCaseError::fail("a commit"));
        };
        let kept: Vec<Message> = tail.iter().map(|m| (*m).clone()).collect();
        prop_assert_eq!(&commit.live_messages[1..], kept.as_slice());
        let Block::Compaction { kept_messages, .. } = commit.block else {
            return Err(TestCaseError::fail("a compaction block"));
        };
        prop_assert_eq!(kept_messages as usize, tail.len());
    }

    /// Compacting again and again keeps the transcript valid, each summary covering turn 1 on
    /// and carrying the one before it.
    #[test]
    fn c9_repeated_compaction_keeps_the_transcript_valid(t in history(), later in prop::collection::vec(text(8), 1..6)) {
        let mut t = t;
        let Some(first) = compact_and_record(&mut t, Cause::Overflow) else {
            return Ok(());
        };
        validate(&t).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let Block::Compaction { covers: first_covers, .. } = first else {
            return Err(TestCaseError::fail("a compaction block"));
        };
        for request in &later {
            next_turn(&mut t, &format!("more {request}"));
        }
        let mut compact = running(vec![user("/compact")]);
        compact.kind = portal_core::TurnKind::Compact;
        compact.index = t.turns.len() as u32 + 1;
        t.turns.push(compact);
        let p = plan(&t, Cause::Command, None, 1_000_000, &config(), &COUNTER)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(p.request.history_text().contains("<earlier_summary "));
        prop_assert!(p.covers.last >= first_covers.last);
        let Outcome::Commit(commit) = settle(&p, Ok("## Requests\n- all".into()), &t, &COUNTER) else {
            return Err(TestCaseError::fail("a commit"));
        };
        let last = t.turns.last_mut().expect("the /compact turn");
        last.messages.push(Message::new(Role::Assistant, vec![commit.block]));
        last.status = TurnStatus::Completed;
        validate(&t).map_err(|e| TestCaseError::fail(e.to_string()))?;
    }

    /// Shape: multi-byte characters at every cut point. Tool results, argument strings and the
    /// language sample are cut on character boundaries, whatever the limit, and no character of
    /// the request is ever split.
    #[test]
    fn shape_multibyte_characters_at_every_cut_point(
        content in text(40),
        argument in text(40),
        paragraph in text(40),
        limit in 0usize..30,
    ) {
        let request_text = format!("word word {paragraph}");
        let t = transcript(vec![
            done(vec![
                user(&request_text),
                Message::new(Role::Assistant, vec![call_block("call_1", "read", json!({ "q": argument }))]),
                result("call_1", &content),
                say("done"),
            ]),
            running(vec![user("a b c d")]),
        ]);
        let config = CompactionConfig {
            detail_levels: vec![Detail { result_chars: limit.max(1), argument_chars: limit }],
            sample_paragraph_chars: limit,
            ..config()
        };
        let p = plan(&t, Cause::Command, None, 1_000_000, &config, &COUNTER)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let history = p.request.history_text();
        for g in history.graphemes(true) {
            prop_assert!(g.is_ascii() || g == "…" || CLUSTERS.contains(&g), "split character {:?}", g);
        }

        let body = history
            .split("<tool_result ref=\"call_1\" outcome=\"ok\">\n")
            .nth(1)
            .expect("the result");
        let kept = body.split("\n[cut: ").next().and_then(|b| b.split("\n</tool_result>").next()).expect("a body");
        prop_assert!(is_character_prefix(kept, &content), "result cut inside a character: {:?}", kept);

        let arguments = history
            .split("<tool_call ref=\"call_1\" name=\"read\">\n")
            .nth(1)
            .and_then(|rest| rest.split('\n').next())
            .expect("the arguments");
        if let Ok(value) = serde_json::from_str::<serde_json::Value>(arguments) {
            let q = value["q"].as_str().expect("a string");
            let q = q.strip_suffix("…[cut]").unwrap_or(q);
            prop_assert!(is_character_prefix(q, &argument), "argument cut inside a character: {:?}", q);
        }

        for quoted in language_sample(&t, &config) {
            let quoted = quoted.strip_suffix('…').unwrap_or(&quoted);
            let cuts = boundaries(&request_text);
            let at_boundaries = request_text
                .match_indices(quoted)
                .any(|(i, m)| cuts.contains(&i) && cuts.contains(&(i + m.len())));
            prop_assert!(at_boundaries || "a b c d".starts_with(quoted), "sample cut inside a character: {:?}", quoted);
        }
    }

    /// C12: references come out whole and nothing else changes.
    #[test]
    fn c12_strip_references_removes_only_references(parts in prop::collection::vec((text(10), "[a-z0-9_]{1,8}"), 0..6), tail in text(10)) {
        let mut summary = String::new();
        let mut shown = String::new();
        for (words, id) in &parts {
            summary.push_str(words);
            summary.push_str(&format!(" [ref:{id}]"));
            shown.push_str(words.trim_end_matches([' ', '\t']));
        }
        summary.push_str(&tail);
        shown.push_str(&tail);
        prop_assert_eq!(strip_references(&summary), shown);
    }

    /// The estimate never panics and grows with the text.
    #[test]
    fn the_estimate_is_total_and_monotone(a in text(60), b in text(60)) {
        let whole = format!("{a}{b}");
        prop_assert!(EstimateCounter.count(&whole) + 2 >= EstimateCounter.count(&a));
    }
}
