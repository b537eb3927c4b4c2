//! A conversation's title before anyone renames it: the opening words of its first message; and
//! what any name shown to people (a title, an attachment's file name) is cleaned of.

use unicode_segmentation::UnicodeSegmentation;

use crate::skills::parse_selection;

/// The longest title made from a message, in grapheme clusters, the ellipsis included.
pub const TITLE_LENGTH: usize = 60;

/// The title a conversation takes from its first message: the message's text after its leading
/// `/slug` tokens, on one line with runs of whitespace as one space, cut at the last whole word
/// that fits in [`TITLE_LENGTH`] with `…` after it. Empty when the message has no words (a
/// message of only skills or attachments), so the next message may title the conversation.
pub fn title_from_message(text: &str) -> String {
    let text = shown_name(text);
    let selection = parse_selection(&text);
    let words: Vec<&str> = selection.text.split_whitespace().collect();
    let whole = words.join(" ");
    if whole.graphemes(true).count() <= TITLE_LENGTH {
        return whole;
    }
    let mut title = String::new();
    for word in &words {
        let with_word = if title.is_empty() {
            word.graphemes(true).count()
        } else {
            title.graphemes(true).count() + 1 + word.graphemes(true).count()
        };
        if with_word > TITLE_LENGTH - 1 {
            break;
        }
        if !title.is_empty() {
            title.push(' ');
        }
        title.push_str(word);
    }
    if title.is_empty() {
        // One word longer than a title: cut it between grapheme clusters.
        title = whole.graphemes(true).take(TITLE_LENGTH - 1).collect();
    }
    title.push('…');
    title
}

/// `text` as a name may be shown (a conversation's title, an attachment's file name): without
/// control characters (NUL, escapes; a line break or a tab becomes a space) and bidirectional
/// controls (which can show `invoice_\u{202E}fdp.exe` as `invoice_exe.pdf`), trimmed. Empty
/// when nothing visible is left: a name of only spaces and zero-width characters is no name.
pub fn shown_name(text: &str) -> String {
    let kept: String = text
        .chars()
        .filter_map(|c| match c {
            c if c.is_control() && c.is_whitespace() => Some(' '),
            c if c.is_control() || is_bidi_control(c) => None,
            c => Some(c),
        })
        .collect();
    let kept = kept.trim();
    if kept.chars().all(is_invisible) {
        String::new()
    } else {
        kept.to_string()
    }
}

/// `text` as a one-line name is shown (a conversation's title, a project's name): a shown name
/// ([`shown_name`]) whose whitespace runs are one space each.
pub fn one_line_name(text: &str) -> String {
    shown_name(text)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The characters that change the direction text is shown in: the embeddings, overrides and
/// isolates (U+202A–U+202E, U+2066–U+2069) and the directional marks (U+200E, U+200F, U+061C).
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

/// Whether `c` shows nothing of its own: whitespace, the zero-width space, joiners and word
/// joiner, invisible operators, the soft hyphen, the byte-order mark, variation selectors and
/// the Hangul fillers. They may stand in a name beside visible characters (a joiner inside an
/// emoji), never alone.
fn is_invisible(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '\u{00AD}'
                | '\u{034F}'
                | '\u{115F}'
                | '\u{1160}'
                | '\u{180E}'
                | '\u{200B}'..='\u{200D}'
                | '\u{2060}'..='\u{2064}'
                | '\u{3164}'
                | '\u{FE00}'..='\u{FE0F}'
                | '\u{FEFF}'
                | '\u{FFA0}'
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(message: &str, expected: &str) {
        assert_eq!(title_from_message(message), expected, "for {message:?}");
    }

    #[test]
    fn titles() {
        check("Plan the launch", "Plan the launch");
        check("  Plan\n\tthe   launch\n", "Plan the launch");
        check(
            "/market-research /fact-check size of the EV market",
            "size of the EV market",
        );
        check("/market-research", "");
        check("", "");
        check("/compact keep the numbers", "/compact keep the numbers");
        check(
            "Write a short story about a lighthouse keeper who finds a message in a bottle",
            "Write a short story about a lighthouse keeper who finds a…",
        );
        check(&"a".repeat(100), &format!("{}…", "a".repeat(59)));
        check(&"👩‍👩‍👧".repeat(70), &format!("{}…", "👩‍👩‍👧".repeat(59)));
        check("\u{202E}Plan\u{0} the\u{200F} launch", "Plan the launch");
        check("\u{200B}\u{200D}\u{FEFF} \u{2060}", "");
    }

    #[test]
    fn a_one_line_name_has_one_space_for_each_run_of_whitespace() {
        assert_eq!(
            one_line_name("  heron \n\n survey\u{202E}  2026 "),
            "heron survey 2026"
        );
        assert_eq!(one_line_name("\u{200B} \t"), "");
    }

    #[test]
    fn a_shown_name_keeps_no_controls_and_is_empty_when_nothing_visible_is_left() {
        assert_eq!(shown_name("invoice_\u{202E}fdp.exe"), "invoice_fdp.exe");
        assert_eq!(shown_name("bad\u{7}name\u{0}.txt"), "badname.txt");
        assert_eq!(shown_name(" two\nlines\t"), "two lines");
        let every_bidi_control: String = [
            '\u{202A}', '\u{202B}', '\u{202C}', '\u{202D}', '\u{202E}', '\u{2066}', '\u{2067}',
            '\u{2068}', '\u{2069}', '\u{200E}', '\u{200F}', '\u{061C}',
        ]
        .iter()
        .flat_map(|c| [*c, 'x'])
        .collect();
        assert_eq!(shown_name(&every_bidi_control), "xxxxxxxxxxxx");
        for nothing in [
            "",
            "  ",
            "\u{202E}\u{200F}",
            "\u{200B}\u{200C}",
            "\u{FEFF}\u{0}",
            "\u{3164}",
        ] {
            assert_eq!(shown_name(nothing), "", "{nothing:?}");
        }
        assert_eq!(
            shown_name("👨\u{200D}👩\u{200D}👧"),
            "👨\u{200D}👩\u{200D}👧"
        );
    }

    proptest::proptest! {
        #[test]
        fn a_title_is_one_line_of_at_most_the_limit(message in "\\PC{0,200}") {
            let title = title_from_message(&message);
            proptest::prop_assert!(title.graphemes(true).count() <= TITLE_LENGTH);
            proptest::prop_assert!(!title.contains('\n'));
            proptest::prop_assert!(!title.chars().any(|c| c.is_control() || is_bidi_control(c)));
            proptest::prop_assert_eq!(title.trim(), title.as_str());
        }
    }
}
