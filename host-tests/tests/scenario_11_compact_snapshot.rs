//! Scenario 11: the compact snapshot through the built `.wasm`, against the
//! real control service. The sync service asks for the compact form and
//! keeps it in shared data as it came; a forget of a value the snapshot
//! holds rewrites that copy without it (no byte of the value or its
//! surrogate left, still the compact form), and a worker rebuilding from it
//! masks the value afresh.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use host_tests::control::ControlService;
use host_tests::gateway::{
    chat_body, config, contains, surrogate_in_snapshot, Gateway, ENTRIES_PATH, SNAPSHOT_PATH, VM_ID,
};
use latet_core::wire::{decode_snapshot, is_compact_snapshot};

const VALUE: &str = "giulia.neri@acme.it";

#[test]
fn the_shared_snapshot_is_compact_and_a_forget_scrubs_it() {
    let service = ControlService::start().unwrap();
    let token = service.create_key("shop").unwrap();
    let eraser = service.add_token("shop", "erasure", &["--forget"]).unwrap();
    // The value is in the vault before the gateway starts: it travels in
    // the snapshot, not in an event.
    let body = format!(r#"{{"version":1,"values":[{{"kind":"email","value":"{VALUE}"}}]}}"#);
    let made = service.call("POST", ENTRIES_PATH, Some(&token), Some(body.as_bytes()));
    assert_eq!(made.status, 200, "{}", made.text());
    let json = service.call("GET", SNAPSHOT_PATH, Some(&token), None);
    let surrogate = surrogate_in_snapshot(&json.body, VALUE).unwrap();

    let gw = Gateway::start(&config(&token, ""), 2, service.addr()).unwrap();
    let host = &gw.host;
    let d = || host.dump();
    host.advance(1000).unwrap();
    assert_eq!(gw.published_seq(), Some(1), "{}", d());
    let shared = gw.shared_snapshot().unwrap();
    assert!(is_compact_snapshot(&shared), "{}", d());
    let snapshot = decode_snapshot(&shared).unwrap();
    assert_eq!(snapshot.entries.len(), 2, "the address and its domain");
    assert!(contains(&shared, VALUE.as_bytes()));
    let tag = host.shared_data(VM_ID, "latet.v1.snapshot_tag").unwrap().0;
    // `<seq> <etag>`: the snapshot's position and the control service's tag.
    assert!(
        String::from_utf8_lossy(&tag).starts_with("1 \"c1-"),
        "{}",
        d()
    );

    // A worker masks the value with the snapshot's surrogate.
    let s = gw
        .chat(
            gw.worker(1),
            &chat_body(&[("user", &format!("Write to {VALUE}"))]),
        )
        .unwrap();
    assert!(s.request_complete(), "{}", d());
    assert!(
        contains(&s.upstream_body(), surrogate.as_bytes()),
        "{}",
        d()
    );
    s.finish().unwrap();

    let forgot = service.forget(&eraser, &format!("[\"{VALUE}\"]"));
    assert_eq!(forgot.status, 200, "{}", forgot.text());
    assert_eq!(gw.settle_feed(), Some(2), "{}", d());
    let shared = gw.shared_snapshot().unwrap();
    assert!(is_compact_snapshot(&shared), "{}", d());
    for key in gw.value_keys() {
        let (bytes, _) = host.shared_data(VM_ID, &key).unwrap_or_default();
        assert!(!contains(&bytes, VALUE.as_bytes()), "{key} {}", d());
        assert!(!contains(&bytes, surrogate.as_bytes()), "{key} {}", d());
    }
    let scrubbed = decode_snapshot(&shared).unwrap();
    assert_eq!(scrubbed.seq, 1, "still the snapshot's own position");
    assert_eq!(scrubbed.entries.len(), 1, "the domain stays (rule V5)");
    let tag = host.shared_data(VM_ID, "latet.v1.snapshot_tag").unwrap().0;
    assert!(tag.is_empty(), "the tag named the unscrubbed bytes");
}
