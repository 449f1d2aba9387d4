//! The active entries of a vault, in slots that the matchers point into.

use super::id_slots::IdSlots;
use crate::kind::Kind;
use crate::wipe::wipe;
use crate::wire::{Entry, EntryId};

/// The position of an entry in the store. Stable while the entry lives; a
/// freed slot is reused by a later entry.
pub type Slot = u32;

/// A borrowed view of one active entry.
#[derive(Clone, Copy)]
pub struct EntryRef<'a> {
    pub slot: Slot,
    pub id: EntryId,
    pub value: &'a str,
    pub surrogate: &'a str,
    pub kind: &'a Kind,
    pub generation: u64,
}

impl std::fmt::Debug for EntryRef<'_> {
    // Never print the value or the surrogate.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EntryRef")
            .field("slot", &self.slot)
            .field("id", &self.id)
            .field("kind", &self.kind)
            .field("generation", &self.generation)
            .finish_non_exhaustive()
    }
}

/// One entry: value and surrogate share one allocation (value first, then
/// surrogate from `split`), which saves a 16-byte box per slot and one heap
/// block per entry.
struct StoredEntry {
    id: EntryId,
    text: Box<str>,
    split: u32,
    kind: u16,
    generation: u64,
}

/// Slots of entries, a free list, and the kinds table (kinds are few; each
/// entry keeps a 2-byte index into it).
#[derive(Default)]
pub(crate) struct EntryStore {
    slots: Vec<Option<StoredEntry>>,
    free: Vec<Slot>,
    kinds: Vec<Kind>,
    live: usize,
    /// id → slot, so `slot_of` is O(1) (it runs for every added entry).
    by_id: IdSlots,
}

impl EntryStore {
    /// An empty store with room for exactly `entries` (a snapshot's size is
    /// known: growth by doubling would leave up to half the slots unused).
    pub(crate) fn with_capacity(entries: usize) -> Self {
        EntryStore {
            slots: Vec::with_capacity(entries),
            ..EntryStore::default()
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.live
    }

    pub(crate) fn get(&self, slot: Slot) -> Option<EntryRef<'_>> {
        let stored = self.slots.get(slot as usize)?.as_ref()?;
        let split = stored.split as usize;
        Some(EntryRef {
            slot,
            id: stored.id,
            value: stored.text.get(..split)?,
            surrogate: stored.text.get(split..)?,
            kind: self.kinds.get(stored.kind as usize)?,
            generation: stored.generation,
        })
    }

    /// Finds the slot of an id (a hash lookup: it runs for each forgotten
    /// id and for each added entry, as a guard against two entries under
    /// one id).
    pub(crate) fn slot_of(&self, id: &EntryId) -> Option<Slot> {
        let slots = &self.slots;
        self.by_id.get(id, |s| id_in(slots, s))
    }

    pub(crate) fn insert(&mut self, entry: Entry) -> Slot {
        let slot = self.insert_parts(
            entry.id,
            &entry.kind,
            entry.generation,
            &entry.value,
            &entry.surrogate,
        );
        // Wiped where they lie (`into_bytes` never reallocates).
        wipe_bytes(entry.value.into_bytes());
        wipe_bytes(entry.surrogate.into_bytes());
        slot
    }

    /// Inserts an entry from borrowed parts (a compact snapshot's bytes):
    /// value and surrogate are copied into the entry's one allocation.
    pub(crate) fn insert_parts(
        &mut self,
        id: EntryId,
        kind: &Kind,
        generation: u64,
        value: &str,
        surrogate: &str,
    ) -> Slot {
        let kind = match self.kinds.iter().position(|k| k == kind) {
            Some(k) => k as u16,
            None => {
                self.kinds.push(kind.clone());
                (self.kinds.len() - 1) as u16
            }
        };
        // Values longer than 4 GiB cannot come through a snapshot; saturate
        // rather than wrap (`get` then finds no boundary and skips it).
        let split = u32::try_from(value.len()).unwrap_or(u32::MAX);
        let mut text = String::with_capacity(value.len() + surrogate.len());
        text.push_str(value);
        text.push_str(surrogate);
        let stored = StoredEntry {
            id,
            text: text.into_boxed_str(),
            split,
            kind,
            generation,
        };
        let id = stored.id;
        self.live += 1;
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = Some(stored);
                slot
            }
            None => {
                self.slots.push(Some(stored));
                (self.slots.len() - 1) as Slot
            }
        };
        let slots = &self.slots;
        self.by_id.insert(&id, slot, |s| id_in(slots, s));
        slot
    }

    /// Removes an entry and wipes its value and surrogate bytes before they
    /// are freed (a forgotten value must not linger in the VM's memory).
    pub(crate) fn remove(&mut self, slot: Slot) -> bool {
        let Some(place) = self.slots.get_mut(slot as usize) else {
            return false;
        };
        let Some(stored) = place.take() else {
            return false;
        };
        self.by_id.remove(&stored.id, slot);
        wipe_str(stored.text);
        self.free.push(slot);
        self.live -= 1;
        true
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = EntryRef<'_>> {
        (0..self.slots.len() as Slot).filter_map(|slot| self.get(slot))
    }

    /// Approximate heap bytes held (for the memory figures).
    pub(crate) fn heap_bytes(&self) -> usize {
        let strings: usize = self.iter().map(|e| e.value.len() + e.surrogate.len()).sum();
        self.slots.capacity() * std::mem::size_of::<Option<StoredEntry>>()
            + self.free.capacity() * std::mem::size_of::<Slot>()
            + self.by_id.heap_bytes()
            + strings
    }
}

/// The id held in `slot`, if it is occupied.
fn id_in(slots: &[Option<StoredEntry>], slot: Slot) -> Option<EntryId> {
    slots.get(slot as usize)?.as_ref().map(|e| e.id)
}

/// Overwrites a string's bytes with zeros before its allocation is freed.
pub(crate) fn wipe_str(s: Box<str>) {
    wipe(&mut s.into_boxed_bytes());
}

/// [`wipe_str`] for a byte buffer (a `String` given up by `into_bytes`).
fn wipe_bytes(mut bytes: Vec<u8>) {
    wipe(&mut bytes);
}
