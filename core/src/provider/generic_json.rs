//! Any other JSON API: every string value and key is masked, nothing is
//! kept verbatim (no field is known to need its exact bytes). Streamed
//! events are read as any known provider's, whichever they look like.

use super::stream_slots::EventSlots;
use super::{
    anthropic_messages, bedrock_converse, gemini, openai_chat, openai_responses, BodyFormat,
    Provider, VerbatimField,
};
use crate::json::{Document, NodeKind};

/// Generic JSON: the fallback for paths no route names.
pub(super) struct GenericJson;

impl Provider for GenericJson {
    fn name(&self) -> &'static str {
        "json"
    }

    fn default_paths(&self) -> &'static [&'static str] {
        &[]
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
        if let Some(choices) = doc.get(root, "choices") {
            openai_chat::chat_chunk(doc, choices, slots);
            return;
        }
        if doc.get(root, "candidates").is_some() {
            gemini::gemini_chunk(doc, slots);
            return;
        }
        if doc.get(root, "contentBlockIndex").is_some() || doc.get(root, "stopReason").is_some() {
            bedrock_converse::bedrock_event(doc, slots);
            return;
        }
        let Some(kind) = doc.get(root, "type").and_then(|t| doc.str_value(t)?.ok()) else {
            return;
        };
        if kind.starts_with("response.") {
            openai_responses::responses_event(doc, root, &kind, slots);
        } else {
            anthropic_messages::anthropic_event(doc, root, &kind, slots);
        }
    }

    fn sealed_answer_keys(&self) -> &'static [&'static str] {
        // Whatever a known provider signs.
        &[
            "thinking",
            "signature",
            "encrypted_content",
            "thoughtSignature",
            "thought_signature",
            "reasoningContent/text",
            "reasoningContent/redactedContent",
            "reasoningText/text",
        ]
    }
}
