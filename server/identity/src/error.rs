//! Why the identity configuration could not be read, or a request not authenticated.

use std::path::PathBuf;

use thiserror::Error;

/// A configuration directory that cannot be used. Each error names the file, and the field when
/// one is at fault, and says what to change.
#[derive(Debug, Error)]
pub enum ConfigError {
    #[error("cannot read `{}`: {source}; check that it exists and is readable", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("`{}` is not valid: {source}", path.display())]
    Toml {
        path: PathBuf,
        #[source]
        source: toml::de::Error,
    },
    #[error("`{}`, field `{field}`: {problem}", path.display())]
    Field {
        path: PathBuf,
        field: &'static str,
        problem: String,
    },
    #[error(
        "`{}`: `{name}` is not an id; name it with lowercase letters, digits and hyphens, starting with a letter or digit",
        path.display()
    )]
    BadId { path: PathBuf, name: String },
    #[error(
        "`{}` has no organisation; add a folder `organisations/<id>/` with an `organisation.toml`",
        path.display()
    )]
    NoOrganisation { path: PathBuf },
    #[error(
        "`{}` configures {count} organisations but no user; local mode has one organisation, so add users (`users/<id>/user.toml`) or keep one organisation",
        path.display()
    )]
    LocalModeNeedsOneOrganisation { path: PathBuf, count: usize },
    #[error(
        "`{}` and `{}` have the same token; give every user a token of their own",
        first.display(),
        second.display()
    )]
    SharedToken { first: PathBuf, second: PathBuf },
}

/// Why a request is not let in. All of them answer 401 Unauthorized.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AuthError {
    #[error(
        "sign in first: in the browser on the portal's page, or as an API client with `Authorization: Bearer <your token>`"
    )]
    Missing,
    #[error(
        "the Authorization header is not `Bearer <token>`; send `Authorization: Bearer <your token>`"
    )]
    Malformed,
    #[error("the token is not valid; check it, or ask your administrator for a new one")]
    Unknown,
}
