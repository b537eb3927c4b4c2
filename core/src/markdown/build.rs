//! Building the tree from pulldown-cmark's events, with nesting bounded and the source mapped.
//!
//! The parsed text may end in closers that the reply does not hold yet (`closers.rs`); those
//! bytes are never drawn: text from them is dropped, and an element they close is marked open.

use std::ops::Range;

use pulldown_cmark::{CodeBlockKind, Event, LinkType, Tag};

use super::bare_urls::split_bare_urls;
use super::href::safe_href;
use super::scan::SEPARATOR;
use super::tree::{Alignment, Block, Cell, Inline, ListItem, Text};

/// How many quotes and lists may nest; deeper ones are flattened into the deepest one kept.
const MAX_BLOCK_DEPTH: usize = 32;

/// How many emphasis, strong, strikethrough and link elements may nest; deeper ones are
/// flattened into their text.
const MAX_INLINE_DEPTH: usize = 32;

/// What the builder needs to know about the parsed text.
#[derive(Debug, Clone, Copy)]
pub(super) struct Source<'a> {
    /// The text that was parsed: the reply's bytes from `base`, maybe followed by closers.
    pub text: &'a str,
    /// Where the parsed text starts in the reply.
    pub base: usize,
    /// How many of the parsed bytes are the reply's; the rest are closers.
    pub real: usize,
    /// Whether the reply may grow past them.
    pub growing: bool,
    /// Where the math spans written `\(…\)` start in the parsed text, in order: parsed as
    /// `$$…$$` (`tex.rs`), they are inline all the same.
    pub inline_maths: &'a [usize],
}

impl Source<'_> {
    /// A range of the parsed text as a range of the reply, without the closers.
    fn reply_range(&self, range: &Range<usize>) -> Range<usize> {
        self.base + range.start.min(self.real)..self.base + range.end.min(self.real)
    }

    /// Whether the element at `range` is closed only by closers the reply does not hold yet.
    fn open(&self, range: &Range<usize>) -> bool {
        range.end > self.real
    }
}

/// An element being built, as the node it becomes, its content filled in as it arrives; once
/// finished, it is added to the element around it as it is.
#[derive(Debug)]
enum Frame {
    /// A quote (without `task`) or a list item: blocks, and the text of a tight item not yet in
    /// a paragraph.
    Container {
        task: Option<Option<bool>>,
        blocks: Vec<Block>,
        loose: Vec<Inline>,
    },
    /// A paragraph, heading, list, code, raw HTML or table.
    Block(Block),
    /// Emphasis, strong, strikethrough or a link.
    Inline(Inline),
    /// A table's head (`true`) or one of its rows.
    Row(bool, Vec<Cell>),
    Cell(Vec<Inline>),
}

/// What the events build.
#[derive(Debug)]
pub(super) struct Tree {
    /// The top-level blocks, and the byte range of the reply each covers.
    pub blocks: Vec<Block>,
    pub sources: Vec<Range<usize>>,
    /// Whether some closer was read as text rather than closing a construct.
    pub closers_as_text: bool,
}

/// Builds the top-level blocks of the parsed text from its events.
pub(super) fn build<'a>(
    source: Source<'_>,
    events: impl Iterator<Item = (Event<'a>, Range<usize>)>,
) -> Tree {
    let mut builder = Builder {
        source,
        stack: Vec::new(),
        flattened: vec![0],
        links: 0,
        bare_urls: BareUrls {
            reply_end: source.growing.then_some(source.base + source.real),
            raw_html: Vec::new(),
        },
        blocks: Vec::new(),
        sources: Vec::new(),
        top_range: 0..0,
        verbatim_end: None,
        closers_as_text: false,
        block_depth: 0,
        inline_depth: 0,
    };
    for (event, range) in events {
        builder.event(event, range);
    }
    while !builder.stack.is_empty() {
        builder.end();
    }
    Tree {
        blocks: builder.blocks,
        sources: builder.sources,
        closers_as_text: builder.closers_as_text,
    }
}

struct Builder<'s> {
    source: Source<'s>,
    stack: Vec<Frame>,
    /// How many flattened elements are open in each element of the stack, the top level first:
    /// elements beyond the nesting bounds or of a kind not drawn, whose content goes to the
    /// element around them.
    flattened: Vec<usize>,
    /// How many links are open.
    links: usize,
    closers_as_text: bool,
    bare_urls: BareUrls,
    blocks: Vec<Block>,
    sources: Vec<Range<usize>>,
    /// Where the top-level block being built lies in the parsed text.
    top_range: Range<usize>,
    /// Where the last text added ends in the reply, if it was verbatim: text that follows it
    /// directly joins it.
    verbatim_end: Option<usize>,
    block_depth: usize,
    inline_depth: usize,
}

impl Builder<'_> {
    fn event(&mut self, event: Event<'_>, range: Range<usize>) {
        if self.stack.is_empty() {
            self.top_range = range.clone();
        }
        match event {
            Event::Start(tag) => self.start(tag, &range),
            Event::End(_) => self.end(),
            Event::Text(text) => self.text(&text, &range),
            Event::Html(text) => self.text(&text, &range),
            Event::InlineHtml(text) => {
                self.verbatim_end = None;
                self.bare_urls
                    .raw_html
                    .push(self.source.reply_range(&range).start);
                self.text(&text, &range);
                self.verbatim_end = None;
            }
            Event::Code(text) => self.leaf(Inline::Code {
                text: text.into_string(),
                source: self.source.reply_range(&range),
            }),
            Event::InlineMath(text) => self.math(text.into_string(), false, &range),
            Event::DisplayMath(text) => self.math(text.into_string(), true, &range),
            Event::FootnoteReference(label) => self.text(&["[^", &label, "]"].concat(), &range),
            Event::SoftBreak => self.leaf(Inline::SoftBreak),
            Event::HardBreak => self.leaf(Inline::HardBreak),
            Event::Rule => self.finish(Frame::Block(Block::Rule)),
            Event::TaskListMarker(checked) => self.task(checked),
        }
    }

    fn start(&mut self, tag: Tag<'_>, range: &Range<usize>) {
        let frame = match tag {
            Tag::Paragraph => {
                self.loosen_list();
                Frame::Block(Block::Paragraph {
                    content: Vec::new(),
                })
            }
            Tag::Heading { level, .. } => Frame::Block(Block::Heading {
                level: level as u8,
                content: Vec::new(),
            }),
            Tag::BlockQuote(_) if self.block_depth < MAX_BLOCK_DEPTH => {
                self.block_depth += 1;
                container(None)
            }
            Tag::List(start) if self.block_depth < MAX_BLOCK_DEPTH => {
                self.block_depth += 1;
                Frame::Block(Block::List {
                    start,
                    tight: true,
                    items: Vec::new(),
                })
            }
            Tag::Item
                if self.flattened.last() == Some(&0)
                    && matches!(self.stack.last(), Some(Frame::Block(Block::List { .. }))) =>
            {
                container(Some(None))
            }
            Tag::CodeBlock(kind) => Frame::Block(Block::Code {
                language: language(&kind),
                content: Vec::new(),
            }),
            Tag::HtmlBlock => Frame::Block(Block::Html {
                content: Vec::new(),
            }),
            Tag::Table(alignments) => Frame::Block(Block::Table {
                alignments: alignments.iter().map(alignment).collect(),
                head: Vec::new(),
                rows: Vec::new(),
            }),
            Tag::TableHead => Frame::Row(true, Vec::new()),
            Tag::TableRow => Frame::Row(false, Vec::new()),
            Tag::TableCell => Frame::Cell(Vec::new()),
            Tag::Emphasis if self.inline_depth < MAX_INLINE_DEPTH => {
                self.inline_depth += 1;
                Frame::Inline(Inline::Emphasis {
                    content: Vec::new(),
                })
            }
            Tag::Strong if self.inline_depth < MAX_INLINE_DEPTH => {
                self.inline_depth += 1;
                Frame::Inline(Inline::Strong {
                    content: Vec::new(),
                })
            }
            Tag::Strikethrough if self.inline_depth < MAX_INLINE_DEPTH => {
                self.inline_depth += 1;
                Frame::Inline(Inline::Strikethrough {
                    content: Vec::new(),
                })
            }
            Tag::Link {
                link_type,
                dest_url,
                ..
            } if self.inline_depth < MAX_INLINE_DEPTH && self.links == 0 => {
                self.link(link_type, &dest_url, false, range)
            }
            Tag::Image {
                link_type,
                dest_url,
                ..
            } if self.inline_depth < MAX_INLINE_DEPTH && self.links == 0 => {
                self.link(link_type, &dest_url, true, range)
            }
            _ => {
                if let Some(count) = self.flattened.last_mut() {
                    *count += 1;
                }
                return;
            }
        };
        self.stack.push(frame);
        self.flattened.push(0);
    }

    fn end(&mut self) {
        if let Some(count) = self.flattened.last_mut()
            && *count > 0
        {
            *count -= 1;
            return;
        }
        let Some(mut frame) = self.stack.pop() else {
            return;
        };
        self.flattened.pop();
        if self.links == 0
            && let Some(content) = inlines(&mut frame)
        {
            self.bare_urls.link(content);
        }
        match &frame {
            Frame::Container { task: None, .. } | Frame::Block(Block::List { .. }) => {
                self.block_depth -= 1;
            }
            Frame::Inline(inline) => {
                self.inline_depth -= 1;
                if let Inline::Link { .. } = inline {
                    self.links -= 1;
                }
            }
            _ => {}
        }
        self.finish(frame);
    }

    fn link(
        &mut self,
        kind: LinkType,
        destination: &str,
        image: bool,
        range: &Range<usize>,
    ) -> Frame {
        self.inline_depth += 1;
        self.links += 1;
        let pending = self.source.open(range);
        Frame::Inline(Inline::Link {
            href: if pending {
                None
            } else {
                safe_href(destination, kind == LinkType::Email)
            },
            pending,
            image,
            content: Vec::new(),
        })
    }

    fn math(&mut self, text: String, display: bool, range: &Range<usize>) {
        let source = self.source.reply_range(range);
        self.leaf(Inline::Math {
            text,
            display: display
                && self
                    .source
                    .inline_maths
                    .binary_search(&range.start)
                    .is_err(),
            source,
        });
    }

    /// Adds a finished element to the element around it, or to the top level.
    fn finish(&mut self, built: Frame) {
        let built = match built {
            Frame::Container {
                task: None,
                blocks,
                loose,
            } => Frame::Block(Block::Quote {
                blocks: with_loose(blocks, loose),
            }),
            built => built,
        };
        match (self.stack.last_mut(), built) {
            (None, Frame::Block(block)) => {
                self.blocks.push(block);
                self.sources.push(self.source.reply_range(&self.top_range));
            }
            (Some(Frame::Container { blocks, loose, .. }), Frame::Block(block)) => {
                self.bare_urls.link(loose);
                flush_loose(blocks, loose);
                blocks.push(block);
            }
            (
                Some(Frame::Block(Block::List { items, .. })),
                Frame::Container {
                    task: Some(task),
                    blocks,
                    loose,
                },
            ) => items.push(ListItem {
                task,
                blocks: with_loose(blocks, loose),
            }),
            (Some(Frame::Block(Block::Table { head, rows, .. })), Frame::Row(is_head, cells)) => {
                if is_head {
                    *head = cells;
                } else {
                    rows.push(cells);
                }
            }
            (Some(Frame::Row(_, cells)), Frame::Cell(content)) => cells.push(content),
            (Some(parent), Frame::Inline(inline)) => {
                if let Some(content) = inlines(parent) {
                    content.push(inline);
                }
            }
            _ => {}
        }
    }

    /// Adds an inline leaf where inline content goes.
    fn leaf(&mut self, inline: Inline) {
        self.verbatim_end = None;
        self.finish(Frame::Inline(inline));
    }

    /// Adds text at `range` of the parsed text, without any part of it taken from closers.
    fn text(&mut self, text: &str, range: &Range<usize>) {
        if range.start >= self.source.real && range.end > range.start {
            // A closer read as text: the scan's closers did not close what it expected.
            self.closers_as_text |= text.chars().any(|c| c != SEPARATOR);
            return;
        }
        let verbatim = self.source.text.get(range.clone()) == Some(text);
        let text = match (verbatim, range.end > self.source.real) {
            (true, true) => {
                let (real, closers) = text.split_at(self.source.real - range.start);
                self.closers_as_text |= closers.chars().any(|c| c != SEPARATOR);
                real
            }
            _ => text,
        };
        if text.is_empty() {
            return;
        }
        let leaf = Text {
            text: text.to_string(),
            source: self.source.reply_range(range),
        };
        let joins = self.verbatim_end == Some(leaf.source.start) && verbatim;
        self.verbatim_end = verbatim.then_some(leaf.source.end);
        let Some(parent) = self.stack.last_mut() else {
            return;
        };
        match parent {
            Frame::Block(Block::Code { content, .. } | Block::Html { content }) => match content
                .last_mut()
            {
                Some(last) if joins && last.source.end == leaf.source.start => join(last, &leaf),
                _ => content.push(leaf),
            },
            parent => {
                if let Some(content) = inlines(parent) {
                    match content.last_mut() {
                        Some(Inline::Text(last))
                            if joins && last.source.end == leaf.source.start =>
                        {
                            join(last, &leaf)
                        }
                        _ => content.push(Inline::Text(leaf)),
                    }
                }
            }
        }
    }

    fn task(&mut self, checked: bool) {
        let item = self.stack.iter_mut().rev().find_map(|f| match f {
            Frame::Container {
                task: Some(task), ..
            } => Some(task),
            _ => None,
        });
        if let Some(task) = item {
            *task = Some(checked);
        }
    }

    /// A paragraph opened directly in a list item: the list is loose.
    fn loosen_list(&mut self) {
        let [
            ..,
            Frame::Block(Block::List { tight, .. }),
            Frame::Container { task: Some(_), .. },
        ] = self.stack.as_mut_slice()
        else {
            return;
        };
        *tight = false;
    }
}

/// Finds the bare web addresses in text that is not in a link.
#[derive(Debug)]
struct BareUrls {
    /// Where the reply received so far ends, while it may grow.
    reply_end: Option<usize>,
    /// Where the raw HTML drawn as text starts, in order: it has no links.
    raw_html: Vec<usize>,
}

impl BareUrls {
    fn link(&self, content: &mut Vec<Inline>) {
        let has_text = content
            .iter()
            .any(|inline| matches!(inline, Inline::Text(_)));
        if !has_text {
            return;
        }
        let mut linked = Vec::with_capacity(content.len());
        for inline in content.drain(..) {
            match inline {
                Inline::Text(text) if self.raw_html.binary_search(&text.source.start).is_err() => {
                    split_bare_urls(text, self.reply_end, &mut linked)
                }
                inline => linked.push(inline),
            }
        }
        *content = linked;
    }
}

fn container(task: Option<Option<bool>>) -> Frame {
    Frame::Container {
        task,
        blocks: Vec::new(),
        loose: Vec::new(),
    }
}

/// Where inline content goes in an element, if it holds any.
fn inlines(frame: &mut Frame) -> Option<&mut Vec<Inline>> {
    match frame {
        Frame::Container { loose, .. } => Some(loose),
        Frame::Block(Block::Paragraph { content } | Block::Heading { content, .. })
        | Frame::Cell(content)
        | Frame::Inline(
            Inline::Emphasis { content }
            | Inline::Strong { content }
            | Inline::Strikethrough { content }
            | Inline::Link { content, .. },
        ) => Some(content),
        _ => None,
    }
}

/// The text of a tight list item becomes a paragraph before the next block.
fn flush_loose(blocks: &mut Vec<Block>, loose: &mut Vec<Inline>) {
    if !loose.is_empty() {
        blocks.push(Block::Paragraph {
            content: std::mem::take(loose),
        });
    }
}

fn with_loose(mut blocks: Vec<Block>, mut loose: Vec<Inline>) -> Vec<Block> {
    flush_loose(&mut blocks, &mut loose);
    blocks
}

/// Extends verbatim text with the verbatim text right after it.
fn join(last: &mut Text, next: &Text) {
    last.text.push_str(&next.text);
    last.source.end = next.source.end;
}

fn language(kind: &CodeBlockKind<'_>) -> Option<String> {
    match kind {
        CodeBlockKind::Fenced(info) => info.split_whitespace().next().map(str::to_string),
        CodeBlockKind::Indented => None,
    }
}

fn alignment(alignment: &pulldown_cmark::Alignment) -> Alignment {
    match alignment {
        pulldown_cmark::Alignment::None => Alignment::None,
        pulldown_cmark::Alignment::Left => Alignment::Left,
        pulldown_cmark::Alignment::Center => Alignment::Center,
        pulldown_cmark::Alignment::Right => Alignment::Right,
    }
}
