//! OpenAI Chat Completions (`POST /v1/chat/completions`).
//!
//! Requests: every string and key is masked but inline media (an image as a
//! `data:` URL, `input_audio` bytes, a `file` part's `file_data`).
//! Answers: `choices[i].delta.content`, `.refusal` and
//! `.tool_calls[j].function.arguments` are content slots; a
//! `finish_reason` ends a choice's slots.

use super::stream_slots::{number, string_at, EventSlots, SlotEnd, SlotKey};
use super::{BodyFormat, Provider, Verbatim, VerbatimField, Within};
use crate::json::{Document, NodeId, NodeKind};

/// OpenAI Chat Completions.
pub(super) struct OpenAiChat;

/// Inline media: their bytes are not words, and a form check
/// ([`Verbatim::DataUrlMedia`], [`Verbatim::Base64Media`]) sends anything
/// else through the masker.
pub(super) const MEDIA_FIELDS: &[VerbatimField] = &[
    VerbatimField {
        key: "url",
        within: Within::MemberOf("image_url"),
        handling: Verbatim::DataUrlMedia,
        reason: "an inline image (data: URL): the provider decodes its bytes; an http(s) URL or any other text is masked",
        example: r#"{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"}}]}]}"#,
    },
    VerbatimField {
        key: "data",
        within: Within::MemberOf("input_audio"),
        handling: Verbatim::Base64Media,
        reason: "audio bytes in base64 (wav, mp3): not text; anything that is not such audio is masked",
        example: r#"{"messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"UklGRiQAAABXQVZFZm10IBAAAAABAAEA","format":"wav"}}]}]}"#,
    },
    VerbatimField {
        key: "file_data",
        within: Within::MemberOf("file"),
        handling: Verbatim::DataUrlMedia,
        reason: "a file's bytes (data: URL, e.g. a PDF): not text as written; anything else is masked",
        example: r#"{"messages":[{"role":"user","content":[{"type":"file","file":{"filename":"a.pdf","file_data":"data:application/pdf;base64,JVBERi0xLjQKJcOkw7zDtsOfCjIgMCBvYmoKPDwvTGVu"}}]}]}"#,
    },
];

impl Provider for OpenAiChat {
    fn name(&self) -> &'static str {
        "openai-chat"
    }

    fn default_paths(&self) -> &'static [&'static str] {
        &[
            "/v1/chat/completions",
            "/chat/completions",
            // Azure OpenAI: per deployment (`?api-version=` is dropped by
            // normalisation), and its v1 API.
            "/openai/deployments/*/chat/completions",
            "/openai/v1/chat/completions",
        ]
    }

    fn body_format(&self) -> BodyFormat {
        BodyFormat::Json
    }

    fn verbatim_fields(&self) -> &'static [VerbatimField] {
        MEDIA_FIELDS
    }

    fn stream_slots(&self, doc: &Document<'_>, slots: &mut EventSlots) {
        let root = doc.root();
        if doc.kind(root) != NodeKind::Object {
            return;
        }
        if let Some(choices) = doc.get(root, "choices") {
            chat_chunk(doc, choices, slots);
        }
    }

    fn sealed_answer_keys(&self) -> &'static [&'static str] {
        // Chat Completions signs nothing it sends.
        &[]
    }
}

pub(super) fn chat_chunk(doc: &Document<'_>, choices: NodeId, slots: &mut EventSlots) {
    for (position, choice) in doc.children(choices).enumerate() {
        let i = number(doc, doc.get(choice, "index")).unwrap_or(position as u64);
        // Legacy completions (`/v1/completions`) stream `choices[i].text`.
        if let Some(text) = string_at(doc, choice, "text") {
            slots.deltas.push((SlotKey::CompletionText(i), text));
        }
        if let Some(delta) = doc.get(choice, "delta") {
            if let Some(text) = string_at(doc, delta, "content") {
                slots.deltas.push((SlotKey::ChatContent(i), text));
            }
            if let Some(text) = string_at(doc, delta, "refusal") {
                slots.deltas.push((SlotKey::ChatRefusal(i), text));
            }
            if let Some(calls) = doc.get(delta, "tool_calls") {
                for (call_position, call) in doc.children(calls).enumerate() {
                    let j = number(doc, doc.get(call, "index")).unwrap_or(call_position as u64);
                    let arguments = doc
                        .get(call, "function")
                        .and_then(|f| string_at(doc, f, "arguments"));
                    if let Some(text) = arguments {
                        slots.deltas.push((SlotKey::ChatToolArguments(i, j), text));
                    }
                }
            }
        }
        let finished = doc
            .get(choice, "finish_reason")
            .is_some_and(|f| doc.kind(f) != NodeKind::Null);
        if finished {
            slots.ends.push(SlotEnd::ChatChoice(i));
        }
    }
}
