//! Scenario 4: the event feed is lost for longer than
//! `restoreMaxStalenessMs` → answers are not restored (surrogates left as
//! written), the `x-latet-restore: stale` header and the
//! `latet_restore_stale_total` metric say so; the feed comes back → answers are
//! restored again. Against the real control service, stopped and restarted.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use host_tests::control::ControlService;
use host_tests::gateway::{
    answer_json, chat_answer, chat_body, config, contains, header_value, surrogate_in_snapshot,
    Gateway, SNAPSHOT_PATH,
};
use host_tests::HttpStream;

const VALUE: &str = "sara.galli@quayside-partners.co.uk";
const STALENESS_MS: u64 = 5_000;

/// Sends a request with the value and answers it with `answer_text`;
/// returns (downstream body, x-latet-restore header).
fn round_trip(gw: &Gateway, answer_text: &str) -> (Vec<u8>, Option<String>, HttpStream) {
    let s = gw
        .chat(
            gw.worker(1),
            &chat_body(&[("user", &format!("Write to {VALUE}"))]),
        )
        .unwrap();
    assert!(s.request_complete(), "{}", gw.host.dump());
    answer_json(&s, &chat_answer(answer_text)).unwrap();
    let header = s
        .downstream_headers()
        .and_then(|headers| header_value(&headers, "x-latet-restore"));
    (s.downstream_body(), header, s)
}

#[test]
fn a_stale_feed_leaves_surrogates_and_says_so_until_it_is_back() {
    let mut service = ControlService::start().unwrap();
    let token = service.create_key("shop").unwrap();
    let extra = format!("\"restoreMaxStalenessMs\": {STALENESS_MS}");
    let gw = Gateway::start(&config(&token, &extra), 1, service.addr()).unwrap();
    let host = &gw.host;
    let d = || host.dump();
    host.advance(1000).unwrap();

    // Fresh feed: restored.
    let s = gw
        .chat(
            gw.worker(1),
            &chat_body(&[("user", &format!("Write to {VALUE}"))]),
        )
        .unwrap();
    s.finish().unwrap();
    let snapshot = service.call("GET", SNAPSHOT_PATH, Some(&token), None);
    let surrogate = surrogate_in_snapshot(&snapshot.body, VALUE).unwrap();
    gw.settle_feed();
    let answer_text = format!("Done, wrote to {surrogate}.");
    let (body, header, s) = round_trip(&gw, &answer_text);
    assert!(contains(&body, VALUE.as_bytes()), "{}", d());
    assert_eq!(header, None, "{}", d());
    s.finish().unwrap();
    let stale_before = host.metric("latet_restore_stale_total").unwrap_or(0);

    // The feed is lost (the service stops) for longer than the limit.
    service.stop();
    for _ in 0..7 {
        gw.pump_feed();
        host.advance(1000).unwrap();
    }
    let (body, header, s) = round_trip(&gw, &answer_text);
    assert_eq!(header.as_deref(), Some("stale"), "{}", d());
    assert!(
        contains(&body, surrogate.as_bytes()),
        "left as written\n{}",
        d()
    );
    assert!(!contains(&body, VALUE.as_bytes()), "{}", d());
    assert_eq!(
        host.metric("latet_restore_stale_total").unwrap_or(0),
        stale_before + 1,
        "{}",
        d()
    );
    // Whole seconds: more than STALENESS_MS is at least its seconds.
    let age = host.metric("latet_feed_age_seconds").unwrap_or(0);
    assert!(
        age >= (STALENESS_MS / 1000) as i64,
        "feed age {age}\n{}",
        d()
    );
    s.finish().unwrap();

    // Streamed answers too.
    let s = gw
        .chat(
            gw.worker(1),
            &chat_body(&[("user", &format!("Write to {VALUE}"))]),
        )
        .unwrap();
    s.response_headers(
        &[(":status", "200"), ("content-type", "text/event-stream")],
        false,
    )
    .unwrap();
    let event = format!(
        "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"to {surrogate}\"}}}}]}}\n\n"
    );
    s.response_body(event.as_bytes(), true).unwrap();
    let headers = s.downstream_headers().unwrap();
    assert_eq!(
        header_value(&headers, "x-latet-restore").as_deref(),
        Some("stale"),
        "{}",
        d()
    );
    assert_eq!(s.downstream_body(), event.as_bytes(), "{}", d());
    s.finish().unwrap();

    // The feed comes back: the poller's next retry is answered, and
    // answers are restored again.
    service.restart().unwrap();
    let lost_since = gw.feed_answered_at_ms();
    for _ in 0..40 {
        gw.pump_feed();
        if gw.feed_answered_at_ms() != lost_since {
            break;
        }
        host.advance(1000).unwrap();
    }
    assert_ne!(
        gw.feed_answered_at_ms(),
        lost_since,
        "the feed answered\n{}",
        d()
    );
    let (body, header, s) = round_trip(&gw, &answer_text);
    assert_eq!(header, None, "{}", d());
    assert!(contains(&body, VALUE.as_bytes()), "restored again\n{}", d());
    s.finish().unwrap();
}
