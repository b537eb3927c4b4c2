//! Parsing the open end of a reply as it is drawn: undecided lines held back, and the inline
//! constructs left open closed (`docs/markdown.md`, "No flashes of syntax").

use super::build::Source;
use super::closers::close;
use super::hold::{BLANKS, could_be_delimiter_row, ends_a_line, line_start, without_line_end};
use super::parse::{Leaf, Parsed, parse};
use super::references::References;
use super::tex;
use super::tree::{Block, Inline};

/// How many times the constructs left open are closed before the text from the first of them
/// waits.
const CLOSING_ATTEMPTS: usize = 6;

/// Parses the reply's decided text from `from` (a line start) to `end`, while it may grow.
pub(super) fn parse_decided(reply: &str, from: usize, end: usize, known: &References) -> Parsed {
    parse(
        Source {
            text: &reply[from..end],
            base: from,
            real: end - from,
            growing: true,
            inline_maths: &[],
        },
        known,
    )
}

/// Draws the open blocks: the reply's decided text from `from` (where the settled blocks end)
/// to `decided`, as parsed in `parsed`, without a table's header before the table is decided,
/// and with the inline constructs left open at its end closed.
pub(super) fn draw_open(
    reply: &str,
    from: usize,
    decided: usize,
    mut parsed: Parsed,
    known: &References,
) -> Parsed {
    let tail = &reply[from..];
    let mut end = decided - from;
    if let Some(header) = table_header(tail, end, &parsed) {
        end = header;
        parsed = parse_decided(reply, from, from + end, known);
    }
    let Some((leaf, range)) = parsed.last_inline_leaf.clone() else {
        return parsed;
    };
    let leaf_text = &tail[range.start.min(end)..end];
    let closed = range.end != end || leaf == Leaf::Heading && ends_a_line(leaf_text);
    if closed {
        return parsed;
    }
    let mut open_text = without_line_end(leaf_text);
    if leaf == Leaf::Heading {
        open_text = without_closing_sequence(open_text);
    }
    // An empty list item cannot interrupt a paragraph: one whose text is all held back waits
    // whole, marker and all.
    let kept = |keep: usize| {
        if leaf == Leaf::Item && keep == 0 {
            line_start(tail, range.start)
        } else {
            range.start + keep
        }
    };
    // When pulldown-cmark does not read the closers as the scan expects (delimiter rules are
    // subtle: a closer is read as text, or syntax they should close is), the innermost open
    // construct waits and the rest is closed again; at the last try,
    // everything from the first open construct waits; failing that, it waits without closers.
    // The scan reads the leaf with its `\(…\)` and `\[…\]` pairs as the parse reads them, as
    // `$$…$$` (two bytes for two): inside maths, brackets and delimiters are not syntax.
    let rewritten = tex::rewrite(open_text, open_text.len());
    let open_text = rewritten.text.as_deref().unwrap_or(open_text);
    let mut limit = open_text.len();
    for attempt in 1..=CLOSING_ATTEMPTS {
        let closing = close(open_text, limit);
        let keep = kept(closing.keep);
        if keep == end && closing.closers.is_empty() {
            return parsed;
        }
        let repaired = [&tail[..keep], &closing.closers].concat();
        let source = Source {
            text: &repaired,
            base: from,
            real: keep,
            growing: true,
            inline_maths: &[],
        };
        let closed = parse(source, known);
        if !closed.closers_as_text
            && !draws_as_text(&closed, &closing.open_syntax, from + range.start)
        {
            return closed;
        }
        limit = if attempt + 1 < CLOSING_ATTEMPTS {
            closing.last_open
        } else {
            closing.first_open
        };
    }
    let first_open = close(open_text, limit).first_open;
    parse_decided(reply, from, from + kept(first_open), known)
}

/// Where to stop drawing when the paragraph at the end may be turning into a table: its line
/// being written has a pipe, or its last whole line has one and the held line after it could
/// still be the table's delimiter row. That line may be the table's header, drawn once the
/// table is decided; a quote it opens stays drawn.
fn table_header(tail: &str, end: usize, parsed: &Parsed) -> Option<usize> {
    let (leaf @ (Leaf::Paragraph | Leaf::Item), paragraph) = parsed.last_inline_leaf.clone()?
    else {
        return None;
    };
    if paragraph.end != end {
        return None;
    }
    let line = if ends_a_line(&tail[..end]) {
        if !could_be_delimiter_row(&tail[end..]) {
            return None;
        }
        let whole_lines = without_line_end(&tail[..end]);
        line_start(whole_lines, whole_lines.len())
    } else {
        line_start(tail, end)
    };
    // An empty list item cannot interrupt a paragraph, so an item's line waits whole.
    let cut = match leaf {
        Leaf::Item => line,
        _ => line.max(paragraph.start),
    };
    tail[line..end].contains('|').then_some(cut)
}

/// A heading's text without the `#`s at its end that may be its closing sequence.
fn without_closing_sequence(heading: &str) -> &str {
    let trimmed = heading.trim_end_matches(BLANKS);
    let text = trimmed.trim_end_matches('#');
    if text.len() < trimmed.len() && text.ends_with(BLANKS) {
        text
    } else {
        heading
    }
}

/// Whether any of the bytes `syntax` of the leaf's text, which starts at the reply's byte
/// `leaf_start`, is drawn as text.
fn draws_as_text(parsed: &Parsed, syntax: &[usize], leaf_start: usize) -> bool {
    fn inlines(content: &[Inline], syntax: &[usize], start: usize) -> bool {
        content.iter().any(|inline| match inline {
            Inline::Text(text) => syntax.iter().any(|at| text.source.contains(&(start + at))),
            Inline::Emphasis { content }
            | Inline::Strong { content }
            | Inline::Strikethrough { content }
            | Inline::Link { content, .. } => inlines(content, syntax, start),
            _ => false,
        })
    }
    fn blocks(list: &[Block], syntax: &[usize], start: usize) -> bool {
        list.iter().any(|block| match block {
            Block::Paragraph { content } | Block::Heading { content, .. } => {
                inlines(content, syntax, start)
            }
            Block::Quote { blocks: inner } => blocks(inner, syntax, start),
            Block::List { items, .. } => {
                items.iter().any(|item| blocks(&item.blocks, syntax, start))
            }
            Block::Table { head, rows, .. } => std::iter::once(head)
                .chain(rows)
                .flatten()
                .any(|cell| inlines(cell, syntax, start)),
            _ => false,
        })
    }
    !syntax.is_empty() && blocks(&parsed.blocks, syntax, leaf_start)
}
