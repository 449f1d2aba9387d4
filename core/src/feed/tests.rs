//! Tests of the feed rules: the poller's publication, a worker's
//! catch-up, and the scrub of the shared copies. Builders here.

mod catch_up;
mod publish;
mod scrub;

use crate::keyed_hash::retired_hash;
use crate::kind::Kind;
use crate::text::lead_bucket;
use crate::wire::{
    Entry, EntryId, Event, EventBody, RetiredHash, RetiredSurrogate, Snapshot, WIRE_VERSION,
};

/// The salt of [`snapshot`]'s vault.
const SALT: [u8; 16] = [
    0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff,
];

fn id(n: u8) -> EntryId {
    EntryId([n; 16])
}

fn entry(n: u8, value: &str) -> Entry {
    Entry {
        id: id(n),
        value: value.into(),
        surrogate: format!("S{n}"),
        kind: Kind::Name,
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
            ids: ids.iter().map(|n| id(*n)).collect(),
            // The surrogate of each (as `entry` makes it), retired.
            retired: ids
                .iter()
                .map(|n| {
                    let surrogate = format!("S{n}");
                    RetiredSurrogate {
                        hash: RetiredHash(retired_hash(&SALT, &surrogate)),
                        lead: lead_bucket(&surrogate),
                    }
                })
                .collect(),
            generation: seq,
        },
    }
}

/// `added` events with no entries at these positions.
fn empty_events(seqs: &[u64]) -> Vec<Event> {
    seqs.iter().map(|seq| added(*seq, vec![])).collect()
}

fn seqs(events: &[Event]) -> Vec<u64> {
    events.iter().map(|e| e.seq).collect()
}

/// Each event's entry values (`<forgotten>` for a forget).
fn values(events: &[Event]) -> Vec<Vec<String>> {
    events
        .iter()
        .map(|e| match &e.body {
            EventBody::Added { entries } => entries.iter().map(|x| x.value.clone()).collect(),
            EventBody::Forgotten { .. } => vec!["<forgotten>".into()],
        })
        .collect()
}

fn snapshot(seq: u64, entries: Vec<Entry>) -> Snapshot {
    Snapshot {
        version: WIRE_VERSION,
        generation: 1,
        seq,
        retired_salt: "00112233445566778899aabbccddeeff".into(),
        retired: vec![],
        entries,
    }
}
