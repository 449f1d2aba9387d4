//! The index keeps an 8-byte fingerprint of each id, not the id: ids that
//! share a fingerprint (constructed here) must never make a forget drop
//! another person's entry nor leave the forgotten one; and the
//! fingerprinted records must hold what the snapshot held, however the
//! index was built.

use super::*;
use crate::wire::snapshot_parts::{join_fingerprinted, SnapshotSplit};

/// An id other than `id` with the same fingerprint: its high half is
/// `[n; 8]`, its low half chosen so the fingerprints agree.
fn colliding(id: EntryId, n: u8) -> EntryId {
    let mut high = [0u8; 16];
    high[8..].fill(n);
    let mix = EntryId(high).fingerprint().0; // the high half's share alone
    let low = (id.fingerprint().0 ^ mix).to_le_bytes();
    let mut out = [n; 16];
    out[..8].copy_from_slice(&low);
    let out = EntryId(out);
    assert_ne!(out, id);
    assert_eq!(out.fingerprint(), id.fingerprint());
    out
}

/// Ana's entry, and Mario's under an id that shares its fingerprint.
fn ana_and_mario() -> (Entry, Entry) {
    let ana = entry(4, "Ana Costa", "Eva Lima", Kind::Name);
    let mut mario = entry(1, "Mario Rossi", "Laura Bianchi", Kind::Name);
    mario.id = colliding(ana.id, 0x5a);
    (ana, mario)
}

fn forgotten(seq: u64, ids: &[EntryId], surrogates: &[&str], generation: u64) -> Event {
    Event {
        seq,
        body: EventBody::Forgotten {
            ids: ids.to_vec(),
            retired: surrogates.iter().map(|s| retired_of(s)).collect(),
            generation,
        },
    }
}

/// The fingerprinted form a worker joins from the shared parts.
fn joined(snapshot: &Snapshot, part_bytes: usize) -> Vec<u8> {
    let bytes = crate::wire::encode_snapshot(snapshot).unwrap();
    let split = SnapshotSplit::new(&bytes, part_bytes, 3).unwrap();
    let parts: Vec<Vec<u8>> = (0..split.len()).map(|i| split.part(&bytes, i)).collect();
    join_fingerprinted(&split.manifest, |i| parts.get(i).cloned()).unwrap()
}

/// The same entries, every way an index is built: from JSON, from a
/// compact snapshot, from the joined parts, and by events on an empty
/// snapshot.
fn built_every_way(entries: Vec<Entry>) -> Vec<(&'static str, SnapshotIndex)> {
    let whole = snapshot(entries.clone());
    let compact = crate::wire::encode_snapshot(&whole).unwrap();
    let mut by_events = SnapshotIndex::from_snapshot(snapshot(vec![])).unwrap();
    by_events
        .apply_event(&Event {
            seq: 11,
            body: EventBody::Added { entries },
        })
        .unwrap();
    vec![
        ("json", SnapshotIndex::from_snapshot(whole.clone()).unwrap()),
        ("compact", SnapshotIndex::from_compact(compact).unwrap()),
        (
            "joined",
            SnapshotIndex::from_compact(joined(&whole, 40)).unwrap(),
        ),
        ("events", by_events),
    ]
}

#[test]
fn a_forget_drops_only_the_entry_its_event_retires_when_two_ids_share_a_fingerprint() {
    let (ana, mario) = ana_and_mario();
    for (how, mut index) in built_every_way(vec![ana.clone(), mario.clone()]) {
        assert_eq!(index.len(), 2, "{how}: both kept");
        let seq = index.seq();
        let applied = index
            .apply_event(&forgotten(seq + 1, &[mario.id], &["Laura Bianchi"], 2))
            .unwrap();
        assert_eq!(applied.forgotten, vec![mario.id], "{how}");
        // Mario is forgotten: neither masked by the vault nor restored.
        assert!(index.by_value("Mario Rossi").is_none(), "{how}");
        assert!(index.by_surrogate("Laura Bianchi").is_none(), "{how}");
        assert!(index.is_retired("Laura Bianchi"), "{how}");
        // Ana, whose id shares Mario's fingerprint, is still masked and
        // restored.
        assert_eq!(
            values_in(&index, "Ana Costa e Mario Rossi"),
            ["Ana Costa"],
            "{how}"
        );
        assert_eq!(
            index.by_surrogate("Eva Lima").map(|e| e.value),
            Some("Ana Costa")
        );
        // Her own forget takes her.
        let applied = index
            .apply_event(&forgotten(seq + 2, &[ana.id], &["Eva Lima"], 3))
            .unwrap();
        assert_eq!(applied.forgotten, vec![ana.id], "{how}");
        assert!(index.is_empty(), "{how}");
    }
}

#[test]
fn a_forget_of_an_id_absent_here_leaves_the_entry_that_shares_its_fingerprint() {
    let (ana, mario) = ana_and_mario();
    for (how, mut index) in built_every_way(vec![ana.clone()]) {
        let seq = index.seq();
        let applied = index
            .apply_event(&forgotten(seq + 1, &[mario.id], &["Laura Bianchi"], 2))
            .unwrap();
        assert!(applied.forgotten.is_empty(), "{how}");
        assert_eq!(
            index.by_value("Ana Costa").map(|e| e.surrogate),
            Some("Eva Lima")
        );
        assert!(index.is_retired("Laura Bianchi"), "{how}");
        assert_eq!(index.seq(), seq + 1);
    }
}

#[test]
fn an_added_entry_that_shares_a_fingerprint_leaves_the_other_in_place() {
    let (ana, mario) = ana_and_mario();
    for (how, mut index) in built_every_way(vec![ana.clone()]) {
        let mut added = mario.clone();
        added.generation = index.generation();
        assert_eq!(index.add_entries(index.generation(), vec![added]), Ok(1));
        assert_eq!(index.len(), 2, "{how}");
        assert_eq!(
            values_in(&index, "Ana Costa, Mario Rossi"),
            ["Ana Costa", "Mario Rossi"],
            "{how}"
        );
        // The same entry again changes nothing; the same value under a new
        // surrogate replaces it (and only it).
        let mut again = mario.clone();
        again.generation = index.generation();
        index
            .add_entries(index.generation(), vec![again.clone()])
            .unwrap();
        assert_eq!(index.len(), 2, "{how}");
        again.surrogate = "Giulia Verdi".into();
        index.add_entries(index.generation(), vec![again]).unwrap();
        assert_eq!(index.len(), 2, "{how}");
        assert_eq!(
            index.by_value("Mario Rossi").map(|e| e.surrogate),
            Some("Giulia Verdi")
        );
        assert_eq!(
            index.by_value("Ana Costa").map(|e| e.surrogate),
            Some("Eva Lima")
        );
    }
}

#[test]
fn a_forgotten_event_without_one_retired_surrogate_per_id_is_refused() {
    let mut index = demo();
    let event = Event {
        seq: 11,
        body: EventBody::Forgotten {
            ids: vec![EntryId([1; 16]), EntryId([4; 16])],
            retired: vec![retired_of("Laura Bianchi")],
            generation: 2,
        },
    };
    let err = index.apply_event(&event).unwrap_err().to_string();
    assert!(err.contains("2 ids but 1 retired"), "{err}");
    assert!(!err.contains("Laura"), "{err}");
    // Nothing changed.
    assert_eq!((index.seq(), index.generation(), index.len()), (10, 1, 7));
    assert!(index.by_value("Mario Rossi").is_some());
    assert!(!index.is_retired("Laura Bianchi"));
}

#[test]
fn an_id_whose_entry_holds_another_surrogate_than_the_event_retires_stays() {
    // The event names Mario's id but retires a surrogate this index never
    // gave him: what the index holds under that fingerprint is not the
    // forgotten entry, so it stays.
    let mut index = demo();
    let applied = index
        .apply_event(&forgotten(11, &[EntryId([1; 16])], &["Someone Else"], 2))
        .unwrap();
    assert!(applied.forgotten.is_empty());
    assert!(index.by_value("Mario Rossi").is_some());
}

#[test]
fn the_fingerprinted_records_hold_what_the_snapshot_held_however_built() {
    let whole = demo_snapshot();
    let from_json = SnapshotIndex::from_snapshot(whole.clone()).unwrap();
    let compact = crate::wire::encode_snapshot(&whole).unwrap();
    for part_bytes in [1, 30, 100, 1 << 20] {
        let bytes = joined(&whole, part_bytes);
        // 8 bytes an entry shorter than the compact snapshot, and the same
        // whatever the parts.
        assert_eq!(bytes.len(), compact.len() - 8 * whole.entries.len());
        assert_eq!(bytes, joined(&whole, 7));
        let head = crate::wire::CompactSnapshot::parse_either(&bytes).unwrap();
        assert_eq!((head.seq, head.generation), (whole.seq, whole.generation));
        assert!(
            head.entries().next().unwrap().is_err(),
            "entries hold no id"
        );
        assert!(crate::wire::CompactSnapshot::parse(&bytes).is_err());
        let index = SnapshotIndex::from_compact(bytes).unwrap();
        assert_eq!(index.len(), from_json.len());
        assert_eq!(index.retired_len(), 1);
        for e in &whole.entries {
            assert_holds(&index, e, &format!("parts of {part_bytes} bytes"));
        }
    }
    // A compact snapshot turned into the form where it lies: same index.
    let index = SnapshotIndex::from_compact(compact).unwrap();
    for e in from_json.entries() {
        let found = index.by_value(e.value).unwrap();
        assert_eq!(
            (found.fingerprint, found.surrogate),
            (e.fingerprint, e.surrogate)
        );
    }
}

#[test]
fn a_damaged_fingerprinted_form_is_refused_by_position() {
    let whole = snapshot(vec![
        entry(1, "Mario Rossi", "Laura Bianchi", Kind::Name),
        entry(2, "Ana", "Eva", Kind::Name),
    ]);
    let good = joined(&whole, 1 << 20);
    let value_at = |bytes: &[u8], value: &str| {
        bytes
            .windows(value.len())
            .position(|w| w == value.as_bytes())
            .unwrap()
    };
    let mut not_utf8 = good.clone();
    let at = value_at(&not_utf8, "Ana");
    not_utf8[at] = 0xff;
    let mut trailing = good.clone();
    trailing.push(0);
    let mut cut = good.clone();
    cut.truncate(good.len() - 2);
    let mut kind = good.clone();
    // Ana's record: fingerprint, then the kind index.
    let ana = value_at(&kind, "Ana") - 1 - 1 - 1 - 8;
    kind[ana + 8] = 9;
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (not_utf8, "entry 1: not UTF-8"),
        (trailing, "bytes follow the last entry"),
        (cut, "entry 1: cut short"),
        (kind, "entry 1: its kind is outside the kinds table"),
    ];
    for (bytes, want) in cases {
        let err = SnapshotIndex::from_compact(bytes)
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains(want), "{want}: {err}");
        assert!(!err.contains("Ana") && !err.contains("Mario"), "{err}");
    }
    assert!(SnapshotIndex::from_compact(good).is_ok());
}

#[test]
fn an_id_listed_twice_is_refused_in_every_form() {
    // One id, one value, twice: refused however the index is built.
    let twice = snapshot(vec![
        entry(1, "Mario", "Paolo", Kind::Name),
        entry(1, "Mario", "Piero", Kind::Name),
    ]);
    let err = SnapshotIndex::from_compact(joined(&twice, 1))
        .err()
        .unwrap();
    assert!(
        err.to_string().contains("entry 1: its id is listed twice"),
        "{err}"
    );
    // One id under two values (no vault makes it: an id is its value's
    // hash): the joined form cannot tell it from two ids that share a
    // fingerprint and keeps both; a forget of the id takes the entry whose
    // surrogate its event retires, and only that one.
    let odd = snapshot(vec![
        entry(1, "Mario", "Paolo", Kind::Name),
        entry(1, "Ana", "Eva", Kind::Name),
    ]);
    let mut index = SnapshotIndex::from_compact(joined(&odd, 1)).unwrap();
    assert_eq!(index.len(), 2);
    let applied = index
        .apply_event(&forgotten(11, &[EntryId([1; 16])], &["Paolo"], 2))
        .unwrap();
    assert_eq!(applied.forgotten, vec![EntryId([1; 16])]);
    assert!(index.by_value("Mario").is_none());
    assert!(index.by_value("Ana").is_some());
}
