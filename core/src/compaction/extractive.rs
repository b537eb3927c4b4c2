//! A small extractive summariser for the deterministic demo model: it writes a real summary of a
//! [`SummaryRequest`] by copying, never by paraphrasing, so the same request always gives the same
//! summary in the history's own words and languages.
//!
//! It reads the request the way a model would (the tagged history in its user message) and fills
//! the five sections: every request quoted verbatim, the assistant's last words of each turn as
//! its decisions, each tool call with its string arguments (paths, ids) as work done, failed or
//! unanswered calls and pending questions as open work, and the first lines of each result as
//! facts with its reference. An earlier summary's sections are carried over first.

use serde_json::Value;

use super::note::{SECTIONS, reference};
use super::prompt::SummaryRequest;
use super::text::cut_with_ellipsis;

/// Characters kept of a fact's line, of an argument value and of a decision.
const FACT_CHARS: usize = 160;
const ARGUMENT_CHARS: usize = 80;
const DECISION_CHARS: usize = 200;
/// Lines of a result taken as facts.
const FACT_LINES: usize = 3;

/// The extractive summary of `request`.
pub fn summarise(request: &SummaryRequest) -> String {
    let mut reader = Reader::default();
    for line in request.history_text().lines() {
        reader.line(line);
    }
    let header = request
        .system
        .lines()
        .find(|l| l.starts_with("Turns 1–"))
        .map_or_else(|| format!("Turns 1–{}", reader.turn.max(1)), str::to_string);
    let mut sections: [Vec<String>; 5] = Default::default();
    for (section, lines) in sections.iter_mut().zip(reader.earlier.iter()) {
        section.extend(lines.iter().cloned());
    }
    sections[0].extend(reader.requests);
    sections[1].extend(
        reader
            .decisions
            .into_iter()
            .map(|(turn, text)| format!("- Turn {turn}: the assistant answered: {text}")),
    );
    sections[2].extend(reader.work);
    sections[3].extend(reader.open_work);
    sections[4].extend(reader.facts);

    let mut out = header;
    for (title, lines) in SECTIONS.iter().zip(sections.iter()) {
        out.push_str("\n\n## ");
        out.push_str(title);
        out.push('\n');
        if lines.is_empty() {
            out.push_str("- None.");
        } else {
            out.push_str(&lines.join("\n"));
        }
    }
    out
}

/// What is open while reading the history.
#[derive(Debug, Default, Clone, PartialEq)]
enum Open {
    #[default]
    Nothing,
    Earlier,
    User,
    Assistant,
    Call {
        id: String,
        name: String,
    },
    Result {
        id: String,
        outcome: String,
    },
    Clarification,
    Approval,
    Done,
}

#[derive(Debug, Default)]
struct Reader {
    open: Open,
    buffer: Vec<String>,
    turn: u32,
    earlier: [Vec<String>; 5],
    requests: Vec<String>,
    decisions: Vec<(u32, String)>,
    work: Vec<String>,
    open_work: Vec<String>,
    facts: Vec<String>,
    calls: Vec<(String, String)>,
}

impl Reader {
    fn line(&mut self, line: &str) {
        match self.open {
            Open::Done => {}
            Open::Nothing => self.opening(line),
            _ if is_closing(line) => self.close(),
            Open::User if line.starts_with("<attachment ") => {
                let name = crate::tag::value(line, "name").unwrap_or_default();
                let id = crate::tag::value(line, "id").unwrap_or_default();
                self.buffer.push(format!("(attached: {name}, {id})"));
            }
            _ => self.buffer.push(line.to_string()),
        }
    }

    fn opening(&mut self, line: &str) {
        let tag = line.split([' ', '>', '/']).next().unwrap_or_default();
        self.open = match tag {
            "<earlier_summary" => Open::Earlier,
            "<turn" => {
                self.turn = crate::tag::value(line, "number")
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(self.turn);
                Open::Nothing
            }
            "<user" => Open::User,
            "<assistant" => Open::Assistant,
            "<clarification_request" => Open::Clarification,
            "<approval_request" => Open::Approval,
            "<tool_call" => Open::Call {
                id: crate::tag::value(line, "ref").unwrap_or_default(),
                name: crate::tag::value(line, "name").unwrap_or_default(),
            },
            "<tool_result" => {
                let id = crate::tag::value(line, "ref").unwrap_or_default();
                let outcome = crate::tag::value(line, "outcome").unwrap_or_default();
                if line.ends_with("/>") {
                    self.unanswered_or_left_out(&id, &outcome);
                    Open::Nothing
                } else {
                    Open::Result { id, outcome }
                }
            }
            "<language_sample" | "<user_instructions" => Open::Done,
            _ => Open::Nothing,
        };
        self.buffer.clear();
    }

    fn close(&mut self) {
        let text = self.buffer.join("\n").trim().to_string();
        let turn = self.turn;
        match std::mem::take(&mut self.open) {
            Open::Earlier => self.carry_over(&text),
            Open::User => self.requests.push(format!(
                "- Turn {turn}: {}",
                text.lines().collect::<Vec<_>>().join("\n  ")
            )),
            Open::Assistant => {
                let decision = cut_with_ellipsis(first_sentence(&text), DECISION_CHARS);
                match self.decisions.last_mut() {
                    Some((t, last)) if *t == turn => *last = decision,
                    _ => self.decisions.push((turn, decision)),
                }
            }
            Open::Call { id, name } => {
                self.work
                    .push(format!("- Turn {turn}: {name} {}", argument_values(&text)));
                self.calls.push((id, name));
            }
            Open::Result { id, outcome } => {
                let name = self.call_name(&id);
                let mut lines = text
                    .lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty() && !l.starts_with("[cut: "))
                    .map(|l| cut_with_ellipsis(l, FACT_CHARS));
                if outcome == "error" {
                    let first = lines.next().unwrap_or_default();
                    self.open_work
                        .push(format!("- [ ] Turn {turn}: {name} failed: {first}"));
                } else {
                    let reference = reference(&id);
                    self.facts.extend(
                        lines
                            .take(FACT_LINES)
                            .map(|line| format!("- {name}: {line} {reference}")),
                    );
                }
            }
            Open::Clarification => self.open_work.push(format!(
                "- [ ] Turn {turn}: answer the assistant's question: {text}"
            )),
            Open::Approval => self.open_work.push(format!(
                "- [ ] Turn {turn}: decide on the approval request: {text}"
            )),
            Open::Nothing | Open::Done => {}
        }
        self.buffer.clear();
    }

    fn unanswered_or_left_out(&mut self, id: &str, outcome: &str) {
        let name = self.call_name(id);
        let turn = self.turn;
        match outcome {
            "ok" => self
                .facts
                .push(format!("- {name} returned a result {}", reference(id))),
            "error" => self
                .open_work
                .push(format!("- [ ] Turn {turn}: {name} failed")),
            other => self.open_work.push(format!(
                "- [ ] Turn {turn}: {name} {other}; run it again if still needed"
            )),
        }
    }

    fn call_name(&self, id: &str) -> String {
        self.calls
            .iter()
            .rev()
            .find(|(call, _)| call == id)
            .map_or_else(|| "a tool".to_string(), |(_, name)| name.clone())
    }

    fn carry_over(&mut self, summary: &str) {
        let mut section: Option<usize> = None;
        for line in summary.lines() {
            if let Some(title) = line.strip_prefix("## ") {
                section = SECTIONS.iter().position(|s| *s == title.trim());
                continue;
            }
            if let Some(i) = section
                && !line.trim().is_empty()
                && line.trim() != "- None."
            {
                self.earlier[i].push(line.to_string());
            }
        }
    }
}

fn is_closing(line: &str) -> bool {
    matches!(
        line,
        "</earlier_summary>"
            | "</user>"
            | "</assistant>"
            | "</tool_call>"
            | "</tool_result>"
            | "</clarification_request>"
            | "</approval_request>"
    )
}

/// The string values in a call's arguments, or the arguments as text when they are not JSON.
fn argument_values(arguments: &str) -> String {
    let Ok(value) = serde_json::from_str::<Value>(arguments) else {
        return cut_with_ellipsis(arguments, ARGUMENT_CHARS);
    };
    let mut values = Vec::new();
    strings(&value, &mut values);
    values
        .into_iter()
        .map(|v| cut_with_ellipsis(v, ARGUMENT_CHARS))
        .collect::<Vec<_>>()
        .join(", ")
}

fn strings<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    match value {
        Value::String(s) => out.push(s),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

/// The text up to the end of its first sentence or line.
fn first_sentence(text: &str) -> &str {
    let line = text.lines().next().unwrap_or_default();
    let end = line
        .char_indices()
        .find(|&(i, c)| {
            matches!(c, '。' | '！' | '？')
                || (matches!(c, '.' | '!' | '?') && line[i + c.len_utf8()..].starts_with(' '))
        })
        .map_or(line.len(), |(i, c)| i + c.len_utf8());
    &line[..end]
}
