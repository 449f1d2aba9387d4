//! The active entries of a vault, in slots that the matchers point into.
//!
//! Entries are kept as records in the fingerprinted form of the compact
//! snapshot ([`crate::wire::compact_snapshot`]: the id's 8-byte
//! [`EntryFingerprint`], kind index, generation, value, surrogate): the
//! joined snapshot's own bytes are kept whole and read where they lie, and
//! entries added later are appended, in the same layout, to a second
//! buffer. A slot is one `u32` (where its record starts), so the store
//! costs the snapshot's bytes plus 4 bytes an entry, and building it
//! copies nothing.
//!
//! Records keep a fingerprint, not the whole id: two entries may share one
//! (about one chance in 2^64 a pair), so nothing here decides by a
//! fingerprint alone what to drop — the store lists the slots that carry
//! some ([`EntryStore::slots_where`]) and the caller confirms each by what
//! it knows of the entry (a forget: the retired hash of its surrogate).
//! There is no fingerprint → slot table (5-7 bytes an entry): only a
//! forget looks entries up by id, once per event, in one pass.

use super::index::listed_twice;
use super::retired_set::RetiredSet;
use crate::error::CoreError;
use crate::kind::Kind;
use crate::wipe::wipe;
use crate::wire::compact_snapshot::{
    get_varint, put_bytes, put_varint, FINGERPRINTED_MAGIC, FINGERPRINT_BYTES, ID_BYTES,
};
use crate::wire::{CompactSnapshot, Entry, EntryFingerprint};
use std::collections::HashSet;

/// The position of an entry in the store. Stable while the entry lives; a
/// freed slot is reused by a later entry.
pub type Slot = u32;

/// A borrowed view of one active entry.
#[derive(Clone, Copy)]
pub struct EntryRef<'a> {
    pub slot: Slot,
    /// The fingerprint of the entry's id: with the slot, what tells this
    /// entry from one that later takes the slot (memo, restore scope).
    pub fingerprint: EntryFingerprint,
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
            .field("fingerprint", &self.fingerprint)
            .field("kind", &self.kind)
            .field("generation", &self.generation)
            .finish_non_exhaustive()
    }
}

/// A slot whose record lies in `added` (else in `base`).
const ADDED: u32 = 1 << 31;
/// A free slot.
const FREE: u32 = u32::MAX;

/// One record as it lies in its buffer.
struct Record<'a> {
    fingerprint: EntryFingerprint,
    kind: u64,
    generation: u64,
    value: &'a [u8],
    surrogate: &'a [u8],
    /// The byte after the record.
    end: usize,
}

fn bytes_at<'a>(bytes: &'a [u8], pos: &mut usize) -> Option<&'a [u8]> {
    let len = usize::try_from(get_varint(bytes, pos)?).ok()?;
    let out = bytes.get(*pos..pos.checked_add(len)?)?;
    *pos += len;
    Some(out)
}

fn fingerprint_at(bytes: &[u8], at: usize) -> Option<EntryFingerprint> {
    let fp: [u8; FINGERPRINT_BYTES] = bytes
        .get(at..at.checked_add(FINGERPRINT_BYTES)?)?
        .try_into()
        .ok()?;
    Some(EntryFingerprint(u64::from_le_bytes(fp)))
}

fn record_at(bytes: &[u8], at: usize) -> Option<Record<'_>> {
    let fingerprint = fingerprint_at(bytes, at)?;
    let mut pos = at + FINGERPRINT_BYTES;
    let kind = get_varint(bytes, &mut pos)?;
    let generation = get_varint(bytes, &mut pos)?;
    let value = bytes_at(bytes, &mut pos)?;
    let surrogate = bytes_at(bytes, &mut pos)?;
    Some(Record {
        fingerprint,
        kind,
        generation,
        value,
        surrogate,
        end: pos,
    })
}

/// What a compact snapshot holds besides its entries.
pub(crate) struct CompactHead {
    pub(crate) generation: u64,
    pub(crate) seq: u64,
    pub(crate) retired: RetiredSet,
}

/// Slots of entries, a free list, and the kinds table (kinds are few; each
/// record holds an index into it).
#[derive(Default)]
pub(crate) struct EntryStore {
    /// The compact snapshot the store was built from, kept whole.
    base: Vec<u8>,
    /// Records of entries added since.
    added: Vec<u8>,
    /// Bytes of `added` that removed records held (wiped): `added` is
    /// compacted when they pass half of it.
    added_dead: usize,
    /// Where each slot's record starts (`ADDED` set: in `added`), or `FREE`.
    slots: Vec<u32>,
    free: Vec<Slot>,
    kinds: Vec<Kind>,
    live: usize,
}

impl Drop for EntryStore {
    /// Values and surrogates are zeroed before their memory is freed.
    fn drop(&mut self) {
        wipe(&mut self.base);
        wipe(&mut self.added);
    }
}

impl EntryStore {
    /// An empty store with room for exactly `entries` slots and their
    /// records of `text` bytes of values and surrogates (growth by
    /// doubling would leave up to half unused).
    pub(crate) fn with_capacity(entries: usize, text: usize) -> Self {
        let mut store = EntryStore::default();
        store.slots = Vec::with_capacity(entries);
        store.added = Vec::with_capacity(text.saturating_add(entries.saturating_mul(16)));
        store
    }

    /// The store of a snapshot's entries, over the bytes themselves (kept,
    /// not copied): the fingerprinted form a worker joins
    /// ([`crate::wire::snapshot_parts::join_fingerprinted`]) as it is, or
    /// a compact snapshot, every entry checked first and then turned into
    /// the fingerprinted form where it lies (the bytes shrink by 8 an
    /// entry; their buffer does not). Each entry is checked with `check`
    /// (its value, surrogate and position) and a value listed twice is
    /// refused. On an error the bytes are zeroed and freed (by the drop).
    pub(crate) fn of_compact(
        bytes: Vec<u8>,
        check: impl Fn(&str, &str, usize) -> Result<(), CoreError>,
    ) -> Result<(Self, CompactHead), CoreError> {
        let mut store = EntryStore::default();
        store.base = bytes;
        if store
            .base
            .starts_with(&crate::wire::compact_snapshot::SNAPSHOT_MAGIC)
        {
            fingerprint_in_place(&mut store.base)?;
        }
        let head = store.read_base(check)?;
        Ok((store, head))
    }

    fn read_base(
        &mut self,
        check: impl Fn(&str, &str, usize) -> Result<(), CoreError>,
    ) -> Result<CompactHead, CoreError> {
        let EntryStore {
            base,
            slots,
            kinds,
            live,
            ..
        } = self;
        let compact = CompactSnapshot::parse_fingerprinted(base)?;
        let mut retired = RetiredSet::new(compact.salt.to_vec());
        for r in compact.retired() {
            retired.insert(&r);
        }
        kinds.extend_from_slice(compact.kinds());
        slots.reserve_exact(compact.entry_count());
        let bytes: &[u8] = base;
        let bad = |position: usize, reason: &str| CoreError::BadEntry {
            position,
            reason: reason.into(),
        };
        let mut at = compact.entries_offset();
        for position in 0..compact.entry_count() {
            let r = record_at(bytes, at).ok_or_else(|| bad(position, "cut short"))?;
            if usize::try_from(r.kind).map_or(true, |k| k >= kinds.len()) {
                return Err(bad(position, "its kind is outside the kinds table"));
            }
            // `checked_text`'s SAFETY rests on this check.
            let (Ok(value), Ok(surrogate)) = (
                std::str::from_utf8(r.value),
                std::str::from_utf8(r.surrogate),
            ) else {
                return Err(bad(position, "not UTF-8"));
            };
            check(value, surrogate, position)?;
            let start = u32::try_from(at)
                .ok()
                .filter(|at| *at < ADDED)
                .ok_or_else(|| CoreError::Wire("compact snapshot: larger than 2 GiB".into()))?;
            slots.push(start);
            *live += 1;
            at = r.end;
        }
        if at != bytes.len() {
            return Err(CoreError::Wire(format!(
                "compact snapshot: field `end` at byte {at}: bytes follow the last entry"
            )));
        }
        Ok(CompactHead {
            generation: compact.generation,
            seq: compact.seq,
            retired,
        })
    }

    pub(crate) fn len(&self) -> usize {
        self.live
    }

    /// The buffer and offset of a slot's record.
    #[inline]
    fn place(&self, slot: Slot) -> Option<(&[u8], usize)> {
        match *self.slots.get(slot as usize)? {
            FREE => None,
            at if at & ADDED != 0 => Some((&self.added, (at & !ADDED) as usize)),
            at => Some((&self.base, at as usize)),
        }
    }

    fn record(&self, slot: Slot) -> Option<Record<'_>> {
        let (bytes, at) = self.place(slot)?;
        record_at(bytes, at)
    }

    pub(crate) fn get(&self, slot: Slot) -> Option<EntryRef<'_>> {
        let r = self.record(slot)?;
        Some(EntryRef {
            slot,
            fingerprint: r.fingerprint,
            value: checked_text(r.value),
            surrogate: checked_text(r.surrogate),
            kind: self.kinds.get(usize::try_from(r.kind).ok()?)?,
            generation: r.generation,
        })
    }

    /// The fingerprint of the entry in `slot` (read without the rest of
    /// its record).
    pub(crate) fn fingerprint_of(&self, slot: Slot) -> Option<EntryFingerprint> {
        let (bytes, at) = self.place(slot)?;
        fingerprint_at(bytes, at)
    }

    /// The value of the entry in `slot`, as bytes (the matchers compare
    /// bytes: no UTF-8 check on their path).
    pub(crate) fn value_of(&self, slot: Slot) -> Option<&[u8]> {
        self.record(slot).map(|r| r.value)
    }

    /// The surrogate of the entry in `slot`, as bytes.
    pub(crate) fn surrogate_of(&self, slot: Slot) -> Option<&[u8]> {
        self.record(slot).map(|r| r.surrogate)
    }

    /// Every active slot whose fingerprint `wanted` takes, in one pass
    /// over the slots (a forget's ids are looked up together, once per
    /// event). Another entry may carry a wanted fingerprint: the caller
    /// confirms each slot by something it knows of the entry.
    pub(crate) fn slots_where(&self, wanted: impl Fn(EntryFingerprint) -> bool) -> Vec<Slot> {
        (0..self.slots.len() as Slot)
            .filter(|&s| {
                fingerprint_in(&self.base, &self.added, &self.slots, s).is_some_and(&wanted)
            })
            .collect()
    }

    /// The first slot carrying `id`'s fingerprint (tests: their ids never
    /// share one).
    #[cfg(test)]
    pub(crate) fn slot_of(&self, id: &crate::wire::EntryId) -> Option<Slot> {
        self.slots_where(|fp| fp == id.fingerprint())
            .first()
            .copied()
    }

    /// Appends an entry's record to `added` and wipes the entry's strings.
    /// None (nothing stored) only when `added` already holds 2 GiB, which
    /// no wasm32 memory can.
    pub(crate) fn insert(&mut self, entry: Entry) -> Option<Slot> {
        let slot = self.insert_record(
            entry.id.fingerprint(),
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

    fn insert_record(
        &mut self,
        fingerprint: EntryFingerprint,
        kind: &Kind,
        generation: u64,
        value: &str,
        surrogate: &str,
    ) -> Option<Slot> {
        let at = u32::try_from(self.added.len())
            .ok()
            .filter(|at| *at < ADDED)?
            | ADDED;
        let kind = match self.kinds.iter().position(|k| k == kind) {
            Some(k) => k,
            None => {
                self.kinds.push(kind.clone());
                self.kinds.len() - 1
            }
        };
        self.added.extend_from_slice(&fingerprint.0.to_le_bytes());
        put_varint(&mut self.added, kind as u64);
        put_varint(&mut self.added, generation);
        put_bytes(&mut self.added, value.as_bytes());
        put_bytes(&mut self.added, surrogate.as_bytes());
        self.live += 1;
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = at;
                slot
            }
            None => {
                self.slots.push(at);
                (self.slots.len() - 1) as Slot
            }
        };
        Some(slot)
    }

    /// Removes an entry and wipes its record before the slot is freed (a
    /// forgotten value must not linger in the VM's memory).
    pub(crate) fn remove(&mut self, slot: Slot) -> bool {
        let Some(end) = self.record(slot).map(|r| r.end) else {
            return false;
        };
        let at = self.slots[slot as usize];
        let start = (at & !ADDED) as usize;
        let bytes = if at & ADDED != 0 {
            self.added_dead += end - start;
            &mut self.added
        } else {
            &mut self.base
        };
        if let Some(record) = bytes.get_mut(start..end) {
            wipe(record);
        }
        self.slots[slot as usize] = FREE;
        self.free.push(slot);
        self.live -= 1;
        if self.added_dead > 4096 && self.added_dead * 2 > self.added.len() {
            self.compact_added();
        }
        true
    }

    /// Moves the live records of `added` into a buffer of their size and
    /// zeroes the old one.
    fn compact_added(&mut self) {
        let mut fresh = Vec::with_capacity(self.added.len() - self.added_dead);
        for at in self.slots.iter_mut() {
            if *at == FREE || *at & ADDED == 0 {
                continue;
            }
            let start = (*at & !ADDED) as usize;
            let Some(end) = record_at(&self.added, start).map(|r| r.end) else {
                continue;
            };
            *at = fresh.len() as u32 | ADDED;
            fresh.extend_from_slice(&self.added[start..end]);
        }
        wipe(&mut self.added);
        self.added = fresh;
        self.added_dead = 0;
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = EntryRef<'_>> {
        (0..self.slots.len() as Slot).filter_map(|slot| self.get(slot))
    }

    /// Heap bytes held, by part (for the memory figures).
    pub(crate) fn heap_parts(&self) -> [(&'static str, usize); 3] {
        [
            ("store: snapshot bytes", self.base.capacity()),
            ("store: added records", self.added.capacity()),
            (
                "store: slots",
                (self.slots.capacity() + self.free.capacity()) * 4,
            ),
        ]
    }
}

/// A value or surrogate of a record, as the `&str` it was written from.
///
/// The records' texts are checked once, where they enter the store, and
/// not again on each read (checking them on every lookup cost 10-20% of
/// the memo-warm masking path).
#[inline]
fn checked_text(bytes: &[u8]) -> &str {
    debug_assert!(std::str::from_utf8(bytes).is_ok());
    // SAFETY: `bytes` is the value or surrogate range of a live record
    // (`record_at` on a slot's offset). Every record was either appended by
    // `insert_record` from two `&str`s, or read by `read_base`, which
    // refuses a record whose value or surrogate is not UTF-8 (checked on
    // the very ranges `record_at` returns, before the record gets a slot).
    // Records are only ever moved whole (`compact_added`) or zeroed whole
    // when their slot is freed (`remove`), so a live slot's ranges are
    // exactly the checked texts.
    unsafe { std::str::from_utf8_unchecked(bytes) }
}

/// The fingerprint held in `slot`, if it is occupied.
fn fingerprint_in(
    base: &[u8],
    added: &[u8],
    slots: &[u32],
    slot: Slot,
) -> Option<EntryFingerprint> {
    match *slots.get(slot as usize)? {
        FREE => None,
        at if at & ADDED != 0 => fingerprint_at(added, (at & !ADDED) as usize),
        at => fingerprint_at(base, at as usize),
    }
}

/// Turns a compact snapshot into its fingerprinted form where it lies:
/// every entry is read and checked first, its whole id against the others
/// (nothing is moved if one is damaged or listed twice), then each is
/// moved down with its id replaced by the id's fingerprint, and the freed
/// tail is zeroed and cut. (Tests and tools: a worker joins the
/// fingerprinted form from the shared parts instead.)
fn fingerprint_in_place(bytes: &mut Vec<u8>) -> Result<(), CoreError> {
    let (entries_offset, spans) = {
        let compact = CompactSnapshot::parse(bytes)?;
        let mut spans = Vec::with_capacity(compact.entry_count());
        let mut ids = HashSet::with_capacity(compact.entry_count());
        for (position, entry) in compact.entries().enumerate() {
            let e = entry?;
            if !ids.insert(e.id) {
                return Err(listed_twice(position));
            }
            spans.push((e.id.fingerprint(), e.start, e.end));
        }
        (compact.entries_offset(), spans)
    };
    bytes[..FINGERPRINTED_MAGIC.len()].copy_from_slice(&FINGERPRINTED_MAGIC);
    // Each record is 8 bytes shorter, so every write lands before what it
    // copies next.
    let mut to = entries_offset;
    for (fingerprint, start, end) in spans {
        bytes[to..to + FINGERPRINT_BYTES].copy_from_slice(&fingerprint.0.to_le_bytes());
        to += FINGERPRINT_BYTES;
        let rest = start + ID_BYTES..end;
        let len = rest.len();
        bytes.copy_within(rest, to);
        to += len;
    }
    wipe(&mut bytes[to..]);
    bytes.truncate(to);
    Ok(())
}

/// Overwrites a byte buffer (a `String` given up by `into_bytes`) with
/// zeros before it is freed.
fn wipe_bytes(mut bytes: Vec<u8>) {
    wipe(&mut bytes);
}
