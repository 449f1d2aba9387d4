use super::*;
use crate::fake_host::{FakeEnvoy, FakeHost, SentCallout};
use crate::lease;
use crate::shared::{LEASE_KEY, QUEUES_KEY, SNAPSHOT_KEY};
use crate::test_support::*;
use latet_core::wire::{Entry, FeedAnswer};

fn poller(holder: &str) -> (Poller, Metrics) {
    (
        Poller::new(Rc::new(config()), holder.to_string(), "latet".to_string()),
        Metrics::default(),
    )
}

/// A second later the poller asks the feed; the feed answers that a new
/// snapshot is required (its head at `head`). Returns the snapshot request
/// the poller sends then.
fn require_a_snapshot(p: &mut Poller, host: &FakeHost, m: &Metrics, head: u64) -> SentCallout {
    host.advance(1_000);
    let call = host.last_callout().unwrap();
    let required = serde_json::to_vec(&FeedAnswer::SnapshotRequired {
        version: 1,
        oldest: 1,
        head,
    })
    .unwrap();
    p.on_answer(host, m, call.token, &ok(required));
    host.last_callout().unwrap()
}

fn ok(body: Vec<u8>) -> CalloutAnswer {
    CalloutAnswer {
        status: 200,
        body,
        etag: None,
        body_left: 0,
    }
}

fn feed(head: u64, events: Vec<Event>) -> Vec<u8> {
    serde_json::to_vec(&FeedAnswer::Events {
        version: 1,
        head,
        events,
    })
    .unwrap()
}

#[test]
fn snapshot_first_then_the_feed_from_its_position() {
    let host = FakeHost::alone();
    let (mut p, m) = poller("sync");
    p.step(&host, &m);
    let call = host.last_callout().unwrap();
    assert_eq!(call.header(":path"), Some(SNAPSHOT_PATH));
    assert_eq!(call.header("authorization"), Some("Bearer tok-123"));
    assert_eq!(call.cluster, "latet_control");
    // Only one call at a time.
    p.step(&host, &m);
    assert_eq!(host.callouts.borrow().len(), 1);

    assert!(p.on_answer(
        &host,
        &m,
        call.token,
        &ok(snapshot_json(7, 1, vec![mario()]))
    ));
    let state = read_state(&host).unwrap();
    assert_eq!((state.seq, state.snapshot_seq), (7, 7));
    assert_eq!(state.feed_answered_at_ms, host.now_ms_value());
    let next = host.last_callout().unwrap();
    assert_eq!(
        next.header(":path"),
        Some("/_latet/gateway/v1/events?after=7&wait_ms=25000")
    );
}

#[test]
fn feed_events_are_published_in_order_and_workers_woken() {
    let host = FakeHost::alone();
    publish(&host, 3, 1, vec![mario()], &[]);
    let queue = host.queue_register("latet-wake-1").unwrap();
    crate::shared::append_to_list(&host, QUEUES_KEY, "latet-wake-1").unwrap();
    let (mut p, m) = poller("sync");
    p.step(&host, &m);
    let call = host.last_callout().unwrap();
    host.advance(500);
    let events = vec![forgotten(4, &mario(), 2), added(5, vec![giulia()])];
    p.on_answer(&host, &m, call.token, &ok(feed(5, events.clone())));
    assert_eq!(read_events(&host), events);
    let state = read_state(&host).unwrap();
    assert_eq!((state.seq, state.snapshot_seq), (5, 3));
    assert_eq!(state.feed_answered_at_ms, host.now_ms_value());
    assert_eq!(host.queue_dequeue(queue).unwrap(), Some(b"5".to_vec()));
    // An empty answer (the wait ended) still says the feed is alive.
    host.advance(500);
    let call = host.last_callout().unwrap();
    p.on_answer(&host, &m, call.token, &ok(feed(5, vec![])));
    assert_eq!(
        read_state(&host).unwrap().feed_answered_at_ms,
        host.now_ms_value()
    );
    assert_eq!(host.queue_dequeue(queue).unwrap(), None);
}

#[test]
fn a_forget_rewrites_the_shared_snapshot_and_added_events_without_the_value() {
    let host = FakeHost::alone();
    publish(&host, 3, 1, vec![mario(), giulia()], &[]);
    let (mut p, m) = poller("sync");
    p.step(&host, &m);
    let call = host.last_callout().unwrap();
    let carol = entry(
        3,
        "Carla Verdi",
        "Anna Neri",
        latet_core::kind::Kind::Name,
        1,
    );
    p.on_answer(
        &host,
        &m,
        call.token,
        &ok(feed(4, vec![added(4, vec![carol.clone()])])),
    );
    // The forget of Mario (in the snapshot) and Carla (in an added event).
    let call = host.last_callout().unwrap();
    let forget = Event {
        seq: 5,
        body: latet_core::wire::EventBody::Forgotten {
            ids: vec![mario().id, carol.id],
            retired: vec![retired(&mario().surrogate), retired(&carol.surrogate)],
            generation: 2,
        },
    };
    p.on_answer(&host, &m, call.token, &ok(feed(5, vec![forget.clone()])));
    assert_eq!(read_events(&host), vec![added(4, vec![]), forget]);
    let snapshot = latet_core::wire::decode_snapshot(&shared_snapshot(&host).unwrap()).unwrap();
    assert_eq!(snapshot.entries, vec![giulia()]);
    assert_eq!(snapshot.seq, 3, "still the snapshot's own position");
    let mut values = snapshot_values(&host);
    values.push((EVENTS_KEY.into(), host.shared_value(EVENTS_KEY).unwrap()));
    for (key, value) in values {
        let text = String::from_utf8_lossy(&value).into_owned();
        for gone in ["Mario Rossi", "Laura Bianchi", "Carla Verdi", "Anna Neri"] {
            assert!(!text.contains(gone), "{key} still holds an entry");
        }
    }
    assert_eq!(read_state(&host).unwrap().seq, 5);
}

#[test]
fn snapshot_required_and_gaps_take_a_new_snapshot() {
    for answer in [
        serde_json::to_vec(&FeedAnswer::SnapshotRequired {
            version: 1,
            oldest: 50,
            head: 60,
        })
        .unwrap(),
        feed(60, vec![added(9, vec![])]),
    ] {
        let host = FakeHost::alone();
        publish(&host, 3, 1, vec![mario()], &[]);
        let (mut p, m) = poller("sync");
        p.step(&host, &m);
        let call = host.last_callout().unwrap();
        p.on_answer(&host, &m, call.token, &ok(answer));
        assert_eq!(
            host.last_callout().unwrap().header(":path"),
            Some(SNAPSHOT_PATH)
        );
        assert_eq!(read_state(&host).unwrap().seq, 3, "nothing past the gap");
    }
}

#[test]
fn failures_back_off_and_leave_the_feed_age_growing() {
    let host = FakeHost::alone();
    publish(&host, 3, 1, vec![], &[]);
    let answered = read_state(&host).unwrap().feed_answered_at_ms;
    let (mut p, m) = poller("sync");
    let m2 = Metrics::define(&host);
    p.step(&host, &m);
    let call = host.last_callout().unwrap();
    p.on_answer(
        &host,
        &m2,
        call.token,
        &CalloutAnswer {
            status: 503,
            ..CalloutAnswer::default()
        },
    );
    assert_eq!(host.metric(crate::metrics::FEED_ERRORS), 1);
    assert_eq!(read_state(&host).unwrap().feed_answered_at_ms, answered);
    p.step(&host, &m);
    assert_eq!(host.callouts.borrow().len(), 1, "backing off");
    host.advance(60_000);
    p.step(&host, &m);
    assert_eq!(host.callouts.borrow().len(), 2);
    // A dispatch refused (unknown cluster) is a failure too.
    let host = FakeHost::alone();
    host.dispatch_fails.set(true);
    let (mut p, _) = poller("sync");
    p.step(&host, &m2);
    assert!(!p.is_waiting());
}

#[test]
fn the_lease_passes_on_when_its_holder_stops_renewing() {
    let envoy = Rc::new(FakeEnvoy::default());
    let a = FakeHost::new(Rc::clone(&envoy));
    let b = FakeHost::new(Rc::clone(&envoy));
    let lease_ms = 10_000;
    assert!(lease::hold(&a, "worker-1", lease_ms));
    assert!(!lease::hold(&b, "worker-2", lease_ms));
    a.advance(5_000);
    assert!(lease::hold(&a, "worker-1", lease_ms), "renewed");
    b.advance(9_000);
    assert!(!lease::hold(&b, "worker-2", lease_ms), "still renewed by a");
    // a stops renewing (its VM went away).
    b.advance(1_001);
    assert!(lease::hold(&b, "worker-2", lease_ms));
    assert!(!lease::hold(&a, "worker-1", lease_ms));
    // The singleton takes it whoever holds it; workers then stand by.
    assert!(lease::seize(&a, SYNC_HOLDER_NAME, lease_ms));
    assert!(!lease::hold(&b, "worker-2", lease_ms));
    let lease: crate::shared::Lease =
        serde_json::from_slice(&a.shared_value(LEASE_KEY).unwrap()).unwrap();
    assert_eq!(lease.holder, SYNC_HOLDER_NAME);
}

const SYNC_HOLDER_NAME: &str = crate::shared::SYNC_HOLDER;

#[test]
fn a_poller_that_lost_the_lease_does_not_publish() {
    let host = FakeHost::alone();
    publish(&host, 3, 1, vec![], &[]);
    assert!(lease::hold(&host, "worker-1", 10_000));
    let (mut p, m) = poller("worker-1");
    p.step(&host, &m);
    let call = host.last_callout().unwrap();
    assert!(lease::seize(&host, SYNC_HOLDER_NAME, 10_000));
    p.on_answer(&host, &m, call.token, &ok(feed(4, vec![added(4, vec![])])));
    assert_eq!(read_state(&host).unwrap().seq, 3);
    assert!(!p.is_waiting());
}

#[test]
fn refused_calls_publish_their_cause_and_keep_the_cached_vault() {
    use crate::shared::{read_sync_cause, SYNC_CAUSE_KEY};
    let host = FakeHost::alone();
    publish(&host, 3, 1, vec![mario()], &[]);
    let (mut p, m) = poller("sync");
    let cases = [
        (401, &b""[..], Refusal::TokenRefused),
        (
            403,
            &br#"{"error":"key_disabled","message":"m"}"#[..],
            Refusal::KeyDisabled,
        ),
        (
            403,
            &br#"{"error":"forbidden","message":"m"}"#[..],
            Refusal::TokenRefused,
        ),
    ];
    for (status, body, cause) in cases {
        host.advance(60_000);
        p.step(&host, &m);
        let call = host.last_callout().unwrap();
        let answer = CalloutAnswer {
            status,
            body: body.to_vec(),
            etag: None,
            body_left: 0,
        };
        assert!(p.on_answer(&host, &m, call.token, &answer));
        assert_eq!(read_sync_cause(&host), Some(cause), "status {status}");
        assert!(
            host.all_logs().contains(cause.error_type()),
            "{}",
            host.all_logs()
        );
        // The cached vault stays published.
        assert_eq!(read_state(&host).unwrap().seq, 3);
        assert!(shared_snapshot(&host).is_some_and(|s| !s.is_empty()));
    }
    // An answer clears the cause.
    host.advance(60_000);
    p.step(&host, &m);
    let call = host.last_callout().unwrap();
    p.on_answer(&host, &m, call.token, &ok(feed(3, vec![])));
    assert_eq!(read_sync_cause(&host), None);
    assert_eq!(host.shared_value(SYNC_CAUSE_KEY).unwrap(), b"");

    // A cluster Envoy does not know: named in the log, published.
    let host = FakeHost::alone();
    host.dispatch_fails.set(true);
    let (mut p, m) = poller("sync");
    p.step(&host, &m);
    assert_eq!(read_sync_cause(&host), Some(Refusal::ControlClusterUnknown));
    assert!(
        host.all_logs()
            .contains("no cluster named \"latet_control\" (controlCluster)"),
        "{}",
        host.all_logs()
    );
}

#[test]
fn the_snapshot_is_asked_compact_and_kept_as_it_came_with_its_tag() {
    use crate::shared::{read_snapshot_tag, SnapshotTag};
    let host = FakeHost::alone();
    let (mut p, m) = poller("sync");
    p.step(&host, &m);
    let call = host.last_callout().unwrap();
    assert_eq!(call.header("accept"), Some(SNAPSHOT_MEDIA_TYPE));
    assert_eq!(call.header("if-none-match"), None, "nothing shared yet");
    let compact = snapshot_compact(7, 1, vec![mario(), giulia()]);
    let answer = CalloutAnswer {
        status: 200,
        body: compact.clone(),
        etag: Some("\"c1-k1-g1-s7\"".into()),
        body_left: 0,
    };
    p.on_answer(&host, &m, call.token, &answer);
    assert_eq!(shared_snapshot(&host).unwrap(), compact, "as it came");
    assert_eq!(
        read_snapshot_tag(&host),
        Some(SnapshotTag {
            etag: "\"c1-k1-g1-s7\"".into(),
            seq: 7
        })
    );
    let state = read_state(&host).unwrap();
    assert_eq!((state.seq, state.snapshot_seq), (7, 7));

    // A new snapshot is wanted (the feed says so): the tag goes along, and
    // a 304 publishes the shared one again at its position.
    let call = require_a_snapshot(&mut p, &host, &m, 7);
    assert_eq!(call.header(":path"), Some(SNAPSHOT_PATH));
    assert_eq!(call.header("if-none-match"), Some("\"c1-k1-g1-s7\""));
    host.advance(1_000);
    let unchanged = CalloutAnswer {
        status: 304,
        ..CalloutAnswer::default()
    };
    assert!(p.on_answer(&host, &m, call.token, &unchanged));
    assert_eq!(shared_snapshot(&host).unwrap(), compact);
    let state = read_state(&host).unwrap();
    assert_eq!((state.seq, state.snapshot_seq), (7, 7));
    assert_eq!(state.feed_answered_at_ms, host.now_ms_value());
    assert_eq!(
        host.last_callout().unwrap().header(":path"),
        Some("/_latet/gateway/v1/events?after=7&wait_ms=25000"),
        "back on the feed"
    );
}

#[test]
fn a_json_snapshot_is_kept_compact_and_a_garbled_one_is_refused() {
    use crate::shared::read_snapshot_tag;
    let host = FakeHost::alone();
    let (mut p, m) = poller("sync");
    p.step(&host, &m);
    let call = host.last_callout().unwrap();
    let answer = CalloutAnswer {
        status: 200,
        body: snapshot_json(4, 1, vec![mario()]),
        etag: Some("\"json-k1-g1-s4\"".into()),
        body_left: 0,
    };
    p.on_answer(&host, &m, call.token, &answer);
    assert_eq!(
        shared_snapshot(&host).unwrap(),
        snapshot_compact(4, 1, vec![mario()])
    );
    assert_eq!(read_snapshot_tag(&host), None, "the tag named the JSON");

    let host = FakeHost::alone();
    let (mut p, m) = poller("sync");
    p.step(&host, &m);
    let call = host.last_callout().unwrap();
    let mut cut = snapshot_compact(4, 1, vec![mario()]);
    cut.pop();
    p.on_answer(&host, &m, call.token, &ok(cut));
    assert_eq!(read_state(&host), None);
    assert!(shared_snapshot(&host).is_none());
    assert!(host.all_logs().contains("snapshot refused"));
    assert!(!host.all_logs().contains("Mario"));
}

#[test]
fn a_forget_scrubs_the_compact_shared_snapshot_and_drops_its_tag() {
    use crate::shared::{read_snapshot_tag, write_snapshot_tag, SnapshotTag};
    let host = FakeHost::alone();
    publish(&host, 3, 1, vec![mario(), giulia()], &[]);
    write_snapshot_tag(
        &host,
        &SnapshotTag {
            etag: "\"c1-k1-g1-s3\"".into(),
            seq: 3,
        },
    )
    .unwrap();
    let (mut p, m) = poller("sync");
    p.step(&host, &m);
    let call = host.last_callout().unwrap();
    p.on_answer(
        &host,
        &m,
        call.token,
        &ok(feed(4, vec![forgotten(4, &mario(), 2)])),
    );
    let shared = shared_snapshot(&host).unwrap();
    // Byte-exact: what a fresh encoding of the vault without Mario gives.
    assert_eq!(shared, snapshot_compact(3, 1, vec![giulia()]));
    for (key, value) in snapshot_values(&host) {
        let text = String::from_utf8_lossy(&value);
        assert!(
            !text.contains("Mario Rossi") && !text.contains("Laura Bianchi"),
            "{key} still holds Mario"
        );
    }
    assert_eq!(read_snapshot_tag(&host), None);
    // A worker rebuilding from it never sees Mario.
    let mut v = crate::vault::WorkerVault::new(
        latet_core::detect::Detectors::new(&config().detectors).unwrap(),
        1 << 20,
    );
    assert!(v.catch_up(&host).current);
    assert!(v.index().by_value("Mario Rossi").is_none());
    assert!(v.index().by_value("Giulia Neri").is_some());
}

/// The snapshot in several parts: a forget rewrites the parts holding the
/// forgotten entries (and only them), every worker reads the scrubbed one,
/// and a deleted key empties the manifest and every part.
#[test]
fn a_snapshot_in_parts_is_scrubbed_part_by_part_and_emptied_with_its_key() {
    let host = FakeHost::alone();
    let (p, m) = poller("sync");
    let mut p = p.with_part_bytes(1);
    p.step(&host, &m);
    let call = host.last_callout().unwrap();
    let carla = entry(
        3,
        "Carla Verdi",
        "Anna Neri",
        latet_core::kind::Kind::Name,
        1,
    );
    let all = vec![mario(), giulia(), carla.clone()];
    p.on_answer(&host, &m, call.token, &ok(snapshot_compact(3, 1, all)));
    assert_eq!(
        snapshot_values(&host)
            .iter()
            .filter(|(key, v)| key.as_str() != SNAPSHOT_KEY && !v.is_empty())
            .count(),
        3,
        "one part an entry"
    );
    let before = snapshot_values(&host);
    let call = host.last_callout().unwrap();
    p.on_answer(
        &host,
        &m,
        call.token,
        &ok(feed(4, vec![forgotten(4, &mario(), 2)])),
    );
    assert_eq!(
        shared_snapshot(&host).unwrap(),
        snapshot_compact(3, 1, vec![giulia(), carla])
    );
    let after = snapshot_values(&host);
    let changed: Vec<&str> = after
        .iter()
        .zip(&before)
        .filter(|(a, b)| a != b)
        .map(|(a, _)| a.0.as_str())
        .collect();
    assert_eq!(changed, [SNAPSHOT_KEY, "latet.v1.snapshot.0"]);
    for (key, value) in &after {
        let text = String::from_utf8_lossy(value);
        assert!(
            !text.contains("Mario Rossi") && !text.contains("Laura Bianchi"),
            "{key}"
        );
    }
    // The key is deleted: nothing of the vault is left in shared data.
    let call = host.last_callout().unwrap();
    let gone = CalloutAnswer {
        status: 410,
        body: br#"{"error":"key_deleted","message":"m"}"#.to_vec(),
        etag: None,
        body_left: 0,
    };
    p.on_answer(&host, &m, call.token, &gone);
    assert!(read_state(&host).unwrap().key_deleted);
    for (key, value) in snapshot_values(&host) {
        assert!(value.is_empty(), "{key} still holds bytes");
    }
}

/// A compact snapshot answer the VM was handed only the head of (the sync
/// service's glue reads large answers in windows): it is checked whole,
/// then published in parts read a window at a time, and a damaged one is
/// refused before anything is written.
#[test]
fn a_snapshot_read_in_windows_is_published_in_parts_and_a_damaged_one_is_not() {
    let people: Vec<Entry> = (1..=200)
        .map(|i| {
            entry(
                i,
                &format!("Person Number {i:03}"),
                &format!("Alias Number {i:03}"),
                latet_core::kind::Kind::Name,
                1,
            )
        })
        .collect();
    let compact = snapshot_compact(9, 1, people);
    let windowed = |body: &[u8]| CalloutAnswer {
        status: 200,
        body: body[..64].to_vec(),
        etag: Some("\"c1-k1-g1-s9\"".into()),
        body_left: body.len() - 64,
    };
    let host = FakeHost::alone();
    let (p, m) = poller("sync");
    let mut p = p.with_part_bytes(300);
    // An earlier snapshot is published; a damaged answer leaves it whole.
    p.step(&host, &m);
    let call = host.last_callout().unwrap();
    p.on_answer(
        &host,
        &m,
        call.token,
        &ok(snapshot_compact(2, 1, vec![mario()])),
    );
    let call = require_a_snapshot(&mut p, &host, &m, 9);
    let mut damaged = compact.clone();
    damaged.pop();
    *host.callout_body.borrow_mut() = damaged.clone();
    let before = snapshot_values(&host);
    p.on_answer(&host, &m, call.token, &windowed(&damaged));
    assert_eq!(snapshot_values(&host), before, "nothing written");
    assert_eq!(
        shared_snapshot(&host).unwrap(),
        snapshot_compact(2, 1, vec![mario()])
    );
    assert!(host.all_logs().contains("snapshot refused"));
    // The whole answer, read in windows.
    host.advance(60_000);
    p.step(&host, &m);
    let call = host.last_callout().unwrap();
    assert_eq!(call.header(":path"), Some(SNAPSHOT_PATH));
    *host.callout_body.borrow_mut() = compact.clone();
    host.callout_body_reads.borrow_mut().clear();
    p.on_answer(&host, &m, call.token, &windowed(&compact));
    assert_eq!(shared_snapshot(&host).unwrap(), compact);
    let state = read_state(&host).unwrap();
    assert_eq!((state.seq, state.snapshot_seq), (9, 9));
    assert_eq!(
        crate::shared::read_snapshot_tag(&host).map(|t| t.seq),
        Some(9)
    );
    let reads = host.callout_body_reads.borrow().clone();
    assert!(reads.len() > 10, "{reads:?}");
    assert!(
        reads.iter().all(|len| *len <= 4096 && *len < compact.len()),
        "{reads:?}"
    );
    assert!(snapshot_values(&host).len() > 5, "in parts");
    // Any other answer handed in part is read whole (a feed answer).
    let call = host.last_callout().unwrap();
    let events = feed(10, vec![forgotten(10, &mario(), 2)]);
    *host.callout_body.borrow_mut() = events.clone();
    let answer = CalloutAnswer {
        status: 200,
        body: events[..10].to_vec(),
        etag: None,
        body_left: events.len() - 10,
    };
    p.on_answer(&host, &m, call.token, &answer);
    assert_eq!(read_state(&host).unwrap().seq, 10);
}

/// Review finding: shared data outlives a plugin reload in one Envoy, so a
/// new build can find an earlier build's whole compact snapshot under the
/// manifest's key, with its still-valid tag. A 304 then republished it:
/// no worker can read it (not a manifest), so every worker without a
/// vault refuses until the vault changes. A 304 keeps the shared snapshot
/// only while it can be read.
#[test]
fn a_304_does_not_keep_a_shared_snapshot_no_worker_can_read() {
    let host = FakeHost::alone();
    let (mut p, m) = poller("sync");
    p.step(&host, &m);
    let call = host.last_callout().unwrap();
    let compact = snapshot_compact(7, 1, vec![mario(), giulia()]);
    let answer = CalloutAnswer {
        status: 200,
        body: compact.clone(),
        etag: Some("\"c1-k1-g1-s7\"".into()),
        body_left: 0,
    };
    p.on_answer(&host, &m, call.token, &answer);
    // The earlier build's form: the whole snapshot under the key.
    host.put_shared(SNAPSHOT_KEY, &compact);
    let call = require_a_snapshot(&mut p, &host, &m, 7);
    assert_eq!(call.header("if-none-match"), Some("\"c1-k1-g1-s7\""));
    host.advance(1_000);
    let before = read_state(&host).unwrap().feed_answered_at_ms;
    let unchanged = CalloutAnswer {
        status: 304,
        ..CalloutAnswer::default()
    };
    p.on_answer(&host, &m, call.token, &unchanged);
    assert!(
        crate::shared_snapshot::read_snapshot(&host).is_some()
            || read_state(&host).unwrap().feed_answered_at_ms == before,
        "a 304 republished a shared snapshot no worker can read"
    );
}
