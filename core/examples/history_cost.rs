//! What a request whose history is resent costs the engine (the
//! `envoy/bench.sh` *history* cell): an OpenAI chat request of 2/20/200 KB
//! (4/40/400 vault values, as `envoy/bench/bench.py`), every message but the
//! last the same from request to request, the last one new; masked through
//! the filter's memo (8 MiB, warm), then its answer (the last message echoed,
//! as the fake LLM does) restored under `restoreScope: request`. Vaults of
//! 10k and 100k entries, interleaved round by round; prints each round's
//! fastest run per step in µs, and the 100k/10k ratio of the fastest rounds.
//!
//! ```text
//! cargo run --release -p latet-core --example history_cost [-- ROUNDS [SIZE]]
//! ```
//! SIZE: `2k`, `20k` or `200k` (default: all three). `LATET_COLD_MB=N`
//! writes N MiB between requests (outside the timings), evicting the caches
//! as a loaded machine's other processes do.

use latet_core::detect::{DetectorConfig, Detectors};
use latet_core::mask::{MaskOptions, MaskOutcome, Masker};
use latet_core::provider;
use latet_core::restore::{restore_body, RequestScope, RestoreView, UrlRule};
use latet_core::snapshot::SnapshotIndex;
use std::hint::black_box;
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[path = "../benches/support/synthetic.rs"]
#[allow(dead_code)]
mod synthetic;

const SIZES: &[(&str, usize, usize)] = &[
    ("2k", 2_000, 4),
    ("20k", 20_000, 40),
    ("200k", 200_000, 400),
];
const VAULTS: &[usize] = &[10_000, 100_000];
const MEMO_BYTES: usize = 8 << 20;
const RUNS_PER_ROUND: usize = 30;

/// The request's messages with the last one's first word set to `token`
/// (every message starts with `ref `, as post.lua fixes the earlier markers).
fn history_request(pairs: &[(String, String)], bytes: usize, values: usize, token: &str) -> String {
    let base = synthetic::chat_request(pairs, bytes, values);
    let mut body: serde_json::Value = serde_json::from_str(&base).unwrap_or_default();
    if let Some(messages) = body["messages"].as_array_mut() {
        let last = messages.len().saturating_sub(1);
        for (m, message) in messages.iter_mut().enumerate() {
            let text = message["content"].as_str().unwrap_or_default();
            let first = if m == last { token } else { "ref" };
            message["content"] = serde_json::Value::from(format!("{first} {text}"));
        }
        if let Some(message) = messages.last_mut() {
            message["role"] = "user".into();
        }
    }
    body.to_string()
}

/// The fake LLM's answer: the last message of the (masked) request.
fn answer_of(masked: &[u8]) -> Vec<u8> {
    let body: serde_json::Value = serde_json::from_slice(masked).unwrap_or_default();
    let last = body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string();
    serde_json::json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": last},
                     "finish_reason": "stop"}]
    })
    .to_string()
    .into_bytes()
}

/// Evicts the caches between requests, as the other processes of a loaded
/// machine do (`LATET_COLD_MB` bytes written, 0: none).
fn evict(buffer: &mut [u8], round: usize) {
    for (i, b) in buffer.iter_mut().enumerate().step_by(64) {
        *b = b.wrapping_add((i + round) as u8);
    }
    black_box(&buffer);
}

struct Cell {
    index: SnapshotIndex,
    masker: Masker,
    pairs: Vec<(String, String)>,
    counter: usize,
}

impl Cell {
    /// One request: (mask, restore) times; false when it did not mask.
    fn once(
        &mut self,
        bytes: usize,
        values: usize,
        cold: &mut [u8],
    ) -> Option<(Duration, Duration)> {
        self.counter += 1;
        let token = format!("ref{}", synthetic::letters(self.counter));
        let request = history_request(&self.pairs, bytes, values, &token);
        evict(cold, self.counter);
        let t = Instant::now();
        let outcome = self
            .masker
            .mask_request(
                &self.index,
                provider::OPENAI_CHAT,
                request.as_bytes(),
                MaskOptions::default(),
            )
            .ok()?;
        let mask = t.elapsed();
        let MaskOutcome::Masked { body, used, .. } = outcome else {
            return None;
        };
        let masked = body.unwrap_or_else(|| request.into_bytes());
        let answer = answer_of(&masked);
        evict(cold, self.counter);
        let urls = UrlRule::Never;
        let t = Instant::now();
        let mut scope = RequestScope::default();
        scope.extend(&used);
        let view = RestoreView::new(&self.index, Some(&scope), &urls);
        let restored = restore_body(view, &answer);
        let restore = t.elapsed();
        black_box(restored);
        Some((mask, restore))
    }
}

pub fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let rounds: usize = args.get(1).and_then(|r| r.parse().ok()).unwrap_or(5);
    let only = args.get(2).cloned();
    let cold_mb: usize = std::env::var("LATET_COLD_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut cold = vec![0u8; cold_mb << 20];
    let mut cells = Vec::new();
    for &entries in VAULTS {
        let (snapshot, pairs) = synthetic::vault(entries);
        let Ok(index) = SnapshotIndex::from_snapshot(snapshot) else {
            eprintln!("snapshot of {entries} entries did not build");
            return ExitCode::FAILURE;
        };
        let Ok(detectors) = Detectors::new(&DetectorConfig::default()) else {
            return ExitCode::FAILURE;
        };
        cells.push(Cell {
            index,
            masker: Masker::new(detectors, MEMO_BYTES),
            pairs,
            counter: 0,
        });
    }
    for &(name, bytes, values) in SIZES {
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        // Warm the memo (and the caches) before timing.
        for cell in &mut cells {
            for _ in 0..3 {
                if cell.once(bytes, values, &mut cold).is_none() {
                    eprintln!("{name}: the request was not masked");
                    return ExitCode::FAILURE;
                }
            }
        }
        let mut best: Vec<(Duration, Duration)> = vec![(Duration::MAX, Duration::MAX); cells.len()];
        for round in 0..rounds {
            let mut line = format!("{name} round {round}:");
            for k in 0..cells.len() {
                let at = (k + round) % cells.len();
                let cell = &mut cells[at];
                let mut fastest = (Duration::MAX, Duration::MAX);
                for _ in 0..RUNS_PER_ROUND {
                    let Some((m, r)) = cell.once(bytes, values, &mut cold) else {
                        return ExitCode::FAILURE;
                    };
                    fastest = (fastest.0.min(m), fastest.1.min(r));
                }
                best[at] = (best[at].0.min(fastest.0), best[at].1.min(fastest.1));
                line += &format!(
                    " {}k mask {} µs restore {} µs;",
                    VAULTS[at] / 1000,
                    fastest.0.as_micros(),
                    fastest.1.as_micros()
                );
            }
            println!("{line}");
        }
        let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64().max(1e-9);
        println!(
            "{name} fastest: mask {} / {} µs (100k/10k {:.2}), restore {} / {} µs (100k/10k {:.2})",
            best[0].0.as_micros(),
            best[1].0.as_micros(),
            ratio(best[1].0, best[0].0),
            best[0].1.as_micros(),
            best[1].1.as_micros(),
            ratio(best[1].1, best[0].1),
        );
    }
    ExitCode::SUCCESS
}
