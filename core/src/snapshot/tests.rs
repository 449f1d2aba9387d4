//! Tests of the snapshot index: lookups, matching on word boundaries,
//! events in order, forget, retired surrogates, stream hold-back.
//! Rule labels (V3) are those of docs/product-rules.md.

mod entry_store;
mod event_runs;
mod fingerprints;

use super::*;
use crate::keyed_hash::retired_hash;
use crate::kind::Kind;
use crate::text::lead_bucket;
use crate::wire::{
    Entry, EntryFingerprint, EntryId, Event, EventBody, RetiredHash, RetiredSurrogate, Snapshot,
};

const SALT: &str = "00112233445566778899aabbccddeeff";

fn salt() -> Vec<u8> {
    (0..16).map(|i| (i * 0x11) as u8).collect()
}

fn entry(n: u8, value: &str, surrogate: &str, kind: Kind) -> Entry {
    Entry {
        id: EntryId([n; 16]),
        value: value.into(),
        surrogate: surrogate.into(),
        kind,
        generation: 1,
    }
}

fn snapshot(entries: Vec<Entry>) -> Snapshot {
    Snapshot {
        version: 1,
        generation: 1,
        seq: 10,
        retired_salt: SALT.into(),
        retired: vec![],
        entries,
    }
}

fn demo() -> SnapshotIndex {
    SnapshotIndex::from_snapshot(snapshot(vec![
        entry(1, "Mario Rossi", "Laura Bianchi", Kind::Name),
        entry(
            2,
            "mario.rossi@acme.it",
            "laura.bianchi@brightvale.it",
            Kind::Email,
        ),
        entry(3, "acme.it", "brightvale.it", Kind::Domain),
        entry(4, "Ana", "Eva", Kind::Name),
        entry(5, "+39 347 123 4567", "+39 351 987 6543", Kind::Phone),
        entry(6, "Mario", "Paolo", Kind::Name),
        entry(7, "José", "Iñigo", Kind::Name),
    ]))
    .unwrap()
}

fn values_in(index: &SnapshotIndex, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    index.find_values(text, &mut out);
    out.iter()
        .map(|m| text[m.start..m.end].to_string())
        .collect()
}

#[test]
fn values_are_found_where_written_on_word_boundaries() {
    let index = demo();
    let cases: &[(&str, &[&str])] = &[
        ("Banana split", &[]),
        ("Ana ate a Banana", &["Ana"]),
        ("Dear Mario Rossi,", &["Mario Rossi"]),
        ("Mario Rossini", &["Mario"]),
        ("Marios", &[]),
        ("mail mario.rossi@acme.it now", &["mario.rossi@acme.it"]),
        ("see www.acme.it.", &["acme.it"]),
        ("call +39 347 123 4567!", &["+39 347 123 4567"]),
        ("call +39 347 123 45678", &[]),
        ("MARIO ROSSI", &[]),
        ("mario.rossi%40acme.it", &[]), // "40acme" is one word: another written form (V3)
        ("José, Josée, José", &["José", "José"]),
        ("", &[]),
    ];
    for (text, expected) in cases {
        assert_eq!(values_in(&index, text), *expected, "{text:?}");
    }
}

#[test]
fn overlapping_values_are_all_found_inner_ones_left_out() {
    let mut index = demo();
    index
        .add_entries(1, vec![entry(8, "Rossi Ana", "Neri Eva", Kind::Name)])
        .unwrap();
    let cases: &[(&str, &[&str])] = &[
        // one starts inside another and ends after it: both (finding F8-1)
        ("Mario Rossi Ana", &["Mario Rossi", "Rossi Ana"]),
        // wholly inside an earlier one: left out
        ("mail mario.rossi@acme.it now", &["mario.rossi@acme.it"]),
        ("Mario Rossi, Ana", &["Mario Rossi", "Ana"]),
    ];
    for (text, expected) in cases {
        assert_eq!(values_in(&index, text), *expected, "{text:?}");
    }
}

#[test]
fn exact_lookups_by_value_and_surrogate() {
    let index = demo();
    assert_eq!(
        index.by_value("Mario Rossi").unwrap().surrogate,
        "Laura Bianchi"
    );
    assert!(index.by_value("Mario Ross").is_none());
    assert!(index.by_value("Mario Rossi ").is_none());
    assert_eq!(index.by_surrogate("Eva").unwrap().value, "Ana");
    assert!(index.is_surrogate("brightvale.it"));
    assert!(!index.is_surrogate("acme.it"));
    assert_eq!(index.len(), 7);
}

#[test]
fn events_apply_in_order_only() {
    let mut index = demo();
    let added = Event {
        seq: 11,
        body: EventBody::Added {
            entries: vec![entry(8, "Greta", "Hanna", Kind::Name)],
        },
    };
    let gap = Event {
        seq: 13,
        ..added.clone()
    };
    assert_eq!(
        index.apply_event(&gap),
        Err(crate::CoreError::OutOfSequence {
            expected: 11,
            found: 13
        })
    );
    assert_eq!(index.apply_event(&added).unwrap().added, 1);
    assert_eq!(index.seq(), 11);
    // A replay is refused too.
    assert!(matches!(
        index.apply_event(&added),
        Err(crate::CoreError::OutOfSequence { .. })
    ));
    assert_eq!(values_in(&index, "Greta and Ana"), ["Greta", "Ana"]);
}

#[test]
fn forget_removes_value_and_surrogate_and_retires_it() {
    let mut index = demo();
    let retired = RetiredSurrogate {
        hash: RetiredHash(retired_hash(&salt(), "Laura Bianchi")),
        lead: lead_bucket("Laura Bianchi"),
    };
    let event = Event {
        seq: 11,
        body: EventBody::Forgotten {
            ids: vec![EntryId([1; 16]), EntryId([99; 16])],
            retired: vec![retired, retired_of("Nobody Here")],
            generation: 2,
        },
    };
    let applied = index.apply_event(&event).unwrap();
    assert_eq!(applied.forgotten, vec![EntryId([1; 16])]);
    assert_eq!(index.generation(), 2);
    assert!(index.by_value("Mario Rossi").is_none());
    assert!(index.by_surrogate("Laura Bianchi").is_none());
    assert!(index.is_retired("Laura Bianchi"));
    assert!(index.is_surrogate("Laura Bianchi"));
    // "Mario" alone is still a value; "Mario Rossi" now only finds "Mario".
    assert_eq!(values_in(&index, "Mario Rossi"), ["Mario"]);
    let mut surrogates = Vec::new();
    index.find_surrogates("Laura Bianchi wrote", &mut surrogates);
    assert!(surrogates.is_empty());
    let mut retired_spans = Vec::new();
    index.find_retired(
        "from: Laura Bianchi, to: Laura Bianchini",
        &mut retired_spans,
    );
    assert_eq!(retired_spans, vec![(6, 19)]);
    // Entries derived before the forget are stale now.
    assert_eq!(
        index.add_entries(1, vec![entry(9, "Otto", "Kurt", Kind::Name)]),
        Err(crate::CoreError::StaleGeneration {
            found: 1,
            current: 2
        })
    );
    let mut fresh = entry(1, "Mario Rossi", "Giulia Verdi", Kind::Name);
    fresh.generation = 2;
    assert_eq!(index.add_entries(2, vec![fresh]), Ok(1));
    assert_eq!(
        index.by_value("Mario Rossi").unwrap().surrogate,
        "Giulia Verdi"
    );
}

#[test]
fn holdback_keeps_only_what_could_still_be_a_surrogate() {
    let index = demo();
    let cases = [
        ("Hello Lau", 6),   // unfinished word
        ("Hello Laura", 6), // "Laura Bianchi" may follow
        ("Hello Laura ", 6),
        ("Hello Laura B", 6),
        ("Hello Laura Bianchi", 6), // complete, but "Bianchix" may follow
        ("Hello Laura Bianchi.", 20), // complete and bounded: nothing held
        ("Hello Laura Verdi.", 18),
        ("call +39 35", 5),
        ("call +39 351 987 6543", 5), // could still grow into a longer number
        ("done. ", 6),
        ("", 0),
    ];
    for (text, expected) in cases {
        assert_eq!(index.surrogate_holdback(text), expected, "{text:?}");
    }
}

#[test]
fn recent_additions_are_listed_for_memo_revalidation() {
    let mut index = demo();
    let epoch = index.add_epoch();
    assert_eq!(index.values_added_since(epoch), Some(vec![]));
    index
        .add_entries(1, vec![entry(20, "Greta", "Hanna", Kind::Name)])
        .unwrap();
    let slots = index.values_added_since(epoch).unwrap();
    assert_eq!(slots.len(), 1);
    assert_eq!(index.entry(slots[0]).unwrap().value, "Greta");
}

#[test]
fn the_removal_epoch_moves_with_every_removal_and_only_then() {
    let mut index = demo();
    let other = demo();
    // Drawn from the process's one counter: two indexes never share one.
    assert_ne!(index.removal_epoch(), other.removal_epoch());
    let start = index.removal_epoch();
    // A new entry takes nothing away.
    index
        .add_entries(1, vec![entry(20, "Greta", "Hanna", Kind::Name)])
        .unwrap();
    assert_eq!(index.removal_epoch(), start);
    // The same value under another id replaces (removes) the old entry.
    index
        .add_entries(1, vec![entry(21, "Greta", "Lotte", Kind::Name)])
        .unwrap();
    let replaced = index.removal_epoch();
    assert_ne!(replaced, start);
    // A forget removes.
    let forget = Event {
        seq: 11,
        body: EventBody::Forgotten {
            ids: vec![EntryId([1; 16])],
            retired: vec![retired_of("Laura Bianchi")],
            generation: 1,
        },
    };
    index.apply_event(&forget).unwrap();
    assert!(index.by_value("Mario Rossi").is_none());
    assert_ne!(index.removal_epoch(), replaced);
}

#[test]
fn bad_snapshots_are_refused_by_field_and_position() {
    let mut bad = snapshot(vec![entry(1, "x", "x", Kind::Name)]);
    let err = SnapshotIndex::from_snapshot(bad.clone()).err().unwrap();
    assert_eq!(err.to_string(), "entry 0: surrogate equals its value");
    bad.entries.clear();
    bad.retired_salt = "abc".into();
    assert!(SnapshotIndex::from_snapshot(bad).is_err());
}

#[test]
fn an_epoch_of_one_index_means_nothing_to_another() {
    let mut first = demo();
    first
        .add_entries(1, vec![entry(30, "Greta", "Hanna", Kind::Name)])
        .unwrap();
    let epoch = first.add_epoch();
    // A reload: a new index, same content or not. A memo entry made against
    // the first index must not validate against it.
    let second = demo();
    assert!(second.add_epoch() > epoch);
    assert_eq!(second.values_added_since(epoch), None);
    assert_eq!(second.values_added_since(second.add_epoch()), Some(vec![]));
}

fn demo_snapshot() -> Snapshot {
    let mut s = snapshot(vec![
        entry(1, "Mario Rossi", "Laura Bianchi", Kind::Name),
        entry(
            2,
            "mario.rossi@acme.it",
            "laura.bianchi@brightvale.it",
            Kind::Email,
        ),
        entry(3, "acme.it", "brightvale.it", Kind::Domain),
        entry(7, "José", "Iñigo", Kind::Name),
    ]);
    s.retired = vec![RetiredSurrogate {
        hash: RetiredHash(retired_hash(&salt(), "Carla Verdi")),
        lead: lead_bucket("Carla Verdi"),
    }];
    s
}

#[test]
fn an_index_built_from_the_compact_bytes_is_the_one_built_from_json() {
    let from_json = SnapshotIndex::from_snapshot(demo_snapshot()).unwrap();
    let bytes = crate::wire::encode_snapshot(&demo_snapshot()).unwrap();
    let compact = SnapshotIndex::from_compact(bytes).unwrap();
    assert_eq!(compact.seq(), from_json.seq());
    assert_eq!(compact.generation(), from_json.generation());
    assert_eq!(compact.len(), from_json.len());
    assert_eq!(compact.retired_len(), 1);
    for e in from_json.entries() {
        let c = compact.by_value(e.value).unwrap();
        assert_eq!(
            (c.fingerprint, c.surrogate, c.kind, c.generation),
            (e.fingerprint, e.surrogate, e.kind, e.generation)
        );
        assert_eq!(
            compact.by_surrogate(e.surrogate).map(|c| c.fingerprint),
            Some(e.fingerprint)
        );
    }
    assert!(compact.is_retired("Carla Verdi"));
    let text = "Mario Rossi wrote to mario.rossi@acme.it and José";
    assert_eq!(values_in(&compact, text), values_in(&from_json, text));
}

#[test]
fn a_compact_snapshot_with_a_bad_entry_or_a_twice_listed_id_is_refused() {
    let cases: Vec<(Vec<Entry>, &str)> = vec![
        (
            vec![entry(1, "Mario", "Mario", Kind::Name)],
            "surrogate equals its value",
        ),
        (
            vec![
                entry(1, "Mario", "Paolo", Kind::Name),
                entry(1, "Ana", "Eva", Kind::Name),
            ],
            "entry 1: its id is listed twice",
        ),
    ];
    for (entries, want) in cases {
        let bytes = crate::wire::encode_snapshot(&snapshot(entries.clone())).unwrap();
        let err = SnapshotIndex::from_compact(bytes)
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains(want), "{err}");
        assert!(!err.contains("Mario") && !err.contains("Paolo"), "{err}");
        let err = SnapshotIndex::from_snapshot(snapshot(entries))
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains(want), "{err}");
    }
    let mut cut = crate::wire::encode_snapshot(&demo_snapshot()).unwrap();
    cut.truncate(cut.len() - 3);
    assert!(SnapshotIndex::from_compact(cut).is_err());
}

/// An entry numbered `n` (ids, values and surrogates all distinct).
fn numbered(n: u32, kind: Kind) -> Entry {
    let mut id = [0u8; 16];
    id[..4].copy_from_slice(&n.to_le_bytes());
    id[15] = 0xa5;
    Entry {
        id: EntryId(id),
        value: format!("Valore{n} Rossi"),
        surrogate: format!("Surrogato{n}"),
        kind,
        generation: u64::from(n % 300) * 1000,
    }
}

/// The entry store keeps the snapshot's bytes as records and appends added
/// entries to a second buffer that it compacts: whatever mix of snapshot
/// entries, added ones, forgotten ones and re-added ids, every lookup
/// answers as a model of the live entries says.
#[test]
fn a_compact_index_under_adds_and_forgets_answers_as_a_model() {
    use std::collections::BTreeMap;
    let kinds = [Kind::Name, Kind::Email, Kind::Phone];
    let first: Vec<Entry> = (0..400)
        .map(|n| numbered(n, kinds[n as usize % 2].clone()))
        .collect();
    let bytes = crate::wire::encode_snapshot(&snapshot(first.clone())).unwrap();
    let mut index = SnapshotIndex::from_compact(bytes).unwrap();
    let mut model: BTreeMap<EntryId, Entry> = first.into_iter().map(|e| (e.id, e)).collect();
    let mut x: u64 = 0x9e37_79b9;
    for round in 0..60u32 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let seq = 11 + u64::from(round);
        let body = if round % 3 == 2 {
            // Forget about a third of what lives (snapshot and added).
            let ids: Vec<EntryId> = model
                .keys()
                .enumerate()
                .filter(|(i, _)| (*i as u64 + x).is_multiple_of(3))
                .map(|(_, id)| *id)
                .collect();
            let retired = ids
                .iter()
                .filter_map(|id| model.remove(id))
                .map(|e| retired_of(&e.surrogate))
                .collect();
            EventBody::Forgotten {
                ids,
                retired,
                generation: index.generation(),
            }
        } else {
            // New entries, and some ids forgotten before, added again
            // (a third kind appears only here).
            let entries: Vec<Entry> = (0..40)
                .map(|i| {
                    let n = if i % 4 == 0 {
                        (x as u32 % 400) + i
                    } else {
                        1000 + round * 40 + i
                    };
                    numbered(n, kinds[(n % 3) as usize].clone())
                })
                .filter(|e| !model.contains_key(&e.id))
                .collect();
            for e in &entries {
                model.insert(e.id, e.clone());
            }
            EventBody::Added { entries }
        };
        index.apply_event(&Event { seq, body }).unwrap();
        assert_eq!(index.len(), model.len(), "round {round}");
        let mut text = String::new();
        for e in model.values() {
            assert_holds(&index, e, &format!("round {round}"));
            assert_eq!(
                index.by_surrogate(&e.surrogate).map(|f| f.fingerprint),
                Some(e.id.fingerprint())
            );
            text.push_str(&e.value);
            text.push_str(" e ");
        }
        let mut expected: Vec<String> = model.values().map(|e| e.value.clone()).collect();
        let mut found = values_in(&index, &text);
        expected.sort();
        found.sort();
        assert_eq!(found, expected, "round {round}");
        let mut live: Vec<EntryFingerprint> = index.entries().map(|e| e.fingerprint).collect();
        live.sort();
        let mut expected: Vec<EntryFingerprint> = model.keys().map(EntryId::fingerprint).collect();
        expected.sort();
        assert_eq!(live, expected);
    }
    // Forgotten values are gone.
    for n in 0..400 {
        let e = numbered(n, Kind::Name);
        if !model.contains_key(&e.id) {
            assert!(index.by_value(&e.value).is_none());
            assert!(index.by_surrogate(&e.surrogate).is_none());
        }
    }
}

/// `index` holds `e` under its value as the entry stands: fingerprint,
/// surrogate, kind and generation.
fn assert_holds(index: &SnapshotIndex, e: &Entry, context: &str) {
    let found = index
        .by_value(&e.value)
        .unwrap_or_else(|| panic!("{context}: no entry for the value"));
    assert_eq!(
        (
            found.fingerprint,
            found.surrogate,
            found.kind,
            found.generation
        ),
        (
            e.id.fingerprint(),
            e.surrogate.as_str(),
            &e.kind,
            e.generation
        ),
        "{context}"
    );
}

/// A retired surrogate of the test vaults (their salt).
fn retired_of(surrogate: &str) -> RetiredSurrogate {
    RetiredSurrogate {
        hash: RetiredHash(retired_hash(&salt(), surrogate)),
        lead: lead_bucket(surrogate),
    }
}
