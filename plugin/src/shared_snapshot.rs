//! The shared snapshot in parts (`latet_core::wire::snapshot_parts`): a
//! manifest under [`SNAPSHOT_KEY`] and runs of whole entries under
//! `latet.v1.snapshot.<n>` ([`part_key`]). A host copies a whole value on
//! every shared-data read and write (Envoy's heap keeps such transient
//! copies), so a part bounds each copy; a worker joins the parts into the
//! compact snapshot its index keeps.
//!
//! Writers (the poller) write the parts, then the manifest, then empty any
//! part past the manifest's last; every part written carries a tag taken
//! from [`PUBLICATION_KEY`] (a CAS counter: no two parts ever carry one
//! tag), and the manifest names each part's tag. A reader takes a part
//! only under its manifest's tag, so it never joins parts of two
//! publications; a read during a write is torn and tried again.

use crate::host::{Host, HostError};
use crate::shared::{decimal, next_counter, SNAPSHOT_KEY};
use latet_core::wire::snapshot_parts::{
    join_fingerprinted, join_snapshot, scrub_part, split_windowed, JoinError, SnapshotManifest,
    SnapshotSplit, SplitError,
};
use latet_core::wire::EntryId;
use std::collections::HashSet;

/// The decimal counter the parts' tags are taken from.
pub const PUBLICATION_KEY: &str = "latet.v1.snapshot_publication";

/// Decimal: how many part keys were ever written (parts `0..n`); every
/// clear empties up to it, so no part is left behind a gap.
pub const PARTS_HIGH_KEY: &str = "latet.v1.snapshot_parts";

/// Bytes of entries in a part (a part holds whole entries, at least one).
pub const PART_BYTES: usize = 256 * 1024;

/// How many times a torn read is tried again before the reader gives up
/// (and tries at its next catch-up).
const TORN_RETRIES: usize = 3;

/// The key of part `i`.
pub fn part_key(i: usize) -> String {
    format!("{SNAPSHOT_KEY}.{i}")
}

/// Why a shared snapshot could not be written or rewritten.
#[derive(Debug)]
pub enum WriteError {
    Host(HostError),
    /// The copy could not be read (damaged, torn, another form).
    Unreadable,
    /// No tag could be taken from the publication counter.
    NoTag,
}

impl From<HostError> for WriteError {
    fn from(err: HostError) -> Self {
        WriteError::Host(err)
    }
}

/// The shared manifest (`None`: absent, emptied, or unreadable).
pub fn read_manifest(host: &dyn Host) -> Option<SnapshotManifest> {
    let bytes = host.shared_get(SNAPSHOT_KEY).ok()?.0?;
    SnapshotManifest::parse(&bytes).ok()
}

/// The whole shared snapshot in its compact form, joined from its parts
/// (`None`: absent, unreadable, or still torn after a few tries).
pub fn read_snapshot(host: &dyn Host) -> Option<Vec<u8>> {
    read_joined(host, false)
}

/// The whole shared snapshot in the fingerprinted form a worker's index
/// keeps (`latet_core::wire::compact_snapshot`: ids become 8-byte
/// fingerprints as the parts are joined, so the worker never holds the
/// snapshot with its 16-byte ids); `None` as for [`read_snapshot`].
pub fn read_snapshot_for_index(host: &dyn Host) -> Option<Vec<u8>> {
    read_joined(host, true)
}

fn read_joined(host: &dyn Host, fingerprinted: bool) -> Option<Vec<u8>> {
    for _ in 0..=TORN_RETRIES {
        let manifest = read_manifest(host)?;
        let read = |i| read_part(host, i);
        let joined = if fingerprinted {
            join_fingerprinted(&manifest, read)
        } else {
            join_snapshot(&manifest, read)
        };
        match joined {
            Ok(bytes) => return Some(bytes),
            Err(JoinError::Torn) => continue,
            Err(JoinError::Bad(_)) => return None,
        }
    }
    None
}

fn read_part(host: &dyn Host, i: usize) -> Option<Vec<u8>> {
    host.shared_get(&part_key(i)).ok()?.0
}

/// Publishes `compact` (a checked compact snapshot) in parts of about
/// `part_bytes`: parts, then the manifest, then the parts past it emptied.
pub fn write_snapshot(
    host: &dyn Host,
    compact: &[u8],
    part_bytes: usize,
) -> Result<(), WriteError> {
    let tag = next_counter(host, PUBLICATION_KEY).ok_or(WriteError::NoTag)?;
    let split = SnapshotSplit::new(compact, part_bytes, tag).map_err(|_| WriteError::Unreadable)?;
    raise_parts_high(host, split.len())?;
    for i in 0..split.len() {
        host.shared_set(&part_key(i), &split.part(compact, i), None)?;
    }
    host.shared_set(SNAPSHOT_KEY, &split.manifest.encode(), None)?;
    clear_parts_from(host, split.len())
}

/// [`write_snapshot`] for a compact snapshot of `total` bytes read
/// through `read(start, len)` windows (a callout body the VM never holds
/// whole): each part is written as it is cut. The caller has checked every
/// byte first (a damaged body found here leaves the earlier publication
/// torn until the next one).
pub fn write_snapshot_windowed(
    host: &dyn Host,
    total: usize,
    part_bytes: usize,
    read: impl FnMut(usize, usize) -> Option<Vec<u8>>,
) -> Result<(), WriteError> {
    let tag = next_counter(host, PUBLICATION_KEY).ok_or(WriteError::NoTag)?;
    let manifest = split_windowed(total, part_bytes, tag, read, |i, part| {
        raise_parts_high(host, i + 1)?;
        host.shared_set(&part_key(i), part, None)
            .map_err(WriteError::Host)
    })
    .map_err(|err| match err {
        SplitError::Put(err) => err,
        SplitError::Bad(_) | SplitError::Read => WriteError::Unreadable,
    })?;
    host.shared_set(SNAPSHOT_KEY, &manifest.encode(), None)?;
    clear_parts_from(host, manifest.parts.len())
}

/// Empties the manifest, then every part.
pub fn clear_snapshot(host: &dyn Host) -> Result<(), HostError> {
    host.shared_set(SNAPSHOT_KEY, b"", None)?;
    clear_parts_from(host, 0).map_err(|_| HostError::Other)
}

/// Empties part `first` and every part key ever written after it.
fn clear_parts_from(host: &dyn Host, first: usize) -> Result<(), WriteError> {
    let high = parts_high(host)?;
    for i in first..high {
        host.shared_set(&part_key(i), b"", None)?;
    }
    Ok(())
}

/// How many part keys were ever written ([`PARTS_HIGH_KEY`]).
fn parts_high(host: &dyn Host) -> Result<usize, HostError> {
    let (bytes, _) = host.shared_get(PARTS_HIGH_KEY)?;
    Ok(decimal(bytes))
}

/// Raises [`PARTS_HIGH_KEY`] to `count` (CAS, a few tries), before parts
/// `..count` are written: every part key ever written stays below it.
fn raise_parts_high(host: &dyn Host, count: usize) -> Result<(), WriteError> {
    for _ in 0..16 {
        let (bytes, cas) = host.shared_get(PARTS_HIGH_KEY)?;
        let high: usize = decimal(bytes);
        if high >= count {
            return Ok(());
        }
        match host.shared_set(PARTS_HIGH_KEY, count.to_string().as_bytes(), cas) {
            Ok(()) => return Ok(()),
            Err(HostError::CasMismatch) => continue,
            Err(err) => return Err(err.into()),
        }
    }
    Err(HostError::CasMismatch.into())
}

/// Rewrites every shared part that holds one of `forgotten` without it
/// (retagged), then the manifest; false when no part held one. Every part
/// is scrubbed even when one cannot be read or written (the caller then
/// takes a new snapshot, which replaces them all); a part, or a manifest,
/// that cannot be read is emptied (with every part, for the manifest).
pub fn scrub_snapshot(host: &dyn Host, forgotten: &HashSet<EntryId>) -> Result<bool, WriteError> {
    let bytes = host.shared_get(SNAPSHOT_KEY)?.0.filter(|b| !b.is_empty());
    let Some(bytes) = bytes else {
        // No manifest; parts left by a failed write are emptied.
        clear_parts_from(host, 0)?;
        return Ok(false);
    };
    let Ok(mut manifest) = SnapshotManifest::parse(&bytes) else {
        // Unreadable (damaged, or a whole snapshot of an earlier build):
        // no reader can use it, and it may hold the forgotten values;
        // emptied with every part (the caller takes a new snapshot).
        clear_snapshot(host)?;
        return Err(WriteError::Unreadable);
    };
    let tag = next_counter(host, PUBLICATION_KEY).ok_or(WriteError::NoTag)?;
    let mut failed = None;
    let mut rewritten = false;
    for i in 0..manifest.parts.len() {
        // A part that cannot be read serves no reader and may hold a
        // forgotten value: emptied.
        let empty = |failed: &mut Option<WriteError>| {
            failed.get_or_insert(WriteError::Unreadable);
            if let Err(err) = host.shared_set(&part_key(i), b"", None) {
                *failed = Some(WriteError::Host(err));
            }
        };
        let Some(part) = read_part(host, i) else {
            empty(&mut failed);
            continue;
        };
        match scrub_part(part, forgotten, tag) {
            Ok(None) => {}
            Ok(Some((scrubbed, info))) => match host.shared_set(&part_key(i), &scrubbed, None) {
                Ok(()) => {
                    manifest.parts[i] = info;
                    rewritten = true;
                }
                Err(err) => {
                    failed.get_or_insert(WriteError::Host(err));
                }
            },
            Err(_) => empty(&mut failed),
        }
    }
    if rewritten {
        if let Err(err) = host.shared_set(SNAPSHOT_KEY, &manifest.encode(), None) {
            failed.get_or_insert(WriteError::Host(err));
        }
    }
    if let Err(err) = clear_parts_from(host, manifest.parts.len()) {
        failed.get_or_insert(err);
    }
    match failed {
        Some(err) => Err(err),
        None => Ok(rewritten),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests;
