//! The masked-text memo: agents resend the whole history every turn, so a
//! text already masked is served from memory. Bounded by bytes, least
//! recently used first out. Part of the erasure surface
//! (docs/architecture.md#erasure-surface): each entry records the vault
//! entries it used, so a forget drops exactly those, and a hit is
//! re-validated against the index before it is served.

use super::find::{MaskedText, TextMasking};
use super::views;
use crate::json::needs_escape;
use crate::snapshot::{Slot, SnapshotIndex};
use crate::wire::{EntryFingerprint, EntryId};
use std::collections::{HashMap, HashSet, VecDeque};
use std::hash::{BuildHasher, BuildHasherDefault, Hasher};
use std::sync::Arc;

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
    /// The masked text; `None` when masking changed nothing. Shared with the
    /// hits that serve it (no copy per hit).
    masked: Option<Arc<str>>,
    /// The masked text holds no byte a JSON string must escape: it can be
    /// spliced into a JSON body as it is.
    plain: bool,
    used: Box<[(Slot, EntryFingerprint)]>,
    values_masked: usize,
    /// `index.add_epoch()` up to which the entry is known to be valid.
    epoch: u64,
    /// `index.removal_epoch()` when every entry in `used` was last found
    /// active in its slot: while the index's is the same, none was removed
    /// and they are not read again.
    removal_epoch: u64,
    /// Position in the recency order.
    tick: u64,
    cost: usize,
}

/// A bounded LRU memo of masked texts keyed by a 128-bit hash of (context,
/// text).
pub(crate) struct MaskMemo {
    entries: HashMap<u128, MemoEntry, BuildHasherDefault<KeyHasher>>,
    /// Recency: (tick, key) in tick order, oldest first. A hit pushes a new
    /// pair and leaves the old one behind: a pair whose tick is no longer its
    /// entry's is stale and skipped when evicting (compacted when they pile
    /// up). O(1) per hit, where a tree ordered by tick cost two updates.
    order: VecDeque<(u64, u128)>,
    next_tick: u64,
    bytes: usize,
    capacity: usize,
    /// Seeds the text hash: chosen per memo, so texts that collide (in the
    /// map or in the whole key) cannot be prepared in advance.
    seed: u64,
}

/// The memo's keys are already uniform hashes: the map uses their low bits
/// as they are instead of hashing them again.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Not reached for u128 keys (write_u128 below); a fold keeps it sound.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u128(&mut self, key: u128) {
        self.0 = key as u64;
    }
}

impl MaskMemo {
    /// An empty memo holding at most about `capacity` bytes (0 disables it).
    pub(crate) fn new(capacity: usize) -> Self {
        MaskMemo {
            entries: HashMap::default(),
            order: VecDeque::new(),
            next_tick: 0,
            bytes: 0,
            capacity,
            seed: std::collections::hash_map::RandomState::new().hash_one(0x6d65_6d6fu64),
        }
    }

    /// Whether the memo keeps anything (capacity above 0).
    pub(crate) fn is_enabled(&self) -> bool {
        self.capacity > 0
    }

    /// The memo's key for a text masked in `context`.
    pub(crate) fn key(&self, context: TextContext, text: &str) -> u128 {
        xxhash_rust::xxh3::xxh3_128_with_seed(text.as_bytes(), self.seed ^ context as u64)
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
        self.next_tick = 0;
        self.bytes = 0;
    }

    /// The memoised masking of `text`, if there is one and it is still
    /// right for `index`: every entry it used is still active under the same
    /// id, and no value added to the vault since it was stored is written in
    /// `text` (a text that could hide one behind a reading or an escape
    /// is not served once any value was added). A stale entry is dropped.
    /// A hit's entries are added to `used_sink` (the request's scope).
    pub(crate) fn get(
        &mut self,
        key: u128,
        text: &str,
        index: &SnapshotIndex,
        want_used: bool,
        used_sink: &mut Vec<(Slot, EntryFingerprint)>,
    ) -> Option<TextMasking> {
        let entry = self.entries.get_mut(&key)?;
        if !still_valid(entry, text, index) {
            self.remove(key);
            return None;
        }
        entry.epoch = index.add_epoch();
        entry.removal_epoch = index.removal_epoch();
        entry.tick = self.next_tick;
        used_sink.extend_from_slice(&entry.used);
        let hit = TextMasking {
            masked: entry.masked.clone().map(MaskedText::Shared),
            plain: entry.plain,
            used: if want_used {
                entry.used.to_vec()
            } else {
                Vec::new()
            },
            values_masked: entry.values_masked,
            redacted: 0,
            incomplete: false,
        };
        self.order.push_back((self.next_tick, key));
        self.next_tick += 1;
        self.compact_order();
        Some(hit)
    }

    /// Drops stale recency pairs once they outnumber the live ones.
    fn compact_order(&mut self) {
        if self.order.len() <= 2 * self.entries.len() + 64 {
            return;
        }
        let entries = &self.entries;
        self.order
            .retain(|(tick, key)| entries.get(key).is_some_and(|e| e.tick == *tick));
    }

    /// Stores a complete masking (no new values, no placeholders: a
    /// placeholder must give way to a surrogate once the value has an entry).
    pub(crate) fn insert(&mut self, key: u128, masking: &TextMasking, index: &SnapshotIndex) {
        if masking.incomplete || masking.redacted > 0 || self.capacity == 0 {
            return;
        }
        let masked_len = masking.masked.as_ref().map_or(0, |m| m.as_str().len());
        let cost = ENTRY_OVERHEAD
            + masked_len
            + masking.used.len() * std::mem::size_of::<(Slot, EntryFingerprint)>();
        // One huge text must not flush the whole memo.
        if cost > self.capacity / 8 {
            return;
        }
        self.remove(key);
        while self.bytes + cost > self.capacity {
            let Some((tick, oldest)) = self.order.pop_front() else {
                break;
            };
            if self.entries.get(&oldest).is_some_and(|e| e.tick == tick) {
                self.remove(oldest);
            }
        }
        let tick = self.next_tick;
        self.next_tick += 1;
        self.order.push_back((tick, key));
        self.bytes += cost;
        let masked = masking.masked.as_ref().map(MaskedText::to_shared);
        self.entries.insert(
            key,
            MemoEntry {
                plain: masking.plain || masked.as_deref().is_none_or(|m| !needs_escape(m)),
                masked,
                used: masking.used.clone().into_boxed_slice(),
                values_masked: masking.values_masked,
                epoch: index.add_epoch(),
                removal_epoch: index.removal_epoch(),
                tick,
                cost,
            },
        );
        self.compact_order();
    }

    /// Drops every entry that used one of `ids`. Returns how many went.
    pub(crate) fn forget(&mut self, ids: &[EntryId]) -> usize {
        if ids.is_empty() || self.entries.is_empty() {
            return 0;
        }
        // By fingerprint: an entry that used another id of the same
        // fingerprint goes too (masked again at its next use).
        let fingerprints: HashSet<EntryFingerprint> =
            ids.iter().map(EntryId::fingerprint).collect();
        let doomed: Vec<u128> = self
            .entries
            .iter()
            .filter(|(_, e)| e.used.iter().any(|(_, fp)| fingerprints.contains(fp)))
            .map(|(k, _)| *k)
            .collect();
        for key in &doomed {
            self.remove(*key);
        }
        doomed.len()
    }

    fn remove(&mut self, key: u128) {
        // Its recency pairs go stale and are skipped or compacted later.
        if let Some(entry) = self.entries.remove(&key) {
            self.bytes -= entry.cost;
        }
    }
}

fn still_valid(entry: &MemoEntry, text: &str, index: &SnapshotIndex) -> bool {
    // Nothing removed since they were all found active: they still are
    // (a slot changes hands only through a removal). Otherwise each is read
    // again from the index.
    let used_active = entry.removal_epoch == index.removal_epoch()
        || entry
            .used
            .iter()
            .all(|(slot, fp)| index.entry_fingerprint(*slot) == Some(*fp));
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
        Some(slots) if slots.is_empty() => true,
        // A value added since can hide behind a reading (`%40`) or a JSON
        // escape inside the text, where a byte search does not see it:
        // such a text is masked afresh.
        Some(_) if views::may_hide(text) || memchr::memchr(b'\\', text.as_bytes()).is_some() => {
            false
        }
        Some(slots) => !slots
            .iter()
            .filter_map(|slot| index.entry(*slot))
            .any(|added| text.contains(added.value)),
    }
}
