//! Conversations made from an export: Portal's own (a conversation's JSON, or a list of them,
//! with the projects of Portal's archive), ChatGPT's and Claude's `conversations.json`. The kind
//! is told by the JSON's shape. Each conversation comes with notes naming, in words, what of it
//! did not map; a conversation or project that cannot be made at all refuses the whole export,
//! so nothing is half-imported.

mod chatgpt;
mod claude;
mod foreign;
mod portal;

use portal_core::title::one_line_name;
use portal_core::transcript::Transcript;
use portal_core::validate::TranscriptError;
use thiserror::Error;

pub use portal::{EXPORT_KIND, Exported, ExportedProject, attachments_used, leave_out_attachments};

/// The most conversations one import makes. **Decision:** 5,000, more than a heavy user's
/// ChatGPT history; a larger export is split, or imported as several files.
pub const MOST_CONVERSATIONS: usize = 5_000;

/// Where an export came from, told by its shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Portal's export: one conversation (`{"portal": "conversation", …}`), a list of them, or a
    /// bare transcript.
    Portal,
    /// ChatGPT's data export: a list of conversations, each a `mapping` of message nodes.
    ChatGpt,
    /// Claude's data export: a list of conversations, each with `chat_messages`.
    Claude,
}

impl Source {
    /// The source's name as a person knows it.
    pub fn name(self) -> &'static str {
        match self {
            Source::Portal => "Portal",
            Source::ChatGpt => "ChatGPT",
            Source::Claude => "Claude",
        }
    }
}

/// One conversation made from an export.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    /// Its title in the export, cleaned of control characters; empty when it had none.
    pub title: String,
    /// The agent a Portal export names; `None` from elsewhere.
    pub agent: Option<String>,
    /// The name of the project a Portal export puts it in, cleaned as a project's name is
    /// ([`one_line_name`]); `None` for none, and from elsewhere.
    pub project: Option<String>,
    /// Whether a Portal export has it pinned; never from elsewhere.
    pub pinned: bool,
    /// Its turns, valid (`portal_core::validate` holds).
    pub transcript: Transcript,
    /// What did not map, each a sentence.
    pub notes: Vec<String>,
}

/// A project of a Portal archive's `projects.json`, as read: what a project made from it would
/// hold. Nothing here is checked against the importing portal's limits or agents.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedProject {
    /// Its name, cleaned as a project's name is ([`one_line_name`]).
    pub name: String,
    /// Its instructions, without NUL characters.
    pub instructions: String,
    /// The agent its conversations talk to when none is asked for, as the archive names it.
    pub agent: Option<String>,
}

/// What an export became.
#[derive(Debug, Clone, PartialEq)]
pub struct Import {
    pub source: Source,
    pub conversations: Vec<Imported>,
    /// The projects of a Portal archive's `projects.json`, in its order; none from elsewhere,
    /// nor from a JSON file alone.
    pub projects: Vec<ImportedProject>,
}

/// Why an export was refused, in words that say what to do.
#[derive(Debug, Error, PartialEq)]
pub enum ImportError {
    #[error(
        "the file is not JSON (line {line}, column {column}: {message}); import the export's JSON file as it was downloaded"
    )]
    NotJson {
        line: usize,
        column: usize,
        message: &'static str,
    },
    #[error(
        "the file is neither a ZIP archive nor JSON text; import the export's ZIP archive or its conversations.json as it was downloaded"
    )]
    NotText,
    #[error(
        "the file looks like a ZIP archive but cannot be opened ({0}); download the export again and import it as it came"
    )]
    NotAnArchive(String),
    #[error(
        "the ZIP archive has no conversations.json at its top; import the archive Portal, ChatGPT or Claude made, or the conversations.json inside it"
    )]
    NoConversationsInArchive,
    #[error(
        "the archive's {entry} unpacks to more than the {most_mib} MiB one import reads; export fewer conversations and import that"
    )]
    UnpackedTooLarge { entry: &'static str, most_mib: u64 },
    #[error(
        "the file is not an export Portal reads: {0}; import a conversation exported from Portal, or ChatGPT's or Claude's conversations.json"
    )]
    UnknownShape(String),
    #[error(
        "the file holds no conversation; export one or more conversations and import that file"
    )]
    Empty,
    #[error(
        "the file holds {found} conversations, more than the {MOST_CONVERSATIONS} one import makes; split it and import the parts"
    )]
    TooMany { found: usize },
    #[error(
        "conversation {position} of the {source_name} export cannot be read: {message}; nothing was imported"
    )]
    Conversation {
        /// 1-based, in the export's order.
        position: usize,
        source_name: &'static str,
        message: String,
    },
    #[error(
        "conversation {position} of the export is not a valid transcript: {error}; nothing was imported"
    )]
    Transcript {
        position: usize,
        error: TranscriptError,
    },
    #[error(
        "the archive's projects.json cannot be read: {0}; import the archive as Portal made it, or its conversations.json alone; nothing was imported"
    )]
    Projects(String),
}

/// Reads a file a person hands in: a ZIP archive with a `conversations.json` at its top (a
/// Portal archive, or ChatGPT's or Claude's data export as downloaded), or that JSON itself. A
/// Portal archive's `projects.json`, when it has one, is read too. `most` bounds each JSON file
/// unpacked from an archive, as the upload's own size is bounded.
pub fn read_file(file: &[u8], most: u64) -> Result<Import, ImportError> {
    if !file.starts_with(b"PK\x03\x04") {
        return read(std::str::from_utf8(file).map_err(|_| ImportError::NotText)?);
    }
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(file))
        .map_err(|e| ImportError::NotAnArchive(e.to_string()))?;
    let conversations = unpack(&mut archive, CONVERSATIONS_JSON, most)?
        .ok_or(ImportError::NoConversationsInArchive)?;
    let mut import = read(std::str::from_utf8(&conversations).map_err(|_| ImportError::NotText)?)?;
    if import.source == Source::Portal
        && let Some(projects) = unpack(&mut archive, PROJECTS_JSON, most)?
    {
        let text = std::str::from_utf8(&projects)
            .map_err(|_| ImportError::Projects("it is not UTF-8 text".into()))?;
        import.projects = portal::read_projects(text)?;
    }
    Ok(import)
}

/// The entry `name` at the top of a ZIP archive, at most `most` bytes of it; `None` when the
/// archive has no such entry.
fn unpack(
    archive: &mut zip::ZipArchive<std::io::Cursor<&[u8]>>,
    name: &'static str,
    most: u64,
) -> Result<Option<Vec<u8>>, ImportError> {
    let Ok(mut entry) = archive.by_name(name) else {
        return Ok(None);
    };
    let mut json = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(&mut entry, most + 1), &mut json)
        .map_err(|e| ImportError::NotAnArchive(e.to_string()))?;
    if json.len() as u64 > most {
        return Err(ImportError::UnpackedTooLarge {
            entry: name,
            most_mib: most / (1024 * 1024),
        });
    }
    Ok(Some(json))
}

/// The name of the file in an archive that holds its conversations: Portal's, ChatGPT's and
/// Claude's alike.
pub const CONVERSATIONS_JSON: &str = "conversations.json";

/// The name of the file in a Portal archive that holds its owner's projects.
pub const PROJECTS_JSON: &str = "projects.json";

/// Reads an export of any kind Portal knows, refusing it whole when any conversation in it
/// cannot be made.
pub fn read(json: &str) -> Result<Import, ImportError> {
    let value: serde_json::Value =
        serde_json::from_str(json).map_err(|e| ImportError::NotJson {
            line: e.line(),
            column: e.column(),
            message: match e.classify() {
                serde_json::error::Category::Eof => "it ends before its JSON does",
                serde_json::error::Category::Syntax => "a character there is out of place",
                serde_json::error::Category::Data | serde_json::error::Category::Io => {
                    "it cannot be read there"
                }
            },
        })?;
    let source = source_of(&value)?;
    let conversations = match source {
        Source::Portal => portal::read(value)?,
        Source::ChatGpt => chatgpt::read(value)?,
        Source::Claude => claude::read(value)?,
    };
    if conversations.is_empty() {
        return Err(ImportError::Empty);
    }
    if conversations.len() > MOST_CONVERSATIONS {
        return Err(ImportError::TooMany {
            found: conversations.len(),
        });
    }
    for (i, conversation) in conversations.iter().enumerate() {
        portal_core::validate::validate(&conversation.transcript).map_err(|error| {
            ImportError::Transcript {
                position: i + 1,
                error,
            }
        })?;
    }
    Ok(Import {
        source,
        conversations,
        projects: Vec::new(),
    })
}

/// Tells an export's kind by the shape of its first conversation.
/// Reads each conversation of a `source` export (a list of them, or one alone) with
/// `conversation`, refusing the whole export at the first that cannot be read, naming its
/// position.
fn each_conversation(
    value: serde_json::Value,
    source: Source,
    conversation: impl Fn(serde_json::Value) -> Result<Imported, String>,
) -> Result<Vec<Imported>, ImportError> {
    let items = match value {
        serde_json::Value::Array(items) => items,
        one => vec![one],
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            conversation(item).map_err(|message| ImportError::Conversation {
                position: i + 1,
                source_name: source.name(),
                message,
            })
        })
        .collect()
}

fn source_of(value: &serde_json::Value) -> Result<Source, ImportError> {
    let first = match value {
        serde_json::Value::Array(items) => items.first().ok_or(ImportError::Empty)?,
        serde_json::Value::Object(_) => value,
        _ => {
            return Err(ImportError::UnknownShape(
                "it is neither a conversation nor a list of them".into(),
            ));
        }
    };
    let has = |field: &str| first.get(field).is_some();
    if has("portal") || (has("version") && has("turns")) {
        Ok(Source::Portal)
    } else if has("mapping") {
        Ok(Source::ChatGpt)
    } else if has("chat_messages") {
        Ok(Source::Claude)
    } else {
        Err(ImportError::UnknownShape(
            "its conversations have no `turns`, `mapping` or `chat_messages`".into(),
        ))
    }
}

/// A title as the list shows it: a clean name ([`one_line_name`]) of at most 200 characters (the
/// page's limit).
pub(crate) fn clean_title(text: &str) -> String {
    const TITLE_LIMIT: usize = 200;
    one_line_name(text).chars().take(TITLE_LIMIT).collect()
}

/// `text` without NUL, which PostgreSQL's text refuses.
pub(crate) fn clean_text(text: &str) -> String {
    text.replace('\0', "")
}
