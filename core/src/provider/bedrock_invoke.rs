//! Amazon Bedrock Runtime `InvokeModel` and
//! `InvokeModelWithResponseStream` (`POST /model/{modelId}/invoke`,
//! `/invoke-with-response-stream`): the body is the model's own API
//! (Claude's is Anthropic Messages with `anthropic_version`).
//!
//! Requests: every string and key is masked but the Anthropic Messages
//! verbatim fields (signed thinking, base64 media), each recognised by the
//! object it sits in, so another model's body keeps nothing verbatim.
//! Answers: whole, the model's JSON; streamed, AWS event-stream frames
//! whose payload carries the model's event in base64 (`{"bytes":"…"}`),
//! decoded and read as any known provider's event (Claude's
//! `content_block_delta` and the rest), then encoded again.

use super::stream_slots::EventSlots;
use super::{anthropic_messages, BodyFormat, Provider, VerbatimField, GENERIC_JSON};
use crate::json::Document;

/// Bedrock InvokeModel.
pub(super) struct BedrockInvoke;

impl Provider for BedrockInvoke {
    fn name(&self) -> &'static str {
        "bedrock-invoke"
    }

    fn default_paths(&self) -> &'static [&'static str] {
        &["/model/*/invoke", "/model/*/invoke-with-response-stream"]
    }

    fn body_format(&self) -> BodyFormat {
        BodyFormat::Json
    }

    fn verbatim_fields(&self) -> &'static [VerbatimField] {
        anthropic_messages::FIELDS
    }

    fn stream_slots(&self, doc: &Document<'_>, slots: &mut EventSlots) {
        GENERIC_JSON.stream_slots(doc, slots);
    }

    fn sealed_answer_keys(&self) -> &'static [&'static str] {
        &["thinking", "signature"]
    }
}
