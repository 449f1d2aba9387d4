//! OpenAI embeddings (`POST /v1/embeddings`, and Azure OpenAI's
//! per-deployment path).
//!
//! Requests: `input` (a string, an array of strings, or token ids) and every
//! other string and key are masked; nothing is kept verbatim. An embedding
//! of a surrogate is what the provider computes: the agent gets vectors of
//! the masked text, which is the price of not sending the value.
//! Answers: vectors (numbers, or base64 floats): nothing to restore but
//! strings, restored whole; never streamed.

use super::stream_slots::EventSlots;
use super::{BodyFormat, Provider, VerbatimField};
use crate::json::Document;

/// OpenAI embeddings.
pub(super) struct OpenAiEmbeddings;

impl Provider for OpenAiEmbeddings {
    fn name(&self) -> &'static str {
        "openai-embeddings"
    }

    fn default_paths(&self) -> &'static [&'static str] {
        &[
            "/v1/embeddings",
            "/embeddings",
            "/openai/deployments/*/embeddings",
            "/openai/v1/embeddings",
        ]
    }

    fn body_format(&self) -> BodyFormat {
        BodyFormat::Json
    }

    fn verbatim_fields(&self) -> &'static [VerbatimField] {
        &[]
    }

    fn stream_slots(&self, _doc: &Document<'_>, _slots: &mut EventSlots) {
        // The API does not stream.
    }

    fn sealed_answer_keys(&self) -> &'static [&'static str] {
        &[]
    }
}
