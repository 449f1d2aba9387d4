//! Scenario 9: the gateway's key is deleted at the real control service
//! (`latet server … keys delete`). The poller's feed call answers 410
//! `key_deleted`: the shared snapshot and events are emptied, the state
//! record says so, and every worker drops its index and memo (one whose
//! wake-up was lost too, at its next request). From then on requests are
//! refused with `latet_key_deleted` (nothing forwarded), an answer in flight
//! restores nothing, no VM memory or shared copy holds the value or its
//! surrogate, and a key created again under the name does not bring the
//! gateway (still on the old token) back. A worker whose entries call is
//! the first to hear of it drops its vault at once.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use host_tests::control::ControlService;
use host_tests::gateway::{
    answer_json, assert_refused, chat_answer, chat_body, config, contains, surrogate_in_snapshot,
    CallKind, Gateway, SNAPSHOT_PATH, VM_ID,
};
use host_tests::HttpStream;

/// A value unlikely to appear anywhere else in a VM's memory.
const VALUE: &str = "gualtiera.spadafora@orvietana-tessuti.it";

fn assert_refused_key_deleted(s: &HttpStream, what: &str, dump: &dyn Fn() -> String) {
    let body = assert_refused(s, 403, "latet_key_deleted", what, dump);
    assert!(!body.contains(VALUE), "{what}: {body}");
}

fn hits(haystack: &[u8], needle: &[u8]) -> usize {
    haystack
        .windows(needle.len())
        .filter(|w| *w == needle)
        .count()
}

#[test]
fn a_deleted_key_empties_every_worker_and_its_requests_are_refused() {
    let mut service = ControlService::start().unwrap();
    let token = service.create_key("shop").unwrap();
    let gw = Gateway::start(&config(&token, ""), 2, service.addr()).unwrap();
    let host = &gw.host;
    let d = || host.dump();
    let (a, b) = (gw.worker(1), gw.worker(2));
    host.advance(1000).unwrap();
    assert_eq!(gw.published_seq(), Some(0), "{}", d());

    // A masks the value (one entries call); B learns it from the feed and
    // masks it too (its memo holds the text now).
    let text = format!("Please write to {VALUE} today");
    let s = gw.chat(a, &chat_body(&[("user", &text)])).unwrap();
    assert!(s.request_complete(), "{}", d());
    s.finish().unwrap();
    assert_eq!(gw.settle_feed(), Some(1), "{}", d());
    let snapshot = service.call("GET", SNAPSHOT_PATH, Some(&token), None);
    let surrogate = surrogate_in_snapshot(&snapshot.body, VALUE).expect("the vault holds it");
    let s = gw.chat(b, &chat_body(&[("user", &text)])).unwrap();
    assert!(
        contains(&s.upstream_body(), surrogate.as_bytes()),
        "{}",
        d()
    );
    answer_json(&s, &chat_answer(&format!("Wrote to {surrogate}."))).unwrap();
    assert!(contains(&s.downstream_body(), VALUE.as_bytes()), "{}", d());
    s.finish().unwrap();

    // A request on B is in flight (masked, forwarded, not answered yet).
    let in_flight = gw.chat(b, &chat_body(&[("user", &text)])).unwrap();
    assert!(in_flight.request_complete(), "{}", d());

    // The key is deleted; the poller's feed call hears it. B's wake-up
    // message is lost.
    let out = service.cli(&["keys", "delete", "shop", "--yes"]).unwrap();
    assert!(out.contains("deleted: 2 values"), "{out}");
    host.hold_queues(true);
    assert_eq!(gw.pump_feed(), 1, "{}", d());
    let (state, _) = host.shared_data(VM_ID, "latet.v1.state").unwrap();
    let state: serde_json::Value = serde_json::from_slice(&state).unwrap();
    assert_eq!(state["keyDeleted"], true, "{state}\n{}", d());
    host.drop_queue_messages_to(b.name());
    host.hold_queues(false);
    host.settle().unwrap();

    // The answer in flight on B carries the surrogate: restored no more.
    answer_json(&in_flight, &chat_answer(&format!("Sent to {surrogate}."))).unwrap();
    let answer = in_flight.downstream_body();
    assert!(!contains(&answer, VALUE.as_bytes()), "{}", d());
    in_flight.finish().unwrap();

    // Nothing of the vault is left in any VM or shared copy.
    let mut found = Vec::new();
    for vm in host.vms() {
        let memory = vm.memory_snapshot();
        for (label, needle) in [("value", VALUE), ("surrogate", surrogate.as_str())] {
            let n = hits(&memory, needle.as_bytes());
            if n > 0 {
                found.push(format!("{} memory: {label} x{n}", vm.name()));
            }
        }
    }
    for key in gw.value_keys() {
        if let Some((bytes, _)) = host.shared_data(VM_ID, &key) {
            for (label, needle) in [("value", VALUE), ("surrogate", surrogate.as_str())] {
                if hits(&bytes, needle.as_bytes()) > 0 {
                    found.push(format!("shared data {key}: {label}"));
                }
            }
        }
    }
    assert!(found.is_empty(), "{}\n{}", found.join("\n"), d());

    // Both workers refuse, B included (it catches up at its request).
    for (vm, what) in [(a, "A"), (b, "B (lost wake-up)")] {
        let s = gw.chat(vm, &chat_body(&[("user", &text)])).unwrap();
        assert_refused_key_deleted(&s, what, &d);
    }

    // The name again, with a new token the gateway does not hold: the
    // gateway keeps refusing (its token stays a deleted key's), however long.
    let again = service
        .admin_token_file()
        .with_file_name("shop-again.token");
    service
        .cli(&["keys", "create", "shop", "--out", again.to_str().unwrap()])
        .unwrap();
    host.advance(120_000).unwrap();
    gw.pump_feed();
    host.settle().unwrap();
    for (vm, what) in [
        (a, "A after the name was reused"),
        (b, "B after the name was reused"),
    ] {
        let s = gw.chat(vm, &chat_body(&[("user", "Hello")])).unwrap();
        assert_refused_key_deleted(&s, what, &d);
    }
    for vm in host.vms() {
        assert_eq!(vm.crashed(), None, "{}", d());
    }
    service.stop();
}

#[test]
fn an_entries_call_that_hears_of_the_deletion_drops_the_workers_vault_at_once() {
    let mut service = ControlService::start().unwrap();
    let token = service.create_key("shop").unwrap();
    let gw = Gateway::start(&config(&token, ""), 1, service.addr()).unwrap();
    let host = &gw.host;
    let d = || host.dump();
    let a = gw.worker(1);
    host.advance(1000).unwrap();
    let known = format!("Write to {VALUE}");
    let s = gw.chat(a, &chat_body(&[("user", &known)])).unwrap();
    assert!(s.request_complete(), "{}", d());
    s.finish().unwrap();

    // Deleted while the feed call is held: only the entries call can tell.
    service.cli(&["keys", "delete", "shop", "--yes"]).unwrap();
    let entries_before = gw.dispatched(CallKind::Entries).len();
    let s = gw
        .chat(a, &chat_body(&[("user", "Call +39 347 555 0199 please")]))
        .unwrap();
    assert_eq!(
        gw.dispatched(CallKind::Entries).len(),
        entries_before + 1,
        "{}",
        d()
    );
    assert_refused_key_deleted(&s, "the request with a new value", &d);

    // A known value needs no call, yet the vault is gone: refused too.
    let s = gw.chat(a, &chat_body(&[("user", &known)])).unwrap();
    assert_refused_key_deleted(&s, "the request with a known value", &d);
    assert_eq!(
        gw.dispatched(CallKind::Entries).len(),
        entries_before + 1,
        "{}",
        d()
    );
    service.stop();
}
