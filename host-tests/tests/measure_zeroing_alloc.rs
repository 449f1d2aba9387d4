//! Measurement, run by hand: what the filter's zeroing allocator costs.
//! The same mask + restore loop (a ~10 KB chat request with 40 known
//! values masked, a ~10 KB answer with 40 surrogates restored, memo off)
//! on the default build and on a `--no-default-features` build (the plain
//! system allocator), interleaved, in wasmtime.
//!
//! ```sh
//! cargo test -p host-tests --test measure_zeroing_alloc -- --ignored --nocapture
//! ```

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use host_tests::gateway::{
    answer_json, chat_answer, chat_body, config, filter_wasm, CallKind, Gateway, Route,
    FILTER_SOURCES,
};
use host_tests::synthetic_vault::{compact_snapshot, surrogate, value};
use host_tests::wasm_build::release_wasm_variant;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

const ENTRIES: usize = 300;
/// The synthetic vault's round (`host_tests::synthetic_vault`).
const ROUND: u8 = 1;
const ITERATIONS: u32 = 400;

/// Fastest and median time in the VM of one request + answer (the fastest is the
/// least disturbed by a loaded machine), and the request and answer sizes.
fn run(wasm: &Path) -> (Duration, Duration, usize, usize) {
    let nowhere = SocketAddr::from(([127, 0, 0, 1], 9));
    let gw = Gateway::start_with(
        wasm,
        &config("tok-measure", "\"memoCapacityBytes\": 0"),
        1,
        nowhere,
    )
    .unwrap();
    let (snapshot, _) = compact_snapshot(ENTRIES, 1, ROUND).unwrap();
    gw.route(CallKind::Snapshot, Route::Scripted(snapshot));
    gw.host.advance(1000).unwrap();
    let messages: Vec<String> = (0..20)
        .map(|m| {
            (0..2)
                .map(|k| {
                    format!(
                        "Message {m}: please write to {} about order {k}, copy the team and keep \
                         the tone friendly; the invoice is attached and due next week. ",
                        value((m * 2 + k) % ENTRIES, ROUND)
                    )
                })
                .collect()
        })
        .collect();
    let pairs: Vec<(&str, &str)> = messages.iter().map(|m| ("user", m.as_str())).collect();
    let request = chat_body(&pairs);
    let answer_text: String = (0..40)
        .map(|i| {
            format!(
                "I wrote to {} as asked and logged the order. ",
                surrogate(i, ROUND)
            )
        })
        .collect();
    let answer = chat_answer(&answer_text);
    let vm = gw.worker(1);
    let mut times = Vec::new();
    for _ in 0..ITERATIONS {
        gw.host.clear_records();
        let start = gw.host.guest_time();
        let s = gw.chat(vm, &request).unwrap();
        answer_json(&s, &answer).unwrap();
        s.finish().unwrap();
        times.push(gw.host.guest_time() - start);
        assert!(s.request_complete(), "{}", gw.host.dump());
    }
    times.sort();
    assert_eq!(
        gw.host.metric("latet_values_masked_total"),
        Some(i64::from(ITERATIONS) * 40),
        "{}",
        gw.host.dump()
    );
    (
        times[0],
        times[times.len() / 2],
        request.len(),
        answer.len(),
    )
}

#[test]
#[ignore]
fn zeroing_allocator_cost() {
    let zeroing = filter_wasm().unwrap();
    let plain = release_wasm_variant(
        "latet-filter",
        "latet_filter",
        &FILTER_SOURCES,
        &["--no-default-features"],
        "host-tests-wasm-plain",
    )
    .unwrap();
    for round in 1..=4 {
        // Alternate which build goes first (the machine is shared).
        let (with, without) = if round % 2 == 1 {
            let with = run(&zeroing);
            (with, run(&plain))
        } else {
            let without = run(&plain);
            (run(&zeroing), without)
        };
        println!(
            "round {round} (request {} B, answer {} B) per request + answer: \
             fastest zeroing {} µs, plain {} µs ({:+.1} %); median zeroing {} µs, plain {} µs",
            with.2,
            with.3,
            with.0.as_micros(),
            without.0.as_micros(),
            (with.0.as_secs_f64() / without.0.as_secs_f64() - 1.0) * 100.0,
            with.1.as_micros(),
            without.1.as_micros(),
        );
    }
}
