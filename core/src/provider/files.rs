//! File uploads (`POST /v1/files`: OpenAI batch input files and other
//! purposes, Anthropic's Files API; Azure OpenAI's `/openai/files`):
//! `multipart/form-data` bodies whose parts are read by what they hold
//! (`mask/multipart.rs`): JSON lines masked per line with the provider of
//! the API the line names (`url`), text masked as text, a binary file of a
//! known type kept, anything else refused.
//! Answers: a file object (ids, name, purpose): strings restored whole.

use super::stream_slots::EventSlots;
use super::{BodyFormat, Provider, VerbatimField};
use crate::json::Document;

/// File uploads.
pub(super) struct Files;

impl Provider for Files {
    fn name(&self) -> &'static str {
        "files"
    }

    fn default_paths(&self) -> &'static [&'static str] {
        &["/v1/files", "/openai/files", "/openai/v1/files"]
    }

    fn body_format(&self) -> BodyFormat {
        BodyFormat::Multipart
    }

    fn verbatim_fields(&self) -> &'static [VerbatimField] {
        // Per line, the fields of the provider the line names.
        &[]
    }

    fn stream_slots(&self, _doc: &Document<'_>, _slots: &mut EventSlots) {
        // Uploads are not streamed.
    }

    fn sealed_answer_keys(&self) -> &'static [&'static str] {
        &[]
    }
}
