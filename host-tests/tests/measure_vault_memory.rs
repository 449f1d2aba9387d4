//! Measurement, run by hand: the linear memory of the sync VM and of a
//! worker after a 10k and a 100k entry snapshot, then after a second
//! (replacement) snapshot of the same size, on the current build and, when
//! `LATET_BASELINE_WASM` names another build, on that one too. Wasm memory
//! never shrinks, so each figure is the VM's peak so far.
//!
//! ```sh
//! LATET_BASELINE_WASM=/path/to/old.opt.wasm \
//!   cargo test -p host-tests --test measure_vault_memory -- --ignored --nocapture
//! ```

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use host_tests::gateway::{config, filter_wasm, CallKind, Gateway, Route};
use host_tests::CalloutResponse;
use latet_core::kind::Kind;
use latet_core::wire::{encode_snapshot, Entry, EntryId, Snapshot, WIRE_VERSION};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

/// A compact snapshot of `count` e-mail entries at `seq`; `round` makes
/// the values of a replacement differ. Also the raw value + surrogate bytes.
fn snapshot(count: usize, seq: u64, round: u8) -> (Vec<u8>, usize) {
    let mut raw = 0;
    let entries: Vec<Entry> = (0..count)
        .map(|i| {
            let value = format!("person{i}.r{round}.surname@company{i}-trading.example");
            let surrogate = format!("alias{i}.r{round}.other@firm{i}-holdings.example");
            raw += value.len() + surrogate.len();
            let mut id = [0u8; 16];
            id[..8].copy_from_slice(&(i as u64).to_le_bytes());
            id[8] = round;
            Entry {
                id: EntryId(id),
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
    (encode_snapshot(&snapshot).unwrap(), raw)
}

/// (sync, worker) memory after the first snapshot and after the second.
fn run(wasm: &Path, count: usize) -> [(usize, usize); 2] {
    let nowhere = SocketAddr::from(([127, 0, 0, 1], 9));
    let gw = Gateway::start_with(wasm, &config("tok-measure", ""), 1, nowhere).unwrap();
    let worker = gw.worker(1);
    let (first, _) = snapshot(count, 1, 1);
    gw.route(CallKind::Snapshot, Route::Scripted(first));
    gw.host.advance(1000).unwrap();
    gw.host.advance(1000).unwrap();
    assert_eq!(gw.published_seq(), Some(1), "{}", gw.host.dump());
    let after_first = (gw.sync.memory_size(), worker.memory_size());
    // The feed says a snapshot is required; the next one replaces it.
    let (second, _) = snapshot(count, 100, 2);
    gw.route(CallKind::Snapshot, Route::Scripted(second));
    let required = br#"{"status":"snapshot_required","version":1,"oldest":50,"head":100}"#;
    for call in gw.pending(CallKind::Feed) {
        gw.host
            .answer_callout(call.token, CalloutResponse::new(200, required.to_vec()))
            .unwrap();
    }
    gw.host.advance(1000).unwrap();
    gw.host.advance(1000).unwrap();
    assert_eq!(gw.published_seq(), Some(100), "{}", gw.host.dump());
    assert_eq!(
        gw.counter_of(worker, "latet_snapshot_loads_total"),
        2,
        "{}",
        gw.host.dump()
    );
    [after_first, (gw.sync.memory_size(), worker.memory_size())]
}

fn mb(bytes: usize) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

#[test]
#[ignore]
fn vault_memory_of_the_sync_vm_and_a_worker() {
    let mut builds: Vec<(&str, PathBuf)> = vec![("current", filter_wasm().unwrap())];
    if let Ok(path) = std::env::var("LATET_BASELINE_WASM") {
        builds.push(("baseline", PathBuf::from(path)));
    }
    for count in [10_000, 100_000] {
        let (compact, raw) = snapshot(count, 1, 1);
        println!(
            "{count} entries: raw values + surrogates {}, compact snapshot {}",
            mb(raw),
            mb(compact.len())
        );
        for (name, wasm) in &builds {
            let [(sync1, worker1), (sync2, worker2)] = run(wasm, count);
            println!(
                "  {name}: sync {} then {} after the replacement; worker {} then {} \
                 ({:.1}x then {:.1}x raw)",
                mb(sync1),
                mb(sync2),
                mb(worker1),
                mb(worker2),
                worker1 as f64 / raw as f64,
                worker2 as f64 / raw as f64,
            );
        }
    }
}
