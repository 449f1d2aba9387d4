//! The one error type of latet-core. Messages name fields, kinds and
//! positions — never a value.

/// What went wrong in the engine; every variant is something a caller can act on.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CoreError {
    /// A wire document could not be read (field and reason, never its content).
    #[error("wire: {0}")]
    Wire(String),
    /// The wire version is not one this build understands.
    #[error("wire version {found} is not supported (this build speaks {supported})")]
    WireVersion { found: u32, supported: u32 },
    /// An event arrived out of sequence: the caller must fetch what it missed
    /// (or a new snapshot) instead of applying it.
    #[error("event out of sequence: expected seq {expected}, got {found}")]
    OutOfSequence { expected: u64, found: u64 },
    /// Entries from a callout were derived under another generation than the
    /// index's (a forget happened in between): ask again.
    #[error("entries of generation {found} are stale (index is at generation {current})")]
    StaleGeneration { found: u64, current: u64 },
    /// An entry is malformed (named by its position in the list and the field).
    #[error("entry {position}: {reason}")]
    BadEntry { position: usize, reason: String },
    /// Operator rule configuration is invalid (named by rule index and field).
    #[error("rule {index}: {reason}")]
    BadRule { index: usize, reason: String },
    /// A `neverMask` entry is invalid (named by its index, never its words).
    #[error("neverMask entry {index}: {reason}")]
    BadNeverMask { index: usize, reason: String },
    /// A field that cannot be changed (signed by the provider, or a media
    /// file) holds a value: the request must be refused. Named by the
    /// field's key (ours, from the provider module) and byte offset.
    #[error("body: a value was found in the field '{field}' at byte {offset}, which is kept as written (a signature or a media file): it cannot be masked")]
    ValueInVerbatimField { field: &'static str, offset: usize },
    /// A binary event-stream frame is malformed (its byte offset in the
    /// stream and what is wrong; never its content).
    #[error("event-stream frame at byte {offset}: {reason}")]
    BadFrame { offset: usize, reason: &'static str },
    /// A body could not be parsed as the API it was sent to.
    #[error("body: {0}")]
    BadBody(String),
}
