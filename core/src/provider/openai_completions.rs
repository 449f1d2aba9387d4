//! OpenAI legacy completions (`POST /v1/completions`, and Azure OpenAI's
//! per-deployment path).
//!
//! Requests: `prompt` (a string, an array of strings, or token ids) and
//! every other string and key are masked; nothing is kept verbatim (the API
//! takes no media and signs nothing).
//! Answers: `choices[i].text` is a content slot; a `finish_reason` ends it.

use super::stream_slots::EventSlots;
use super::{openai_chat, BodyFormat, Provider, VerbatimField};
use crate::json::{Document, NodeKind};

/// OpenAI legacy completions.
pub(super) struct OpenAiCompletions;

impl Provider for OpenAiCompletions {
    fn name(&self) -> &'static str {
        "openai-completions"
    }

    fn default_paths(&self) -> &'static [&'static str] {
        &[
            "/v1/completions",
            "/completions",
            "/openai/deployments/*/completions",
            "/openai/v1/completions",
        ]
    }

    fn body_format(&self) -> BodyFormat {
        BodyFormat::Json
    }

    fn verbatim_fields(&self) -> &'static [VerbatimField] {
        &[]
    }

    fn stream_slots(&self, doc: &Document<'_>, slots: &mut EventSlots) {
        let root = doc.root();
        if doc.kind(root) != NodeKind::Object {
            return;
        }
        // The chunk shape is Chat's, with `text` in place of `delta`.
        if let Some(choices) = doc.get(root, "choices") {
            openai_chat::chat_chunk(doc, choices, slots);
        }
    }

    fn sealed_answer_keys(&self) -> &'static [&'static str] {
        &[]
    }
}
