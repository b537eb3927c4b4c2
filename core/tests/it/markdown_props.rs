//! Markdown played out, as properties: for every document (the goldens' documents and generated
//! ones), drawing every prefix cut at a grapheme boundary shows no raw delimiter of a construct
//! the rest of the reply completes, keeps the settled blocks as they were, draws only text the
//! reply holds, and ends as the whole reply parsed at once.

use crate::markdown_support;

use std::ops::Range;

use markdown_support::{documents, read};
use portal_core::markdown::{Block, Inline, StreamingMarkdown, Text, parse};
use proptest::prelude::*;
use unicode_segmentation::UnicodeSegmentation;

/// Documents longer than this are left to the goldens: every prefix costs a parse.
const LONGEST_PLAYED: usize = 2_000;

/// Deepest nesting of a drawn tree: the block and inline bounds plus a table's rows and cells.
const DEEPEST: usize = 32 * 2 + 32 + 4;

/// Every leaf of a tree: its text, and the range of the reply it draws.
#[derive(Debug)]
struct Leaf<'a> {
    text: &'a str,
    source: Range<usize>,
    /// Whether `text` is the source verbatim (not a character reference or inline code).
    verbatim: bool,
}

fn leaves<'a>(reply: &str, blocks: &'a [Block]) -> Vec<Leaf<'a>> {
    let mut out = Vec::new();
    for block in blocks {
        block_leaves(reply, block, &mut out);
    }
    out
}

fn text_leaf<'a>(reply: &str, text: &'a Text, out: &mut Vec<Leaf<'a>>) {
    out.push(Leaf {
        text: &text.text,
        source: text.source.clone(),
        verbatim: reply.get(text.source.clone()) == Some(text.text.as_str()),
    });
}

fn block_leaves<'a>(reply: &str, block: &'a Block, out: &mut Vec<Leaf<'a>>) {
    match block {
        Block::Paragraph { content } | Block::Heading { content, .. } => {
            inline_leaves(reply, content, out)
        }
        Block::Quote { blocks } => blocks.iter().for_each(|b| block_leaves(reply, b, out)),
        Block::List { items, .. } => items
            .iter()
            .flat_map(|item| &item.blocks)
            .for_each(|b| block_leaves(reply, b, out)),
        Block::Code { content, .. } | Block::Html { content } => {
            content.iter().for_each(|t| text_leaf(reply, t, out))
        }
        Block::Table { head, rows, .. } => std::iter::once(head)
            .chain(rows)
            .flatten()
            .for_each(|cell| inline_leaves(reply, cell, out)),
        Block::Rule => {}
    }
}

fn inline_leaves<'a>(reply: &str, inlines: &'a [Inline], out: &mut Vec<Leaf<'a>>) {
    for inline in inlines {
        match inline {
            Inline::Text(text) => text_leaf(reply, text, out),
            Inline::Emphasis { content }
            | Inline::Strong { content }
            | Inline::Strikethrough { content }
            | Inline::Link { content, .. } => inline_leaves(reply, content, out),
            Inline::Code { text, source } | Inline::Math { text, source, .. } => out.push(Leaf {
                text,
                source: content_range(reply, source),
                verbatim: false,
            }),
            Inline::SoftBreak | Inline::HardBreak => {}
        }
    }
}

/// The content of inline code or math: its source without the backticks, dollar signs or
/// backslashed brackets.
fn content_range(reply: &str, source: &Range<usize>) -> Range<usize> {
    let span = reply.get(source.clone()).unwrap_or_default();
    let fence = if span.starts_with(['\\']) {
        2
    } else {
        span.len() - span.trim_start_matches(['`', '$']).len()
    };
    let fence = fence.min(span.len() / 2);
    source.start + fence..source.end - fence
}

/// Whether the reply has maths opened by one dollar sign that may show its `$` until it closes
/// (docs/markdown.md): maths starting with a digit (money, most of the time), or running over a
/// line or past 200 bytes. All other maths waits for its closer.
fn has_maths_that_may_show(reply: &str, whole: &[Block]) -> bool {
    math_ranges(whole).iter().any(|source| {
        let span = &reply[source.clone()];
        !span.starts_with("$$")
            && !span.starts_with('\\')
            && (span[1..].starts_with(|c: char| c.is_ascii_digit())
                || span.len() > 200
                || span.contains(['\n', '\r']))
    })
}

/// The math spans of a tree.
fn math_ranges(blocks: &[Block]) -> Vec<Range<usize>> {
    fn walk(inlines: &[Inline], out: &mut Vec<Range<usize>>) {
        for inline in inlines {
            match inline {
                Inline::Math { source, .. } => out.push(source.clone()),
                Inline::Emphasis { content }
                | Inline::Strong { content }
                | Inline::Strikethrough { content }
                | Inline::Link { content, .. } => walk(content, out),
                _ => {}
            }
        }
    }
    fn blocks_walk(blocks: &[Block], out: &mut Vec<Range<usize>>) {
        for block in blocks {
            match block {
                Block::Paragraph { content } | Block::Heading { content, .. } => walk(content, out),
                Block::Quote { blocks } => blocks_walk(blocks, out),
                Block::List { items, .. } => {
                    items.iter().for_each(|item| blocks_walk(&item.blocks, out))
                }
                Block::Table { head, rows, .. } => std::iter::once(head)
                    .chain(rows)
                    .flatten()
                    .for_each(|cell| walk(cell, out)),
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    blocks_walk(blocks, &mut out);
    out
}

fn depth(blocks: &[Block]) -> usize {
    fn inline_depth(inlines: &[Inline]) -> usize {
        inlines
            .iter()
            .map(|inline| match inline {
                Inline::Emphasis { content }
                | Inline::Strong { content }
                | Inline::Strikethrough { content }
                | Inline::Link { content, .. } => 1 + inline_depth(content),
                _ => 1,
            })
            .max()
            .unwrap_or(0)
    }
    blocks
        .iter()
        .map(|block| match block {
            Block::Paragraph { content } | Block::Heading { content, .. } => {
                1 + inline_depth(content)
            }
            Block::Quote { blocks } => 1 + depth(blocks),
            Block::List { items, .. } => {
                2 + items.iter().map(|i| depth(&i.blocks)).max().unwrap_or(0)
            }
            Block::Table { head, rows, .. } => {
                3 + std::iter::once(head)
                    .chain(rows)
                    .flatten()
                    .map(|cell| inline_depth(cell))
                    .max()
                    .unwrap_or(0)
            }
            _ => 1,
        })
        .max()
        .unwrap_or(0)
}

/// Plays `reply` out one grapheme cluster at a time and checks every prefix against the whole
/// reply parsed at once.
fn check_playout(reply: &str) -> Result<(), TestCaseError> {
    check_playout_with(reply, true)
}

/// Like `check_playout`, but the raw-delimiter check only when `raw_syntax` is set.
fn check_playout_with(reply: &str, raw_syntax: bool) -> Result<(), TestCaseError> {
    let whole = parse(reply);
    let mut drawn_whole = vec![false; reply.len()];
    for leaf in leaves(reply, &whole) {
        for byte in leaf.source.clone() {
            drawn_whole[byte] = true;
        }
    }
    // Two constructs are drawn as text until the reply completes them (docs/markdown.md): a
    // reference link until a later definition arrives, and maths opened by a dollar sign that may
    // be money until its closing dollar sign, with the syntax around it.
    let has_definitions = reply
        .lines()
        .any(|line| line.trim_start_matches([' ', '>']).starts_with('[') && line.contains("]:"));
    let has_math = has_maths_that_may_show(reply, &whole);

    let mut markdown = StreamingMarkdown::new();
    let mut previous: Vec<Block> = Vec::new();
    let mut previous_settled = 0;
    for grapheme in reply.graphemes(true) {
        let update = markdown.push(grapheme);
        let prefix = markdown.reply();
        let blocks = markdown.blocks();

        // The settled blocks are kept: a renderer keeps what it drew of them.
        prop_assert!(update.unchanged == previous_settled);
        prop_assert!(
            has_definitions || update.redrawn.is_empty(),
            "blocks redrawn without a definition at {prefix:?}"
        );
        for index in 0..previous_settled {
            if !update.redrawn.contains(&index) {
                prop_assert_eq!(&blocks[index], &previous[index], "settled block changed");
            }
        }

        let drawn = leaves(prefix, blocks);
        // Leaves come in the order of the reply, so a renderer can walk them with the text.
        prop_assert!(
            drawn
                .windows(2)
                .all(|pair| pair[0].source.end <= pair[1].source.start),
            "leaves out of order at {prefix:?}"
        );
        for leaf in drawn {
            // Only text the reply holds is drawn, never a closer added to parse it.
            prop_assert!(
                leaf.source.end <= prefix.len(),
                "a leaf past the prefix {prefix:?}: {leaf:?}"
            );
            if !leaf.verbatim {
                continue;
            }
            // No raw delimiter of a construct that the whole reply completes.
            for (offset, c) in leaf.text.char_indices() {
                let byte = leaf.source.start + offset;
                let syntax = c.is_ascii_punctuation() && !drawn_whole[byte];
                let exempt = has_definitions || has_math || !raw_syntax;
                prop_assert!(
                    !syntax || exempt,
                    "{c:?} at {byte} is syntax in the whole reply but drawn as text for the \
                     prefix {prefix:?}:\n{blocks:#?}"
                );
            }
        }
        prop_assert!(depth(blocks) <= DEEPEST);
        previous = blocks.to_vec();
        previous_settled = markdown.settled();
    }

    // The prefix pushed at once draws as the prefix pushed cluster by cluster.
    let mut at_once = StreamingMarkdown::new();
    at_once.push(reply);
    prop_assert_eq!(at_once.blocks(), markdown.blocks());

    markdown.finish();
    prop_assert_eq!(markdown.blocks(), whole.as_slice());
    Ok(())
}

#[test]
fn every_golden_document_plays_out_without_flashes_of_syntax() {
    for name in documents() {
        let reply = read(&name);
        if reply.len() > LONGEST_PLAYED {
            continue;
        }
        if let Err(failure) = check_playout(&reply) {
            panic!("{name}: {failure}");
        }
    }
}

/// Pieces generated documents are made of: block starts, inline syntax, text in several
/// scripts, and line ends.
const PIECES: &[&str] = &[
    "# ",
    "## ",
    "- ",
    "* ",
    "+ ",
    "1. ",
    "2) ",
    "> ",
    "- [ ] ",
    "- [x] ",
    "    ",
    "  ",
    "```",
    "```rust",
    "~~~",
    "---",
    "***",
    "===",
    "| ",
    " | ",
    "|---|---|",
    "**",
    "*",
    "__",
    "_",
    "~~",
    "~",
    "`",
    "``",
    "[",
    "]",
    "](https://x.example/a_b)",
    "](",
    "![",
    "<https://a.example>",
    "<",
    ">",
    "\\",
    "&amp;",
    "&",
    "!",
    "(",
    ")",
    "https://b.example/p?q=1.",
    "www.",
    "word",
    "two words",
    "a*b",
    "snake_case",
    "2 * 3",
    "東京",
    "مرحبا",
    "👨\u{200d}👩\u{200d}👧",
    "🇩🇪",
    "e\u{301}",
    "क्षि",
    "\n",
    "\n",
    "\n\n",
    "\n\n",
    "\r\n",
    " ",
    "  \n",
    "<b>",
    "</b>",
];

/// Dollar signs (math is drawn as text until its closing dollar sign arrives) and lone carriage
/// returns (pulldown-cmark reads a fence's info string past them): documents with them are
/// checked for everything but raw syntax.
const MORE_PIECES: &[&str] = &["$", "$$", "$x^2$", "$5", "\r"];

/// Maths in every notation, whole, and backslashed brackets alone: whatever completes as maths
/// never shows a raw delimiter on its way (docs/markdown.md). (Lone dollar signs, which may be
/// money, are in `MORE_PIECES`; spaces keep these from joining other dollar signs into runs.)
const MATHS_PIECES: &[&str] = &[
    " $x^2$ ", " $$d$$ ", "\\(b\\)", "\\[c\\]", "\\(", "\\)", "\\[", "\\]", "x", " ", "\n",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn generated_documents_play_out_without_flashes_of_syntax(
        pieces in proptest::collection::vec(0..PIECES.len(), 0..48)
    ) {
        let reply: String = pieces.iter().map(|&i| PIECES[i]).collect();
        check_playout(&reply)
            .map_err(|failure| TestCaseError::fail(format!("{reply:?}: {failure}")))?;
    }

    #[test]
    fn generated_documents_with_dollar_signs_and_lone_returns_play_out(
        pieces in proptest::collection::vec(0..PIECES.len() + MORE_PIECES.len(), 0..48)
    ) {
        let reply: String = pieces
            .iter()
            .map(|&i| PIECES.get(i).unwrap_or_else(|| &MORE_PIECES[i - PIECES.len()]))
            .copied()
            .collect();
        check_playout_with(&reply, false)
            .map_err(|failure| TestCaseError::fail(format!("{reply:?}: {failure}")))?;
    }

    #[test]
    fn generated_maths_plays_out_without_flashes_of_delimiters(
        pieces in proptest::collection::vec(0..PIECES.len() + MATHS_PIECES.len(), 0..48)
    ) {
        let reply: String = pieces
            .iter()
            .map(|&i| PIECES.get(i).unwrap_or_else(|| &MATHS_PIECES[i - PIECES.len()]))
            .copied()
            .collect();
        check_playout(&reply)
            .map_err(|failure| TestCaseError::fail(format!("{reply:?}: {failure}")))?;
    }

    #[test]
    fn any_text_parses_and_plays_out(reply in "\\PC{0,120}") {
        let whole = parse(&reply);
        let mut markdown = StreamingMarkdown::new();
        for grapheme in reply.graphemes(true) {
            markdown.push(grapheme);
        }
        markdown.finish();
        prop_assert_eq!(markdown.blocks(), whole.as_slice());
    }
}

#[test]
fn nesting_is_bounded_however_deep_the_reply() {
    for reply in [
        "> ".repeat(10_000),
        "- ".repeat(10_000),
        "1. ".repeat(10_000),
        "> - ".repeat(5_000),
        format!("{}x{}", "*".repeat(10_000), "*".repeat(10_000)),
        format!(
            "{}x{}",
            "[".repeat(10_000),
            "](https://e.example)".repeat(10_000)
        ),
        format!("{}x{}", "~~**".repeat(2_500), "**~~".repeat(2_500)),
    ] {
        let blocks = parse(&format!("{reply}bottom"));
        assert!(depth(&blocks) <= DEEPEST, "{}", &reply[..8]);
        let json = serde_json::to_string(&blocks).expect("a bounded tree serialises");
        assert!(json.contains("bottom"));
    }
}
