//! OpenAI Chat Completions (`POST /v1/chat/completions`): reading a request,
//! writing a whole answer and a streamed one (`chat.completion.chunk` events
//! then `data: [DONE]`), keys in OpenAI's order.

use serde_json::Value;

use crate::exchange::{Exchange, RequestError};
use crate::ordered_json::Json;
use crate::prompt::{
    blocks, content_text, model_of, read_turns, rough_tokens, split_chars, str_field, Turns,
};
use crate::prompt::{Prompt, Reply, ToolCall};
use crate::{jarr, jobj, sse};

/// Reads the last user message (`content` as a string or `text` parts) and
/// the tool calls of the last message (`tool_calls` on an assistant message).
pub fn read_prompt(body: &Value) -> Result<Prompt, RequestError> {
    let (last_user_text, trailing_tool_calls) = read_turns(
        body,
        &Turns {
            list: "messages",
            is_user: |m| str_field(m, "role") == "user",
            user_text: |m| content_text(m.get("content"), &["text"]),
            tool_calls: |m| blocks(m, "tool_calls").iter().map(read_tool_call).collect(),
        },
    )?;
    Ok(Prompt {
        last_user_text,
        trailing_tool_calls,
        stream: body.get("stream").and_then(Value::as_bool) == Some(true),
        model: model_of(body),
        include_usage: body
            .pointer("/stream_options/include_usage")
            .and_then(Value::as_bool)
            == Some(true),
        prompts: Vec::new(),
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

fn completion_id(ex: &Exchange) -> String {
    format!("chatcmpl-fake-{}", ex.seq)
}

fn output_tokens(reply: &Reply) -> u64 {
    match reply {
        Reply::Text(text) => rough_tokens(text),
        Reply::ToolCalls(calls) => calls.iter().map(|c| rough_tokens(&c.arguments)).sum(),
    }
}

fn usage(ex: &Exchange, reply: &Reply) -> Json {
    let output = output_tokens(reply);
    jobj! {
        "prompt_tokens": ex.input_tokens,
        "completion_tokens": output,
        "total_tokens": ex.input_tokens + output,
    }
}

/// The whole answer (`chat.completion`).
pub fn whole(reply: &Reply, ex: &Exchange) -> Json {
    let (message, finish_reason) = match reply {
        Reply::Text(text) => (
            jobj! {"role": "assistant", "content": text, "refusal": Json::Null, "annotations": jarr![]},
            "stop",
        ),
        Reply::ToolCalls(calls) => (
            jobj! {
                "role": "assistant",
                "content": Json::Null,
                "tool_calls": calls.iter().map(|c| jobj! {
                    "id": &c.id,
                    "type": "function",
                    "function": jobj! {"name": &c.name, "arguments": &c.arguments},
                }).collect::<Vec<_>>(),
                "refusal": Json::Null,
                "annotations": jarr![],
            },
            "tool_calls",
        ),
    };
    jobj! {
        "id": completion_id(ex),
        "object": "chat.completion",
        "created": ex.created,
        "model": &ex.model,
        "choices": jarr![jobj! {
            "index": 0u64,
            "message": message,
            "logprobs": Json::Null,
            "finish_reason": finish_reason,
        }],
        "usage": usage(ex, reply),
        "service_tier": "default",
        "system_fingerprint": Json::Null,
    }
}

fn chunk(ex: &Exchange, choices: Json, usage: Option<Json>) -> String {
    let mut event = jobj! {
        "id": completion_id(ex),
        "object": "chat.completion.chunk",
        "created": ex.created,
        "model": &ex.model,
        "service_tier": "default",
        "system_fingerprint": Json::Null,
        "choices": choices,
    };
    if ex.include_usage {
        event.set("usage", usage);
    }
    sse::data_event(&event)
}

fn delta_chunk(ex: &Exchange, delta: Json, finish_reason: Option<&str>) -> String {
    let choice = jobj! {
        "index": 0u64,
        "delta": delta,
        "logprobs": Json::Null,
        "finish_reason": finish_reason,
    };
    chunk(ex, jarr![choice], None)
}

/// The streamed answer: one event per piece of at most `chunk_chars`
/// characters, then the finish chunk, the usage chunk when asked, `[DONE]`.
pub fn stream(reply: &Reply, ex: &Exchange, chunk_chars: usize) -> Vec<String> {
    let mut events = Vec::new();
    let finish_reason = match reply {
        Reply::Text(text) => {
            events.push(delta_chunk(
                ex,
                jobj! {"role": "assistant", "content": "", "refusal": Json::Null},
                None,
            ));
            for piece in split_chars(text, chunk_chars) {
                events.push(delta_chunk(ex, jobj! {"content": piece}, None));
            }
            "stop"
        }
        Reply::ToolCalls(calls) => {
            for (index, call) in calls.iter().enumerate() {
                let opening_call = jobj! {
                    "index": index,
                    "id": &call.id,
                    "type": "function",
                    "function": jobj! {"name": &call.name, "arguments": ""},
                };
                let opening = if index == 0 {
                    jobj! {"role": "assistant", "content": Json::Null, "tool_calls": jarr![opening_call]}
                } else {
                    jobj! {"tool_calls": jarr![opening_call]}
                };
                events.push(delta_chunk(ex, opening, None));
                for piece in split_chars(&call.arguments, chunk_chars) {
                    let delta = jobj! {
                        "tool_calls": jarr![jobj! {"index": index, "function": jobj! {"arguments": piece}}],
                    };
                    events.push(delta_chunk(ex, delta, None));
                }
            }
            "tool_calls"
        }
    };
    events.push(delta_chunk(ex, jobj! {}, Some(finish_reason)));
    if ex.include_usage {
        events.push(chunk(ex, jarr![], Some(usage(ex, reply))));
    }
    events.push(sse::DONE.to_owned());
    events
}
