//! The compact snapshot: the same content as the JSON [`Snapshot`], in a
//! binary form the gateway keeps as it came (in shared data) and builds its
//! index from without an intermediate `Vec<Entry>`.
//!
//! Served by `GET /_latet/gateway/v1/snapshot` when the caller sends
//! `Accept: application/vnd.latet.snapshot.v1` ([`SNAPSHOT_MEDIA_TYPE`]).
//! Integers are unsigned LEB128 varints (shortest form only) unless a width
//! is given; every length and count is checked against the bytes left
//! before anything is read or allocated.
//!
//! ```text
//! magic        4 bytes  "LTSN"
//! version      1 byte   1 (the wire version)
//! generation   varint
//! seq          varint
//! salt         varint length, then the salt's bytes (raw, not hex)
//! retired      varint count, then per retired surrogate:
//!                16-byte keyed hash, 4-byte lead (u32 LE)
//! kinds        varint count, then per kind: varint length, UTF-8 name
//! entries      varint count, then per entry:
//!                16-byte id, varint kind index (into kinds),
//!                varint generation, varint length + UTF-8 value,
//!                varint length + UTF-8 surrogate
//! ```
//!
//! Nothing may follow the last entry. Entries come last so that a scrub
//! (dropping forgotten entries) keeps everything before them byte-exact and
//! copies the kept entries as they are.
//!
//! The *fingerprinted form* is a worker's own (never on the wire): magic
//! `"LTSF"` ([`FINGERPRINTED_MAGIC`]), the same head, and each entry's id
//! replaced by its 8-byte [`super::EntryFingerprint`] (u64 LE), the rest of
//! the entry as it was. A worker joins the shared parts into it
//! ([`super::snapshot_parts::join_fingerprinted`]) and keeps it as its
//! index's records; [`CompactSnapshot::parse_either`] reads its head, and
//! its entries are read by the index.
//!
//! Errors name the field and the byte offset, never a value.

use super::{check_version, Entry, EntryId, RetiredHash, RetiredSurrogate, Snapshot, WIRE_VERSION};
use crate::error::CoreError;
use crate::keyed_hash::{to_hex, Hash128};
use crate::kind::Kind;
use crate::wipe::wipe;
use std::collections::HashSet;
use std::ops::Range;

/// The media type of the compact snapshot: what the gateway sends in
/// `Accept` and the control service answers in `Content-Type`. JSON stays
/// the answer for any other `Accept`.
pub const SNAPSHOT_MEDIA_TYPE: &str = "application/vnd.latet.snapshot.v1";

/// The first four bytes of every compact snapshot.
pub const SNAPSHOT_MAGIC: [u8; 4] = *b"LTSN";

/// The first four bytes of the fingerprinted form (a worker's records).
pub const FINGERPRINTED_MAGIC: [u8; 4] = *b"LTSF";

/// Bytes of an entry's id in the compact snapshot.
pub(crate) const ID_BYTES: usize = 16;
/// Bytes of an entry's fingerprint in the fingerprinted form.
pub(crate) const FINGERPRINT_BYTES: usize = 8;

/// The fewest bytes an entry takes (id, three one-byte varints, and a
/// one-byte value and surrogate with their lengths).
const MIN_ENTRY_BYTES: usize = ID_BYTES + 1 + 1 + 2 + 2;
/// Bytes of one retired surrogate.
const RETIRED_BYTES: usize = 16 + 4;
/// The fewest bytes a kind name takes (length and one byte).
const MIN_KIND_BYTES: usize = 2;

/// True when `bytes` start like a compact snapshot (a JSON one starts
/// with `{`).
pub fn is_compact_snapshot(bytes: &[u8]) -> bool {
    bytes.starts_with(&SNAPSHOT_MAGIC)
}

/// Encodes a snapshot. Fails on a salt that is not hex, a version other
/// than [`WIRE_VERSION`], or an entry whose kind the table cannot hold.
pub fn encode_snapshot(snapshot: &Snapshot) -> Result<Vec<u8>, CoreError> {
    check_version(snapshot.version)?;
    let salt = hex_bytes(&snapshot.retired_salt).ok_or_else(|| {
        CoreError::Wire("retired_salt: expected an even number of hex digits".into())
    })?;
    let text: usize = snapshot
        .entries
        .iter()
        .map(|e| e.value.len() + e.surrogate.len())
        .sum();
    let mut out = Vec::with_capacity(
        64 + salt.len()
            + snapshot.retired.len() * RETIRED_BYTES
            + snapshot.entries.len() * (16 + 8)
            + text,
    );
    put_head(&mut out, snapshot.generation, snapshot.seq);
    put_bytes(&mut out, &salt);
    put_varint(&mut out, snapshot.retired.len() as u64);
    for r in &snapshot.retired {
        out.extend_from_slice(&r.hash.0);
        out.extend_from_slice(&r.lead.to_le_bytes());
    }
    let mut kinds: Vec<&Kind> = Vec::new();
    let mut kind_of = Vec::with_capacity(snapshot.entries.len());
    for entry in &snapshot.entries {
        let index = match kinds.iter().position(|k| **k == entry.kind) {
            Some(i) => i,
            None => {
                kinds.push(&entry.kind);
                kinds.len() - 1
            }
        };
        kind_of.push(index as u64);
    }
    put_kinds(&mut out, kinds.into_iter());
    put_varint(&mut out, snapshot.entries.len() as u64);
    for (entry, kind) in snapshot.entries.iter().zip(kind_of) {
        out.extend_from_slice(&entry.id.0);
        put_varint(&mut out, kind);
        put_varint(&mut out, entry.generation);
        put_bytes(&mut out, entry.value.as_bytes());
        put_bytes(&mut out, entry.surrogate.as_bytes());
    }
    Ok(out)
}

/// Decodes a whole compact snapshot into the JSON model (tests, tools, and
/// a gateway that must hand the content on as JSON). A gateway builds its
/// index with [`crate::snapshot::SnapshotIndex::from_compact`] instead.
pub fn decode_snapshot(bytes: &[u8]) -> Result<Snapshot, CoreError> {
    let compact = CompactSnapshot::parse(bytes)?;
    let mut entries = Vec::with_capacity(compact.entry_count());
    for entry in compact.entries() {
        let entry = entry?;
        entries.push(Entry {
            id: entry.id,
            value: entry.value.to_string(),
            surrogate: entry.surrogate.to_string(),
            kind: entry.kind.clone(),
            generation: entry.generation,
        });
    }
    Ok(Snapshot {
        version: WIRE_VERSION,
        generation: compact.generation,
        seq: compact.seq,
        retired_salt: to_hex(compact.salt),
        retired: compact.retired().collect(),
        entries,
    })
}

/// A compact snapshot whose head (everything before the entries) has been
/// read and checked; the entries are read, and checked, as they are
/// iterated ([`CompactSnapshot::entries`]).
pub struct CompactSnapshot<'a> {
    /// The vault's generation.
    pub generation: u64,
    /// The feed position the snapshot is current to.
    pub seq: u64,
    /// The salt retired surrogates are hashed under.
    pub salt: &'a [u8],
    retired: &'a [u8],
    kinds: Vec<Kind>,
    entry_count: usize,
    /// Where the entry count starts.
    count_offset: usize,
    /// Where the first entry starts.
    entries_offset: usize,
    /// Bytes of each entry's id: [`ID_BYTES`], or [`FINGERPRINT_BYTES`] in
    /// the fingerprinted form.
    id_bytes: usize,
    bytes: &'a [u8],
}

impl std::fmt::Debug for CompactSnapshot<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompactSnapshot")
            .field("generation", &self.generation)
            .field("seq", &self.seq)
            .field("retired", &(self.retired.len() / RETIRED_BYTES))
            .field("entries", &self.entry_count)
            .finish_non_exhaustive()
    }
}

/// One entry as it lies in the bytes.
#[derive(Clone, Copy)]
pub struct EntryView<'s, 'a> {
    pub id: EntryId,
    pub kind: &'s Kind,
    pub generation: u64,
    pub value: &'a str,
    pub surrogate: &'a str,
    /// Where the whole entry lies in the snapshot's bytes.
    pub start: usize,
    pub end: usize,
}

impl std::fmt::Debug for EntryView<'_, '_> {
    // Never print the value or the surrogate.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EntryView")
            .field("id", &self.id)
            .field("kind", &self.kind)
            .field("generation", &self.generation)
            .finish_non_exhaustive()
    }
}

impl<'a> CompactSnapshot<'a> {
    /// Reads and checks the head: magic, version, generation, seq, salt,
    /// retired surrogates, kinds, and the entry count (against the bytes
    /// left).
    pub fn parse(bytes: &'a [u8]) -> Result<Self, CoreError> {
        Self::parse_head(bytes, bytes.len())
    }

    /// Reads and checks the head of a compact snapshot or of the
    /// fingerprinted form (its generation and seq, say). The entries of
    /// the fingerprinted form are not read here: [`Self::entries`] yields
    /// an error for them.
    pub fn parse_either(bytes: &'a [u8]) -> Result<Self, CoreError> {
        Self::parse_with(bytes, bytes.len(), true)
    }

    /// Reads and checks the head of the fingerprinted form only.
    pub(crate) fn parse_fingerprinted(bytes: &'a [u8]) -> Result<Self, CoreError> {
        let parsed = Self::parse_with(bytes, bytes.len(), true)?;
        if parsed.id_bytes != FINGERPRINT_BYTES {
            return Err(CoreError::Wire(
                "compact snapshot: field `magic` at byte 0: not the fingerprinted form".into(),
            ));
        }
        Ok(parsed)
    }

    /// [`Self::parse`] over the first bytes of a snapshot of `total`
    /// bytes: the head must lie in `bytes`, the entry count is checked
    /// against `total`. Only the head's fields may be read from the result
    /// (its entries lie beyond `bytes`).
    pub(crate) fn parse_head(bytes: &'a [u8], total: usize) -> Result<Self, CoreError> {
        Self::parse_with(bytes, total, false)
    }

    fn parse_with(bytes: &'a [u8], total: usize, fingerprinted: bool) -> Result<Self, CoreError> {
        let mut r = Reader { bytes, pos: 0 };
        let magic = r.take(SNAPSHOT_MAGIC.len(), "magic")?;
        let id_bytes = if magic == SNAPSHOT_MAGIC {
            ID_BYTES
        } else if fingerprinted && magic == FINGERPRINTED_MAGIC {
            FINGERPRINT_BYTES
        } else {
            return Err(r.error_at(0, "magic", "not a compact snapshot"));
        };
        let version = r.take(1, "version")?[0];
        check_version(u32::from(version))?;
        let generation = r.varint("generation")?;
        let seq = r.varint("seq")?;
        let salt = r.bytes("salt")?;
        let retired_count = r.count("retired", RETIRED_BYTES)?;
        let retired = r.take(retired_count * RETIRED_BYTES, "retired")?;
        let kind_count = r.count("kinds", MIN_KIND_BYTES)?;
        let mut kinds = Vec::with_capacity(kind_count);
        for _ in 0..kind_count {
            let at = r.pos;
            let name = r.str("kind")?;
            let kind =
                Kind::parse(name).ok_or_else(|| r.error_at(at, "kind", "not a kind name"))?;
            kinds.push(kind);
        }
        let count_offset = r.pos;
        let min_entry = MIN_ENTRY_BYTES - ID_BYTES + id_bytes;
        let entry_count = r.count_until("entries", min_entry, total.max(bytes.len()))?;
        Ok(CompactSnapshot {
            generation,
            seq,
            salt,
            retired,
            kinds,
            entry_count,
            count_offset,
            entries_offset: r.pos,
            id_bytes,
            bytes,
        })
    }

    /// How many entries the snapshot says it holds.
    pub fn entry_count(&self) -> usize {
        self.entry_count
    }

    /// How many retired surrogates it holds.
    pub fn retired_count(&self) -> usize {
        self.retired.len() / RETIRED_BYTES
    }

    /// Everything before the entry count (magic through kinds), byte-exact.
    pub(crate) fn head_bytes(&self) -> &'a [u8] {
        &self.bytes[..self.count_offset]
    }

    /// The entries' bytes as they lie (not yet checked: read them with
    /// [`Self::entries`]).
    pub(crate) fn entry_bytes(&self) -> &'a [u8] {
        &self.bytes[self.entries_offset..]
    }

    /// Where the first entry starts.
    pub(crate) fn entries_offset(&self) -> usize {
        self.entries_offset
    }

    /// The entries of a window of the snapshot's bytes: `window` starts at
    /// an entry, and `left` entries are still to come in the snapshot.
    /// Entries read from it are checked as [`Self::entries`] checks them;
    /// their offsets are the window's. No check that nothing follows the
    /// last one (the caller knows where the snapshot ends).
    pub(crate) fn entries_in<'w>(
        &self,
        window: &'w [u8],
        left: usize,
    ) -> impl Iterator<Item = Result<EntryView<'_, 'w>, CoreError>> {
        CompactEntries {
            kinds: &self.kinds,
            reader: Reader {
                bytes: window,
                pos: 0,
            },
            left,
            done: false,
            fingerprinted: self.id_bytes != ID_BYTES,
        }
        .take(left)
    }

    /// The kinds table entries index into.
    pub(crate) fn kinds(&self) -> &[Kind] {
        &self.kinds
    }

    /// The retired surrogates (already checked by [`Self::parse`]).
    pub fn retired(&self) -> impl ExactSizeIterator<Item = RetiredSurrogate> + 'a {
        self.retired.chunks_exact(RETIRED_BYTES).map(|chunk| {
            let mut hash: Hash128 = [0; 16];
            hash.copy_from_slice(&chunk[..16]);
            let mut lead = [0u8; 4];
            lead.copy_from_slice(&chunk[16..]);
            RetiredSurrogate {
                hash: RetiredHash(hash),
                lead: u32::from_le_bytes(lead),
            }
        })
    }

    /// The entries in order, each checked as it is read; after the last
    /// one, an error if any byte follows. Stops after the first error.
    pub fn entries(&self) -> CompactEntries<'_, 'a> {
        CompactEntries {
            kinds: &self.kinds,
            reader: Reader {
                bytes: self.bytes,
                pos: self.entries_offset,
            },
            left: self.entry_count,
            done: false,
            fingerprinted: self.id_bytes != ID_BYTES,
        }
    }
}

/// The entries of a [`CompactSnapshot`], read one at a time.
pub struct CompactEntries<'s, 'a> {
    kinds: &'s [Kind],
    reader: Reader<'a>,
    left: usize,
    done: bool,
    /// Entries of the fingerprinted form hold no id: not read here.
    fingerprinted: bool,
}

impl<'s, 'a> Iterator for CompactEntries<'s, 'a> {
    type Item = Result<EntryView<'s, 'a>, CoreError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if self.left == 0 {
            self.done = true;
            let r = &self.reader;
            return (r.pos != r.bytes.len())
                .then(|| Err(r.error_at(r.pos, "end", "bytes follow the last entry")));
        }
        self.left -= 1;
        let read = self.read_one();
        if read.is_err() {
            self.done = true;
        }
        Some(read)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.left + 1))
    }
}

impl<'s, 'a> CompactEntries<'s, 'a> {
    fn read_one(&mut self) -> Result<EntryView<'s, 'a>, CoreError> {
        let r = &mut self.reader;
        let start = r.pos;
        if self.fingerprinted {
            return Err(r.error_at(start, "entry id", "a fingerprinted entry holds no id"));
        }
        let mut id: Hash128 = [0; 16];
        id.copy_from_slice(r.take(ID_BYTES, "entry id")?);
        let at = r.pos;
        let kind_index = r.varint("entry kind")?;
        let kind = usize::try_from(kind_index)
            .ok()
            .and_then(|i| self.kinds.get(i))
            .ok_or_else(|| r.error_at(at, "entry kind", "index outside the kinds table"))?;
        let generation = r.varint("entry generation")?;
        let value = r.text("entry value")?;
        let surrogate = r.text("entry surrogate")?;
        Ok(EntryView {
            id: EntryId(id),
            kind,
            generation,
            value,
            surrogate,
            start,
            end: r.pos,
        })
    }
}

/// The compact snapshot `bytes` without the entries in `forgotten`, or
/// `None` when it holds none of them. Works in place: the kept entries are
/// moved down over the dropped ones (everything before the entries, and
/// each kept entry, byte-exact), the entry count rewritten, and the freed
/// tail zeroed before the buffer is cut, so no byte of a dropped entry is
/// left in it. The whole input is checked first; on an error `bytes` are
/// zeroed and dropped.
pub fn scrub_compact_snapshot(
    mut bytes: Vec<u8>,
    forgotten: &HashSet<EntryId>,
) -> Result<Option<Vec<u8>>, CoreError> {
    let (count_offset, entries_offset, kept) = {
        let compact = match CompactSnapshot::parse(&bytes) {
            Ok(c) => c,
            Err(err) => {
                wipe(&mut bytes);
                return Err(err);
            }
        };
        let mut kept: Vec<Range<usize>> = Vec::with_capacity(compact.entry_count());
        let mut dropped = 0usize;
        for entry in compact.entries() {
            match entry {
                Ok(e) if forgotten.contains(&e.id) => dropped += 1,
                Ok(e) => match kept.last_mut() {
                    // Neighbours move as one run.
                    Some(run) if run.end == e.start => run.end = e.end,
                    _ => kept.push(e.start..e.end),
                },
                Err(err) => {
                    drop(kept);
                    wipe(&mut bytes);
                    return Err(err);
                }
            }
        }
        if dropped == 0 {
            return Ok(None);
        }
        let count = compact.entry_count() - dropped;
        (compact.count_offset, compact.entries_offset, (count, kept))
    };
    let (count, runs) = kept;
    let mut count_bytes = Vec::with_capacity(10);
    put_varint(&mut count_bytes, count as u64);
    // The new count is never longer than the old one, so every write lands
    // at or before what it copies.
    let mut at = count_offset;
    bytes[at..at + count_bytes.len()].copy_from_slice(&count_bytes);
    at += count_bytes.len();
    debug_assert!(at <= entries_offset);
    for run in runs {
        let len = run.len();
        bytes.copy_within(run, at);
        at += len;
    }
    wipe(&mut bytes[at..]);
    bytes.truncate(at);
    Ok(Some(bytes))
}

/// A position in the bytes with checked reads.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn error_at(&self, offset: usize, field: &str, reason: &str) -> CoreError {
        CoreError::Wire(format!(
            "compact snapshot: field `{field}` at byte {offset}: {reason}"
        ))
    }

    fn left(&self) -> usize {
        self.bytes.len() - self.pos
    }

    fn take(&mut self, len: usize, field: &str) -> Result<&'a [u8], CoreError> {
        if len > self.left() {
            return Err(self.error_at(
                self.pos,
                field,
                &format!("needs {len} bytes, {} left", self.left()),
            ));
        }
        let out = &self.bytes[self.pos..self.pos + len];
        self.pos += len;
        Ok(out)
    }

    /// An unsigned LEB128 varint in its shortest form.
    fn varint(&mut self, field: &str) -> Result<u64, CoreError> {
        let start = self.pos;
        let mut value: u64 = 0;
        for i in 0..10u32 {
            let Some(&byte) = self.bytes.get(self.pos) else {
                return Err(self.error_at(start, field, "the number is cut short"));
            };
            self.pos += 1;
            let part = u64::from(byte & 0x7f);
            if i == 9 && byte > 1 {
                return Err(self.error_at(start, field, "the number overflows 64 bits"));
            }
            value |= part << (7 * i);
            if byte & 0x80 == 0 {
                if byte == 0 && i > 0 {
                    return Err(self.error_at(start, field, "the number is not in shortest form"));
                }
                return Ok(value);
            }
        }
        Err(self.error_at(start, field, "the number overflows 64 bits"))
    }

    /// A count of items of at least `min_bytes` each, checked against the
    /// bytes left.
    fn count(&mut self, field: &str, min_bytes: usize) -> Result<usize, CoreError> {
        self.count_until(field, min_bytes, self.bytes.len())
    }

    /// [`Self::count`] against the bytes left before `end` (the end of a
    /// snapshot of which `bytes` are the first).
    fn count_until(
        &mut self,
        field: &str,
        min_bytes: usize,
        end: usize,
    ) -> Result<usize, CoreError> {
        let start = self.pos;
        let count = self.varint(field)?;
        let left = end - self.pos;
        match usize::try_from(count) {
            Ok(n) if n.checked_mul(min_bytes).is_some_and(|b| b <= left) => Ok(n),
            _ => Err(self.error_at(
                start,
                field,
                &format!("count {count} needs at least {min_bytes} bytes each, {left} left"),
            )),
        }
    }

    fn bytes(&mut self, field: &str) -> Result<&'a [u8], CoreError> {
        let start = self.pos;
        let len = self.varint(field)?;
        match usize::try_from(len) {
            Ok(len) if len <= self.left() => self.take(len, field),
            _ => Err(self.error_at(
                start,
                field,
                &format!("length {len} exceeds the {} bytes left", self.left()),
            )),
        }
    }

    fn str(&mut self, field: &str) -> Result<&'a str, CoreError> {
        let start = self.pos;
        let bytes = self.bytes(field)?;
        std::str::from_utf8(bytes).map_err(|_| self.error_at(start, field, "not UTF-8"))
    }

    /// An entry's value or surrogate: UTF-8 and not empty (an index holds
    /// no empty one, and every entry's count check assumes a byte each: a
    /// scrub's output must decode as its input did).
    fn text(&mut self, field: &str) -> Result<&'a str, CoreError> {
        let start = self.pos;
        let text = self.str(field)?;
        if text.is_empty() {
            return Err(self.error_at(start, field, "empty"));
        }
        Ok(text)
    }
}

/// A compact snapshot's first fields: magic, version, generation, seq.
pub(crate) fn put_head(out: &mut Vec<u8>, generation: u64, seq: u64) {
    out.extend_from_slice(&SNAPSHOT_MAGIC);
    out.push(WIRE_VERSION as u8);
    put_varint(out, generation);
    put_varint(out, seq);
}

/// A compact snapshot's kinds table: its length, then each kind's name.
pub(crate) fn put_kinds<'a>(out: &mut Vec<u8>, kinds: impl ExactSizeIterator<Item = &'a Kind>) {
    put_varint(out, kinds.len() as u64);
    for kind in kinds {
        put_bytes(out, kind.as_str().as_bytes());
    }
}

/// The LEB128 varint at `*pos`, moving `*pos` past it; `None` when the
/// bytes end first or it runs past 64 bits. For bytes this crate wrote or
/// already checked (the strict reader is [`Reader`]'s).
#[inline]
pub(crate) fn get_varint(bytes: &[u8], pos: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *bytes.get(*pos)?;
        *pos += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

pub(crate) fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

pub(crate) fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// The bytes of an even-length hex string.
pub(crate) fn hex_bytes(hex: &str) -> Option<Vec<u8>> {
    if !hex.len().is_multiple_of(2) {
        return None;
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests;
