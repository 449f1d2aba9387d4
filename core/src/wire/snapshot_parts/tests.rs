use super::*;
use crate::kind::Kind;
use crate::wire::{
    decode_snapshot, encode_snapshot, Entry, RetiredHash, RetiredSurrogate, Snapshot, WIRE_VERSION,
};

fn entry(n: u8, kind: Kind) -> Entry {
    Entry {
        id: EntryId([n; 16]),
        value: format!("value number {n:03}"),
        surrogate: format!("surrogate {n:03}"),
        kind,
        generation: u64::from(n),
    }
}

fn sample(seq: u64, n: u8) -> Snapshot {
    Snapshot {
        version: WIRE_VERSION,
        generation: 4,
        seq,
        retired_salt: "00ff10ab".into(),
        retired: vec![RetiredSurrogate {
            hash: RetiredHash([9; 16]),
            lead: 0x00ab_cdef,
        }],
        entries: (1..=n)
            .map(|i| entry(i, if i % 2 == 0 { Kind::Name } else { Kind::Email }))
            .collect(),
    }
}

/// The manifest and parts a writer would publish.
fn published(bytes: &[u8], part_bytes: usize, tag: u64) -> (SnapshotManifest, Vec<Vec<u8>>) {
    let split = SnapshotSplit::new(bytes, part_bytes, tag).unwrap();
    let parts = (0..split.len()).map(|i| split.part(bytes, i)).collect();
    let manifest = SnapshotManifest::parse(&split.manifest.encode()).unwrap();
    assert_eq!(manifest, split.manifest);
    (manifest, parts)
}

fn join(manifest: &SnapshotManifest, parts: &[Vec<u8>]) -> Result<Vec<u8>, JoinError> {
    join_snapshot(manifest, |i| parts.get(i).cloned())
}

#[test]
fn parts_join_back_into_the_same_bytes_whatever_the_part_size() {
    let snapshot = sample(30, 40);
    let bytes = encode_snapshot(&snapshot).unwrap();
    for part_bytes in [0, 1, 40, 100, 333, 1 << 20] {
        let (manifest, parts) = published(&bytes, part_bytes, 7);
        assert!(!parts.is_empty());
        assert_eq!(manifest.seq().unwrap(), 30);
        assert_eq!(manifest.entry_count(), 40);
        for (part, info) in parts.iter().zip(&manifest.parts) {
            assert_eq!(part_info(part).unwrap(), *info);
        }
        assert_eq!(
            join(&manifest, &parts).unwrap(),
            bytes,
            "part size {part_bytes}"
        );
    }
    // Small parts: many of them, each about the size asked.
    let (manifest, parts) = published(&bytes, 100, 7);
    assert!(parts.len() >= 10, "{} parts", parts.len());
    assert!(manifest.parts.iter().all(|p| p.entry_bytes <= 100));
}

#[test]
fn a_snapshot_with_no_entry_has_no_part_and_joins_back() {
    let snapshot = sample(3, 0);
    let bytes = encode_snapshot(&snapshot).unwrap();
    let (manifest, parts) = published(&bytes, 100, 1);
    assert!(parts.is_empty());
    assert_eq!(
        decode_snapshot(&join(&manifest, &parts).unwrap()).unwrap(),
        snapshot
    );
}

#[test]
fn a_part_of_another_publication_is_torn_never_joined() {
    let old = encode_snapshot(&sample(30, 40)).unwrap();
    let new = encode_snapshot(&sample(31, 40)).unwrap();
    let (old_manifest, old_parts) = published(&old, 100, 7);
    let (new_manifest, new_parts) = published(&new, 100, 8);
    assert_eq!(old_parts.len(), new_parts.len());
    // A writer in the middle of a new snapshot: some parts new, the
    // manifest old (parts are written first), and the other way round.
    let mut mixed = old_parts.clone();
    mixed[1] = new_parts[1].clone();
    assert!(matches!(join(&old_manifest, &mixed), Err(JoinError::Torn)));
    assert!(matches!(join(&new_manifest, &mixed), Err(JoinError::Torn)));
    // A part emptied or missing (a shorter snapshot's writer cleared it).
    let mut cut = old_parts.clone();
    cut[2] = Vec::new();
    assert!(matches!(join(&old_manifest, &cut), Err(JoinError::Torn)));
    assert!(matches!(
        join(&old_manifest, &old_parts[..old_parts.len() - 1]),
        Err(JoinError::Torn)
    ));
    // Same tag, other content (a tag reused against the rules): the
    // counts, generation, seq and kinds are checked too.
    let (_, same_tag) = published(&new, 100, 7);
    let mut reused = old_parts.clone();
    reused[0] = same_tag[0].clone();
    assert!(matches!(join(&old_manifest, &reused), Err(JoinError::Torn)));
    // Each publication alone joins.
    assert_eq!(join(&old_manifest, &old_parts).unwrap(), old);
    assert_eq!(join(&new_manifest, &new_parts).unwrap(), new);
}

#[test]
fn a_scrubbed_part_is_retagged_and_the_old_manifest_no_longer_joins() {
    let snapshot = sample(30, 40);
    let bytes = encode_snapshot(&snapshot).unwrap();
    let (manifest, mut parts) = published(&bytes, 100, 7);
    let forgotten: HashSet<EntryId> = [EntryId([5; 16]), EntryId([33; 16])].into();
    let mut scrubbed_manifest = manifest.clone();
    let mut rewritten = 0;
    for (i, part) in parts.iter_mut().enumerate() {
        if let Some((new, info)) = scrub_part(part.clone(), &forgotten, 9).unwrap() {
            *part = new;
            scrubbed_manifest.parts[i] = info;
            rewritten += 1;
        }
    }
    assert_eq!(rewritten, 2);
    // Parts written, manifest not yet: torn.
    assert!(matches!(join(&manifest, &parts), Err(JoinError::Torn)));
    let joined = join(&scrubbed_manifest, &parts).unwrap();
    let mut expected = snapshot.clone();
    expected.entries.retain(|e| !forgotten.contains(&e.id));
    assert_eq!(decode_snapshot(&joined).unwrap(), expected);
    // No byte of a forgotten entry is left in any part.
    for part in &parts {
        for gone in ["value number 005", "surrogate 033"] {
            assert!(!part.windows(gone.len()).any(|w| w == gone.as_bytes()));
        }
    }
    // Nothing to drop: no rewrite.
    assert!(scrub_part(parts[0].clone(), &forgotten, 10)
        .unwrap()
        .is_none());
}

#[test]
fn damaged_manifests_and_parts_are_refused() {
    let bytes = encode_snapshot(&sample(30, 10)).unwrap();
    let (manifest, parts) = published(&bytes, 100, 7);
    let encoded = manifest.encode();
    for cut in 0..encoded.len() {
        assert!(
            SnapshotManifest::parse(&encoded[..cut]).is_err(),
            "cut {cut}"
        );
    }
    assert!(SnapshotManifest::parse(b"").is_err());
    assert!(SnapshotManifest::parse(&bytes).is_err());
    // A head that holds entries.
    let mut with_entries = MANIFEST_MAGIC.to_vec();
    with_entries.push(0);
    with_entries.extend_from_slice(&bytes);
    assert!(SnapshotManifest::parse(&with_entries).is_err());
    // A part cut short is torn (its counts differ from the manifest's) or
    // refused; never joined.
    let mut damaged = parts.clone();
    let last = damaged[0].len() - 1;
    damaged[0].truncate(last);
    assert!(join(&manifest, &damaged).is_err());
    assert!(part_info(&damaged[0]).is_err());
    assert!(scrub_part(damaged[0].clone(), &HashSet::new(), 8).is_err());
}

/// What a windowed split gave: the manifest, the parts put, and the
/// length of every window read.
type Windowed = (
    Result<SnapshotManifest, SplitError<()>>,
    Vec<Vec<u8>>,
    Vec<usize>,
);

/// `split_windowed` over `bytes`, with every window read recorded.
fn windowed(bytes: &[u8], part_bytes: usize, tag: u64) -> Windowed {
    let mut parts = Vec::new();
    let mut reads = Vec::new();
    let manifest = split_windowed(
        bytes.len(),
        part_bytes,
        tag,
        |start, len| {
            reads.push(len);
            bytes.get(start..start + len).map(<[u8]>::to_vec)
        },
        |i, part| {
            assert_eq!(i, parts.len());
            parts.push(part.to_vec());
            Ok(())
        },
    );
    (manifest, parts, reads)
}

#[test]
fn a_windowed_split_cuts_the_same_parts_reading_no_more_than_a_part_at_once() {
    let mut snapshot = sample(30, 120);
    // One entry far longer than a part: read in a window grown for it.
    snapshot.entries[50].value = "x".repeat(5000);
    let bytes = encode_snapshot(&snapshot).unwrap();
    for part_bytes in [1, 60, 100, 333, 4096, 1 << 20] {
        let (manifest, parts, reads) = windowed(&bytes, part_bytes, 7);
        let manifest = manifest.unwrap();
        let (whole_manifest, whole_parts) = published(&bytes, part_bytes, 7);
        assert_eq!(manifest, whole_manifest, "part size {part_bytes}");
        assert_eq!(parts, whole_parts, "part size {part_bytes}");
        assert_eq!(join(&manifest, &parts).unwrap(), bytes);
        // Windows of a part (the head's at least 4 KiB), doubled only for
        // the long entry.
        let longest = *reads.iter().max().unwrap();
        assert!(
            longest <= part_bytes.max(4096).max(2 * 5100).min(bytes.len()),
            "part size {part_bytes}: a window of {longest}"
        );
    }
    let empty = encode_snapshot(&sample(3, 0)).unwrap();
    let (manifest, parts, _) = windowed(&empty, 100, 1);
    assert!(parts.is_empty());
    assert_eq!(join(&manifest.unwrap(), &parts).unwrap(), empty);
}

#[test]
fn a_windowed_split_refuses_what_the_whole_reader_refuses() {
    let bytes = encode_snapshot(&sample(30, 40)).unwrap();
    for part_bytes in [1, 100, 1 << 20] {
        // Cut anywhere, or a byte after the last entry.
        for cut in [0, 3, 30, bytes.len() / 2, bytes.len() - 1] {
            let (manifest, _, _) = windowed(&bytes[..cut], part_bytes, 7);
            assert!(
                matches!(manifest, Err(SplitError::Bad(_))),
                "cut {cut}, part size {part_bytes}"
            );
        }
        let mut longer = bytes.clone();
        longer.push(0);
        let (manifest, _, _) = windowed(&longer, part_bytes, 7);
        assert!(matches!(manifest, Err(SplitError::Bad(_))));
        // A damaged entry in the middle (a length past the end).
        let mut damaged = bytes.clone();
        let at = damaged.len() / 2;
        damaged[at..at + 4].copy_from_slice(&[0xff, 0xff, 0xff, 0x0f]);
        let whole = SnapshotSplit::new(&damaged, part_bytes, 7).is_err();
        let (manifest, _, _) = windowed(&damaged, part_bytes, 7);
        assert_eq!(manifest.is_err(), whole, "part size {part_bytes}");
    }
    // A window the reader cannot give.
    let (manifest, _, _) = {
        let mut parts = Vec::new();
        let m = split_windowed(
            bytes.len(),
            100,
            7,
            |_, _| None,
            |_, p| {
                parts.push(p.to_vec());
                Ok::<(), ()>(())
            },
        );
        (m, parts, ())
    };
    assert!(matches!(manifest, Err(SplitError::Read)));
}

/// Review finding: a manifest (shared data, which any module with the
/// filter's `vm_id` can write, SECURITY.md R3) whose parts claim more entry
/// bytes than exist made the join reserve them all at once: a capacity
/// overflow panic (a VM crash: 503s until Envoy restarts) or an abort on
/// a failed allocation; two huge claims overflowed the sum. A join takes
/// no more than the parts hold.
#[test]
fn a_manifest_claiming_huge_parts_is_refused_without_a_panic() {
    let bytes = encode_snapshot(&sample(3, 4)).unwrap();
    let (manifest, parts) = published(&bytes, 1 << 20, 7);
    for claims in [vec![u64::MAX / 2], vec![u64::MAX, u64::MAX]] {
        let mut lying = manifest.clone();
        lying.parts = claims
            .iter()
            .map(|&entry_bytes| PartInfo {
                tag: 7,
                entries: 1,
                entry_bytes,
            })
            .collect();
        let lying = SnapshotManifest::parse(&lying.encode()).unwrap();
        let joined = std::panic::catch_unwind(|| join(&lying, &parts).is_err());
        assert!(
            matches!(joined, Ok(true)),
            "a lying manifest panicked or joined"
        );
    }
}

fn join_fp(manifest: &SnapshotManifest, parts: &[Vec<u8>]) -> Result<Vec<u8>, JoinError> {
    join_fingerprinted(manifest, |i| parts.get(i).cloned())
}

/// The fingerprinted form of `bytes`, written out field by field from the
/// layout (`compact_snapshot`'s doc): `LTSF`, the same head, and each
/// entry with its id replaced by the id's fingerprint.
fn fingerprinted_by_the_layout(bytes: &[u8]) -> Vec<u8> {
    let compact = CompactSnapshot::parse(bytes).unwrap();
    let mut out = b"LTSF".to_vec();
    out.extend_from_slice(&compact.head_bytes()[4..]);
    put_varint(&mut out, compact.entry_count() as u64);
    for e in compact.entries() {
        let e = e.unwrap();
        out.extend_from_slice(&e.id.fingerprint().0.to_le_bytes());
        out.extend_from_slice(&bytes[e.start + 16..e.end]);
    }
    out
}

#[test]
fn parts_join_into_the_fingerprinted_form_whatever_the_part_size() {
    for n in [0, 1, 40] {
        let bytes = encode_snapshot(&sample(30, n)).unwrap();
        let want = fingerprinted_by_the_layout(&bytes);
        assert_eq!(want.len(), bytes.len() - 8 * usize::from(n));
        for part_bytes in [0, 1, 40, 100, 333, 1 << 20] {
            let (manifest, parts) = published(&bytes, part_bytes, 7);
            let joined = join_fp(&manifest, &parts).unwrap();
            assert_eq!(joined, want, "{n} entries, part size {part_bytes}");
            // Allocated once at its final size.
            assert_eq!(joined.capacity(), joined.len() + 10);
        }
    }
}

#[test]
fn the_fingerprinted_join_refuses_what_the_compact_join_refuses() {
    let old = encode_snapshot(&sample(30, 40)).unwrap();
    let new = encode_snapshot(&sample(31, 40)).unwrap();
    let (old_manifest, old_parts) = published(&old, 100, 7);
    let (_, new_parts) = published(&new, 100, 8);
    let mut mixed = old_parts.clone();
    mixed[1] = new_parts[1].clone();
    assert!(matches!(
        join_fp(&old_manifest, &mixed),
        Err(JoinError::Torn)
    ));
    let mut cut = old_parts.clone();
    cut[2] = Vec::new();
    assert!(matches!(join_fp(&old_manifest, &cut), Err(JoinError::Torn)));
    // A part whose entry is damaged where the counts still agree (a value
    // that is not UTF-8): refused, not joined.
    let mut damaged = old_parts.clone();
    let at = damaged[0]
        .windows(b"value number".len())
        .position(|w| w == b"value number")
        .unwrap();
    damaged[0][at] = 0xff;
    assert!(matches!(
        join_fp(&old_manifest, &damaged),
        Err(JoinError::Bad(_))
    ));
    // A manifest whose parts claim fewer bytes than 8 an entry, or huge
    // ones: refused without a panic.
    for (entries, entry_bytes) in [(10, 79), (1, u64::MAX / 2), (u64::MAX, u64::MAX)] {
        let mut lying = old_manifest.clone();
        lying.parts = vec![PartInfo {
            tag: 7,
            entries,
            entry_bytes,
        }];
        let joined = std::panic::catch_unwind(|| join_fp(&lying, &old_parts).is_err());
        assert!(
            matches!(joined, Ok(true)),
            "{entries} entries, {entry_bytes} bytes"
        );
    }
}
