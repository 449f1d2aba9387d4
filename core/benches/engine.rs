//! `cargo bench -p latet-core`: what the engine costs, in MB/s and bytes per
//! entry, on synthetic agent requests against 10k- and 100k-entry vaults.
//! Prints figures; asserts nothing about time (machines are shared).
//!
//! Measures: finding vault values (our first-token matcher against an
//! aho-corasick automaton over the same values, the measurement that chose
//! the data structure), masking whole requests, restoring whole answers and
//! SSE streams, and the index's memory per entry.

use latet_core::detect::{DetectorConfig, Detectors};
use latet_core::mask::{MaskOptions, MaskOutcome, Masker};
use latet_core::provider;
use latet_core::restore::{restore_body, SseRestorer};
use latet_core::snapshot::SnapshotIndex;
use std::hint::black_box;
use std::time::{Duration, Instant};

#[path = "support/synthetic.rs"]
mod synthetic;
use synthetic::{answer_of, chat_request, vault};

fn sse_of(answer_text: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let chars: Vec<char> = answer_text.chars().collect();
    for chunk in chars.chunks(3) {
        let piece: String = chunk.iter().collect();
        let event = serde_json::json!({"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":piece},"finish_reason":null}]});
        out.extend_from_slice(format!("data: {event}\n\n").as_bytes());
    }
    out.extend_from_slice(b"data: [DONE]\n\n");
    out
}

/// Runs `f` repeatedly for about `budget`, returns the median time per run
/// (the best would hide a cost paid on most runs, such as fresh pages).
fn time(budget: Duration, mut f: impl FnMut()) -> Duration {
    f();
    let mut runs = Vec::new();
    let start = Instant::now();
    while start.elapsed() < budget || runs.len() < 3 {
        let t = Instant::now();
        f();
        runs.push(t.elapsed());
    }
    runs.sort();
    runs[runs.len() / 2]
}

fn mbps(bytes: usize, d: Duration) -> f64 {
    bytes as f64 / d.as_secs_f64() / 1e6
}

fn main() {
    let budget = Duration::from_millis(
        std::env::var("LATET_BENCH_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(700),
    );
    println!("latet-core engine bench (median of runs over {budget:?} each)");
    for &entries in &[10_000usize, 100_000] {
        let (snapshot, pairs) = vault(entries);
        let raw_bytes: usize = pairs.iter().map(|(v, s)| v.len() + s.len()).sum();
        let t = Instant::now();
        let index = match SnapshotIndex::from_snapshot(snapshot) {
            Ok(index) => index,
            Err(e) => return eprintln!("snapshot: {e}"),
        };
        let load = t.elapsed();
        println!(
            "\nvault {entries} entries: index built in {:.1} ms; index heap {:.1} B/entry ({:.2}x the raw value+surrogate bytes)",
            load.as_secs_f64() * 1e3,
            index.heap_bytes() as f64 / entries as f64,
            index.heap_bytes() as f64 / raw_bytes as f64
        );
        let automaton = aho_corasick::AhoCorasick::builder()
            .match_kind(aho_corasick::MatchKind::LeftmostLongest)
            .build(pairs.iter().map(|p| p.0.as_str()));
        let automaton = match automaton {
            Ok(a) => a,
            Err(e) => return eprintln!("aho-corasick: {e}"),
        };
        println!(
            "  aho-corasick over the same values: {:.1} B/entry",
            automaton.memory_usage() as f64 / entries as f64
        );
        for &(bytes, values) in &[(20_000usize, 40usize), (200_000, 400)] {
            let request = chat_request(&pairs, bytes, values);
            let answer = answer_of(&request, &pairs);
            let len = request.len();
            let mut found = Vec::new();
            let d_find = time(budget, || {
                found.clear();
                index.find_values(black_box(&request), &mut found);
            });
            let d_ac = time(budget, || {
                black_box(automaton.find_iter(black_box(&request)).count());
            });
            let mut masker = match Detectors::new(&DetectorConfig::default()) {
                Ok(d) => Masker::new(d, 0),
                Err(e) => return eprintln!("detectors: {e}"),
            };
            let mut masked_ok = true;
            let d_mask = time(budget, || {
                match masker.mask_request(
                    &index,
                    provider::OPENAI_CHAT,
                    request.as_bytes(),
                    MaskOptions::default(),
                ) {
                    Ok(MaskOutcome::Masked { body, .. }) => {
                        black_box(body);
                    }
                    _ => masked_ok = false,
                }
            });
            // Masks the request (its outcome: masked or asked for entries).
            let mask_once = |masker: &mut Masker| {
                masker
                    .mask_request(
                        &index,
                        provider::OPENAI_CHAT,
                        request.as_bytes(),
                        MaskOptions::default(),
                    )
                    .is_ok()
            };
            // The same work with the person detector off: names' cost, as a
            // ratio in one run.
            let names_off = DetectorConfig {
                person: false,
                ..DetectorConfig::default()
            };
            let mut plain_masker = match Detectors::new(&names_off) {
                Ok(d) => Masker::new(d, 0),
                Err(e) => return eprintln!("detectors: {e}"),
            };
            let d_mask_plain = time(budget, || {
                black_box(mask_once(&mut plain_masker));
            });
            let mut memo_masker = match Detectors::new(&DetectorConfig::default()) {
                Ok(d) => Masker::new(d, 64 << 20),
                Err(e) => return eprintln!("detectors: {e}"),
            };
            let d_memo = time(budget, || {
                black_box(mask_once(&mut memo_masker));
            });
            let d_restore = time(budget, || {
                black_box(restore_body(&index, answer.as_bytes()));
            });
            let stream = sse_of(&answer);
            let d_sse = time(budget, || {
                let mut restorer = SseRestorer::new();
                let mut out = Vec::with_capacity(stream.len());
                for chunk in stream.chunks(64) {
                    restorer.push(&index, chunk, &mut out);
                }
                restorer.finish(&index, &mut out);
                black_box(out);
            });
            println!(
                "  request {:>4} KB, {:>3} values: find values {:>7.1} MB/s (aho-corasick {:>7.1} MB/s, {} found) | mask {:>6.1} MB/s{} (names off {:>6.1}) | mask, memo warm {:>6.1} MB/s | restore {:>6.1} MB/s | SSE restore {:>6.1} MB/s ({} KB stream)",
                len / 1000,
                values,
                mbps(len, d_find),
                mbps(len, d_ac),
                found.len(),
                mbps(len, d_mask),
                if masked_ok { "" } else { " (NOT MASKED: new values?)" },
                mbps(len, d_mask_plain),
                mbps(len, d_memo),
                mbps(answer.len(), d_restore),
                mbps(stream.len(), d_sse),
                stream.len() / 1000
            );
        }
    }
}
