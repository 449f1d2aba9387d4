//! `cargo bench -p latet-core`: what the engine costs, in MB/s and bytes per
//! entry, on synthetic agent requests against 10k- and 100k-entry vaults.
//! Prints figures; asserts nothing about time (machines are shared).
//!
//! Measures: finding vault values (our first-token matcher against an
//! aho-corasick automaton over the same values, the measurement that chose
//! the data structure), masking whole requests, restoring whole answers and
//! SSE streams, and the index's memory per entry.

use latet_core::detect::{DetectorConfig, Detectors};
use latet_core::kind::Kind;
use latet_core::mask::{ApiShape, MaskOptions, MaskOutcome, Masker};
use latet_core::restore::{restore_body, SseRestorer};
use latet_core::snapshot::SnapshotIndex;
use latet_core::wire::{Entry, EntryId, Snapshot};
use std::hint::black_box;
use std::time::{Duration, Instant};

const FIRST: &[&str] = &[
    "Mario", "Laura", "Giulia", "Paolo", "Ana", "José", "Lucía", "Javier", "Hans", "Greta",
    "Jürgen", "Claire", "Élodie", "Pierre", "John", "Emily", "Oliver", "Sofia", "Marco", "Elena",
];
const LAST: &[&str] = &[
    "Rossi",
    "Bianchi",
    "García",
    "Martínez",
    "Müller",
    "Schmidt",
    "Dubois",
    "Moreau",
    "Smith",
    "Brown",
    "Ferrari",
    "Romano",
    "López",
    "Weber",
    "Fischer",
    "Laurent",
    "Taylor",
    "Conti",
];

/// A deterministic generator (no dependency): splitmix64.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn pick<'a>(&mut self, list: &[&'a str]) -> &'a str {
        list[(self.next() % list.len() as u64) as usize]
    }
}

/// The i-th synthetic value and its surrogate (names, e-mails, phones).
fn value_pair(i: usize, rng: &mut Rng) -> (String, String, Kind) {
    let (f, l) = (rng.pick(FIRST), rng.pick(LAST));
    let (sf, sl) = (rng.pick(FIRST), rng.pick(LAST));
    match i % 3 {
        0 => (format!("{f} {l}{i}"), format!("{sf} {sl}x{i}"), Kind::Name),
        1 => (
            format!(
                "{}.{}{i}@acme{}.it",
                f.to_lowercase(),
                l.to_lowercase(),
                i % 97
            ),
            format!(
                "{}.{}{i}@brightvale{}.it",
                sf.to_lowercase(),
                sl.to_lowercase(),
                i % 97
            ),
            Kind::Email,
        ),
        _ => (
            format!("+39 347 {:03} {:04}", i % 1000, i / 1000),
            format!("+39 351 {:03} {:04}", (i * 7) % 1000, i / 1000),
            Kind::Phone,
        ),
    }
}

fn vault(entries: usize) -> (Snapshot, Vec<(String, String)>) {
    let mut rng = Rng(42);
    let mut pairs = Vec::with_capacity(entries);
    let mut list = Vec::with_capacity(entries);
    for i in 0..entries {
        let (value, surrogate, kind) = value_pair(i, &mut rng);
        let mut id = [0u8; 16];
        id[..8].copy_from_slice(&(i as u64).to_le_bytes());
        list.push(Entry {
            id: EntryId(id),
            value: value.clone(),
            surrogate: surrogate.clone(),
            kind,
            generation: 1,
        });
        pairs.push((value, surrogate));
    }
    let snapshot = Snapshot {
        version: 1,
        generation: 1,
        seq: 0,
        retired_salt: "00".repeat(16),
        retired: vec![],
        entries: list,
    };
    (snapshot, pairs)
}

const FILLER: &str = "Please review the quarterly figures below and tell me whether the \
    supplier contract needs to be renegotiated before the end of the month; the team \
    already checked the delivery dates and the invoices look consistent with the order. ";

/// An OpenAI Chat request of about `bytes` bytes holding `values` vault values.
fn chat_request(pairs: &[(String, String)], bytes: usize, values: usize) -> String {
    let messages_count = values.max(1);
    let per_message = bytes / messages_count;
    let mut messages = Vec::new();
    for m in 0..messages_count {
        let (value, _) = &pairs[(m * 7919) % pairs.len()];
        let mut text = String::new();
        while text.len() + value.len() + 40 < per_message {
            text.push_str(FILLER);
        }
        text.truncate(per_message.saturating_sub(value.len() + 40));
        text.push_str(" Contact: ");
        text.push_str(value);
        text.push('.');
        let role = if m % 2 == 0 { "user" } else { "assistant" };
        messages.push(serde_json::json!({ "role": role, "content": text }));
    }
    serde_json::json!({ "model": "gpt-4o", "messages": messages }).to_string()
}

/// The same request as its answer would carry it: values → surrogates.
fn answer_of(request: &str, pairs: &[(String, String)]) -> String {
    let mut out = request.to_string();
    for (value, surrogate) in pairs {
        if out.contains(value.as_str()) {
            out = out.replace(value.as_str(), surrogate);
        }
    }
    out
}

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
                    ApiShape::OpenAiChat,
                    request.as_bytes(),
                    MaskOptions::default(),
                ) {
                    Ok(MaskOutcome::Masked { body, .. }) => {
                        black_box(body);
                    }
                    _ => masked_ok = false,
                }
            });
            let mut memo_masker = match Detectors::new(&DetectorConfig::default()) {
                Ok(d) => Masker::new(d, 64 << 20),
                Err(e) => return eprintln!("detectors: {e}"),
            };
            let d_memo = time(budget, || {
                black_box(
                    memo_masker
                        .mask_request(
                            &index,
                            ApiShape::OpenAiChat,
                            request.as_bytes(),
                            MaskOptions::default(),
                        )
                        .is_ok(),
                );
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
                "  request {:>4} KB, {:>3} values: find values {:>7.1} MB/s (aho-corasick {:>7.1} MB/s, {} found) | mask {:>6.1} MB/s{} | mask, memo warm {:>6.1} MB/s | restore {:>6.1} MB/s | SSE restore {:>6.1} MB/s ({} KB stream)",
                len / 1000,
                values,
                mbps(len, d_find),
                mbps(len, d_ac),
                found.len(),
                mbps(len, d_mask),
                if masked_ok { "" } else { " (NOT MASKED: new values?)" },
                mbps(len, d_memo),
                mbps(answer.len(), d_restore),
                mbps(stream.len(), d_sse),
                stream.len() / 1000
            );
        }
    }
}
