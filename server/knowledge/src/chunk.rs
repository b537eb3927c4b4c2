//! A document's text split into passages by its structure, with `text-splitter`: markdown at its
//! headings, then blocks, then lines, sentences and words (`MarkdownSplitter`); plain text and a
//! PDF's pages at blank lines, then lines, sentences and words (`TextSplitter`). Sizes are counted
//! in characters. Each passage keeps where it starts and, for markdown, the headings it sits
//! under, found with pulldown-cmark (the parser `text-splitter` splits markdown with), so a
//! search result can say where it came from.

use std::ops::RangeInclusive;

use pulldown_cmark::{Event, HeadingLevel, OffsetIter, Options, Parser, Tag, TagEnd};
use text_splitter::{Characters, MarkdownSplitter, TextSplitter};

/// The size of a passage in characters: `text-splitter` fills one to the range's start and goes
/// on to its end only to keep a larger unit (a section, a paragraph) whole, never past it.
/// **Decision:** 800 to 1,200, some 200 to 300 tokens of English: long enough to answer from,
/// short enough that five fit in a tool result.
pub const PASSAGE_CHARS: RangeInclusive<usize> = 800..=1_200;

/// A heading is cut to this many characters in a passage's heading path.
pub const HEADING_CHARS: usize = 200;

/// One passage of a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// The passage's text, trimmed.
    pub text: String,
    /// The page it starts on, from 1, for a document read page by page.
    pub page: Option<u32>,
    /// The headings in force where it starts, outermost first (`["Installation", "On
    /// Debian"]`); empty for text without markdown headings.
    pub headings: Vec<String>,
    /// Where `text` starts, in bytes, in the source text (in its page for [`Source::Pages`]).
    pub start: usize,
}

/// A document's text, as it was read.
#[derive(Debug, Clone, Copy)]
pub enum Source<'a> {
    /// Markdown, split at its structure and giving passages their headings.
    Markdown(&'a str),
    /// Plain text.
    Plain(&'a str),
    /// A PDF's pages in order, page 1 first, each split as plain text.
    Pages(&'a [String]),
}

/// The passages of `source`, in order, at most `most` of them: splitting stops when that many are
/// made, so a hostile document of 10,000 pages costs no more than its first passages. Passages of
/// only whitespace are left out.
pub fn split(source: Source<'_>, most: usize) -> Vec<Chunk> {
    match source {
        Source::Markdown(text) => {
            let splitter = MarkdownSplitter::new(PASSAGE_CHARS);
            let mut headings = Headings::new(text);
            passages(splitter.chunk_indices(text))
                .take(most)
                .map(|(start, text)| Chunk {
                    text: text.to_owned(),
                    page: None,
                    headings: headings.at(start),
                    start,
                })
                .collect()
        }
        Source::Plain(text) => {
            let splitter = TextSplitter::new(PASSAGE_CHARS);
            plain(&splitter, text, None).take(most).collect()
        }
        Source::Pages(pages) => {
            let splitter = TextSplitter::new(PASSAGE_CHARS);
            pages
                .iter()
                .zip(1..)
                .flat_map(|(page, number)| plain(&splitter, page, Some(number)))
                .take(most)
                .collect()
        }
    }
}

/// The passages of plain text, on `page` if it has one.
fn plain<'a>(
    splitter: &'a TextSplitter<Characters>,
    text: &'a str,
    page: Option<u32>,
) -> impl Iterator<Item = Chunk> + 'a {
    passages(splitter.chunk_indices(text)).map(move |(start, text)| Chunk {
        text: text.to_owned(),
        page,
        headings: Vec::new(),
        start,
    })
}

/// The splitter's pieces trimmed, their offsets moved past what the trimming took, and the
/// empty ones left out.
fn passages<'a>(
    pieces: impl Iterator<Item = (usize, &'a str)>,
) -> impl Iterator<Item = (usize, &'a str)> {
    pieces.filter_map(|(start, piece)| {
        let text = piece.trim_start();
        let start = start + (piece.len() - text.len());
        let text = text.trim_end();
        (!text.is_empty()).then_some((start, text))
    })
}

/// A markdown heading: where it starts, its level and its text.
type Heading = (usize, HeadingLevel, String);

/// The heading path of a markdown text, followed forward through increasing offsets.
struct Headings<'a> {
    events: OffsetIter<'a>,
    /// The next heading, not yet in force.
    next: Option<Heading>,
    /// The headings in force, outermost first.
    path: Vec<(HeadingLevel, String)>,
}

impl<'a> Headings<'a> {
    fn new(text: &'a str) -> Self {
        let mut events = Parser::new_ext(text, Options::all()).into_offset_iter();
        Headings {
            next: next_heading(&mut events),
            events,
            path: Vec::new(),
        }
    }

    /// The heading path in force at byte `offset`, no lower than any offset asked before: the
    /// headings starting at or before it, each popping those as deep as it or deeper.
    fn at(&mut self, offset: usize) -> Vec<String> {
        while let Some((_, level, name)) = self.next.take_if(|(start, ..)| *start <= offset) {
            self.path.retain(|(outer, _)| *outer < level);
            self.path.push((level, name));
            self.next = next_heading(&mut self.events);
        }
        self.path.iter().map(|(_, name)| name.clone()).collect()
    }
}

/// The next heading of `events`, its text cut to [`HEADING_CHARS`].
fn next_heading(events: &mut OffsetIter<'_>) -> Option<Heading> {
    let (start, level) = events.find_map(|(event, range)| match event {
        Event::Start(Tag::Heading { level, .. }) => Some((range.start, level)),
        _ => None,
    })?;
    let mut name = String::new();
    let mut room = HEADING_CHARS;
    let mut push = |piece: &str| {
        let kept: String = piece.chars().take(room).collect();
        room -= kept.chars().count();
        name.push_str(&kept);
    };
    for (event, _) in events.by_ref() {
        match event {
            Event::End(TagEnd::Heading(_)) => break,
            Event::Text(piece) | Event::Code(piece) => push(&piece),
            Event::SoftBreak | Event::HardBreak => push(" "),
            _ => {}
        }
    }
    Some((start, level, name.trim().to_owned()))
}
