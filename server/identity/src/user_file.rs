//! Writing users into the configuration directory, for `portal user add` and `portal user
//! passwd`: only the password's argon2id hash is written, and `passwd` keeps the rest of the
//! user's file (its comments included) as it was.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use portal_core::skills::is_slug;
use thiserror::Error;
use toml_edit::{DocumentMut, value};

use super::password::{self, PasswordDigest, PasswordError};

/// Adds user `user` to organisation `organisation` with a display `name` and `password`,
/// creating the organisation's folder (named after its id) when it is new. Returns the user's
/// file.
pub fn add_user(
    config: &Path,
    organisation: &str,
    user: &str,
    name: &str,
    password: &str,
) -> Result<PathBuf, UserFileError> {
    check_id(organisation)?;
    check_id(user)?;
    let organisation_dir = config.join("organisations").join(organisation);
    let file = organisation_dir.join("users").join(user).join("user.toml");
    if file.exists() {
        return Err(UserFileError::Exists { path: file });
    }
    let digest = hashed(password)?;
    let folder = file.parent().expect("a user's file has a folder");
    fs::create_dir_all(folder).map_err(|source| write_error(folder, source))?;
    let organisation_file = organisation_dir.join("organisation.toml");
    if !organisation_file.exists() {
        let mut document = DocumentMut::new();
        document["name"] = value(organisation);
        write(&organisation_file, &document.to_string())?;
    }
    let mut document = DocumentMut::new();
    document["name"] = value(if name.trim().is_empty() {
        user
    } else {
        name.trim()
    });
    document["password_argon2id"] = value(digest.as_str());
    write(&file, &document.to_string())?;
    Ok(file)
}

/// Sets the password of an existing user, keeping the rest of their file. Returns the file.
pub fn set_password(
    config: &Path,
    organisation: &str,
    user: &str,
    password: &str,
) -> Result<PathBuf, UserFileError> {
    check_id(organisation)?;
    check_id(user)?;
    let file = config
        .join("organisations")
        .join(organisation)
        .join("users")
        .join(user)
        .join("user.toml");
    let text = match fs::read_to_string(&file) {
        Ok(text) => text,
        Err(error) if error.kind() == io::ErrorKind::NotFound => {
            return Err(UserFileError::NoSuchUser { path: file });
        }
        Err(source) => return Err(UserFileError::Read { path: file, source }),
    };
    let mut document: DocumentMut = text.parse().map_err(|source| UserFileError::Toml {
        path: file.clone(),
        source,
    })?;
    document["password_argon2id"] = value(hashed(password)?.as_str());
    write(&file, &document.to_string())?;
    Ok(file)
}

/// Why a user could not be written.
#[derive(Debug, Error)]
pub enum UserFileError {
    #[error(
        "`{id}` is not an id; use lowercase letters, digits and hyphens, starting with a letter or digit"
    )]
    BadId { id: String },
    #[error("`{}` exists already; change the password with `portal user passwd`", path.display())]
    Exists { path: PathBuf },
    #[error("there is no user file `{}`; add the user with `portal user add`", path.display())]
    NoSuchUser { path: PathBuf },
    #[error("cannot read `{}`: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("`{}` is not valid TOML: {source}; fix the file first", path.display())]
    Toml {
        path: PathBuf,
        #[source]
        source: toml_edit::TomlError,
    },
    #[error("cannot write `{}`: {source}; check that the folder is writable", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error(transparent)]
    Password(#[from] PasswordError),
}

fn check_id(id: &str) -> Result<(), UserFileError> {
    if is_slug(id) {
        Ok(())
    } else {
        Err(UserFileError::BadId { id: id.to_string() })
    }
}

fn hashed(password: &str) -> Result<PasswordDigest, UserFileError> {
    password::check_new(password)?;
    Ok(PasswordDigest::hash(password)?)
}

/// Writes `text` to a new file beside `path` and renames it over `path`, so a reader never sees
/// half a file.
fn write(path: &Path, text: &str) -> Result<(), UserFileError> {
    let partial = path.with_extension("toml.partial");
    fs::write(&partial, text)
        .and_then(|()| fs::rename(&partial, path))
        .map_err(|source| write_error(path, source))
}

fn write_error(path: &Path, source: io::Error) -> UserFileError {
    UserFileError::Write {
        path: path.to_path_buf(),
        source,
    }
}
