//! JSON bodies parsed with errors that never quote the input (serde_json's
//! own messages may quote a string it did not expect).

use crate::error::ControlError;
use serde::de::DeserializeOwned;

/// Parses a JSON body; the error names line, column and class only.
pub fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ControlError> {
    serde_json::from_slice(bytes)
        .map_err(|err| ControlError::BadRequest(format!("body: {}", describe(&err))))
}

/// A serde_json error by its class and position (`Data error at line 1
/// column 24`), never its message: that may quote the input.
pub fn describe(err: &serde_json::Error) -> String {
    format!(
        "{:?} error at line {} column {}",
        err.classify(),
        err.line(),
        err.column()
    )
}
