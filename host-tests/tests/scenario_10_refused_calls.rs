//! Scenario 10: the real control service refuses the gateway's calls, and
//! each cause gets its own answer. A key disabled with `keys disable`: a
//! request with a new value gets 503 `latet_key_disabled` (its entries call
//! answered 403 `key_disabled`), a known value is still masked from the
//! cached vault. The gateway token revoked with `keys revoke-token`: 503
//! `latet_token_refused` the same way. A gateway that starts with the
//! revoked token has no snapshot: its sync service publishes the cause, so
//! its requests say `latet_token_refused`, not just "not ready". Nothing
//! unmasked goes upstream in any of them.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use host_tests::control::ControlService;
use host_tests::gateway::{assert_refused, chat_body, config, contains, CallKind, Gateway};

const KNOWN: &str = "ottavia.brambillasca@vetrerie-orvietane.it";
const NEW: &str = "Call +39 347 555 0187 please";

#[test]
fn a_disabled_key_and_a_revoked_token_are_refused_by_name() {
    let mut service = ControlService::start().unwrap();
    let token = service.create_key("shop").unwrap();
    let gw = Gateway::start(&config(&token, ""), 1, service.addr()).unwrap();
    let host = &gw.host;
    let d = || host.dump();
    let a = gw.worker(1);
    host.advance(1000).unwrap();
    let known = format!("Write to {KNOWN}");
    let s = gw.chat(a, &chat_body(&[("user", &known)])).unwrap();
    assert!(s.request_complete(), "{}", d());
    s.finish().unwrap();

    let cases = [
        (["keys", "disable", "shop"], "latet_key_disabled"),
        (["keys", "enable", "shop"], ""),
        (["keys", "revoke-token", "shop"], "latet_token_refused"),
    ];
    for (command, error_type) in cases {
        let mut args: Vec<&str> = command.to_vec();
        if command[1] == "revoke-token" {
            args.push("default");
        }
        service.cli(&args).unwrap();
        if error_type.is_empty() {
            continue;
        }
        let before = gw.dispatched(CallKind::Entries).len();
        let s = gw.chat(a, &chat_body(&[("user", NEW)])).unwrap();
        assert_eq!(
            gw.dispatched(CallKind::Entries).len(),
            before + 1,
            "{}",
            d()
        );
        assert_refused(&s, 503, error_type, "a new value", &d);
        // Values the vault holds are still masked, without a call.
        let s = gw.chat(a, &chat_body(&[("user", &known)])).unwrap();
        assert!(s.request_complete(), "{}", d());
        assert!(!s.upstream_body().is_empty(), "{}", d());
        assert!(!contains(&s.upstream_body(), KNOWN.as_bytes()), "{}", d());
        s.finish().unwrap();
        assert_eq!(gw.dispatched(CallKind::Entries).len(), before + 1);
    }

    // A gateway starting with the revoked token: no snapshot, and the cause.
    let fresh = Gateway::start(&config(&token, ""), 1, service.addr()).unwrap();
    fresh.host.advance(1000).unwrap();
    assert_eq!(fresh.published_seq(), None, "{}", fresh.host.dump());
    let s = fresh
        .chat(fresh.worker(1), &chat_body(&[("user", &known)]))
        .unwrap();
    let fresh_dump = || fresh.host.dump();
    assert_refused(
        &s,
        503,
        "latet_token_refused",
        "a fresh gateway",
        &fresh_dump,
    );
    for vm in host.vms().into_iter().chain(fresh.host.vms()) {
        assert_eq!(vm.crashed(), None);
    }
    service.stop();
}
