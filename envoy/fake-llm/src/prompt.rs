//! What the fake LLM takes from a request (the last user message's text, the
//! tool calls the conversation ends with) and what it answers with.

use serde_json::Value;

use crate::exchange::RequestError;

/// A tool call as the fake LLM echoes it: provider-neutral.
#[derive(Clone, PartialEq, Eq)]
pub struct ToolCall {
    /// The call's id (`call_…`, `toolu_…`): echoed as received.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments as JSON text (OpenAI sends them as a string; Anthropic's
    /// `input` object is serialized here).
    pub arguments: String,
}

/// What one request asks of the fake LLM, whatever the API.
#[derive(Clone, Default)]
pub struct Prompt {
    /// The text of the last `user` message, as received (parts joined by `\n`).
    pub last_user_text: String,
    /// The tool calls carried by the conversation's last message, in order.
    pub trailing_tool_calls: Vec<ToolCall>,
    /// `"stream": true` in the request.
    pub stream: bool,
    /// The request's `model`, or `fake-llm` when absent.
    pub model: String,
    /// OpenAI's `stream_options.include_usage`.
    pub include_usage: bool,
    /// Legacy completions: every prompt of the request, in order (one
    /// choice each); empty for the other APIs.
    pub prompts: Vec<String>,
}

/// The answer the fake LLM gives.
#[derive(Clone, PartialEq, Eq)]
pub enum Reply {
    /// A text answer.
    Text(String),
    /// One or more tool calls instead of text.
    ToolCalls(Vec<ToolCall>),
}

/// Chooses the reply. The rule, in order:
/// 1. a tool name asked for by the `x-fake-tool-call` header → one call to it
///    with arguments `{"text": <last user text>}` and id `new_call_id`;
/// 2. the conversation's last message carries tool calls → those calls,
///    echoed (ids, names, arguments as received);
/// 3. otherwise → the last user message's text.
pub fn decide_reply(prompt: &Prompt, forced_tool: Option<&str>, new_call_id: String) -> Reply {
    if let Some(name) = forced_tool {
        let arguments = serde_json::json!({ "text": prompt.last_user_text }).to_string();
        return Reply::ToolCalls(vec![ToolCall {
            id: new_call_id,
            name: name.to_owned(),
            arguments,
        }]);
    }
    if !prompt.trailing_tool_calls.is_empty() {
        return Reply::ToolCalls(prompt.trailing_tool_calls.clone());
    }
    Reply::Text(prompt.last_user_text.clone())
}

/// Splits `text` in pieces of at most `max_chars` characters (never inside
/// a character). `max_chars` of 0 is treated as 1.
pub fn split_chars(text: &str, max_chars: usize) -> Vec<String> {
    let max_chars = max_chars.max(1);
    let mut pieces = Vec::new();
    let mut current = String::new();
    let mut count = 0;
    for ch in text.chars() {
        current.push(ch);
        count += 1;
        if count == max_chars {
            pieces.push(std::mem::take(&mut current));
            count = 0;
        }
    }
    if !current.is_empty() {
        pieces.push(current);
    }
    pieces
}

/// Text of a message `content`: a string, or an array of parts whose text is
/// under `text` (parts of the listed `types`; a part without `type` counts).
/// Parts are joined by `\n`.
pub fn content_text(content: Option<&Value>, types: &[&str]) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter(|part| {
                part.get("type")
                    .and_then(Value::as_str)
                    .is_none_or(|kind| types.contains(&kind))
            })
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// A field read as a string, or `""`.
/// How a conversation API writes its turns, for [`read_turns`].
pub struct Turns {
    /// The member holding the turns (`messages`, `contents`).
    pub list: &'static str,
    /// Whether a turn is the user's.
    pub is_user: fn(&Value) -> bool,
    /// The user text of a turn.
    pub user_text: fn(&Value) -> String,
    /// The tool calls a turn carries.
    pub tool_calls: fn(&Value) -> Vec<ToolCall>,
}

/// The text of the last user turn and the tool calls of the last turn.
pub fn read_turns(body: &Value, turns: &Turns) -> Result<(String, Vec<ToolCall>), RequestError> {
    let list = body
        .get(turns.list)
        .and_then(Value::as_array)
        .ok_or(RequestError::MissingField(turns.list))?;
    let last_user_text = list
        .iter()
        .rev()
        .find(|turn| (turns.is_user)(turn))
        .map(turns.user_text)
        .unwrap_or_default();
    let trailing_tool_calls = list.last().map(turns.tool_calls).unwrap_or_default();
    Ok((last_user_text, trailing_tool_calls))
}

/// The blocks of array `key` of `turn`.
pub fn blocks<'a>(turn: &'a Value, key: &str) -> &'a [Value] {
    turn.get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

pub fn str_field<'a>(value: &'a Value, name: &str) -> &'a str {
    value.get(name).and_then(Value::as_str).unwrap_or("")
}

/// The request's model name, or `fake-llm`.
pub fn model_of(body: &Value) -> String {
    body.get("model")
        .and_then(Value::as_str)
        .unwrap_or("fake-llm")
        .to_owned()
}

/// A rough token count (4 characters a token), for the `usage` fields.
pub fn rough_tokens(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_chars_table() {
        let cases: &[(&str, usize, &[&str])] = &[
            ("", 3, &[]),
            ("abc", 3, &["abc"]),
            ("abcdefg", 3, &["abc", "def", "g"]),
            ("héllo wörld", 3, &["hél", "lo ", "wör", "ld"]),
            ("ab", 0, &["a", "b"]),
            ("日本語テキスト", 2, &["日本", "語テ", "キス", "ト"]),
        ];
        for (text, n, want) in cases {
            assert_eq!(split_chars(text, *n), *want, "text {text:?} n {n}");
        }
    }

    #[test]
    fn content_text_reads_strings_and_parts() {
        let parts = serde_json::json!([
            {"type": "text", "text": "one"},
            {"type": "image_url", "image_url": {"url": "x"}},
            {"type": "text", "text": "two"}
        ]);
        assert_eq!(content_text(Some(&parts), &["text"]), "one\ntwo");
        assert_eq!(
            content_text(Some(&Value::String("s".into())), &["text"]),
            "s"
        );
        assert_eq!(content_text(None, &["text"]), "");
    }

    #[test]
    fn reply_rule_order() {
        let call = ToolCall {
            id: "call_1".into(),
            name: "lookup".into(),
            arguments: "{\"q\":1}".into(),
        };
        let prompt = Prompt {
            last_user_text: "hi".into(),
            trailing_tool_calls: vec![call.clone()],
            ..Prompt::default()
        };
        // The header wins over the trailing calls.
        let forced = decide_reply(&prompt, Some("echo"), "call_new".into());
        let want = ToolCall {
            id: "call_new".into(),
            name: "echo".into(),
            arguments: r#"{"text":"hi"}"#.into(),
        };
        assert!(forced == Reply::ToolCalls(vec![want]));
        // Trailing calls are echoed.
        assert!(decide_reply(&prompt, None, "x".into()) == Reply::ToolCalls(vec![call]));
        // Otherwise the text.
        let plain = Prompt {
            last_user_text: "hi".into(),
            ..Prompt::default()
        };
        assert!(decide_reply(&plain, None, "x".into()) == Reply::Text("hi".into()));
    }
}
