//! How the blocks of a turn are drawn (rules R1, R2, R10): decided here so that every front end
//! draws a conversation the same way.

use crate::block::BlockKind;

/// How one block of a turn is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Drawn {
    /// The turn's answer: text after the turn's last tool call.
    Answer,
    /// Pre-tool narration: text followed later in the turn by a tool call. Drawn one size below the
    /// answer once the turn has one (R1).
    Narration,
    /// Thinking: smaller still, in the faintest ink, never opened for the reader (R2).
    Thinking,
    /// Anything else (tool calls and results, requests, compaction) keeps its own look.
    Other(BlockKind),
}

/// How each block of a turn's assistant output is drawn, given the kinds of those blocks in order
/// (every assistant message of the turn, flattened).
pub fn drawn_as(kinds: &[BlockKind]) -> Vec<Drawn> {
    let last_call = kinds.iter().rposition(|k| *k == BlockKind::ToolUse);
    kinds
        .iter()
        .enumerate()
        .map(|(position, kind)| match kind {
            BlockKind::Text if last_call.is_some_and(|call| position < call) => Drawn::Narration,
            BlockKind::Text => Drawn::Answer,
            BlockKind::Thinking => Drawn::Thinking,
            other => Drawn::Other(*other),
        })
        .collect()
}

/// Whether the turn has an answer yet, so that narration shrinks below it (R1).
pub fn has_answer(kinds: &[BlockKind]) -> bool {
    drawn_as(kinds).contains(&Drawn::Answer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use BlockKind::*;

    fn check(kinds: &[BlockKind], expected: &[Drawn], answer: bool) {
        assert_eq!(drawn_as(kinds), expected, "for {kinds:?}");
        assert_eq!(has_answer(kinds), answer, "has_answer for {kinds:?}");
    }

    // R1: text before a tool call is narration; the text after the last call is the answer.
    #[test]
    fn r1_narration_is_text_before_a_tool_call() {
        check(
            &[Text, ToolUse, ToolResult, Text],
            &[
                Drawn::Narration,
                Drawn::Other(ToolUse),
                Drawn::Other(ToolResult),
                Drawn::Answer,
            ],
            true,
        );
        check(
            &[Text, ToolUse],
            &[Drawn::Narration, Drawn::Other(ToolUse)],
            false,
        );
        check(&[Text], &[Drawn::Answer], true);
    }

    // R2: thinking is drawn as thinking wherever it stands, and never counts as the answer.
    #[test]
    fn r2_thinking_is_never_the_answer() {
        check(&[Thinking], &[Drawn::Thinking], false);
        check(
            &[Thinking, Text, Thinking],
            &[Drawn::Thinking, Drawn::Answer, Drawn::Thinking],
            true,
        );
    }
}

/// Where a turn stands among the versions of one message: a turn that answers another's message
/// again (Regenerate, an edited latest message) joins that turn's versions. The page shows one
/// version of each at a time, with `‹ number/of ›`; the transcript keeps every turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Version {
    /// The first turn of its versions, which names them.
    pub first: u32,
    /// Its place among them, from 1.
    pub number: usize,
    /// How many versions there are.
    pub of: usize,
}

/// Each turn's version, given each turn's index and the turn it answers again, in order. A turn
/// that names one not before it starts versions of its own.
pub fn versions(turns: &[(u32, Option<u32>)]) -> Vec<Version> {
    let mut firsts: Vec<u32> = Vec::with_capacity(turns.len());
    for (position, &(index, again)) in turns.iter().enumerate() {
        let first = again
            .filter(|&a| a < index)
            .and_then(|a| turns[..position].iter().rposition(|t| t.0 == a))
            .map_or(index, |at| firsts[at]);
        firsts.push(first);
    }
    firsts
        .iter()
        .enumerate()
        .map(|(position, &first)| Version {
            first,
            number: firsts[..=position].iter().filter(|&&f| f == first).count(),
            of: firsts.iter().filter(|&&f| f == first).count(),
        })
        .collect()
}
