//! Which strings of a request are "what a person wrote", per API shape.
//!
//! Everything not listed here stays byte for byte: model names, ids, tool
//! names, keys, roles, types, tool definitions, metadata, and Anthropic
//! `thinking` / `redacted_thinking` blocks (they are signed: altering one
//! makes the provider refuse the request).
//!
//! | shape | masked |
//! |---|---|
//! | OpenAI Chat | `messages[*].content` (string, or parts: `.text` and `.refusal` of every part, whatever its `type`); `messages[*].refusal`; `messages[*].tool_calls[*].function.arguments` and legacy `messages[*].function_call.arguments` (JSON text: every string value inside; not JSON → as text) |
//! | OpenAI Responses | `instructions`; `input` string; `input[*].content` (string, or parts: `.text` and `.refusal` of every part, whatever its `type`); `function_call.arguments` (JSON text); `function_call_output.output` (string or parts); `custom_tool_call.input`, `custom_tool_call_output.output`; `reasoning.summary[*].text` |
//! | Anthropic Messages | `system` (string or blocks); `messages[*].content` string or blocks: `.text` of every block but a signed thinking block, `tool_use`/`server_tool_use` `.input` (every string value inside), `tool_result.content` (string or `text` blocks), `document` with a `text` source → `.source.data` |
//! | Json | every string value (not keys) |
//!
//! Not masked, on purpose: OpenAI `messages[*].name` — a participant label
//! the provider validates against `^[a-zA-Z0-9_-]+$`; a surrogate with a
//! space or a dot would make the request fail, and a value written there is
//! not word-bounded (`_` joins words) so it would not be found anyway.
//!
//! A body whose root is not an object is masked as [`ApiShape::Json`]
//! (every string): unknown structure is treated as written by a person.
//! When a key is repeated, every occurrence of a masked field is masked. A
//! repeated discriminator (`type`) counts as every value it takes: the
//! object is masked as each of them (providers read the last one, but the
//! body goes out whole, so a `text` under a part that ends as an image is
//! still a person's text on the wire). `.text` of a content part or block is
//! masked whatever its type for the same reason. The one exception is a
//! signed Anthropic block: it is left byte for byte only when *every* `type`
//! it carries is `thinking` (or every one is `redacted_thinking`); a block
//! whose types disagree and include either is not a valid signed block, so
//! its `thinking` and `data` strings are masked too — a duplicated `type`
//! never opens a way around the masker.

use crate::json::{Document, NodeId, NodeKind};

/// The API a request body is sent to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ApiShape {
    /// OpenAI Chat Completions (`POST /v1/chat/completions`).
    OpenAiChat,
    /// OpenAI Responses (`POST /v1/responses`).
    OpenAiResponses,
    /// Anthropic Messages (`POST /v1/messages`).
    AnthropicMessages,
    /// Any other JSON: every string value.
    Json,
    /// Not JSON: the whole body as UTF-8 text.
    Text,
}

/// How a selected string is masked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Treatment {
    /// The decoded string is text.
    Text,
    /// The decoded string holds JSON (tool-call arguments): every string
    /// value inside is masked; if it is not valid JSON, it is masked as text.
    JsonText,
}

/// The strings of `doc` to mask for `shape`, in document order, each once.
pub(crate) fn select(doc: &Document<'_>, shape: ApiShape) -> Vec<(NodeId, Treatment)> {
    let mut picked = Picked {
        doc,
        out: Vec::new(),
    };
    let root = doc.root();
    if doc.kind(root) != NodeKind::Object {
        picked.every_string(root);
    } else {
        match shape {
            ApiShape::OpenAiChat => picked.openai_chat(root),
            ApiShape::OpenAiResponses => picked.openai_responses(root),
            ApiShape::AnthropicMessages => picked.anthropic_messages(root),
            ApiShape::Json | ApiShape::Text => picked.every_string(root),
        }
    }
    let mut out = picked.out;
    out.sort_unstable_by_key(|(node, _)| *node);
    out.dedup_by_key(|(node, _)| *node);
    out
}

struct Picked<'d, 'a> {
    doc: &'d Document<'a>,
    out: Vec<(NodeId, Treatment)>,
}

impl Picked<'_, '_> {
    /// Members named `key` of `obj` (every occurrence).
    fn members(&self, obj: NodeId, key: &'static str) -> Vec<NodeId> {
        self.doc.get_all(obj, key).collect()
    }

    /// The object children of `node` when it is an array (none otherwise).
    fn objects_in(&self, node: NodeId) -> Vec<NodeId> {
        if self.doc.kind(node) != NodeKind::Array {
            return Vec::new();
        }
        self.doc
            .children(node)
            .filter(|&c| self.doc.kind(c) == NodeKind::Object)
            .collect()
    }

    /// True when any `type` of an object (a repeated key counts as each of
    /// its values) is a string among `names`.
    fn type_is(&self, obj: NodeId, names: &[&str]) -> bool {
        self.doc
            .get_all(obj, "type")
            .any(|t| names.iter().any(|name| self.doc.string_is(t, name)))
    }

    /// True when an object has a `type` and every one it has is `name`.
    fn type_is_only(&self, obj: NodeId, name: &str) -> bool {
        let mut any = false;
        for t in self.doc.get_all(obj, "type") {
            if !self.doc.string_is(t, name) {
                return false;
            }
            any = true;
        }
        any
    }

    /// An Anthropic block the provider signs (left byte for byte): every
    /// `type` it carries agrees on `thinking` or on `redacted_thinking`.
    fn is_signed_block(&self, block: NodeId) -> bool {
        self.type_is_only(block, "thinking") || self.type_is_only(block, "redacted_thinking")
    }

    fn has_type(&self, obj: NodeId) -> bool {
        self.doc.get(obj, "type").is_some()
    }

    fn string(&mut self, node: NodeId, treatment: Treatment) {
        if self.doc.kind(node) == NodeKind::String {
            self.out.push((node, treatment));
        }
    }

    fn strings_named(&mut self, obj: NodeId, key: &'static str, treatment: Treatment) {
        for node in self.members(obj, key) {
            self.string(node, treatment);
        }
    }

    fn every_string(&mut self, node: NodeId) {
        let strings: Vec<NodeId> = self.doc.strings_in(node).collect();
        self.out
            .extend(strings.into_iter().map(|s| (s, Treatment::Text)));
    }

    /// A content value: a string, or an array of parts whose `.text` and
    /// `.refusal` are masked whatever the part's `type` (OpenAI signs no
    /// part, and a text under a part of another type still goes out).
    fn content(&mut self, node: NodeId) {
        match self.doc.kind(node) {
            NodeKind::String => self.string(node, Treatment::Text),
            NodeKind::Array => {
                for part in self.objects_in(node) {
                    self.strings_named(part, "text", Treatment::Text);
                    self.strings_named(part, "refusal", Treatment::Text);
                }
            }
            _ => {}
        }
    }

    fn openai_chat(&mut self, root: NodeId) {
        for messages in self.members(root, "messages") {
            for message in self.objects_in(messages) {
                for content in self.members(message, "content") {
                    self.content(content);
                }
                self.strings_named(message, "refusal", Treatment::Text);
                for calls in self.members(message, "tool_calls") {
                    for call in self.objects_in(calls) {
                        for function in self.members(call, "function") {
                            self.strings_named(function, "arguments", Treatment::JsonText);
                        }
                    }
                }
                for function in self.members(message, "function_call") {
                    self.strings_named(function, "arguments", Treatment::JsonText);
                }
            }
        }
    }

    fn openai_responses(&mut self, root: NodeId) {
        self.strings_named(root, "instructions", Treatment::Text);
        for input in self.members(root, "input") {
            if self.doc.kind(input) == NodeKind::String {
                self.string(input, Treatment::Text);
                continue;
            }
            // Not an else-chain: an item whose `type` is repeated is masked
            // as every type it names.
            for item in self.objects_in(input) {
                if self.type_is(item, &["function_call"]) {
                    self.strings_named(item, "arguments", Treatment::JsonText);
                }
                if self.type_is(item, &["function_call_output", "custom_tool_call_output"]) {
                    for output in self.members(item, "output") {
                        self.content(output);
                    }
                }
                if self.type_is(item, &["custom_tool_call"]) {
                    self.strings_named(item, "input", Treatment::Text);
                }
                if self.type_is(item, &["reasoning"]) {
                    for summary in self.members(item, "summary") {
                        for part in self.objects_in(summary) {
                            self.strings_named(part, "text", Treatment::Text);
                        }
                    }
                }
                if !self.has_type(item) || self.type_is(item, &["message"]) {
                    for content in self.members(item, "content") {
                        self.content(content);
                    }
                }
            }
        }
    }

    /// One Anthropic content block: `.text` whatever its type, then what
    /// each `type` it carries holds. A signed thinking block is left as sent.
    fn anthropic_block(&mut self, block: NodeId, nested: bool) {
        if self.is_signed_block(block) {
            return;
        }
        self.strings_named(block, "text", Treatment::Text);
        if self.type_is(block, &["thinking", "redacted_thinking"]) {
            // Types that disagree: not a valid signed block, so what it
            // would carry as one is masked like any text.
            self.strings_named(block, "thinking", Treatment::Text);
            self.strings_named(block, "data", Treatment::Text);
        }
        if self.type_is(block, &["tool_use", "server_tool_use"]) && !nested {
            for input in self.members(block, "input") {
                self.every_string(input);
            }
        }
        if self.type_is(block, &["tool_result"]) && !nested {
            for content in self.members(block, "content") {
                match self.doc.kind(content) {
                    NodeKind::String => self.string(content, Treatment::Text),
                    NodeKind::Array => {
                        for inner in self.objects_in(content) {
                            self.anthropic_block(inner, true);
                        }
                    }
                    _ => {}
                }
            }
        }
        if self.type_is(block, &["document"]) {
            for source in self.members(block, "source") {
                if self.type_is(source, &["text"]) {
                    self.strings_named(source, "data", Treatment::Text);
                }
            }
        }
        // Anything else of images and unknown blocks: left exactly as sent.
    }

    fn anthropic_messages(&mut self, root: NodeId) {
        for system in self.members(root, "system") {
            match self.doc.kind(system) {
                NodeKind::String => self.string(system, Treatment::Text),
                NodeKind::Array => {
                    for block in self.objects_in(system) {
                        self.anthropic_block(block, true);
                    }
                }
                _ => {}
            }
        }
        for messages in self.members(root, "messages") {
            for message in self.objects_in(messages) {
                for content in self.members(message, "content") {
                    match self.doc.kind(content) {
                        NodeKind::String => self.string(content, Treatment::Text),
                        NodeKind::Array => {
                            for block in self.objects_in(content) {
                                self.anthropic_block(block, false);
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
    }
}
