//! The rules test: every rule listed in `docs/rules.md` is named by at least one test, and every
//! rule ID a test names is listed in `docs/rules.md`.
//!
//! A rule ID is one of the letters L S E A M C B R D followed by a number from 1 to 99 without a
//! leading zero (`M10`). A test names a rule when the ID stands as a word of its own (`M10`, not
//! `M100`, `E0308`, `R2D2` or `E2E`), or when its lowercase form opens a name and is followed by
//! `_` (`fn m10_...`, `r12_c12_...`), or opens the title of a JavaScript test
//! (`test('r14 reduced motion', ...)`, `test('r7_r8_r10 ...', ...)`).
//!
//! Where tests are: every file under a workspace crate's `tests/` and under `tests/e2e/` (Rust and
//! JavaScript), and, in a crate's `src/`, every `#[cfg(test)]` item and `#[test]` function with
//! the comments right above it, and every file a `#[cfg(test)] mod name;` points to. This file is
//! left out: its own examples are not tests of the rules.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::fs;
use std::ops::Range;
use std::path::{Path, PathBuf};

const RULES_FILE: &str = "docs/rules.md";
const LETTERS: &[u8] = b"LSEAMCBRD";
const TEST_EXTENSIONS: &[&str] = &["rs", "mjs", "js", "cjs", "ts"];

#[test]
fn rules_and_tests_name_each_other() {
    let root = workspace_root();
    let listed = listed_rules(&root);
    let named = named_by_tests(&root);

    let unnamed: Vec<_> = listed
        .iter()
        .filter(|(id, _)| !named.contains_key(*id))
        .collect();
    let unlisted: Vec<_> = named
        .iter()
        .filter(|(id, _)| !listed.contains_key(*id))
        .collect();
    if unnamed.is_empty() && unlisted.is_empty() {
        return;
    }

    let mut message = format!("{RULES_FILE} and the tests are out of step.\n");
    if !unnamed.is_empty() {
        let _ = writeln!(
            message,
            "\nRules listed in {RULES_FILE} that no test names ({}). Name each in the test that \
             checks it: start the test's name with the lowercase ID (`fn m10_...`, \
             `test('m10 ...')`) or write the ID in a comment inside the test. If the rule was \
             dropped, remove it from {RULES_FILE}.",
            unnamed.len()
        );
        for (id, line) in unnamed {
            let _ = writeln!(message, "  {id} ({RULES_FILE}:{line})");
        }
    }
    if !unlisted.is_empty() {
        let _ = writeln!(
            message,
            "\nRule IDs that tests name but {RULES_FILE} does not list ({}). If it is a rule, add \
             it to {RULES_FILE} as `- **ID** ...` with its \"Lives in:\" and \"Tested by:\" \
             lines; if it is a typo or not meant as a rule, fix the test where it is named:",
            unlisted.len()
        );
        for (id, places) in unlisted {
            let shown: Vec<String> = places
                .iter()
                .take(5)
                .map(|(path, line)| format!("{path}:{line}"))
                .collect();
            let more = places.len().saturating_sub(shown.len());
            let more = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            let _ = writeln!(message, "  {id}: {}{more}", shown.join(", "));
        }
    }
    panic!("{message}");
}

/// The rules `docs/rules.md` lists, each with its line: every line that starts `- **ID**`.
fn listed_rules(root: &Path) -> BTreeMap<RuleId, usize> {
    let path = root.join(RULES_FILE);
    let text =
        fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let mut listed = BTreeMap::new();
    for (index, line) in text.lines().enumerate() {
        let Some(rest) = line.strip_prefix("- **") else {
            continue;
        };
        let token = rest.split("**").next().unwrap_or_default();
        let id = RuleId::parse(token).unwrap_or_else(|| {
            panic!(
                "{RULES_FILE}:{}: `- **{token}**` starts a rule line but `{token}` is not a rule \
                 ID (one of L S E A M C B R D and a number, like M10)",
                index + 1
            )
        });
        if let Some(first) = listed.insert(id, index + 1) {
            panic!(
                "{RULES_FILE}:{}: rule {id} is listed twice (first at line {first}); keep one",
                index + 1
            );
        }
    }
    assert!(
        !listed.is_empty(),
        "{RULES_FILE} lists no rule: each rule is a line starting `- **ID**`, like `- **M10** ...`"
    );
    listed
}

/// Every rule ID the tests name, with where: each file (relative to the root) and line.
fn named_by_tests(root: &Path) -> BTreeMap<RuleId, BTreeSet<(String, usize)>> {
    let this_file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/rules.rs");
    let mut named: BTreeMap<RuleId, BTreeSet<(String, usize)>> = BTreeMap::new();
    let mut record = |path: &Path, text: &str, only: Option<&[Range<usize>]>| {
        let shown = path
            .strip_prefix(root)
            .unwrap_or(path)
            .display()
            .to_string();
        for (id, at) in rule_ids(text, is_javascript(path)) {
            if only.is_some_and(|ranges| !ranges.iter().any(|r| r.contains(&at))) {
                continue;
            }
            let line = text[..at].matches('\n').count() + 1;
            named.entry(id).or_default().insert((shown.clone(), line));
        }
    };

    let crates = workspace_members(root);
    let mut test_files = Vec::new();
    for member in &crates {
        collect_files(&root.join(member).join("tests"), &mut test_files);
    }
    collect_files(&root.join("tests").join("e2e"), &mut test_files);
    for path in &test_files {
        if path == &this_file {
            continue;
        }
        let text = read(path);
        record(path, &text, None);
    }

    for member in &crates {
        let mut sources = Vec::new();
        collect_files(&root.join(member).join("src"), &mut sources);
        sources.retain(|p| p.extension().is_some_and(|e| e == "rs"));
        let mut whole: BTreeSet<PathBuf> = BTreeSet::new();
        for path in &sources {
            let text = read(path);
            let found = test_regions(&text);
            for module in &found.out_of_line_modules {
                whole.extend(module_file(path, module));
            }
            if !found.regions.is_empty() {
                record(path, &text, Some(&found.regions));
            }
        }
        // Files of `#[cfg(test)] mod name;` are test code whole, and so are their submodules.
        let mut pending: Vec<PathBuf> = whole.iter().cloned().collect();
        while let Some(path) = pending.pop() {
            let text = read(&path);
            for module in all_out_of_line_modules(&text) {
                if let Some(file) = module_file(&path, &module)
                    && whole.insert(file.clone())
                {
                    pending.push(file);
                }
            }
            record(&path, &text, None);
        }
    }
    named
}

/// A rule ID: a letter of [`LETTERS`] and its number, ordered as `docs/rules.md` groups them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct RuleId {
    /// The letter's place in [`LETTERS`].
    group: usize,
    number: u8,
}

impl RuleId {
    /// `M10` → M10; `m10` → M10; anything else (`M0`, `M01`, `M100`, `X1`, `M`) → None.
    fn parse(token: &str) -> Option<RuleId> {
        let bytes = token.as_bytes();
        let (&letter, digits) = bytes.split_first()?;
        let group = LETTERS
            .iter()
            .position(|&l| l == letter.to_ascii_uppercase())?;
        let valid = (1..=2).contains(&digits.len())
            && digits.iter().all(u8::is_ascii_digit)
            && digits[0] != b'0';
        valid.then(|| RuleId {
            group,
            number: token[1..].parse().unwrap_or_default(),
        })
    }

    fn is_upper(token: &str) -> bool {
        token.as_bytes().first().is_some_and(u8::is_ascii_uppercase)
    }
}

impl std::fmt::Display for RuleId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}", LETTERS[self.group] as char, self.number)
    }
}

/// The rule IDs `text` names, each with its byte offset. See the module comment for the forms.
fn rule_ids(text: &str, javascript: bool) -> Vec<(RuleId, usize)> {
    let mut found = Vec::new();
    for (at, word) in words(text) {
        if RuleId::is_upper(word)
            && let Some(id) = RuleId::parse(word)
        {
            found.push((id, at));
            continue;
        }
        found.extend(leading_lowercase_ids(word, at, false));
    }
    if javascript {
        for (at, title_word) in javascript_test_titles(text) {
            found.extend(leading_lowercase_ids(title_word, at, true));
        }
    }
    found
}

/// The maximal runs of ASCII letters, digits and `_` in `text`, with their byte offsets: the
/// words that `\b` delimits.
fn words(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let bytes = text.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || {
        while at < bytes.len() && !is_word_byte(bytes[at]) {
            at += 1;
        }
        if at >= bytes.len() {
            return None;
        }
        let start = at;
        while at < bytes.len() && is_word_byte(bytes[at]) {
            at += 1;
        }
        Some((start, &text[start..at]))
    })
}

fn is_word_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

/// The lowercase IDs that open `word` as `_`-separated parts, each followed by `_` (`m10_`,
/// `r12_c12_`); with `whole_title`, the last part may be an ID too (`r14`, `r11_r12_c7`).
fn leading_lowercase_ids(word: &str, at: usize, whole_title: bool) -> Vec<(RuleId, usize)> {
    let parts: Vec<&str> = word.trim_start_matches('_').split('_').collect();
    let mut found = Vec::new();
    for (index, part) in parts.iter().enumerate() {
        let followed_by_underscore = index + 1 < parts.len();
        let lowercase = part.as_bytes().first().is_some_and(u8::is_ascii_lowercase);
        match RuleId::parse(part) {
            Some(id) if lowercase && (followed_by_underscore || whole_title) => {
                found.push((id, at));
            }
            _ => break,
        }
    }
    found
}

/// The first word of each JavaScript test's title (`test('r14 reduced motion', ...)` → `r14`),
/// with its offset, for `test`, `it` and `describe`.
fn javascript_test_titles(text: &str) -> Vec<(usize, &str)> {
    let mut titles = Vec::new();
    for (at, word) in words(text) {
        if !matches!(word, "test" | "it" | "describe") {
            continue;
        }
        let after = &text[at + word.len()..];
        let Some(call) = after.strip_prefix('(') else {
            continue;
        };
        let call = call.trim_start();
        let Some(quote) = call
            .chars()
            .next()
            .filter(|c| matches!(c, '\'' | '"' | '`'))
        else {
            continue;
        };
        let title = &call[1..];
        let end = title
            .find(|c: char| c == quote || c.is_whitespace())
            .unwrap_or(title.len());
        titles.push((text.len() - title.len(), &title[..end]));
    }
    titles
}

fn is_javascript(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e != "rs" && TEST_EXTENSIONS.iter().any(|t| e == *t))
}

/// What of a Rust source file is test code.
#[derive(Debug, Default, PartialEq)]
struct TestRegions {
    /// Byte ranges of `#[cfg(test)]` items and `#[test]` functions, with the comments and
    /// attributes right above them.
    regions: Vec<Range<usize>>,
    /// The names of `#[cfg(test)] mod name;` declarations: their files are test code whole.
    out_of_line_modules: Vec<String>,
}

fn test_regions(src: &str) -> TestRegions {
    let bytes = src.as_bytes();
    let code = code_mask(bytes);
    let mut found = TestRegions::default();
    let mut at = 0;
    while at < bytes.len() {
        if !(code[at] && bytes[at] == b'#') {
            at += 1;
            continue;
        }
        let inner = bytes.get(at + 1) == Some(&b'!');
        let open = if inner { at + 2 } else { at + 1 };
        if bytes.get(open) != Some(&b'[') {
            at += 1;
            continue;
        }
        let Some(close) = matching(bytes, &code, open) else {
            break;
        };
        let content: String = src[open + 1..close]
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        if is_test_attribute(&content) {
            if inner {
                // `#![cfg(test)]`: the whole file is test code.
                found.regions.push(0..bytes.len());
                return found;
            }
            let start = start_of_leading_comments(src, at);
            match item_end(bytes, &code, close + 1) {
                Some(ItemEnd::Body(end)) => found.regions.push(start..end),
                Some(ItemEnd::Semicolon(end)) => {
                    if let Some(name) = declared_module(&src[close + 1..end]) {
                        found.out_of_line_modules.push(name);
                    }
                    found.regions.push(start..end);
                }
                None => found.regions.push(start..bytes.len()),
            }
        }
        at = close + 1;
    }
    found
}

/// `cfg(test)`, or a test function's attribute: `test`, `tokio::test(...)`,
/// `wasm_bindgen_test`.
fn is_test_attribute(content: &str) -> bool {
    if content == "cfg(test)" {
        return true;
    }
    let path = content.split('(').next().unwrap_or_default();
    let last = path.rsplit("::").next().unwrap_or_default();
    last == "test" || last.ends_with("_test")
}

/// Every `mod name;` in a file's code (for a file that is test code whole).
fn all_out_of_line_modules(src: &str) -> Vec<String> {
    let bytes = src.as_bytes();
    let code = code_mask(bytes);
    let mut modules = Vec::new();
    let mut line_start = 0;
    for (index, &byte) in bytes.iter().enumerate() {
        if byte == b';' && code[index] {
            if let Some(name) = declared_module(&src[line_start..index + 1]) {
                modules.push(name);
            }
            line_start = index + 1;
        } else if byte == b'\n' || (code[index] && matches!(byte, b'{' | b'}')) {
            line_start = index + 1;
        }
    }
    modules
}

/// `name` for an item that reads `mod name;` (with any visibility and attributes before it).
fn declared_module(item: &str) -> Option<String> {
    let item = item.trim().strip_suffix(';')?.trim_end();
    let mut tokens = item.split_whitespace().rev();
    let name = tokens.next()?;
    (tokens.next()? == "mod" && name.bytes().all(is_word_byte)).then(|| name.to_string())
}

/// The file of module `name` declared out of line in `parent`.
fn module_file(parent: &Path, name: &str) -> Option<PathBuf> {
    let dir = parent.parent()?;
    let stem = parent.file_stem()?.to_str()?;
    let dir = if matches!(stem, "mod" | "lib" | "main") {
        dir.to_path_buf()
    } else {
        dir.join(stem)
    };
    [
        dir.join(format!("{name}.rs")),
        dir.join(name).join("mod.rs"),
    ]
    .into_iter()
    .find(|p| p.is_file())
}

enum ItemEnd {
    /// Just past the `}` closing the item's body.
    Body(usize),
    /// Just past the `;` ending a bodiless item.
    Semicolon(usize),
}

/// Where the item starting at `from` ends: its body's closing brace, or its `;`.
fn item_end(bytes: &[u8], code: &[bool], from: usize) -> Option<ItemEnd> {
    let mut depth = 0usize;
    let mut at = from;
    while at < bytes.len() {
        if code[at] {
            match bytes[at] {
                b'(' | b'[' => depth += 1,
                b')' | b']' => depth = depth.saturating_sub(1),
                b'{' if depth == 0 => {
                    return matching(bytes, code, at).map(|c| ItemEnd::Body(c + 1));
                }
                b';' if depth == 0 => return Some(ItemEnd::Semicolon(at + 1)),
                _ => {}
            }
        }
        at += 1;
    }
    None
}

/// The offset of the bracket closing the one at `open`, counting only brackets in code.
fn matching(bytes: &[u8], code: &[bool], open: usize) -> Option<usize> {
    let (opening, closing) = match bytes[open] {
        b'[' => (b'[', b']'),
        b'{' => (b'{', b'}'),
        _ => (b'(', b')'),
    };
    let mut depth = 0usize;
    for at in open..bytes.len() {
        if !code[at] {
            continue;
        }
        if bytes[at] == opening {
            depth += 1;
        } else if bytes[at] == closing {
            depth -= 1;
            if depth == 0 {
                return Some(at);
            }
        }
    }
    None
}

/// The start of the line holding `at`, moved up over the comment and attribute lines right above.
fn start_of_leading_comments(src: &str, at: usize) -> usize {
    let mut start = src[..at].rfind('\n').map_or(0, |n| n + 1);
    while start > 0 {
        let previous = src[..start - 1].rfind('\n').map_or(0, |n| n + 1);
        let line = src[previous..start - 1].trim_start();
        if line.starts_with("//") || line.starts_with("#[") {
            start = previous;
        } else {
            break;
        }
    }
    start
}

/// For each byte of Rust source, whether it is code rather than a comment, a string or a
/// character literal, so that brackets and `#` inside those are not taken for code.
fn code_mask(bytes: &[u8]) -> Vec<bool> {
    let mut code = vec![true; bytes.len()];
    let mut at = 0;
    while at < bytes.len() {
        let next = bytes.get(at + 1).copied();
        let end = match bytes[at] {
            b'/' if next == Some(b'/') => bytes[at..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(bytes.len(), |n| at + n),
            b'/' if next == Some(b'*') => block_comment_end(bytes, at),
            b'r' | b'b' | b'c' if raw_string_end(bytes, at).is_some() => {
                raw_string_end(bytes, at).unwrap_or(bytes.len())
            }
            b'"' => string_end(bytes, at),
            b'\'' => match char_literal_end(bytes, at) {
                Some(end) => end,
                None => {
                    at += 1;
                    continue;
                }
            },
            _ => {
                at += 1;
                continue;
            }
        };
        let end = end.min(bytes.len());
        code[at..end].iter_mut().for_each(|c| *c = false);
        at = end.max(at + 1);
    }
    code
}

fn block_comment_end(bytes: &[u8], from: usize) -> usize {
    let mut depth = 0usize;
    let mut at = from;
    while at + 1 < bytes.len() {
        match (bytes[at], bytes[at + 1]) {
            (b'/', b'*') => {
                depth += 1;
                at += 2;
            }
            (b'*', b'/') => {
                depth -= 1;
                at += 2;
                if depth == 0 {
                    return at;
                }
            }
            _ => at += 1,
        }
    }
    bytes.len()
}

/// Just past a string literal opening at `from` (a `"`), escapes skipped.
fn string_end(bytes: &[u8], from: usize) -> usize {
    let mut at = from + 1;
    while at < bytes.len() {
        match bytes[at] {
            b'\\' => at += 2,
            b'"' => return at + 1,
            _ => at += 1,
        }
    }
    bytes.len()
}

/// Just past a raw string (`r"…"`, `r#"…"#`, `br"…"`, `cr"…"`) opening at `from`, if one does.
fn raw_string_end(bytes: &[u8], from: usize) -> Option<usize> {
    if from > 0 && is_word_byte(bytes[from - 1]) {
        return None;
    }
    let mut at = from;
    if matches!(bytes[at], b'b' | b'c') {
        at += 1;
    }
    if bytes.get(at) != Some(&b'r') {
        return None;
    }
    at += 1;
    let hashes = bytes[at..].iter().take_while(|&&b| b == b'#').count();
    at += hashes;
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    at += 1;
    while at < bytes.len() {
        if bytes[at] == b'"' && bytes[at + 1..].iter().take(hashes).all(|&b| b == b'#') {
            let end = at + 1 + hashes;
            if end <= bytes.len() {
                return Some(end);
            }
        }
        at += 1;
    }
    Some(bytes.len())
}

/// Just past a character literal opening at `from` (a `'`), or None for a lifetime.
fn char_literal_end(bytes: &[u8], from: usize) -> Option<usize> {
    let first = *bytes.get(from + 1)?;
    if first == b'\\' {
        // '\n', '\'', '\x41', '\u{1F600}': the closing quote comes after the escaped character.
        let close = bytes[from + 3..].iter().position(|&b| b == b'\'')?;
        return Some(from + 3 + close + 1);
    }
    let width = match first {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    };
    (bytes.get(from + 1 + width) == Some(&b'\'')).then_some(from + 2 + width)
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask sits in the workspace")
        .to_path_buf()
}

/// The workspace's member crates, from `members = [...]` in the root `Cargo.toml`.
fn workspace_members(root: &Path) -> Vec<String> {
    let manifest = read(&root.join("Cargo.toml"));
    let list = manifest
        .lines()
        .map(str::trim)
        .find_map(|line| line.strip_prefix("members"))
        .and_then(|rest| rest.trim_start().strip_prefix('='))
        .and_then(|rest| rest.trim().strip_prefix('['))
        .and_then(|rest| rest.split(']').next())
        .expect("the root Cargo.toml lists `members = [...]` on one line");
    let members: Vec<String> = list
        .split(',')
        .map(|m| m.trim().trim_matches('"').to_string())
        .filter(|m| !m.is_empty())
        .flat_map(|m| match m.strip_suffix("/*") {
            // A folder of crates (`server/*`): each of its sub-folders with a Cargo.toml.
            Some(folder) => {
                let mut crates: Vec<String> = fs::read_dir(root.join(folder))
                    .expect("a member folder of the workspace")
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|path| path.join("Cargo.toml").is_file())
                    .filter_map(|path| {
                        let name = path.file_name()?.to_str()?.to_string();
                        Some(format!("{folder}/{name}"))
                    })
                    .collect();
                crates.sort();
                crates
            }
            None => vec![m],
        })
        .collect();
    assert!(!members.is_empty(), "the workspace lists no member");
    members
}

/// The files under `dir` (if it exists) with a test extension, skipping `target` and
/// `node_modules`.
fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for path in entries {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if path.is_dir() {
            if !matches!(name, "target" | "node_modules") && !name.starts_with('.') {
                collect_files(&path, out);
            }
        } else if path
            .extension()
            .is_some_and(|e| TEST_EXTENSIONS.iter().any(|t| e == *t))
        {
            out.push(path);
        }
    }
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

// The checker's own checks: the matching and the test regions. Their examples are why this file
// is not scanned for rule IDs.

fn ids(text: &str) -> Vec<String> {
    let mut found: Vec<String> = rule_ids(text, false)
        .into_iter()
        .map(|(id, _)| id.to_string())
        .collect();
    found.sort();
    found.dedup();
    found
}

#[test]
fn ids_are_whole_words_of_the_known_letters() {
    assert_eq!(
        ids("rule L1 and L10, C1 and C11"),
        ["C1", "C11", "L1", "L10"]
    );
    assert_eq!(ids("L1."), ["L1"]);
    assert!(ids("L10").iter().all(|id| id != "L1"));
    assert!(ids("C11 only").iter().all(|id| id != "C1"));
    // Not rule IDs: other letters, leading zeros, three digits, glued to letters or digits.
    assert!(
        ids("error[E0308] X1 H2 R2D2 E2E e2e #E2E8F0 #a1b2c3 M100 M0 A4x 2A4 S3_BUCKET").is_empty()
    );
    assert!(ids("color: #c1c1c1; margin: 0 M10px; u8_ i64_ f32_").is_empty());
}

#[test]
fn lowercase_ids_open_a_name_and_are_followed_by_an_underscore() {
    assert_eq!(ids("fn m10_cut_off_turn()"), ["M10"]);
    assert_eq!(ids("fn r12_c12_a_divider()"), ["C12", "R12"]);
    assert_eq!(ids("fn s1_a2_e2_l_walk()"), ["A2", "E2", "S1"]);
    assert!(ids("fn helper_b2_value() let m10 = 3; a1.b2 m10").is_empty());
    assert!(ids("fn m10x_not_a_rule()").is_empty());
}

#[test]
fn javascript_test_titles_name_their_leading_ids() {
    let found: BTreeSet<String> = rule_ids(
        "test('r11_r12_r13_c7 compaction is drawn', async () => {});\n\
         test(\"r14 reduced motion\", () => {});\n\
         it(`x1 is not a rule`, () => {});",
        true,
    )
    .into_iter()
    .map(|(id, _)| id.to_string())
    .collect();
    let expected: BTreeSet<String> = ["R11", "R12", "R13", "C7", "R14"]
        .into_iter()
        .map(String::from)
        .collect();
    assert_eq!(found, expected);
}

#[test]
fn only_test_code_of_a_source_file_counts() {
    let src = r##"
/// M1: the cost follows the window.
pub fn rebuild() { let s = "}"; let c = '}'; let r = r#"{"#; }
fn lifetime<'a>(x: &'a str) -> &'a str { x }

/// Checks of rule C3.
#[cfg(test)]
mod tests {
    use super::*;
    // The brace in this comment is not code: }
    #[test]
    fn c4_tail() { let _ = "{"; }
}

pub fn after() {} // M2 in a comment after the tests
#[cfg(test)]
mod more_tests;
"##;
    let found = test_regions(src);
    let in_tests: Vec<String> = rule_ids(src, false)
        .into_iter()
        .filter(|(_, at)| found.regions.iter().any(|r| r.contains(at)))
        .map(|(id, _)| id.to_string())
        .collect();
    assert_eq!(in_tests, ["C3", "C4"]);
    assert_eq!(found.out_of_line_modules, ["more_tests"]);
}

#[test]
fn a_test_function_outside_a_test_module_counts_alone() {
    let src = "fn a1_helper() {}\n\n// A2 is checked here.\n#[test]\nfn checks() { assert!(true); }\nfn a3_after() {}\n";
    let found = test_regions(src);
    let in_tests: Vec<String> = rule_ids(src, false)
        .into_iter()
        .filter(|(_, at)| found.regions.iter().any(|r| r.contains(at)))
        .map(|(id, _)| id.to_string())
        .collect();
    assert_eq!(in_tests, ["A2"]);
}

#[test]
fn rule_lines_are_read_from_the_rules_file() {
    let listed = listed_rules(&workspace_root());
    let first = listed.keys().next().map(ToString::to_string);
    assert_eq!(first.as_deref(), Some("L1"), "docs/rules.md opens with L1");
    assert!(RuleId::parse("m10").is_some() && RuleId::parse("M01").is_none());
}
