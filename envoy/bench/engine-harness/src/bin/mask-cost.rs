//! Names' cost on the whole masking path: the engine harness's requests
//! masked with names on and off, interleaved round by round (MB/s: the
//! median over rounds of each round's fastest run), per vault and request
//! size. `on` as second argument: names
//! on only (for a profile).
//!
//! ```text
//! mask-cost [SECONDS_PER_CASE [on]]   (LATET_BENCH_VAULTS as the harness;
//!                                     LATET_BENCH_SIZE=200000: one size)
//! ```

use latet_core::detect::{DetectorConfig, Detectors};
use latet_core::mask::{MaskOptions, Masker};
use latet_core::provider;
use latet_core::snapshot::SnapshotIndex;
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[path = "../../../../../core/benches/support/synthetic.rs"]
#[allow(dead_code)]
mod synthetic;
use synthetic::{chat_request, vault};

const CASES: &[(usize, usize)] = &[(2_000, 4), (20_000, 40), (200_000, 400)];

/// MB/s of one round's fastest run: the request masked for about 50 ms
/// (at least 3 times).
fn round(masker: &mut Masker, index: &SnapshotIndex, request: &str) -> f64 {
    let mut runs = Vec::new();
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(50) || runs.len() < 3 {
        let t = Instant::now();
        let ok = masker
            .mask_request(
                index,
                provider::OPENAI_CHAT,
                request.as_bytes(),
                MaskOptions::default(),
            )
            .is_ok();
        std::hint::black_box(ok);
        runs.push(t.elapsed());
    }
    // The fastest run: on a shared machine a run of milliseconds (200 KB)
    // is often descheduled part-way, and a median then measures the wait.
    runs.sort();
    request.len() as f64 / runs[0].as_secs_f64() / 1e6
}

fn main() -> ExitCode {
    let seconds: f64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.5);
    let only_on = std::env::args().nth(2).as_deref() == Some("on");
    let vaults = std::env::var("LATET_BENCH_VAULTS").unwrap_or_else(|_| "10000".into());
    for entries in vaults.split(',').filter_map(|s| s.trim().parse::<usize>().ok()) {
        let (snapshot, pairs) = vault(entries);
        let Ok(index) = SnapshotIndex::from_snapshot(snapshot) else {
            eprintln!("snapshot");
            return ExitCode::FAILURE;
        };
        let names_off = DetectorConfig {
            person: false,
            ..DetectorConfig::default()
        };
        let (Ok(on), Ok(off)) = (
            Detectors::new(&DetectorConfig::default()),
            Detectors::new(&names_off),
        ) else {
            eprintln!("detectors");
            return ExitCode::FAILURE;
        };
        on.warm_up();
        let only_size: Option<usize> = std::env::var("LATET_BENCH_SIZE")
            .ok()
            .and_then(|s| s.parse().ok());
        for &(bytes, values) in CASES {
            if only_size.is_some_and(|s| s != bytes) {
                continue;
            }
            // New maskers per case, as the harness makes them.
            let (mut on, mut off) = (Masker::new(on.clone(), 0), Masker::new(off.clone(), 0));
            let request = chat_request(&pairs, bytes, values);
            let (mut with, mut without) = (Vec::new(), Vec::new());
            let start = Instant::now();
            while start.elapsed().as_secs_f64() < seconds {
                with.push(round(&mut on, &index, &request));
                if !only_on {
                    without.push(round(&mut off, &index, &request));
                }
            }
            with.sort_by(f64::total_cmp);
            without.sort_by(f64::total_cmp);
            let w = with[with.len() / 2];
            let o = without.get(without.len() / 2).copied().unwrap_or(f64::NAN);
            println!(
                "vault {entries:>6} {bytes:>7} B: names on {w:7.1} MB/s, off {o:7.1} MB/s, ratio {:.3}",
                w / o
            );
        }
    }
    ExitCode::SUCCESS
}
