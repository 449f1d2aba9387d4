//! `cargo run --release -p latet-core --example snapshot_format`: the
//! snapshot's size as JSON and in the compact form, and what a worker pays
//! to build its index from each: time (median) and peak heap, counted by a
//! wrapping allocator from the moment the worker holds the shared bytes
//! (wasm memory keeps its peak, so the peak is what Envoy keeps per VM).
//! The compact path starts from what a worker joins from the shared parts:
//! the fingerprinted form, ids as 8-byte fingerprints.
//! Prints figures; asserts nothing about time (machines are shared).

#![allow(clippy::expect_used)]

use latet_core::snapshot::SnapshotIndex;
use latet_core::wire::snapshot_parts::{join_fingerprinted, SnapshotSplit};
use latet_core::wire::{encode_snapshot, parse_snapshot};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

#[path = "../benches/support/synthetic.rs"]
#[allow(dead_code)]
mod synthetic;

/// The system allocator, counting live and peak bytes.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let now = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(now, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let now = if new_size >= layout.size() {
            LIVE.fetch_add(new_size - layout.size(), Ordering::Relaxed) + new_size - layout.size()
        } else {
            LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed) - (layout.size() - new_size)
        };
        // A moving realloc holds both blocks for a moment.
        PEAK.fetch_max(now + layout.size().min(new_size), Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Peak heap above what was live before `f`, with `f`'s input counted
/// (the shared bytes the worker holds when it starts), and what stays.
fn peak_of(input: Vec<u8>, f: impl FnOnce(Vec<u8>) -> SnapshotIndex) -> (usize, usize) {
    let before = LIVE.load(Ordering::Relaxed) - input.capacity();
    PEAK.store(LIVE.load(Ordering::Relaxed), Ordering::Relaxed);
    let index = f(input);
    let peak = PEAK.load(Ordering::Relaxed) - before;
    let kept = LIVE.load(Ordering::Relaxed) - before;
    drop(index);
    (peak, kept)
}

fn median(runs: usize, mut f: impl FnMut() -> Duration) -> Duration {
    let mut times: Vec<Duration> = (0..runs).map(|_| f()).collect();
    times.sort();
    times[times.len() / 2]
}

fn main() {
    println!(
        "snapshot format: JSON vs compact (median of 5 builds; peak heap from the shared bytes on)"
    );
    for &entries in &[10_000usize, 100_000] {
        let (snapshot, _) = synthetic::vault(entries);
        let json = serde_json::to_vec(&snapshot).expect("JSON");
        let wire = encode_snapshot(&snapshot).expect("compact");
        // What a worker holds: the shared parts joined in the fingerprinted
        // form (ids as 8-byte fingerprints), which its index keeps.
        let split = SnapshotSplit::new(&wire, 256 * 1024, 1).expect("split");
        let parts: Vec<Vec<u8>> = (0..split.len()).map(|i| split.part(&wire, i)).collect();
        let compact = join_fingerprinted(&split.manifest, |i| parts.get(i).cloned()).expect("join");
        let raw: usize = snapshot
            .entries
            .iter()
            .map(|e| e.value.len() + e.surrogate.len())
            .sum();
        drop(snapshot);
        let from_json = |bytes: Vec<u8>| {
            let s = parse_snapshot(&bytes).expect("parse");
            drop(bytes);
            SnapshotIndex::from_snapshot(s).expect("index")
        };
        let from_compact = |bytes: Vec<u8>| SnapshotIndex::from_compact(bytes).expect("index");
        let json_time = median(5, || {
            let input = json.clone();
            let t = Instant::now();
            let index = from_json(input);
            let d = t.elapsed();
            drop(index);
            d
        });
        let compact_time = median(5, || {
            let input = compact.clone();
            let t = Instant::now();
            let index = from_compact(input);
            let d = t.elapsed();
            drop(index);
            d
        });
        let (json_peak, json_kept) = peak_of(json.clone(), from_json);
        let (compact_peak, compact_kept) = peak_of(compact.clone(), from_compact);
        let mb = |b: usize| b as f64 / 1e6;
        println!("\n{entries} entries");
        println!(
            "  bytes:       JSON {:.2} MB   compact {:.2} MB   ({:.0}%)   joined by a worker {:.2} MB",
            mb(json.len()),
            mb(wire.len()),
            100.0 * wire.len() as f64 / json.len() as f64,
            mb(compact.len())
        );
        println!(
            "  index build: JSON {:.1} ms    compact {:.1} ms",
            json_time.as_secs_f64() * 1e3,
            compact_time.as_secs_f64() * 1e3
        );
        println!(
            "  peak heap:   JSON {:.2} MB   compact {:.2} MB   (index kept: {:.2} MB / {:.2} MB)",
            mb(json_peak),
            mb(compact_peak),
            mb(json_kept),
            mb(compact_kept)
        );
        println!(
            "  raw values + surrogates {:.3} MB: compact peak {:.2}x, kept {:.2}x",
            mb(raw),
            compact_peak as f64 / raw as f64,
            compact_kept as f64 / raw as f64
        );
        let index = from_compact(compact.clone());
        println!("  index from compact, by part (heap_parts):");
        for (part, bytes) in index.heap_parts() {
            println!(
                "    {part:<28} {:>8.3} MB  {:>5.1} B/entry",
                mb(bytes),
                bytes as f64 / entries as f64
            );
        }
    }
}
