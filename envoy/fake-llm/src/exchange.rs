//! What an answer needs besides its content: ids, time, model, token counts.

/// Identity of one answer.
#[derive(Clone)]
pub struct Exchange {
    /// Position of the request in the log (1 for the first): makes ids unique.
    pub seq: u64,
    /// Unix seconds.
    pub created: u64,
    /// Echoed from the request.
    pub model: String,
    /// A rough count of the last user message's tokens.
    pub input_tokens: u64,
    /// OpenAI's `stream_options.include_usage`.
    pub include_usage: bool,
}

/// Why a request could not be answered; names the field, never a value.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RequestError {
    /// The body is not JSON.
    #[error("the request body is not valid JSON")]
    InvalidJson,
    /// A required field is absent or of the wrong type.
    #[error("field `{0}` is missing or has the wrong type")]
    MissingField(&'static str),
    /// A control header of the fake LLM is malformed.
    #[error("header `{0}` must be a positive integer")]
    BadHeader(&'static str),
}
