//! Bare web addresses in text (`https://…`, `www.…`) drawn as links, as GitHub draws them
//! (GFM's extended autolinks): the address ends at white space or `<`, without the punctuation
//! that closes a sentence, an unbalanced `)` or a trailing character reference.

use super::href::safe_href;
use super::tree::{Inline, Text};

/// How the addresses that are drawn as links begin, lowercase.
const STARTS: [&str; 3] = ["https://", "http://", "www."];

/// Adds the text to `out`, with its bare addresses as links. `reply_end` is where the reply
/// received so far ends while it may still grow: an address that reaches it may go on, so it is
/// a link still arriving, drawn whole.
pub(super) fn split_bare_urls(text: Text, reply_end: Option<usize>, out: &mut Vec<Inline>) {
    let before = out.len();
    let mut written = 0;
    let mut from = 0;
    while let Some((start, prefix)) = next_start(&text.text, from) {
        let raw_end = text.text[start..]
            .find(|c: char| c.is_whitespace() || c == '<')
            .map_or(text.text.len(), |end| start + end);
        let raw = &text.text[start..raw_end];
        let growing = reply_end == Some(text.source.start + raw_end);
        let end = if growing {
            raw_end
        } else {
            start + trimmed(raw).len()
        };
        from = raw_end.max(start + 1);
        let url = &text.text[start..end];
        if !growing && !url.get(prefix.len()..).is_some_and(has_domain) {
            continue;
        }
        if start > written {
            out.push(piece(&text, written, start));
        }
        let href = if growing {
            None
        } else if prefix == "www." {
            safe_href(&["http://", url].concat(), false)
        } else {
            safe_href(url, false)
        };
        out.push(Inline::Link {
            href,
            pending: growing,
            image: false,
            content: vec![piece(&text, start, end)],
        });
        written = end;
    }
    if out.len() == before {
        out.push(Inline::Text(text));
    } else if written < text.text.len() {
        out.push(piece(&text, written, text.text.len()));
    }
}

/// Where the next address begins at or after `from`, and how it begins: at the text's start,
/// or after white space or one of `*_~(`.
fn next_start(text: &str, from: usize) -> Option<(usize, &'static str)> {
    let mut before = text.get(..from)?.chars().next_back();
    for (offset, c) in text[from..].char_indices() {
        let boundary =
            before.is_none_or(|b| b.is_whitespace() || matches!(b, '*' | '_' | '~' | '('));
        before = Some(c);
        if !boundary || !matches!(c, 'h' | 'H' | 'w' | 'W') {
            continue;
        }
        let at = from + offset;
        let start = STARTS.into_iter().find(|start| {
            text.get(at..at + start.len())
                .is_some_and(|head| head.eq_ignore_ascii_case(start))
        });
        if let Some(start) = start {
            return Some((at, start));
        }
    }
    None
}

/// The address without what GFM leaves out at its end.
fn trimmed(mut url: &str) -> &str {
    loop {
        let before = url.len();
        url = url.trim_end_matches(['?', '!', '.', ',', ':', '*', '_', '~', '\'', '"'].as_slice());
        if url.ends_with(')') && count(url, b')') > count(url, b'(') {
            url = &url[..url.len() - 1];
        }
        if let Some(body) = url.strip_suffix(';') {
            let name = body.trim_end_matches(|c: char| c.is_ascii_alphanumeric());
            if name.ends_with('&') && name.len() < body.len() {
                url = &name[..name.len() - 1];
            }
        }
        if url.len() == before {
            return url;
        }
    }
}

/// Whether the address (after its `https://` or `www.`) has a domain: segments of letters,
/// digits, `-` and `_`, with no `_` in the last two. It is read from its end, counting the
/// dots passed.
fn has_domain(rest: &str) -> bool {
    let domain = rest
        .split(['/', '?', '#', ':'].as_slice())
        .next()
        .unwrap_or_default();
    let mut dots = 0;
    let mut segment_empty = true;
    for c in domain.chars().rev() {
        if c == '.' {
            if segment_empty {
                return false;
            }
            dots += 1;
            segment_empty = true;
        } else if c.is_alphanumeric() || c == '-' || c == '_' && dots >= 2 {
            segment_empty = false;
        } else {
            return false;
        }
    }
    !segment_empty
}

/// How many times `byte` occurs in `text`.
fn count(text: &str, byte: u8) -> usize {
    text.bytes().filter(|&b| b == byte).count()
}

/// Part of a verbatim text, by byte offsets into it.
fn piece(text: &Text, start: usize, end: usize) -> Inline {
    Inline::Text(Text {
        text: text.text[start..end].to_string(),
        source: text.source.start + start..text.source.start + end,
    })
}
