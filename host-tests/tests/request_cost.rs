//! What one typical exchange costs the built filter in host calls (every
//! import the module calls: proxy-wasm and WASI), bounded by a test; and,
//! run by hand, the guest time of the same exchange next to the floor
//! filter's (buffer and copy only) and, when `LATET_BASELINE_WASM` names
//! another build of the filter, that build's, interleaved.
//!
//! ```sh
//! LATET_BASELINE_WASM=/path/to/old.opt.wasm \
//!   cargo test -p host-tests --test request_cost -- --ignored --nocapture
//! ```
//!
//! A profile of the guest: `LATET_COST_ROUNDS=20000 LATET_WASM_PERFMAP=1
//! LATET_FILTER_WASM=<a .wasm built without wasm-opt, which keeps the
//! function names>` and the test binary under `perf record`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use host_tests::gateway::{
    chat_answer, chat_body, config, contains, filter_wasm, CallKind, Gateway, Route,
};
use host_tests::synthetic_vault::{builds_to_measure, compact_snapshot, surrogate, value};
use host_tests::wasm_build::floor_filter_wasm;
use host_tests::{Host, HttpStream, Vm, VmSpec};
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

const ENTRIES: usize = 300;
/// The synthetic vault's round (`host_tests::synthetic_vault`).
const ROUND: u8 = 1;

/// The host calls of the exchange below, at most. Fails when a change adds
/// a host call to every request: lower it when one is removed, and justify
/// raising it.
const TYPICAL_EXCHANGE_HOST_CALLS: u64 = 24;

/// A ~2 KB chat request naming three vault values, and an answer that
/// echoes their surrogates.
fn exchange_bodies(round: usize) -> (Vec<u8>, Vec<u8>) {
    let text: String = (0..3)
        .map(|k| {
            format!(
                "Message {round}.{k}: please write to {} about the order, copy the team and keep \
                 the tone friendly; the invoice is attached and due next week, thanks a lot. \
                 Also check the shipment notes from the warehouse before you answer them all. ",
                value((round * 3 + k) % ENTRIES, ROUND)
            )
        })
        .collect();
    let request = chat_body(&[("system", "You are a helpful assistant."), ("user", &text)]);
    let answer: String = (0..3)
        .map(|k| {
            format!(
                "I wrote to {} as asked. ",
                surrogate((round * 3 + k) % ENTRIES, ROUND)
            )
        })
        .collect();
    (request, chat_answer(&answer))
}

fn gateway(wasm: &Path) -> Gateway {
    let nowhere = SocketAddr::from(([127, 0, 0, 1], 9));
    let gw = Gateway::start_with(wasm, &config("tok-cost", ""), 1, nowhere).unwrap();
    let (snapshot, _) = compact_snapshot(ENTRIES, 1, ROUND).unwrap();
    gw.route(CallKind::Snapshot, Route::Scripted(snapshot));
    gw.host.advance(1000).unwrap();
    gw
}

/// The guest time of each step of one exchange: request headers, request
/// body, answer headers, answer body, end of stream.
type Steps = [Duration; 5];

/// One exchange on a VM: (host calls, guest time of each step). The same
/// steps for the filter and the floor.
fn exchange(host: &Host, vm: &Vm, round: usize) -> (u64, Steps, HttpStream) {
    let (request, answer) = exchange_bodies(round);
    let calls = vm.host_calls();
    let mut steps = [Duration::ZERO; 5];
    let mut last = host.guest_time();
    let mut lap = |at: usize| {
        let now = host.guest_time();
        steps[at] = now - last;
        last = now;
    };
    let s = vm.new_http_stream().unwrap();
    let length = request.len().to_string();
    s.request_headers(
        &[
            (":method", "POST"),
            (":path", "/v1/chat/completions"),
            (":authority", "api.openai.com"),
            ("content-type", "application/json"),
            ("content-length", &length),
        ],
        false,
    )
    .unwrap();
    lap(0);
    s.request_body(&request, true).unwrap();
    lap(1);
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
    lap(2);
    s.response_body(&answer, true).unwrap();
    lap(3);
    s.finish().unwrap();
    lap(4);
    assert!(s.request_complete(), "{}", host.dump());
    (vm.host_calls() - calls, steps, s)
}

/// One exchange on the Latet worker, checked: the value left masked and
/// came back restored.
fn latet_exchange(gw: &Gateway, round: usize) -> (u64, Steps) {
    let (calls, steps, s) = exchange(&gw.host, gw.worker(1), round);
    let value = value(round * 3 % ENTRIES, ROUND);
    assert!(
        !contains(&s.upstream_body(), value.as_bytes()),
        "{}",
        gw.host.dump()
    );
    assert!(
        contains(&s.downstream_body(), value.as_bytes()),
        "{}",
        gw.host.dump()
    );
    (calls, steps)
}

#[test]
fn a_typical_exchange_makes_no_more_host_calls_than_counted() {
    let gw = gateway(&filter_wasm().unwrap());
    // The first one is the worker's first request (it may set things up).
    latet_exchange(&gw, 0);
    let (calls, _) = latet_exchange(&gw, 1);
    println!("host calls of a typical exchange (built filter): {calls}");
    assert!(
        calls <= TYPICAL_EXCHANGE_HOST_CALLS,
        "{calls} host calls, at most {TYPICAL_EXCHANGE_HOST_CALLS}\n{}",
        gw.host.dump()
    );
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

#[test]
#[ignore]
fn measure_request_cost() {
    let builds = builds_to_measure().unwrap();
    let gateways: Vec<(&str, Gateway)> = builds
        .iter()
        .map(|(name, wasm)| (*name, gateway(wasm)))
        .collect();
    let floor_host = Host::new(&floor_filter_wasm().unwrap()).unwrap();
    let floor = floor_host
        .start_vm(VmSpec::new("floor-1", "floor").root("floor", ""))
        .unwrap();
    // More rounds for a profile (`LATET_COST_ROUNDS`, and
    // `LATET_WASM_PERFMAP=1` under `perf record`).
    let rounds: usize = std::env::var("LATET_COST_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(600);
    let mut times: Vec<Vec<Steps>> = vec![Vec::new(); gateways.len() + 1];
    let mut calls = vec![0; gateways.len() + 1];
    for round in 0..rounds {
        // Interleaved, the order turning each round (the machine is shared).
        for k in 0..=gateways.len() {
            let at = (k + round) % (gateways.len() + 1);
            let (n, steps) = match gateways.get(at) {
                Some((_, gw)) => {
                    gw.host.clear_records();
                    latet_exchange(gw, round)
                }
                None => {
                    floor_host.clear_records();
                    let (n, steps, _) = exchange(&floor_host, &floor, round);
                    (n, steps)
                }
            };
            calls[at] = n;
            times[at].push(steps);
        }
    }
    for (at, runs) in times.into_iter().enumerate() {
        let name = gateways.get(at).map_or("floor", |(name, _)| name);
        let total = median(runs.iter().map(|s| s.iter().sum()).collect());
        let step = |i: usize| median(runs.iter().map(|s| s[i]).collect()).as_micros();
        println!(
            "{name}: {} host calls; median guest time per exchange {} µs \
             (request headers {}, body {}, answer headers {}, answer body {}, end {})",
            calls[at],
            total.as_micros(),
            step(0),
            step(1),
            step(2),
            step(3),
            step(4),
        );
    }
}
