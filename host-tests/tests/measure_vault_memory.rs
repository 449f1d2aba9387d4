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

use host_tests::gateway::{config, CallKind, Gateway, Route};
use host_tests::synthetic_vault::{builds_to_measure, compact_snapshot};
use host_tests::CalloutResponse;
use std::net::SocketAddr;
use std::path::Path;

/// (sync, worker) memory after the first snapshot and after the second.
fn run(wasm: &Path, count: usize) -> [(usize, usize); 2] {
    let nowhere = SocketAddr::from(([127, 0, 0, 1], 9));
    let gw = Gateway::start_with(wasm, &config("tok-measure", ""), 1, nowhere).unwrap();
    let worker = gw.worker(1);
    let (first, _) = compact_snapshot(count, 1, 1).unwrap();
    gw.route(CallKind::Snapshot, Route::Scripted(first));
    gw.host.advance(1000).unwrap();
    gw.host.advance(1000).unwrap();
    assert_eq!(gw.published_seq(), Some(1), "{}", gw.host.dump());
    let after_first = (gw.sync.memory_size(), worker.memory_size());
    // The feed says a snapshot is required; the next one replaces it.
    let (second, _) = compact_snapshot(count, 100, 2).unwrap();
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
    let builds = builds_to_measure().unwrap();
    for count in [10_000, 100_000] {
        let (compact, raw) = compact_snapshot(count, 1, 1).unwrap();
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
