//! OpenAI Responses (`POST /v1/responses`): reading a request, writing a
//! whole `response` object and a streamed one (`response.created` …
//! `response.output_text.delta` … `response.completed`), keys in OpenAI's
//! order.

use serde_json::Value;

use crate::exchange::{Exchange, RequestError};
use crate::ordered_json::Json;
use crate::prompt::{content_text, model_of, rough_tokens, split_chars, str_field};
use crate::prompt::{Prompt, Reply, ToolCall};
use crate::{jarr, jobj, sse};

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
        prompts: Vec::new(),
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

fn output_text_part(text: &str) -> Json {
    jobj! {"type": "output_text", "annotations": jarr![], "logprobs": jarr![], "text": text}
}

fn message_item(ex: &Exchange, status: &str, content: Vec<Json>) -> Json {
    jobj! {
        "id": message_id(ex),
        "type": "message",
        "status": status,
        "content": content,
        "role": "assistant",
    }
}

fn function_item(
    ex: &Exchange,
    index: usize,
    call: &ToolCall,
    status: &str,
    arguments: &str,
) -> Json {
    jobj! {
        "id": function_item_id(ex, index),
        "type": "function_call",
        "status": status,
        "arguments": arguments,
        "call_id": &call.id,
        "name": &call.name,
    }
}

fn output_items(reply: &Reply, ex: &Exchange) -> Vec<Json> {
    match reply {
        Reply::Text(text) => vec![message_item(ex, "completed", vec![output_text_part(text)])],
        Reply::ToolCalls(calls) => calls
            .iter()
            .enumerate()
            .map(|(index, call)| function_item(ex, index, call, "completed", &call.arguments))
            .collect(),
    }
}

fn response_object(ex: &Exchange, status: &str, output: Vec<Json>, usage: Json) -> Json {
    jobj! {
        "id": format!("resp_fake_{}", ex.seq),
        "object": "response",
        "created_at": ex.created,
        "status": status,
        "background": false,
        "error": Json::Null,
        "incomplete_details": Json::Null,
        "instructions": Json::Null,
        "max_output_tokens": Json::Null,
        "model": &ex.model,
        "output": output,
        "parallel_tool_calls": true,
        "previous_response_id": Json::Null,
        "store": false,
        "temperature": 1.0,
        "text": jobj! {"format": jobj! {"type": "text"}},
        "tool_choice": "auto",
        "tools": jarr![],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": usage,
        "user": Json::Null,
        "metadata": jobj! {},
    }
}

fn usage(ex: &Exchange, reply: &Reply) -> Json {
    let output = match reply {
        Reply::Text(text) => rough_tokens(text),
        Reply::ToolCalls(calls) => calls.iter().map(|c| rough_tokens(&c.arguments)).sum(),
    };
    jobj! {
        "input_tokens": ex.input_tokens,
        "input_tokens_details": jobj! {"cached_tokens": 0u64},
        "output_tokens": output,
        "output_tokens_details": jobj! {"reasoning_tokens": 0u64},
        "total_tokens": ex.input_tokens + output,
    }
}

/// The whole answer (a `response` object, status `completed`).
pub fn whole(reply: &Reply, ex: &Exchange) -> Json {
    response_object(ex, "completed", output_items(reply, ex), usage(ex, reply))
}

/// Collects named events; each event's data starts with its `type` and
/// `sequence_number` (from 0), as OpenAI writes them.
struct EventSequence(Vec<String>);

impl EventSequence {
    fn push(&mut self, name: &str, fields: Json) {
        let mut data = jobj! {"type": name, "sequence_number": self.0.len()};
        if let (Json::Obj(head), Json::Obj(rest)) = (&mut data, fields) {
            head.extend(rest);
        }
        self.0.push(sse::named_event(name, &data));
    }
}

/// The streamed answer.
pub fn stream(reply: &Reply, ex: &Exchange, chunk_chars: usize) -> Vec<String> {
    let mut events = EventSequence(Vec::new());
    let in_progress = response_object(ex, "in_progress", Vec::new(), Json::Null);
    events.push("response.created", jobj! {"response": in_progress.clone()});
    events.push("response.in_progress", jobj! {"response": in_progress});
    match reply {
        Reply::Text(text) => {
            let item_id = message_id(ex);
            events.push(
                "response.output_item.added",
                jobj! {"output_index": 0u64, "item": message_item(ex, "in_progress", Vec::new())},
            );
            events.push(
                "response.content_part.added",
                jobj! {"item_id": &item_id, "output_index": 0u64, "content_index": 0u64, "part": output_text_part("")},
            );
            for piece in split_chars(text, chunk_chars) {
                events.push(
                    "response.output_text.delta",
                    jobj! {"item_id": &item_id, "output_index": 0u64, "content_index": 0u64, "delta": piece, "logprobs": jarr![]},
                );
            }
            events.push(
                "response.output_text.done",
                jobj! {"item_id": &item_id, "output_index": 0u64, "content_index": 0u64, "text": text, "logprobs": jarr![]},
            );
            events.push(
                "response.content_part.done",
                jobj! {"item_id": &item_id, "output_index": 0u64, "content_index": 0u64, "part": output_text_part(text)},
            );
            events.push(
                "response.output_item.done",
                jobj! {"output_index": 0u64, "item": message_item(ex, "completed", vec![output_text_part(text)])},
            );
        }
        Reply::ToolCalls(calls) => {
            for (index, call) in calls.iter().enumerate() {
                let item_id = function_item_id(ex, index);
                events.push(
                    "response.output_item.added",
                    jobj! {"output_index": index, "item": function_item(ex, index, call, "in_progress", "")},
                );
                for piece in split_chars(&call.arguments, chunk_chars) {
                    events.push(
                        "response.function_call_arguments.delta",
                        jobj! {"item_id": &item_id, "output_index": index, "delta": piece},
                    );
                }
                events.push(
                    "response.function_call_arguments.done",
                    jobj! {"item_id": &item_id, "output_index": index, "name": &call.name, "arguments": &call.arguments},
                );
                events.push(
                    "response.output_item.done",
                    jobj! {"output_index": index, "item": function_item(ex, index, call, "completed", &call.arguments)},
                );
            }
        }
    }
    events.push("response.completed", jobj! {"response": whole(reply, ex)});
    events.0
}
