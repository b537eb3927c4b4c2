//! Cutting text on character (grapheme cluster) boundaries at a cost bounded by the cut, not by
//! the length of the text: a 1 MB string cut to 200 characters reads about 200 characters.

use serde_json::Value;
use unicode_segmentation::UnicodeSegmentation;

/// The marker that ends a string value cut inside a call's arguments (rule M6). The same marker
/// as the compaction request uses.
pub const ARGUMENT_CUT_MARKER: &str = "…[cut]";

/// The first `max` characters of `text`, or `None` when `text` has no more than `max`.
pub(crate) fn cut_prefix(text: &str, max: usize) -> Option<&str> {
    if text.len() <= max {
        return None;
    }
    if plain_ascii(&text.as_bytes()[..=max]) {
        return Some(&text[..max]);
    }
    text.grapheme_indices(true)
        .nth(max)
        .map(|(end, _)| &text[..end])
}

/// The number of characters in `text`, counting no further than `limit`.
pub(crate) fn count_up_to(text: &str, limit: usize) -> usize {
    let head = &text.as_bytes()[..text.len().min(limit)];
    if plain_ascii(head) && text.as_bytes().get(head.len()).is_none_or(u8::is_ascii) {
        return head.len();
    }
    text.graphemes(true).take(limit).count()
}

/// Whether every byte is ASCII other than a carriage return. In such a run each byte is one
/// character (no rule of UAX #29 joins two ASCII characters but CR LF), and a boundary falls
/// after every byte that an ASCII byte follows.
fn plain_ascii(bytes: &[u8]) -> bool {
    bytes.iter().all(|&b| b.is_ascii() && b != b'\r')
}

/// `value` with every string value (object keys excepted, so the shape stays the same) cut to
/// `max` characters and marked; the result is valid JSON (rule M6).
pub(crate) fn cut_arguments(value: &Value, max: usize) -> Value {
    match value {
        Value::String(s) => match cut_prefix(s, max) {
            None => value.clone(),
            Some(kept) => Value::String(format!("{kept}{ARGUMENT_CUT_MARKER}")),
        },
        Value::Array(items) => Value::Array(items.iter().map(|v| cut_arguments(v, max)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), cut_arguments(v, max)))
                .collect(),
        ),
        _ => value.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_prefix_keeps_whole_clusters() {
        assert_eq!(cut_prefix("abc", 3), None);
        assert_eq!(cut_prefix("abcd", 3), Some("abc"));
        assert_eq!(cut_prefix("👩🏽‍💻é̃x", 1), Some("👩🏽‍💻"));
        assert_eq!(cut_prefix("👩🏽‍💻", 1), None);
        assert_eq!(cut_prefix("a", 0), Some(""));
    }

    #[test]
    fn count_up_to_stops_at_the_limit() {
        assert_eq!(count_up_to("👩🏽‍💻ab", 10), 3);
        assert_eq!(count_up_to("abcdef", 4), 4);
        assert_eq!(count_up_to("abc", 4), 3);
        assert_eq!(count_up_to("a\r\nb", 4), 3);
        assert_eq!(count_up_to("abe\u{301}", 3), 3);
    }

    #[test]
    fn the_ascii_fast_path_agrees_with_segmentation() {
        fn slow(text: &str, max: usize) -> Option<&str> {
            let mut g = text.grapheme_indices(true);
            g.nth(max).map(|(end, _)| &text[..end])
        }
        for text in [
            "abcdef",
            "abc\r\ndef",
            "ab\r\n",
            "abce\u{301}f",
            "abc👍🏽d",
            "abc\u{200d}d",
        ] {
            for max in 0..text.len() {
                assert_eq!(cut_prefix(text, max), slow(text, max), "{text:?} at {max}");
            }
        }
    }
}
