//! A conversation's title before anyone renames it: the opening words of its first message.

use unicode_segmentation::UnicodeSegmentation;

use crate::skills::parse_selection;

/// The longest title made from a message, in grapheme clusters, the ellipsis included.
pub const TITLE_LENGTH: usize = 60;

/// The title a conversation takes from its first message: the message's text after its leading
/// `/slug` tokens, on one line with runs of whitespace as one space, cut at the last whole word
/// that fits in [`TITLE_LENGTH`] with `…` after it. Empty when the message has no words (a
/// message of only skills or attachments), so the next message may title the conversation.
pub fn title_from_message(text: &str) -> String {
    let selection = parse_selection(text);
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
    }

    proptest::proptest! {
        #[test]
        fn a_title_is_one_line_of_at_most_the_limit(message in "\\PC{0,200}") {
            let title = title_from_message(&message);
            proptest::prop_assert!(title.graphemes(true).count() <= TITLE_LENGTH);
            proptest::prop_assert!(!title.contains('\n'));
            proptest::prop_assert_eq!(title.trim(), title.as_str());
        }
    }
}
