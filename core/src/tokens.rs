//! Token counts: how much of a model's context window a text or a message takes.
//!
//! The portal decides when to compact (rule C1) from the provider's reported input tokens plus an
//! estimate of what was added since. Core ships a fast estimate, [`EstimateCounter`]; the server
//! can plug in an exact counter for a model's tokenizer through [`TokenCounter`].
//!
//! # The estimate
//!
//! The text is walked one user-perceived character (extended grapheme cluster) at a time, and each
//! run is priced the way byte-pair tokenizers of the GPT-4 and Claude families tend to split it:
//!
//! - a run of letters and digits costs one token per six ASCII characters, or per three other
//!   letters (accented Latin, Cyrillic, Greek, Arabic, Hebrew, Devanagari, …), rounded up;
//! - every character of a script written without spaces (Han, Hiragana, Katakana, Thai, Lao,
//!   Khmer, Myanmar) and every Hangul syllable costs one token;
//! - a run of ASCII punctuation costs one token per two characters, rounded up;
//! - an emoji or other symbol outside ASCII costs a token per three bytes, or per two bytes for a
//!   cluster of several code points (ZWJ sequences, flags, skin tones);
//! - a single space is free (tokenizers fold it into the next word); a longer run of white space,
//!   or one holding a line break, costs one token.
//!
//! Measured against the o200k and cl100k tokenizers on the product document, Rust code, JSON,
//! Spanish, Japanese and emoji-heavy text, the estimate lands between about −17 % and +25 %,
//! mostly high (the safe side for deciding when to compact); Japanese runs about +46 % on o200k
//! and exact on cl100k.

use unicode_segmentation::UnicodeSegmentation;

use crate::attachment::Attachment;
use crate::block::Block;
use crate::transcript::Message;

/// Counts the tokens a text takes in a model's input.
pub trait TokenCounter {
    /// The number of tokens `text` takes.
    fn count(&self, text: &str) -> usize;
}

/// The fast default estimate described in the module documentation. Deterministic and free of
/// any tokenizer data.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EstimateCounter;

impl TokenCounter for EstimateCounter {
    fn count(&self, text: &str) -> usize {
        estimate(text)
    }
}

/// Tokens a message framing takes in a request (role marker and separators).
pub const MESSAGE_OVERHEAD: usize = 4;
/// Tokens a tool call or a tool result framing takes besides its content (id, name, separators).
pub const CALL_OVERHEAD: usize = 10;
/// The most a picture costs: Anthropic prices a picture at width × height / 750 tokens, up to
/// about 1,600 once reduced to what the model looks at. Other providers land near it.
pub const PICTURE_TOKENS_MAX: usize = 1_600;
/// Pixels per token in the picture price above.
pub const PIXELS_PER_TOKEN: u64 = 750;

/// The tokens a message takes: its blocks, its attachments and the message framing.
///
/// Thinking counts too: a call reads the thinking of its own turn back. A document counts with its
/// whole text when it has one, which over-counts documents that only replay their manifest.
pub fn message_tokens(counter: &dyn TokenCounter, message: &Message) -> usize {
    let blocks: usize = message
        .blocks
        .iter()
        .map(|block| block_tokens(counter, block))
        .sum();
    let attachments: usize = message
        .attachments
        .iter()
        .map(|attachment| attachment_tokens(counter, attachment))
        .sum();
    MESSAGE_OVERHEAD + blocks + attachments
}

/// The tokens a list of messages takes.
pub fn messages_tokens(counter: &dyn TokenCounter, messages: &[Message]) -> usize {
    messages.iter().map(|m| message_tokens(counter, m)).sum()
}

/// The tokens one block takes.
pub fn block_tokens(counter: &dyn TokenCounter, block: &Block) -> usize {
    match block {
        Block::Thinking { text } | Block::Text { text } => counter.count(text),
        Block::ToolUse { id, name, input } => {
            CALL_OVERHEAD
                + counter.count(id)
                + counter.count(name)
                + counter.count(&input.to_string())
        }
        Block::ToolResult {
            call_id,
            content,
            pictures,
            ..
        } => {
            CALL_OVERHEAD
                + counter.count(call_id)
                + counter.count(content)
                + pictures
                    .iter()
                    .map(|p| picture_tokens(p.width, p.height))
                    .sum::<usize>()
        }
        Block::ClarificationRequest { question, .. } => counter.count(question),
        Block::ApprovalRequest { summary, .. } => counter.count(summary),
        Block::Compaction { summary, .. } => counter.count(summary),
    }
}

fn attachment_tokens(counter: &dyn TokenCounter, attachment: &Attachment) -> usize {
    match attachment {
        Attachment::Document(document) => {
            let manifest = counter.count(&document.filename)
                + document
                    .headings
                    .iter()
                    .map(|h| counter.count(h))
                    .sum::<usize>();
            let text = document.text.as_deref().map_or(0, |t| counter.count(t));
            CALL_OVERHEAD + manifest + text
        }
        Attachment::Picture(picture) => picture_tokens(picture.width, picture.height),
    }
}

/// The tokens a `width` × `height` picture takes, at most [`PICTURE_TOKENS_MAX`].
pub fn picture_tokens(width: u32, height: u32) -> usize {
    let pixels = u64::from(width) * u64::from(height);
    let tokens = (pixels / PIXELS_PER_TOKEN).min(PICTURE_TOKENS_MAX as u64);
    // The cast is lossless: `tokens` is at most PICTURE_TOKENS_MAX.
    tokens as usize
}

/// Whether `c` belongs to a script written without spaces between words: Han, Hiragana,
/// Katakana, Thai, Lao, Khmer or Myanmar.
pub(crate) fn is_unspaced_script(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF   // Hiragana, Katakana
        | 0x31F0..=0x31FF // Katakana phonetic extensions
        | 0x3400..=0x4DBF // CJK extension A
        | 0x4E00..=0x9FFF // CJK unified ideographs
        | 0xF900..=0xFAFF // CJK compatibility ideographs
        | 0xFF66..=0xFF9F // Halfwidth Katakana
        | 0x20000..=0x3FFFF // CJK extensions B and later
        | 0x0E00..=0x0EFF // Thai, Lao
        | 0x1000..=0x109F // Myanmar
        | 0x1780..=0x17FF // Khmer
    )
}

fn is_hangul(c: char) -> bool {
    matches!(c as u32, 0xAC00..=0xD7AF | 0x1100..=0x11FF | 0x3130..=0x318F)
}

/// What kind of run a grapheme cluster belongs to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    AsciiWord,
    Letter,
    Dense,
    Punctuation,
    Symbol,
    Space,
    Break,
}

fn classify(grapheme: &str) -> Class {
    let Some(c) = grapheme.chars().next() else {
        return Class::Space;
    };
    if c == '\n' || c == '\r' {
        Class::Break
    } else if c.is_whitespace() {
        Class::Space
    } else if c.is_ascii_alphanumeric() || c == '_' {
        Class::AsciiWord
    } else if c.is_ascii() {
        Class::Punctuation
    } else if is_unspaced_script(c) || is_hangul(c) {
        Class::Dense
    } else if c.is_alphanumeric() {
        Class::Letter
    } else {
        Class::Symbol
    }
}

/// Word-run units per token: an ASCII letter or digit is one unit, another letter two.
const WORD_UNITS_PER_TOKEN: usize = 6;
/// ASCII punctuation characters per token in a run of them.
const PUNCTUATION_PER_TOKEN: usize = 2;

/// A run of characters priced together.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Run {
    Word,
    Punctuation,
    Space,
}

fn estimate(text: &str) -> usize {
    let mut tokens = 0;
    let mut run: Option<Run> = None;
    let mut units = 0;
    let mut line_break = false;
    let flush = |run: Option<Run>, units: usize, line_break: bool| match run {
        Some(Run::Word) => units.div_ceil(WORD_UNITS_PER_TOKEN),
        Some(Run::Punctuation) => units.div_ceil(PUNCTUATION_PER_TOKEN),
        Some(Run::Space) => usize::from(line_break || units > 1),
        None => 0,
    };
    for grapheme in text.graphemes(true) {
        let class = classify(grapheme);
        let (kind, cost) = match class {
            Class::AsciiWord => (Some(Run::Word), 1),
            Class::Letter => (Some(Run::Word), 2),
            Class::Punctuation => (Some(Run::Punctuation), 1),
            Class::Space | Class::Break => (Some(Run::Space), 1),
            Class::Dense => (None, 1),
            Class::Symbol => (None, symbol_tokens(grapheme)),
        };
        if kind != run || kind.is_none() {
            tokens += flush(run, units, line_break);
            run = kind;
            units = 0;
            line_break = false;
        }
        match kind {
            Some(_) => units += cost,
            None => tokens += cost,
        }
        line_break |= class == Class::Break;
    }
    tokens + flush(run, units, line_break)
}

/// An emoji or other symbol: about a token per three bytes, or per two for a cluster of several
/// code points (ZWJ sequences, flags, skin tones), which tokenizers split byte-wise.
fn symbol_tokens(grapheme: &str) -> usize {
    if grapheme.chars().nth(1).is_some() {
        grapheme.len().div_ceil(2)
    } else {
        grapheme.len().div_ceil(3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, expected: usize) {
        assert_eq!(
            EstimateCounter.count(text),
            expected,
            "estimate of {text:?}"
        );
    }

    #[test]
    fn estimates_by_script() {
        check("", 0);
        check("hello world", 2);
        check("internationalization", 4);
        check("a, b.", 4);
        check("línea", 1);
        check("crème brûlée", 3);
        check("今日は晴れ", 5);
        check("안녕하세요", 5);
        check("👩🏽‍💻", 8);
        check("€", 1);
        check("();", 2);
        check("one\n\ntwo", 3);
        check("a    b", 3);
    }
}
