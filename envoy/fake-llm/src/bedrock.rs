//! Amazon Bedrock Runtime Converse (`POST /model/{modelId}/converse`) and
//! ConverseStream (`POST /model/{modelId}/converse-stream`): reading
//! `messages[].content[]` blocks, writing a Converse answer, and the stream
//! as `application/vnd.amazon.eventstream` frames (written with the
//! project's one codec, `latet_core::eventstream`): `messageStart`,
//! `contentBlockStart` (tool use only), `contentBlockDelta`…,
//! `contentBlockStop`, `messageStop`, `metadata`, each payload with the
//! padding field `p` Bedrock adds. Keys in Bedrock's order.

use latet_core::eventstream::encode_event;
use serde_json::Value;

use crate::exchange::{Exchange, RequestError};
use crate::jobj;
use crate::ordered_json::Json;
use crate::prompt::{blocks, read_turns, rough_tokens, split_chars, str_field, Turns};
use crate::prompt::{Prompt, Reply, ToolCall};

/// Reads the last `user` message — its `text` blocks and the text (or JSON)
/// inside its `toolResult` blocks — and the `toolUse` blocks of the last
/// message.
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
                    .filter_map(|b| b.get("toolUse"))
                    .map(|call| ToolCall {
                        id: str_field(call, "toolUseId").to_owned(),
                        name: str_field(call, "name").to_owned(),
                        arguments: call.get("input").map(Value::to_string).unwrap_or_default(),
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

fn user_text(message: &Value) -> String {
    let Some(blocks) = message.get("content").and_then(Value::as_array) else {
        return String::new();
    };
    let mut texts = Vec::new();
    for block in blocks {
        if let Some(text) = block.get("text").and_then(Value::as_str) {
            texts.push(text.to_owned());
        }
        let results = block
            .pointer("/toolResult/content")
            .and_then(Value::as_array);
        for item in results.into_iter().flatten() {
            if let Some(text) = item.get("text").and_then(Value::as_str) {
                texts.push(text.to_owned());
            } else if let Some(json) = item.get("json") {
                texts.push(json.to_string());
            }
        }
    }
    texts.join("\n")
}

/// Id of a tool use the fake LLM makes up.
pub fn new_call_id(ex: &Exchange) -> String {
    format!("tooluse_fake_{}", ex.seq)
}

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

fn usage(ex: &Exchange, reply: &Reply) -> Json {
    let output = match reply {
        Reply::Text(text) => rough_tokens(text),
        Reply::ToolCalls(calls) => calls.iter().map(|c| rough_tokens(&c.arguments)).sum(),
    };
    jobj! {
        "inputTokens": ex.input_tokens,
        "outputTokens": output,
        "totalTokens": ex.input_tokens + output,
    }
}

/// The whole answer (Converse).
pub fn whole(reply: &Reply, ex: &Exchange) -> Json {
    let content: Vec<Json> = match reply {
        Reply::Text(text) => vec![jobj! {"text": text}],
        Reply::ToolCalls(calls) => calls
            .iter()
            .map(|c| {
                jobj! {"toolUse": jobj! {
                    "toolUseId": &c.id,
                    "name": &c.name,
                    "input": input_object(c),
                }}
            })
            .collect(),
    };
    jobj! {
        "output": jobj! {"message": jobj! {"role": "assistant", "content": content}},
        "stopReason": stop_reason(reply),
        "usage": usage(ex, reply),
        "metrics": jobj! {"latencyMs": 42u64},
    }
}

/// Bedrock pads each event's payload with a field `p` of random length
/// (so that sizes do not tell token lengths); here its length follows the
/// event's position, the same for the same answer.
const PADDING: &str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0";

/// Collects event frames; each payload ends with `p`.
struct FrameSequence(Vec<Vec<u8>>);

impl FrameSequence {
    fn push(&mut self, event_type: &str, mut payload: Json) {
        let length = 1 + (self.0.len() * 7) % (PADDING.len() - 1);
        payload.set("p", &PADDING[..length]);
        self.0
            .push(encode_event(event_type, payload.to_string().as_bytes()));
    }
}

/// The streamed answer, one frame per write: text in deltas of at most
/// `chunk_chars` characters; each tool use opened by `contentBlockStart`
/// (`toolUseId`, `name`) and its input sent as pieces of its JSON text.
pub fn stream(reply: &Reply, ex: &Exchange, chunk_chars: usize) -> Vec<Vec<u8>> {
    let mut frames = FrameSequence(Vec::new());
    frames.push("messageStart", jobj! {"role": "assistant"});
    match reply {
        Reply::Text(text) => {
            for piece in split_chars(text, chunk_chars) {
                frames.push(
                    "contentBlockDelta",
                    jobj! {"contentBlockIndex": 0u64, "delta": jobj! {"text": piece}},
                );
            }
            frames.push("contentBlockStop", jobj! {"contentBlockIndex": 0u64});
        }
        Reply::ToolCalls(calls) => {
            for (index, call) in calls.iter().enumerate() {
                frames.push(
                    "contentBlockStart",
                    jobj! {
                        "contentBlockIndex": index,
                        "start": jobj! {"toolUse": jobj! {"toolUseId": &call.id, "name": &call.name}},
                    },
                );
                for piece in split_chars(&call.arguments, chunk_chars) {
                    frames.push(
                        "contentBlockDelta",
                        jobj! {
                            "contentBlockIndex": index,
                            "delta": jobj! {"toolUse": jobj! {"input": piece}},
                        },
                    );
                }
                frames.push("contentBlockStop", jobj! {"contentBlockIndex": index});
            }
        }
    }
    frames.push("messageStop", jobj! {"stopReason": stop_reason(reply)});
    frames.push(
        "metadata",
        jobj! {"usage": usage(ex, reply), "metrics": jobj! {"latencyMs": 42u64}},
    );
    frames.0
}

/// The error type Bedrock names in `x-amzn-errortype` for a status.
pub fn error_type(status: u16) -> &'static str {
    match status {
        400 => "ValidationException",
        403 => "AccessDeniedException",
        404 => "ResourceNotFoundException",
        408 => "ModelTimeoutException",
        424 => "ModelErrorException",
        429 => "ThrottlingException",
        503 => "ServiceUnavailableException",
        _ => "InternalServerException",
    }
}

/// Bedrock's error body: `{"message": …}` (the type is in the header).
pub fn error_body(message: &str) -> Json {
    jobj! {"message": message}
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use latet_core::eventstream::FrameReader;

    #[test]
    fn every_frame_reads_back_with_its_padding() {
        let ex = Exchange {
            seq: 1,
            created: 0,
            model: "m".into(),
            input_tokens: 1,
            include_usage: false,
        };
        let frames = stream(&Reply::Text("x".repeat(40)), &ex, 1);
        // messageStart, 40 deltas, contentBlockStop, messageStop, metadata.
        assert_eq!(frames.len(), 44);
        let mut reader = FrameReader::default();
        reader.push(&frames.concat());
        let mut count = 0;
        while let Some(raw) = reader.next_frame().unwrap() {
            let frame = raw.decode().unwrap();
            assert_eq!(frame.message_type(), Some("event"));
            let payload: Value = serde_json::from_slice(&frame.payload).unwrap();
            assert!(!payload["p"].as_str().unwrap().is_empty());
            count += 1;
        }
        assert_eq!(count, 44);
    }
}
