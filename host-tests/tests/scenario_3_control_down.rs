//! Scenario 3: the control service is down when the gateway starts → every
//! request gets the configured failure answer and nothing unmasked goes
//! upstream; it comes back → the gateway serves. Also: it goes down while
//! serving → a request with a new value takes the failure mode (`reject`:
//! 503; `redact`: placeholders), known values are still masked.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use host_tests::control::ControlService;
use host_tests::gateway::{chat_body, config, contains, CallKind, Gateway};

const VALUE: &str = "anna.neri@brightwater-labs.com";
const KNOWN: &str = "paolo.conti@brightwater-labs.com";

/// (failure mode, status and error type when entries are unavailable)
const MODES: [(&str, Option<(u32, &str)>); 2] = [
    ("reject", Some((503, "latet_entries_unavailable"))),
    ("redact", None),
];

#[test]
fn down_at_start_then_back_then_down_while_serving() {
    for (mode, entries_failure) in MODES {
        let mut service = ControlService::start().unwrap();
        let token = service.create_key("shop").unwrap();
        service.stop();
        let extra = format!("\"failureMode\": \"{mode}\"");
        let gw = Gateway::start(&config(&token, &extra), 2, service.addr()).unwrap();
        let host = &gw.host;
        let d = || format!("mode {mode}\n{}", host.dump());

        // Down at start: the snapshot call fails (503, dead endpoint).
        host.advance(1000).unwrap();
        assert!(!gw.dispatched(CallKind::Snapshot).is_empty(), "{}", d());
        assert_eq!(gw.published_seq(), None, "{}", d());
        for worker in &gw.workers {
            let s = gw
                .chat(
                    worker,
                    &chat_body(&[("user", &format!("Write to {VALUE}"))]),
                )
                .unwrap();
            let reply = s.local_reply().expect("a local reply");
            assert_eq!(reply.status, 503, "{}", d());
            assert!(
                String::from_utf8_lossy(&reply.body).contains("latet_vault_not_ready"),
                "{}",
                d()
            );
            assert!(!s.request_complete(), "nothing forwarded\n{}", d());
            assert!(s.upstream_body().is_empty(), "nothing forwarded\n{}", d());
            s.finish().unwrap();
        }
        assert!(
            gw.host.metric("latet_feed_errors_total").unwrap_or(0) >= 1,
            "{}",
            d()
        );

        // Back (same database, same port): the poller's retry takes the
        // snapshot, and requests are served.
        service.restart().unwrap();
        host.advance(35_000).unwrap();
        assert_eq!(gw.published_seq(), Some(0), "{}", d());
        let s = gw
            .chat(
                gw.worker(1),
                &chat_body(&[("user", &format!("Write to {KNOWN}"))]),
            )
            .unwrap();
        assert!(s.local_reply().is_none(), "{}", d());
        assert!(s.request_complete(), "{}", d());
        assert!(!contains(&s.upstream_body(), KNOWN.as_bytes()), "{}", d());
        s.finish().unwrap();
        gw.settle_feed();

        // Down while serving: a known value is masked from the index; a new
        // one takes the failure mode, never forwarded as it is.
        service.stop();
        let text = format!("Write to {KNOWN} and to {VALUE}");
        let s = gw
            .chat(gw.worker(2), &chat_body(&[("user", &text)]))
            .unwrap();
        match entries_failure {
            Some((status, error_type)) => {
                let reply = s.local_reply().expect("a local reply");
                assert_eq!(reply.status, status, "{}", d());
                assert!(
                    String::from_utf8_lossy(&reply.body).contains(error_type),
                    "{}",
                    d()
                );
                assert!(s.upstream_body().is_empty(), "{}", d());
                assert!(!s.request_complete(), "{}", d());
            }
            None => {
                assert!(s.request_complete(), "{}", d());
                let upstream = s.upstream_body();
                assert!(!contains(&upstream, VALUE.as_bytes()), "{}", d());
                assert!(!contains(&upstream, KNOWN.as_bytes()), "{}", d());
                assert!(contains(&upstream, b"[EMAIL]"), "{}", d());
                assert!(
                    host.metric("latet_requests_redacted_total").unwrap_or(0) >= 1,
                    "{}",
                    d()
                );
            }
        }
        s.finish().unwrap();

        // Back again: the new value gets its entry.
        service.restart().unwrap();
        let s = gw
            .chat(gw.worker(2), &chat_body(&[("user", &text)]))
            .unwrap();
        assert!(s.local_reply().is_none(), "{}", d());
        assert!(s.request_complete(), "{}", d());
        let upstream = s.upstream_body();
        assert!(!contains(&upstream, VALUE.as_bytes()), "{}", d());
        assert!(!contains(&upstream, b"[EMAIL]"), "{}", d());
        s.finish().unwrap();
        for vm in host.vms() {
            assert_eq!(vm.crashed(), None, "{}", d());
        }
    }
}
