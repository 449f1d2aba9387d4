//! Shared helpers of the restore tests (included with `#[path]`): the test
//! vault, fixtures, and feeding a stream in pieces.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use latet_core::eventstream::FrameReader;
use latet_core::keyed_hash::{entry_id, retired_hash};
use latet_core::provider::{ProviderRef, GENERIC_JSON};
use latet_core::restore::{AnswerFormat, RestoreStats, RestoreView, StreamRestorer};
use latet_core::snapshot::SnapshotIndex;
use latet_core::text::lead_bucket;
use latet_core::wire::{Entry, EntryId, RetiredHash, RetiredSurrogate, Snapshot};
use latet_core::Kind;

pub const SALT_HEX: &str = "5a17";
pub const ID_KEY: &[u8] = b"test-id-key";

/// A fixture file's bytes (`path` under `core/tests/fixtures/`).
pub fn fixture(path: &str) -> Vec<u8> {
    let full = format!("{}/tests/fixtures/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&full).unwrap_or_else(|e| panic!("{full}: {e}"))
}

/// The case of rule V5 (docs/product-rules.md#v5): a name (`Ugo` → `Luca`)
/// and a company domain (`acme.it` → `qzv-corp.it`) active, and a forgotten
/// address's surrogate `Luca.acme.it@qzv-corp.it` retired: in a retired
/// address only the domain's surrogate after its last `@` restores.
pub fn retired_address_index() -> SnapshotIndex {
    index_of(
        &[
            ("name".into(), "Ugo".into(), "Luca".into()),
            ("domain".into(), "acme.it".into(), "qzv-corp.it".into()),
        ],
        &["Luca.acme.it@qzv-corp.it".into()],
    )
}

/// The vault of `answers/vault.json`: (kind, value, surrogate) and retired surrogates.
pub fn vault() -> (Vec<(String, String, String)>, Vec<String>) {
    let json: serde_json::Value = serde_json::from_slice(&fixture("answers/vault.json")).unwrap();
    let entries = json["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["kind"].as_str().unwrap().to_string(),
                e["value"].as_str().unwrap().to_string(),
                e["surrogate"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let retired = json["retired"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap().to_string())
        .collect();
    (entries, retired)
}

pub fn entry(kind: &str, value: &str, surrogate: &str, generation: u64) -> Entry {
    Entry {
        id: EntryId(entry_id(ID_KEY, value)),
        value: value.to_string(),
        surrogate: surrogate.to_string(),
        kind: Kind::parse(kind).unwrap(),
        generation,
    }
}

pub fn retired(surrogate: &str) -> RetiredSurrogate {
    RetiredSurrogate {
        hash: RetiredHash(retired_hash(&[0x5a, 0x17], surrogate)),
        lead: lead_bucket(surrogate),
    }
}

/// An index of the given entries (kind, value, surrogate) and retired surrogates.
pub fn index_of(
    entries: &[(String, String, String)],
    retired_surrogates: &[String],
) -> SnapshotIndex {
    SnapshotIndex::from_snapshot(Snapshot {
        version: 1,
        generation: 1,
        seq: 0,
        retired_salt: SALT_HEX.to_string(),
        retired: retired_surrogates.iter().map(|s| retired(s)).collect(),
        entries: entries.iter().map(|(k, v, s)| entry(k, v, s, 1)).collect(),
    })
    .unwrap()
}

/// The index of the test vault.
pub fn vault_index() -> SnapshotIndex {
    let (entries, retired) = vault();
    index_of(&entries, &retired)
}

/// Restores SSE `stream` fed in pieces cut at `cuts` (sorted, within bounds).
pub fn restore_in_pieces<'a>(
    index: impl Into<RestoreView<'a>>,
    stream: &[u8],
    cuts: &[usize],
) -> (Vec<u8>, RestoreStats) {
    restore_in_pieces_as(AnswerFormat::Sse, GENERIC_JSON, index, stream, cuts)
}

/// Restores `stream` of `format` for `provider`, fed in pieces cut at
/// `cuts` (sorted, within bounds).
pub fn restore_in_pieces_as<'a>(
    format: AnswerFormat,
    provider: ProviderRef,
    index: impl Into<RestoreView<'a>>,
    stream: &[u8],
    cuts: &[usize],
) -> (Vec<u8>, RestoreStats) {
    let index = index.into();
    let mut restorer = StreamRestorer::new(format, provider).unwrap();
    let mut out = Vec::new();
    let mut stats = RestoreStats::default();
    let mut from = 0;
    for &cut in cuts {
        stats += restorer.push(index, &stream[from..cut], &mut out);
        from = cut;
    }
    stats += restorer.push(index, &stream[from..], &mut out);
    stats += restorer.finish(index, &mut out);
    assert_eq!(restorer.held_bytes(), 0, "nothing is held after finish");
    (out, stats)
}

/// The JSON events of a stream: SSE `data:` payloads that parse as JSON,
/// the elements of a JSON array, or the payloads of event-stream frames
/// (every frame's CRCs checked).
pub fn json_events(stream: &[u8]) -> Vec<serde_json::Value> {
    if stream.first() == Some(&b'[') {
        return serde_json::from_slice::<Vec<serde_json::Value>>(stream).unwrap();
    }
    if stream.first() == Some(&0) {
        let mut reader = FrameReader::default();
        reader.push(stream);
        let mut events = Vec::new();
        while let Some(frame) = reader.next_frame().unwrap() {
            let payload: serde_json::Value = serde_json::from_slice(frame.payload).unwrap();
            // InvokeModelWithResponseStream: the model's event in base64.
            let event = match payload["bytes"].as_str() {
                Some(b64) => {
                    use base64::Engine as _;
                    let raw = base64::engine::general_purpose::STANDARD
                        .decode(b64)
                        .unwrap();
                    serde_json::from_slice(&raw).unwrap()
                }
                None => payload,
            };
            events.push(event);
        }
        assert_eq!(reader.held_bytes(), 0, "the stream ends with a whole frame");
        return events;
    }
    let text = String::from_utf8(stream.to_vec()).unwrap();
    text.replace("\r\n", "\n")
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str(d).ok())
        .collect()
}

/// The text of every content slot, deltas concatenated, keyed by a
/// readable slot name (`chat/0/content`, `chat/0/tool/1`, `responses/0/0`,
/// `responses/args/1`, `anthropic/2`, `completion/0`, `gemini/0`,
/// `gemini/0/thought`, `bedrock/1`).
pub fn slot_texts(stream: &[u8]) -> std::collections::BTreeMap<String, String> {
    let mut texts = std::collections::BTreeMap::<String, String>::new();
    for event in json_events(stream) {
        let mut add = |key: String, text: Option<&str>| {
            if let Some(text) = text {
                texts.entry(key).or_default().push_str(text);
            }
        };
        if let Some(candidates) = event["candidates"].as_array() {
            for (position, candidate) in candidates.iter().enumerate() {
                let i = candidate["index"].as_u64().unwrap_or(position as u64);
                for part in candidate["content"]["parts"]
                    .as_array()
                    .into_iter()
                    .flatten()
                {
                    let thought = if part["thought"] == true {
                        "/thought"
                    } else {
                        ""
                    };
                    add(format!("gemini/{i}{thought}"), part["text"].as_str());
                }
            }
            continue;
        }
        if let Some(block) = event["contentBlockIndex"].as_u64() {
            let delta = &event["delta"];
            add(
                format!("bedrock/{block}"),
                delta["text"]
                    .as_str()
                    .or(delta["toolUse"]["input"].as_str()),
            );
            continue;
        }
        if let Some(choices) = event["choices"].as_array() {
            for choice in choices {
                let i = choice["index"].as_u64().unwrap();
                add(format!("completion/{i}"), choice["text"].as_str());
                add(
                    format!("chat/{i}/content"),
                    choice["delta"]["content"].as_str(),
                );
                for call in choice["delta"]["tool_calls"]
                    .as_array()
                    .into_iter()
                    .flatten()
                {
                    let j = call["index"].as_u64().unwrap();
                    add(
                        format!("chat/{i}/tool/{j}"),
                        call["function"]["arguments"].as_str(),
                    );
                }
            }
            continue;
        }
        match event["type"].as_str().unwrap_or("") {
            "response.output_text.delta" => add(
                format!(
                    "responses/{}/{}",
                    event["output_index"], event["content_index"]
                ),
                event["delta"].as_str(),
            ),
            "response.function_call_arguments.delta" => add(
                format!("responses/args/{}", event["output_index"]),
                event["delta"].as_str(),
            ),
            "content_block_delta" => {
                let delta = &event["delta"];
                add(
                    format!("anthropic/{}", event["index"]),
                    delta["text"].as_str().or(delta["partial_json"].as_str()),
                );
            }
            _ => {}
        }
    }
    texts
}

/// The stream with every `\n` line end written `\r\n`.
pub fn with_crlf(stream: &[u8]) -> Vec<u8> {
    String::from_utf8(stream.to_vec())
        .unwrap()
        .replace('\n', "\r\n")
        .into_bytes()
}

/// JSON text compared as values (escapes may be written differently).
pub fn same_json(a: &str, b: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(a).unwrap()
        == serde_json::from_str::<serde_json::Value>(b).unwrap()
}
