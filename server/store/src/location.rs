//! [`Location`]: where a server keeps its conversations, as `--database` or `--data` names it,
//! and [`Location::with_password`]: the PostgreSQL password from where `portal serve` reads it.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};

/// A database: a SQLite file in a data folder (the default), or a PostgreSQL server.
#[derive(Clone, PartialEq, Eq)]
pub enum Location {
    /// The data folder holding `portal.sqlite3`.
    Sqlite(PathBuf),
    /// A PostgreSQL connection URL, `postgres://USER@HOST:PORT/DATABASE?sslmode=…`; its password,
    /// when [`Location::with_password`] put it there.
    Postgres(String),
}

/// Why a `--database` value names no database.
#[derive(Debug, thiserror::Error)]
#[error(
    "`{given}` names no database; write sqlite://PATH for a SQLite data folder, or postgres://USER@HOST:PORT/DATABASE for PostgreSQL (its password in PORTAL_DATABASE_PASSWORD)"
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

/// The environment variable `portal serve` reads the PostgreSQL password from.
pub const PASSWORD_VARIABLE: &str = "PORTAL_DATABASE_PASSWORD";

/// Where the PostgreSQL password may come from besides the `--database` URL.
#[derive(Clone, Default)]
pub struct PasswordSources {
    /// `--database-password-file PATH`: the file's text, less its trailing newline.
    pub file: Option<PathBuf>,
    /// The value of [`PASSWORD_VARIABLE`]; an empty one counts as not set.
    pub environment: Option<String>,
}

/// Shown without the password.
impl fmt::Debug for PasswordSources {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PasswordSources")
            .field("file", &self.file)
            .field("environment", &self.environment.as_ref().map(|_| "…"))
            .finish()
    }
}

/// Why the database password could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum PasswordError {
    #[error(
        "the database password is given twice, {first} and {second}; give it one way: PORTAL_DATABASE_PASSWORD or --database-password-file, and a --database URL without one"
    )]
    Twice {
        first: &'static str,
        second: &'static str,
    },
    #[error(
        "cannot read the database password file {}: {source}; check that it exists and that the user portal runs as may read it",
        .path.display()
    )]
    Unreadable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "the database password file {} is empty; write the password in it (a newline at its end is left out)",
        .path.display()
    )]
    Empty { path: PathBuf },
    #[error(
        "--database-password-file is for a PostgreSQL --database, and a SQLite data folder takes no password; leave the flag out"
    )]
    NotPostgres,
    #[error(
        "the --database URL {url} names no user, so a password cannot go with it; write postgres://USER@HOST:PORT/DATABASE"
    )]
    NoUser { url: String },
}

impl Location {
    /// Whether a PostgreSQL URL holds a password (`USER:PASSWORD@`).
    pub fn has_password(&self) -> bool {
        match self {
            Location::Sqlite(_) => false,
            Location::Postgres(url) => user_info(url).is_some_and(|(_, info)| info.contains(':')),
        }
    }

    /// The location with the PostgreSQL password taken from one of `sources`, and the warnings
    /// `portal serve` writes to standard error: a password in the URL, which `ps` shows to every
    /// user of the machine, or a password file that users other than its owner may read.
    ///
    /// **Decision:** the password is given one way: in `PORTAL_DATABASE_PASSWORD`, in the file,
    /// or in the URL; two at once are refused rather than one silently preferred. No password at
    /// all is fine (a server that trusts the replicas' addresses or certificates). A SQLite
    /// location ignores the variable and refuses the file.
    pub fn with_password(
        self,
        sources: &PasswordSources,
    ) -> Result<(Location, Vec<String>), PasswordError> {
        let url = match self {
            Location::Sqlite(_) if sources.file.is_some() => {
                return Err(PasswordError::NotPostgres);
            }
            Location::Sqlite(_) => return Ok((self, Vec::new())),
            Location::Postgres(ref url) => url,
        };
        let environment = sources.environment.as_deref().filter(|v| !v.is_empty());
        let given: Vec<&'static str> = [
            self.has_password().then_some("in the --database URL"),
            environment.map(|_| "in PORTAL_DATABASE_PASSWORD"),
            sources.file.as_ref().map(|_| "in --database-password-file"),
        ]
        .into_iter()
        .flatten()
        .collect();
        if let [first, second, ..] = given[..] {
            return Err(PasswordError::Twice { first, second });
        }
        let mut warnings = Vec::new();
        let password = match (&sources.file, environment) {
            (Some(path), _) => {
                let (password, warning) = read_password_file(path)?;
                warnings.extend(warning);
                password
            }
            (None, Some(password)) => password.to_string(),
            (None, None) => {
                if self.has_password() {
                    warnings.push(
                        "the --database URL holds the database password, which every user of this machine can read (`ps`); give it in PORTAL_DATABASE_PASSWORD or in a file named by --database-password-file instead".to_string(),
                    );
                }
                return Ok((self, warnings));
            }
        };
        let Some((at, _)) = user_info(url) else {
            return Err(PasswordError::NoUser { url: redacted(url) });
        };
        let encoded = utf8_percent_encode(&password, NON_ALPHANUMERIC);
        let url = format!("{}:{encoded}{}", &url[..at], &url[at..]);
        Ok((Location::Postgres(url), warnings))
    }
}

/// Reads a password file: its text less the newline at its end, and a warning when users other
/// than its owner may read it (any permission for its group or others, as ssh and libpq's
/// `.pgpass` judge).
fn read_password_file(path: &Path) -> Result<(String, Option<String>), PasswordError> {
    let unreadable = |source| PasswordError::Unreadable {
        path: path.to_path_buf(),
        source,
    };
    let text = std::fs::read_to_string(path).map_err(unreadable)?;
    let password = text.trim_end_matches(['\n', '\r']);
    if password.is_empty() {
        return Err(PasswordError::Empty {
            path: path.to_path_buf(),
        });
    }
    let mut warning = None;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path)
            .map_err(unreadable)?
            .permissions()
            .mode()
            & 0o777;
        if mode & 0o077 != 0 {
            warning = Some(format!(
                "the database password file {} may be read by users other than its owner (mode {mode:04o}); make it its owner's alone: chmod 600 {}",
                path.display(),
                path.display()
            ));
        }
    }
    Ok((password.to_string(), warning))
}

/// Where a URL's user information ends (its `@`) and the text before it, when it has any.
fn user_info(url: &str) -> Option<(usize, &str)> {
    let scheme_end = url.find("://")? + 3;
    let authority_end = url[scheme_end..]
        .find(['/', '?'])
        .map_or(url.len(), |i| scheme_end + i);
    let at = scheme_end + url[scheme_end..authority_end].rfind('@')?;
    Some((at, &url[scheme_end..at]))
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
pub fn redacted(url: &str) -> String {
    let Some((at, info)) = user_info(url) else {
        return url.to_string();
    };
    match info.split_once(':') {
        Some((user, _)) => format!("{}{user}:…{}", &url[..at - info.len()], &url[at..]),
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

    fn sources(file: Option<&Path>, environment: Option<&str>) -> PasswordSources {
        PasswordSources {
            file: file.map(Path::to_path_buf),
            environment: environment.map(str::to_string),
        }
    }

    fn postgres(url: &str) -> Location {
        url.parse().expect("a PostgreSQL URL")
    }

    fn url_of(location: &Location) -> &str {
        match location {
            Location::Postgres(url) => url,
            Location::Sqlite(_) => panic!("not PostgreSQL"),
        }
    }

    fn password_file(dir: &Path, text: &str, mode: u32) -> PathBuf {
        let path = dir.join(format!("password-{mode:o}"));
        std::fs::write(&path, text).expect("written");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).expect("mode");
        }
        path
    }

    #[test]
    fn the_password_comes_from_the_variable_or_the_file_into_the_url_hidden_when_shown() {
        let (location, warnings) = postgres("postgres://portal@db:5432/portal?sslmode=require")
            .with_password(&sources(None, Some("p@ss:w/rd ?&%")))
            .expect("taken");
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(
            url_of(&location),
            "postgres://portal:p%40ss%3Aw%2Frd%20%3F%26%25@db:5432/portal?sslmode=require"
        );
        assert!(location.has_password());
        assert_eq!(
            location.to_string(),
            "postgres://portal:…@db:5432/portal?sslmode=require"
        );

        let dir = tempfile::tempdir().expect("a folder");
        let file = password_file(dir.path(), "from the file\r\n", 0o600);
        let (location, warnings) = postgres("postgres://portal@db/portal")
            .with_password(&sources(Some(&file), None))
            .expect("taken");
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(
            url_of(&location),
            "postgres://portal:from%20the%20file@db/portal",
            "the newline at its end is left out"
        );

        let (location, warnings) = postgres("postgres://portal@db/portal")
            .with_password(&sources(None, Some("")))
            .expect("an empty variable is no password");
        assert_eq!(url_of(&location), "postgres://portal@db/portal");
        assert!(warnings.is_empty());
    }

    #[test]
    fn a_password_given_two_ways_is_refused_naming_both() {
        let dir = tempfile::tempdir().expect("a folder");
        let file = password_file(dir.path(), "x\n", 0o600);
        for (url, file, environment, first, second) in [
            (
                "postgres://portal:pw@db/p",
                None,
                Some("env"),
                "in the --database URL",
                "in PORTAL_DATABASE_PASSWORD",
            ),
            (
                "postgres://portal:pw@db/p",
                Some(&*file),
                None,
                "in the --database URL",
                "in --database-password-file",
            ),
            (
                "postgres://portal@db/p",
                Some(&*file),
                Some("env"),
                "in PORTAL_DATABASE_PASSWORD",
                "in --database-password-file",
            ),
        ] {
            let refused = postgres(url)
                .with_password(&sources(file, environment))
                .expect_err("two passwords");
            assert_eq!(
                refused.to_string(),
                format!(
                    "the database password is given twice, {first} and {second}; give it one way: PORTAL_DATABASE_PASSWORD or --database-password-file, and a --database URL without one"
                )
            );
            assert!(!refused.to_string().contains("pw"));
        }
    }

    #[test]
    fn a_password_in_the_url_is_used_with_a_warning_naming_the_alternatives() {
        let (location, warnings) = postgres("postgres://portal:s3cret@db/portal")
            .with_password(&PasswordSources::default())
            .expect("taken");
        assert_eq!(url_of(&location), "postgres://portal:s3cret@db/portal");
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("`ps`"), "{}", warnings[0]);
        assert!(
            warnings[0].contains("PORTAL_DATABASE_PASSWORD"),
            "{}",
            warnings[0]
        );
        assert!(
            warnings[0].contains("--database-password-file"),
            "{}",
            warnings[0]
        );
        assert!(!warnings[0].contains("s3cret"));
    }

    #[cfg(unix)]
    #[test]
    fn a_password_file_others_may_read_is_used_with_a_warning_and_a_bad_one_is_refused() {
        let dir = tempfile::tempdir().expect("a folder");
        for mode in [0o640, 0o644, 0o604] {
            let file = password_file(dir.path(), "pw\n", mode);
            let (_, warnings) = postgres("postgres://portal@db/portal")
                .with_password(&sources(Some(&file), None))
                .expect("taken");
            assert_eq!(
                warnings,
                vec![format!(
                    "the database password file {} may be read by users other than its owner (mode {mode:04o}); make it its owner's alone: chmod 600 {}",
                    file.display(),
                    file.display()
                )]
            );
        }
        for mode in [0o600, 0o400] {
            let file = password_file(dir.path(), "pw", mode);
            let (_, warnings) = postgres("postgres://portal@db/portal")
                .with_password(&sources(Some(&file), None))
                .expect("taken");
            assert!(warnings.is_empty(), "{mode:o}: {warnings:?}");
        }

        let empty = password_file(dir.path(), "\n", 0o600);
        let refused = postgres("postgres://portal@db/portal")
            .with_password(&sources(Some(&empty), None))
            .expect_err("empty");
        assert!(matches!(refused, PasswordError::Empty { .. }), "{refused}");
        let missing = dir.path().join("missing");
        let refused = postgres("postgres://portal@db/portal")
            .with_password(&sources(Some(&missing), None))
            .expect_err("missing");
        assert!(
            refused.to_string().starts_with(&format!(
                "cannot read the database password file {}",
                missing.display()
            )),
            "{refused}"
        );
        let refused = postgres("postgres://db/portal")
            .with_password(&sources(None, Some("pw")))
            .expect_err("no user");
        assert!(refused.to_string().contains("names no user"), "{refused}");
        let refused = Location::Sqlite(PathBuf::from("data"))
            .with_password(&sources(Some(&empty), None))
            .expect_err("SQLite takes no password");
        assert!(matches!(refused, PasswordError::NotPostgres), "{refused}");
        let (sqlite, warnings) = Location::Sqlite(PathBuf::from("data"))
            .with_password(&sources(None, Some("pw")))
            .expect("the variable is ignored");
        assert_eq!(sqlite, Location::Sqlite(PathBuf::from("data")));
        assert!(warnings.is_empty());
    }
}
