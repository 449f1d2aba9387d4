//! OpenAI Responses (`POST /v1/responses`): reading a request, writing a
//! whole `response` object and a streamed one (`response.created` …
//! `response.output_text.delta` … `response.completed`).

use serde_json::{json, Value};

use crate::exchange::{Exchange, RequestError};
use crate::prompt::{content_text, model_of, rough_tokens, split_chars, str_field};
use crate::prompt::{Prompt, Reply, ToolCall};
use crate::sse;

/// Text part types of an input message.
const TEXT_PARTS: &[&str] = &["input_text", "output_text", "text"];

/// Reads `input` (a string, or items): the last item with role `user`, and
/// the `function_call` items the input ends with.
pub fn read_prompt(body: &Value) -> Result<Prompt, RequestError> {
    let (last_user_text, trailing_tool_calls) = match body.get("input") {
        Some(Value::String(text)) => (text.clone(), Vec::new()),
        Some(Value::Array(items)) => {
            let text = items
                .iter()
                .rev()
                .find(|item| str_field(item, "role") == "user")
                .map(|item| content_text(item.get("content"), TEXT_PARTS))
                .unwrap_or_default();
            let mut calls: Vec<ToolCall> = items
                .iter()
                .rev()
                .take_while(|item| str_field(item, "type") == "function_call")
                .map(|item| ToolCall {
                    id: str_field(item, "call_id").to_owned(),
                    name: str_field(item, "name").to_owned(),
                    arguments: str_field(item, "arguments").to_owned(),
                })
                .collect();
            calls.reverse();
            (text, calls)
        }
        _ => return Err(RequestError::MissingField("input")),
    };
    Ok(Prompt {
        last_user_text,
        trailing_tool_calls,
        stream: body.get("stream").and_then(Value::as_bool) == Some(true),
        model: model_of(body),
        include_usage: false,
    })
}

/// Id of a tool call the fake LLM makes up.
pub fn new_call_id(ex: &Exchange) -> String {
    format!("call_fake_{}", ex.seq)
}

fn message_id(ex: &Exchange) -> String {
    format!("msg_fake_{}", ex.seq)
}

fn function_item_id(ex: &Exchange, index: usize) -> String {
    format!("fc_fake_{}_{index}", ex.seq)
}

fn output_text_part(text: &str) -> Value {
    json!({"type": "output_text", "annotations": [], "logprobs": [], "text": text})
}

fn message_item(ex: &Exchange, status: &str, content: Vec<Value>) -> Value {
    json!({
        "id": message_id(ex),
        "type": "message",
        "status": status,
        "content": content,
        "role": "assistant",
    })
}

fn function_item(
    ex: &Exchange,
    index: usize,
    call: &ToolCall,
    status: &str,
    arguments: &str,
) -> Value {
    json!({
        "id": function_item_id(ex, index),
        "type": "function_call",
        "status": status,
        "arguments": arguments,
        "call_id": call.id,
        "name": call.name,
    })
}

fn output_items(reply: &Reply, ex: &Exchange) -> Vec<Value> {
    match reply {
        Reply::Text(text) => vec![message_item(ex, "completed", vec![output_text_part(text)])],
        Reply::ToolCalls(calls) => calls
            .iter()
            .enumerate()
            .map(|(index, call)| function_item(ex, index, call, "completed", &call.arguments))
            .collect(),
    }
}

fn response_object(ex: &Exchange, status: &str, output: Vec<Value>, usage: Value) -> Value {
    json!({
        "id": format!("resp_fake_{}", ex.seq),
        "object": "response",
        "created_at": ex.created,
        "status": status,
        "error": null,
        "incomplete_details": null,
        "instructions": null,
        "max_output_tokens": null,
        "model": ex.model,
        "output": output,
        "parallel_tool_calls": true,
        "previous_response_id": null,
        "store": false,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": usage,
        "metadata": {},
    })
}

fn usage(ex: &Exchange, reply: &Reply) -> Value {
    let output = match reply {
        Reply::Text(text) => rough_tokens(text),
        Reply::ToolCalls(calls) => calls.iter().map(|c| rough_tokens(&c.arguments)).sum(),
    };
    json!({
        "input_tokens": ex.input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": ex.input_tokens + output,
    })
}

/// The whole answer (a `response` object, status `completed`).
pub fn whole(reply: &Reply, ex: &Exchange) -> Value {
    response_object(ex, "completed", output_items(reply, ex), usage(ex, reply))
}

/// The streamed answer, with `sequence_number` counting from 0.
pub fn stream(reply: &Reply, ex: &Exchange, chunk_chars: usize) -> Vec<String> {
    let mut events = Vec::new();
    let mut push = |name: &str, mut data: Value| {
        data["type"] = json!(name);
        data["sequence_number"] = json!(events.len());
        events.push(sse::named_event(name, &data));
    };
    let in_progress = response_object(ex, "in_progress", Vec::new(), Value::Null);
    push("response.created", json!({"response": in_progress}));
    push("response.in_progress", json!({"response": in_progress}));
    match reply {
        Reply::Text(text) => {
            let item_id = message_id(ex);
            push(
                "response.output_item.added",
                json!({"output_index": 0, "item": message_item(ex, "in_progress", Vec::new())}),
            );
            push(
                "response.content_part.added",
                json!({"item_id": item_id, "output_index": 0, "content_index": 0, "part": output_text_part("")}),
            );
            for piece in split_chars(text, chunk_chars) {
                push(
                    "response.output_text.delta",
                    json!({"item_id": item_id, "output_index": 0, "content_index": 0, "delta": piece, "logprobs": []}),
                );
            }
            push(
                "response.output_text.done",
                json!({"item_id": item_id, "output_index": 0, "content_index": 0, "text": text, "logprobs": []}),
            );
            push(
                "response.content_part.done",
                json!({"item_id": item_id, "output_index": 0, "content_index": 0, "part": output_text_part(text)}),
            );
            push(
                "response.output_item.done",
                json!({"output_index": 0, "item": message_item(ex, "completed", vec![output_text_part(text)])}),
            );
        }
        Reply::ToolCalls(calls) => {
            for (index, call) in calls.iter().enumerate() {
                let item_id = function_item_id(ex, index);
                push(
                    "response.output_item.added",
                    json!({"output_index": index, "item": function_item(ex, index, call, "in_progress", "")}),
                );
                for piece in split_chars(&call.arguments, chunk_chars) {
                    push(
                        "response.function_call_arguments.delta",
                        json!({"item_id": item_id, "output_index": index, "delta": piece}),
                    );
                }
                push(
                    "response.function_call_arguments.done",
                    json!({"item_id": item_id, "output_index": index, "name": call.name, "arguments": call.arguments}),
                );
                push(
                    "response.output_item.done",
                    json!({"output_index": index, "item": function_item(ex, index, call, "completed", &call.arguments)}),
                );
            }
        }
    }
    push("response.completed", json!({"response": whole(reply, ex)}));
    events
}
