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

use super::hold::{LINE_ENDS, WHITE_SPACE, is_block_syntax, opens_by_its_end};
use super::scan::{Scan, is_email_byte, is_scheme_byte};

/// How many times the scan is run again on less text, each time what is undecided waits.
const MAX_ROUNDS: usize = 8;

/// How many undecided pieces are held back at the end, one after the other (`**\\`, say).
const MAX_HELD_ROUNDS: usize = 64;

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
    /// The bytes of the syntax the closers close, none of which may be drawn as text.
    pub open_syntax: Vec<usize>,
}

/// What a leaf's text (from where it opens to the reply's end) leaves open, drawn up to `end`:
/// the text's end, or where an earlier try found that what follows must wait.
pub(super) fn close(text: &str, end: usize) -> Closing {
    let mut keep = drawn_end(text, end);
    let mut scan = Scan::default();
    scan.run(&text[..keep]);
    // What waits may leave earlier text undecided in turn; each round draws less.
    for _ in 0..MAX_ROUNDS {
        let Some(undecided) = scan.undecided_from() else {
            break;
        };
        keep = drawn_end(text, undecided);
        scan = Scan::default();
        scan.run(&text[..keep]);
    }
    if scan.ends_in_autolink() {
        // `<me@example.` is not an email autolink until the next label arrives.
        keep = text[..keep].trim_end_matches(['.', '-'].as_slice()).len();
    }
    let first_open = scan.first_open().unwrap_or(keep);
    Closing {
        keep,
        first_open: drawn_end(text, first_open),
        last_open: scan.last_open().unwrap_or(keep),
        closers: scan.closers(&text[..keep]),
        open_syntax: scan.open_syntax(),
    }
}

/// How much of `text` up to `end` is drawn. At the text's end, what is undecided there waits:
/// white space, a delimiter run, a backslash, `!`, `]`, the start of a character reference or an
/// autolink. Where a construct that waits starts, what would read otherwise without it waits
/// (`cut_end`). Either way, a last line of nothing but block syntax waits too.
fn drawn_end(text: &str, end: usize) -> usize {
    let end = if end >= text.len() {
        held_end(text, true)
    } else {
        cut_end(text, end)
    };
    // A line left with nothing but block syntax, or cut back to what opens a fence or raw HTML,
    // would read as a block of its own with closers after it, so it waits whole. What is held
    // back before it may leave such a line in turn (`\` over `---***` held back to `---`, a
    // setext underline), which waits too.
    let mut end = end;
    for _ in 0..MAX_ROUNDS {
        let held = &text[..end];
        let next = match held.rfind(LINE_ENDS) {
            Some(newline)
                if held[newline + 1..].chars().all(is_block_syntax)
                    || opens_by_its_end(&held[newline + 1..]) =>
            {
                held_end(&held[..=newline], false)
            }
            _ => end,
        };
        if next >= end {
            return next.min(end);
        }
        end = next;
    }
    end
}

/// How much of `text` before `at` is drawn when what starts at `at` waits: delimiter runs at the
/// cut would read otherwise without what follows them, and a backslash would lose what it
/// escapes, so they wait too.
fn cut_end(text: &str, at: usize) -> usize {
    let mut end = at;
    for _ in 0..MAX_HELD_ROUNDS {
        let before = text[..end].trim_end_matches(WHITE_SPACE);
        let next = match before.as_bytes().last() {
            Some(&run @ (b'*' | b'_' | b'~' | b'`')) => before.trim_end_matches(run as char),
            Some(b'\\') if (before.len() - before.trim_end_matches('\\').len()) % 2 == 1 => {
                &before[..before.len() - 1]
            }
            _ => before,
        };
        if next.len() == end {
            break;
        }
        end = next.len();
    }
    end
}

/// The end of `text` without what is undecided at it. `!`, `]`, `$` and a backslash are undecided
/// only as the last character before what is not yet known (`at_end`): the text's very end, or
/// what was just held back; once white space follows them, they are decided (a backslash only
/// once a space does).
fn held_end(text: &str, mut at_end: bool) -> usize {
    let mut held = text;
    for _ in 0..MAX_HELD_ROUNDS {
        let trimmed = held.trim_end_matches(WHITE_SPACE);
        // A backslash before a line break is a hard break if the paragraph goes on.
        let before_break = held[trimmed.len()..].starts_with(LINE_ENDS);
        at_end &= trimmed.len() == held.len();
        let next = match trimmed.as_bytes().last() {
            Some(&run @ (b'*' | b'_' | b'~' | b'`')) => trimmed.trim_end_matches(run as char),
            Some(b'!' | b']') if at_end => &trimmed[..trimmed.len() - 1],
            // Dollar signs open maths or are money, as the next character says.
            Some(b'$') if at_end => trimmed.trim_end_matches('$'),
            Some(b'\\') if at_end || before_break => {
                let backslashes = trimmed.len() - trimmed.trim_end_matches('\\').len();
                if backslashes % 2 == 1 {
                    &trimmed[..trimmed.len() - 1]
                } else {
                    trimmed
                }
            }
            _ => held_reference(trimmed),
        };
        at_end = next.len() < trimmed.len();
        if next.len() == held.len() {
            break;
        }
        held = next;
    }
    held.len()
}

/// The text without a character reference or an autolink still being written at its end.
fn held_reference(text: &str) -> &str {
    let Some(at) = text.rfind(['&', '<'].as_slice()) else {
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
