//! The Latet engine alone: masking whole requests and restoring whole answers
//! on synthetic agent traffic (the generator of `core/benches/engine.rs`),
//! against 10k- and 100k-entry vaults. The same source runs natively and as
//! `wasm32-wasip1` in V8 (node's `wasi` module, `run-wasi.mjs`), so the two
//! runs measure the same work on the same inputs.
//!
//! Prints one JSON object per line: `{"kind": "vault", ...}` per vault and
//! `{"kind": "case", ...}` per request size: for each figure the median run
//! (`*_mbps`), the fastest (`*_best_mbps`) and the share of runs over twice
//! the fastest (`*_slow_share`, see [`Timing`]). Asserts nothing about time.
//!
//! Environment: `LATET_BENCH_MS` (time per figure, default 300),
//! `LATET_BENCH_VAULTS` (comma-separated entry counts, default `10000,100000`).

use latet_core::detect::{DetectorConfig, Detectors};
use latet_core::mask::{MaskOptions, MaskOutcome, Masker};
use latet_core::provider;
use latet_core::restore::restore_body;
use latet_core::snapshot::SnapshotIndex;
use serde_json::json;
use std::hint::black_box;
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[path = "../../../../core/benches/support/synthetic.rs"]
mod synthetic;
use synthetic::{answer_of, chat_request, chat_request_variant, vault};

/// Request sizes and how many vault values each holds (the 2/20/200 KB).
const CASES: &[(usize, usize)] = &[(2_000, 4), (20_000, 40), (200_000, 400)];

/// The filter's default memo of masked texts per worker (plugin README).
const FILTER_MEMO_BYTES: usize = 8 << 20;

/// How many distinct variants of a request of `bytes` bytes are cycled
/// through for the cold-memo figure: half again more than the memo holds, so
/// every text misses.
fn variants_for(bytes: usize) -> usize {
    (FILTER_MEMO_BYTES * 3 / 2 / bytes.max(1)).max(8) + 1
}

/// One figure's runs: the median (what the tables show) and the fastest.
///
/// On a shared machine a run of a few milliseconds (200 KB) is often
/// descheduled part-way and its wall time then includes the wait for a CPU;
/// runs of tens of microseconds (2/20 KB) almost never are. The median of
/// the long runs can then fall by 5–10× under load while the engine's work
/// per byte is unchanged, so each figure also carries the fastest run and
/// the share of runs that took over twice as long (`slow_share`): a high
/// share means the median measured the scheduler, not the engine.
struct Timing {
    median: Duration,
    best: Duration,
    slow_share: f64,
}

/// Runs `f` for about `budget` (at least 3 runs).
fn time(budget: Duration, mut f: impl FnMut()) -> Timing {
    f();
    let mut runs = Vec::new();
    let start = Instant::now();
    while start.elapsed() < budget || runs.len() < 3 {
        let t = Instant::now();
        f();
        runs.push(t.elapsed());
    }
    runs.sort();
    let best = runs[0];
    let slow = runs.iter().filter(|d| **d > best * 2).count();
    Timing {
        median: runs[runs.len() / 2],
        best,
        slow_share: slow as f64 / runs.len() as f64,
    }
}

fn mbps(bytes: usize, d: Duration) -> f64 {
    bytes as f64 / d.as_secs_f64().max(1e-9) / 1e6
}

/// Adds `<name>_mbps` (median), `<name>_best_mbps` and `<name>_slow_share`.
fn put(row: &mut serde_json::Map<String, serde_json::Value>, name: &str, bytes: usize, t: &Timing) {
    row.insert(format!("{name}_mbps"), json!(mbps(bytes, t.median)));
    row.insert(format!("{name}_best_mbps"), json!(mbps(bytes, t.best)));
    row.insert(format!("{name}_slow_share"), json!(t.slow_share));
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn vault_sizes() -> Vec<usize> {
    let list = std::env::var("LATET_BENCH_VAULTS").unwrap_or_else(|_| "10000,100000".to_string());
    list.split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect()
}

fn main() -> ExitCode {
    let runtime = if cfg!(target_arch = "wasm32") {
        "wasm32-wasip1 (V8)"
    } else {
        "native"
    };
    let budget = Duration::from_millis(env_number("LATET_BENCH_MS", 300));
    for entries in vault_sizes() {
        let (snapshot, pairs) = vault(entries);
        let raw_bytes: usize = pairs.iter().map(|(v, s)| v.len() + s.len()).sum();
        let t = Instant::now();
        let index = match SnapshotIndex::from_snapshot(snapshot) {
            Ok(index) => index,
            Err(e) => {
                eprintln!("snapshot: {e}");
                return ExitCode::FAILURE;
            }
        };
        let build = t.elapsed();
        println!(
            "{}",
            json!({
                "kind": "vault", "runtime": runtime, "entries": entries,
                "index_build_ms": build.as_secs_f64() * 1e3,
                "index_heap_bytes": index.heap_bytes(), "raw_bytes": raw_bytes,
                "index_over_raw": index.heap_bytes() as f64 / raw_bytes as f64,
            })
        );
        for &(bytes, values) in CASES {
            let request = chat_request(&pairs, bytes, values);
            let answer = answer_of(&request, &pairs);
            let mut found = Vec::new();
            let d_find = time(budget, || {
                found.clear();
                index.find_values(black_box(&request), &mut found);
            });
            let mut masker = match Detectors::new(&DetectorConfig::default()) {
                Ok(d) => Masker::new(d, 0),
                Err(e) => {
                    eprintln!("detectors: {e}");
                    return ExitCode::FAILURE;
                }
            };
            let mut masked = true;
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
                    _ => masked = false,
                }
            });
            // Masks `body` (its outcome: masked or asked for entries).
            let mask_once = |masker: &mut Masker, body: &str| {
                masker
                    .mask_request(
                        &index,
                        provider::OPENAI_CHAT,
                        body.as_bytes(),
                        MaskOptions::default(),
                    )
                    .is_ok()
            };
            // Names' cost as a ratio in one run: the same with them off.
            let names_off = DetectorConfig {
                person: false,
                ..DetectorConfig::default()
            };
            let mut plain_masker = match Detectors::new(&names_off) {
                Ok(d) => Masker::new(d, 0),
                Err(e) => {
                    eprintln!("detectors: {e}");
                    return ExitCode::FAILURE;
                }
            };
            let d_mask_plain = time(budget, || {
                black_box(mask_once(&mut plain_masker, &request));
            });
            // The filter's conditions: an 8 MiB memo per worker. Cold: every
            // request new (the bench's `unique` mode); warm: one resent.
            let variants: Vec<String> = (0..variants_for(bytes))
                .map(|v| chat_request_variant(&pairs, bytes, values, Some(v)))
                .collect();
            let mut memo_masker = match Detectors::new(&DetectorConfig::default()) {
                Ok(d) => Masker::new(d, FILTER_MEMO_BYTES),
                Err(e) => {
                    eprintln!("detectors: {e}");
                    return ExitCode::FAILURE;
                }
            };
            let mut next = 0;
            let d_memo_cold = time(budget, || {
                let body = &variants[next % variants.len()];
                next += 1;
                black_box(mask_once(&mut memo_masker, body));
            });
            let d_memo_warm = time(budget, || {
                black_box(mask_once(&mut memo_masker, &request));
            });
            let d_restore = time(budget, || {
                black_box(restore_body(&index, black_box(answer.as_bytes())));
            });
            let mut row = serde_json::Map::new();
            for (key, value) in [
                ("kind", json!("case")),
                ("runtime", json!(runtime)),
                ("entries", json!(entries)),
                ("request_bytes", json!(request.len())),
                ("values", json!(values)),
                ("found", json!(found.len())),
                ("masked", json!(masked)),
            ] {
                row.insert(key.to_string(), value);
            }
            put(&mut row, "find", request.len(), &d_find);
            put(&mut row, "mask", request.len(), &d_mask);
            put(&mut row, "mask_names_off", request.len(), &d_mask_plain);
            put(&mut row, "mask_memo_cold", request.len(), &d_memo_cold);
            put(&mut row, "mask_memo_warm", request.len(), &d_memo_warm);
            put(&mut row, "restore", answer.len(), &d_restore);
            println!("{}", serde_json::Value::Object(row));
        }
    }
    ExitCode::SUCCESS
}
