//! `SnapshotIndex`: one worker's copy of a vault, kept current by applying
//! the feed's events in order.

use super::entry_store::{EntryRef, EntryStore, Slot};
use super::retired_set::RetiredSet;
use super::token_matcher::{TokenMatcher, VaultMatch};
use super::token_starts::for_each_start;
use crate::error::CoreError;
use crate::text::{on_word_boundaries, token_hash};
use crate::wire::compact_snapshot::hex_bytes;
use crate::wire::{
    check_version, Entry, EntryFingerprint, EntryId, Event, EventBody, RetiredSurrogate, Snapshot,
};
use std::collections::{HashSet, VecDeque};

/// How many recent additions are remembered for memo re-validation.
const RECENT_ADDS: usize = 4096;
/// The longest retired surrogate `find_retired` looks for.
const MAX_RETIRED_LEN: usize = 256;

/// What applying one event changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AppliedEvent {
    /// Entries added (or already present).
    pub added: usize,
    /// Ids of entries that were forgotten and removed: the caller drops
    /// every cache that used them (the masker's memo, by their
    /// fingerprints).
    pub forgotten: Vec<EntryId>,
}

/// What [`SnapshotIndex::apply_events`] did.
#[derive(Debug, Default)]
pub struct AppliedEvents {
    /// Events applied, from the first.
    pub events: usize,
    /// What they changed together.
    pub total: AppliedEvent,
    /// Why the event after them was refused, if one was.
    pub refused: Option<CoreError>,
}

/// A vault as one worker holds it.
pub struct SnapshotIndex {
    generation: u64,
    seq: u64,
    store: EntryStore,
    values: TokenMatcher,
    surrogates: TokenMatcher,
    retired: RetiredSet,
    add_epoch: u64,
    recent_adds: VecDeque<(u64, Slot)>,
    /// Additions at or before this epoch are no longer listed (the index's
    /// creation, or the newest addition evicted from `recent_adds`).
    horizon: u64,
    /// Moved by every removal (a forget, a value or id replaced), the only
    /// way a slot loses its entry or gets another: while it is unchanged,
    /// every entry active at an earlier read is still in its slot.
    removal_epoch: u64,
}

/// Epochs are drawn from one counter for every index of the process, so an
/// epoch taken from one index never means anything to another (a memo
/// entry made before a snapshot reload can never validate against the new
/// index).
static NEXT_EPOCH: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

fn next_epoch() -> u64 {
    NEXT_EPOCH.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl SnapshotIndex {
    /// An empty vault at generation 0, feed position 0.
    pub fn empty() -> Self {
        let epoch = next_epoch();
        SnapshotIndex {
            generation: 0,
            seq: 0,
            store: EntryStore::default(),
            values: TokenMatcher::default(),
            surrogates: TokenMatcher::default(),
            retired: RetiredSet::default(),
            add_epoch: epoch,
            recent_adds: VecDeque::new(),
            horizon: epoch,
            removal_epoch: epoch,
        }
    }

    /// Builds the index of a snapshot (the JSON model).
    pub fn from_snapshot(snapshot: Snapshot) -> Result<Self, CoreError> {
        check_version(snapshot.version)?;
        let salt = hex_bytes(&snapshot.retired_salt).ok_or_else(|| {
            CoreError::Wire("retired_salt: expected an even number of hex digits".into())
        })?;
        let text = snapshot
            .entries
            .iter()
            .map(|e| e.value.len() + e.surrogate.len())
            .sum();
        let mut store = EntryStore::with_capacity(snapshot.entries.len(), text);
        let mut ids = HashSet::with_capacity(snapshot.entries.len());
        for (position, entry) in snapshot.entries.into_iter().enumerate() {
            validate_entry(&entry, position)?;
            if !ids.insert(entry.id) {
                return Err(listed_twice(position));
            }
            store.insert(entry);
        }
        let mut retired = RetiredSet::new(salt);
        for r in &snapshot.retired {
            retired.insert(r);
        }
        let index = Self::of_store(snapshot.generation, snapshot.seq, store, retired);
        index.check_values_once()?;
        Ok(index)
    }

    /// Builds the index straight from a compact snapshot's bytes
    /// ([`crate::wire::compact_snapshot`]): the bytes become the entry
    /// store (its records are read where they lie, with a 4-byte slot
    /// each), so nothing is copied and no `Snapshot` or `Vec<Entry>` is
    /// made. Wasm memory never shrinks (the VM keeps its peak): the peak
    /// is the bytes, the slots and the matchers, and the index keeps them
    /// all. On an error the bytes are zeroed and freed.
    pub fn from_compact(bytes: Vec<u8>) -> Result<Self, CoreError> {
        let (store, head) = EntryStore::of_compact(bytes, validate_parts)?;
        let index = Self::of_store(head.generation, head.seq, store, head.retired);
        index.check_values_once()?;
        Ok(index)
    }

    /// A snapshot lists each value once (an id is the keyed hash of its
    /// value): a second entry of a value is its id listed twice, and
    /// would leave one behind when the id is forgotten. (Records keep
    /// fingerprints, so the values are compared; a compact or JSON
    /// snapshot's whole ids were compared as it was read, the joined form
    /// has none.) The slots of a snapshot's entries are their positions.
    fn check_values_once(&self) -> Result<(), CoreError> {
        for e in self.store.iter() {
            let holder = self.values.exact(e.value, |s| self.store.value_of(s));
            if let Some(other) = holder.filter(|s| *s != e.slot) {
                return Err(listed_twice(other.max(e.slot) as usize));
            }
        }
        Ok(())
    }

    /// The index over a filled store: the matchers are built here.
    fn of_store(generation: u64, seq: u64, store: EntryStore, retired: RetiredSet) -> Self {
        let values =
            TokenMatcher::build(store.iter().map(|e| (e.value, e.slot)), store.len(), false);
        let surrogates = TokenMatcher::build(
            store.iter().map(|e| (e.surrogate, e.slot)),
            store.len(),
            true,
        );
        let epoch = next_epoch();
        SnapshotIndex {
            generation,
            seq,
            store,
            values,
            surrogates,
            retired,
            add_epoch: epoch,
            recent_adds: VecDeque::new(),
            horizon: epoch,
            removal_epoch: epoch,
        }
    }

    /// The vault's generation this index is at.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The feed position this index is current to.
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// Active entries.
    pub fn len(&self) -> usize {
        self.store.len()
    }

    pub fn is_empty(&self) -> bool {
        self.store.len() == 0
    }

    /// Retired surrogates known.
    pub fn retired_len(&self) -> usize {
        self.retired.len()
    }

    /// Applies the next event of the feed. It must be exactly `seq() + 1`:
    /// anything else (a gap, a replay) is refused and nothing changes.
    pub fn apply_event(&mut self, event: &Event) -> Result<AppliedEvent, CoreError> {
        let expected = self.seq + 1;
        if event.seq != expected {
            return Err(CoreError::OutOfSequence {
                expected,
                found: event.seq,
            });
        }
        let applied = match &event.body {
            EventBody::Added { entries } => {
                for (position, entry) in entries.iter().enumerate() {
                    validate_entry(entry, position)?;
                }
                let mut applied = AppliedEvent::default();
                for entry in entries {
                    self.insert(entry.clone());
                    applied.added += 1;
                }
                applied
            }
            EventBody::Forgotten { .. } => {
                self.check_forget(event, self.generation)?;
                AppliedEvent {
                    added: 0,
                    forgotten: self.apply_forget_run(std::slice::from_ref(event)),
                }
            }
        };
        self.seq = event.seq;
        Ok(applied)
    }

    /// Applies `events` in order, each the next of the feed, as
    /// [`apply_event`](Self::apply_event) one by one would, and stops at
    /// the first one refused (those before it stay applied). A run of
    /// consecutive `forgotten` events is applied in one pass over the
    /// slots, not one pass each: a worker catching up on a forget storm
    /// pays one pass, however many events (the pass costs ~0.3 ms at 100k
    /// entries natively). Together they drop what they would one by one:
    /// an entry goes when it carries one of the run's fingerprints and its
    /// surrogate's hash is one the run retires (surrogates are unique in a
    /// vault, so the hash names the event that retires it).
    pub fn apply_events(&mut self, events: &[Event]) -> AppliedEvents {
        let mut out = AppliedEvents::default();
        let mut rest = events;
        while !rest.is_empty() {
            let run = self.acceptable_forgets(rest);
            if run > 0 {
                let forgotten = self.apply_forget_run(&rest[..run]);
                out.total.forgotten.extend(forgotten);
                out.events += run;
                rest = &rest[run..];
                continue;
            }
            match self.apply_event(&rest[0]) {
                Ok(applied) => {
                    out.total.added += applied.added;
                    out.total.forgotten.extend(applied.forgotten);
                    out.events += 1;
                    rest = &rest[1..];
                }
                Err(e) => {
                    out.refused = Some(e);
                    break;
                }
            }
        }
        out
    }

    /// What makes `apply_event` refuse a `forgotten` event at this
    /// position with the index at `generation` (one check for both paths).
    fn check_forget(&self, event: &Event, generation: u64) -> Result<(), CoreError> {
        let EventBody::Forgotten {
            ids,
            retired,
            generation: new,
        } = &event.body
        else {
            return Ok(());
        };
        if *new < generation {
            return Err(CoreError::Wire(format!(
                "forgotten event {}: generation {} is older than the index's {}",
                event.seq, new, generation
            )));
        }
        // One retired surrogate per id: the hashes confirm which entry
        // each id names (`forget_ids`).
        if retired.len() != ids.len() {
            return Err(CoreError::Wire(format!(
                "forgotten event {}: {} ids but {} retired surrogates",
                event.seq,
                ids.len(),
                retired.len()
            )));
        }
        Ok(())
    }

    /// How many of `events`, from the first, are `forgotten` events this
    /// index would accept one after the other.
    fn acceptable_forgets(&self, events: &[Event]) -> usize {
        let (mut seq, mut generation) = (self.seq, self.generation);
        events
            .iter()
            .take_while(|event| {
                let EventBody::Forgotten {
                    generation: new, ..
                } = &event.body
                else {
                    return false;
                };
                let ok = event.seq == seq + 1 && self.check_forget(event, generation).is_ok();
                if ok {
                    (seq, generation) = (event.seq, *new);
                }
                ok
            })
            .count()
    }

    /// Applies `forgotten` events that were checked
    /// ([`check_forget`](Self::check_forget), in turn): one pass over the
    /// slots for all their ids, then their retired surrogates, generation
    /// and position. The one way a forget is applied (one event or a run).
    fn apply_forget_run(&mut self, events: &[Event]) -> Vec<EntryId> {
        let mut ids = Vec::new();
        let mut retired = Vec::new();
        for event in events {
            if let EventBody::Forgotten {
                ids: i,
                retired: r,
                generation,
            } = &event.body
            {
                ids.extend_from_slice(i);
                retired.extend_from_slice(r);
                (self.seq, self.generation) = (event.seq, *generation);
            }
        }
        let forgotten = self.forget_ids(&ids, &retired);
        for r in &retired {
            self.retired.insert(r);
        }
        forgotten
    }

    /// Adds entries a callout answered with. They must be of the index's
    /// generation: entries derived before a forget that this worker has
    /// since applied are stale and refused (ask again).
    pub fn add_entries(
        &mut self,
        generation: u64,
        entries: Vec<Entry>,
    ) -> Result<usize, CoreError> {
        if generation != self.generation {
            return Err(CoreError::StaleGeneration {
                found: generation,
                current: self.generation,
            });
        }
        for (position, entry) in entries.iter().enumerate() {
            validate_entry(entry, position)?;
            if entry.generation > generation {
                return Err(CoreError::BadEntry {
                    position,
                    reason: "generation is newer than the answer's".into(),
                });
            }
        }
        let count = entries.len();
        for entry in entries {
            self.insert(entry);
        }
        Ok(count)
    }

    /// Adds an entry; the entry of the same value, if another, gives way
    /// (an id is the keyed hash of its value: one value, one id). Nothing
    /// is removed by its fingerprint: a different value under the same
    /// fingerprint is another person's entry (ids that share one), which
    /// stays.
    fn insert(&mut self, entry: Entry) {
        if let Some(existing) = self.by_value(&entry.value) {
            if existing.fingerprint == entry.id.fingerprint()
                && existing.surrogate == entry.surrogate
            {
                return;
            }
            let slot = existing.slot;
            self.remove_slot(slot);
        }
        let Some(slot) = self.store.insert(entry) else {
            return;
        };
        if let Some(e) = self.store.get(slot) {
            self.values.insert(e.value, slot);
            self.surrogates.insert(e.surrogate, slot);
        }
        self.add_epoch = next_epoch();
        self.recent_adds.push_back((self.add_epoch, slot));
        if self.recent_adds.len() > RECENT_ADDS {
            if let Some((evicted, _)) = self.recent_adds.pop_front() {
                self.horizon = evicted;
            }
        }
    }

    /// Removes every entry a forget names: the entries that carry the
    /// fingerprint of one of `ids` *and* whose surrogate the event retires
    /// (one pass over the slots). A fingerprint may be shared by another id
    /// (one chance in 2^64 a pair); the retired hash tells them apart,
    /// because the control service never gives two entries of a vault
    /// surrogates of one hash (it draws again when the hash is taken,
    /// active or retired). So another person's entry that shares a
    /// fingerprint stays (its value stays masked), and the forgotten one
    /// goes (its value is never restored again). Returns the ids whose
    /// entry went.
    fn forget_ids(&mut self, ids: &[EntryId], retired: &[RetiredSurrogate]) -> Vec<EntryId> {
        if ids.is_empty() || self.store.len() == 0 {
            return Vec::new();
        }
        // Sorted, searched by halves: every slot is asked (a hash set's
        // hashing cost 20x the pass).
        let mut wanted: Vec<EntryFingerprint> = ids.iter().map(EntryId::fingerprint).collect();
        crate::sort::sort(&mut wanted);
        let confirm = ForgetConfirmation::new(retired);
        let mut gone: HashSet<EntryFingerprint> = HashSet::new();
        for slot in self
            .store
            .slots_where(|fp| wanted.binary_search(&fp).is_ok())
        {
            let retires = self
                .store
                .surrogate_of(slot)
                .is_some_and(|surrogate| confirm.retires(&self.retired, surrogate));
            let fingerprint = self.store.fingerprint_of(slot);
            if retires && self.remove_slot(slot) {
                gone.extend(fingerprint);
            }
        }
        let mut listed = HashSet::new();
        ids.iter()
            .filter(|id| gone.contains(&id.fingerprint()) && listed.insert(**id))
            .copied()
            .collect()
    }

    fn remove_slot(&mut self, slot: Slot) -> bool {
        if let Some(e) = self.store.get(slot) {
            self.values.remove(e.value, slot);
            self.surrogates.remove(e.surrogate, slot);
        }
        self.recent_adds.retain(|(_, s)| *s != slot);
        self.removal_epoch = next_epoch();
        self.store.remove(slot)
    }

    /// The entry in `slot`, if it is active.
    pub fn entry(&self, slot: Slot) -> Option<EntryRef<'_>> {
        self.store.get(slot)
    }

    /// The fingerprint of the entry in `slot`, if it is active (what a
    /// memo checks of each entry it used, without reading the entry's
    /// texts).
    pub fn entry_fingerprint(&self, slot: Slot) -> Option<EntryFingerprint> {
        self.store.fingerprint_of(slot)
    }

    /// Every active entry.
    pub fn entries(&self) -> impl Iterator<Item = EntryRef<'_>> {
        self.store.iter()
    }

    /// The active entry whose value is exactly `value`.
    pub fn by_value(&self, value: &str) -> Option<EntryRef<'_>> {
        self.values
            .exact(value, |s| self.store.value_of(s))
            .and_then(|slot| self.store.get(slot))
    }

    /// The active entry whose surrogate is exactly `surrogate`.
    pub fn by_surrogate(&self, surrogate: &str) -> Option<EntryRef<'_>> {
        self.surrogates
            .exact(surrogate, |s| self.store.surrogate_of(s))
            .and_then(|slot| self.store.get(slot))
    }

    /// True when `candidate` is a retired surrogate.
    pub fn is_retired(&self, candidate: &str) -> bool {
        self.retired.contains(candidate)
    }

    /// True when `candidate` is a surrogate, active or retired: already fake.
    pub fn is_surrogate(&self, candidate: &str) -> bool {
        self.by_surrogate(candidate).is_some() || self.is_retired(candidate)
    }

    /// Appends every vault value written in `text` (word-bounded), in start
    /// order: the longest at each start, overlapping ones included, one
    /// wholly inside an earlier one left out. The masker covers the union
    /// of overlapping ones, so no byte of a written value is missed.
    pub fn find_values(&self, text: &str, out: &mut Vec<VaultMatch>) {
        self.values
            .find_overlapping(text, |s| self.store.value_of(s), out);
    }

    /// Appends every active surrogate written in `text`.
    pub fn find_surrogates(&self, text: &str, out: &mut Vec<VaultMatch>) {
        self.surrogates
            .find(text, |s| self.store.surrogate_of(s), out);
    }

    /// Appends the spans of retired surrogates written in `text`, found by
    /// lead bucket then confirmed by keyed hash.
    pub fn find_retired(&self, text: &str, out: &mut Vec<(usize, usize)>) {
        if self.retired.is_empty() {
            return;
        }
        let mut pos = 0;
        for_each_start(text, |start, token_end| {
            if start < pos {
                return;
            }
            if !self
                .retired
                .has_lead_of(token_hash(&text.as_bytes()[start..token_end]))
            {
                return;
            }
            // Try every end on a char boundary, longest first.
            let limit = (start + MAX_RETIRED_LEN).min(text.len());
            let mut end = limit;
            while end >= token_end {
                if text.is_char_boundary(end)
                    && on_word_boundaries(text, start, end)
                    && self.retired.contains(&text[start..end])
                {
                    out.push((start, end));
                    pos = end;
                    return;
                }
                end -= 1;
            }
        });
    }

    /// The byte offset from which a stream must hold `text` back (its tail
    /// could still become an active surrogate); `text.len()` when none.
    /// Retired surrogates count too: a retired `Luca Bianchi` streamed as
    /// `Luca` + ` Bianchi` must not have its `Luca` restored on its own.
    pub fn surrogate_holdback(&self, text: &str) -> usize {
        let active = self
            .surrogates
            .holdback(text, |s| self.store.surrogate_of(s));
        active.min(self.retired_holdback(text))
    }

    /// The earliest place in the last `MAX_RETIRED_LEN` bytes where a token
    /// that may lead a retired surrogate starts.
    fn retired_holdback(&self, text: &str) -> usize {
        if self.retired.is_empty() {
            return text.len();
        }
        let window_start = text.len().saturating_sub(MAX_RETIRED_LEN);
        let mut held = text.len();
        for_each_start(text, |start, token_end| {
            if held == text.len()
                && start >= window_start
                && self
                    .retired
                    .has_lead_of(token_hash(&text.as_bytes()[start..token_end]))
                && !self.retired_ends_before_tail(text, start, token_end)
            {
                held = start;
            }
        });
        held
    }

    /// True when a retired surrogate starting at `start` is already complete
    /// and bounded inside `text` (nothing to wait for).
    fn retired_ends_before_tail(&self, text: &str, start: usize, token_end: usize) -> bool {
        let limit = (start + MAX_RETIRED_LEN).min(text.len().saturating_sub(1));
        (token_end..=limit).any(|end| {
            text.is_char_boundary(end)
                && on_word_boundaries(text, start, end)
                && self.retired.contains(&text[start..end])
        })
    }

    /// The longest active surrogate, in bytes.
    pub fn max_surrogate_len(&self) -> usize {
        self.surrogates.max_key_len()
    }

    /// A counter moved by every added entry (memo re-validation); unique
    /// across every index of the process.
    pub fn add_epoch(&self) -> u64 {
        self.add_epoch
    }

    /// A counter moved by every removal from this index (memo
    /// re-validation: while it has not moved, every entry a memo entry
    /// found active is still active in the same slot); unique across every
    /// index of the process.
    pub fn removal_epoch(&self) -> u64 {
        self.removal_epoch
    }

    /// Slots of entries added after `epoch`, or None when that is further
    /// back than remembered (treat as "anything may have been added").
    pub fn values_added_since(&self, epoch: u64) -> Option<Vec<Slot>> {
        if epoch < self.horizon {
            return None;
        }
        Some(
            self.recent_adds
                .iter()
                .filter(|(e, _)| *e > epoch)
                .map(|(_, s)| *s)
                .filter(|s| self.store.get(*s).is_some())
                .collect(),
        )
    }

    /// Approximate heap bytes of the index (entries, matchers).
    pub fn heap_bytes(&self) -> usize {
        self.heap_parts().iter().map(|(_, bytes)| bytes).sum()
    }

    /// Heap bytes of the index by part (the memory figures of
    /// `examples/snapshot_format.rs`).
    pub fn heap_parts(&self) -> Vec<(&'static str, usize)> {
        let mut parts = self.store.heap_parts().to_vec();
        parts.extend(self.values.heap_parts("values"));
        parts.extend(self.surrogates.heap_parts("surrogates"));
        parts.push(("retired set", self.retired.heap_bytes()));
        parts
    }
}

fn validate_entry(entry: &Entry, position: usize) -> Result<(), CoreError> {
    validate_parts(&entry.value, &entry.surrogate, position)
}

fn validate_parts(value: &str, surrogate: &str, position: usize) -> Result<(), CoreError> {
    let reason = if value.is_empty() {
        "value is empty"
    } else if surrogate.is_empty() {
        "surrogate is empty"
    } else if value == surrogate {
        "surrogate equals its value"
    } else {
        return Ok(());
    };
    Err(CoreError::BadEntry {
        position,
        reason: reason.into(),
    })
}

/// A snapshot lists each id once: a second entry under an id would leave
/// one of the two behind when the id is forgotten.
pub(crate) fn listed_twice(position: usize) -> CoreError {
    CoreError::BadEntry {
        position,
        reason: "its id is listed twice".into(),
    }
}

/// The retired hashes a `forgotten` event carries, one per id: an entry
/// is forgotten only when its surrogate's hash is one of them.
struct ForgetConfirmation {
    hashes: HashSet<[u8; 16]>,
}

impl ForgetConfirmation {
    fn new(retired: &[RetiredSurrogate]) -> Self {
        ForgetConfirmation {
            hashes: retired.iter().map(|r| r.hash.0).collect(),
        }
    }

    /// True when the event retires `surrogate` (hashed under the vault's
    /// salt, which `retired` holds).
    fn retires(&self, retired: &RetiredSet, surrogate: &[u8]) -> bool {
        std::str::from_utf8(surrogate).is_ok_and(|s| self.hashes.contains(&retired.hash_of(s)))
    }
}
