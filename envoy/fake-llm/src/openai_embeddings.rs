//! OpenAI embeddings (`POST /v1/embeddings`, and Azure's
//! `/openai/deployments/{name}/embeddings`): `input` as a string or an array
//! (of strings, or of token ids); one embedding per input, made from the
//! bytes the fake received, so the same input always gives the same vector.
//! `encoding_format: "base64"` (what the `openai` Python SDK asks for by
//! default) gives the floats as little-endian `f32` bytes in base64.

use base64::Engine as _;
use serde_json::Value;

use crate::exchange::{Exchange, RequestError};
use crate::jobj;
use crate::ordered_json::Json;
use crate::prompt::{model_of, rough_tokens};

/// Floats per embedding: enough to tell inputs apart, small to read.
pub const DIMENSIONS: usize = 8;

/// The embedding of `input`: FNV-1a over its bytes, each float from a
/// 64-bit step of the hash, in [-1, 1). Deterministic across runs.
pub fn embed(input: &str) -> Vec<f32> {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in input.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    (0..DIMENSIONS)
        .map(|i| {
            hash ^= i as u64;
            hash = hash.wrapping_mul(0x0100_0000_01b3);
            // The top 24 bits: exact in an f32.
            ((hash >> 40) as f32 / (1u64 << 23) as f32) - 1.0
        })
        .collect()
}

/// The inputs as text: a string, an array of strings, or token-id arrays
/// (written as their JSON text: they carry no readable value).
fn inputs(body: &Value) -> Result<Vec<String>, RequestError> {
    match body.get("input") {
        Some(Value::String(text)) => Ok(vec![text.clone()]),
        Some(Value::Array(items)) if items.iter().all(Value::is_number) => {
            Ok(vec![Value::Array(items.clone()).to_string()])
        }
        Some(Value::Array(items)) => Ok(items
            .iter()
            .map(|item| match item {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            })
            .collect()),
        _ => Err(RequestError::MissingField("input")),
    }
}

/// The answer: a `list` of `embedding` objects and `usage`.
pub fn answer(body: &Value, _ex: &Exchange) -> Result<Json, RequestError> {
    let inputs = inputs(body)?;
    let base64 = body.get("encoding_format").and_then(Value::as_str) == Some("base64");
    let data: Vec<Json> = inputs
        .iter()
        .enumerate()
        .map(|(index, input)| {
            let floats = embed(input);
            let embedding = if base64 {
                let bytes: Vec<u8> = floats.iter().flat_map(|f| f.to_le_bytes()).collect();
                Json::from(base64::engine::general_purpose::STANDARD.encode(bytes))
            } else {
                Json::Arr(floats.iter().map(|f| Json::Float(f64::from(*f))).collect())
            };
            jobj! {"object": "embedding", "index": index, "embedding": embedding}
        })
        .collect();
    let tokens: u64 = inputs.iter().map(|i| rough_tokens(i)).sum();
    Ok(jobj! {
        "object": "list",
        "data": data,
        "model": model_of(body),
        "usage": jobj! {"prompt_tokens": tokens, "total_tokens": tokens},
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embeddings_are_deterministic_and_bounded() {
        let a = embed("hello");
        assert_eq!(a, embed("hello"));
        assert_ne!(a, embed("hellp"));
        assert_eq!(a.len(), DIMENSIONS);
        assert!(a.iter().all(|f| (-1.0..1.0).contains(f)));
    }
}
