//! Builders shared by the unit tests: entries, snapshots, events, a
//! configuration, and a published vault in a fake Envoy.

use crate::config::FilterConfig;
use crate::fake_host::FakeHost;
use crate::shared::{SharedState, EVENTS_KEY, STATE_KEY};
use latet_core::keyed_hash::{retired_hash, Hash128};
use latet_core::kind::Kind;
use latet_core::text::lead_bucket;
use latet_core::wire::{
    Entry, EntryId, Event, EventBody, RetiredHash, RetiredSurrogate, Snapshot, WIRE_VERSION,
};

pub const SALT: &str = "00112233445566778899aabbccddeeff";

pub fn salt() -> Vec<u8> {
    (0..SALT.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&SALT[i..i + 2], 16).unwrap())
        .collect()
}

pub fn id(n: u8) -> EntryId {
    EntryId([n; 16])
}

pub fn entry(n: u8, value: &str, surrogate: &str, kind: Kind, generation: u64) -> Entry {
    Entry {
        id: id(n),
        value: value.to_string(),
        surrogate: surrogate.to_string(),
        kind,
        generation,
    }
}

/// Mario Rossi → Laura Bianchi (a name: no detector finds it, only the vault).
pub fn mario() -> Entry {
    entry(1, "Mario Rossi", "Laura Bianchi", Kind::Name, 1)
}

/// Giulia Neri → Paola Conti.
pub fn giulia() -> Entry {
    entry(2, "Giulia Neri", "Paola Conti", Kind::Name, 1)
}

pub fn snapshot(seq: u64, generation: u64, entries: Vec<Entry>) -> Snapshot {
    Snapshot {
        version: WIRE_VERSION,
        generation,
        seq,
        retired_salt: SALT.to_string(),
        retired: Vec::new(),
        entries,
    }
}

pub fn snapshot_json(seq: u64, generation: u64, entries: Vec<Entry>) -> Vec<u8> {
    serde_json::to_vec(&snapshot(seq, generation, entries)).unwrap()
}

/// The compact form the control service sends the filter and the poller
/// keeps in shared data.
pub fn snapshot_compact(seq: u64, generation: u64, entries: Vec<Entry>) -> Vec<u8> {
    latet_core::wire::encode_snapshot(&snapshot(seq, generation, entries)).unwrap()
}

pub fn retired(surrogate: &str) -> RetiredSurrogate {
    let hash: Hash128 = retired_hash(&salt(), surrogate);
    RetiredSurrogate {
        hash: RetiredHash(hash),
        lead: lead_bucket(surrogate),
    }
}

pub fn forgotten(seq: u64, entry: &Entry, generation: u64) -> Event {
    Event {
        seq,
        body: EventBody::Forgotten {
            ids: vec![entry.id],
            retired: vec![retired(&entry.surrogate)],
            generation,
        },
    }
}

pub fn added(seq: u64, entries: Vec<Entry>) -> Event {
    Event {
        seq,
        body: EventBody::Added { entries },
    }
}

pub fn config_json() -> String {
    r#"{"controlCluster": "latet_control", "gatewayToken": "tok-123"}"#.to_string()
}

pub fn config() -> FilterConfig {
    FilterConfig::parse(config_json().as_bytes(), |_| None).unwrap()
}

/// Publishes a snapshot, events and state as the poller would.
pub fn publish(
    host: &FakeHost,
    snapshot_seq: u64,
    generation: u64,
    entries: Vec<Entry>,
    events: &[Event],
) {
    put_snapshot(host, &snapshot_compact(snapshot_seq, generation, entries));
    publish_events(host, snapshot_seq, events);
}

/// Writes a compact snapshot to shared data in parts, as the poller does.
pub fn put_snapshot(host: &FakeHost, compact: &[u8]) {
    crate::shared_snapshot::write_snapshot(host, compact, crate::shared_snapshot::PART_BYTES)
        .unwrap();
}

/// The shared snapshot joined from its parts, as a worker reads it.
pub fn shared_snapshot(host: &FakeHost) -> Option<Vec<u8>> {
    crate::shared_snapshot::read_snapshot(host)
}

/// Every shared-data value under the snapshot's keys (manifest and parts),
/// with its key, for scans that no byte of a value is left.
pub fn snapshot_values(host: &FakeHost) -> Vec<(String, Vec<u8>)> {
    host.envoy
        .shared
        .borrow()
        .iter()
        .filter(|(key, _)| {
            key.strip_prefix(crate::shared::SNAPSHOT_KEY)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
        })
        .map(|(key, (value, _))| (key.clone(), value.clone()))
        .collect()
}

/// Publishes events (after a snapshot at `snapshot_seq`) and the state.
pub fn publish_events(host: &FakeHost, snapshot_seq: u64, events: &[Event]) {
    host.put_shared(EVENTS_KEY, &serde_json::to_vec(events).unwrap());
    let state = SharedState {
        seq: events.last().map_or(snapshot_seq, |e| e.seq),
        snapshot_seq,
        feed_answered_at_ms: host.now_ms_value().max(1),
        key_deleted: false,
    };
    host.put_shared(STATE_KEY, &serde_json::to_vec(&state).unwrap());
}
