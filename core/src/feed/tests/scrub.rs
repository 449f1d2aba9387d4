use super::*;
use crate::feed::{scrub_events, scrub_snapshot, scrub_snapshot_entries};
use crate::wire::{decode_snapshot, encode_snapshot};
use std::collections::HashSet;

#[test]
fn a_forget_scrubs_only_earlier_added_events() {
    struct Case {
        name: &'static str,
        events: Vec<Event>,
        after: Vec<Vec<&'static str>>,
        forgotten: &'static [u8],
    }
    let cases = [
        Case {
            name: "an id forgotten later is dropped from an earlier added event",
            events: vec![
                added(2, vec![entry(1, "Mario"), entry(2, "Giulia")]),
                forgotten(3, &[1]),
            ],
            after: vec![vec!["Giulia"], vec!["<forgotten>"]],
            forgotten: &[1],
        },
        Case {
            name: "an id added again after its forget keeps its new entry",
            events: vec![
                added(2, vec![entry(1, "Mario"), entry(2, "Giulia")]),
                forgotten(3, &[1]),
                added(4, vec![entry(1, "Mario")]),
                added(5, vec![entry(3, "Ugo")]),
                forgotten(6, &[3]),
            ],
            after: vec![
                vec!["Giulia"],
                vec!["<forgotten>"],
                vec!["Mario"],
                vec![],
                vec!["<forgotten>"],
            ],
            forgotten: &[1, 3],
        },
        Case {
            name: "a forget of an id no event holds changes nothing",
            events: vec![added(2, vec![entry(2, "Giulia")]), forgotten(3, &[9])],
            after: vec![vec!["Giulia"], vec!["<forgotten>"]],
            forgotten: &[9],
        },
        Case {
            name: "no forget: nothing scrubbed",
            events: vec![added(2, vec![entry(1, "Mario")]), added(3, vec![])],
            after: vec![vec!["Mario"], vec![]],
            forgotten: &[],
        },
    ];
    for mut case in cases {
        let positions = seqs(&case.events);
        let ids = scrub_events(&mut case.events);
        let want: Vec<Vec<String>> = case
            .after
            .iter()
            .map(|e| e.iter().map(|v| v.to_string()).collect())
            .collect();
        assert_eq!(values(&case.events), want, "{}", case.name);
        let want_ids: HashSet<EntryId> = case.forgotten.iter().map(|n| id(*n)).collect();
        assert_eq!(ids, want_ids, "{}", case.name);
        // Positions untouched: the list stays contiguous.
        assert_eq!(seqs(&case.events), positions, "{}", case.name);
    }
}

#[test]
fn the_snapshot_loses_forgotten_entries_and_keeps_its_position() {
    let original = snapshot(7, vec![entry(1, "Mario"), entry(2, "Giulia")]);
    let bytes = encode_snapshot(&original).unwrap();
    let ids: HashSet<EntryId> = [id(1)].into();

    let mut in_memory = original.clone();
    assert_eq!(scrub_snapshot_entries(&mut in_memory, &ids), 1);
    assert_eq!(in_memory.entries, vec![entry(2, "Giulia")]);

    let scrubbed = scrub_snapshot(bytes.clone(), &ids).unwrap().unwrap();
    let parsed = decode_snapshot(&scrubbed).unwrap();
    assert_eq!(parsed, in_memory);
    assert_eq!((parsed.seq, parsed.generation), (7, 1));
    // Nothing to drop: no rewrite.
    let other: HashSet<EntryId> = [id(9)].into();
    assert_eq!(scrub_snapshot(bytes, &other).unwrap(), None);
    assert!(scrub_snapshot(b"{".to_vec(), &ids).is_err());
    // A JSON copy (an older poller's) is refused: a new snapshot replaces it.
    let json = serde_json::to_vec(&original).unwrap();
    assert!(scrub_snapshot(json, &ids).is_err());
}

#[test]
fn a_snapshot_that_cannot_be_read_is_refused_without_its_content() {
    let bad = br#"{"version":1,"generation":1,"seq":0,"retired_salt":"00","retired":[],"entries":[{"id":"zz","value":"secret-value"}]}"#;
    let ids: HashSet<EntryId> = [id(1)].into();
    let err = scrub_snapshot(bad.to_vec(), &ids).unwrap_err().to_string();
    assert!(!err.contains("secret-value"), "{err}");
}
