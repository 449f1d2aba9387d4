//! The index keeps an 8-byte fingerprint of each entry id; two ids may
//! share one. Through the masker and restore: forgetting one of two people
//! whose ids share a fingerprint leaves the other masked (from the memo or
//! not) and restored, and never masks with, or restores, the forgotten
//! one's surrogate.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "mask_support.rs"]
mod support;

use latet_core::keyed_hash::retired_hash;
use latet_core::provider;
use latet_core::restore::restore_body;
use latet_core::snapshot::SnapshotIndex;
use latet_core::text::lead_bucket;
use latet_core::wire::{EntryId, Event, EventBody, RetiredHash, RetiredSurrogate, Snapshot};
use support::*;

/// An id other than `id` with the same fingerprint.
fn colliding(id: EntryId) -> EntryId {
    let mut high = [0u8; 16];
    high[8..].fill(0x77);
    let low = (id.fingerprint().0 ^ EntryId(high).fingerprint().0).to_le_bytes();
    let mut out = high;
    out[..8].copy_from_slice(&low);
    let out = EntryId(out);
    assert!(out != id && out.fingerprint() == id.fingerprint());
    out
}

/// Ana and Mario, their ids sharing a fingerprint.
fn vault() -> (SnapshotIndex, EntryId, EntryId) {
    let ana = entry(1, "Ana Costa", "Eva Lima", "name", 1);
    let mut mario = entry(2, "Mario Rossi", "Laura Bianchi", "name", 1);
    mario.id = colliding(ana.id);
    let ids = (ana.id, mario.id);
    let index = SnapshotIndex::from_snapshot(Snapshot {
        version: 1,
        generation: 1,
        seq: 1,
        retired_salt: SALT_HEX.into(),
        retired: vec![],
        entries: vec![ana, mario],
    })
    .unwrap();
    (index, ids.0, ids.1)
}

fn forget(index: &mut SnapshotIndex, id: EntryId, surrogate: &str) -> Vec<EntryId> {
    index
        .apply_event(&Event {
            seq: index.seq() + 1,
            body: EventBody::Forgotten {
                ids: vec![id],
                retired: vec![RetiredSurrogate {
                    hash: RetiredHash(retired_hash(&salt(), surrogate)),
                    lead: lead_bucket(surrogate),
                }],
                generation: index.generation() + 1,
            },
        })
        .unwrap()
        .forgotten
}

fn chat(text: &str) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "model": "gpt-4o",
        "messages": [{"role": "user", "content": text}]
    }))
    .unwrap()
}

fn answer(text: &str) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "choices": [{"message": {"role": "assistant", "content": text}}]
    }))
    .unwrap()
}

#[test]
fn forgetting_one_of_two_people_sharing_a_fingerprint_leaves_the_other_masked_and_restored() {
    let (mut index, _ana, mario) = vault();
    let mut masker = masker(1 << 20);
    // (Texts of 32 bytes or more: the memo keeps those.)
    let both = chat("Ana Costa wrote to Mario Rossi about the new contract");
    let ana_only = chat("Ana Costa wrote again about the new contract");
    let (out, _) = mask_ok(&mut masker, &index, provider::OPENAI_CHAT, &both);
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("Eva Lima") && text.contains("Laura Bianchi"),
        "{text}"
    );
    mask_ok(&mut masker, &index, provider::OPENAI_CHAT, &ana_only);
    assert_eq!(masker.memo_len(), 2);

    let forgotten = forget(&mut index, mario, "Laura Bianchi");
    assert_eq!(forgotten, vec![mario]);
    masker.forget(&forgotten);
    // The memo drops by fingerprint: Ana's text goes too (masked again at
    // its next use, the same way).
    assert_eq!(masker.memo_len(), 0);

    for body in [&both, &ana_only] {
        for round in 0..2 {
            let (out, _) = mask_ok(&mut masker, &index, provider::OPENAI_CHAT, body);
            let text = String::from_utf8(out).unwrap();
            assert!(
                text.contains("Eva Lima") && !text.contains("Ana Costa"),
                "round {round}: {text}"
            );
            assert!(!text.contains("Laura Bianchi"), "round {round}: {text}");
        }
    }
    // Ana's surrogate is restored; Mario's retired one never is.
    let (out, stats) = restore_body(&index, &answer("Eva Lima and Laura Bianchi"));
    let text = String::from_utf8(out.unwrap()).unwrap();
    assert!(
        text.contains("Ana Costa") && !text.contains("Mario Rossi"),
        "{text}"
    );
    assert_eq!((stats.restored, stats.declined_retired), (1, 1));
}

/// A worker that lags a page behind the feed reads an `added` event as it
/// is served, with the entry re-created since its forget (the control
/// service reads entries when it answers): it holds the new surrogate when
/// the forget of the old one arrives. The forget does not take the new
/// entry (its surrogate is not the one retired), the old surrogate is never
/// used or restored again, and masking and restoring use the new one.
#[test]
fn a_lagging_worker_that_read_a_re_created_entry_keeps_it_through_the_old_forget() {
    let (mut index, _ana, mario) = vault();
    let mut masker = masker(1 << 20);
    let text = chat("Please call Mario Rossi about the new contract today");
    let (out, _) = mask_ok(&mut masker, &index, provider::OPENAI_CHAT, &text);
    assert!(String::from_utf8(out).unwrap().contains("Laura Bianchi"));
    // Seq n: `added`, served after the re-creation: Mario's id, a new
    // surrogate, the generation after the forget.
    let mut recreated = entry(
        2,
        "Mario Rossi",
        "Paolo Neri",
        "name",
        index.generation() + 1,
    );
    recreated.id = mario;
    index
        .apply_event(&Event {
            seq: index.seq() + 1,
            body: EventBody::Added {
                entries: vec![recreated],
            },
        })
        .unwrap();
    // Seq n + 1: the forget of the entry as it was.
    let forgotten = forget(&mut index, mario, "Laura Bianchi");
    assert!(
        forgotten.is_empty(),
        "the entry held is not the one retired"
    );
    masker.forget(&forgotten);
    assert!(index.is_retired("Laura Bianchi"));
    for round in 0..2 {
        let (out, _) = mask_ok(&mut masker, &index, provider::OPENAI_CHAT, &text);
        let out = String::from_utf8(out).unwrap();
        assert!(
            out.contains("Paolo Neri")
                && !out.contains("Laura Bianchi")
                && !out.contains("Mario Rossi"),
            "round {round}: {out}"
        );
    }
    let (out, stats) = restore_body(&index, &answer("Paolo Neri, not Laura Bianchi"));
    let out = String::from_utf8(out.unwrap()).unwrap();
    assert_eq!(out.matches("Mario Rossi").count(), 1, "{out}");
    assert_eq!((stats.restored, stats.declined_retired), (1, 1));
}
