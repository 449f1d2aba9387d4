//! One worker's vault: the snapshot index and the masker's memo, kept
//! current from shared data.
//!
//! [`WorkerVault::apply_event`] (and [`WorkerVault::apply_events`], the
//! same for a run of events), [`WorkerVault::load_snapshot`],
//! [`WorkerVault::drop_deleted_key`] and [`WorkerVault::release`] are the
//! only ways anything leaves this worker's caches: applying a `forgotten`
//! event removes the entries from the index *and* drops every memo entry
//! that used them; a snapshot reload replaces the index and the whole memo;
//! a deleted key, or a root that stands by, drops both.
//!
//! The catch-up rules (which events, in what order, when to rebuild from
//! the snapshot, never moving back) are `latet_core::feed::catch_up`'s;
//! this module reads the shared copies and owns the caches.

use crate::host::{Host, Level};
use crate::shared::{read_events, read_state};
use crate::shared_snapshot::read_snapshot_for_index;
use latet_core::detect::Detectors;
use latet_core::feed::{self, FeedFollower};
use latet_core::mask::{MaskOptions, MaskOutcome, Masker, TextsOutcome};
use latet_core::provider::ProviderRef;
use latet_core::snapshot::{AppliedEvent, AppliedEvents, SnapshotIndex};
use latet_core::wire::{CompactSnapshot, EntriesResponse, Event};
use latet_core::CoreError;

/// What one catch-up did (see `latet_core::feed::catch_up`).
pub use latet_core::feed::CatchUp;

/// A worker's snapshot index and masker.
pub struct WorkerVault {
    index: SnapshotIndex,
    masker: Masker,
    detectors: Detectors,
    memo_capacity_bytes: usize,
    loaded: bool,
    /// The control service said the key was deleted: nothing is held, and
    /// requests are refused until a snapshot is loaded again.
    key_deleted: bool,
    feed_answered_at_ms: u64,
}

impl WorkerVault {
    /// An empty vault (not ready until a snapshot is loaded).
    pub fn new(detectors: Detectors, memo_capacity_bytes: usize) -> Self {
        WorkerVault {
            index: SnapshotIndex::empty(),
            masker: Masker::new(detectors.clone(), memo_capacity_bytes),
            detectors,
            memo_capacity_bytes,
            loaded: false,
            key_deleted: false,
            feed_answered_at_ms: 0,
        }
    }

    /// True once the key was deleted (and no snapshot loaded since).
    pub fn is_key_deleted(&self) -> bool {
        self.key_deleted
    }

    /// The key was deleted: drops the index and the whole memo (every
    /// value and surrogate this worker held); nothing is masked or
    /// restored until a snapshot is loaded again.
    pub fn drop_deleted_key(&mut self) {
        self.drop_index();
        self.key_deleted = true;
    }

    /// Drops the index and the whole memo for good on a root that serves
    /// no request ([`crate::filter_root::FilterRoot::stand_by`]): its VM
    /// keeps no copy of the vault.
    pub fn release(&mut self) {
        self.drop_index();
    }

    /// True once a snapshot has been loaded.
    pub fn is_ready(&self) -> bool {
        self.loaded
    }

    /// The index (for restoring).
    pub fn index(&self) -> &SnapshotIndex {
        &self.index
    }

    /// When the feed last answered, as last read from shared data (0: never).
    pub fn feed_answered_at_ms(&self) -> u64 {
        self.feed_answered_at_ms
    }

    /// Masks a request body.
    pub fn mask(
        &mut self,
        provider: ProviderRef,
        body: &[u8],
        options: MaskOptions,
    ) -> Result<MaskOutcome, CoreError> {
        self.masker
            .mask_request(&self.index, provider, body, options)
    }

    /// Masks loose texts (header values, path and query components).
    pub fn mask_texts(
        &mut self,
        texts: &[&str],
        options: MaskOptions,
    ) -> Result<TextsOutcome, CoreError> {
        self.masker.mask_texts(&self.index, texts, options)
    }

    /// Applies one feed event, through the erasure routine (`apply_run`).
    pub fn apply_event(&mut self, event: &Event) -> Result<AppliedEvent, CoreError> {
        let applied = self.apply_run(std::slice::from_ref(event));
        match applied.refused {
            Some(err) => Err(err),
            None => Ok(applied.total),
        }
    }

    /// Applies feed events in order, each the next, and stops at the first
    /// refused; returns how many were applied (through the erasure
    /// routine, `apply_run`: a run of forgets in one pass over the index).
    pub fn apply_events(&mut self, events: &[Event]) -> usize {
        self.apply_run(events).events
    }

    /// THE erasure routine: the index drops the forgotten entries and the
    /// memo drops every text that used them, in the same call, whether
    /// one event or a run is applied.
    fn apply_run(&mut self, events: &[Event]) -> AppliedEvents {
        let applied = self.index.apply_events(events);
        if !applied.total.forgotten.is_empty() {
            self.masker.forget(&applied.total.forgotten);
        }
        applied
    }

    /// Replaces the index with a snapshot's and drops the whole memo (it
    /// may hold texts masked with entries the snapshot no longer has).
    /// Takes the shared bytes (joined in the fingerprinted form, or a
    /// compact snapshot) and builds the index straight over them: they
    /// become its records, nothing is copied (wasm memory never shrinks,
    /// so the VM's size is its peak).
    pub fn load_snapshot(&mut self, bytes: Vec<u8>) -> Result<(), CoreError> {
        let index = SnapshotIndex::from_compact(bytes)?;
        self.index = index;
        self.masker = Masker::new(self.detectors.clone(), self.memo_capacity_bytes);
        self.loaded = true;
        self.key_deleted = false;
        Ok(())
    }

    /// Adds the entries a callout answered with (refused if a forget moved
    /// the generation in between).
    pub fn add_entries(&mut self, answer: EntriesResponse) -> Result<usize, CoreError> {
        self.index.add_entries(answer.generation, answer.entries)
    }

    /// Brings this worker to the published position: reads the small state
    /// record; when behind, applies the missed events in order (forgets
    /// included) or, on a gap, rebuilds from the shared snapshot. Never moves
    /// the index back: a rebuilt index that would be older than the current
    /// one is thrown away (and the catch-up reports `current: false`).
    pub fn catch_up(&mut self, host: &dyn Host) -> CatchUp {
        let Some(state) = read_state(host) else {
            return CatchUp::default();
        };
        self.feed_answered_at_ms = state.feed_answered_at_ms;
        if state.key_deleted {
            if !self.key_deleted {
                self.drop_deleted_key();
                host.log(
                    Level::Warn,
                    "latet: the key was deleted; this worker dropped its vault",
                );
            }
            return CatchUp {
                current: true,
                ..CatchUp::default()
            };
        }
        feed::catch_up(
            self,
            &state,
            || read_events(host),
            |current| current.rebuilt(host, state.snapshot_seq),
        )
    }

    /// A new vault from the shared snapshot (`None`: absent or unreadable).
    ///
    /// When the snapshot is at or past this vault's position, this vault's
    /// index and memo are dropped *before* the new index is built: wasm
    /// memory never shrinks, so building beside the old one would leave the
    /// VM at old + new for good. When the published state already names a
    /// snapshot at or past this vault (`published_snapshot_seq`: the poller
    /// writes the snapshot before the state record that names it, so the
    /// shared one is at least that recent), the index is dropped before the
    /// snapshot's bytes are even read: otherwise the new bytes (most of a
    /// new index) would be allocated beside the whole old index (measured
    /// in wasmtime, 100k entries: a replacement took the worker VM from
    /// 22.4 to 30.9 MB). Safe because the VM is single-threaded:
    /// no request callback runs between the drop and the build, so no
    /// request ever sees the emptied vault, and requests in flight find the
    /// new index at their next callback (as with any reload). A snapshot
    /// that then fails to build (the poller reads every byte before it
    /// publishes, so only a damaged copy) leaves this vault empty and not
    /// ready: requests are refused (503) and answers are not restored until
    /// a snapshot builds, never served from the old index (so does a
    /// snapshot absent after an early drop). A snapshot older than this
    /// vault is built beside it, as before, and thrown away
    /// (`latet_core::feed::catch_up` never moves a vault back); after an
    /// early drop, when that guard no longer sees the old position, such a
    /// copy is not built at all (checked below against `floor`).
    fn rebuilt(&mut self, host: &dyn Host, published_snapshot_seq: u64) -> Option<WorkerVault> {
        let floor = self.position();
        let published_at_or_past = floor.is_none_or(|position| published_snapshot_seq >= position);
        if published_at_or_past {
            self.drop_index();
        }
        let bytes = read_snapshot_for_index(host)?;
        let snapshot_seq = CompactSnapshot::parse_either(&bytes).ok().map(|c| c.seq);
        // Never back: with the old index dropped, a copy older than it (two
        // pollers racing at a lease handover) is not built; the vault stays
        // empty and not ready until a newer one is published.
        if let (true, Some(floor), Some(seq)) = (published_at_or_past, floor, snapshot_seq) {
            if seq < floor {
                host.log(
                    Level::Error,
                    "latet: the shared snapshot is older than this worker's index; no index until a newer one builds",
                );
                return None;
            }
        }
        let at_or_past = published_at_or_past
            || match (self.position(), snapshot_seq) {
                (Some(position), Some(seq)) => seq >= position,
                (None, _) => true,
                // Unreadable: it will not build; keep the current index.
                (Some(_), None) => false,
            };
        if at_or_past && !published_at_or_past {
            self.drop_index();
        }
        let mut rebuilt = WorkerVault::new(self.detectors.clone(), self.memo_capacity_bytes);
        if rebuilt.load_snapshot(bytes).is_err() {
            host.log(
                Level::Error,
                if at_or_past {
                    "latet: the shared snapshot could not be read; this worker has no index until one builds"
                } else {
                    "latet: the shared snapshot could not be read; keeping the current index"
                },
            );
            return None;
        }
        rebuilt.feed_answered_at_ms = self.feed_answered_at_ms;
        Some(rebuilt)
    }

    /// Drops the index and the whole memo (their memory goes back to the
    /// allocator, zeroed) and marks the vault not ready.
    fn drop_index(&mut self) {
        self.index = SnapshotIndex::empty();
        self.masker = Masker::new(self.detectors.clone(), self.memo_capacity_bytes);
        self.loaded = false;
    }
}

impl FeedFollower for WorkerVault {
    fn position(&self) -> Option<u64> {
        self.loaded.then(|| self.index.seq())
    }

    /// Through [`WorkerVault::apply_event`]: a forget clears the memo too.
    fn apply(&mut self, event: &Event) -> bool {
        self.apply_event(event).is_ok()
    }

    /// Through [`WorkerVault::apply_events`]: a run of forgets in one pass.
    fn apply_all(&mut self, events: &[Event]) -> usize {
        self.apply_events(events)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests;
