//! The wording around a summary: its opening line (rule C9), its sections (rule C8), the note it
//! is replayed under (rule C3), its tool-result references and their removal for display (C12).

use crate::block::TurnsCovered;

/// The note a summary is replayed under, at the head of the message list after a compaction.
pub const SUMMARY_NOTE: &str = "Summary of the conversation so far";

/// The summary's section headings, in order. They stay in English whatever the summary's
/// language (rule C10).
pub const SECTIONS: [&str; 5] = ["Requests", "Decisions", "Work done", "Open work", "Facts"];

/// The summary's opening line, naming the turns it covers, e.g. `Turns 1–12` (rule C9).
pub fn turns_header(covers: TurnsCovered) -> String {
    format!("Turns {}–{}", covers.first, covers.last)
}

/// The text of the message a summary is replayed as: the note naming the turns, then the summary.
/// The same wording as memory's replay of the summary (rule C3).
pub fn summary_note(covers: TurnsCovered, summary: &str) -> String {
    format!(
        "[{SUMMARY_NOTE} (turns {}–{}, context compaction). It replaces the messages before it.]\n\n{summary}",
        covers.first, covers.last
    )
}

/// How a fact cites the tool result that found it: `[ref:<call id>]`. The model can read the
/// whole result back with the `read_tool_result` tool by that call id.
pub fn reference(call_id: &str) -> String {
    format!("{REFERENCE_OPEN}{call_id}]")
}

const REFERENCE_OPEN: &str = "[ref:";

/// The summary as the screen shows it: every `[ref:…]` reference taken out, together with the
/// spaces before it (rule C12).
pub fn strip_references(summary: &str) -> String {
    let mut out = String::with_capacity(summary.len());
    let mut rest = summary;
    while let Some(at) = rest.find(REFERENCE_OPEN) {
        let after = &rest[at + REFERENCE_OPEN.len()..];
        let Some(close) = after.find(']').filter(|&c| is_reference_id(&after[..c])) else {
            out.push_str(&rest[..at + REFERENCE_OPEN.len()]);
            rest = after;
            continue;
        };
        out.push_str(rest[..at].trim_end_matches([' ', '\t']));
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    out
}

fn is_reference_id(id: &str) -> bool {
    !id.is_empty() && !id.chars().any(char::is_whitespace)
}

/// The model's answer made into the stored summary: trimmed, opening with the canonical header.
/// A header the model wrote in its own form (`# Turns 1-12`, `**Turns 1–12**`) is replaced.
/// `None` when nothing but a header is left.
pub(crate) fn normalise_summary(answer: &str, covers: TurnsCovered) -> Option<String> {
    let answer = answer.trim();
    let (first, rest) = answer.split_once('\n').unwrap_or((answer, ""));
    let body = if looks_like_header(first) {
        rest.trim()
    } else {
        answer
    };
    if body.is_empty() {
        return None;
    }
    Some(format!("{}\n\n{body}", turns_header(covers)))
}

fn looks_like_header(line: &str) -> bool {
    let line = line
        .trim()
        .trim_matches(|c: char| c == '#' || c == '*' || c.is_whitespace());
    let Some(rest) = line
        .strip_prefix("Turns")
        .or_else(|| line.strip_prefix("Turn"))
    else {
        return false;
    };
    let rest = rest.trim_start();
    rest.starts_with('1')
        && rest
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '–' | '—' | '-' | ' ' | ':' | '.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    const COVERS: TurnsCovered = TurnsCovered { first: 1, last: 7 };

    #[test]
    fn c9_header_is_canonical() {
        assert_eq!(turns_header(COVERS), "Turns 1–7");
        for answer in [
            "Turns 1–7\n\n## Requests",
            "# Turns 1-7\n## Requests",
            "**Turns 1 – 7**\n## Requests",
            "## Requests",
        ] {
            assert_eq!(
                normalise_summary(answer, COVERS).as_deref(),
                Some("Turns 1–7\n\n## Requests"),
                "{answer:?}"
            );
        }
        assert_eq!(normalise_summary("  Turns 1–7  ", COVERS), None);
        assert_eq!(normalise_summary("", COVERS), None);
    }
}
