//! The common `SKILL.md` format: YAML front matter between `---` lines, then a markdown body.
//!
//! Only the small part of YAML that front matter uses is read, so that core carries no YAML
//! crate to the browser (`serde_yaml` is deprecated, and a full parser is large for wasm):
//! `key: value` lines with plain, single-quoted or double-quoted values, `|` and `>` block
//! values, and `#` comments. `name` and `description` are required; `visibility` and `active`
//! are optional fields the server reads. Other keys (`license`, `allowed-tools`, `metadata`, …)
//! and anything indented under them are skipped. Anything else is an error naming its line.

use thiserror::Error;

use super::command::{RESERVED_SLUG, is_slug};

/// A skill's name is at most this many characters (the `SKILL.md` format's limit).
pub const MAX_NAME_CHARS: usize = 64;
/// A skill's description is at most this many characters (the `SKILL.md` format's limit).
pub const MAX_DESCRIPTION_CHARS: usize = 1_024;

/// A parsed `SKILL.md`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillFile {
    /// The skill's name, which is its slug.
    pub name: String,
    /// When the skill applies, for the catalogue.
    pub description: String,
    pub visibility: Option<Visibility>,
    /// Whether the skill is published; the server decides when the file does not say.
    pub active: Option<bool>,
    /// The markdown body: the skill's instructions.
    pub body: String,
}

/// Who may see a skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Visibility {
    /// Only its author.
    Private,
    /// Everyone in its organisation.
    Organisation,
}

/// Why a `SKILL.md` could not be read. Lines are counted from 1.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SkillFileError {
    #[error("SKILL.md must open with a `---` line starting the front matter")]
    NoFrontMatter,
    #[error("the front matter opened on line 1 is never closed; end it with a `---` line")]
    Unclosed,
    #[error("line {line}: `{text}` is not `key: value`; write one key and its value per line")]
    NotKeyValue { line: usize, text: String },
    #[error("line {line}: `{key}` is given twice; keep one")]
    Duplicate { line: usize, key: String },
    #[error("line {line}: the quoted value of `{key}` is not closed; end it with its quote")]
    UnclosedQuote { line: usize, key: String },
    #[error("the front matter has no `{key}`; add `{key}: …`")]
    Missing { key: &'static str },
    #[error(
        "the name `{name}` is not a skill name; use lowercase letters, digits and hyphens, starting with a letter or digit, at most {MAX_NAME_CHARS} characters, and not `{RESERVED_SLUG}`"
    )]
    BadName { name: String },
    #[error(
        "the description is longer than {MAX_DESCRIPTION_CHARS} characters; shorten it to a sentence on when the skill applies"
    )]
    LongDescription,
    #[error("line {line}: `{key}: {value}` is not allowed; {expected}")]
    BadValue {
        line: usize,
        key: &'static str,
        value: String,
        expected: &'static str,
    },
}

/// Reads a `SKILL.md`.
pub fn parse_skill_file(text: &str) -> Result<SkillFile, SkillFileError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    if lines.next().map(str::trim_end) != Some("---") {
        return Err(SkillFileError::NoFrontMatter);
    }
    let mut front: Vec<&str> = Vec::new();
    let mut closed = false;
    for line in lines.by_ref() {
        if matches!(line.trim_end(), "---" | "...") {
            closed = true;
            break;
        }
        front.push(line);
    }
    if !closed {
        return Err(SkillFileError::Unclosed);
    }
    let body = lines.collect::<Vec<_>>().join("\n").trim().to_string();
    let fields = fields(&front)?;

    let get = |key: &'static str| fields.iter().find(|f| f.key == key);
    let name = get("name").ok_or(SkillFileError::Missing { key: "name" })?;
    let name = name.value.clone();
    if !is_slug(&name) || name == RESERVED_SLUG || name.chars().count() > MAX_NAME_CHARS {
        return Err(SkillFileError::BadName { name });
    }
    let description = get("description")
        .map(|f| f.value.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|d| !d.is_empty())
        .ok_or(SkillFileError::Missing { key: "description" })?;
    if description.chars().count() > MAX_DESCRIPTION_CHARS {
        return Err(SkillFileError::LongDescription);
    }
    let visibility = get("visibility")
        .map(|f| match f.value.as_str() {
            "private" => Ok(Visibility::Private),
            "organisation" | "organization" => Ok(Visibility::Organisation),
            other => Err(SkillFileError::BadValue {
                line: f.line,
                key: "visibility",
                value: other.to_string(),
                expected: "write `private` or `organisation`",
            }),
        })
        .transpose()?;
    let active = get("active")
        .map(|f| match f.value.as_str() {
            "true" => Ok(true),
            "false" => Ok(false),
            other => Err(SkillFileError::BadValue {
                line: f.line,
                key: "active",
                value: other.to_string(),
                expected: "write `true` or `false`",
            }),
        })
        .transpose()?;
    Ok(SkillFile {
        name,
        description,
        visibility,
        active,
        body,
    })
}

const KNOWN: [&str; 4] = ["name", "description", "visibility", "active"];

struct Field {
    key: &'static str,
    value: String,
    line: usize,
}

/// The known fields of the front matter lines (line 1 is the opening `---`).
fn fields(front: &[&str]) -> Result<Vec<Field>, SkillFileError> {
    let mut fields: Vec<Field> = Vec::new();
    let mut i = 0;
    while i < front.len() {
        let line = front[i];
        let number = i + 2;
        i += 1;
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') || line.starts_with([' ', '\t']) {
            // Indented lines belong to a skipped key (nested maps, lists).
            continue;
        }
        let Some((key, raw)) = split_key(line) else {
            return Err(SkillFileError::NotKeyValue {
                line: number,
                text: line.to_string(),
            });
        };
        let Some(&known) = KNOWN.iter().find(|k| **k == key) else {
            continue;
        };
        if fields.iter().any(|f| f.key == known) {
            return Err(SkillFileError::Duplicate {
                line: number,
                key: key.to_string(),
            });
        }
        let raw = strip_comment(raw.trim());
        let value = match raw {
            "|" | "|-" | "|+" | ">" | ">-" | ">+" => {
                let start = i;
                while i < front.len()
                    && (front[i].trim().is_empty() || front[i].starts_with([' ', '\t']))
                {
                    i += 1;
                }
                let block: Vec<&str> = front[start..i].iter().map(|l| l.trim()).collect();
                if raw.starts_with('|') {
                    block.join("\n").trim().to_string()
                } else {
                    block
                        .join(" ")
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" ")
                }
            }
            _ => {
                // A plain value may go on over indented lines, folded with spaces.
                let mut value = unquote(raw, known, number)?;
                if !raw.starts_with(['"', '\'']) {
                    while i < front.len()
                        && front[i].starts_with([' ', '\t'])
                        && !front[i].trim().is_empty()
                    {
                        value.push(' ');
                        value.push_str(front[i].trim());
                        i += 1;
                    }
                }
                value
            }
        };
        fields.push(Field {
            key: known,
            value,
            line: number,
        });
    }
    Ok(fields)
}

/// `key: value` split at the first colon that ends the key.
fn split_key(line: &str) -> Option<(&str, &str)> {
    let colon = line.find(':')?;
    let (key, rest) = (&line[..colon], &line[colon + 1..]);
    let key_ok = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    (key_ok && (rest.is_empty() || rest.starts_with([' ', '\t']))).then_some((key, rest))
}

/// A plain value without its trailing ` # comment`; quoted values are read by [`unquote`].
fn strip_comment(raw: &str) -> &str {
    if raw.starts_with(['"', '\'']) {
        return raw;
    }
    match raw.find(" #") {
        Some(at) => raw[..at].trim_end(),
        None => raw,
    }
}

/// A value with its quotes taken off and escapes read; what follows a closing quote may only be
/// a comment.
fn unquote(raw: &str, key: &'static str, line: usize) -> Result<String, SkillFileError> {
    let unclosed = || SkillFileError::UnclosedQuote {
        line,
        key: key.to_string(),
    };
    let Some(quote) = raw.chars().next().filter(|c| matches!(c, '"' | '\'')) else {
        return Ok(raw.to_string());
    };
    let mut out = String::new();
    let mut chars = raw[1..].char_indices();
    let end = loop {
        let Some((at, c)) = chars.next() else {
            return Err(unclosed());
        };
        match (quote, c) {
            ('\'', '\'') if raw[1 + at + 1..].starts_with('\'') => {
                out.push('\'');
                chars.next();
            }
            ('"', '\\') => match chars.next() {
                Some((_, 'n')) => out.push('\n'),
                Some((_, 't')) => out.push('\t'),
                Some((_, other)) => out.push(other),
                None => return Err(unclosed()),
            },
            _ if c == quote => break 1 + at + 1,
            _ => out.push(c),
        }
    };
    let after = raw[end..].trim();
    if after.is_empty() || after.starts_with('#') {
        Ok(out)
    } else {
        Err(unclosed())
    }
}
