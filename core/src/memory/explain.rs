//! Why memory replayed each call as it did, read back from the entries it wrote: a replayed
//! answer or call is matched against the very wording memory writes (`note`, `cut`), so the
//! explanation cannot drift from the replay. The prompt inspector shows it (docs/inspector.md).

use serde::Serialize;

use crate::compaction::{SUMMARY_NOTE, reference};
use crate::prompt::entry::{Entry, Layer, Part};

use super::cut::ARGUMENT_CUT_MARKER;
use super::note::{Unanswered, cut_result, outcome};

/// What memory kept of one replayed call, and the rule that decided it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KeptCall {
    pub call_id: String,
    pub name: String,
    pub kept: Kept,
    /// Whether a string of the call's arguments was cut (rule M6).
    pub arguments_cut: bool,
    /// The rules that decided what was kept, e.g. `["M5", "M6"]`.
    pub rules: Vec<&'static str>,
    /// Why, in a sentence.
    pub why: String,
}

/// How a replayed call's result came back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Kept {
    /// The whole result.
    Whole,
    /// Its first characters and a reference to read the rest.
    Shortened,
    /// Only whether it succeeded, and a reference.
    Outcome,
    /// An answer memory wrote for a call that has no result.
    Synthetic,
}

/// The summary memory replays first, read back from its note.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SummaryCovers {
    pub first: u32,
    pub last: u32,
}

/// Each call the entries of `layer` replay, in order, with what was kept of it and why.
pub fn kept_calls(entries: &[Entry], layer: Layer) -> Vec<KeptCall> {
    let calls = entries
        .iter()
        .filter(|e| e.layer == layer)
        .flat_map(Entry::calls);
    let answers: Vec<_> = entries
        .iter()
        .filter(|e| e.layer == layer)
        .flat_map(Entry::answers)
        .collect();
    calls
        .map(|call| {
            let arguments_cut = call.arguments.to_string().contains(ARGUMENT_CUT_MARKER);
            let kept = answers
                .iter()
                .find(|a| a.call_id == call.id)
                .map_or(Kept::Synthetic, |a| {
                    kept(&a.content, a.is_error, &a.call_id)
                });
            let (mut rules, mut why) = match kept {
                Kept::Whole => (
                    vec!["M4"],
                    "the result is replayed whole: it is recent and short enough".to_string(),
                ),
                Kept::Shortened => (
                    vec!["M5"],
                    "the result is cut to its first characters, with a reference the model can \
                     read the whole result by"
                        .to_string(),
                ),
                Kept::Outcome => (
                    vec!["M7"],
                    "the turn is older than the closest ones, so only the outcome (ok or error) \
                     and a reference are kept"
                        .to_string(),
                ),
                Kept::Synthetic => (
                    vec!["M9"],
                    "the call has no result (it never returned or was not run), so memory \
                     answers it with a note saying so"
                        .to_string(),
                ),
            };
            if arguments_cut {
                rules.push("M6");
                why.push_str("; long strings in its arguments are cut");
            }
            KeptCall {
                call_id: call.id.clone(),
                name: call.name.clone(),
                kept,
                arguments_cut,
                rules,
                why,
            }
        })
        .collect()
}

/// The turns the replayed summary covers, when the entries open with one (rule C3).
pub fn summary_covers(entries: &[Entry]) -> Option<SummaryCovers> {
    let text = entries.first()?.parts.iter().find_map(|p| match p {
        Part::Text { text } => Some(text),
        _ => None,
    })?;
    let rest = text.strip_prefix(&format!("[{SUMMARY_NOTE} (turns "))?;
    let (range, _) = rest.split_once(',')?;
    let (first, last) = range.split_once('–')?;
    Some(SummaryCovers {
        first: first.parse().ok()?,
        last: last.parse().ok()?,
    })
}

fn kept(content: &str, is_error: bool, call_id: &str) -> Kept {
    if content == outcome(is_error, call_id) {
        Kept::Outcome
    } else if content.ends_with(&cut_result("", call_id)) && content.contains(&reference(call_id)) {
        Kept::Shortened
    } else if [
        Unanswered::NeverReturned,
        Unanswered::NotApproved,
        Unanswered::Pending,
        Unanswered::AwaitingApproval,
    ]
    .iter()
    .any(|u| u.answer() == content)
    {
        Kept::Synthetic
    } else {
        Kept::Whole
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::prompt::{Answer, Call};
    use crate::transcript::Role;

    fn replayed(arguments: serde_json::Value, answer: Option<&str>) -> Vec<Entry> {
        let mut call = Entry::new(Role::Assistant, Layer::Memory);
        call.parts.push(Part::Call(Call {
            id: "call_1".into(),
            name: "search".into(),
            arguments,
        }));
        let mut answers = Entry::new(Role::Tool, Layer::Memory);
        if let Some(content) = answer {
            answers.parts.push(Part::Answer(Answer {
                call_id: "call_1".into(),
                content: content.into(),
                is_error: false,
                pictures: Vec::new(),
            }));
        }
        vec![call, answers]
    }

    #[test]
    fn m4_m5_m6_m7_m9_each_replayed_call_says_what_it_kept_and_by_which_rule() {
        let cases = [
            (
                json!({"q": "x"}),
                Some("found it".to_string()),
                Kept::Whole,
                vec!["M4"],
            ),
            (
                json!({"q": "x"}),
                Some(cut_result("first characters", "call_1")),
                Kept::Shortened,
                vec!["M5"],
            ),
            (
                json!({"q": format!("long{ARGUMENT_CUT_MARKER}")}),
                Some(outcome(false, "call_1")),
                Kept::Outcome,
                vec!["M7", "M6"],
            ),
            (
                json!({}),
                Some(Unanswered::NeverReturned.answer().to_string()),
                Kept::Synthetic,
                vec!["M9"],
            ),
            (json!({}), None, Kept::Synthetic, vec!["M9"]),
        ];
        for (arguments, answer, expected, rules) in cases {
            let entries = replayed(arguments, answer.as_deref());
            let calls = kept_calls(&entries, Layer::Memory);
            assert_eq!(calls.len(), 1);
            assert_eq!(
                (calls[0].kept, calls[0].rules.clone()),
                (expected, rules),
                "{answer:?}"
            );
        }
    }

    #[test]
    fn c3_the_summary_note_names_the_turns_it_covers() {
        let mut entry = Entry::new(Role::User, Layer::Memory);
        entry.push_text(crate::compaction::summary_note(
            crate::block::TurnsCovered { first: 1, last: 7 },
            "Turns 1–7\n## Requests",
        ));
        assert_eq!(
            summary_covers(&[entry]),
            Some(SummaryCovers { first: 1, last: 7 })
        );
        assert_eq!(summary_covers(&replayed(json!({}), None)), None);
    }
}
