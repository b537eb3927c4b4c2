//! The language sample (rule C10): the user's latest paragraphs, quoted in the summary prompt so
//! the model writes the summary in the language most of them are in.
//!
//! Paragraphs come from the text the user wrote in chat turns, newest first, split on blank lines.
//! Left out: runtime notes (a paragraph wholly in square brackets, the form the runtime writes its
//! notes in, such as the summary note), the replayed summary's sections (its opening line and
//! section headings), slash commands (a paragraph whose first word is a `/slug`) and paragraphs of
//! fewer than three words, such as a pasted reference.

use unicode_segmentation::UnicodeSegmentation;

use super::CompactionConfig;
use super::note::{SECTIONS, SUMMARY_NOTE};
use super::text::cut_with_ellipsis;
use crate::block::Block;
use crate::tokens::is_unspaced_script;
use crate::transcript::{Role, Transcript, TurnKind};

/// Up to `config.sample_paragraphs` of the user's latest qualifying paragraphs, oldest first, each
/// cut to `config.sample_paragraph_chars` characters.
pub fn language_sample(transcript: &Transcript, config: &CompactionConfig) -> Vec<String> {
    let mut sample: Vec<String> = transcript
        .turns
        .iter()
        .rev()
        .filter(|turn| turn.kind == TurnKind::Chat)
        .flat_map(|turn| turn.messages.iter().rev())
        .filter(|message| message.role == Role::User)
        .flat_map(|message| message.blocks.iter().rev())
        .filter_map(|block| match block {
            Block::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .flat_map(|text| paragraphs(text).into_iter().rev())
        .filter(|p| qualifies(p, config.sample_min_words))
        .take(config.sample_paragraphs)
        .map(|p| cut_with_ellipsis(p, config.sample_paragraph_chars))
        .collect();
    sample.reverse();
    sample
}

/// The number of words in a paragraph. Words are separated by white space; a run of a script
/// written without spaces (Han, Kana, Thai, …) counts its Unicode (UAX #29) words, so a Japanese
/// sentence counts about one word per ideograph. A run of punctuation alone is no word.
pub fn word_count(paragraph: &str) -> usize {
    paragraph
        .split_whitespace()
        .map(|token| {
            if token.chars().any(is_unspaced_script) {
                token.unicode_words().count().max(1)
            } else {
                usize::from(token.chars().any(char::is_alphanumeric))
            }
        })
        .sum()
}

/// Splits text into trimmed paragraphs at blank lines.
fn paragraphs(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    let mut end = 0;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if line.trim().is_empty() {
            if let Some(s) = start.take() {
                out.push(text[s..end].trim());
            }
        } else {
            start.get_or_insert(offset);
            end = offset + line.len();
        }
        offset += line.len();
    }
    if let Some(s) = start {
        out.push(text[s..end].trim());
    }
    out
}

fn qualifies(paragraph: &str, min_words: usize) -> bool {
    !is_runtime_note(paragraph)
        && !is_summary_section(paragraph)
        && !is_slash_command(paragraph)
        && word_count(paragraph) >= min_words
}

fn is_runtime_note(paragraph: &str) -> bool {
    paragraph.starts_with('[') && paragraph.ends_with(']')
}

fn is_summary_section(paragraph: &str) -> bool {
    let first = paragraph.lines().next().unwrap_or_default();
    let heading = first.trim_start_matches('#').trim();
    first.starts_with('#') && SECTIONS.contains(&heading)
        || first.starts_with("Turns 1–")
        || paragraph.starts_with(&format!("[{SUMMARY_NOTE}"))
}

/// Whether the paragraph's first word is a `/slug` (rule S1's slug: `[a-z0-9][a-z0-9-]*`).
fn is_slash_command(paragraph: &str) -> bool {
    let first = paragraph.split_whitespace().next().unwrap_or_default();
    first.strip_prefix('/').is_some_and(|slug| {
        slug.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
            && slug
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c10_paragraphs_split_on_blank_lines() {
        assert_eq!(
            paragraphs("one\ntwo\n\n \n three \r\n\r\nfour"),
            vec!["one\ntwo", "three", "four"]
        );
        assert!(paragraphs("\n\n").is_empty());
    }

    #[test]
    fn c10_word_count_handles_scripts_without_spaces() {
        assert_eq!(word_count("Compara estos tres proveedores"), 4);
        assert!(word_count("今日は東京で会議があります") >= 3);
        assert!(word_count("見積もりを比較してください。") >= 3);
        assert_eq!(word_count("はい"), 2);
        assert_eq!(word_count("DOC-2291-B ok"), 2);
        assert_eq!(word_count("— … !"), 0);
    }

    #[test]
    fn c10_slash_commands_and_notes_are_recognised() {
        assert!(is_slash_command("/fact-check compare these"));
        assert!(!is_slash_command("/home/ana/notes.txt is where it lives"));
        assert!(!is_slash_command("/Compact please"));
        assert!(is_runtime_note(
            "[The picture photo.jpg is no longer available]"
        ));
        assert!(is_summary_section("## Requests\n- Turn 1: hola"));
        assert!(is_summary_section("Turns 1–4"));
    }
}
