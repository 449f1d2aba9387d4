//! Google Gemini `generateContent` and `streamGenerateContent` (the Gemini
//! API under `/v1beta/` and `/v1/`, and Vertex AI's publisher-model paths),
//! and `countTokens`, whose body is the same `contents`.
//!
//! Requests: every string and key is masked but inline media
//! (`inlineData.data`, base64 with a file signature) and thought
//! signatures (`thoughtSignature` on a part: opaque, checked by the
//! provider when it comes back; examined all the same). The API reads
//! both the camelCase and the snake_case spelling of a field, so both are
//! listed.
//! Answers: the text parts of `candidates[i].content.parts` are the
//! candidate's slot (thought summaries, `"thought": true`, a slot of their
//! own); a `finishReason` ends the candidate. Function calls arrive whole
//! (`functionCall.args` is an object): their strings are restored whole.
//! Streamed as SSE (`?alt=sse`) or as one JSON array whose elements arrive
//! one by one; both are read by the same slots.

use super::stream_slots::{number, string_at, EventSlots, SlotEnd, SlotKey};
use super::{BodyFormat, Provider, Verbatim, VerbatimField, Within};
use crate::json::{Document, NodeKind};

/// Gemini generateContent.
pub(super) struct Gemini;

const MEDIA: &str = "an inline image, audio or PDF in base64: its bytes are not text as written; anything that is not such a file is masked";
const THOUGHT_SIGNATURE: &str = "an opaque thought signature the provider issued: it checks it when it comes back, so it cannot be changed; a forged one can carry any text, so it is examined and a value in it refuses the request";

const FIELDS: &[VerbatimField] = &[
    VerbatimField {
        key: "data",
        within: Within::MemberOf("inlineData"),
        handling: Verbatim::Base64Media,
        reason: MEDIA,
        example: r#"{"contents":[{"role":"user","parts":[{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"}}]}]}"#,
    },
    VerbatimField {
        key: "data",
        within: Within::MemberOf("inline_data"),
        handling: Verbatim::Base64Media,
        reason: MEDIA,
        example: r#"{"contents":[{"role":"user","parts":[{"inline_data":{"mime_type":"application/pdf","data":"JVBERi0xLjQKJcOkw7zDtsOfCjIgMCBvYmoKPDwvTGVu"}}]}]}"#,
    },
    VerbatimField {
        key: "thoughtSignature",
        within: Within::ItemOf("parts"),
        handling: Verbatim::Signed,
        reason: THOUGHT_SIGNATURE,
        example: r#"{"contents":[{"role":"model","parts":[{"functionCall":{"name":"lookup","args":{"order":"A-17"}},"thoughtSignature":"CiQB0e2Kb7pU6C5fxNQ3vpXn0OQe9n9AhPZ7bTkhGZ3eOZxR2ZAKXwHR7Yo"}]}]}"#,
    },
    VerbatimField {
        key: "thought_signature",
        within: Within::ItemOf("parts"),
        handling: Verbatim::Signed,
        reason: THOUGHT_SIGNATURE,
        example: r#"{"contents":[{"role":"model","parts":[{"text":"Done.","thought_signature":"CiQB0e2Kb7pU6C5fxNQ3vpXn0OQe9n9AhPZ7bTkhGZ3eOZxR2ZAKXwHR7Yo"}]}]}"#,
    },
];

impl Provider for Gemini {
    fn name(&self) -> &'static str {
        "gemini"
    }

    fn default_paths(&self) -> &'static [&'static str] {
        // Normalised paths are lower case; `*:method` is a segment ending
        // in `:method` (the model name before it).
        &[
            "/v1beta/models/*:generatecontent",
            "/v1beta/models/*:streamgeneratecontent",
            "/v1beta/models/*:counttokens",
            "/v1beta/tunedmodels/*:generatecontent",
            "/v1beta/tunedmodels/*:streamgeneratecontent",
            "/v1/models/*:generatecontent",
            "/v1/models/*:streamgeneratecontent",
            "/v1/models/*:counttokens",
            "/v1/projects/*/locations/*/publishers/google/models/*:generatecontent",
            "/v1/projects/*/locations/*/publishers/google/models/*:streamgeneratecontent",
            "/v1/projects/*/locations/*/publishers/google/models/*:counttokens",
            "/v1beta1/projects/*/locations/*/publishers/google/models/*:generatecontent",
            "/v1beta1/projects/*/locations/*/publishers/google/models/*:streamgeneratecontent",
        ]
    }

    fn body_format(&self) -> BodyFormat {
        BodyFormat::Json
    }

    fn verbatim_fields(&self) -> &'static [VerbatimField] {
        FIELDS
    }

    fn stream_slots(&self, doc: &Document<'_>, slots: &mut EventSlots) {
        gemini_chunk(doc, slots);
    }

    fn sealed_answer_keys(&self) -> &'static [&'static str] {
        &["thoughtSignature", "thought_signature"]
    }
}

/// The slots of one `GenerateContentResponse` (an SSE event's data, or one
/// element of the streamed array).
pub(super) fn gemini_chunk(doc: &Document<'_>, slots: &mut EventSlots) {
    let root = doc.root();
    if doc.kind(root) != NodeKind::Object {
        return;
    }
    let Some(candidates) = doc.get(root, "candidates") else {
        return;
    };
    for (position, candidate) in doc.children(candidates).enumerate() {
        if doc.kind(candidate) != NodeKind::Object {
            continue;
        }
        // proto3 JSON omits a zero index.
        let i = number(doc, doc.get(candidate, "index")).unwrap_or(position as u64);
        let parts = doc
            .get(candidate, "content")
            .filter(|&c| doc.kind(c) == NodeKind::Object)
            .and_then(|content| doc.get(content, "parts"));
        for part in parts.into_iter().flat_map(|parts| doc.children(parts)) {
            let Some(text) = string_at(doc, part, "text") else {
                continue;
            };
            let thought = doc
                .get(part, "thought")
                .is_some_and(|t| doc.raw(t) == b"true");
            let key = if thought {
                SlotKey::GeminiThought(i)
            } else {
                SlotKey::GeminiText(i)
            };
            slots.deltas.push((key, text));
        }
        let finished = doc
            .get(candidate, "finishReason")
            .or_else(|| doc.get(candidate, "finish_reason"))
            .is_some_and(|f| doc.kind(f) != NodeKind::Null);
        if finished {
            slots.ends.push(SlotEnd::GeminiCandidate(i));
        }
    }
}
