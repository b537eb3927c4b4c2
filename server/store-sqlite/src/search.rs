//! The SQL functions the conversation search compares with. Text is compared in Unicode
//! lowercase (SQLite's own `lower` folds ASCII only), and a text block is searched where SQLite
//! holds its stored body: its text is read from the JSON, unescaped and folded a piece of
//! [`PIECE`] bytes at a time, never extracted, copied or folded whole, so a search holds no more
//! of a long reply than SQLite's own row.

use std::borrow::Cow;

use rusqlite::Connection;

use portal_store::codec::without_accents;
use rusqlite::functions::{Context, FunctionFlags};
use serde::Deserialize;

/// `portal_finds(text, search)`: whether `text` holds `search`.
pub(super) const FINDS: &str = "portal_finds";

/// `portal_finds_in_text_block(body, search)`: whether the text of a text block, given its
/// stored body (`{"type":"text","text":"…"}`), holds `search`.
pub(super) const FINDS_IN_TEXT_BLOCK: &str = "portal_finds_in_text_block";

/// Adds [`FINDS`] and [`FINDS_IN_TEXT_BLOCK`] to a connection.
pub(super) fn register_functions(connection: &Connection) -> rusqlite::Result<()> {
    let flags = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;
    connection.create_scalar_function(FINDS, 2, flags, |context| {
        let (Some(mut text), Some(search)) = (text(context, 0)?, text(context, 1)?) else {
            return Ok(false);
        };
        Ok(Search::new(search).finds(|piece| plain_piece(&mut text, piece)))
    })?;
    connection.create_scalar_function(FINDS_IN_TEXT_BLOCK, 2, flags, |context| {
        let (Some(body), Some(search)) = (text(context, 0)?, text(context, 1)?) else {
            return Ok(false);
        };
        let search = Search::new(search);
        Ok(match stored_text(body) {
            Some(mut escaped) => search.finds(|piece| unescaped_piece(&mut escaped, piece)),
            None => {
                let block: TextBody<'_> = serde_json::from_str(body)
                    .map_err(|e| rusqlite::Error::UserFunctionError(Box::new(e)))?;
                let mut text = block.text.as_ref();
                search.finds(|piece| plain_piece(&mut text, piece))
            }
        })
    })
}

/// Argument `at` as text where SQLite holds it, or `None` for NULL.
fn text<'a>(context: &'a Context<'_>, at: usize) -> rusqlite::Result<Option<&'a str>> {
    context
        .get_raw(at)
        .as_str_or_null()
        .map_err(|e| rusqlite::Error::UserFunctionError(Box::new(e)))
}

/// How the server writes a text block's body: its text's JSON, with the escapes left in, when
/// `body` is written so (else the body is parsed).
fn stored_text(body: &str) -> Option<&str> {
    body.strip_prefix(r#"{"type":"text","text":""#)?
        .strip_suffix(r#""}"#)
}

/// A text block's body, for one not written as [`stored_text`] reads it.
#[derive(Deserialize)]
struct TextBody<'a> {
    #[serde(borrow)]
    text: Cow<'a, str>,
}

/// How much text is unescaped and folded at once, in bytes (a piece may pass it by a character
/// or an escape).
const PIECE: usize = 16 * 1024;

/// Moves the next piece of `text` into `piece`.
fn plain_piece(text: &mut &str, piece: &mut String) {
    let end = char_end(text, PIECE);
    piece.push_str(&text[..end]);
    *text = &text[end..];
}

/// Moves the next piece of a JSON string's text, `escaped` with its escapes as stored, into
/// `piece`, unescaped. The text is the server's own valid JSON; an escape cut short ends it.
fn unescaped_piece(escaped: &mut &str, piece: &mut String) {
    while piece.len() < PIECE && !escaped.is_empty() {
        let run = escaped.find('\\').unwrap_or(escaped.len());
        if run > 0 {
            let end = char_end(escaped, run.min(PIECE - piece.len()));
            piece.push_str(&escaped[..end]);
            *escaped = &escaped[end..];
            continue;
        }
        let (c, rest) = unescape(escaped).unwrap_or((char::REPLACEMENT_CHARACTER, ""));
        piece.push(c);
        *escaped = rest;
    }
}

/// The character of the escape `escaped` opens with, and what follows it.
fn unescape(escaped: &str) -> Option<(char, &str)> {
    let rest = escaped.strip_prefix('\\')?;
    let code = rest.chars().next()?;
    let rest = &rest[code.len_utf8()..];
    let c = match code {
        'b' => '\u{8}',
        'f' => '\u{c}',
        'n' => '\n',
        'r' => '\r',
        't' => '\t',
        'u' => {
            let unit = hex(rest)?;
            let rest = &rest[4..];
            if !(0xD800..0xDC00).contains(&unit) {
                return Some((
                    char::from_u32(unit).unwrap_or(char::REPLACEMENT_CHARACTER),
                    rest,
                ));
            }
            // A high surrogate: its low one follows as `\uDC00`…`\uDFFF`.
            let low = rest.strip_prefix("\\u").and_then(hex);
            return Some(match low {
                Some(low @ 0xDC00..0xE000) => {
                    let pair = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                    (
                        char::from_u32(pair).unwrap_or(char::REPLACEMENT_CHARACTER),
                        &rest[6..],
                    )
                }
                _ => (char::REPLACEMENT_CHARACTER, rest),
            });
        }
        other => other,
    };
    Some((c, rest))
}

/// The four hexadecimal digits `text` opens with.
fn hex(text: &str) -> Option<u32> {
    let digits = text.get(..4)?;
    digits.bytes().try_fold(0, |unit, digit| {
        Some(unit * 16 + char::from(digit).to_digit(16)?)
    })
}

/// The end of the first `at` bytes of `text`, moved on to the end of the character it falls in.
fn char_end(text: &str, at: usize) -> usize {
    let mut end = at.min(text.len());
    while !text.is_char_boundary(end) {
        end += 1;
    }
    end
}

/// A search, folded.
struct Search {
    folded: String,
}

impl Search {
    fn new(search: &str) -> Search {
        Search {
            folded: fold(search),
        }
    }

    /// Whether the text `next` moves into the piece it is given, a piece a call and nothing at
    /// its end, holds the search once folded. Only a piece and the end of the one before it (as
    /// long as the search, less a byte) are held at once.
    fn finds(&self, mut next: impl FnMut(&mut String)) -> bool {
        if self.folded.is_empty() {
            return true;
        }
        let mut piece = String::new();
        let mut window = String::new();
        loop {
            piece.clear();
            next(&mut piece);
            if piece.is_empty() {
                return false;
            }
            let mut kept = window.len().saturating_sub(self.folded.len() - 1);
            while !window.is_char_boundary(kept) {
                kept -= 1;
            }
            window.drain(..kept);
            window.push_str(&fold(&piece));
            if window.contains(&self.folded) {
                return true;
            }
        }
    }
}

/// Text as search compares it ([`without_accents`] of Unicode's lowercase), with the final sigma
/// as sigma (the same wherever a piece ends, so "ΟΔΟΣ" finds "οδος" and "οδοσ"). Each character
/// folds on its own, so a piece folds the same wherever it was cut.
fn fold(text: &str) -> String {
    let folded = without_accents(&text.to_lowercase());
    if folded.contains('ς') {
        folded.replace('ς', "σ")
    } else {
        folded
    }
}
