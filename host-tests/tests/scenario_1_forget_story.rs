//! Scenario 1: the forget story on two workers, against the real control
//! service on loopback (key and tokens made with its CLI). Worker B never
//! gets the broadcast of the forget (its queue message is dropped): it must
//! still catch up at its next request, re-mask the resent history with the
//! new-generation surrogate, decline the old one in an answer and restore
//! the new one.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use host_tests::control::ControlService;
use host_tests::gateway::{
    answer_json, chat_answer, chat_body, config, contains, surrogate_in_snapshot, CallKind,
    Gateway, SNAPSHOT_PATH,
};

const VALUE: &str = "mario.rossi@acme.it";
const APPLIED: &str = "latet_forget_events_applied_total";
const DECLINED: &str = "latet_restore_declined_retired_total";

fn surrogate_now(service: &ControlService, token: &str) -> Option<String> {
    let snapshot = service.call("GET", SNAPSHOT_PATH, Some(token), None);
    assert_eq!(snapshot.status, 200, "{}", snapshot.text());
    surrogate_in_snapshot(&snapshot.body, VALUE)
}

#[test]
fn forget_story_on_two_workers_with_a_lost_broadcast() {
    let mut service = ControlService::start().unwrap();
    let token = service.create_key("shop").unwrap();
    let eraser = service.add_token("shop", "erasure", &["--forget"]).unwrap();
    let gw = Gateway::start(&config(&token, ""), 2, service.addr()).unwrap();
    let host = &gw.host;
    let d = || host.dump();
    let (a, b) = (gw.worker(1), gw.worker(2));

    // The sync service's first tick takes the snapshot (an empty vault).
    host.advance(1000).unwrap();
    assert_eq!(gw.published_seq(), Some(0), "{}", d());

    // Worker A masks a new value: one entries callout, generation 1.
    let first_text = format!("Please write to {VALUE} about the invoice");
    let s = gw.chat(a, &chat_body(&[("user", &first_text)])).unwrap();
    assert!(s.request_complete(), "{}", d());
    let upstream = s.upstream_body();
    let old = surrogate_now(&service, &token).expect("the vault holds the value");
    assert!(!contains(&upstream, VALUE.as_bytes()), "{}", d());
    assert!(contains(&upstream, old.as_bytes()), "{}", d());
    answer_json(&s, &chat_answer(&format!("Done: I wrote to {old}."))).unwrap();
    assert!(
        contains(
            &s.downstream_body(),
            format!("I wrote to {VALUE}").as_bytes()
        ),
        "A restores its own surrogate\n{}",
        d()
    );
    s.finish().unwrap();

    // The added event reaches both workers.
    assert_eq!(gw.settle_feed(), Some(1), "{}", d());

    // Forget through the apps API, with a token that holds `forget`.
    let forgot = service.forget(&eraser, &format!("[\"{VALUE}\"]"));
    assert_eq!(forgot.status, 200, "{}", forgot.text());
    assert!(
        forgot.text().contains("\"forgotten\":1"),
        "{}",
        forgot.text()
    );
    assert_eq!(surrogate_now(&service, &token), None);

    // The poller publishes the forget; B's wake-up message is lost.
    host.hold_queues(true);
    gw.pump_feed();
    assert_eq!(gw.published_seq(), Some(2), "{}", d());
    let dropped = host.drop_queue_messages_to(b.name());
    assert!(dropped >= 1, "B had a message to lose\n{}", d());
    host.hold_queues(false);
    host.settle().unwrap();
    assert_eq!(gw.counter_of(a, APPLIED), 1, "A applied it\n{}", d());
    assert_eq!(gw.counter_of(b, APPLIED), 0, "B never heard\n{}", d());

    // B's next request resends the history (values as the user sees them).
    let history = chat_body(&[
        ("user", &first_text),
        ("assistant", &format!("Done: I wrote to {VALUE}.")),
        ("user", "Thanks. Send it again, please."),
    ]);
    let entries_before = gw.dispatched(CallKind::Entries).len();
    let s = gw.chat(b, &history).unwrap();
    assert_eq!(gw.counter_of(b, APPLIED), 1, "B caught up first\n{}", d());
    assert!(s.request_complete(), "{}", d());
    assert_eq!(
        gw.dispatched(CallKind::Entries).len(),
        entries_before + 1,
        "the forgotten value is new again: one entries call\n{}",
        d()
    );
    let new = surrogate_now(&service, &token).expect("a new-generation entry");
    assert_ne!(new, old, "a forgotten surrogate is never reissued");
    let upstream = s.upstream_body();
    assert!(!contains(&upstream, VALUE.as_bytes()), "{}", d());
    assert!(
        !contains(&upstream, old.as_bytes()),
        "never the old surrogate\n{}",
        d()
    );
    assert!(contains(&upstream, new.as_bytes()), "{}", d());

    // An answer carrying the old surrogate: left as written but for its
    // company domain (forgetting an address leaves the domain: rule V5,
    // docs/product-rules.md#v5), and counted.
    let declined_before = gw.counter_of(b, DECLINED);
    answer_json(&s, &chat_answer(&format!("I had written to {old}."))).unwrap();
    let answer = s.downstream_body();
    let old_local = old.rsplit_once('@').expect("an address surrogate").0;
    let company = VALUE.rsplit_once('@').expect("an address").1;
    let old_restored = format!("{old_local}@{company}");
    assert!(contains(&answer, old_restored.as_bytes()), "{}", d());
    assert!(!contains(&answer, VALUE.as_bytes()), "{}", d());
    assert!(
        gw.counter_of(b, DECLINED) > declined_before,
        "the declined counter moves\n{}",
        d()
    );
    s.finish().unwrap();

    // The same history again on B (from its memo now), answered with the
    // new surrogate: restored.
    let s = gw.chat(b, &history).unwrap();
    assert!(contains(&s.upstream_body(), new.as_bytes()), "{}", d());
    answer_json(&s, &chat_answer(&format!("Sent again to {new}."))).unwrap();
    assert!(
        contains(
            &s.downstream_body(),
            format!("Sent again to {VALUE}").as_bytes()
        ),
        "{}",
        d()
    );
    s.finish().unwrap();

    // A, which did hear the forget, also masks with the new surrogate.
    let s = gw.chat(a, &history).unwrap();
    let upstream = s.upstream_body();
    assert!(contains(&upstream, new.as_bytes()), "{}", d());
    assert!(!contains(&upstream, old.as_bytes()), "{}", d());
    s.finish().unwrap();

    // Every VM is still alive.
    for vm in host.vms() {
        assert_eq!(vm.crashed(), None, "{}", d());
    }
    service.stop();
}
