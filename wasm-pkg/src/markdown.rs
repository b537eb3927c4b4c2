//! `renderMarkdown`: a whole reply as its markdown document tree.

use wasm_bindgen::prelude::*;

use crate::convert;

#[wasm_bindgen(typescript_custom_section)]
const MARKDOWN_TYPES: &'static str = r#"
/**
 * Where a leaf comes from in the reply, in UTF-16 code units: the offsets JavaScript's string
 * indices count, so `reply.slice(source.start, source.end)` is the leaf's source (`end` is
 * exclusive). Surrogate pairs count two, as in `String.prototype.length`.
 */
export interface SourceRange { start: number; end: number; }
/**
 * Text drawn as it is. `text` is the source verbatim, or one character reference (`&amp;` drawn
 * as `&`). Draw it as a text node, never as HTML.
 */
export interface MarkdownText { text: string; source: SourceRange; }
/** How a table column's cells are aligned. */
export type MarkdownAlignment = "none" | "left" | "center" | "right";
/** One item of a list: `task` is `true` or `false` for a checked or unchecked task box. */
export interface MarkdownListItem { task: boolean | null; blocks: MarkdownBlock[]; }
/**
 * A block of a reply: a top-level block, or one inside a quote or a list item. TypeScript
 * narrows it on `kind`.
 */
export type MarkdownBlock =
  | { kind: "paragraph"; content: MarkdownInline[] }
  | { kind: "heading"; level: 1 | 2 | 3 | 4 | 5 | 6; content: MarkdownInline[] }
  | { kind: "quote"; blocks: MarkdownBlock[] }
  /** Ordered from `start`, or bulleted when it is `null`; draw a `tight` list's paragraphs without spacing. */
  | { kind: "list"; start: number | null; tight: boolean; items: MarkdownListItem[] }
  /** Fenced or indented code, drawn preformatted; `language` is the fence's first word. */
  | { kind: "code"; language: string | null; content: MarkdownText[] }
  /** Every row (and the head) has one cell per alignment; a cell is its inline content. */
  | { kind: "table"; alignments: MarkdownAlignment[]; head: MarkdownInline[][]; rows: MarkdownInline[][][] }
  | { kind: "rule" }
  /** Raw HTML, drawn as preformatted plain text: never interpreted. */
  | { kind: "html"; content: MarkdownText[] };
/** Inline content: text and the formatting around it. */
export type MarkdownInline =
  | { kind: "text"; text: string; source: SourceRange }
  | { kind: "emphasis"; content: MarkdownInline[] }
  | { kind: "strong"; content: MarkdownInline[] }
  | { kind: "strikethrough"; content: MarkdownInline[] }
  /** Inline code; `source` covers its backticks too. */
  | { kind: "code"; text: string; source: SourceRange }
  /** A math span (`$…$`, or `$$…$$` when `display`), drawn as code-styled text. */
  | { kind: "math"; text: string; display: boolean; source: SourceRange }
  /**
   * A link, an autolink, a bare web address or an image (`image`: drawn as a link showing its
   * alt text, never fetched). `href` is set only for a whole http, https or mailto link; when it
   * is `null`, draw the content as plain text, styled as a link still arriving when `pending`.
   */
  | { kind: "link"; href: string | null; pending: boolean; image: boolean; content: MarkdownInline[] }
  /** A line break CommonMark draws as a space. */
  | { kind: "softBreak" }
  | { kind: "hardBreak" };
"#;

/// A whole reply (a settled or reloaded one) as its markdown document tree: CommonMark with
/// GitHub's tables, strikethrough, task lists and bare web addresses. Raw HTML is text, links
/// open only over http, https and mailto, and source ranges are UTF-16 offsets into `text`.
#[wasm_bindgen(js_name = renderMarkdown, unchecked_return_type = "MarkdownBlock[]")]
pub fn render_markdown(text: &str) -> Result<JsValue, JsValue> {
    let blocks = portal_core::markdown::parse(text);
    convert::markdown::blocks(&blocks, text, convert::utf16_length(text))
}
