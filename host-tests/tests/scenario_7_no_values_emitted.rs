//! Scenario 7: at trace level, through a run that takes every path the
//! filter has (new values, memo, whole and streamed restores, a forget and
//! a declined old surrogate, refusals, the control service down in both
//! failure modes, a stale feed), no log line, no metric name and no local
//! reply carries a value, a surrogate or the gateway token. Every string
//! the VMs emitted is scanned.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use host_tests::control::ControlService;
use host_tests::gateway::{
    answer_json, chat_answer, chat_body, config, surrogate_in_snapshot, Gateway, CHAT_PATH,
    FILTER_ROOT, SNAPSHOT_PATH, VM_ID,
};
use host_tests::VmSpec;

/// Values of every kind the detectors know, and two operator rules'.
const VALUES: [&str; 8] = [
    "mario.rossi@acme-tools.it",
    "+39 347 123 4567",
    "DE89370400440532013000",
    "4111 1111 1111 1111",
    "203.0.113.77",
    "sk-proj-AbC123realKEY456xyz789",
    "Zebedeo Quintavalle",
    "EMP-204611",
];

const RULES: &str = r#""detectors": {"rules": [
    {"kind": "name", "dictionary": ["Zebedeo Quintavalle"]},
    {"kind": "employee", "regex": "\\bEMP-[0-9]{6}\\b"}]},
    "restoreMaxStalenessMs": 5000"#;

/// Extra request headers.
type Headers<'a> = &'a [(&'a str, &'a str)];

fn text_with_all_values() -> String {
    format!(
        "Mail {}, call {}, pay to {} with card {}; the server is {} and the key {}. \
         Ask {} (badge {}).",
        VALUES[0], VALUES[1], VALUES[2], VALUES[3], VALUES[4], VALUES[5], VALUES[6], VALUES[7]
    )
}

#[test]
fn no_emitted_string_carries_a_value() {
    let mut service = ControlService::start().unwrap();
    let token = service.create_key("shop").unwrap();
    let eraser = service.add_token("shop", "erasure", &["--forget"]).unwrap();
    let gw = Gateway::start(&config(&token, RULES), 2, service.addr()).unwrap();
    let host = &gw.host;
    host.set_log_level(0);
    let redacting = host
        .start_vm(VmSpec::new("worker-redact", VM_ID).root(
            FILTER_ROOT,
            config(&token, &format!("{RULES}, \"failureMode\": \"redact\"")),
        ))
        .unwrap();
    let d = || host.dump();
    host.advance(1000).unwrap();
    let text = text_with_all_values();

    // New values (one callout), then the memo, on both workers.
    for worker in [gw.worker(1), gw.worker(2), gw.worker(1)] {
        let s = gw.chat(worker, &chat_body(&[("user", &text)])).unwrap();
        assert!(s.request_complete(), "{}", d());
        s.finish().unwrap();
    }
    let snapshot = service.call("GET", SNAPSHOT_PATH, Some(&token), None);
    let mut secrets: Vec<String> = VALUES.iter().map(|v| v.to_string()).collect();
    for value in VALUES {
        let surrogate = surrogate_in_snapshot(&snapshot.body, value)
            .unwrap_or_else(|| panic!("value #{} has an entry\n{}", secrets.len(), d()));
        secrets.push(surrogate);
    }
    let surrogates: Vec<String> = secrets[VALUES.len()..].to_vec();
    let surrogate_text = surrogates.join(" | ");
    gw.settle_feed();

    // Whole and streamed answers.
    let s = gw
        .chat(gw.worker(2), &chat_body(&[("user", &text)]))
        .unwrap();
    answer_json(&s, &chat_answer(&surrogate_text)).unwrap();
    s.finish().unwrap();
    let s = gw
        .chat(gw.worker(1), &chat_body(&[("user", &text)]))
        .unwrap();
    s.response_headers(
        &[(":status", "200"), ("content-type", "text/event-stream")],
        false,
    )
    .unwrap();
    let delta =
        serde_json::json!({"choices": [{"index": 0, "delta": {"content": surrogate_text}}]});
    let event = format!("data: {delta}\n\ndata: [DONE]\n\n");
    for piece in event.as_bytes().chunks(7) {
        s.response_body(piece, false).unwrap();
    }
    s.response_body(b"", true).unwrap();
    s.finish().unwrap();

    // Refusals whose bodies carry values: not JSON, too large, encoded.
    let refusals: [(Headers, Vec<u8>); 3] = [
        (
            &[("content-type", "application/json")],
            format!("{{not json {text}").into_bytes(),
        ),
        (
            &[("content-type", "application/json")],
            chat_body(&[("user", &text.repeat(40_000))]),
        ),
        (&[("content-encoding", "gzip")], text.clone().into_bytes()),
    ];
    for (extra, body) in refusals {
        let s = gw.worker(1).new_http_stream().unwrap();
        let mut headers = vec![(":method", "POST"), (":path", CHAT_PATH)];
        headers.extend_from_slice(extra);
        s.request_headers(&headers, false).unwrap();
        if s.local_reply().is_none() {
            s.request_body(&body, true).unwrap();
        }
        assert!(s.local_reply().is_some(), "{}", d());
        s.finish().unwrap();
    }

    // Forget half the values; an answer with an old surrogate is declined.
    let forgotten = serde_json::to_string(&VALUES[..4]).unwrap();
    assert_eq!(service.forget(&eraser, &forgotten).status, 200);
    gw.settle_feed();
    let s = gw
        .chat(gw.worker(2), &chat_body(&[("user", &text)]))
        .unwrap();
    answer_json(&s, &chat_answer(&surrogate_text)).unwrap();
    s.finish().unwrap();
    let snapshot = service.call("GET", SNAPSHOT_PATH, Some(&token), None);
    for value in &VALUES[..4] {
        if let Some(surrogate) = surrogate_in_snapshot(&snapshot.body, value) {
            secrets.push(surrogate);
        }
    }

    // Every worker learns the new-generation entries.
    gw.settle_feed();

    // The control service down: reject and redact with new values.
    service.stop();
    let fresh = "new.person@elsewhere-corp.org";
    secrets.push(fresh.to_string());
    for worker in [gw.worker(1), &redacting] {
        let s = gw
            .chat(
                worker,
                &chat_body(&[("user", &format!("{text} and {fresh}"))]),
            )
            .unwrap();
        s.finish().unwrap();
    }
    // The feed is lost: answers are stale.
    for _ in 0..7 {
        gw.pump_feed();
        host.advance(1000).unwrap();
    }
    let s = gw
        .chat(gw.worker(1), &chat_body(&[("user", &text)]))
        .unwrap();
    answer_json(&s, &chat_answer(&surrogate_text)).unwrap();
    s.finish().unwrap();

    secrets.push(token.clone());
    secrets.push(eraser.clone());
    let emitted = host.emitted_strings();
    assert!(emitted.len() > 50, "the run emitted lines\n{}", d());
    let mut leaks = Vec::new();
    for (n, secret) in secrets.iter().enumerate() {
        for line in &emitted {
            if line.contains(secret.as_str()) {
                leaks.push(format!("secret #{n} in: {line}"));
            }
        }
    }
    assert!(leaks.is_empty(), "{}\n{}", leaks.join("\n"), d());
    // The run went where it was meant to.
    for metric in [
        "latet_entries_callouts_total",
        "latet_memo_hits_total",
        "latet_surrogates_restored_total",
        "latet_restore_declined_retired_total",
        "latet_requests_refused_bad_body_total",
        "latet_requests_refused_body_too_large_total",
        "latet_requests_refused_encoded_body_total",
        "latet_requests_refused_entries_unavailable_total",
        "latet_requests_redacted_total",
        "latet_restore_stale_total",
        "latet_forget_events_applied_total",
    ] {
        assert!(host.metric(metric).unwrap_or(0) > 0, "{metric}\n{}", d());
    }
}
