//! A compact fingerprint → slots table for
//! [`super::entry_store::EntryStore`]: open addressing over `u32` slot
//! numbers only (the fingerprints stay in the store's records, the table
//! asks it to compare), so a lookup is O(1) on average for ~5-10 bytes per
//! entry instead of a linear scan of every slot. Two entries may carry one
//! fingerprint: both are kept, and a lookup goes on past a slot its caller
//! does not accept.

use super::entry_store::Slot;
use crate::wire::EntryFingerprint;

/// A bucket never used.
const EMPTY: u32 = u32::MAX;
/// A bucket whose slot was removed (probing continues past it).
const TOMBSTONE: u32 = u32::MAX - 1;
/// Buckets are at most 7/8 used (live + tombstones) before a rebuild.
const LOAD_NUM: usize = 7;
const LOAD_DEN: usize = 8;

/// Slots keyed by the fingerprint the store holds in them.
#[derive(Default)]
pub(crate) struct IdSlots {
    buckets: Vec<u32>,
    live: usize,
    tombstones: usize,
}

/// Mixes a fingerprint's bits (ids are random from the control service,
/// but tests and replays use patterned ones).
fn hash(fingerprint: EntryFingerprint) -> u64 {
    let x = fingerprint.0.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^ (x >> 31)
}

impl IdSlots {
    /// An empty table sized for `entries` ids: a store built from a
    /// snapshot fills it without a rebuild (each rebuild by doubling frees
    /// the smaller table, which wasm memory keeps as its peak).
    pub(crate) fn with_capacity(entries: usize) -> Self {
        IdSlots {
            buckets: vec![EMPTY; buckets_for(entries)],
            live: 0,
            tombstones: 0,
        }
    }

    /// The first slot holding `fingerprint` that `accept` takes;
    /// `fingerprint_at` tells which fingerprint a slot holds.
    pub(crate) fn first_where(
        &self,
        fingerprint: EntryFingerprint,
        fingerprint_at: impl Fn(Slot) -> Option<EntryFingerprint>,
        accept: impl Fn(Slot) -> bool,
    ) -> Option<Slot> {
        if self.buckets.is_empty() {
            return None;
        }
        let mask = self.buckets.len() - 1;
        let mut i = hash(fingerprint) as usize & mask;
        for _ in 0..self.buckets.len() {
            match self.buckets[i] {
                EMPTY => return None,
                TOMBSTONE => {}
                slot => {
                    if fingerprint_at(slot) == Some(fingerprint) && accept(slot) {
                        return Some(slot);
                    }
                }
            }
            i = (i + 1) & mask;
        }
        None
    }

    /// Records that `slot` holds `fingerprint` (other slots may hold it
    /// too).
    pub(crate) fn insert(
        &mut self,
        fingerprint: EntryFingerprint,
        slot: Slot,
        fingerprint_at: impl Fn(Slot) -> Option<EntryFingerprint>,
    ) {
        if (self.live + self.tombstones + 1) * LOAD_DEN > self.buckets.len() * LOAD_NUM {
            self.rebuild(self.live + 1, &fingerprint_at);
        }
        let mask = self.buckets.len() - 1;
        let mut i = hash(fingerprint) as usize & mask;
        loop {
            match self.buckets[i] {
                EMPTY => break,
                TOMBSTONE => {
                    self.tombstones -= 1;
                    break;
                }
                _ => i = (i + 1) & mask,
            }
        }
        self.buckets[i] = slot;
        self.live += 1;
    }

    /// Forgets that `slot` holds `fingerprint`; call before the store
    /// frees it.
    pub(crate) fn remove(&mut self, fingerprint: EntryFingerprint, slot: Slot) {
        if self.buckets.is_empty() {
            return;
        }
        let mask = self.buckets.len() - 1;
        let mut i = hash(fingerprint) as usize & mask;
        for _ in 0..self.buckets.len() {
            match self.buckets[i] {
                EMPTY => return,
                s if s == slot => {
                    self.buckets[i] = TOMBSTONE;
                    self.live -= 1;
                    self.tombstones += 1;
                    return;
                }
                _ => {}
            }
            i = (i + 1) & mask;
        }
    }

    /// Re-hashes the live slots into a table sized for `want` entries,
    /// dropping tombstones.
    fn rebuild(&mut self, want: usize, fingerprint_at: &impl Fn(Slot) -> Option<EntryFingerprint>) {
        let size = buckets_for(want);
        let old = std::mem::replace(&mut self.buckets, vec![EMPTY; size]);
        let mask = size - 1;
        for slot in old.into_iter().filter(|s| *s != EMPTY && *s != TOMBSTONE) {
            let Some(fingerprint) = fingerprint_at(slot) else {
                continue;
            };
            let mut i = hash(fingerprint) as usize & mask;
            while self.buckets[i] != EMPTY {
                i = (i + 1) & mask;
            }
            self.buckets[i] = slot;
        }
        self.tombstones = 0;
    }

    /// Heap bytes held.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.buckets.capacity() * std::mem::size_of::<u32>()
    }
}

/// The table size (a power of two, at least 16) that holds `want` ids
/// within the load factor.
fn buckets_for(want: usize) -> usize {
    let mut size = 16usize;
    while want * LOAD_DEN > size * LOAD_NUM {
        size *= 2;
    }
    size
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::super::entry_store::EntryStore;
    use crate::kind::Kind;
    use crate::wire::{Entry, EntryFingerprint, EntryId};
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
    fn a_table_sized_up_front_takes_its_ids_without_a_rebuild() {
        for entries in [0usize, 1, 14, 15, 100, 10_000] {
            let mut table = super::IdSlots::with_capacity(entries);
            let size = table.buckets.len();
            let fps: Vec<EntryFingerprint> = (0..entries as u32)
                .map(|n| id_of_distinct(n).fingerprint())
                .collect();
            for (slot, fp) in fps.iter().enumerate() {
                table.insert(*fp, slot as u32, |s| fps.get(s as usize).copied());
            }
            assert_eq!(table.buckets.len(), size, "{entries} entries");
            for (slot, fp) in fps.iter().enumerate() {
                assert_eq!(
                    table.first_where(*fp, |s| fps.get(s as usize).copied(), |_| true),
                    Some(slot as u32)
                );
            }
        }
    }

    fn id_of_distinct(n: u32) -> EntryId {
        let mut b = [0u8; 16];
        b[..4].copy_from_slice(&n.to_le_bytes());
        b[12..].copy_from_slice(&n.rotate_left(7).to_le_bytes());
        EntryId(b)
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
}
