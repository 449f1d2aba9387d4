//! What a request whose history is resent costs the built filter against a
//! 10k- and a 100k-entry vault, interleaved (the `envoy/bench.sh` history
//! cell inside the VM: headers, body masked through the memo, the answer
//! echoing the last message restored in the request's scope). Run by hand:
//!
//! ```sh
//! cargo test -p host-tests --test measure_history_cost -- --ignored --nocapture
//! ```
//!
//! `LATET_HISTORY_ROUNDS` (default 200) exchanges per vault and size;
//! `LATET_HISTORY_SIZES` (default `2000,20000,200000`). A profile: a `.wasm`
//! built without wasm-opt in `LATET_FILTER_WASM`, `LATET_WASM_PERFMAP=1`,
//! and the test binary under `perf record`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use host_tests::gateway::{chat_answer, chat_body, config, filter_wasm, CallKind, Gateway, Route};
use host_tests::synthetic_vault::{compact_snapshot, value};
use std::net::SocketAddr;
use std::time::Duration;

const ROUND: u8 = 1;
const VAULTS: [usize; 2] = [10_000, 100_000];
const FILLER: &str = "Please review the quarterly figures below and tell me whether the \
    supplier contract needs to be renegotiated before the end of the month; the team \
    already checked the delivery dates and the invoices look consistent with the order. ";

fn gateway(entries: usize) -> Gateway {
    let nowhere = SocketAddr::from(([127, 0, 0, 1], 9));
    let gw = Gateway::start_with(&filter_wasm().unwrap(), &config("tok", ""), 1, nowhere).unwrap();
    let (snapshot, _) = compact_snapshot(entries, 1, ROUND).unwrap();
    gw.route(CallKind::Snapshot, Route::Scripted(snapshot));
    gw.host.advance(1000).unwrap();
    gw
}

/// A chat request of about `bytes` bytes, one vault value a ~500-byte
/// message (as `envoy/bench/bench.py`): every message the same from
/// request to request but the last, which starts with `token`.
fn history_request(bytes: usize, token: &str) -> Vec<u8> {
    let count = (bytes / 500).max(1);
    let texts: Vec<String> = (0..count)
        .map(|m| {
            let value = value((m * 7919) % 1000, ROUND);
            let mut text = if m + 1 == count {
                format!("{token} ")
            } else {
                "ref ".to_string()
            };
            while text.len() + value.len() + 40 < 500 {
                text.push_str(FILLER);
            }
            text.truncate(500 - value.len() - 40);
            format!("{text} Contact: {value}.")
        })
        .collect();
    let messages: Vec<(&str, &str)> = texts
        .iter()
        .enumerate()
        .map(|(m, t)| {
            let role = if m % 2 == 0 || m + 1 == count {
                "user"
            } else {
                "assistant"
            };
            (role, t.as_str())
        })
        .collect();
    chat_body(&messages)
}

/// The last message of a masked request (what the fake LLM echoes).
fn last_message(body: &[u8]) -> String {
    let body: serde_json::Value = serde_json::from_slice(body).unwrap();
    body["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string()
}

/// One exchange: guest time of (request headers + body, answer).
fn exchange(gw: &Gateway, bytes: usize, n: usize) -> (Duration, Duration) {
    let request = history_request(bytes, &format!("ref{n}x"));
    let host = &gw.host;
    let t0 = host.guest_time();
    let s = gw.chat(gw.worker(1), &request).unwrap();
    let t1 = host.guest_time();
    let answer = chat_answer(&last_message(&s.upstream_body()));
    let length = answer.len().to_string();
    s.response_headers(
        &[
            (":status", "200"),
            ("content-type", "application/json"),
            ("content-length", &length),
        ],
        false,
    )
    .unwrap();
    s.response_body(&answer, true).unwrap();
    s.finish().unwrap();
    let t2 = host.guest_time();
    assert!(s.request_complete(), "{}", host.dump());
    (t1 - t0, t2 - t1)
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

#[test]
#[ignore]
fn measure_history_cost() {
    let rounds: usize = std::env::var("LATET_HISTORY_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(200);
    let sizes: Vec<usize> = std::env::var("LATET_HISTORY_SIZES")
        .unwrap_or_else(|_| "2000,20000,200000".to_string())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let gateways: Vec<Gateway> = VAULTS.iter().map(|&n| gateway(n)).collect();
    let mut n = 0;
    for &bytes in &sizes {
        let mut times: Vec<Vec<(Duration, Duration)>> = vec![Vec::new(); gateways.len()];
        for round in 0..rounds + 3 {
            for k in 0..gateways.len() {
                let at = (k + round) % gateways.len();
                n += 1;
                gateways[at].host.clear_records();
                let t = exchange(&gateways[at], bytes, n);
                // The first ones fill the memo.
                if round >= 3 {
                    times[at].push(t);
                }
            }
        }
        let line: Vec<String> = times
            .iter()
            .zip(VAULTS)
            .map(|(runs, entries)| {
                let request = median(runs.iter().map(|t| t.0).collect());
                let answer = median(runs.iter().map(|t| t.1).collect());
                format!(
                    "{}k: request {} µs, answer {} µs",
                    entries / 1000,
                    request.as_micros(),
                    answer.as_micros()
                )
            })
            .collect();
        println!("{bytes} B history, median guest time: {}", line.join("; "));
    }
}
