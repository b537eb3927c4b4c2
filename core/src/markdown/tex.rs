//! Maths written `\(…\)` and `\[…\]`, which pulldown-cmark does not read (it reads `$…$` and
//! `$$…$$`): each pair of delimiters is rewritten as `$$` before parsing, two bytes for two, so
//! every byte keeps its place and source ranges still index the reply. A pair that pulldown-cmark
//! does not then read as one math span (in code, across blocks, around a dollar sign) is left as
//! it was written, so rewriting never changes what a reply draws except into maths. Brackets
//! around words alone (`\[not a link\]`) are escaped brackets, not maths.

use std::ops::Range;

use pulldown_cmark::Event;

use super::parse::parser;

/// How many times a block's pairs that did not read as maths are dropped and the rest tried
/// again before none of its pairs is rewritten.
const ATTEMPTS: usize = 4;

/// A text with its `\(…\)` and `\[…\]` pairs rewritten as `$$…$$`, and where the inline ones
/// (`\(`) open: pulldown-cmark reads every `$$…$$` as display maths.
#[derive(Debug, Default)]
pub(super) struct Rewritten {
    /// The rewritten text; `None` when nothing was rewritten.
    pub text: Option<String>,
    /// Where each rewritten `\(` starts, in order.
    pub inline: Vec<usize>,
}

/// Rewrites the pairs of `text[..real]` (the rest is closers, never rewritten) that
/// pulldown-cmark reads as math spans once rewritten. Each top-level block is paired and checked
/// on its own, so a block's maths depends on its text alone: a reply parsed whole reads it as
/// one parsed a block at a time does.
pub(super) fn rewrite(text: &str, real: usize) -> Rewritten {
    let reply = &text[..real];
    let opens = |pair: &[u8]| pair[0] == b'\\' && matches!(pair[1], b'(' | b'[');
    if !reply.as_bytes().windows(2).any(opens) {
        return Rewritten::default();
    }
    let mut pairs = Vec::new();
    for block in top_level_blocks(reply) {
        for pair in block_pairs(&reply[block.clone()]) {
            pairs.push(Pair {
                open: block.start + pair.open,
                close: block.start + pair.close,
                ..pair
            });
        }
    }
    if pairs.is_empty() {
        return Rewritten::default();
    }
    Rewritten {
        text: Some(with_dollars(text, &pairs)),
        inline: pairs
            .iter()
            .filter(|pair| !pair.display)
            .map(|pair| pair.open)
            .collect(),
    }
}

/// The pairs of one block that pulldown-cmark reads as math spans once rewritten: those that do
/// not are dropped and the rest tried again, a few times, before none is kept.
fn block_pairs(block: &str) -> Vec<Pair> {
    let mut pairs = find_pairs(block);
    for _ in 0..ATTEMPTS {
        if pairs.is_empty() {
            break;
        }
        let spans = math_spans(&with_dollars(block, &pairs));
        let before = pairs.len();
        pairs.retain(|pair| spans.binary_search(&pair.span()).is_ok());
        if pairs.len() == before {
            return pairs;
        }
    }
    Vec::new()
}

/// A pair of delimiters: `open` is where `\(` or `\[` starts and `close` where its `\)` or `\]`
/// starts.
#[derive(Debug, Clone, Copy)]
struct Pair {
    open: usize,
    close: usize,
    display: bool,
}

impl Pair {
    /// The bytes the math span covers, delimiters included.
    fn span(&self) -> (usize, usize) {
        (self.open, self.close + 2)
    }
}

/// The pairs of `text`: each closer closes the last opener before it if it is of its kind
/// (maths does not nest, so an opener left open is text). A backslash and the byte after it are
/// read together, so `\\(` is an escaped backslash and a bracket.
fn find_pairs(text: &str) -> Vec<Pair> {
    let mut pairs = Vec::new();
    let mut open: Option<(usize, u8)> = None;
    scan(text, |at, byte| match (open, byte) {
        (_, b'(' | b'[') => open = Some((at, closer(byte))),
        (Some((start, close)), byte) if byte == close => {
            if is_maths(&text[start + 2..at]) {
                pairs.push(Pair {
                    open: start,
                    close: at,
                    display: close == b']',
                });
            }
            open = None;
        }
        _ => {}
    });
    pairs
}

/// Calls `found(at, byte)` for each backslash at `at` and the byte after it.
fn scan(text: &str, mut found: impl FnMut(usize, u8)) {
    let bytes = text.as_bytes();
    let mut at = 0;
    while let Some(offset) = bytes[at..].iter().position(|&b| b == b'\\') {
        let backslash = at + offset;
        let Some(&next) = bytes.get(backslash + 1) else {
            return;
        };
        found(backslash, next);
        at = backslash + 2;
    }
}

/// Whether what a pair of delimiters holds may be maths: something, and not words of plain
/// letters alone, which is brackets escaped (`\[not a link\]`).
fn is_maths(between: &str) -> bool {
    let words = between.split_ascii_whitespace().count();
    let plain = |b: u8| b.is_ascii_alphabetic() || b.is_ascii_whitespace();
    words == 1 || words > 1 && !between.bytes().all(plain)
}

fn closer(opener: u8) -> u8 {
    if opener == b'(' { b')' } else { b']' }
}

fn with_dollars(text: &str, pairs: &[Pair]) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for pair in pairs {
        bytes[pair.open..pair.open + 2].copy_from_slice(b"$$");
        bytes[pair.close..pair.close + 2].copy_from_slice(b"$$");
    }
    // Only ASCII pairs were replaced by ASCII, so the text is still UTF-8.
    String::from_utf8(bytes).unwrap_or_default()
}

/// Where each top-level block of `text` lies.
fn top_level_blocks(text: &str) -> Vec<Range<usize>> {
    let mut depth = 0usize;
    let mut blocks = Vec::new();
    for (event, range) in parser(text, &mut |_| None).into_offset_iter() {
        match event {
            Event::Start(_) => {
                if depth == 0 {
                    blocks.push(range);
                }
                depth += 1;
            }
            Event::End(_) => depth = depth.saturating_sub(1),
            _ if depth == 0 => blocks.push(range),
            _ => {}
        }
    }
    blocks
}

/// The byte ranges of the math spans pulldown-cmark reads in `text`, in order: events come in
/// the order of the text.
fn math_spans(text: &str) -> Vec<(usize, usize)> {
    parser(text, &mut |_| None)
        .into_offset_iter()
        .filter(|(event, _)| matches!(event, Event::InlineMath(_) | Event::DisplayMath(_)))
        .map(|(_, Range { start, end })| (start, end))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::rewrite;

    fn check(text: &str, expected: Option<&str>, inline: &[usize]) {
        let rewritten = rewrite(text, text.len());
        assert_eq!(rewritten.text.as_deref(), expected, "{text:?}");
        assert_eq!(rewritten.inline, inline, "{text:?}");
    }

    #[test]
    fn pairs_that_read_as_maths_are_rewritten_and_others_left() {
        check(r"a \(x\) b", Some("a $$x$$ b"), &[2]);
        check("\\[x^2\\]", Some("$$x^2$$"), &[]);
        check(r"\(a\) and \[b\]", Some("$$a$$ and $$b$$"), &[0]);
        // An escaped backslash before the bracket opens nothing.
        check(r"a \\(x\) b", None, &[]);
        // In code, across paragraphs, or with nothing between: left as written.
        check(r"`\(x\)`", None, &[]);
        check("\\(a\n\nb\\)", None, &[]);
        check(r"\(\)", None, &[]);
        check(r"\[not a link\](x)", None, &[]);
        check(
            r"\(x\) and \[a b = c\]",
            Some("$$x$$ and $$a b = c$$"),
            &[0],
        );
        // One pair that cannot be maths does not stop the others.
        check(r"`\(x\)` and \(y\)", Some(r"`\(x\)` and $$y$$"), &[12]);
        check(r"no maths \( here", None, &[]);
        check("\\(\n\n# \\)\\(b\\)", Some("\\(\n\n# \\)$$b$$"), &[8]);
        check("---\\(\n\n\\(b\\)", Some("---\\(\n\n$$b$$"), &[7]);
    }
}
