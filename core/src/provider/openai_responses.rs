//! OpenAI Responses (`POST /v1/responses`).
//!
//! Requests: every string and key is masked but encrypted reasoning
//! (`encrypted_content`, examined all the same) and inline media.
//! Answers: `response.output_text.delta`, `.refusal.delta` and
//! `.function_call_arguments.delta` are content slots; the `.done` events,
//! `response.output_item.done` and the end of the response end them.

use super::stream_slots::{number, string_at, EventSlots, SlotEnd, SlotKey};
use super::{BodyFormat, Provider, Verbatim, VerbatimField, Within};
use crate::json::{Document, NodeId, NodeKind};

/// OpenAI Responses.
pub(super) struct OpenAiResponses;

const FIELDS: &[VerbatimField] = &[
    VerbatimField {
        key: "encrypted_content",
        within: Within::TypeOnly("reasoning"),
        handling: Verbatim::Signed,
        reason: "reasoning the provider encrypted: it decrypts and checks it when sent back; a forged one can carry any text, so it is examined and a value in it refuses the request",
        example: r#"{"model":"o4-mini","input":[{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAAABoZ3JhbmRvbV9lbmNyeXB0ZWRfYmxvYg=="}]}"#,
    },
    VerbatimField {
        key: "encrypted_content",
        within: Within::TypeOnly("compaction"),
        handling: Verbatim::Signed,
        reason: "a compacted conversation the provider encrypted: same as reasoning, examined and refused when it holds a value",
        example: r#"{"model":"o4-mini","input":[{"type":"compaction","id":"cmp_1","encrypted_content":"gAAAAABoZ3JhbmRvbV9jb21wYWN0ZWQ="}]}"#,
    },
    VerbatimField {
        key: "image_url",
        within: Within::TypeOnly("input_image"),
        handling: Verbatim::DataUrlMedia,
        reason: "an inline image (data: URL): the provider decodes its bytes; an http(s) URL or any other text is masked",
        example: r#"{"model":"o4-mini","input":[{"role":"user","content":[{"type":"input_image","image_url":"data:image/jpeg;base64,/9j/4AAQSkZJRgABAQAAAQABAAD"}]}]}"#,
    },
    VerbatimField {
        key: "file_data",
        within: Within::TypeOnly("input_file"),
        handling: Verbatim::DataUrlMedia,
        reason: "a file's bytes (data: URL, e.g. a PDF): not text as written; anything else is masked",
        example: r#"{"model":"o4-mini","input":[{"role":"user","content":[{"type":"input_file","filename":"a.pdf","file_data":"data:application/pdf;base64,JVBERi0xLjQKJcOkw7zDtsOfCjIgMCBvYmoKPDwvTGVu"}]}]}"#,
    },
];

impl Provider for OpenAiResponses {
    fn name(&self) -> &'static str {
        "openai-responses"
    }

    fn default_paths(&self) -> &'static [&'static str] {
        // Azure OpenAI serves it under `/openai/`.
        &[
            "/v1/responses",
            "/responses",
            "/openai/responses",
            "/openai/v1/responses",
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
        responses_event(doc, root, &kind, slots);
    }

    fn sealed_answer_keys(&self) -> &'static [&'static str] {
        &["encrypted_content"]
    }
}

pub(super) fn responses_event(
    doc: &Document<'_>,
    root: NodeId,
    kind: &str,
    slots: &mut EventSlots,
) {
    let output = number(doc, doc.get(root, "output_index")).unwrap_or(0);
    let part = number(doc, doc.get(root, "content_index")).unwrap_or(0);
    let delta = || string_at(doc, root, "delta");
    match kind {
        "response.output_text.delta" => {
            if let Some(text) = delta() {
                slots
                    .deltas
                    .push((SlotKey::ResponsesText(output, part), text));
            }
        }
        "response.refusal.delta" => {
            if let Some(text) = delta() {
                slots
                    .deltas
                    .push((SlotKey::ResponsesRefusal(output, part), text));
            }
        }
        "response.function_call_arguments.delta" => {
            if let Some(text) = delta() {
                slots
                    .deltas
                    .push((SlotKey::ResponsesArguments(output), text));
            }
        }
        "response.output_text.done" | "response.refusal.done" | "response.content_part.done" => {
            slots.ends.push(SlotEnd::ResponsesPart(output, part));
        }
        "response.function_call_arguments.done" | "response.output_item.done" => {
            slots.ends.push(SlotEnd::ResponsesItem(output));
        }
        "response.completed" | "response.incomplete" | "response.failed" => {
            slots.ends.push(SlotEnd::All);
        }
        _ => {}
    }
}
