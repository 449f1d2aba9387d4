//! Errors of the JSON scanner: they name a byte offset and what was expected,
//! never the content.

use crate::error::CoreError;

/// What is wrong with a JSON document or string, and where (byte offset from
/// the start of the input the function was given).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum JsonError {
    /// The input is not UTF-8.
    #[error("not UTF-8 at byte {offset}")]
    NotUtf8 { offset: usize },
    /// The grammar is broken: `what` says what was expected or found.
    #[error("{what} at byte {offset}")]
    Syntax { offset: usize, what: &'static str },
    /// Containers nest deeper than the configured limit.
    #[error("nesting deeper than {limit} levels at byte {offset}")]
    TooDeep { offset: usize, limit: usize },
    /// A backslash escape that JSON does not define (or a bad `\u` code).
    #[error("invalid escape at byte {offset}")]
    BadEscape { offset: usize },
    /// A `\uD800`–`\uDFFF` escape that is not part of a surrogate pair.
    #[error("unpaired surrogate escape at byte {offset}")]
    LoneSurrogate { offset: usize },
    /// Two splice edits overlap or one lies outside the input.
    #[error("overlapping or out-of-range edit at byte {offset}")]
    BadEdit { offset: usize },
    /// The input is larger than the scanner's 32-bit offsets can address.
    #[error("document of {len} bytes is too large")]
    TooLarge { len: usize },
}

impl JsonError {
    /// The same error with its offset moved by `by` bytes (for an error found
    /// in a slice that starts at `by` in a larger input).
    pub fn shifted(self, by: usize) -> Self {
        match self {
            JsonError::NotUtf8 { offset } => JsonError::NotUtf8 {
                offset: offset + by,
            },
            JsonError::Syntax { offset, what } => JsonError::Syntax {
                offset: offset + by,
                what,
            },
            JsonError::TooDeep { offset, limit } => JsonError::TooDeep {
                offset: offset + by,
                limit,
            },
            JsonError::BadEscape { offset } => JsonError::BadEscape {
                offset: offset + by,
            },
            JsonError::LoneSurrogate { offset } => JsonError::LoneSurrogate {
                offset: offset + by,
            },
            JsonError::BadEdit { offset } => JsonError::BadEdit {
                offset: offset + by,
            },
            JsonError::TooLarge { len } => JsonError::TooLarge { len },
        }
    }
}

impl From<JsonError> for CoreError {
    fn from(err: JsonError) -> Self {
        CoreError::BadBody(err.to_string())
    }
}
