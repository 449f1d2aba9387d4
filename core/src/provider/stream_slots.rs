//! What one streamed event means for content slots: which text fields are
//! deltas of which slot, and which slots it ends. Each provider reads its
//! own events ([`super::Provider::stream_slots`]); the slot kinds of every
//! provider are listed here so the restorer can hold them side by side.
//! An event no provider reads has no slot (its strings are restored whole).

use crate::json::{Document, NodeId, NodeKind};

/// One content slot of a stream: a text that arrives as deltas.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SlotKey {
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
    /// Legacy completions: `choices[i].text` (choice index).
    CompletionText(u64),
    /// Gemini: the text parts of `candidates[i].content` (candidate index).
    GeminiText(u64),
    /// Gemini: the thought-summary parts (`"thought": true`) of a candidate.
    GeminiThought(u64),
    /// Bedrock ConverseStream: `contentBlockDelta` text or tool-use input
    /// (content block index).
    BedrockBlock(u64),
}

/// Which slots an event ends (their held text must go out before it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SlotEnd {
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
    /// Every slot of a Gemini candidate (it has a `finishReason`).
    GeminiCandidate(u64),
}

impl SlotEnd {
    /// Whether this end covers `key`.
    pub fn covers(&self, key: &SlotKey) -> bool {
        use SlotKey::*;
        match self {
            SlotEnd::All => true,
            SlotEnd::Slot(slot) => slot == key,
            SlotEnd::ChatChoice(choice) => matches!(key,
                ChatContent(c) | ChatRefusal(c) | ChatToolArguments(c, _) | CompletionText(c)
                    if c == choice),
            SlotEnd::ResponsesItem(item) => matches!(key,
                ResponsesText(o, _) | ResponsesRefusal(o, _) | ResponsesArguments(o) if o == item),
            SlotEnd::ResponsesPart(item, part) => matches!(key,
                ResponsesText(o, c) | ResponsesRefusal(o, c) if o == item && c == part),
            SlotEnd::GeminiCandidate(candidate) => matches!(key,
                GeminiText(c) | GeminiThought(c) if c == candidate),
        }
    }
}

/// The slot deltas an event carries (text field node per slot) and the
/// slots it ends.
#[derive(Debug, Default)]
pub struct EventSlots {
    pub deltas: Vec<(SlotKey, NodeId)>,
    pub ends: Vec<SlotEnd>,
}

/// The string member `key` of object `id`.
pub(crate) fn string_at(doc: &Document<'_>, id: NodeId, key: &str) -> Option<NodeId> {
    if doc.kind(id) != NodeKind::Object {
        return None;
    }
    doc.get(id, key)
        .filter(|&n| doc.kind(n) == NodeKind::String)
}

/// A non-negative integer node.
pub(crate) fn number(doc: &Document<'_>, id: Option<NodeId>) -> Option<u64> {
    let id = id.filter(|&n| doc.kind(n) == NodeKind::Number)?;
    std::str::from_utf8(doc.raw(id)).ok()?.parse().ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn slots_of(json: &str) -> (Vec<SlotKey>, Vec<SlotEnd>) {
        let doc = Document::parse(json.as_bytes()).unwrap();
        let mut slots = EventSlots::default();
        crate::provider::GENERIC_JSON.stream_slots(&doc, &mut slots);
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
