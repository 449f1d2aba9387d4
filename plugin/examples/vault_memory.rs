//! What a worker VM's linear memory grows by when it builds its index from
//! a compact snapshot, step by step, with the filter's allocator (the
//! zeroing one: it comes with this crate's wasm build). Wasm memory never
//! shrinks, so each figure is the VM's peak so far.
//!
//! ```sh
//! cargo build --release --target wasm32-wasip1 -p latet-filter --example vault_memory
//! node envoy/bench/run-wasi-dir.mjs DIR target/wasm32-wasip1/release/examples/vault_memory.wasm /data/snapshot.bin
//! ```
//! (`DIR` holds the compact snapshot, e.g. one fetched from the control
//! service with `accept: application/vnd.latet.snapshot.v1`.) Prints sizes
//! only, never a value.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use latet_core::detect::{DetectorConfig, Detectors};
use latet_core::mask::Masker;
use latet_core::snapshot::SnapshotIndex;

#[cfg(target_arch = "wasm32")]
fn memory_bytes() -> usize {
    core::arch::wasm32::memory_size(0) * 65536
}

#[cfg(not(target_arch = "wasm32"))]
fn memory_bytes() -> usize {
    0
}

fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: vault_memory SNAPSHOT");
    let detectors = Detectors::new(&DetectorConfig::default()).unwrap();
    detectors.warm_up();
    let masker = Masker::new(detectors.clone(), 8 << 20);
    let start = memory_bytes();
    let report = |step: &str| {
        let now = memory_bytes();
        println!(
            "{step:>34}: {:6.2} MiB (+{:6.2} MiB)",
            now as f64 / 1048576.0,
            (now - start) as f64 / 1048576.0
        );
    };
    report("start (detectors, masker)");
    let len = std::fs::metadata(&path).unwrap().len() as usize;
    let mut bytes = Vec::with_capacity(len);
    std::io::Read::read_to_end(&mut std::fs::File::open(&path).unwrap(), &mut bytes).unwrap();
    report("snapshot bytes held");
    let index = SnapshotIndex::from_compact(bytes).unwrap();
    report("index built");
    let heap = index.heap_bytes();
    println!(
        "{:>34}: {:6.2} MiB in the index's parts ({} entries)",
        "kept",
        heap as f64 / 1048576.0,
        index.len()
    );
    for (part, bytes) in index.heap_parts() {
        println!("{part:>34}: {:8.3} MiB", bytes as f64 / 1048576.0);
    }
    // A replacement: the old index dropped first (WorkerVault::rebuilt).
    drop(index);
    let bytes = std::fs::read(&path).unwrap();
    let again = SnapshotIndex::from_compact(bytes).unwrap();
    report("after a replacement");
    drop((again, masker));
}
