//! A synthetic vault of e-mail entries for the measurements run by hand
//! and the host-call bound: one generator, so their figures describe the
//! same vault, and the builds they compare.

use crate::gateway::filter_wasm;
use latet_core::kind::Kind;
use latet_core::wire::{encode_snapshot, Entry, EntryId, Snapshot, WIRE_VERSION};
use std::path::PathBuf;

/// The `i`-th value of the vault of `round` (a replacement snapshot takes
/// another round, so its values differ).
pub fn value(i: usize, round: u8) -> String {
    format!("person{i}.r{round}.surname@company{i}-trading.example")
}

/// The surrogate of [`value`]`(i, round)`.
pub fn surrogate(i: usize, round: u8) -> String {
    format!("alias{i}.r{round}.other@firm{i}-holdings.example")
}

/// The id of entry `i` of `round`.
pub fn entry_id(i: usize, round: u8) -> EntryId {
    let mut id = [0u8; 16];
    id[..8].copy_from_slice(&(i as u64).to_le_bytes());
    id[8] = round;
    EntryId(id)
}

/// A compact snapshot of the first `count` entries of `round` at `seq`,
/// and the raw bytes of their values and surrogates.
pub fn compact_snapshot(count: usize, seq: u64, round: u8) -> Result<(Vec<u8>, usize), String> {
    let mut raw = 0;
    let entries: Vec<Entry> = (0..count)
        .map(|i| {
            let (value, surrogate) = (value(i, round), surrogate(i, round));
            raw += value.len() + surrogate.len();
            Entry {
                id: entry_id(i, round),
                value,
                surrogate,
                kind: Kind::Email,
                generation: 1,
            }
        })
        .collect();
    let snapshot = Snapshot {
        version: WIRE_VERSION,
        generation: 1,
        seq,
        retired_salt: "00112233445566778899aabbccddeeff".to_string(),
        retired: Vec::new(),
        entries,
    };
    let bytes = encode_snapshot(&snapshot).map_err(|e| e.to_string())?;
    Ok((bytes, raw))
}

/// The builds a measurement compares: the current filter and, when
/// `LATET_BASELINE_WASM` names another build, that one.
pub fn builds_to_measure() -> Result<Vec<(&'static str, PathBuf)>, String> {
    let mut builds = vec![("current", filter_wasm()?)];
    if let Some(path) = std::env::var_os("LATET_BASELINE_WASM") {
        builds.push(("baseline", PathBuf::from(path)));
    }
    Ok(builds)
}
