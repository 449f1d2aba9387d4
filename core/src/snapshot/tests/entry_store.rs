//! The entry store: records found by fingerprint under inserts, removes
//! and slot reuse, and values and surrogates read back where they were
//! written.
use crate::kind::Kind;
use crate::snapshot::entry_store::EntryStore;
use crate::wire::{Entry, EntryId};
use std::collections::HashMap;

fn entry(id: EntryId, n: u32) -> Entry {
    Entry {
        id,
        value: format!("v{n}"),
        surrogate: format!("s{n}"),
        kind: Kind::parse("name").unwrap(),
        generation: 1,
    }
}

/// Ids that differ in one byte only, in the high or the low half, and
/// all-equal patterns: all must spread and be told apart.
fn id_of(n: u32) -> EntryId {
    let mut b = [0u8; 16];
    match n % 3 {
        0 => b[..4].copy_from_slice(&n.to_le_bytes()),
        1 => b[12..].copy_from_slice(&n.to_le_bytes()),
        _ => b = [(n % 251) as u8; 16],
    }
    EntryId(b)
}

#[test]
fn slot_of_agrees_with_a_model_under_inserts_removes_and_slot_reuse() {
    let mut store = EntryStore::default();
    let mut model: HashMap<EntryId, u32> = HashMap::new();
    let mut x: u64 = 0x1234_5678;
    for step in 0..20_000u32 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let n = (x % 3000) as u32;
        let id = id_of(n);
        match model.get(&id).copied() {
            Some(slot) if x % 5 < 3 => {
                assert!(store.remove(slot));
                model.remove(&id);
            }
            Some(_) => {}
            None => {
                let slot = store.insert(entry(id, step)).unwrap();
                model.insert(id, slot);
            }
        }
        if step % 997 == 0 {
            for n in 0..3000 {
                let id = id_of(n);
                assert_eq!(store.slot_of(&id), model.get(&id).copied(), "id {n}");
            }
        }
    }
    for (id, slot) in &model {
        assert_eq!(store.slot_of(id), Some(*slot));
        assert_eq!(
            store.get(*slot).map(|e| e.fingerprint),
            Some(id.fingerprint())
        );
    }
    assert_eq!(store.len(), model.len());
}

#[test]
fn an_empty_store_finds_nothing_and_a_removed_id_is_gone() {
    let mut store = EntryStore::default();
    assert_eq!(store.slot_of(&id_of(1)), None);
    let slot = store.insert(entry(id_of(1), 1)).unwrap();
    assert_eq!(store.slot_of(&id_of(1)), Some(slot));
    assert!(store.remove(slot));
    assert_eq!(store.slot_of(&id_of(1)), None);
    // The freed slot is reused by another id; the old id stays absent.
    let again = store.insert(entry(id_of(2), 2)).unwrap();
    assert_eq!(again, slot);
    assert_eq!(store.slot_of(&id_of(1)), None);
    assert_eq!(store.slot_of(&id_of(2)), Some(slot));
}

#[test]
fn value_and_surrogate_come_back_split_where_they_were_joined() {
    let mut store = EntryStore::default();
    let cases = [
        ("", "S"),
        ("Zoë Ä", "[NAME_x]"),
        ("a", ""),
        ("日本語", "漢字"),
    ];
    let slots: Vec<_> = cases
        .iter()
        .enumerate()
        .map(|(n, (v, s))| {
            let mut e = entry(id_of(n as u32), n as u32);
            e.value = (*v).into();
            e.surrogate = (*s).into();
            store.insert(e).unwrap()
        })
        .collect();
    for ((v, s), slot) in cases.iter().zip(slots) {
        let e = store.get(slot).unwrap();
        assert_eq!((e.value, e.surrogate), (*v, *s));
    }
}
