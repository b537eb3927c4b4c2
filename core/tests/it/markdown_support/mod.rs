//! Shared by the markdown tests: the documents under `tests/markdown/`, the two ways a tree is
//! shown in goldens, and a reply played out through `StreamingMarkdown`.

#![allow(dead_code)]

use std::fmt::Write as _;

use portal_core::markdown::{Block, Inline, StreamingMarkdown, Text};
use unicode_segmentation::UnicodeSegmentation;

/// The folder of the markdown documents and their goldens.
pub fn folder() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/markdown")
}

/// Every document's name (without `.md`), sorted.
pub fn documents() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(folder())
        .expect("tests/markdown exists")
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".md").map(str::to_string)
        })
        .collect();
    names.sort();
    names
}

pub fn read(name: &str) -> String {
    std::fs::read_to_string(folder().join(format!("{name}.md"))).expect("the document exists")
}

/// The tree as an indented outline, one node a line, with each leaf's text and source range.
pub fn outline(blocks: &[Block]) -> String {
    let mut out = String::new();
    for block in blocks {
        block_outline(&mut out, block, 0);
    }
    out
}

fn line(out: &mut String, depth: usize, text: &str) {
    let _ = writeln!(out, "{}{text}", "  ".repeat(depth));
}

fn text_line(out: &mut String, depth: usize, text: &Text) {
    line(
        out,
        depth,
        &format!(
            "text {:?} @{}..{}",
            text.text, text.source.start, text.source.end
        ),
    );
}

fn block_outline(out: &mut String, block: &Block, depth: usize) {
    match block {
        Block::Paragraph { content } => {
            line(out, depth, "paragraph");
            inlines_outline(out, content, depth + 1);
        }
        Block::Heading { level, content } => {
            line(out, depth, &format!("heading {level}"));
            inlines_outline(out, content, depth + 1);
        }
        Block::Quote { blocks } => {
            line(out, depth, "quote");
            for block in blocks {
                block_outline(out, block, depth + 1);
            }
        }
        Block::List {
            start,
            tight,
            items,
        } => {
            let kind = match start {
                Some(start) => format!("ordered from {start}"),
                None => "bulleted".to_string(),
            };
            let spacing = if *tight { "tight" } else { "loose" };
            line(out, depth, &format!("list {kind}, {spacing}"));
            for item in items {
                let task = match item.task {
                    Some(true) => " [x]",
                    Some(false) => " [ ]",
                    None => "",
                };
                line(out, depth + 1, &format!("item{task}"));
                for block in &item.blocks {
                    block_outline(out, block, depth + 2);
                }
            }
        }
        Block::Code { language, content } => {
            line(out, depth, &format!("code {language:?}"));
            for text in content {
                text_line(out, depth + 1, text);
            }
        }
        Block::Table {
            alignments,
            head,
            rows,
        } => {
            line(out, depth, &format!("table {alignments:?}"));
            for (name, row) in
                std::iter::once(("head", head)).chain(rows.iter().map(|r| ("row", r)))
            {
                line(out, depth + 1, name);
                for cell in row {
                    line(out, depth + 2, "cell");
                    inlines_outline(out, cell, depth + 3);
                }
            }
        }
        Block::Rule => line(out, depth, "rule"),
        Block::Html { content } => {
            line(out, depth, "html (as text)");
            for text in content {
                text_line(out, depth + 1, text);
            }
        }
    }
}

fn inlines_outline(out: &mut String, inlines: &[Inline], depth: usize) {
    for inline in inlines {
        match inline {
            Inline::Text(text) => text_line(out, depth, text),
            Inline::Emphasis { content } => {
                line(out, depth, "emphasis");
                inlines_outline(out, content, depth + 1);
            }
            Inline::Strong { content } => {
                line(out, depth, "strong");
                inlines_outline(out, content, depth + 1);
            }
            Inline::Strikethrough { content } => {
                line(out, depth, "strikethrough");
                inlines_outline(out, content, depth + 1);
            }
            Inline::Code { text, source } => line(
                out,
                depth,
                &format!("code {text:?} @{}..{}", source.start, source.end),
            ),
            Inline::Math {
                text,
                display,
                source,
            } => line(
                out,
                depth,
                &format!(
                    "math{} {text:?} @{}..{}",
                    if *display { " (display)" } else { "" },
                    source.start,
                    source.end
                ),
            ),
            Inline::Link {
                href,
                pending,
                image,
                content,
            } => {
                let mut shown = String::from(if *image { "image link" } else { "link" });
                match href {
                    Some(href) => {
                        let _ = write!(shown, " {href:?}");
                    }
                    None if *pending => shown.push_str(" (pending)"),
                    None => shown.push_str(" (drawn as text)"),
                }
                line(out, depth, &shown);
                inlines_outline(out, content, depth + 1);
            }
            Inline::SoftBreak => line(out, depth, "soft break"),
            Inline::HardBreak => line(out, depth, "hard break"),
        }
    }
}

/// The tree in one line, HTML-like, as a frame draws it: `<p>a <strong>b</strong></p>`.
pub fn drawn(blocks: &[Block]) -> String {
    let mut out = String::new();
    for block in blocks {
        block_drawn(&mut out, block, false);
    }
    out
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('\n', "⏎")
}

/// A paragraph of a tight list's item is drawn without `<p>`.
fn block_drawn(out: &mut String, block: &Block, tight: bool) {
    let wrap = |out: &mut String, tag: &str, content: &[Inline]| {
        let _ = write!(out, "<{tag}>");
        inlines_drawn(out, content);
        let _ = write!(out, "</{tag}>");
    };
    match block {
        Block::Paragraph { content } if tight => inlines_drawn(out, content),
        Block::Paragraph { content } => wrap(out, "p", content),
        Block::Heading { level, content } => wrap(out, &format!("h{level}"), content),
        Block::Quote { blocks } => {
            out.push_str("<blockquote>");
            for block in blocks {
                block_drawn(out, block, false);
            }
            out.push_str("</blockquote>");
        }
        Block::List {
            start,
            items,
            tight,
        } => {
            let tag = if start.is_some() { "ol" } else { "ul" };
            let _ = write!(out, "<{tag}>");
            for item in items {
                out.push_str(match item.task {
                    Some(true) => "<li>☑",
                    Some(false) => "<li>☐",
                    None => "<li>",
                });
                for block in &item.blocks {
                    block_drawn(out, block, *tight);
                }
                out.push_str("</li>");
            }
            let _ = write!(out, "</{tag}>");
        }
        Block::Code { language, content } => {
            let _ = write!(out, "<pre {}>", language.as_deref().unwrap_or("-"));
            for text in content {
                out.push_str(&escape(&text.text));
            }
            out.push_str("</pre>");
        }
        Block::Table { head, rows, .. } => {
            out.push_str("<table>");
            for (tag, row) in std::iter::once(("th", head)).chain(rows.iter().map(|r| ("td", r))) {
                out.push_str("<tr>");
                for cell in row {
                    wrap(out, tag, cell);
                }
                out.push_str("</tr>");
            }
            out.push_str("</table>");
        }
        Block::Rule => out.push_str("<hr>"),
        Block::Html { content } => {
            out.push_str("<pre html>");
            for text in content {
                out.push_str(&escape(&text.text));
            }
            out.push_str("</pre>");
        }
    }
}

fn inlines_drawn(out: &mut String, inlines: &[Inline]) {
    for inline in inlines {
        match inline {
            Inline::Text(text) => out.push_str(&escape(&text.text)),
            Inline::Emphasis { content } => {
                out.push_str("<em>");
                inlines_drawn(out, content);
                out.push_str("</em>");
            }
            Inline::Strong { content } => {
                out.push_str("<strong>");
                inlines_drawn(out, content);
                out.push_str("</strong>");
            }
            Inline::Strikethrough { content } => {
                out.push_str("<s>");
                inlines_drawn(out, content);
                out.push_str("</s>");
            }
            Inline::Code { text, .. } | Inline::Math { text, .. } => {
                let _ = write!(out, "<code>{}</code>", escape(text));
            }
            Inline::Link {
                href,
                pending,
                content,
                ..
            } => {
                match (href, pending) {
                    (Some(href), _) => {
                        let _ = write!(out, "<a {}>", escape(href));
                    }
                    (None, true) => out.push_str("<a …>"),
                    (None, false) => out.push_str("<a>"),
                }
                inlines_drawn(out, content);
                out.push_str("</a>");
            }
            Inline::SoftBreak => out.push('⏎'),
            Inline::HardBreak => out.push_str("<br>"),
        }
    }
}

/// The reply played out: pushed in pieces of `clusters` grapheme clusters, calling `frame`
/// after each push with the reply so far and the stream; then finished.
pub fn play(
    reply: &str,
    clusters: usize,
    mut frame: impl FnMut(&str, &StreamingMarkdown),
) -> StreamingMarkdown {
    let mut markdown = StreamingMarkdown::new();
    let mut piece = String::new();
    let mut count = 0;
    for grapheme in reply.graphemes(true) {
        piece.push_str(grapheme);
        count += 1;
        if count == clusters {
            markdown.push(&piece);
            frame(markdown.reply(), &markdown);
            piece.clear();
            count = 0;
        }
    }
    if !piece.is_empty() {
        markdown.push(&piece);
        frame(markdown.reply(), &markdown);
    }
    markdown.finish();
    markdown
}
