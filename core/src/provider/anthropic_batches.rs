//! Anthropic message batches (`POST /v1/messages/batches`): a list of
//! `{custom_id, params}` where each `params` is a Messages request.
//!
//! Requests: read with the Messages API's verbatim fields (signed thinking,
//! base64 media): each one is recognised by the object it sits in, so it
//! holds at any depth, and nothing else is kept. `custom_id` is the
//! caller's own label and is masked like any string: a value put there
//! does not leave.
//! Answers: a batch object (ids, counts, a results URL): strings restored
//! whole; never streamed.

use super::stream_slots::EventSlots;
use super::{anthropic_messages, BodyFormat, Provider, VerbatimField};
use crate::json::Document;

/// Anthropic message batches.
pub(super) struct AnthropicBatches;

impl Provider for AnthropicBatches {
    fn name(&self) -> &'static str {
        "anthropic-batches"
    }

    fn default_paths(&self) -> &'static [&'static str] {
        &["/v1/messages/batches"]
    }

    fn body_format(&self) -> BodyFormat {
        BodyFormat::Json
    }

    fn verbatim_fields(&self) -> &'static [VerbatimField] {
        anthropic_messages::FIELDS
    }

    fn stream_slots(&self, _doc: &Document<'_>, _slots: &mut EventSlots) {
        // Batches are not streamed.
    }

    fn sealed_answer_keys(&self) -> &'static [&'static str] {
        &["thinking", "signature"]
    }
}
