//! The one error type of the control service. Messages name fields, kinds,
//! counts and positions — never a value or a token.

use crate::tokens::Permission;

/// What went wrong; each variant maps to one HTTP status (see `http::errors`).
#[derive(Clone, Debug, thiserror::Error)]
pub enum ControlError {
    /// The request does not parse or breaks a limit (field and reason).
    #[error("bad request: {0}")]
    BadRequest(String),
    /// No bearer token, or one the service does not know.
    #[error("unknown or missing token")]
    Unauthorized,
    /// The token lacks a permission.
    #[error("the token lacks the `{}` permission", .0.as_str())]
    Forbidden(Permission),
    /// The key is disabled (everything but forget refuses).
    #[error("the key is disabled")]
    KeyDisabled,
    /// The token's key was deleted: every value of its vault is gone, and
    /// the token never works again.
    #[error("the key was deleted")]
    KeyDeleted,
    /// A named thing (key, token name) does not exist.
    #[error("{0} not found")]
    NotFound(String),
    /// A name is taken, or a state forbids the change.
    #[error("conflict: {0}")]
    Conflict(String),
    /// Creating entries would pass the key's value limit.
    #[error("the vault is full: {values} values of a limit of {limit}")]
    VaultFull { values: u64, limit: u64 },
    /// The store failed; the transaction was rolled back.
    #[error("store unavailable: {0}")]
    Store(String),
    /// Key material could not be read, unwrapped or generated.
    #[error("key material: {0}")]
    Crypto(String),
    /// A local file could not be read or written (path and reason).
    #[error("{0}")]
    Io(String),
    /// The CLI refuses to go on (the reason names the option to pass);
    /// exit status 2.
    #[error("{0}")]
    Refused(String),
    /// A start-up option is invalid (option, field and reason).
    #[error("{0}")]
    Config(String),
}

impl From<rusqlite::Error> for ControlError {
    fn from(err: rusqlite::Error) -> Self {
        // SQLite messages name tables, columns and constraints; the service
        // never binds a value in clear text, so they cannot quote one.
        ControlError::Store(err.to_string())
    }
}

impl From<postgres::Error> for ControlError {
    fn from(err: postgres::Error) -> Self {
        // Severity, SQLSTATE and message only: a server's DETAIL line can
        // quote a row, and the service keeps rows out of its messages.
        match err.as_db_error() {
            Some(db) => ControlError::Store(format!(
                "{} {}: {}",
                db.severity(),
                db.code().code(),
                db.message()
            )),
            // Connection, I/O and protocol errors name no row or setting
            // (the I/O cause says why: refused, timed out, …).
            None => match std::error::Error::source(&err) {
                Some(cause) => ControlError::Store(format!("{err}: {cause}")),
                None => ControlError::Store(err.to_string()),
            },
        }
    }
}

/// Result alias of the crate.
pub type Result<T, E = ControlError> = std::result::Result<T, E>;
