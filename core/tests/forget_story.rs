//! The forget story at engine level (rules F5–F7 and V4–V6,
//! docs/product-rules.md): mask, forget, mask again, restore — with
//! surrogates derived the way the control service derives them. What the gateway must guarantee after a forget: the memo
//! never serves the old surrogate, masking asks for a new entry, the new
//! surrogate differs from the old, and restore declines the old one.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests: a failed unwrap is a failed test

use latet_core::detect::{DetectorConfig, Detectors};
use latet_core::keyed_hash::{entry_id, retired_hash};
use latet_core::mask::{MaskOptions, MaskOutcome, Masker};
use latet_core::provider::{self};
use latet_core::restore::{restore_body, SseRestorer};
use latet_core::snapshot::SnapshotIndex;
use latet_core::surrogate;
use latet_core::text::lead_bucket;
use latet_core::wire::{
    Entry, EntryId, Event, EventBody, NewValue, RetiredHash, RetiredSurrogate, Snapshot,
};

const ID_KEY: &[u8] = b"vault id key";
const DERIVE_KEY: &[u8] = b"vault derive key";
const SALT: [u8; 16] = [7; 16];

/// What the control service does for a new value (without the domain entry:
/// the test's value is a provider-domain address).
fn derive_entry(value: &NewValue, generation: u64) -> Entry {
    Entry {
        id: EntryId(entry_id(ID_KEY, &value.value)),
        value: value.value.clone(),
        surrogate: surrogate::derive(DERIVE_KEY, generation, &value.kind, &value.value, 0, None),
        kind: value.kind.clone(),
        generation,
    }
}

fn request(text: &str) -> Vec<u8> {
    serde_json::json!({
        "model": "gpt-4o",
        "messages": [
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": text}
        ]
    })
    .to_string()
    .into_bytes()
}

/// Masks, creating entries for new values like the filter's one callout.
fn mask(masker: &mut Masker, index: &mut SnapshotIndex, body: &[u8]) -> (String, bool) {
    let mut asked = false;
    for _ in 0..2 {
        match masker
            .mask_request(index, provider::OPENAI_CHAT, body, MaskOptions::default())
            .unwrap()
        {
            MaskOutcome::Masked { body: masked, .. } => {
                let out = masked.unwrap_or_else(|| body.to_vec());
                return (String::from_utf8(out).unwrap(), asked);
            }
            MaskOutcome::NeedEntries { values } => {
                asked = true;
                let generation = index.generation();
                let entries = values.iter().map(|v| derive_entry(v, generation)).collect();
                index.add_entries(generation, entries).unwrap();
            }
        }
    }
    panic!("masking did not finish after one round of new entries");
}

/// The text of every content delta of an OpenAI chat stream, joined.
fn streamed_text(stream: &str) -> String {
    stream
        .split("\n\n")
        .filter_map(|event| event.strip_prefix("data: "))
        .filter_map(|data| serde_json::from_str::<serde_json::Value>(data).ok())
        .filter_map(|v| {
            v["choices"][0]["delta"]["content"]
                .as_str()
                .map(String::from)
        })
        .collect()
}

fn answer(text: &str) -> Vec<u8> {
    serde_json::json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]
    })
    .to_string()
    .into_bytes()
}

#[test]
fn forget_story_at_engine_level() {
    let value = "mario.rossi@gmail.com";
    let text = format!("Please write to {value} about the invoice.");
    let mut index = SnapshotIndex::from_snapshot(Snapshot {
        version: 1,
        generation: 1,
        seq: 0,
        retired_salt: latet_core::keyed_hash::to_hex(&SALT),
        retired: vec![],
        entries: vec![],
    })
    .unwrap();
    let mut masker = Masker::new(Detectors::new(&DetectorConfig::default()).unwrap(), 1 << 20);

    // 1. First turn: the value is new, one round of entries, then masked.
    let (masked, asked) = mask(&mut masker, &mut index, &request(&text));
    assert!(asked, "a new value must ask for an entry");
    let old = index.by_value(value).unwrap().surrogate.to_string();
    assert!(!masked.contains(value) && masked.contains(&old), "{masked}");

    // 2. The agent resends the history: served by the memo, same surrogate.
    let before = masker.memo_len();
    let (again, asked) = mask(&mut masker, &mut index, &request(&text));
    assert!(!asked && again == masked && before > 0);

    // 3. The model's answer carries the surrogate: restored.
    let (restored, stats) = restore_body(&index, &answer(&format!("I wrote to {old}.")));
    let restored = String::from_utf8(restored.unwrap()).unwrap();
    assert!(
        restored.contains(value) && stats.restored == 1,
        "{restored}"
    );

    // 4. The person is forgotten: one event, ids and retired hashes only.
    let id = EntryId(entry_id(ID_KEY, value));
    assert_eq!(index.by_value(value).unwrap().fingerprint, id.fingerprint());
    let event = Event {
        seq: 1,
        body: EventBody::Forgotten {
            ids: vec![id],
            retired: vec![RetiredSurrogate {
                hash: RetiredHash(retired_hash(&SALT, &old)),
                lead: lead_bucket(&old),
            }],
            generation: 2,
        },
    };
    let applied = index.apply_event(&event).unwrap();
    masker.forget(&applied.forgotten);
    assert_eq!(applied.forgotten, vec![id]);

    // 5. The resent history is masked again: not from the memo, a new entry
    //    under generation 2, a new surrogate; neither the value nor the old
    //    surrogate goes out.
    let (remasked, asked) = mask(&mut masker, &mut index, &request(&text));
    assert!(asked, "after a forget the value must ask for a new entry");
    let new = index.by_value(value).unwrap().surrogate.to_string();
    assert_ne!(new, old);
    assert_eq!(index.by_value(value).unwrap().generation, 2);
    assert!(!remasked.contains(value) && !remasked.contains(&old) && remasked.contains(&new));

    // 6. An answer with the old surrogate is left as written and counted;
    //    one with the new surrogate is restored. Streamed too.
    let (unchanged, stats) = restore_body(&index, &answer(&format!("I wrote to {old}.")));
    assert!(
        unchanged.is_none(),
        "the old surrogate must not be restored"
    );
    assert_eq!((stats.restored, stats.declined_retired), (0, 1));
    let (restored, stats) = restore_body(&index, &answer(&format!("I wrote to {new}.")));
    assert!(String::from_utf8(restored.unwrap())
        .unwrap()
        .contains(value));
    assert_eq!(stats.restored, 1);

    let stream = format!(
        "data: {}\n\ndata: [DONE]\n\n",
        serde_json::json!({"choices":[{"index":0,"delta":{"content": format!("old {old} new {new}")}}]})
    );
    for cut in 0..stream.len() {
        let mut restorer = SseRestorer::new();
        let mut out = Vec::new();
        restorer.push(&index, &stream.as_bytes()[..cut], &mut out);
        restorer.push(&index, &stream.as_bytes()[cut..], &mut out);
        restorer.finish(&index, &mut out);
        let out = String::from_utf8(out).unwrap();
        assert_eq!(
            streamed_text(&out),
            format!("old {old} new {value}"),
            "cut at {cut}: {out}"
        );
        assert!(out.ends_with("data: [DONE]\n\n"));
    }

    // 7. The old surrogate is never issued again: derivation under the new
    //    generation differs, and a detector finding equal to it is left
    //    alone as already fake.
    assert!(index.is_surrogate(&old) && index.is_retired(&old));
    let (kept, _) = mask(&mut masker, &mut index, &request(&format!("ping {old}")));
    assert!(
        kept.contains(&old),
        "a retired surrogate is fake already: {kept}"
    );
    assert!(index.by_value(&old).is_none());
}
