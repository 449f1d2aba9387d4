//! What finding names costs on the engine bench's synthetic requests: the
//! built-in detectors over each message text, with names on and off,
//! interleaved (MB/s of text, median of rounds). For profiling the person
//! detector alone (`perf record` on this example) without the masker;
//! `on` runs only the detectors with names on. Wall-clock medians: on a
//! loaded machine compare runs made in one sitting.
//!
//! ```text
//! cargo run --release -p latet-core --example names_cost [-- SECONDS [on]]
//! ```

use latet_core::detect::{DetectorConfig, Detectors};
use std::hint::black_box;
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[path = "../benches/support/synthetic.rs"]
#[allow(dead_code)]
mod synthetic;

/// The message texts of a request of about `bytes` bytes.
fn texts(bytes: usize, values: usize) -> Vec<String> {
    let (_, pairs) = synthetic::vault(10_000);
    let request = synthetic::chat_request(&pairs, bytes, values);
    let body: serde_json::Value = serde_json::from_str(&request).unwrap_or_default();
    body["messages"]
        .as_array()
        .map(|m| {
            m.iter()
                .filter_map(|m| m["content"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

fn mbps(texts: &[String], detectors: &Detectors) -> f64 {
    let bytes: usize = texts.iter().map(String::len).sum();
    let mut out = Vec::new();
    let mut runs = Vec::new();
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(100) || runs.len() < 3 {
        let t = Instant::now();
        for text in texts {
            out.clear();
            detectors.find(black_box(text), &mut out);
        }
        runs.push(t.elapsed());
    }
    runs.sort();
    bytes as f64 / runs[runs.len() / 2].as_secs_f64() / 1e6
}

pub fn main() -> ExitCode {
    let seconds: f64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(2.0);
    // `on`: names on only (for a profile of the detector).
    let only_on = std::env::args().nth(2).as_deref() == Some("on");
    let (Ok(on), Ok(off)) = (
        Detectors::new(&DetectorConfig::default()),
        Detectors::new(&DetectorConfig {
            person: false,
            ..DetectorConfig::default()
        }),
    ) else {
        eprintln!("names_cost: detectors");
        return ExitCode::FAILURE;
    };
    on.warm_up();
    for (bytes, values) in [(2_000, 4), (20_000, 40), (200_000, 400)] {
        let texts = texts(bytes, values);
        let (mut with, mut without) = (Vec::new(), Vec::new());
        let start = Instant::now();
        while start.elapsed().as_secs_f64() < seconds / 3.0 {
            with.push(mbps(&texts, &on));
            if !only_on {
                without.push(mbps(&texts, &off));
            }
        }
        with.sort_by(f64::total_cmp);
        without.sort_by(f64::total_cmp);
        let w = with[with.len() / 2];
        let o = without.get(without.len() / 2).copied().unwrap_or(f64::NAN);
        println!(
            "{bytes:>7} B: names on {w:8.1} MB/s, off {o:8.1} MB/s, ratio {:.3}",
            w / o
        );
    }
    ExitCode::SUCCESS
}
