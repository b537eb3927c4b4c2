//! How the demo quotes the person's words and what it read: whole words and whole JSON objects,
//! or nothing.

use unicode_segmentation::UnicodeSegmentation;

/// The opening of a text that a quote may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quote<'a> {
    /// Whole words only, never ending inside a word or a JSON object; empty when not even the
    /// first word fits.
    pub text: &'a str,
    /// Whether the quote holds the whole text.
    pub whole: bool,
}

impl Quote<'_> {
    /// The quote in curly quotation marks, with an ellipsis when it holds only the opening, or
    /// `None` when it is empty.
    pub fn quoted(&self) -> Option<String> {
        if self.text.is_empty() {
            None
        } else if self.whole {
            Some(format!("“{}”", self.text))
        } else {
            Some(format!("“{}…”", self.text))
        }
    }
}

/// The opening of `text` of at most `limit` characters (grapheme clusters) that ends at a word
/// boundary (UAX #29) where a phrase may end: before white space or punctuation, or between two words written
/// without spaces (as Chinese or Japanese is). A JSON object is one piece, quoted whole or not at
/// all. Trailing white space, commas and colons are left out of a cut quote.
pub fn opening(text: &str, limit: usize) -> Quote<'_> {
    let text = text.trim();
    let mut pieces: Vec<&str> = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let rest = &text[at..];
        let len = json_object_len(rest)
            .unwrap_or_else(|| rest.split_word_bounds().next().map_or(rest.len(), str::len));
        pieces.push(&rest[..len]);
        at += len;
    }
    let mut used = 0;
    let mut end = 0;
    let mut fits_whole = true;
    for (i, piece) in pieces.iter().enumerate() {
        used += piece.graphemes(true).count();
        if used > limit {
            fits_whole = false;
            break;
        }
        let next = pieces.get(i + 1);
        let ends_phrase = match next {
            None => true,
            Some(next) => {
                starts_with(next, |c| c.is_whitespace() || ",;:.!?".contains(c))
                    || (is_word(piece) && is_word(next) && !piece.starts_with('{'))
            }
        };
        if ends_phrase {
            end = pieces[..=i].iter().map(|p| p.len()).sum();
        }
    }
    if fits_whole {
        return Quote { text, whole: true };
    }
    Quote {
        text: text[..end].trim_end_matches(|c: char| c.is_whitespace() || c == ',' || c == ':'),
        whole: false,
    }
}

/// The length in bytes of the JSON object `text` opens with, if it opens with one.
fn json_object_len(text: &str) -> Option<usize> {
    if !text.starts_with('{') {
        return None;
    }
    let mut values = serde_json::Deserializer::from_str(text).into_iter::<serde_json::Value>();
    match values.next() {
        Some(Ok(value)) if value.is_object() => Some(values.byte_offset()),
        _ => None,
    }
}

fn starts_with(text: &str, test: fn(char) -> bool) -> bool {
    text.chars().next().is_some_and(test)
}

fn is_word(piece: &str) -> bool {
    starts_with(piece, char::is_alphanumeric)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, limit: usize, expected: Option<&str>) {
        assert_eq!(
            opening(text, limit).quoted().as_deref(),
            expected,
            "{text:?} in {limit}"
        );
    }

    /// Issue 48: the demo quoted “Please use everything__get-sum with {"a": 2,” and
    /// `use everything__get-sum with {"a": 2, "b":`.
    #[test]
    fn a_quote_holds_whole_words_and_whole_json_or_nothing() {
        let sum = r#"Please use everything__get-sum with {"a": 2, "b": 3}"#;
        for (text, limit, expected) in [
            ("hello there", 60, Some("“hello there”")),
            ("  hello there \n", 60, Some("“hello there”")),
            ("", 60, None),
            (
                sum,
                60,
                Some(r#"“Please use everything__get-sum with {"a": 2, "b": 3}”"#),
            ),
            (sum, 44, Some("“Please use everything__get-sum with…”")),
            (sum, 36, Some("“Please use everything__get-sum with…”")),
            // Never "everything__get" alone: a hyphen joins the name.
            (sum, 22, Some("“Please use…”")),
            (r#"{"a": 2, "b": 3} please"#, 10, None),
            (
                r#"{"a": 2, "b": 3} please"#,
                17,
                Some(r#"“{"a": 2, "b": 3}…”"#),
            ),
            // Not JSON: words as usual.
            ("{not json} at all", 9, Some("“{not…”")),
            ("{not json} at all", 11, Some("“{not json}…”")),
            ("Hello, world, again", 14, Some("“Hello, world…”")),
            ("Hello, world, again", 5, Some("“Hello…”")),
            ("Hello, world, again", 4, None),
            ("supercalifragilistic", 10, None),
            // Emoji and accents count as one character each and are never split.
            (
                "👨‍👩‍👧‍👦 family re\u{301}sume\u{301} time",
                15,
                Some("“👨‍👩‍👧‍👦 family re\u{301}sume\u{301}…”"),
            ),
            // Words written without spaces end between characters.
            ("東京の天気は晴れ", 3, Some("“東京の…”")),
        ] {
            check(text, limit, expected);
        }
    }
}
