//! Cutting text on character (grapheme cluster) boundaries.

use serde_json::Value;
use unicode_segmentation::UnicodeSegmentation;

pub(crate) use crate::memory::cut::ARGUMENT_CUT_MARKER;

/// The first `max` characters of `text` and how many characters were left out. Never splits a
/// grapheme cluster.
pub(crate) fn cut(text: &str, max: usize) -> (&str, usize) {
    let mut graphemes = text.grapheme_indices(true);
    match graphemes.nth(max) {
        None => (text, 0),
        Some((end, _)) => (&text[..end], 1 + graphemes.count()),
    }
}

/// `text` cut to `max` characters, ending in an ellipsis when something was left out.
pub(crate) fn cut_with_ellipsis(text: &str, max: usize) -> String {
    match cut(text, max) {
        (kept, 0) => kept.to_string(),
        (kept, _) => format!("{kept}…"),
    }
}

/// `value` with every string (keys excepted) cut to `max` characters and marked, so that the
/// arguments stay valid JSON.
pub(crate) fn cut_json_strings(value: &Value, max: usize) -> Value {
    match value {
        Value::String(s) => match cut(s, max) {
            (_, 0) => value.clone(),
            (kept, _) => Value::String(format!("{kept}{ARGUMENT_CUT_MARKER}")),
        },
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| cut_json_strings(v, max)).collect())
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), cut_json_strings(v, max)))
                .collect(),
        ),
        _ => value.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_keeps_whole_clusters() {
        assert_eq!(cut("abc", 5), ("abc", 0));
        assert_eq!(cut("abc", 3), ("abc", 0));
        assert_eq!(cut("abcd", 3), ("abc", 1));
        assert_eq!(cut("👩🏽‍💻é̃x", 1), ("👩🏽‍💻", 2));
        assert_eq!(cut("", 0), ("", 0));
        assert_eq!(cut("a", 0), ("", 1));
    }
}
