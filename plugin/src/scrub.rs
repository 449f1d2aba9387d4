//! Forgotten values out of the shared-data copies: when the poller
//! publishes a `forgotten` event, the earlier `added` events it keeps in
//! `latet.v1.events` and the snapshot in `latet.v1.snapshot` still carry
//! those entries (value and surrogate). Both are rewritten without them, as
//! the control service does for its own feed. A worker that rebuilds from
//! the rewritten copies reaches the same index: the `forgotten` event that
//! follows would have removed the entries anyway.

use latet_core::keyed_hash::Hash128;
use latet_core::wire::{parse_snapshot, Event, EventBody};
use std::collections::HashSet;

/// The ids forgotten by these events.
pub fn forgotten_ids(events: &[Event]) -> HashSet<Hash128> {
    events
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::Forgotten { ids, .. } => Some(ids.iter().map(|id| id.0)),
            EventBody::Added { .. } => None,
        })
        .flatten()
        .collect()
}

/// Removes the forgotten entries from `added` events, in place; true when
/// anything was removed. An `added` event left empty stays (events are
/// numbered without gaps).
pub fn scrub_events(events: &mut [Event], forgotten: &HashSet<Hash128>) -> bool {
    let mut changed = false;
    for event in events {
        if let EventBody::Added { entries } = &mut event.body {
            let before = entries.len();
            entries.retain(|entry| !forgotten.contains(&entry.id.0));
            changed |= entries.len() != before;
        }
    }
    changed
}

/// The snapshot JSON without the forgotten entries; `None` when it holds
/// none of them (or does not parse: then it is left for the next snapshot).
pub fn scrub_snapshot(bytes: &[u8], forgotten: &HashSet<Hash128>) -> Option<Vec<u8>> {
    let mut snapshot = parse_snapshot(bytes).ok()?;
    let before = snapshot.entries.len();
    snapshot
        .entries
        .retain(|entry| !forgotten.contains(&entry.id.0));
    if snapshot.entries.len() == before {
        return None;
    }
    serde_json::to_vec(&snapshot).ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::test_support::*;
    use latet_core::wire::parse_snapshot;

    #[test]
    fn forgotten_entries_leave_added_events_and_the_snapshot() {
        let (m, g) = (mario(), giulia());
        let mut events = vec![
            added(4, vec![m.clone(), g.clone()]),
            added(5, vec![m.clone()]),
            forgotten(6, &m, 2),
        ];
        let ids = forgotten_ids(&events);
        assert_eq!(ids, HashSet::from([m.id.0]));
        assert!(scrub_events(&mut events, &ids));
        assert_eq!(events[0], added(4, vec![g.clone()]));
        assert_eq!(events[1], added(5, vec![]));
        assert_eq!(events[2], forgotten(6, &m, 2));
        assert!(!scrub_events(&mut events, &ids), "nothing left to remove");

        let json = snapshot_json(3, 1, vec![m.clone(), g.clone()]);
        let clean = scrub_snapshot(&json, &ids).unwrap();
        assert!(!String::from_utf8_lossy(&clean).contains(&m.value));
        assert!(!String::from_utf8_lossy(&clean).contains(&m.surrogate));
        assert_eq!(
            parse_snapshot(&clean).unwrap(),
            snapshot(3, 1, vec![g.clone()])
        );
        assert_eq!(scrub_snapshot(&clean, &ids), None, "already clean");
        assert_eq!(scrub_snapshot(b"not json", &ids), None);
    }
}
