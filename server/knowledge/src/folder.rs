//! A collection kept from a folder on the server (docs/knowledge.md, "Folders"): the folder's
//! files are listed ([`scan`]) and compared with the documents the collection keeps ([`plan`]):
//! a new file is added, a changed one (another size or time changed) read again, and a removed
//! one's document deleted.

use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use portal_store::{DocumentSource, KnowledgeDocument};

/// A file found in a folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Where it is and its stamp, as the document read from it keeps them.
    pub source: DocumentSource,
    /// Its full path, to read it.
    pub full: PathBuf,
}

/// What a sync does.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Plan {
    /// The documents to delete: their files are gone or changed.
    pub remove: Vec<String>,
    /// The files to read and add: new or changed.
    pub add: Vec<Found>,
}

/// The most folders deep a scan goes. **Decision:** 16: deeper than any document tree people
/// keep, and a loop of folders (which a scan never follows: it skips links) could not go further.
pub const MOST_DEPTH: usize = 16;

/// The files of `folder` and its sub-folders, at most `most` of them, by path: regular files
/// only (links are skipped, so a scan never leaves the folder), hidden names skipped, at most
/// [`MOST_DEPTH`] folders deep. `true` when there were more than `most`.
pub fn scan(folder: &Path, most: usize) -> std::io::Result<(Vec<Found>, bool)> {
    let mut found = Vec::new();
    let mut folders = vec![(folder.to_path_buf(), String::new(), 0)];
    while let Some((dir, prefix, depth)) = folders.pop() {
        let mut entries: Vec<_> = std::fs::read_dir(&dir)?.collect::<Result<_, _>>()?;
        entries.sort_by_key(std::fs::DirEntry::file_name);
        for entry in entries {
            let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                continue;
            };
            if name.starts_with('.') {
                continue;
            }
            let path = format!("{prefix}{name}");
            let kind = entry.file_type()?;
            if kind.is_dir() && depth < MOST_DEPTH {
                folders.push((entry.path(), format!("{path}/"), depth + 1));
            } else if kind.is_file() {
                if found.len() == most {
                    return Ok((found, true));
                }
                let metadata = entry.metadata()?;
                let changed = metadata
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_nanos());
                found.push(Found {
                    source: DocumentSource {
                        path,
                        stamp: format!("{}:{changed}", metadata.len()),
                    },
                    full: entry.path(),
                });
            }
        }
    }
    found.sort_by(|a, b| a.source.path.cmp(&b.source.path));
    Ok((found, false))
}

/// What to do to make `kept` (a collection's documents) what `found` (its folder's files) holds.
/// A document kept without a source (uploaded by hand) is left alone.
pub fn plan(found: &[Found], kept: &[KnowledgeDocument]) -> Plan {
    let mut plan = Plan::default();
    for document in kept {
        let Some(source) = &document.source else {
            continue;
        };
        if !found.iter().any(|f| f.source == *source) {
            plan.remove.push(document.id.clone());
        }
    }
    for file in found {
        let same = kept.iter().any(|d| d.source.as_ref() == Some(&file.source));
        if !same {
            plan.add.push(file.clone());
        }
    }
    plan
}
