//! [`Location`]: where a server keeps its conversations, as `--database` or `--data` names it.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

/// A database: a SQLite file in a data folder (the default), or a PostgreSQL server.
#[derive(Clone, PartialEq, Eq)]
pub enum Location {
    /// The data folder holding `portal.sqlite3`.
    Sqlite(PathBuf),
    /// A PostgreSQL connection URL, `postgres://USER:PASSWORD@HOST:PORT/DATABASE`.
    Postgres(String),
}

/// Why a `--database` value names no database.
#[derive(Debug, thiserror::Error)]
#[error(
    "`{given}` names no database; write sqlite://PATH for a SQLite data folder, or postgres://USER:PASSWORD@HOST:PORT/DATABASE for PostgreSQL"
)]
pub struct LocationError {
    given: String,
}

impl FromStr for Location {
    type Err = LocationError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if let Some(path) = text.strip_prefix("sqlite://")
            && !path.is_empty()
        {
            return Ok(Location::Sqlite(PathBuf::from(path)));
        }
        let postgres = ["postgres://", "postgresql://"]
            .iter()
            .any(|scheme| text.starts_with(scheme) && text.len() > scheme.len());
        if postgres {
            return Ok(Location::Postgres(text.to_string()));
        }
        Err(LocationError {
            given: redacted(text),
        })
    }
}

/// Shown without the password, so it can go in logs and messages.
impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Sqlite(dir) => write!(f, "sqlite://{}", dir.display()),
            Location::Postgres(url) => f.write_str(&redacted(url)),
        }
    }
}

impl fmt::Debug for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// `url` with the password of its user information left out.
pub(super) fn redacted(url: &str) -> String {
    let Some(scheme_end) = url.find("://").map(|i| i + 3) else {
        return url.to_string();
    };
    let authority_end = url[scheme_end..]
        .find('/')
        .map_or(url.len(), |i| scheme_end + i);
    let Some(at) = url[scheme_end..authority_end]
        .rfind('@')
        .map(|i| scheme_end + i)
    else {
        return url.to_string();
    };
    match url[scheme_end..at].split_once(':') {
        Some((user, _)) => format!("{}{user}:…{}", &url[..scheme_end], &url[at..]),
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(given: &str, expected: Option<&str>) {
        let parsed = given.parse::<Location>().ok().map(|l| format!("{l:?}"));
        assert_eq!(parsed.as_deref(), expected, "{given}");
    }

    #[test]
    fn names_a_database_and_never_shows_its_password() {
        check("sqlite://./portal-data", Some("sqlite://./portal-data"));
        check("sqlite:///var/lib/portal", Some("sqlite:///var/lib/portal"));
        check(
            "postgres://portal:s3cret@db:5432/portal",
            Some("postgres://portal:…@db:5432/portal"),
        );
        check(
            "postgresql://portal@db/portal?sslmode=disable",
            Some("postgresql://portal@db/portal?sslmode=disable"),
        );
        check("postgres://u:p@ss@db/x", Some("postgres://u:…@db/x"));
        check("sqlite://", None);
        check("postgres://", None);
        check("mysql://db/x", None);
        check("./portal-data", None);
    }

    #[test]
    fn a_refused_value_hides_its_password_too() {
        let error = "mysql://root:hunter2@db/x".parse::<Location>().unwrap_err();
        assert!(!error.to_string().contains("hunter2"), "{error}");
    }
}
