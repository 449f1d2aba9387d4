//! The masked-text memo: agents resend the whole history every turn, so a
//! text already masked is served from memory. Bounded by bytes, least
//! recently used first out. Part of the erasure surface (DESIGN.md, "Caches"):
//! each entry records the vault entries it used, so a forget drops exactly
//! those, and a hit is re-validated against the index before it is served.

use super::find::TextMasking;
use crate::snapshot::{Slot, SnapshotIndex};
use crate::wire::EntryId;
use std::collections::{BTreeMap, HashMap, HashSet};

/// Texts shorter than this are masked afresh: hashing and re-validating
/// would cost about as much as scanning them.
pub(crate) const MIN_MEMO_LEN: usize = 32;

/// What a text was masked under: the same text masked as plain text and as
/// a JSON text (tool-call arguments) gives different results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TextContext {
    Text = 1,
    JsonText = 2,
}

/// A fixed per-entry overhead (map slots, order index, the struct itself).
const ENTRY_OVERHEAD: usize = 96;

struct MemoEntry {
    /// The masked text; `None` when masking changed nothing.
    masked: Option<Box<str>>,
    used: Box<[(Slot, EntryId)]>,
    values_masked: usize,
    /// `index.add_epoch()` up to which the entry is known to be valid.
    epoch: u64,
    /// Position in the recency order.
    tick: u64,
    cost: usize,
}

/// A bounded LRU memo of masked texts keyed by a 128-bit hash of (context,
/// text).
pub(crate) struct MaskMemo {
    entries: HashMap<u128, MemoEntry>,
    /// Recency: tick → key; the smallest tick is evicted first.
    order: BTreeMap<u64, u128>,
    next_tick: u64,
    bytes: usize,
    capacity: usize,
}

/// The memo's key for a text.
pub(crate) fn memo_key(context: TextContext, text: &str) -> u128 {
    xxhash_rust::xxh3::xxh3_128_with_seed(text.as_bytes(), context as u64)
}

impl MaskMemo {
    /// An empty memo holding at most about `capacity` bytes (0 disables it).
    pub(crate) fn new(capacity: usize) -> Self {
        MaskMemo {
            entries: HashMap::new(),
            order: BTreeMap::new(),
            next_tick: 0,
            bytes: 0,
            capacity,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Approximate bytes held.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    pub(crate) fn clear(&mut self) {
        self.entries.clear();
        self.order.clear();
        self.bytes = 0;
    }

    /// The memoised masking of `text`, if there is one and it is still
    /// right for `index`: every entry it used is still active under the same
    /// id, and no value added to the vault since it was stored is written in
    /// `text`. A stale entry is dropped.
    pub(crate) fn get(
        &mut self,
        key: u128,
        text: &str,
        index: &SnapshotIndex,
    ) -> Option<TextMasking> {
        let entry = self.entries.get_mut(&key)?;
        if !still_valid(entry, text, index) {
            self.remove(key);
            return None;
        }
        entry.epoch = index.add_epoch();
        let old_tick = entry.tick;
        entry.tick = self.next_tick;
        self.order.remove(&old_tick);
        self.order.insert(self.next_tick, key);
        self.next_tick += 1;
        Some(TextMasking {
            masked: entry.masked.as_deref().map(str::to_string),
            used: entry.used.to_vec(),
            values_masked: entry.values_masked,
            redacted: 0,
            incomplete: false,
        })
    }

    /// Stores a complete masking (no new values, no placeholders: a
    /// placeholder must give way to a surrogate once the value has an entry).
    pub(crate) fn insert(&mut self, key: u128, masking: &TextMasking, index: &SnapshotIndex) {
        if masking.incomplete || masking.redacted > 0 || self.capacity == 0 {
            return;
        }
        let masked_len = masking.masked.as_ref().map_or(0, String::len);
        let cost = ENTRY_OVERHEAD
            + masked_len
            + masking.used.len() * std::mem::size_of::<(Slot, EntryId)>();
        // One huge text must not flush the whole memo.
        if cost > self.capacity / 8 {
            return;
        }
        self.remove(key);
        while self.bytes + cost > self.capacity {
            let Some((_, oldest)) = self.order.pop_first() else {
                break;
            };
            if let Some(evicted) = self.entries.remove(&oldest) {
                self.bytes -= evicted.cost;
            }
        }
        let tick = self.next_tick;
        self.next_tick += 1;
        self.order.insert(tick, key);
        self.bytes += cost;
        self.entries.insert(
            key,
            MemoEntry {
                masked: masking.masked.as_deref().map(Box::from),
                used: masking.used.clone().into_boxed_slice(),
                values_masked: masking.values_masked,
                epoch: index.add_epoch(),
                tick,
                cost,
            },
        );
    }

    /// Drops every entry that used one of `ids`. Returns how many went.
    pub(crate) fn forget(&mut self, ids: &[EntryId]) -> usize {
        if ids.is_empty() || self.entries.is_empty() {
            return 0;
        }
        let ids: HashSet<&EntryId> = ids.iter().collect();
        let doomed: Vec<u128> = self
            .entries
            .iter()
            .filter(|(_, e)| e.used.iter().any(|(_, id)| ids.contains(id)))
            .map(|(k, _)| *k)
            .collect();
        for key in &doomed {
            self.remove(*key);
        }
        doomed.len()
    }

    fn remove(&mut self, key: u128) {
        if let Some(entry) = self.entries.remove(&key) {
            self.order.remove(&entry.tick);
            self.bytes -= entry.cost;
        }
    }
}

fn still_valid(entry: &MemoEntry, text: &str, index: &SnapshotIndex) -> bool {
    let used_active = entry
        .used
        .iter()
        .all(|(slot, id)| index.entry(*slot).is_some_and(|e| e.id == *id));
    if !used_active {
        return false;
    }
    let now = index.add_epoch();
    if entry.epoch == now {
        return true;
    }
    if entry.epoch > now {
        // The epoch went back: this is another index (a new snapshot).
        return false;
    }
    match index.values_added_since(entry.epoch) {
        None => false,
        Some(slots) => !slots
            .iter()
            .filter_map(|slot| index.entry(*slot))
            .any(|added| text.contains(added.value)),
    }
}
