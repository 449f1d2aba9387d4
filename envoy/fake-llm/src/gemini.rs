//! Google Gemini (`POST /v1beta/models/{model}:generateContent` and
//! `:streamGenerateContent`): reading `contents[].parts[]`, writing a
//! `GenerateContentResponse`, and the two stream framings — SSE
//! (`?alt=sse`: `data: {chunk}\r\n\r\n`) and, without `alt=sse`, one JSON
//! array written element by element (`[{…}\n,\r\n{…}\n]`, elements
//! pretty-printed). Keys in Google's order (proto3 JSON: camelCase).

use serde_json::Value;

use crate::exchange::{Exchange, RequestError};
use crate::ordered_json::Json;
use crate::prompt::{blocks, read_turns, rough_tokens, split_chars, str_field, Turns};
use crate::prompt::{Prompt, Reply, ToolCall};
use crate::{jarr, jobj};

/// How a `streamGenerateContent` answer is framed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamFraming {
    /// `?alt=sse`: server-sent events, `text/event-stream`.
    Sse,
    /// No `alt=sse`: one JSON array, `application/json`.
    JsonArray,
}

/// Reads the last `user` content (its `text` parts, and the `response` of
/// its `functionResponse` parts as JSON text) and the `functionCall` parts
/// of the last content. A content without `role` is the user's, as the API
/// reads it.
pub fn read_prompt(body: &Value) -> Result<Prompt, RequestError> {
    let (last_user_text, trailing_tool_calls) = read_turns(
        body,
        &Turns {
            list: "contents",
            // A content without a role is the user's.
            is_user: |c| matches!(str_field(c, "role"), "user" | ""),
            user_text,
            tool_calls: |c| {
                blocks(c, "parts")
                    .iter()
                    .filter_map(|part| part.get("functionCall"))
                    .map(|call| ToolCall {
                        id: str_field(call, "id").to_owned(),
                        name: str_field(call, "name").to_owned(),
                        arguments: call.get("args").map(Value::to_string).unwrap_or_default(),
                    })
                    .collect()
            },
        },
    )?;
    Ok(Prompt {
        last_user_text,
        trailing_tool_calls,
        ..Prompt::default()
    })
}

fn user_text(content: &Value) -> String {
    content
        .get("parts")
        .and_then(Value::as_array)
        .map(|parts| {
            parts
                .iter()
                .filter_map(|part| {
                    if let Some(text) = part.get("text").and_then(Value::as_str) {
                        return Some(text.to_owned());
                    }
                    part.pointer("/functionResponse/response")
                        .map(Value::to_string)
                })
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// Gemini's API gives function calls no id (Vertex AI may): a call the
/// fake makes up has none.
pub fn new_call_id(_ex: &Exchange) -> String {
    String::new()
}

/// A `functionCall` part; `args` is an object (arguments that are not JSON
/// come back as a string under `raw`).
fn call_part(call: &ToolCall) -> Json {
    let args = match serde_json::from_str::<Value>(&call.arguments) {
        Ok(value) => Json::from(&value),
        Err(_) => jobj! {"raw": &call.arguments},
    };
    let mut function_call = Json::Obj(Vec::new());
    if !call.id.is_empty() {
        function_call.set("id", &call.id);
    }
    function_call.set("name", &call.name);
    function_call.set("args", args);
    jobj! {"functionCall": function_call}
}

fn output_tokens(reply: &Reply) -> u64 {
    match reply {
        Reply::Text(text) => rough_tokens(text),
        Reply::ToolCalls(calls) => calls.iter().map(|c| rough_tokens(&c.arguments)).sum(),
    }
}

fn usage(ex: &Exchange, output: u64) -> Json {
    jobj! {
        "promptTokenCount": ex.input_tokens,
        "candidatesTokenCount": output,
        "totalTokenCount": ex.input_tokens + output,
    }
}

/// One `GenerateContentResponse`: a candidate with `parts`, a
/// `finishReason` on the last one only.
fn response(ex: &Exchange, parts: Vec<Json>, finish: bool, output: u64) -> Json {
    let mut candidate = jobj! {
        "content": jobj! {"parts": parts, "role": "model"},
    };
    if finish {
        candidate.set("finishReason", "STOP");
    }
    candidate.set("index", 0u64);
    jobj! {
        "candidates": jarr![candidate],
        "usageMetadata": usage(ex, output),
        "modelVersion": &ex.model,
        "responseId": format!("fake{}", ex.seq),
    }
}

fn reply_parts(reply: &Reply) -> Vec<Json> {
    match reply {
        Reply::Text(text) => vec![jobj! {"text": text}],
        Reply::ToolCalls(calls) => calls.iter().map(call_part).collect(),
    }
}

/// The whole answer (`generateContent`). Function calls finish with
/// `STOP` too: Gemini has no tool-use finish reason.
pub fn whole(reply: &Reply, ex: &Exchange) -> Json {
    response(ex, reply_parts(reply), true, output_tokens(reply))
}

/// The streamed chunks (`GenerateContentResponse` objects): text in pieces
/// of at most `chunk_chars` characters, the last piece with `finishReason`;
/// function calls whole, in one chunk, as Gemini streams them.
pub fn stream_chunks(reply: &Reply, ex: &Exchange, chunk_chars: usize) -> Vec<Json> {
    let output = output_tokens(reply);
    let groups: Vec<Vec<Json>> = match reply {
        Reply::Text(text) => split_chars(text, chunk_chars)
            .into_iter()
            .map(|piece| vec![jobj! {"text": piece}])
            .collect(),
        Reply::ToolCalls(_) => vec![reply_parts(reply)],
    };
    let groups = if groups.is_empty() {
        vec![vec![jobj! {"text": ""}]]
    } else {
        groups
    };
    let last = groups.len() - 1;
    groups
        .into_iter()
        .enumerate()
        .map(|(i, parts)| response(ex, parts, i == last, output))
        .collect()
}

/// The chunks framed for the wire: one write each.
pub fn frame(chunks: &[Json], framing: StreamFraming) -> Vec<String> {
    match framing {
        StreamFraming::Sse => chunks
            .iter()
            .map(|c| format!("data: {c}\r\n\r\n"))
            .collect(),
        StreamFraming::JsonArray => {
            let mut writes: Vec<String> = chunks
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let opening = if i == 0 { "[" } else { "\n,\r\n" };
                    format!("{opening}{}", c.pretty())
                })
                .collect();
            writes.push(if chunks.is_empty() { "[]" } else { "\n]" }.to_owned());
            writes
        }
    }
}

/// `countTokens`: `{"totalTokens": N}` over the last user text.
pub fn count_tokens(prompt: &Prompt) -> Json {
    jobj! {"totalTokens": rough_tokens(&prompt.last_user_text)}
}

/// Gemini's error body (`google.rpc.Status`).
pub fn error_body(status: u16, message: &str) -> Json {
    let code = match status {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        429 => "RESOURCE_EXHAUSTED",
        503 => "UNAVAILABLE",
        504 => "DEADLINE_EXCEEDED",
        _ => "INTERNAL",
    };
    jobj! {"error": jobj! {"code": u64::from(status), "message": message, "status": code}}
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn array_framing_joins_into_one_json_array() {
        let chunks = vec![jobj! {"a": 1u64}, jobj! {"b": "x"}];
        let writes = frame(&chunks, StreamFraming::JsonArray);
        assert_eq!(writes[0], "[{\n  \"a\": 1\n}");
        assert_eq!(writes[1], "\n,\r\n{\n  \"b\": \"x\"\n}");
        assert_eq!(writes[2], "\n]");
        let all: Value = serde_json::from_str(&writes.concat()).unwrap();
        assert_eq!(all, serde_json::json!([{"a": 1}, {"b": "x"}]));
        assert_eq!(frame(&[], StreamFraming::JsonArray), vec!["[]"]);
    }

    #[test]
    fn sse_framing_ends_events_in_crlf() {
        let writes = frame(&[jobj! {"a": 1u64}], StreamFraming::Sse);
        assert_eq!(writes, vec!["data: {\"a\":1}\r\n\r\n"]);
    }
}
