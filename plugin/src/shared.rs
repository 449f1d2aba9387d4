//! The shared-data layout between the poller and the workers of one Envoy
//! (per `vm_id`): key names, the small state record, the lease record, and
//! typed reads and writes over [`Host`].

use crate::host::{Host, HostError};
use latet_core::wire::Event;
use serde::{Deserialize, Serialize};

/// The manifest of the snapshot in parts
/// ([`crate::shared_snapshot`]: the compact form as the control service
/// sent it, in runs of entries under `latet.v1.snapshot.<n>`), rewritten
/// without the forgotten entries by each forget.
pub const SNAPSHOT_KEY: &str = "latet.v1.snapshot";
/// [`SnapshotTag`]: the ETag of the shared snapshot while it is the bytes
/// the control service tagged; emptied before the snapshot is scrubbed or
/// emptied.
pub const SNAPSHOT_TAG_KEY: &str = "latet.v1.snapshot_tag";
/// JSON array of the events after the snapshot's `seq`, contiguous.
pub const EVENTS_KEY: &str = "latet.v1.events";
/// [`SharedState`]: written last by the poller, read by every request.
pub const STATE_KEY: &str = "latet.v1.state";
/// [`Lease`]: who polls.
pub const LEASE_KEY: &str = "latet.v1.lease";
/// JSON array of the workers' wake-up queue names.
pub const QUEUES_KEY: &str = "latet.v1.queues";
/// Decimal counter naming each worker (`worker-<n>`, `latet-wake-<n>`).
pub const QUEUE_COUNTER_KEY: &str = "latet.v1.queue_counter";
/// Prefix of the workers' wake-up queue names.
pub const QUEUE_PREFIX: &str = "latet-wake-";
/// Why the sync service's last call to the control service failed: the
/// error type of a [`crate::reply::Refusal`] sync cause, or empty once a
/// call answered. A worker without a snapshot refuses with it.
pub const SYNC_CAUSE_KEY: &str = "latet.v1.sync_cause";
/// The lease holder name of the singleton sync service.
pub const SYNC_HOLDER: &str = "sync";

/// What the poller has published (`seq`, `snapshotSeq`, `feedAnsweredAtMs`):
/// the record and its rules live in `latet_core::feed`.
pub use latet_core::feed::PublishedState as SharedState;

/// The ETag of the shared snapshot and the feed position it is at: a
/// poller that wants a snapshot sends it as `If-None-Match`, and a 304
/// publishes the shared one again at `seq`. Stored as text, `<seq> <etag>`
/// (an ETag holds no space), which keeps a serde reader out of the `.wasm`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SnapshotTag {
    pub etag: String,
    pub seq: u64,
}

/// Reads the shared snapshot's tag (`None`: absent, emptied, unreadable).
pub fn read_snapshot_tag(host: &dyn Host) -> Option<SnapshotTag> {
    let (bytes, _) = host.shared_get(SNAPSHOT_TAG_KEY).ok()?;
    let bytes = bytes?;
    let (seq, etag) = std::str::from_utf8(&bytes).ok()?.split_once(' ')?;
    Some(SnapshotTag {
        etag: etag.to_string(),
        seq: seq.parse().ok()?,
    })
}

/// Writes the shared snapshot's tag.
pub fn write_snapshot_tag(host: &dyn Host, tag: &SnapshotTag) -> Result<(), HostError> {
    let text = format!("{} {}", tag.seq, tag.etag);
    host.shared_set(SNAPSHOT_TAG_KEY, text.as_bytes(), None)
}

/// Empties the shared snapshot's tag (the copy is no longer the tagged bytes).
pub fn clear_snapshot_tag(host: &dyn Host) -> Result<(), HostError> {
    host.shared_set(SNAPSHOT_TAG_KEY, b"", None)
}

/// Who polls, until when.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Lease {
    pub holder: String,
    pub expires_at_ms: u64,
}

/// Reads the published state (`None`: nothing published yet, or unreadable).
pub fn read_state(host: &dyn Host) -> Option<SharedState> {
    let (bytes, _) = host.shared_get(STATE_KEY).ok()?;
    serde_json::from_slice(&bytes?).ok()
}

/// The sync service's published cause of failure, if any.
pub fn read_sync_cause(host: &dyn Host) -> Option<crate::reply::Refusal> {
    let (bytes, _) = host.shared_get(SYNC_CAUSE_KEY).ok()?;
    crate::reply::Refusal::sync_cause(std::str::from_utf8(&bytes?).ok()?)
}

/// Publishes the sync service's cause of failure (`None`: calls answer).
pub fn write_sync_cause(
    host: &dyn Host,
    cause: Option<crate::reply::Refusal>,
) -> Result<(), HostError> {
    let text = cause.map_or("", crate::reply::Refusal::error_type);
    host.shared_set(SYNC_CAUSE_KEY, text.as_bytes(), None)
}

/// Reads the shared events (empty when absent or unreadable).
pub fn read_events(host: &dyn Host) -> Vec<Event> {
    match host.shared_get(EVENTS_KEY) {
        Ok((Some(bytes), _)) => serde_json::from_slice(&bytes).unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// Reads the lease and its CAS token.
pub fn read_lease(host: &dyn Host) -> (Option<Lease>, Option<u32>) {
    match host.shared_get(LEASE_KEY) {
        Ok((bytes, cas)) => (bytes.and_then(|b| serde_json::from_slice(&b).ok()), cas),
        Err(_) => (None, None),
    }
}

/// Writes a JSON value under `key`.
pub fn write_json<T: Serialize>(
    host: &dyn Host,
    key: &str,
    value: &T,
    cas: Option<u32>,
) -> Result<(), HostError> {
    let bytes = serde_json::to_vec(value).map_err(|_| HostError::Other)?;
    host.shared_set(key, &bytes, cas)
}

/// A decimal counter's value as shared data holds it (`T::default()`,
/// zero, when absent or unreadable).
pub fn decimal<T: std::str::FromStr + Default>(bytes: Option<Vec<u8>>) -> T {
    bytes
        .and_then(|b| std::str::from_utf8(&b).ok()?.trim().parse().ok())
        .unwrap_or_default()
}

/// Takes the next number of the CAS counter (a few tries under contention).
pub fn next_counter(host: &dyn Host, key: &str) -> Option<u64> {
    for _ in 0..16 {
        let (bytes, cas) = host.shared_get(key).ok()?;
        let current: u64 = decimal(bytes);
        let next = current + 1;
        match host.shared_set(key, next.to_string().as_bytes(), cas) {
            Ok(()) => return Some(next),
            Err(HostError::CasMismatch) => continue,
            Err(_) => return None,
        }
    }
    None
}

/// Adds `name` to the JSON list under `key` (CAS, a few tries).
pub fn append_to_list(host: &dyn Host, key: &str, name: &str) -> Result<(), HostError> {
    for _ in 0..16 {
        let (bytes, cas) = host.shared_get(key)?;
        let mut names: Vec<String> = bytes
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        if names.iter().any(|n| n == name) {
            return Ok(());
        }
        names.push(name.to_string());
        match write_json(host, key, &names, cas) {
            Ok(()) => return Ok(()),
            Err(HostError::CasMismatch) => continue,
            Err(e) => return Err(e),
        }
    }
    Err(HostError::CasMismatch)
}

/// Reads the JSON list of names under `key`.
pub fn read_list(host: &dyn Host, key: &str) -> Vec<String> {
    match host.shared_get(key) {
        Ok((Some(bytes), _)) => serde_json::from_slice(&bytes).unwrap_or_default(),
        _ => Vec::new(),
    }
}
