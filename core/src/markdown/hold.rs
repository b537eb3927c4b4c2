//! Lines held back at the end of a reply until they are decided, so that no block syntax is
//! drawn as text for a frame and then taken back.

/// Characters that can make up the start of a line's block syntax: list markers and numbers,
/// headings, quotes, rules, setext underlines, fences, table rows, and indentation.
pub(super) fn is_block_syntax(c: char) -> bool {
    matches!(
        c,
        ' ' | '\t' | '#' | '>' | '-' | '+' | '*' | '=' | '_' | '`' | '~' | '|' | ':' | '.' | ')'
    ) || c.is_ascii_digit()
}

/// The start of a task list item's box before its closing `] `, which could still turn out
/// to be a task or a link.
const TASK_STARTS: [&str; 7] = ["[", "[ ", "[x", "[X", "[ ]", "[x]", "[X]"];

/// Where the last line starts if it is still undecided, or the text's end. The last line (text
/// after the last line break) is undecided while it holds nothing but block syntax (`-`, `1.`,
/// `#`, `>`, `` ``` ``, `|--`, `===`, …), maybe followed by the start of a task box: the next
/// character decides whether `-` is a list item, a rule or a setext heading, whether `` `` ``
/// opens a fence or inline code, and whether a closing fence is being written. A line that opens
/// like a link reference definition (`[label]:`) is never drawn, so it waits for its end: the
/// links it defines open only once their destination is whole.
pub(super) fn decided_end(text: &str) -> usize {
    let start = line_start(text, text.len());
    // pulldown-cmark reads a fence's info string past lone `\r`s up to the next `\n`, so a
    // line opening a fence that only lone `\r`s follow is decided by what comes after them.
    let segment = text.rfind('\n').map_or(0, |newline| newline + 1);
    let mut line = segment;
    for part in text[segment..].split('\r') {
        let ended = line + part.len() < text.len();
        if ended && opens_by_its_end(part) {
            return line;
        }
        line += part.len() + 1;
    }
    let line = &text[start..];
    let rest = line.trim_start_matches(is_block_syntax);
    let definition = rest.starts_with('[') && rest.as_bytes().windows(2).any(|w| w == b"]:");
    if rest.is_empty() || TASK_STARTS.contains(&rest) || definition || opens_by_its_end(line) {
        start
    } else {
        text.len()
    }
}

/// Whether a line is a block of its own or goes on the paragraph before it only once it is
/// whole: `` ```rust `` opens code unless a backtick follows in its info string, and `<div`
/// opens raw HTML while `<divider` is text.
pub(super) fn opens_by_its_end(line: &str) -> bool {
    let line = line.trim_start_matches([' ', '\t', '>'].as_slice());
    line.starts_with("```") || line.starts_with('<')
}

/// Whether the held last line could still be the delimiter row of a table whose header is the
/// line before it.
pub(super) fn could_be_delimiter_row(line: &str) -> bool {
    line.chars()
        .all(|c| matches!(c, '|' | '-' | ':' | ' ' | '\t' | '>'))
}

// Sets of characters to search for are slices throughout markdown, not arrays: each array length
// would be a copy of the string search code of its own in the wasm.

/// Line endings, as CommonMark counts them: `\n`, `\r\n` and a lone `\r`.
pub(super) const LINE_ENDS: &[char] = &['\n', '\r'];

/// Spaces, tabs and line endings.
pub(super) const WHITE_SPACE: &[char] = &[' ', '\t', '\n', '\r'];

/// Spaces and tabs.
pub(super) const BLANKS: &[char] = &[' ', '\t'];

/// Where the line holding byte `at` starts.
pub(super) fn line_start(text: &str, at: usize) -> usize {
    text[..at].rfind(LINE_ENDS).map_or(0, |end| end + 1)
}

/// The text without the line ending at its end, if it has one.
pub(super) fn without_line_end(text: &str) -> &str {
    let text = text.strip_suffix('\n').unwrap_or(text);
    text.strip_suffix('\r').unwrap_or(text)
}

/// Whether the text ends with a line ending.
pub(super) fn ends_a_line(text: &str) -> bool {
    text.ends_with(LINE_ENDS)
}

#[cfg(test)]
mod tests {
    use super::decided_end;

    #[test]
    fn a_line_of_block_syntax_waits_for_its_next_character() {
        for (text, held) in [
            ("para\n-", "-"),
            ("para\n- ", "- "),
            ("para\n- x", ""),
            ("1.", "1."),
            ("12. ", "12. "),
            ("12. a", ""),
            ("```", "```"),
            ("```rust", "```rust"),
            ("~~~rust", ""),
            ("<div", "<div"),
            ("> ```rust", "> ```rust"),
            ("a <b", ""),
            ("code\n``", "``"),
            ("> > ", "> > "),
            ("> > a", ""),
            ("|---|:--", "|---|:--"),
            ("| a", ""),
            ("- [x", "- [x"),
            ("- [x] ", ""),
            ("- [xy", ""),
            ("# ", "# "),
            ("#hashtag", ""),
            ("[1]: https://exa", "[1]: https://exa"),
            ("> [1]: https://exa", "> [1]: https://exa"),
            ("[1] and [2]", ""),
            ("text\n", ""),
            ("text\r-", "-"),
            ("text\r\n- ", "- "),
            ("text\r```\r", "```\r"),
            ("text\r```\r\r```", "```\r\r```"),
            ("text\r```\r\n", ""),
            ("", ""),
        ] {
            assert_eq!(&text[decided_end(text)..], held, "for {text:?}");
        }
    }
}
