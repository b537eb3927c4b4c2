//! How a tool call is shown to the person: a compact card with the tool's name, a one-line
//! summary of its arguments, its state, and on demand the opening lines of its result. Decided
//! here so that every front end shows an agent's work alike; cuts never split a character (a
//! grapheme cluster).

use serde_json::Value;
use unicode_segmentation::UnicodeSegmentation;

use crate::block::{BlockKind, ToolPicture};
use crate::tools::{DECLINED_RESULT, NOT_RUN_FOR_A_QUESTION, server_tool};
use crate::transcript::TurnStatus;
use crate::turn_state::{BlockState, TurnState};

/// Where a call stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolState {
    /// Its result has not come yet while the turn runs.
    Running,
    /// It waits for the person to approve or decline it.
    AwaitingApproval,
    /// It ran and answered.
    Done,
    /// It ran, or was called, and answered with an error.
    Failed,
    /// It did not run: the turn stopped first, or the reply asked a question instead.
    NotRun,
    /// The person declined it.
    Declined,
}

impl ToolState {
    /// The state's name, for a front end's markup and tests.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolState::Running => "running",
            ToolState::AwaitingApproval => "awaiting_approval",
            ToolState::Done => "done",
            ToolState::Failed => "failed",
            ToolState::NotRun => "not_run",
            ToolState::Declined => "declined",
        }
    }

    /// The state in words for the person.
    pub fn label(self) -> &'static str {
        match self {
            ToolState::Running => "Running",
            ToolState::AwaitingApproval => "Awaiting approval",
            ToolState::Done => "Done",
            ToolState::Failed => "Failed",
            ToolState::NotRun => "Not run",
            ToolState::Declined => "Declined",
        }
    }
}

/// How much of a call a card shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolCardConfig {
    /// The longest argument summary, in characters. **Decision:** 80.
    pub summary_chars: usize,
    /// How many lines of the result open on demand. **Decision:** 8.
    pub result_lines: usize,
    /// The longest result line shown, in characters. **Decision:** 160.
    pub line_chars: usize,
}

impl Default for ToolCardConfig {
    fn default() -> Self {
        ToolCardConfig {
            summary_chars: 80,
            result_lines: 8,
            line_chars: 160,
        }
    }
}

/// One call as its card shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCard {
    pub call_id: String,
    /// The MCP server the tool is one of, for a server's tool.
    pub server: Option<String>,
    /// The tool's name (on its server, for a server's tool).
    pub name: String,
    /// Its arguments on one line ([`argument_summary`]).
    pub summary: String,
    pub state: ToolState,
    /// The opening lines of its result, once the result came and is not empty; none for a call
    /// that did not run, whose answer is written for the model.
    pub result: Option<Opening>,
    /// The pictures its result answered with, shown under the result.
    pub pictures: Vec<ToolPicture>,
}

/// The opening of a longer text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opening {
    pub text: String,
    /// Whether anything was left out.
    pub cut: bool,
}

/// The card of the tool use at `at` (a place in [`TurnState::blocks`]); `None` for any other
/// block.
pub fn tool_card(state: &TurnState, at: usize, config: &ToolCardConfig) -> Option<ToolCard> {
    let block = state.blocks.get(at)?;
    if block.kind != BlockKind::ToolUse {
        return None;
    }
    let call = block.call.as_ref()?;
    let answers = |b: &&BlockState| b.call.as_ref().is_some_and(|c| c.id == call.id);
    let result = state
        .blocks
        .iter()
        .filter(|b| b.kind == BlockKind::ToolResult)
        .find(answers);
    let asked = state
        .blocks
        .iter()
        .filter(|b| b.kind == BlockKind::ApprovalRequest)
        .any(|b| answers(&b));
    let tool_state = match result {
        Some(result) if !result.ended => ToolState::Running,
        Some(result) if !result.is_error => ToolState::Done,
        Some(result) if result.text == DECLINED_RESULT => ToolState::Declined,
        Some(result) if result.text == NOT_RUN_FOR_A_QUESTION => ToolState::NotRun,
        Some(_) => ToolState::Failed,
        None if asked && state.status == TurnStatus::Paused => ToolState::AwaitingApproval,
        None if state.decision(&call.id) == Some(false) => ToolState::Declined,
        None if state.status == TurnStatus::Running => ToolState::Running,
        None => ToolState::NotRun,
    };
    let (server, name) = match server_tool(&call.name) {
        Some((server, tool)) => (Some(server.to_string()), tool.to_string()),
        None => (None, call.name.clone()),
    };
    Some(ToolCard {
        call_id: call.id.clone(),
        server,
        name,
        summary: argument_summary(&block.text, config.summary_chars),
        state: tool_state,
        // A call that did not run has no result to show: its answer is written for the model.
        result: result
            .filter(|r| r.ended && !r.text.trim().is_empty())
            .filter(|_| !matches!(tool_state, ToolState::Declined | ToolState::NotRun))
            .map(|r| opening(&r.text, config.result_lines, config.line_chars)),
        pictures: result
            .filter(|r| r.ended)
            .map(|r| r.pictures.clone())
            .unwrap_or_default(),
    })
}

/// A call's arguments (JSON) on one line of at most `max_chars` characters: a lone argument's
/// value, else `name: value` pairs by name; strings without their quotes, white
/// space run together. Arguments that are not a JSON object are shown as written.
pub fn argument_summary(arguments: &str, max_chars: usize) -> String {
    let line = match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(fields)) if fields.len() == 1 => {
            fields.values().next().map(value_text).unwrap_or_default()
        }
        Ok(Value::Object(fields)) => fields
            .iter()
            .map(|(name, value)| format!("{name}: {}", value_text(value)))
            .collect::<Vec<_>>()
            .join(", "),
        _ => arguments.to_string(),
    };
    let line = line.split_whitespace().collect::<Vec<_>>().join(" ");
    cut(&line, max_chars).0
}

/// The opening `lines` lines of `text`, each at most `line_chars` characters, and whether
/// anything was left out.
pub fn opening(text: &str, lines: usize, line_chars: usize) -> Opening {
    let text = text.trim_end();
    let mut cut_any = text.lines().count() > lines;
    let shown: Vec<String> = text
        .lines()
        .take(lines)
        .map(|line| {
            let (line, cut_here) = cut(line, line_chars);
            cut_any |= cut_here;
            line
        })
        .collect();
    Opening {
        text: shown.join("\n"),
        cut: cut_any,
    }
}

fn value_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// `text` cut to `max` characters, the last of them `…` when it was cut, and whether it was.
fn cut(text: &str, max: usize) -> (String, bool) {
    let mut clusters = text.grapheme_indices(true);
    match clusters.nth(max) {
        None => (text.to_string(), false),
        Some(_) => {
            let end = text
                .grapheme_indices(true)
                .nth(max.saturating_sub(1))
                .map_or(0, |(at, _)| at);
            (format!("{}…", &text[..end]), true)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lone_argument_is_its_value_and_several_are_named() {
        assert_eq!(
            argument_summary(r#"{"text":"Tell me about\nwriting   systems"}"#, 80),
            "Tell me about writing systems"
        );
        assert_eq!(
            argument_summary(r#"{"title":"Herons","pages":3,"draft":true}"#, 80),
            "draft: true, pages: 3, title: Herons"
        );
        assert_eq!(argument_summary("{}", 80), "");
        assert_eq!(argument_summary("not json", 80), "not json");
    }

    #[test]
    fn cuts_keep_characters_whole() {
        let family = "👨‍👩‍👧‍👦";
        let text = format!(r#"{{"text":"{}"}}"#, family.repeat(5));
        let summary = argument_summary(&text, 3);
        assert_eq!(summary, format!("{}…", family.repeat(2)));
        assert_eq!(cut("ab", 2), ("ab".to_string(), false));
        assert_eq!(cut("abc", 2), ("a…".to_string(), true));
        // Thai: a consonant with its vowel and tone mark is one character.
        assert_eq!(cut("น้ำน้ำ", 1).0, "…");
        assert_eq!(cut("น้ำน้ำ", 2), ("น้ำน้ำ".to_string(), false));
    }

    #[test]
    fn a_result_opens_with_its_first_lines() {
        let result = "one\ntwo\nthree\n";
        assert_eq!(
            opening(result, 2, 10),
            Opening {
                text: "one\ntwo".into(),
                cut: true
            }
        );
        assert_eq!(
            opening(result, 3, 10),
            Opening {
                text: "one\ntwo\nthree".into(),
                cut: false
            }
        );
        assert_eq!(
            opening("a long line", 3, 6),
            Opening {
                text: "a lon…".into(),
                cut: true
            }
        );
    }
}
