//! Erasure of the shared-data copies (finding S1): once a `forgotten` event
//! is published, neither the shared snapshot nor an `added` event before it
//! may still hold the forgotten entries (values and surrogates in clear).
//!
//! The rewrite keeps what workers rely on: the snapshot keeps its `seq` and
//! the event list stays contiguous from it, so the catch-up protocol does
//! not change. A worker that rebuilds from a rewritten snapshot only lacks
//! entries a later event it applies forgets anyway.

use latet_core::wire::{parse_snapshot, EntryId, Event, EventBody};
use latet_core::CoreError;
use std::collections::HashSet;

/// Drops from every `added` event the entries a *later* `forgotten` event
/// of `events` names (an id forgotten and then added again keeps its new
/// entry), and returns every id the list forgets.
pub(super) fn scrub_events(events: &mut [Event]) -> HashSet<EntryId> {
    let mut forgotten = HashSet::new();
    for event in events.iter_mut().rev() {
        match &mut event.body {
            EventBody::Forgotten { ids, .. } => forgotten.extend(ids.iter().copied()),
            EventBody::Added { entries } => entries.retain(|e| !forgotten.contains(&e.id)),
        }
    }
    forgotten
}

/// The shared snapshot without the entries in `forgotten` (every event in
/// the shared list comes after the snapshot, so each of its forgets
/// applies), or `None` when it holds none of them. Frees `bytes` once
/// parsed: the singleton's wasm memory keeps its peak.
pub(super) fn scrub_snapshot(
    bytes: Vec<u8>,
    forgotten: &HashSet<EntryId>,
) -> Result<Option<Vec<u8>>, CoreError> {
    let mut snapshot = parse_snapshot(&bytes)?;
    let capacity = bytes.len();
    drop(bytes);
    let before = snapshot.entries.len();
    snapshot.entries.retain(|e| !forgotten.contains(&e.id));
    if snapshot.entries.len() == before {
        return Ok(None);
    }
    // Sized once: doubling would hold two large blocks at once.
    let mut out = Vec::with_capacity(capacity);
    serde_json::to_writer(&mut out, &snapshot)
        .map(|()| Some(out))
        .map_err(|_| CoreError::Wire("the scrubbed snapshot could not be written".into()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use latet_core::kind::Kind;
    use latet_core::wire::{Entry, Snapshot};

    fn entry(n: u8, value: &str) -> Entry {
        Entry {
            id: EntryId([n; 16]),
            value: value.into(),
            surrogate: format!("S{n}"),
            kind: Kind::parse("name").unwrap(),
            generation: 1,
        }
    }

    fn added(seq: u64, entries: Vec<Entry>) -> Event {
        Event {
            seq,
            body: EventBody::Added { entries },
        }
    }

    fn forgotten(seq: u64, ids: &[u8]) -> Event {
        Event {
            seq,
            body: EventBody::Forgotten {
                ids: ids.iter().map(|n| EntryId([*n; 16])).collect(),
                retired: vec![],
                generation: seq,
            },
        }
    }

    fn values(events: &[Event]) -> Vec<Vec<String>> {
        events
            .iter()
            .map(|e| match &e.body {
                EventBody::Added { entries } => entries.iter().map(|x| x.value.clone()).collect(),
                EventBody::Forgotten { .. } => vec!["<forgotten>".into()],
            })
            .collect()
    }

    #[test]
    fn added_events_lose_only_entries_a_later_forget_names() {
        let mut events = vec![
            added(2, vec![entry(1, "Mario"), entry(2, "Giulia")]),
            forgotten(3, &[1]),
            // Mario again, after his forget: kept.
            added(4, vec![entry(1, "Mario")]),
            added(5, vec![entry(3, "Ugo")]),
            forgotten(6, &[3]),
        ];
        let ids = scrub_events(&mut events);
        assert_eq!(
            values(&events),
            vec![
                vec!["Giulia".to_string()],
                vec!["<forgotten>".into()],
                vec!["Mario".into()],
                vec![],
                vec!["<forgotten>".into()],
            ]
        );
        assert_eq!(ids.len(), 2);
        // Sequence numbers untouched: the list stays contiguous.
        assert_eq!(
            events.iter().map(|e| e.seq).collect::<Vec<_>>(),
            [2, 3, 4, 5, 6]
        );
    }

    #[test]
    fn the_snapshot_loses_forgotten_entries_and_keeps_its_position() {
        let snapshot = Snapshot {
            version: 1,
            generation: 1,
            seq: 7,
            retired_salt: "00".into(),
            retired: vec![],
            entries: vec![entry(1, "Mario"), entry(2, "Giulia")],
        };
        let bytes = serde_json::to_vec(&snapshot).unwrap();
        let ids: HashSet<EntryId> = [EntryId([1; 16])].into();
        let scrubbed = scrub_snapshot(bytes.clone(), &ids).unwrap().unwrap();
        let parsed = parse_snapshot(&scrubbed).unwrap();
        assert_eq!(parsed.seq, 7);
        assert_eq!(parsed.generation, 1);
        assert_eq!(parsed.entries, vec![entry(2, "Giulia")]);
        // Nothing to drop: no rewrite.
        let other: HashSet<EntryId> = [EntryId([9; 16])].into();
        assert_eq!(scrub_snapshot(bytes, &other).unwrap(), None);
        assert!(scrub_snapshot(b"{".to_vec(), &ids).is_err());
    }
}
