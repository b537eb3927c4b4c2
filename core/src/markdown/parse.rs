//! One run of pulldown-cmark over part of a reply: its top-level blocks, its link reference
//! definitions, and the references it could not resolve.

use std::ops::Range;

use pulldown_cmark::{BrokenLink, CowStr, Event, Options, Parser, Tag, TagEnd};

use super::build::{Source, build};
use super::hold::BLANKS;
use super::references::{Label, References, label};
use super::tex;
use super::tree::Block;

/// CommonMark with GFM tables, strikethrough and task lists, and math spans.
fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_MATH
}

/// What a broken link reference resolves to, if anything.
pub(super) type Resolve<'a, 'input> =
    &'a mut dyn FnMut(BrokenLink<'input>) -> Option<(CowStr<'input>, CowStr<'input>)>;

/// A parser of `text`. Every parse goes through here with one callback type, so the wasm holds
/// pulldown-cmark's parser once.
pub(super) fn parser<'a, 'input>(
    text: &'input str,
    resolve: Resolve<'a, 'input>,
) -> Parser<'input, Resolve<'a, 'input>> {
    Parser::new_with_broken_link_callback(text, options(), Some(resolve))
}

/// What one run found.
#[derive(Debug, Default)]
pub(super) struct Parsed {
    pub blocks: Vec<Block>,
    /// The byte range of the reply each block covers.
    pub sources: Vec<Range<usize>>,
    /// The link reference definitions, with where each lies in the reply.
    pub definitions: Vec<Definition>,
    /// References that no definition answered: their label and where they start in
    /// the reply.
    pub unresolved: Vec<(Label, usize)>,
    /// The last run of inline content and the block holding it (a paragraph, a heading, a
    /// table cell or a tight list item): from where the run may start (the block's start, a
    /// list item's content, or the end of the block before the run in a list item) to the
    /// block's end, in the parsed text.
    pub last_inline_leaf: Option<(Leaf, Range<usize>)>,
    /// Whether some closer was read as text rather than closing a construct.
    pub closers_as_text: bool,
}

/// A block that holds inline content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Leaf {
    Paragraph,
    Heading,
    Cell,
    /// A list item, whose text in a tight list is not in a paragraph of its own.
    Item,
}

#[derive(Debug)]
pub(super) struct Definition {
    pub label: Label,
    pub destination: String,
    pub source: Range<usize>,
}

/// Parses `source.text`; references it does not define itself are looked up in `known`. A
/// reference still being written (it reaches into the closers) parses as a link, left open.
pub(super) fn parse(source: Source<'_>, known: &References) -> Parsed {
    let rewritten = tex::rewrite(source.text, source.real);
    let source = Source {
        text: rewritten.text.as_deref().unwrap_or(source.text),
        inline_maths: &rewritten.inline,
        ..source
    };
    let mut unresolved = Vec::new();
    let mut last_inline_leaf = None;
    let mut callback = |link: BrokenLink<'_>| -> Option<(CowStr<'_>, CowStr<'_>)> {
        if link.span.end > source.real {
            return Some(("".into(), "".into()));
        }
        let reference = label(&link.reference);
        match known.get(&reference) {
            Some(destination) => Some((destination.to_string().into(), "".into())),
            None => {
                unresolved.push((reference, source.base + link.span.start));
                None
            }
        }
    };
    let parser = parser(source.text, &mut callback);
    let mut definitions = Vec::new();
    for (text, definition) in parser.reference_definitions().iter() {
        definitions.push(Definition {
            label: label(text),
            destination: (*definition.dest).to_owned(),
            source: source.base + definition.span.start..source.base + definition.span.end,
        });
    }
    let mut open_blocks: Vec<Option<(Leaf, usize)>> = Vec::new();
    let mut run_start = None;
    let events = parser
        .into_offset_iter()
        .inspect(|(event, range)| match event {
            Event::Start(tag) if is_block(tag) => {
                let leaf = leaf(tag);
                open_blocks.push(leaf.map(|leaf| (leaf, range.end)));
                run_start = match leaf {
                    Some(Leaf::Item) => Some(after_marker(source.text, range.start)),
                    Some(_) => Some(range.start),
                    None => None,
                };
            }
            Event::End(end) if !is_inline_end(*end) => {
                open_blocks.pop();
                run_start = Some(range.end);
            }
            Event::Rule => run_start = Some(range.end),
            _ => {
                if let Some(&Some((leaf, end))) = open_blocks.last() {
                    let start = *run_start.get_or_insert(range.start);
                    last_inline_leaf = Some((leaf, start..end));
                }
            }
        });
    let tree = build(source, events);
    Parsed {
        blocks: tree.blocks,
        sources: tree.sources,
        closers_as_text: tree.closers_as_text,
        definitions,
        unresolved,
        last_inline_leaf,
    }
}

fn is_block(tag: &Tag<'_>) -> bool {
    !matches!(
        tag,
        Tag::Emphasis
            | Tag::Strong
            | Tag::Strikethrough
            | Tag::Superscript
            | Tag::Subscript
            | Tag::Link { .. }
            | Tag::Image { .. }
    )
}

fn is_inline_end(end: TagEnd) -> bool {
    matches!(
        end,
        TagEnd::Emphasis
            | TagEnd::Strong
            | TagEnd::Strikethrough
            | TagEnd::Superscript
            | TagEnd::Subscript
            | TagEnd::Link
            | TagEnd::Image
    )
}

/// The blocks that hold inline content.
fn leaf(tag: &Tag<'_>) -> Option<Leaf> {
    match tag {
        Tag::Paragraph => Some(Leaf::Paragraph),
        Tag::Heading { .. } => Some(Leaf::Heading),
        Tag::TableCell => Some(Leaf::Cell),
        Tag::Item => Some(Leaf::Item),
        _ => None,
    }
}

/// What a list item's marker is made of: a bullet, or a number and its `.` or `)`.
const LIST_MARKERS: &[char] = &[
    '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '-', '+', '*', '.', ')',
];

/// Where a list item's content starts: after its marker, its task box if it has one, and the
/// spaces after them.
fn after_marker(text: &str, item: usize) -> usize {
    let rest = text.get(item..).unwrap_or_default();
    let mut content = rest
        .trim_start_matches(BLANKS)
        .trim_start_matches(LIST_MARKERS)
        .trim_start_matches(BLANKS);
    for task in ["[ ]", "[x]", "[X]"] {
        if let Some(after) = content.strip_prefix(task)
            && after.starts_with(BLANKS)
        {
            content = after.trim_start_matches(BLANKS);
        }
    }
    item + rest.len() - content.len()
}
