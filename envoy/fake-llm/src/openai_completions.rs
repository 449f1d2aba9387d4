//! OpenAI legacy completions (`POST /v1/completions`, and Azure's
//! `/openai/deployments/{name}/completions`): `prompt` as a string or an
//! array of strings, one choice per prompt echoing it; streamed as
//! `text_completion` chunks with `choices[].text` deltas, a finish chunk per
//! choice, the usage chunk when asked and `data: [DONE]`. No tool calls:
//! the API has none.

use serde_json::Value;

use crate::exchange::{Exchange, RequestError};
use crate::ordered_json::Json;
use crate::prompt::{model_of, rough_tokens, split_chars, Prompt};
use crate::{jarr, jobj, sse};

/// Reads `prompt`: a string, or an array whose string items are prompts
/// (token-id arrays carry no text and echo as empty).
pub fn read_prompt(body: &Value) -> Result<Prompt, RequestError> {
    let prompts: Vec<String> = match body.get("prompt") {
        Some(Value::String(text)) => vec![text.clone()],
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| item.as_str().unwrap_or_default().to_owned())
            .collect(),
        _ => return Err(RequestError::MissingField("prompt")),
    };
    Ok(Prompt {
        last_user_text: prompts.last().cloned().unwrap_or_default(),
        trailing_tool_calls: Vec::new(),
        stream: body.get("stream").and_then(Value::as_bool) == Some(true),
        model: model_of(body),
        include_usage: body
            .pointer("/stream_options/include_usage")
            .and_then(Value::as_bool)
            == Some(true),
        prompts,
    })
}

fn completion_id(ex: &Exchange) -> String {
    format!("cmpl-fake-{}", ex.seq)
}

fn usage(prompt: &Prompt) -> Json {
    let tokens: u64 = prompt.prompts.iter().map(|p| rough_tokens(p)).sum();
    jobj! {
        "prompt_tokens": tokens,
        "completion_tokens": tokens,
        "total_tokens": 2 * tokens,
    }
}

fn choice(index: usize, text: &str, finish_reason: Option<&str>) -> Json {
    jobj! {
        "text": text,
        "index": index,
        "logprobs": Json::Null,
        "finish_reason": finish_reason,
    }
}

/// The whole answer (`text_completion`): choice `i` echoes prompt `i`.
pub fn whole(prompt: &Prompt, ex: &Exchange) -> Json {
    let choices: Vec<Json> = prompt
        .prompts
        .iter()
        .enumerate()
        .map(|(i, text)| choice(i, text, Some("stop")))
        .collect();
    jobj! {
        "id": completion_id(ex),
        "object": "text_completion",
        "created": ex.created,
        "model": &ex.model,
        "choices": choices,
        "usage": usage(prompt),
    }
}

fn chunk(ex: &Exchange, choices: Json) -> Json {
    jobj! {
        "id": completion_id(ex),
        "object": "text_completion",
        "created": ex.created,
        "choices": choices,
        "model": &ex.model,
    }
}

/// The streamed answer: each prompt's echo in pieces of at most
/// `chunk_chars` characters, choice after choice, then a finish chunk per
/// choice, the usage chunk when asked, `[DONE]`.
pub fn stream(prompt: &Prompt, ex: &Exchange, chunk_chars: usize) -> Vec<String> {
    let mut events = Vec::new();
    for (index, text) in prompt.prompts.iter().enumerate() {
        for piece in split_chars(text, chunk_chars) {
            let data = chunk(ex, jarr![choice(index, &piece, None)]);
            events.push(sse::data_event(&data));
        }
    }
    for index in 0..prompt.prompts.len() {
        let data = chunk(ex, jarr![choice(index, "", Some("stop"))]);
        events.push(sse::data_event(&data));
    }
    if ex.include_usage {
        let mut data = chunk(ex, jarr![]);
        data.set("usage", usage(prompt));
        events.push(sse::data_event(&data));
    }
    events.push(sse::DONE.to_owned());
    events
}
