//! What `latet serve --db` names: a SQLite file (the embedded default) or a
//! PostgreSQL URL. A value that starts like a URL of another scheme is an
//! error, never a file of that name. A URL may hold a password: it is never
//! printed (the `Debug` and `Display` forms name the host and database only).

use crate::error::{ControlError, Result};
use std::ffi::OsStr;
use std::fmt;
use std::path::PathBuf;

/// Where the store lives.
#[derive(Clone)]
pub enum Database {
    /// An SQLite file (created when missing).
    Sqlite(PathBuf),
    /// A PostgreSQL database, shared by every replica.
    Postgres(PostgresUrl),
}

/// A `postgres://` or `postgresql://` URL, parsed; never printed whole.
#[derive(Clone)]
pub struct PostgresUrl {
    config: Box<postgres::Config>,
}

impl PostgresUrl {
    /// The client configuration (holds the password, if any).
    pub fn config(&self) -> &postgres::Config {
        &self.config
    }

    /// Host and database, for log lines: no user, no password.
    pub fn describe(&self) -> String {
        let host = self
            .config
            .get_hosts()
            .first()
            .map(|host| match host {
                postgres::config::Host::Tcp(name) => name.clone(),
                #[cfg(unix)]
                postgres::config::Host::Unix(path) => path.display().to_string(),
            })
            .unwrap_or_else(|| "localhost".into());
        let dbname = self.config.get_dbname().unwrap_or("(default)");
        format!("PostgreSQL database {dbname} on {host}")
    }
}

impl fmt::Debug for PostgresUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PostgresUrl({})", self.describe())
    }
}

impl fmt::Debug for Database {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for Database {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Database::Sqlite(path) => write!(f, "{}", path.display()),
            Database::Postgres(url) => f.write_str(&url.describe()),
        }
    }
}

/// The scheme of a value that starts like a URL (`name:` with a name of two
/// or more letters, digits, `+`, `-` or `.`, starting with a letter).
fn scheme_of(text: &str) -> Option<&str> {
    let (scheme, _) = text.split_once(':')?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    let shaped = scheme.len() >= 2
        && first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    shaped.then_some(scheme)
}

impl Database {
    /// Parses `--db`. Errors name the option and the scheme, never the
    /// rest of the value (a URL may hold a password).
    pub fn parse(raw: &OsStr) -> Result<Self> {
        let Some(text) = raw.to_str() else {
            // Not UTF-8: no URL, a file path.
            return Ok(Database::Sqlite(PathBuf::from(raw)));
        };
        let Some(scheme) = scheme_of(text) else {
            return Ok(Database::Sqlite(PathBuf::from(raw)));
        };
        match scheme.to_ascii_lowercase().as_str() {
            "postgres" | "postgresql" => {
                let config: postgres::Config = text.parse().map_err(|_| {
                    ControlError::Config(
                        "--db: not a valid PostgreSQL URL (postgres://USER@HOST:PORT/DATABASE)"
                            .into(),
                    )
                })?;
                Ok(Database::Postgres(PostgresUrl {
                    config: Box::new(config),
                }))
            }
            _ => Err(ControlError::Config(format!(
                "--db: unknown scheme `{scheme}`: give an SQLite file path or a \
                 postgres:// URL (a file whose name has a colon: write it as ./NAME)"
            ))),
        }
    }

    /// The SQLite file, if the store is one.
    pub fn sqlite_file(&self) -> Option<&std::path::Path> {
        match self {
            Database::Sqlite(path) => Some(path),
            Database::Postgres(_) => None,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn db_values_table() {
        let cases: &[(&str, &str)] = &[
            (".latet/latet.db", "sqlite"),
            ("/var/lib/latet/latet.db", "sqlite"),
            ("latet.db", "sqlite"),
            ("./postgres:x", "sqlite"),
            ("c:latet.db", "sqlite"),
            ("postgres://latet@db.internal:5432/latet", "postgres"),
            ("postgresql://latet@db.internal/latet", "postgres"),
            ("postgres:///latet?host=/run/postgresql", "postgres"),
            ("mysql://root:hunter2@db/latet", "error"),
            ("sqlite://latet.db", "error"),
            ("postgres:", "postgres-bad"),
            ("redis:6379", "error"),
        ];
        for (value, expected) in cases {
            let got = match Database::parse(OsStr::new(value)) {
                Ok(Database::Sqlite(_)) => "sqlite".to_string(),
                Ok(Database::Postgres(_)) => "postgres".to_string(),
                Err(err) => {
                    let text = err.to_string();
                    assert!(!text.contains("hunter2"), "{value}: {text}");
                    if text.contains("unknown scheme") {
                        "error".into()
                    } else {
                        "postgres-bad".into()
                    }
                }
            };
            assert_eq!(&got, expected, "--db {value}");
        }
    }

    #[test]
    fn a_url_never_prints_its_password() {
        let db = Database::parse(OsStr::new(
            "postgres://latet:hunter2@db.internal:5432/vaults",
        ))
        .unwrap();
        for shown in [format!("{db}"), format!("{db:?}")] {
            assert!(!shown.contains("hunter2"), "{shown}");
            assert!(shown.contains("vaults") && shown.contains("db.internal"));
        }
        let bad = Database::parse(OsStr::new("postgres://latet:hunter2@db:notaport/x"));
        assert!(!bad.err().unwrap().to_string().contains("hunter2"));
    }
}
