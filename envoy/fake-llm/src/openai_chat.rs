//! OpenAI Chat Completions (`POST /v1/chat/completions`): reading a request,
//! writing a whole answer and a streamed one (`chat.completion.chunk` events
//! then `data: [DONE]`).

use serde_json::{json, Value};

use crate::exchange::{Exchange, RequestError};
use crate::prompt::{content_text, model_of, rough_tokens, split_chars, str_field};
use crate::prompt::{Prompt, Reply, ToolCall};
use crate::sse;

/// Reads the last user message (`content` as a string or `text` parts) and
/// the tool calls of the last message (`tool_calls` on an assistant message).
pub fn read_prompt(body: &Value) -> Result<Prompt, RequestError> {
    let messages = body
        .get("messages")
        .and_then(Value::as_array)
        .ok_or(RequestError::MissingField("messages"))?;
    let last_user_text = messages
        .iter()
        .rev()
        .find(|m| str_field(m, "role") == "user")
        .map(|m| content_text(m.get("content"), &["text"]))
        .unwrap_or_default();
    let trailing_tool_calls = messages
        .last()
        .and_then(|m| m.get("tool_calls"))
        .and_then(Value::as_array)
        .map(|calls| calls.iter().map(read_tool_call).collect())
        .unwrap_or_default();
    Ok(Prompt {
        last_user_text,
        trailing_tool_calls,
        stream: body.get("stream").and_then(Value::as_bool) == Some(true),
        model: model_of(body),
        include_usage: body
            .pointer("/stream_options/include_usage")
            .and_then(Value::as_bool)
            == Some(true),
    })
}

fn read_tool_call(call: &Value) -> ToolCall {
    let arguments = match call.pointer("/function/arguments") {
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    };
    ToolCall {
        id: str_field(call, "id").to_owned(),
        name: call
            .pointer("/function/name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned(),
        arguments,
    }
}

/// Id of a tool call the fake LLM makes up.
pub fn new_call_id(ex: &Exchange) -> String {
    format!("call_fake_{}", ex.seq)
}

fn usage(ex: &Exchange, reply: &Reply) -> Value {
    let output = output_tokens(reply);
    json!({
        "prompt_tokens": ex.input_tokens,
        "completion_tokens": output,
        "total_tokens": ex.input_tokens + output,
    })
}

fn output_tokens(reply: &Reply) -> u64 {
    match reply {
        Reply::Text(text) => rough_tokens(text),
        Reply::ToolCalls(calls) => calls.iter().map(|c| rough_tokens(&c.arguments)).sum(),
    }
}

/// The whole answer (`chat.completion`).
pub fn whole(reply: &Reply, ex: &Exchange) -> Value {
    let (message, finish_reason) = match reply {
        Reply::Text(text) => (
            json!({"role": "assistant", "content": text, "refusal": null, "annotations": []}),
            "stop",
        ),
        Reply::ToolCalls(calls) => (
            json!({
                "role": "assistant",
                "content": null,
                "refusal": null,
                "annotations": [],
                "tool_calls": calls.iter().map(|c| json!({
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                })).collect::<Vec<_>>(),
            }),
            "tool_calls",
        ),
    };
    json!({
        "id": format!("chatcmpl-fake-{}", ex.seq),
        "object": "chat.completion",
        "created": ex.created,
        "model": ex.model,
        "choices": [{
            "index": 0,
            "message": message,
            "logprobs": null,
            "finish_reason": finish_reason,
        }],
        "usage": usage(ex, reply),
        "service_tier": "default",
        "system_fingerprint": null,
    })
}

/// The streamed answer: one event per piece of at most `chunk_chars`
/// characters, then the finish chunk, the usage chunk when asked, `[DONE]`.
pub fn stream(reply: &Reply, ex: &Exchange, chunk_chars: usize) -> Vec<String> {
    let chunk = |delta: Value, finish_reason: Value| {
        let mut event = json!({
            "id": format!("chatcmpl-fake-{}", ex.seq),
            "object": "chat.completion.chunk",
            "created": ex.created,
            "model": ex.model,
            "service_tier": "default",
            "system_fingerprint": null,
            "choices": [{
                "index": 0,
                "delta": delta,
                "logprobs": null,
                "finish_reason": finish_reason,
            }],
        });
        if ex.include_usage {
            event["usage"] = Value::Null;
        }
        sse::data_event(&event)
    };
    let mut events = Vec::new();
    let finish_reason = match reply {
        Reply::Text(text) => {
            events.push(chunk(
                json!({"role": "assistant", "content": "", "refusal": null}),
                Value::Null,
            ));
            for piece in split_chars(text, chunk_chars) {
                events.push(chunk(json!({"content": piece}), Value::Null));
            }
            "stop"
        }
        Reply::ToolCalls(calls) => {
            for (index, call) in calls.iter().enumerate() {
                let mut opening = json!({
                    "tool_calls": [{
                        "index": index,
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": ""},
                    }],
                });
                if index == 0 {
                    opening["role"] = json!("assistant");
                    opening["content"] = Value::Null;
                }
                events.push(chunk(opening, Value::Null));
                for piece in split_chars(&call.arguments, chunk_chars) {
                    events.push(chunk(
                        json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
                        Value::Null,
                    ));
                }
            }
            "tool_calls"
        }
    };
    events.push(chunk(json!({}), json!(finish_reason)));
    if ex.include_usage {
        let event = json!({
            "id": format!("chatcmpl-fake-{}", ex.seq),
            "object": "chat.completion.chunk",
            "created": ex.created,
            "model": ex.model,
            "service_tier": "default",
            "system_fingerprint": null,
            "choices": [],
            "usage": usage(ex, reply),
        });
        events.push(sse::data_event(&event));
    }
    events.push(sse::DONE.to_owned());
    events
}
