//! A digest of what the masker gives: masked bodies, the new values asked
//! for, the entries used and the counts, on the engine bench's synthetic
//! requests (vault values, names on and off, the memo cold and warm) and on
//! a corpus directory's texts sent as chat messages (many detector
//! findings: new values, and placeholders in redact mode). Prints hashes
//! only, never a text or a value. A change meant to leave masking as it is
//! (a faster path) must leave every line the same.
//!
//! ```text
//! cargo run --release -p latet-core --example mask_digest [-- DIR...]
//! ```
//!
//! With `LATET_PROFILE=names_off|memo_warm` it masks the 200 KB synthetic
//! request against a 10k vault in a loop for `LATET_PROFILE_SECS` seconds
//! (default 10) instead: a target for `perf record`.

use latet_core::detect::{DetectorConfig, Detectors};
use latet_core::mask::{MaskOptions, MaskOutcome, Masker};
use latet_core::provider;
use latet_core::snapshot::SnapshotIndex;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[path = "support/corpus_files.rs"]
mod corpus_files;
#[path = "../benches/support/synthetic.rs"]
#[allow(dead_code)]
mod synthetic;

/// Hashes one outcome (an error by its message, which names no value).
fn digest(hasher: &mut DefaultHasher, outcome: &Result<MaskOutcome, latet_core::CoreError>) {
    match outcome {
        Ok(MaskOutcome::Masked { body, stats, used }) => {
            0u8.hash(hasher);
            body.hash(hasher);
            (
                stats.texts,
                stats.values_masked,
                stats.redacted,
                stats.memo_hits,
            )
                .hash(hasher);
            for (slot, id) in used {
                slot.hash(hasher);
                id.0.hash(hasher);
            }
        }
        Ok(MaskOutcome::NeedEntries { values }) => {
            1u8.hash(hasher);
            for v in values {
                v.kind.as_str().hash(hasher);
                v.value.hash(hasher);
            }
        }
        Err(e) => {
            2u8.hash(hasher);
            e.to_string().hash(hasher);
        }
    }
}

fn masker(person: bool, memo: usize) -> Option<Masker> {
    let config = DetectorConfig {
        person,
        ..DetectorConfig::default()
    };
    Detectors::new(&config).ok().map(|d| Masker::new(d, memo))
}

fn mask(
    masker: &mut Masker,
    index: &SnapshotIndex,
    body: &str,
    redact: bool,
) -> Result<MaskOutcome, latet_core::CoreError> {
    let options = MaskOptions { redact_new: redact };
    masker.mask_request(index, provider::OPENAI_CHAT, body.as_bytes(), options)
}

fn profile(what: &str) -> ExitCode {
    let secs = std::env::var("LATET_PROFILE_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    let (snapshot, pairs) = synthetic::vault(10_000);
    let Ok(index) = SnapshotIndex::from_snapshot(snapshot) else {
        return ExitCode::from(2);
    };
    let request = synthetic::chat_request(&pairs, 200_000, 400);
    let memo = if what == "memo_warm" { 8 << 20 } else { 0 };
    let Some(mut m) = masker(false, memo) else {
        return ExitCode::from(2);
    };
    let start = Instant::now();
    let mut runs = 0u64;
    while start.elapsed() < Duration::from_secs(secs) {
        std::hint::black_box(mask(&mut m, &index, &request, false).is_ok());
        runs += 1;
    }
    let mbps = runs as f64 * request.len() as f64 / start.elapsed().as_secs_f64() / 1e6;
    println!("{what}: {runs} runs, {mbps:.0} MB/s");
    ExitCode::SUCCESS
}

fn main() -> ExitCode {
    if let Ok(what) = std::env::var("LATET_PROFILE") {
        return profile(&what);
    }
    let dirs: Vec<String> = std::env::args().skip(1).collect();
    let (snapshot, pairs) = synthetic::vault(10_000);
    let Ok(index) = SnapshotIndex::from_snapshot(snapshot) else {
        eprintln!("mask_digest: the synthetic vault was refused");
        return ExitCode::from(2);
    };
    // A vault of the first half: the requests' other values are new.
    let (half, _) = synthetic::vault(5_000);
    let Ok(half) = SnapshotIndex::from_snapshot(half) else {
        return ExitCode::from(2);
    };
    for person in [false, true] {
        for (bytes, values) in [(2_000usize, 4usize), (20_000, 40), (200_000, 400)] {
            for variant in [None, Some(3)] {
                let request = synthetic::chat_request_variant(&pairs, bytes, values, variant);
                let mut hasher = DefaultHasher::new();
                for (idx, redact) in [(&index, false), (&half, false), (&half, true)] {
                    let Some(mut cold) = masker(person, 0) else {
                        return ExitCode::from(2);
                    };
                    digest(&mut hasher, &mask(&mut cold, idx, &request, redact));
                    let Some(mut memo) = masker(person, 8 << 20) else {
                        return ExitCode::from(2);
                    };
                    for _ in 0..2 {
                        digest(&mut hasher, &mask(&mut memo, idx, &request, redact));
                    }
                }
                println!(
                    "synthetic names {person}, request {bytes}, variant {variant:?}: digest {:016x}",
                    hasher.finish()
                );
            }
        }
    }
    for dir in &dirs {
        let files = match corpus_files::texts_by_file(dir) {
            Ok(files) => files,
            Err(e) => {
                eprintln!("mask_digest: {e}");
                return ExitCode::from(2);
            }
        };
        for (path, texts) in &files {
            let mut hasher = DefaultHasher::new();
            let mut lines = 0;
            for text in texts {
                lines += 1;
                let body = serde_json::json!({
                    "model": "gpt-4o",
                    "messages": [{"role": "user", "content": text}],
                })
                .to_string();
                for person in [false, true] {
                    for redact in [false, true] {
                        let Some(mut m) = masker(person, 0) else {
                            return ExitCode::from(2);
                        };
                        digest(&mut hasher, &mask(&mut m, &index, &body, redact));
                    }
                }
            }
            println!(
                "{}: {lines} texts, digest {:016x}",
                path.display(),
                hasher.finish()
            );
        }
    }
    ExitCode::SUCCESS
}
