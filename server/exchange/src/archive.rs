//! All of a person's work as one ZIP archive: their projects (`projects.json`), every
//! conversation as the JSON that `POST /api/conversations/import` reads back
//! (`conversations.json`, one list, each naming its project) and as Markdown to read
//! (`markdown/`), and the files those conversations used (`files/<id>/<name>`), with a
//! `README.md` saying so. The archive pulls what it holds from an [`ArchiveSource`] one
//! conversation and one file at a time, so it never holds more than one of each in memory.

use std::collections::BTreeSet;
use std::io::{Seek, Write};

use portal_core::attachment::Attachment;
use thiserror::Error;
use zip::ZipWriter;
use zip::write::SimpleFileOptions;

use crate::import::{
    CONVERSATIONS_JSON, Exported, ExportedProject, PROJECTS_JSON, attachments_used,
};
use crate::markdown::markdown;

/// Where an archive's contents come from: the person's projects, conversations and files.
pub trait ArchiveSource {
    /// Why the source could not answer.
    type Error: std::error::Error + Send + Sync + 'static;

    /// The person's projects, in the order the archive lists them; asked for before any
    /// conversation, whose project is named by a project's name.
    fn projects(&mut self) -> Result<Vec<ExportedProject>, Self::Error>;

    /// The ids of the person's conversations, in the order the archive lists them.
    fn conversation_ids(&mut self) -> Result<Vec<String>, Self::Error>;

    /// One of the person's conversations, as exported; `None` when it is gone meanwhile.
    fn conversation(&mut self, id: &str) -> Result<Option<Exported>, Self::Error>;

    /// One of the person's files with its bytes; `None` when it is not theirs or is gone.
    fn file(&mut self, id: &str) -> Result<Option<(Attachment, Vec<u8>)>, Self::Error>;
}

/// What an archive holds, for the answer's headers and the tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Archived {
    pub projects: usize,
    pub conversations: usize,
    pub files: usize,
}

/// Why an archive could not be written.
#[derive(Debug, Error)]
pub enum ArchiveError<E: std::error::Error + 'static> {
    #[error("the archive could not be read from storage: {0}; try again in a moment")]
    Source(#[source] E),
    #[error("the archive could not be written: {0}; check the server's temporary folder has room")]
    Zip(#[from] zip::result::ZipError),
    #[error("the archive could not be written: {0}; check the server's temporary folder has room")]
    Io(#[from] std::io::Error),
    #[error("a conversation or project could not be written as JSON: {0}; try again")]
    Json(#[from] serde_json::Error),
}

/// Writes the archive of everything `source` holds into `out`, and answers `out` with what it
/// holds.
pub fn write<W: Write + Seek, S: ArchiveSource>(
    out: W,
    source: &mut S,
) -> Result<(W, Archived), ArchiveError<S::Error>> {
    let mut zip = ZipWriter::new(out);
    let options = SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .unix_permissions(0o644);
    let projects = source.projects().map_err(ArchiveError::Source)?;
    let ids = source.conversation_ids().map_err(ArchiveError::Source)?;

    zip.start_file("README.md", options)?;
    zip.write_all(README.as_bytes())?;

    zip.start_file(PROJECTS_JSON, options)?;
    serde_json::to_writer(&mut zip, &projects)?;
    zip.write_all(b"\n")?;

    // The JSON list first, each conversation loaded, written and let go; then the Markdown.
    zip.start_file(CONVERSATIONS_JSON, options)?;
    zip.write_all(b"[")?;
    let mut written = Vec::new();
    let mut files = BTreeSet::new();
    for id in &ids {
        let Some(exported) = source.conversation(id).map_err(ArchiveError::Source)? else {
            continue;
        };
        if !written.is_empty() {
            zip.write_all(b",\n")?;
        }
        serde_json::to_writer(&mut zip, &exported)?;
        files.extend(attachments_used(&exported.transcript));
        written.push(id);
    }
    zip.write_all(b"]\n")?;

    for (position, id) in written.iter().enumerate() {
        let Some(exported) = source.conversation(id).map_err(ArchiveError::Source)? else {
            continue;
        };
        let name = format!(
            "markdown/{:04}-{}.md",
            position + 1,
            safe_name(&exported.title, "conversation")
        );
        zip.start_file(name, options)?;
        zip.write_all(markdown(&exported.title, &exported.transcript).as_bytes())?;
    }

    let mut archived_files = 0;
    for id in &files {
        let Some((attachment, bytes)) = source.file(id).map_err(ArchiveError::Source)? else {
            continue;
        };
        let name = format!(
            "files/{}/{}",
            safe_name(attachment.id(), "file"),
            safe_name(attachment.filename(), "file")
        );
        zip.start_file(name, options)?;
        zip.write_all(&bytes)?;
        archived_files += 1;
    }

    let out = zip.finish()?;
    Ok((
        out,
        Archived {
            projects: projects.len(),
            conversations: written.len(),
            files: archived_files,
        },
    ))
}

/// The archive's own description, its first entry.
const README: &str = "# Your work in Portal\n\n\
- `conversations.json`: every conversation, with its title, its agent, the name of the project \
it is in, whether it is pinned, and its whole transcript. Import this archive in Portal (Export \
and import → Import) to bring them all back, in their projects.\n\
- `projects.json`: your projects, each with its name, its instructions, its default agent and \
when it was made. Importing the archive makes those you have no project of the same name for. \
Importing `conversations.json` alone puts each conversation in your project of its project's \
name, made without instructions when you have none.\n\
- `markdown/`: each conversation as Markdown, to read and keep.\n\
- `files/<id>/<name>`: the files your conversations used (uploads and tools' pictures), \
under the id the transcripts name them by.\n";

/// A name safe to use as one part of a path inside the archive, whoever extracts it: ASCII
/// letters, digits, dots, dashes and underscores, other runs of characters a dash, no leading
/// dot (so never `..`), at most 100 characters; `fallback` when nothing is left.
pub fn safe_name(name: &str, fallback: &str) -> String {
    let mut safe = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '.' | '_') || (c == '-' && !safe.ends_with('-'))
        {
            safe.push(c);
        } else if !safe.is_empty() && !safe.ends_with('-') {
            safe.push('-');
        }
    }
    let safe: String = safe
        .trim_start_matches(['.', '-'])
        .trim_end_matches('-')
        .chars()
        .take(100)
        .collect();
    if safe.is_empty() {
        fallback.to_string()
    } else {
        safe
    }
}
