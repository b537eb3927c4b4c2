//! The configuration directory's shared reading: the ids a folder lists and its TOML files, for
//! identity, single sign-on providers and MCP servers alike.

use std::fs;
use std::path::{Path, PathBuf};

use portal_core::skills::is_slug;
use serde::de::DeserializeOwned;

use crate::ConfigError;

/// What a configuration folder lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    /// Sub-folders, named by id.
    Folder,
    /// `<id>.toml` files.
    Toml,
}

/// The entries of `dir`, by id in id order. Hidden names are skipped; any other name that is not
/// an id is an error.
pub fn entries(dir: &Path, kind: Entry) -> Result<Vec<(String, PathBuf)>, ConfigError> {
    let read = |source| ConfigError::Read {
        path: dir.to_path_buf(),
        source,
    };
    let mut found = Vec::new();
    for entry in fs::read_dir(dir).map_err(read)? {
        let path = entry.map_err(read)?.path();
        let Some(name) = path
            .file_name()
            .and_then(|n| n.to_str())
            .map(str::to_string)
        else {
            continue;
        };
        if name.starts_with('.') {
            continue;
        }
        let id = match kind {
            Entry::Folder if path.is_dir() => name,
            Entry::Toml if path.is_file() => match name.strip_suffix(".toml") {
                Some(stem) => stem.to_string(),
                None => continue,
            },
            _ => continue,
        };
        if !is_slug(&id) {
            return Err(ConfigError::BadId { path, name: id });
        }
        found.push((id, path));
    }
    found.sort();
    Ok(found)
}

/// The TOML file at `path`, read as `T`.
pub fn read_toml<T: DeserializeOwned>(path: &Path) -> Result<T, ConfigError> {
    let text = fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    toml::from_str(&text).map_err(|source| ConfigError::Toml {
        path: path.to_path_buf(),
        source,
    })
}

/// The `<id>.toml` files of `dir`, by id in id order.
pub fn toml_files(dir: &Path) -> Result<Vec<(String, PathBuf)>, ConfigError> {
    entries(dir, Entry::Toml)
}

/// The sub-folders of `dir`, by id in id order (hidden ones skipped; other names must be ids).
pub fn folders(dir: &Path) -> Result<Vec<(String, PathBuf)>, ConfigError> {
    entries(dir, Entry::Folder)
}
