//! Erasure of the shared copies: once a `forgotten` event is published,
//! neither the shared snapshot nor an `added` event before it may still
//! hold the forgotten entries (values and surrogates in clear).
//!
//! The rewrite keeps what workers rely on: the snapshot keeps its `seq` and
//! generation, and the event list keeps every event and its position, so
//! the catch-up does not change. A worker that rebuilds from a rewritten
//! snapshot only lacks entries a later event it applies forgets anyway.

use crate::error::CoreError;
use crate::wire::{scrub_compact_snapshot, EntryId, Event, EventBody, Snapshot};
use std::collections::HashSet;

/// Drops from every `added` event the entries a *later* `forgotten` event
/// of `events` names (an id forgotten and then added again keeps its new
/// entry), and returns every id the list forgets. Positions are untouched:
/// an `added` event may be left empty.
pub fn scrub_events(events: &mut [Event]) -> HashSet<EntryId> {
    let mut forgotten = HashSet::new();
    for event in events.iter_mut().rev() {
        match &mut event.body {
            EventBody::Forgotten { ids, .. } => forgotten.extend(ids.iter().copied()),
            EventBody::Added { entries } => entries.retain(|e| !forgotten.contains(&e.id)),
        }
    }
    forgotten
}

/// Drops from `snapshot` the entries in `forgotten` (every published event
/// comes after the snapshot, so each of its forgets applies to it); its
/// position, generation and retired set stay. Returns how many it dropped.
pub fn scrub_snapshot_entries(snapshot: &mut Snapshot, forgotten: &HashSet<EntryId>) -> usize {
    let before = snapshot.entries.len();
    snapshot.entries.retain(|e| !forgotten.contains(&e.id));
    before - snapshot.entries.len()
}

/// The shared snapshot `bytes` (the compact form,
/// [`crate::wire::compact_snapshot`]) without the entries in `forgotten`,
/// or `None` when it holds none of them. Rewritten in place: the kept
/// entries stay byte-exact, the freed tail is zeroed, and no second buffer
/// is made (a wasm VM's memory keeps its peak). A copy in any other form
/// (a JSON one an older poller wrote) is refused: the caller takes a new
/// snapshot, which replaces it.
pub fn scrub_snapshot(
    bytes: Vec<u8>,
    forgotten: &HashSet<EntryId>,
) -> Result<Option<Vec<u8>>, CoreError> {
    scrub_compact_snapshot(bytes, forgotten)
}
