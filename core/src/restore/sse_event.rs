//! What one streamed event means for content slots: which text fields are
//! deltas of which slot, and which slots it ends. Covers OpenAI Chat
//! Completions chunks, OpenAI Responses events and Anthropic Messages
//! events; anything else has no slot (its strings are restored whole).

use crate::json::{Document, NodeId, NodeKind};

/// One content slot of a stream: a text that arrives as deltas.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum SlotKey {
    /// Chat: `choices[i].delta.content` (choice index).
    ChatContent(u64),
    /// Chat: `choices[i].delta.refusal`.
    ChatRefusal(u64),
    /// Chat: `choices[i].delta.tool_calls[j].function.arguments` (choice, tool call index).
    ChatToolArguments(u64, u64),
    /// Responses: `response.output_text.delta` (output index, content index).
    ResponsesText(u64, u64),
    /// Responses: `response.refusal.delta` (output index, content index).
    ResponsesRefusal(u64, u64),
    /// Responses: `response.function_call_arguments.delta` (output index).
    ResponsesArguments(u64),
    /// Anthropic: `content_block_delta` text or partial JSON (block index).
    AnthropicBlock(u64),
}

/// Which slots an event ends (their held text must go out before it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum SlotEnd {
    /// Every slot of the stream.
    All,
    /// One slot.
    Slot(SlotKey),
    /// Every slot of a chat choice (it has a `finish_reason`).
    ChatChoice(u64),
    /// Every slot of a Responses output item.
    ResponsesItem(u64),
    /// The text slots of one content part of a Responses output item.
    ResponsesPart(u64, u64),
}

impl SlotEnd {
    /// Whether this end covers `key`.
    pub(crate) fn covers(&self, key: &SlotKey) -> bool {
        use SlotKey::*;
        match self {
            SlotEnd::All => true,
            SlotEnd::Slot(slot) => slot == key,
            SlotEnd::ChatChoice(choice) => matches!(key,
                ChatContent(c) | ChatRefusal(c) | ChatToolArguments(c, _) if c == choice),
            SlotEnd::ResponsesItem(item) => matches!(key,
                ResponsesText(o, _) | ResponsesRefusal(o, _) | ResponsesArguments(o) if o == item),
            SlotEnd::ResponsesPart(item, part) => matches!(key,
                ResponsesText(o, c) | ResponsesRefusal(o, c) if o == item && c == part),
        }
    }
}

/// The slot deltas an event carries (text field node per slot) and the
/// slots it ends.
#[derive(Debug, Default)]
pub(crate) struct EventSlots {
    pub deltas: Vec<(SlotKey, NodeId)>,
    pub ends: Vec<SlotEnd>,
}

/// Reads an event's slots from its JSON data.
pub(crate) fn event_slots(doc: &Document<'_>) -> EventSlots {
    let mut slots = EventSlots::default();
    let root = doc.root();
    if doc.kind(root) != NodeKind::Object {
        return slots;
    }
    if let Some(choices) = doc.get(root, "choices") {
        chat_chunk(doc, choices, &mut slots);
        return slots;
    }
    let Some(kind) = doc.get(root, "type").and_then(|t| doc.str_value(t)?.ok()) else {
        return slots;
    };
    if kind.starts_with("response.") {
        responses_event(doc, root, &kind, &mut slots);
    } else {
        anthropic_event(doc, root, &kind, &mut slots);
    }
    slots
}

fn chat_chunk(doc: &Document<'_>, choices: NodeId, slots: &mut EventSlots) {
    for (position, choice) in doc.children(choices).enumerate() {
        let i = number(doc, doc.get(choice, "index")).unwrap_or(position as u64);
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

fn responses_event(doc: &Document<'_>, root: NodeId, kind: &str, slots: &mut EventSlots) {
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

fn anthropic_event(doc: &Document<'_>, root: NodeId, kind: &str, slots: &mut EventSlots) {
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

/// The string member `key` of object `id`.
fn string_at(doc: &Document<'_>, id: NodeId, key: &str) -> Option<NodeId> {
    if doc.kind(id) != NodeKind::Object {
        return None;
    }
    doc.get(id, key)
        .filter(|&n| doc.kind(n) == NodeKind::String)
}

/// A non-negative integer node.
fn number(doc: &Document<'_>, id: Option<NodeId>) -> Option<u64> {
    let id = id.filter(|&n| doc.kind(n) == NodeKind::Number)?;
    std::str::from_utf8(doc.raw(id)).ok()?.parse().ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn slots_of(json: &str) -> (Vec<SlotKey>, Vec<SlotEnd>) {
        let doc = Document::parse(json.as_bytes()).unwrap();
        let slots = event_slots(&doc);
        (
            slots.deltas.into_iter().map(|(k, _)| k).collect(),
            slots.ends,
        )
    }

    #[test]
    fn reads_slots_of_each_provider() {
        use SlotKey::*;
        let cases: Vec<(&str, Vec<SlotKey>, Vec<SlotEnd>)> = vec![
            (
                r#"{"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}"#,
                vec![ChatContent(0)],
                vec![],
            ),
            (
                r#"{"choices":[{"index":1,"delta":{"tool_calls":[{"index":2,"function":{"arguments":"{\""}}]},"finish_reason":"tool_calls"}]}"#,
                vec![ChatToolArguments(1, 2)],
                vec![SlotEnd::ChatChoice(1)],
            ),
            (
                r#"{"choices":[{"index":0,"delta":{"content":null,"refusal":"No"}}]}"#,
                vec![ChatRefusal(0)],
                vec![],
            ),
            (
                r#"{"type":"response.output_text.delta","item_id":"msg_1","output_index":1,"content_index":0,"delta":"Hi"}"#,
                vec![ResponsesText(1, 0)],
                vec![],
            ),
            (
                r#"{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":2,"delta":"{"}"#,
                vec![ResponsesArguments(2)],
                vec![],
            ),
            (
                r#"{"type":"response.output_text.done","output_index":1,"content_index":0,"text":"Hi"}"#,
                vec![],
                vec![SlotEnd::ResponsesPart(1, 0)],
            ),
            (
                r#"{"type":"response.completed","response":{}}"#,
                vec![],
                vec![SlotEnd::All],
            ),
            (
                r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\""}}"#,
                vec![AnthropicBlock(1)],
                vec![],
            ),
            (
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hm"}}"#,
                vec![],
                vec![],
            ),
            (
                r#"{"type":"content_block_stop","index":3}"#,
                vec![],
                vec![SlotEnd::Slot(AnthropicBlock(3))],
            ),
            (r#"{"type":"ping"}"#, vec![], vec![]),
            (r#"[1,2]"#, vec![], vec![]),
        ];
        for (json, deltas, ends) in cases {
            assert_eq!(slots_of(json), (deltas, ends), "{json}");
        }
    }

    #[test]
    fn ends_cover_their_slots() {
        use SlotKey::*;
        assert!(SlotEnd::ChatChoice(0).covers(&ChatToolArguments(0, 3)));
        assert!(!SlotEnd::ChatChoice(0).covers(&ChatContent(1)));
        assert!(SlotEnd::ResponsesItem(2).covers(&ResponsesArguments(2)));
        assert!(!SlotEnd::ResponsesPart(2, 1).covers(&ResponsesText(2, 0)));
        assert!(SlotEnd::All.covers(&AnthropicBlock(9)));
    }
}
