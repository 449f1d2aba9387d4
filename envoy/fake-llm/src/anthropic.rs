//! Anthropic Messages (`POST /v1/messages`): reading a request, writing a
//! whole `message` and a streamed one (`message_start`,
//! `content_block_start`, `ping`, `content_block_delta`, `content_block_stop`,
//! `message_delta`, `message_stop`).

use serde_json::{json, Value};

use crate::exchange::{Exchange, RequestError};
use crate::prompt::{content_text, model_of, rough_tokens, split_chars, str_field};
use crate::prompt::{Prompt, Reply, ToolCall};
use crate::sse;

/// Reads the last user message — its `text` blocks and the text inside its
/// `tool_result` blocks — and the `tool_use` blocks of the last message.
pub fn read_prompt(body: &Value) -> Result<Prompt, RequestError> {
    let messages = body
        .get("messages")
        .and_then(Value::as_array)
        .ok_or(RequestError::MissingField("messages"))?;
    let last_user_text = messages
        .iter()
        .rev()
        .find(|m| str_field(m, "role") == "user")
        .map(user_text)
        .unwrap_or_default();
    let trailing_tool_calls = messages
        .last()
        .and_then(|m| m.get("content"))
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .filter(|b| str_field(b, "type") == "tool_use")
                .map(|b| ToolCall {
                    id: str_field(b, "id").to_owned(),
                    name: str_field(b, "name").to_owned(),
                    arguments: b.get("input").map(Value::to_string).unwrap_or_default(),
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(Prompt {
        last_user_text,
        trailing_tool_calls,
        stream: body.get("stream").and_then(Value::as_bool) == Some(true),
        model: model_of(body),
        include_usage: false,
    })
}

fn user_text(message: &Value) -> String {
    match message.get("content") {
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|block| match str_field(block, "type") {
                "text" => block.get("text").and_then(Value::as_str).map(str::to_owned),
                "tool_result" => Some(content_text(block.get("content"), &["text"])),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        other => content_text(other, &["text"]),
    }
}

/// Id of a tool call the fake LLM makes up.
pub fn new_call_id(ex: &Exchange) -> String {
    format!("toolu_fake_{}", ex.seq)
}

/// A tool call's `input` object; arguments that are not JSON come back as a
/// string under `raw` rather than failing the answer.
fn input_object(call: &ToolCall) -> Value {
    serde_json::from_str(&call.arguments).unwrap_or_else(|_| json!({"raw": call.arguments}))
}

fn stop_reason(reply: &Reply) -> &'static str {
    match reply {
        Reply::Text(_) => "end_turn",
        Reply::ToolCalls(_) => "tool_use",
    }
}

fn output_tokens(reply: &Reply) -> u64 {
    match reply {
        Reply::Text(text) => rough_tokens(text),
        Reply::ToolCalls(calls) => calls.iter().map(|c| rough_tokens(&c.arguments)).sum(),
    }
}

fn message(ex: &Exchange, content: Vec<Value>, stop: Value, output_tokens: u64) -> Value {
    json!({
        "id": format!("msg_fake_{}", ex.seq),
        "type": "message",
        "role": "assistant",
        "model": ex.model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": null,
        "usage": {
            "input_tokens": ex.input_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": output_tokens,
        },
    })
}

/// The whole answer (a `message`).
pub fn whole(reply: &Reply, ex: &Exchange) -> Value {
    let content = match reply {
        Reply::Text(text) => vec![json!({"type": "text", "text": text})],
        Reply::ToolCalls(calls) => calls
            .iter()
            .map(|c| json!({"type": "tool_use", "id": c.id, "name": c.name, "input": input_object(c)}))
            .collect(),
    };
    message(ex, content, json!(stop_reason(reply)), output_tokens(reply))
}

/// The streamed answer. Tool input is sent as `input_json_delta` pieces of
/// the arguments' JSON text, the first one empty as Anthropic does.
pub fn stream(reply: &Reply, ex: &Exchange, chunk_chars: usize) -> Vec<String> {
    let mut events = Vec::new();
    let mut push = |name: &str, mut data: Value| {
        data["type"] = json!(name);
        events.push(sse::named_event(name, &data));
    };
    push(
        "message_start",
        json!({"message": message(ex, Vec::new(), Value::Null, 1)}),
    );
    let blocks: Vec<(Value, Vec<Value>)> = match reply {
        Reply::Text(text) => vec![(
            json!({"type": "text", "text": ""}),
            split_chars(text, chunk_chars)
                .into_iter()
                .map(|piece| json!({"type": "text_delta", "text": piece}))
                .collect(),
        )],
        Reply::ToolCalls(calls) => calls
            .iter()
            .map(|call| {
                let mut deltas = vec![json!({"type": "input_json_delta", "partial_json": ""})];
                deltas.extend(
                    split_chars(&call.arguments, chunk_chars)
                        .into_iter()
                        .map(|piece| json!({"type": "input_json_delta", "partial_json": piece})),
                );
                (
                    json!({"type": "tool_use", "id": call.id, "name": call.name, "input": {}}),
                    deltas,
                )
            })
            .collect(),
    };
    for (index, (start, deltas)) in blocks.into_iter().enumerate() {
        push(
            "content_block_start",
            json!({"index": index, "content_block": start}),
        );
        if index == 0 {
            push("ping", json!({}));
        }
        for delta in deltas {
            push(
                "content_block_delta",
                json!({"index": index, "delta": delta}),
            );
        }
        push("content_block_stop", json!({"index": index}));
    }
    push(
        "message_delta",
        json!({
            "delta": {"stop_reason": stop_reason(reply), "stop_sequence": null},
            "usage": {"output_tokens": output_tokens(reply)},
        }),
    );
    push("message_stop", json!({}));
    events
}
