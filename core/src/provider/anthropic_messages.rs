//! Anthropic Messages (`POST /v1/messages`, `/v1/messages/count_tokens`,
//! and Claude on Vertex AI).
//!
//! Requests: every string and key is masked but signed thinking blocks
//! (examined all the same: a value in one refuses the request) and base64
//! media sources.
//! Answers: `content_block_delta` text and partial JSON are a block's
//! slot; `content_block_stop` ends it, `message_stop` and `error` end all.

use super::stream_slots::{number, string_at, EventSlots, SlotEnd, SlotKey};
use super::{BodyFormat, Provider, Verbatim, VerbatimField, Within};
use crate::json::{Document, NodeId, NodeKind};

/// Anthropic Messages.
pub(super) struct AnthropicMessages;

const SIGNED: &str = "a signed thinking block: the provider checks its signature when it comes back, so it cannot be changed; a forged one can carry any text, so it is examined and a value in it refuses the request";

pub(super) const FIELDS: &[VerbatimField] = &[
    VerbatimField {
        key: "thinking",
        within: Within::TypeOnly("thinking"),
        handling: Verbatim::Signed,
        reason: SIGNED,
        example: r#"{"model":"claude","messages":[{"role":"assistant","content":[{"type":"thinking","thinking":"Look the order up first.","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxDYdVZ"}]}]}"#,
    },
    VerbatimField {
        key: "signature",
        within: Within::TypeOnly("thinking"),
        handling: Verbatim::Signed,
        reason: SIGNED,
        example: r#"{"model":"claude","messages":[{"role":"assistant","content":[{"type":"thinking","thinking":"Look the order up first.","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxDYdVZ"}]}]}"#,
    },
    VerbatimField {
        key: "data",
        within: Within::TypeOnly("redacted_thinking"),
        handling: Verbatim::Signed,
        reason: "encrypted thinking the provider sent: it decrypts it when it comes back; examined all the same, a value in it refuses the request",
        example: r#"{"model":"claude","messages":[{"role":"assistant","content":[{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"}]}]}"#,
    },
    VerbatimField {
        key: "data",
        within: Within::TypeOnly("base64"),
        handling: Verbatim::Base64Media,
        reason: "an image or PDF source in base64: its bytes are not text as written; anything that is not such a file is masked",
        example: r#"{"model":"claude","messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"}}]}]}"#,
    },
];

impl Provider for AnthropicMessages {
    fn name(&self) -> &'static str {
        "anthropic-messages"
    }

    fn default_paths(&self) -> &'static [&'static str] {
        // `count_tokens` takes a Messages request as it is. Batches nest
        // it: their own module (`anthropic_batches`). Vertex AI serves
        // Claude under its publisher path.
        &[
            "/v1/messages",
            "/v1/messages/count_tokens",
            "/v1/projects/*/locations/*/publishers/anthropic/models/*:rawpredict",
            "/v1/projects/*/locations/*/publishers/anthropic/models/*:streamrawpredict",
        ]
    }

    fn body_format(&self) -> BodyFormat {
        BodyFormat::Json
    }

    fn verbatim_fields(&self) -> &'static [VerbatimField] {
        FIELDS
    }

    fn stream_slots(&self, doc: &Document<'_>, slots: &mut EventSlots) {
        let root = doc.root();
        if doc.kind(root) != NodeKind::Object {
            return;
        }
        let Some(kind) = doc.get(root, "type").and_then(|t| doc.str_value(t)?.ok()) else {
            return;
        };
        anthropic_event(doc, root, &kind, slots);
    }

    fn sealed_answer_keys(&self) -> &'static [&'static str] {
        &["thinking", "signature"]
    }
}

pub(super) fn anthropic_event(
    doc: &Document<'_>,
    root: NodeId,
    kind: &str,
    slots: &mut EventSlots,
) {
    let block = number(doc, doc.get(root, "index")).unwrap_or(0);
    match kind {
        "content_block_delta" => {
            let text = doc.get(root, "delta").and_then(|delta| {
                string_at(doc, delta, "text").or_else(|| string_at(doc, delta, "partial_json"))
            });
            if let Some(text) = text {
                slots.deltas.push((SlotKey::AnthropicBlock(block), text));
            }
        }
        "content_block_stop" => slots
            .ends
            .push(SlotEnd::Slot(SlotKey::AnthropicBlock(block))),
        "message_stop" | "error" => slots.ends.push(SlotEnd::All),
        _ => {}
    }
}
