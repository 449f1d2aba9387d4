//! Amazon Bedrock Runtime `Converse` and `ConverseStream`
//! (`POST /model/{modelId}/converse`, `/converse-stream`).
//!
//! Requests: every string and key is masked but media bytes
//! (`source.bytes` of an image, document or video: base64 with a file
//! signature) and signed reasoning (`reasoningText.text` and `.signature`,
//! `reasoningContent.redactedContent`: the model checks them when they come
//! back; examined all the same). Bedrock signs requests (SigV4) over the
//! body: a gateway that changes the body must sign again after it (Envoy's
//! AWS request-signing filter), `plugin/README.md` says how.
//! Answers: streamed as AWS event-stream frames
//! (`application/vnd.amazon.eventstream`, [`crate::eventstream`]) whose
//! payloads are JSON: `contentBlockDelta`'s `delta.text` and
//! `delta.toolUse.input` are the block's slot, `contentBlockStop` ends it,
//! `messageStop` ends all. The event type is in a frame header, so events
//! are told apart by their members, which are distinct per type.

use super::stream_slots::{number, string_at, EventSlots, SlotEnd, SlotKey};
use super::{BodyFormat, Provider, Verbatim, VerbatimField, Within};
use crate::json::{Document, NodeKind};

/// Bedrock Converse.
pub(super) struct BedrockConverse;

const SIGNED_REASONING: &str = "reasoning the model signed: it checks the signature when the reasoning comes back, so neither can be changed; a forged one can carry any text, so it is examined and a value in it refuses the request";
const REASONING_EXAMPLE: &str = r#"{"messages":[{"role":"assistant","content":[{"reasoningContent":{"reasoningText":{"text":"Look the order up first.","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxDYdVZ"}}}]}]}"#;

const FIELDS: &[VerbatimField] = &[
    VerbatimField {
        key: "bytes",
        within: Within::MemberOf("source"),
        handling: Verbatim::Base64Media,
        reason: "an image, document or video in base64: its bytes are not text as written; anything that is not such a file is masked",
        example: r#"{"messages":[{"role":"user","content":[{"image":{"format":"png","source":{"bytes":"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"}}}]}]}"#,
    },
    VerbatimField {
        key: "text",
        within: Within::MemberOf("reasoningText"),
        handling: Verbatim::Signed,
        reason: SIGNED_REASONING,
        example: REASONING_EXAMPLE,
    },
    VerbatimField {
        key: "signature",
        within: Within::MemberOf("reasoningText"),
        handling: Verbatim::Signed,
        reason: SIGNED_REASONING,
        example: REASONING_EXAMPLE,
    },
    VerbatimField {
        key: "redactedContent",
        within: Within::MemberOf("reasoningContent"),
        handling: Verbatim::Signed,
        reason: "encrypted reasoning the model sent: it decrypts it when it comes back; examined all the same, a value in it refuses the request",
        example: r#"{"messages":[{"role":"assistant","content":[{"reasoningContent":{"redactedContent":"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"}}]}]}"#,
    },
];

impl Provider for BedrockConverse {
    fn name(&self) -> &'static str {
        "bedrock-converse"
    }

    fn default_paths(&self) -> &'static [&'static str] {
        // A model id may hold `:` or, as an ARN, an encoded `/` (`%2F`):
        // either way one segment.
        &["/model/*/converse", "/model/*/converse-stream"]
    }

    fn body_format(&self) -> BodyFormat {
        BodyFormat::Json
    }

    fn verbatim_fields(&self) -> &'static [VerbatimField] {
        FIELDS
    }

    fn stream_slots(&self, doc: &Document<'_>, slots: &mut EventSlots) {
        bedrock_event(doc, slots);
    }

    fn sealed_answer_keys(&self) -> &'static [&'static str] {
        // Signed reasoning, whole (`reasoningText`) and streamed
        // (`delta.reasoningContent`).
        &[
            "reasoningText/text",
            "reasoningText/signature",
            "reasoningContent/text",
            "reasoningContent/signature",
            "reasoningContent/redactedContent",
        ]
    }
}

/// The slots of one ConverseStream event payload.
pub(super) fn bedrock_event(doc: &Document<'_>, slots: &mut EventSlots) {
    let root = doc.root();
    if doc.kind(root) != NodeKind::Object {
        return;
    }
    // Every block event names its block; other providers' events (an
    // Anthropic `delta`) do not, and are not read here.
    let Some(block) = number(doc, doc.get(root, "contentBlockIndex")) else {
        if doc.get(root, "stopReason").is_some() {
            // `messageStop`.
            slots.ends.push(SlotEnd::All);
        }
        return;
    };
    if let Some(delta) = doc.get(root, "delta") {
        let text = string_at(doc, delta, "text").or_else(|| {
            doc.get(delta, "toolUse")
                .and_then(|tool| string_at(doc, tool, "input"))
        });
        if let Some(text) = text {
            slots.deltas.push((SlotKey::BedrockBlock(block), text));
        }
    } else if doc.get(root, "start").is_none() {
        // `contentBlockStop`: the index alone (and the padding `p`).
        slots.ends.push(SlotEnd::Slot(SlotKey::BedrockBlock(block)));
    }
}
