//! Scenario 2: new values, against the real control service. A request
//! with new values pauses for exactly one entries callout and resumes on
//! its answer; two concurrent requests with the same new value on two
//! workers end with the same surrogate.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use host_tests::control::ControlService;
use host_tests::gateway::{
    chat_body, config, contains, surrogate_in_snapshot, CallKind, Gateway, Route, SNAPSHOT_PATH,
};

fn surrogate_now(service: &ControlService, token: &str, value: &str) -> Option<String> {
    let snapshot = service.call("GET", SNAPSHOT_PATH, Some(token), None);
    assert_eq!(snapshot.status, 200, "{}", snapshot.text());
    surrogate_in_snapshot(&snapshot.body, value)
}

#[test]
fn a_request_with_new_values_pauses_for_one_callout_and_resumes() {
    let service = ControlService::start().unwrap();
    let token = service.create_key("shop").unwrap();
    let gw = Gateway::start(&config(&token, ""), 1, service.addr()).unwrap();
    let host = &gw.host;
    let d = || host.dump();
    host.advance(1000).unwrap();
    gw.route(CallKind::Entries, Route::Hold);

    let (mail, phone) = ("giulia.bianchi@example-shop.it", "+39 347 555 0199");
    let text = format!("Contact {mail} or {phone}, and again {mail}.");
    let s = gw
        .chat(gw.worker(1), &chat_body(&[("user", &text)]))
        .unwrap();

    // Paused: nothing upstream, exactly one entries callout asking both.
    assert!(!s.request_complete(), "{}", d());
    assert!(s.upstream_body().is_empty(), "{}", d());
    let pending = gw.pending(CallKind::Entries);
    assert_eq!(pending.len(), 1, "{}", d());
    let asked = String::from_utf8_lossy(&pending[0].body).into_owned();
    assert!(asked.contains(mail) && asked.contains(phone), "{asked}");
    assert_eq!(
        pending[0].header("authorization"),
        Some(&*format!("Bearer {token}"))
    );

    // The control service answers: the request resumes, masked.
    gw.forward_pending(pending[0].token).unwrap();
    assert_eq!(s.request_resumes(), 1, "{}", d());
    assert!(s.request_complete(), "{}", d());
    let upstream = s.upstream_body();
    let mail_surrogate = surrogate_now(&service, &token, mail).unwrap();
    let phone_surrogate = surrogate_now(&service, &token, phone).unwrap();
    assert!(!contains(&upstream, mail.as_bytes()), "{}", d());
    assert!(!contains(&upstream, phone.as_bytes()), "{}", d());
    let masked = String::from_utf8_lossy(&upstream).into_owned();
    assert_eq!(masked.matches(&mail_surrogate).count(), 2, "{masked}");
    assert!(masked.contains(&phone_surrogate), "{masked}");
    assert_eq!(gw.dispatched(CallKind::Entries).len(), 1, "{}", d());
    s.finish().unwrap();

    // The same values again: known now, no callout, no pause.
    let s = gw
        .chat(gw.worker(1), &chat_body(&[("user", &text)]))
        .unwrap();
    assert!(s.request_complete(), "{}", d());
    assert_eq!(s.request_resumes(), 0, "{}", d());
    assert_eq!(gw.dispatched(CallKind::Entries).len(), 1, "{}", d());
    assert_eq!(s.upstream_body(), upstream, "{}", d());
}

#[test]
fn concurrent_requests_with_the_same_new_value_on_two_workers_agree() {
    let service = ControlService::start().unwrap();
    let token = service.create_key("shop").unwrap();
    let gw = Gateway::start(&config(&token, ""), 2, service.addr()).unwrap();
    let host = &gw.host;
    let d = || host.dump();
    host.advance(1000).unwrap();
    gw.route(CallKind::Entries, Route::Hold);

    let value = "luca.verdi@northwind-legal.eu";
    let s1 = gw
        .chat(
            gw.worker(1),
            &chat_body(&[("user", &format!("Mail {value} today"))]),
        )
        .unwrap();
    let s2 = gw
        .chat(
            gw.worker(2),
            &chat_body(&[("user", &format!("Who is {value}?"))]),
        )
        .unwrap();
    let pending = gw.pending(CallKind::Entries);
    assert_eq!(pending.len(), 2, "one callout per worker\n{}", d());
    assert!(!s1.request_complete() && !s2.request_complete(), "{}", d());

    // Answer the second worker first: order must not matter.
    gw.forward_pending(pending[1].token).unwrap();
    gw.forward_pending(pending[0].token).unwrap();
    assert!(s1.request_complete() && s2.request_complete(), "{}", d());
    let surrogate = surrogate_now(&service, &token, value).unwrap();
    for s in [&s1, &s2] {
        let upstream = s.upstream_body();
        assert!(!contains(&upstream, value.as_bytes()), "{}", d());
        assert!(contains(&upstream, surrogate.as_bytes()), "{}", d());
    }

    // After the feed moves, both workers still agree (no second entry).
    gw.settle_feed();
    let s3 = gw
        .chat(
            gw.worker(2),
            &chat_body(&[("user", &format!("Mail {value} today"))]),
        )
        .unwrap();
    assert!(s3.request_complete(), "{}", d());
    assert_eq!(s3.upstream_body(), s1.upstream_body(), "{}", d());
    assert_eq!(gw.dispatched(CallKind::Entries).len(), 2, "{}", d());
}
