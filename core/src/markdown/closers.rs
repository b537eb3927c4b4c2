//! The inline constructs left open at the end of a reply's open paragraph, heading or table
//! cell, and the closers that draw them as the formatting they open instead of raw syntax.
//!
//! `**bold` is drawn as `**bold**` would be, `` `code `` as code, `[text` and `[text](https://…`
//! as a link still arriving, `<https://…` as an autolink still arriving. What could still turn
//! out either way is held back: a delimiter run at the very end (its length is not known), a
//! backslash, `!`, `]` (a link's text closes, or brackets of text do), a character reference,
//! `<` and a scheme, and trailing white space.
//!
//! Where what follows decides between two readings (`[a [b`, a delimiter inside a link's text
//! whose destination is still open, a closer inside brackets that may stay text), the text from
//! there waits. The scan follows pulldown-cmark's delimiter rules; the closers it adds are never
//! drawn, and when pulldown-cmark reads one as text after all, `tail.rs` closes less.

use super::hold::{is_block_syntax, opens_by_its_end};
use super::scan::{Scan, is_email_byte, is_scheme_byte};

/// How many times the scan is run again on less text, each time what is undecided waits.
const MAX_ROUNDS: usize = 8;

/// How long a character reference or an autolink's scheme can be while it is held back.
const MAX_HELD: usize = 32;

/// What to draw of an open leaf's text, and what to parse after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Closing {
    /// How many bytes of the leaf's text are drawn.
    pub keep: usize,
    /// Where the first construct left open starts, and how much is drawn without closers up
    /// to it.
    pub first_open: usize,
    /// Where the innermost construct left open starts.
    pub last_open: usize,
    /// Text to parse after them, which closes every construct they leave open.
    pub closers: String,
}

/// What a leaf's text (from where it opens to the reply's end) leaves open.
pub(super) fn close(text: &str) -> Closing {
    let mut keep = undecided_end(text);
    let mut scan = Scan::default();
    scan.run(&text[..keep]);
    // What waits may leave earlier text undecided in turn; each round draws less.
    for _ in 0..MAX_ROUNDS {
        let Some(undecided) = scan.undecided_from() else {
            break;
        };
        keep = undecided_end(&text[..undecided]);
        scan = Scan::default();
        scan.run(&text[..keep]);
    }
    if scan.ends_in_autolink() {
        // `<me@example.` is not an email autolink until the next label arrives.
        keep = text[..keep].trim_end_matches(['.', '-']).len();
    }
    let first_open = scan.first_open().unwrap_or(keep);
    Closing {
        keep,
        first_open: undecided_end(&text[..first_open]),
        last_open: scan.last_open().unwrap_or(keep),
        closers: scan.closers(&text[..keep]),
    }
}

/// Where the text stops being decided: before white space, a delimiter run, a backslash, `!`,
/// `]`, or the start of a character reference or an autolink at its very end, and before a last
/// line of nothing but block syntax.
fn undecided_end(text: &str) -> usize {
    let mut end = text.len();
    loop {
        let before = &text[..end];
        let held = before.trim_end_matches([' ', '\t', '\n', '\r']);
        let held = match held.as_bytes().last() {
            Some(&run @ (b'*' | b'_' | b'~' | b'`')) => held.trim_end_matches(run as char),
            Some(b'!' | b']') => &held[..held.len() - 1],
            Some(b'\\') => {
                let backslashes = held.len() - held.trim_end_matches('\\').len();
                if backslashes % 2 == 1 {
                    &held[..held.len() - 1]
                } else {
                    held
                }
            }
            _ => held_reference(held),
        };
        // A line left with nothing but block syntax, or cut back to what opens a fence or raw
        // HTML, would read as a block of its own with closers after it, so it waits whole.
        let held = match held.rfind('\n') {
            Some(newline)
                if held[newline + 1..].chars().all(is_block_syntax)
                    || opens_by_its_end(&held[newline + 1..]) =>
            {
                &held[..newline]
            }
            _ => held,
        };
        if held.len() == end {
            return end;
        }
        end = held.len();
    }
}

/// The text without a character reference or an autolink still being written at its end.
fn held_reference(text: &str) -> &str {
    let Some(at) = text.rfind(['&', '<']) else {
        return text;
    };
    let rest = &text[at + 1..];
    let undecided = rest.len() < MAX_HELD
        && match text.as_bytes()[at] {
            b'&' => rest.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'#'),
            _ => {
                let local = rest.strip_suffix('@').unwrap_or(rest);
                local.bytes().all(|b| is_scheme_byte(b) || is_email_byte(b))
            }
        };
    if undecided { &text[..at] } else { text }
}
