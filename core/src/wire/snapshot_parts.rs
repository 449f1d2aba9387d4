//! The compact snapshot in parts, as a gateway keeps it in shared data: a
//! small manifest and runs of whole entries, so that each shared-data read
//! or write copies one part (a host copies a whole value on every read)
//! and a worker builds its index part by part.
//!
//! ```text
//! manifest  "LTSM", varint part count, then per part: varint tag,
//!           varint entry count, varint entry bytes; then the head: a
//!           compact snapshot holding no entries (generation, seq, salt,
//!           retired, kinds)
//! part      "LTSP", varint tag, then a compact snapshot with the head's
//!           generation, seq and kinds, no salt and no retired surrogate,
//!           holding one run of the entries
//! ```
//!
//! Every part written carries a tag no other part ever carried (a
//! publication counter), and the manifest lists the tag of each part it
//! names. [`join_snapshot`] takes a part only when its tag, entry count and
//! entry bytes are the manifest's: a reader never combines parts of two
//! publications (a new snapshot, or a forget's rewrite of some parts); a
//! read in the middle of one is [`JoinError::Torn`] and the reader tries
//! again. Writers write the parts, then the manifest.

use super::compact_snapshot::{
    get_varint, put_head, put_kinds, put_varint, CompactSnapshot, FINGERPRINTED_MAGIC,
    FINGERPRINT_BYTES, ID_BYTES,
};
use super::{scrub_compact_snapshot, EntryId};
use crate::error::CoreError;
use crate::wipe::wipe;
use std::collections::HashSet;
use std::ops::Range;

/// The first four bytes of a manifest.
pub const MANIFEST_MAGIC: [u8; 4] = *b"LTSM";
/// The first four bytes of a part.
pub const PART_MAGIC: [u8; 4] = *b"LTSP";

/// One part as the manifest names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PartInfo {
    /// The part's tag: unique to this part of this publication.
    pub tag: u64,
    /// Entries in the part.
    pub entries: u64,
    /// Bytes of those entries.
    pub entry_bytes: u64,
}

/// A parsed manifest.
#[derive(Clone, PartialEq, Eq)]
pub struct SnapshotManifest {
    pub parts: Vec<PartInfo>,
    /// A compact snapshot with no entries: everything but the entries.
    pub head: Vec<u8>,
}

impl std::fmt::Debug for SnapshotManifest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SnapshotManifest")
            .field("parts", &self.parts)
            .finish_non_exhaustive()
    }
}

impl SnapshotManifest {
    /// Reads a manifest and checks its head.
    pub fn parse(bytes: &[u8]) -> Result<Self, CoreError> {
        let bad = |reason: &str| CoreError::Wire(format!("snapshot manifest: {reason}"));
        let rest = bytes
            .strip_prefix(&MANIFEST_MAGIC)
            .ok_or_else(|| bad("not a manifest"))?;
        let mut pos = 0;
        let count = get_varint(rest, &mut pos).ok_or_else(|| bad("part count cut short"))?;
        // Each part takes at least three bytes.
        let count = usize::try_from(count)
            .ok()
            .filter(|n| n.checked_mul(3).is_some_and(|b| b <= rest.len()))
            .ok_or_else(|| bad("part count exceeds the bytes"))?;
        let mut parts = Vec::with_capacity(count);
        for _ in 0..count {
            let mut next = || get_varint(rest, &mut pos).ok_or_else(|| bad("part cut short"));
            parts.push(PartInfo {
                tag: next()?,
                entries: next()?,
                entry_bytes: next()?,
            });
        }
        let head = rest[pos..].to_vec();
        let compact = CompactSnapshot::parse(&head)?;
        if compact.entry_count() != 0 || !compact.entry_bytes().is_empty() {
            return Err(bad("the head holds entries"));
        }
        Ok(SnapshotManifest { parts, head })
    }

    /// The manifest's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(8 + self.parts.len() * 12 + self.head.len());
        out.extend_from_slice(&MANIFEST_MAGIC);
        put_varint(&mut out, self.parts.len() as u64);
        for p in &self.parts {
            put_varint(&mut out, p.tag);
            put_varint(&mut out, p.entries);
            put_varint(&mut out, p.entry_bytes);
        }
        out.extend_from_slice(&self.head);
        out
    }

    /// The feed position of the snapshot.
    pub fn seq(&self) -> Result<u64, CoreError> {
        Ok(CompactSnapshot::parse(&self.head)?.seq)
    }

    /// Entries in every part.
    pub fn entry_count(&self) -> u64 {
        self.parts.iter().map(|p| p.entries).sum()
    }
}

/// A checked compact snapshot cut into runs of whole entries.
pub struct SnapshotSplit {
    /// The manifest, every part under `tag`.
    pub manifest: SnapshotManifest,
    runs: Vec<Range<usize>>,
    generation: u64,
    seq: u64,
    kinds: Vec<u8>,
}

impl SnapshotSplit {
    /// Reads every entry of `bytes` (a compact snapshot) and cuts them into
    /// runs of about `part_bytes` (at least one entry each; no part when
    /// the snapshot holds no entry). Every part is tagged `tag`.
    pub fn new(bytes: &[u8], part_bytes: usize, tag: u64) -> Result<Self, CoreError> {
        let compact = CompactSnapshot::parse(bytes)?;
        let mut runs: Vec<Range<usize>> = Vec::new();
        let mut parts: Vec<PartInfo> = Vec::new();
        for entry in compact.entries() {
            let e = entry?;
            match (runs.last_mut(), parts.last_mut()) {
                (Some(run), Some(part)) if e.end - run.start <= part_bytes.max(1) => {
                    run.end = e.end;
                    part.entries += 1;
                    part.entry_bytes = (run.end - run.start) as u64;
                }
                _ => {
                    runs.push(e.start..e.end);
                    parts.push(PartInfo {
                        tag,
                        entries: 1,
                        entry_bytes: (e.end - e.start) as u64,
                    });
                }
            }
        }
        let mut head = compact.head_bytes().to_vec();
        put_varint(&mut head, 0);
        let kinds = kinds_bytes(compact.kinds());
        Ok(SnapshotSplit {
            manifest: SnapshotManifest { parts, head },
            runs,
            generation: compact.generation,
            seq: compact.seq,
            kinds,
        })
    }

    /// How many parts.
    pub fn len(&self) -> usize {
        self.runs.len()
    }

    /// True when there is no part (a snapshot with no entry).
    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// Part `i`'s bytes, cut from `bytes` (the snapshot given to
    /// [`Self::new`]).
    pub fn part(&self, bytes: &[u8], i: usize) -> Vec<u8> {
        let info = &self.manifest.parts[i];
        encode_part(
            info,
            self.generation,
            self.seq,
            &self.kinds,
            &bytes[self.runs[i].clone()],
        )
    }
}

/// The kinds table in its compact form.
fn kinds_bytes(kinds: &[crate::kind::Kind]) -> Vec<u8> {
    let mut out = Vec::new();
    put_kinds(&mut out, kinds.iter());
    out
}

/// A part: its tag, then a compact snapshot of `entries`.
fn encode_part(
    info: &PartInfo,
    generation: u64,
    seq: u64,
    kinds: &[u8],
    entries: &[u8],
) -> Vec<u8> {
    let mut out = Vec::with_capacity(40 + kinds.len() + entries.len());
    out.extend_from_slice(&PART_MAGIC);
    put_varint(&mut out, info.tag);
    put_head(&mut out, generation, seq);
    put_varint(&mut out, 0); // salt
    put_varint(&mut out, 0); // retired
    out.extend_from_slice(kinds);
    put_varint(&mut out, info.entries);
    out.extend_from_slice(entries);
    out
}

/// Why a windowed split failed.
#[derive(Debug)]
pub enum SplitError<E> {
    /// The snapshot cannot be read (damaged, cut short, not compact).
    Bad(CoreError),
    /// A window could not be read.
    Read,
    /// A part could not be put.
    Put(E),
}

/// Checks a compact snapshot of `total` bytes read through windows
/// (`read(start, len)`: its bytes `start..start + len`, as a host hands
/// out a callout body) and cuts it into parts of about `part_bytes`, each
/// handed to `put_part(i, bytes)` as soon as it is cut, tagged `tag`:
/// no more than the head, a window and a part are held at once. Returns
/// the manifest once every byte has been read. On an error, the parts put
/// so far are the caller's to discard (a caller that must not touch what
/// it publishes until the whole snapshot is known good runs it once with
/// a `put_part` that keeps nothing, then again).
pub fn split_windowed<E>(
    total: usize,
    part_bytes: usize,
    tag: u64,
    mut read: impl FnMut(usize, usize) -> Option<Vec<u8>>,
    mut put_part: impl FnMut(usize, &[u8]) -> Result<(), E>,
) -> Result<SnapshotManifest, SplitError<E>> {
    let part_bytes = part_bytes.max(1);
    // The head, in a window grown until it holds it.
    let mut width = total.min(part_bytes.max(4096));
    let prefix = loop {
        let prefix = read(0, width)
            .filter(|p| p.len() == width)
            .ok_or(SplitError::Read)?;
        match CompactSnapshot::parse_head(&prefix, total) {
            Ok(_) => break prefix,
            Err(_) if width < total => width = total.min(width.saturating_mul(2)),
            Err(err) => return Err(SplitError::Bad(err)),
        }
    };
    let head_view = CompactSnapshot::parse_head(&prefix, total).map_err(SplitError::Bad)?;
    let mut head = head_view.head_bytes().to_vec();
    put_varint(&mut head, 0);
    let kinds = kinds_bytes(head_view.kinds());
    let (generation, seq) = (head_view.generation, head_view.seq);
    let mut pos = head_view.entries_offset();
    let mut left = head_view.entry_count();
    let mut parts = Vec::new();
    while left > 0 {
        let mut width = (total - pos).min(part_bytes);
        let (count, end, window) = loop {
            let window = read(pos, width)
                .filter(|w| w.len() == width)
                .ok_or(SplitError::Read)?;
            let mut count = 0usize;
            let mut end = 0usize;
            let mut failed = None;
            for entry in head_view.entries_in(&window, left) {
                match entry {
                    Ok(e) if e.end <= part_bytes || count == 0 => {
                        count += 1;
                        end = e.end;
                    }
                    Ok(_) => break,
                    Err(err) => {
                        failed = Some(err);
                        break;
                    }
                }
            }
            if count > 0 {
                break (count, end, window);
            }
            // Not one whole entry in the window: a longer one, unless the
            // window already reaches the end (then the entry is damaged).
            match failed {
                Some(_) if pos + width < total => {
                    width = (total - pos).min(width.saturating_mul(2))
                }
                Some(err) => return Err(SplitError::Bad(err)),
                None => return Err(SplitError::Read),
            }
        };
        let info = PartInfo {
            tag,
            entries: count as u64,
            entry_bytes: end as u64,
        };
        let part = encode_part(&info, generation, seq, &kinds, &window[..end]);
        put_part(parts.len(), &part).map_err(SplitError::Put)?;
        parts.push(info);
        pos += end;
        left -= count;
    }
    if pos != total {
        return Err(SplitError::Bad(CoreError::Wire(format!(
            "compact snapshot: field `end` at byte {pos}: bytes follow the last entry"
        ))));
    }
    Ok(SnapshotManifest { parts, head })
}

/// Why a join failed.
#[derive(Debug)]
pub enum JoinError {
    /// A part is missing or from another publication than the manifest's
    /// (read while a writer was at work): try again.
    Torn,
    /// The manifest or a part cannot be read.
    Bad(CoreError),
}

impl From<CoreError> for JoinError {
    fn from(err: CoreError) -> Self {
        JoinError::Bad(err)
    }
}

/// The part's tag and its compact snapshot.
fn split_part(part: &[u8]) -> Result<(u64, &[u8]), CoreError> {
    let bad = || CoreError::Wire("snapshot part: not a part".into());
    let rest = part.strip_prefix(&PART_MAGIC).ok_or_else(bad)?;
    let mut pos = 0;
    let tag = get_varint(rest, &mut pos).ok_or_else(bad)?;
    Ok((tag, &rest[pos..]))
}

/// The part's tag, entry count and entry bytes (every entry read).
pub fn part_info(part: &[u8]) -> Result<PartInfo, CoreError> {
    let (tag, inner) = split_part(part)?;
    let compact = CompactSnapshot::parse(inner)?;
    for entry in compact.entries() {
        entry?;
    }
    Ok(PartInfo {
        tag,
        entries: compact.entry_count() as u64,
        entry_bytes: compact.entry_bytes().len() as u64,
    })
}

/// The whole compact snapshot a manifest names, joined from its parts
/// (`read_part(i)`: part `i`'s bytes, `None` when absent). Each part is
/// taken only when its tag, entry count and entry bytes are the manifest's
/// and its generation, seq and kinds the head's; else [`JoinError::Torn`].
/// The output is allocated once at its final size. Entries are checked
/// when the index is built from it, not here. Each part read is zeroed
/// once copied; on an error, so is the output.
pub fn join_snapshot(
    manifest: &SnapshotManifest,
    read_part: impl FnMut(usize) -> Option<Vec<u8>>,
) -> Result<Vec<u8>, JoinError> {
    join(manifest, read_part, false)
}

/// [`join_snapshot`] into the fingerprinted form (a worker's index
/// records, [`super::compact_snapshot`]): each entry is read and checked
/// as its part is taken and copied with its id replaced by the id's
/// [`super::EntryFingerprint`], so the whole snapshot with 16-byte ids is
/// never held (8 bytes an entry less at the worker's peak).
pub fn join_fingerprinted(
    manifest: &SnapshotManifest,
    read_part: impl FnMut(usize) -> Option<Vec<u8>>,
) -> Result<Vec<u8>, JoinError> {
    join(manifest, read_part, true)
}

fn join(
    manifest: &SnapshotManifest,
    mut read_part: impl FnMut(usize) -> Option<Vec<u8>>,
    fingerprinted: bool,
) -> Result<Vec<u8>, JoinError> {
    let head = CompactSnapshot::parse(&manifest.head)?;
    let too_large = || CoreError::Wire("snapshot manifest: too large".into());
    // The manifest is shared data: its sizes are checked, and reserved
    // without a panic or an abort when no memory holds them.
    // The fingerprinted form is 8 bytes shorter an entry.
    let shorter = if fingerprinted {
        (ID_BYTES - FINGERPRINT_BYTES) as u64
    } else {
        0
    };
    let total_bytes = manifest
        .parts
        .iter()
        .try_fold(0u64, |sum, p| {
            sum.checked_add(p.entry_bytes.checked_sub(p.entries.checked_mul(shorter)?)?)
        })
        .and_then(|total| usize::try_from(total).ok())
        .and_then(|total| total.checked_add(manifest.head.len() + 10))
        .ok_or_else(too_large)?;
    let mut out = Vec::new();
    out.try_reserve_exact(total_bytes)
        .map_err(|_| too_large())?;
    let head_bytes = head.head_bytes();
    if fingerprinted {
        out.extend_from_slice(&FINGERPRINTED_MAGIC);
        out.extend_from_slice(&head_bytes[FINGERPRINTED_MAGIC.len()..]);
    } else {
        out.extend_from_slice(head_bytes);
    }
    put_varint(&mut out, manifest.entry_count());
    for (i, info) in manifest.parts.iter().enumerate() {
        let Some(mut part) = read_part(i) else {
            wipe(&mut out);
            return Err(JoinError::Torn);
        };
        let taken = take_part(&head, info, &part, &mut out, fingerprinted);
        wipe(&mut part);
        if let Err(err) = taken {
            wipe(&mut out);
            return Err(err);
        }
    }
    Ok(out)
}

fn take_part(
    head: &CompactSnapshot<'_>,
    info: &PartInfo,
    part: &[u8],
    out: &mut Vec<u8>,
    fingerprinted: bool,
) -> Result<(), JoinError> {
    let Ok((tag, inner)) = split_part(part) else {
        return Err(JoinError::Torn);
    };
    if tag != info.tag {
        return Err(JoinError::Torn);
    }
    let compact = CompactSnapshot::parse(inner)?;
    let entries = compact.entry_bytes();
    if compact.entry_count() as u64 != info.entries
        || entries.len() as u64 != info.entry_bytes
        || compact.generation != head.generation
        || compact.seq != head.seq
        || compact.kinds() != head.kinds()
    {
        return Err(JoinError::Torn);
    }
    if !fingerprinted {
        out.extend_from_slice(entries);
        return Ok(());
    }
    for entry in compact.entries() {
        let e = entry?;
        out.extend_from_slice(&e.id.fingerprint().0.to_le_bytes());
        out.extend_from_slice(&inner[e.start + ID_BYTES..e.end]);
    }
    Ok(())
}

/// Part `part` without the entries in `forgotten`, retagged `tag`, and what
/// the manifest must now say of it; `None` when it holds none of them. The
/// old part is zeroed (and so is everything on an error).
pub fn scrub_part(
    mut part: Vec<u8>,
    forgotten: &HashSet<EntryId>,
    tag: u64,
) -> Result<Option<(Vec<u8>, PartInfo)>, CoreError> {
    let inner = match split_part(&part) {
        Ok((_, inner)) => inner.to_vec(),
        Err(err) => {
            wipe(&mut part);
            return Err(err);
        }
    };
    wipe(&mut part);
    let Some(mut scrubbed) = scrub_compact_snapshot(inner, forgotten)? else {
        return Ok(None);
    };
    let mut out = Vec::with_capacity(14 + scrubbed.len());
    out.extend_from_slice(&PART_MAGIC);
    put_varint(&mut out, tag);
    out.extend_from_slice(&scrubbed);
    wipe(&mut scrubbed);
    let compact = CompactSnapshot::parse(&out[out.len() - scrubbed.len()..])?;
    let info = PartInfo {
        tag,
        entries: compact.entry_count() as u64,
        entry_bytes: compact.entry_bytes().len() as u64,
    };
    Ok(Some((out, info)))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests;
