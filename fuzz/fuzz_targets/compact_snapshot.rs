//! The compact snapshot (`latet_core::wire::compact_snapshot`) from random
//! bytes: decoded, built into an index, scrubbed. Asserts: never panics; a
//! decoded snapshot encodes and decodes back to itself, and builds the same
//! index either way; a scrub leaves none of the forgotten ids and keeps the
//! rest; an error never quotes a value of the vault.
#![no_main]

use latet_core::snapshot::SnapshotIndex;
use latet_core::wire::{decode_snapshot, encode_snapshot, scrub_compact_snapshot, EntryId};
use latet_fuzz::MASK_VAULT;
use libfuzzer_sys::fuzz_target;
use std::collections::HashSet;

fn check_message(message: &str) {
    for (value, surrogate, _) in MASK_VAULT {
        assert!(!message.contains(value) && !message.contains(surrogate));
    }
}

fuzz_target!(|data: &[u8]| {
    // Random bytes rarely pass the magic: half the inputs get a valid head.
    let mut bytes = data.to_vec();
    if data.first().is_some_and(|b| b & 1 == 1) {
        bytes = [&b"LTSN\x01"[..], &data[1..]].concat();
    }
    let decoded = match decode_snapshot(&bytes) {
        Ok(snapshot) => snapshot,
        Err(err) => {
            check_message(&err.to_string());
            if let Err(err) = SnapshotIndex::from_compact(bytes.clone()) {
                check_message(&err.to_string());
            }
            return;
        }
    };
    let again = encode_snapshot(&decoded).expect("a decoded snapshot encodes");
    assert_eq!(decode_snapshot(&again).expect("it decodes"), decoded);
    match (
        SnapshotIndex::from_compact(bytes.clone()),
        SnapshotIndex::from_snapshot(decoded.clone()),
    ) {
        (Ok(a), Ok(b)) => assert_eq!((a.len(), a.seq()), (b.len(), b.seq())),
        (Err(a), Err(b)) => {
            check_message(&a.to_string());
            check_message(&b.to_string());
        }
        _ => panic!("the compact and JSON builds disagree"),
    }
    let forgotten: HashSet<EntryId> = decoded.entries.iter().step_by(2).map(|e| e.id).collect();
    match scrub_compact_snapshot(bytes, &forgotten).expect("a decoded snapshot scrubs") {
        None => assert!(forgotten.is_empty()),
        Some(scrubbed) => {
            let after = decode_snapshot(&scrubbed).expect("a scrubbed snapshot decodes");
            assert!(after.entries.iter().all(|e| !forgotten.contains(&e.id)));
            let kept: Vec<_> = decoded
                .entries
                .iter()
                .filter(|e| !forgotten.contains(&e.id))
                .cloned()
                .collect();
            assert_eq!(after.entries, kept);
            assert_eq!((after.seq, after.retired.len()), (decoded.seq, decoded.retired.len()));
        }
    }
});
