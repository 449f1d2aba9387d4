//! Anthropic Messages (`POST /v1/messages`): reading a request, writing a
//! whole `message` and a streamed one (`message_start`,
//! `content_block_start`, `ping`, `content_block_delta`, `content_block_stop`,
//! `message_delta`, `message_stop`), keys in Anthropic's order.

use serde_json::Value;

use crate::exchange::{Exchange, RequestError};
use crate::ordered_json::Json;
use crate::prompt::{
    blocks, content_text, model_of, read_turns, rough_tokens, split_chars, str_field, Turns,
};
use crate::prompt::{Prompt, Reply, ToolCall};
use crate::{jobj, sse};

/// Reads the last user message — its `text` blocks and the text inside its
/// `tool_result` blocks — and the `tool_use` blocks of the last message.
pub fn read_prompt(body: &Value) -> Result<Prompt, RequestError> {
    let (last_user_text, trailing_tool_calls) = read_turns(
        body,
        &Turns {
            list: "messages",
            is_user: |m| str_field(m, "role") == "user",
            user_text,
            tool_calls: |m| {
                blocks(m, "content")
                    .iter()
                    .filter(|b| str_field(b, "type") == "tool_use")
                    .map(|b| ToolCall {
                        id: str_field(b, "id").to_owned(),
                        name: str_field(b, "name").to_owned(),
                        arguments: b.get("input").map(Value::to_string).unwrap_or_default(),
                    })
                    .collect()
            },
        },
    )?;
    Ok(Prompt {
        last_user_text,
        trailing_tool_calls,
        stream: body.get("stream").and_then(Value::as_bool) == Some(true),
        model: model_of(body),
        include_usage: false,
        prompts: Vec::new(),
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
fn input_object(call: &ToolCall) -> Json {
    match serde_json::from_str::<Value>(&call.arguments) {
        Ok(value) => Json::from(&value),
        Err(_) => jobj! {"raw": &call.arguments},
    }
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

fn message(ex: &Exchange, content: Vec<Json>, stop: Option<&str>, output_tokens: u64) -> Json {
    jobj! {
        "id": format!("msg_fake_{}", ex.seq),
        "type": "message",
        "role": "assistant",
        "model": &ex.model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": Json::Null,
        "usage": jobj! {
            "input_tokens": ex.input_tokens,
            "cache_creation_input_tokens": 0u64,
            "cache_read_input_tokens": 0u64,
            "output_tokens": output_tokens,
        },
    }
}

/// The whole answer (a `message`).
pub fn whole(reply: &Reply, ex: &Exchange) -> Json {
    let content = match reply {
        Reply::Text(text) => vec![jobj! {"type": "text", "text": text}],
        Reply::ToolCalls(calls) => calls
            .iter()
            .map(|c| jobj! {"type": "tool_use", "id": &c.id, "name": &c.name, "input": input_object(c)})
            .collect(),
    };
    message(ex, content, Some(stop_reason(reply)), output_tokens(reply))
}

/// Collects named events; each event's data starts with its `type`.
struct EventSequence(Vec<String>);

impl EventSequence {
    fn push(&mut self, name: &str, fields: Json) {
        let mut data = jobj! {"type": name};
        if let (Json::Obj(head), Json::Obj(rest)) = (&mut data, fields) {
            head.extend(rest);
        }
        self.0.push(sse::named_event(name, &data));
    }
}

/// The streamed answer. Tool input is sent as `input_json_delta` pieces of
/// the arguments' JSON text, the first one empty as Anthropic does.
pub fn stream(reply: &Reply, ex: &Exchange, chunk_chars: usize) -> Vec<String> {
    let mut events = EventSequence(Vec::new());
    events.push(
        "message_start",
        jobj! {"message": message(ex, Vec::new(), None, 1)},
    );
    let blocks: Vec<(Json, Vec<Json>)> = match reply {
        Reply::Text(text) => vec![(
            jobj! {"type": "text", "text": ""},
            split_chars(text, chunk_chars)
                .into_iter()
                .map(|piece| jobj! {"type": "text_delta", "text": piece})
                .collect(),
        )],
        Reply::ToolCalls(calls) => calls
            .iter()
            .map(|call| {
                let mut deltas = vec![jobj! {"type": "input_json_delta", "partial_json": ""}];
                deltas.extend(
                    split_chars(&call.arguments, chunk_chars)
                        .into_iter()
                        .map(|piece| jobj! {"type": "input_json_delta", "partial_json": piece}),
                );
                (
                    jobj! {"type": "tool_use", "id": &call.id, "name": &call.name, "input": jobj! {}},
                    deltas,
                )
            })
            .collect(),
    };
    for (index, (start, deltas)) in blocks.into_iter().enumerate() {
        events.push(
            "content_block_start",
            jobj! {"index": index, "content_block": start},
        );
        if index == 0 {
            events.push("ping", jobj! {});
        }
        for delta in deltas {
            events.push(
                "content_block_delta",
                jobj! {"index": index, "delta": delta},
            );
        }
        events.push("content_block_stop", jobj! {"index": index});
    }
    events.push(
        "message_delta",
        jobj! {
            "delta": jobj! {"stop_reason": stop_reason(reply), "stop_sequence": Json::Null},
            "usage": jobj! {"output_tokens": output_tokens(reply)},
        },
    );
    events.push("message_stop", jobj! {});
    events.0
}

/// `POST /v1/messages/count_tokens`: `{"input_tokens": N}`, N a rough count
/// of the last user message (the body is a Messages request without
/// `max_tokens`).
pub fn count_tokens(body: &Value) -> Result<Json, RequestError> {
    let prompt = read_prompt(body)?;
    Ok(jobj! {"input_tokens": rough_tokens(&prompt.last_user_text)})
}

/// `POST /v1/messages/batches`: creates nothing, answers the
/// `message_batch` object of a batch in progress with one request counted
/// per item of `requests` (`{custom_id, params}`). What matters is what
/// the request log shows the provider received.
pub fn create_batch(body: &Value, ex: &Exchange) -> Result<Json, RequestError> {
    let requests = body
        .get("requests")
        .and_then(Value::as_array)
        .ok_or(RequestError::MissingField("requests"))?;
    Ok(jobj! {
        "id": format!("msgbatch_fake_{}", ex.seq),
        "type": "message_batch",
        "processing_status": "in_progress",
        "request_counts": jobj! {
            "processing": requests.len(),
            "succeeded": 0u64,
            "errored": 0u64,
            "canceled": 0u64,
            "expired": 0u64,
        },
        "ended_at": Json::Null,
        "created_at": "2025-01-01T00:00:00Z",
        "expires_at": "2025-01-02T00:00:00Z",
        "archived_at": Json::Null,
        "cancel_initiated_at": Json::Null,
        "results_url": Json::Null,
    })
}
