//! Scenario 8: the leak hunt. Values go through every place a worker keeps
//! or copies them (the entries callout and its answer, the masked body, the
//! memo, the index, whole and streamed restores, the feed's added event, the
//! shared snapshot); then they are forgotten through the apps API of the
//! real control service. Once the requests in flight have ended, every VM's
//! linear memory (sync and workers) and the shared data must hold neither
//! the values' bytes nor the old surrogates mapped to them.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use host_tests::control::ControlService;
use host_tests::gateway::{
    answer_json, chat_answer, chat_body, config, contains, surrogate_in_snapshot, Gateway,
    SNAPSHOT_PATH, VM_ID,
};

/// Values unlikely to appear anywhere else in a VM's memory.
const VALUES: [&str; 2] = ["ottavia.quercetti@lumenfold-atelier.it", "+39 333 918 2746"];
/// A value that stays: the hunt must find it (the scan works).
const KEPT: &str = "brunilde.zanardelli@gmail.com";

/// Every offset where `needle` occurs in `haystack`.
fn find_all(haystack: &[u8], needle: &[u8]) -> Vec<usize> {
    let mut hits = Vec::new();
    let mut from = 0;
    while let Some(at) = haystack[from..].iter().position(|b| *b == needle[0]) {
        let start = from + at;
        if haystack[start..].starts_with(needle) {
            hits.push(start);
        }
        from = start + 1;
    }
    hits
}

/// The bytes around a hit, printable, for the failure message.
fn around(memory: &[u8], at: usize, len: usize) -> String {
    let start = at.saturating_sub(48);
    let end = (at + len + 48).min(memory.len());
    memory[start..end]
        .iter()
        .map(|b| match b {
            0x20..=0x7e => (*b as char).to_string(),
            0 => ".".to_string(),
            _ => format!("\\x{b:02x}"),
        })
        .collect()
}

fn sse_answer(text: &str) -> Vec<Vec<u8>> {
    let delta = serde_json::json!({"choices": [{"index": 0, "delta": {"content": text}}]});
    let stream = format!("data: {delta}\n\ndata: [DONE]\n\n").into_bytes();
    stream.chunks(11).map(<[u8]>::to_vec).collect()
}

#[test]
fn after_a_forget_no_vm_memory_holds_the_value_or_its_old_surrogate() {
    let service = ControlService::start().unwrap();
    let token = service.create_key("shop").unwrap();
    let eraser = service.add_token("shop", "erasure", &["--forget"]).unwrap();
    let gw = Gateway::start(&config(&token, ""), 2, service.addr()).unwrap();
    let host = &gw.host;
    let d = || host.dump();
    host.advance(1000).unwrap();
    let text = format!(
        "Write to {} (or {}), call {} and tell them the plan.",
        VALUES[0], KEPT, VALUES[1]
    );
    let request = chat_body(&[("user", &text)]);

    // Worker 1: new values (callout), a whole answer restored.
    let s = gw.chat(gw.worker(1), &request).unwrap();
    assert!(s.request_complete(), "{}", d());
    let snapshot = service.call("GET", SNAPSHOT_PATH, Some(&token), None);
    let surrogates: Vec<String> = VALUES
        .iter()
        .map(|value| surrogate_in_snapshot(&snapshot.body, value).unwrap())
        .collect();
    let answer = format!("Wrote to {} and called {}.", surrogates[0], surrogates[1]);
    answer_json(&s, &chat_answer(&answer)).unwrap();
    assert!(
        String::from_utf8_lossy(&s.downstream_body()).contains(VALUES[0]),
        "{}",
        d()
    );
    s.finish().unwrap();

    // The feed carries the added event to worker 2; it masks from its index
    // and restores a streamed answer; worker 1 masks again from its memo.
    gw.settle_feed();
    let s = gw.chat(gw.worker(2), &request).unwrap();
    assert!(s.request_complete(), "{}", d());
    s.response_headers(
        &[(":status", "200"), ("content-type", "text/event-stream")],
        false,
    )
    .unwrap();
    for piece in sse_answer(&answer) {
        s.response_body(&piece, false).unwrap();
    }
    s.response_body(b"", true).unwrap();
    assert!(
        String::from_utf8_lossy(&s.downstream_body()).contains(VALUES[1]),
        "{}",
        d()
    );
    s.finish().unwrap();
    let s = gw.chat(gw.worker(1), &request).unwrap();
    assert!(s.request_complete(), "{}", d());
    s.finish().unwrap();
    assert!(
        host.metric("latet_memo_hits_total").unwrap_or(0) > 0,
        "{}",
        d()
    );

    // A worker that starts now rebuilds from the shared snapshot and events
    // (the added event carries the values).
    let late = gw.host.start_vm(
        host_tests::VmSpec::new("worker-late", VM_ID)
            .root(host_tests::gateway::FILTER_ROOT, config(&token, "")),
    );
    let late = late.unwrap();

    // A request in flight across the forget: its streamed answer is half
    // delivered (the restorer holds part of it) when the forget lands.
    let in_flight = gw.chat(gw.worker(2), &request).unwrap();
    in_flight
        .response_headers(
            &[(":status", "200"), ("content-type", "text/event-stream")],
            false,
        )
        .unwrap();
    let pieces = sse_answer(&answer);
    let half = pieces.len() / 2;
    for piece in &pieces[..half] {
        in_flight.response_body(piece, false).unwrap();
    }

    let delivered = in_flight.downstream_chunks().len();

    // Forget both values; every worker applies it.
    let values_json = serde_json::to_string(&VALUES).unwrap();
    let forgot = service.forget(&eraser, &values_json);
    assert_eq!(forgot.status, 200, "{}", forgot.text());
    gw.settle_feed();

    // The request in flight ends.
    for piece in &pieces[half..] {
        in_flight.response_body(piece, false).unwrap();
    }
    in_flight.response_body(b"", true).unwrap();
    // The request sent both values (its restore scope holds their entries),
    // but what is delivered after the forget restores neither: the scope
    // names entries, and the forget removed them.
    let tail = in_flight.downstream_chunks()[delivered..].concat();
    for (n, value) in VALUES.iter().enumerate() {
        assert!(
            !contains(&tail, value.as_bytes()),
            "value #{n} restored after the forget\n{}",
            d()
        );
    }
    assert!(
        host.metric("latet_restore_declined_retired_total")
            .unwrap_or(0)
            > 0,
        "the held surrogate is declined\n{}",
        d()
    );
    in_flight.finish().unwrap();
    assert_eq!(
        host.metric("latet_forget_events_applied_total")
            .unwrap_or(0),
        3,
        "three workers applied the forget\n{}",
        d()
    );
    // Traffic goes on without the values.
    for worker in [gw.worker(1), gw.worker(2), &late] {
        let s = gw
            .chat(
                worker,
                &chat_body(&[("user", &format!("Hello again, {KEPT}"))]),
            )
            .unwrap();
        answer_json(&s, &chat_answer("Hello.")).unwrap();
        s.finish().unwrap();
    }

    // The hunt.
    let mut needles: Vec<(String, Vec<u8>)> = Vec::new();
    for (n, value) in VALUES.iter().enumerate() {
        needles.push((format!("value #{n}"), value.as_bytes().to_vec()));
        needles.push((
            format!("old surrogate #{n}"),
            surrogates[n].as_bytes().to_vec(),
        ));
    }
    let mut found = Vec::new();
    let mut kept_seen = false;
    for vm in host.vms() {
        let memory = vm.memory_snapshot();
        kept_seen |= !find_all(&memory, KEPT.as_bytes()).is_empty();
        for (label, needle) in &needles {
            for at in find_all(&memory, needle) {
                found.push(format!(
                    "{} memory @{at:#x}: {label}: {}",
                    vm.name(),
                    around(&memory, at, needle.len())
                ));
            }
        }
    }
    for key in gw.value_keys() {
        if let Some((bytes, _)) = host.shared_data(VM_ID, &key) {
            for (label, needle) in &needles {
                for at in find_all(&bytes, needle) {
                    found.push(format!(
                        "shared data {key} @{at}: {label}: {}",
                        around(&bytes, at, needle.len())
                    ));
                }
            }
        }
    }
    assert!(kept_seen, "the scan finds a value that was not forgotten");
    assert!(
        found.is_empty(),
        "{} leak(s):\n{}\n{}",
        found.len(),
        found.join("\n"),
        d()
    );
}
