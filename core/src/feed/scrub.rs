//! Erasure of the shared copies: once a `forgotten` event is published,
//! neither the shared snapshot nor an `added` event before it may still
//! hold the forgotten entries (values and surrogates in clear).
//!
//! The rewrite keeps what workers rely on: the snapshot keeps its `seq` and
//! generation, and the event list keeps every event and its position, so
//! the catch-up does not change. A worker that rebuilds from a rewritten
//! snapshot only lacks entries a later event it applies forgets anyway.

use crate::error::CoreError;
use crate::wire::{parse_snapshot, EntryId, Event, EventBody, Snapshot};
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

/// The snapshot JSON `bytes` without the entries in `forgotten`
/// ([`scrub_snapshot_entries`]), or `None` when it holds none of them.
/// Frees `bytes` once parsed and writes the result into one buffer of their
/// size: a wasm VM's memory keeps its peak, so two large blocks at once
/// would stay.
pub fn scrub_snapshot(
    bytes: Vec<u8>,
    forgotten: &HashSet<EntryId>,
) -> Result<Option<Vec<u8>>, CoreError> {
    let mut snapshot = parse_snapshot(&bytes)?;
    let capacity = bytes.len();
    drop(bytes);
    if scrub_snapshot_entries(&mut snapshot, forgotten) == 0 {
        return Ok(None);
    }
    let mut out = Vec::with_capacity(capacity);
    serde_json::to_writer(&mut out, &snapshot)
        .map(|()| Some(out))
        .map_err(|_| CoreError::Wire("the scrubbed snapshot could not be written".into()))
}
