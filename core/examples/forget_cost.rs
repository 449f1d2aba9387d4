//! `cargo run --release -p latet-core --example forget_cost`: what a
//! worker pays to apply forget events at 10k and 100k entries: one
//! one-id event, and a storm of one-id events caught up at once, applied
//! one by one (`apply_event`, one pass over the slots each) and as one
//! run (`apply_events`, one pass for the run). Fastest of 5 (each on a
//! fresh index). Prints figures; asserts nothing about time (machines are
//! shared), only that both ways forget the same entries.

#![allow(clippy::expect_used)]

use latet_core::keyed_hash::retired_hash;
use latet_core::snapshot::SnapshotIndex;
use latet_core::text::lead_bucket;
use latet_core::wire::{Event, EventBody, RetiredHash, RetiredSurrogate, Snapshot};
use std::time::{Duration, Instant};

#[path = "../benches/support/synthetic.rs"]
#[allow(dead_code)]
mod synthetic;

/// One one-id forget event per entry of `picked`, numbered after `seq`.
fn forget_events(snapshot: &Snapshot, picked: &[usize]) -> Vec<Event> {
    let salt = hex(&snapshot.retired_salt);
    picked
        .iter()
        .enumerate()
        .map(|(k, &i)| {
            let entry = &snapshot.entries[i];
            Event {
                seq: snapshot.seq + 1 + k as u64,
                body: EventBody::Forgotten {
                    ids: vec![entry.id],
                    retired: vec![RetiredSurrogate {
                        hash: RetiredHash(retired_hash(&salt, &entry.surrogate)),
                        lead: lead_bucket(&entry.surrogate),
                    }],
                    generation: snapshot.generation + 1 + k as u64,
                },
            }
        })
        .collect()
}

fn hex(text: &str) -> Vec<u8> {
    (0..text.len() / 2)
        .map(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16).expect("hex salt"))
        .collect()
}

/// Fastest of 5 runs of `apply` on a fresh index each; the index after.
fn fastest(snapshot: &Snapshot, apply: impl Fn(&mut SnapshotIndex)) -> (Duration, SnapshotIndex) {
    let mut best = Duration::MAX;
    let mut last = None;
    for _ in 0..5 {
        let mut index = SnapshotIndex::from_snapshot(snapshot.clone()).expect("index");
        let start = Instant::now();
        apply(&mut index);
        best = best.min(start.elapsed());
        last = Some(index);
    }
    (best, last.expect("five runs"))
}

fn main() {
    println!("forget cost: fastest of 5, native");
    println!("| entries | events | one by one | as one run | ratio |");
    println!("|---|---|---|---|---|");
    for entries in [10_000, 100_000] {
        let (snapshot, _) = synthetic::vault(entries);
        for events in [1, 100, 1000] {
            let picked: Vec<usize> = (0..events).map(|k| (k * 7919) % entries).collect();
            let list = forget_events(&snapshot, &picked);
            let (one_by_one, a) = fastest(&snapshot, |index| {
                for event in &list {
                    index.apply_event(event).expect("applied");
                }
            });
            let (together, b) = fastest(&snapshot, |index| {
                let run = index.apply_events(&list);
                assert!(run.refused.is_none() && run.events == list.len());
            });
            assert_eq!(a.len(), b.len());
            assert_eq!(a.len(), entries - events, "each event forgets its entry");
            println!(
                "| {entries} | {events} | {:.2} ms | {:.2} ms | {:.1}x |",
                one_by_one.as_secs_f64() * 1e3,
                together.as_secs_f64() * 1e3,
                one_by_one.as_secs_f64() / together.as_secs_f64().max(1e-9)
            );
        }
    }
}
