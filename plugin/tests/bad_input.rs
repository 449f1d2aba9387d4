//! Bad input at filter level, through the exchange state machine and a fake
//! host of this file's own (the crate's `fake_host` is test-only): every
//! case ends in a refusal with a clear error, or a correct forward — never
//! a vault value forwarded, never a panic. Also the configuration parser
//! (errors never quote the token) and entries answers that are garbage or
//! arrive after a forget.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use latet_core::detect::Detectors;
use latet_core::keyed_hash::{entry_id, retired_hash};
use latet_core::kind::Kind;
use latet_core::wire::{Entry, EntryId, Event, EventBody, RetiredHash, RetiredSurrogate, Snapshot};
use latet_filter::config::FilterConfig;
use latet_filter::exchange::Exchange;
use latet_filter::host::{Callout, CalloutAnswer, Flow, Host, HostError, Level, MetricKind};
use latet_filter::metrics::Metrics;
use latet_filter::shared::{SharedState, EVENTS_KEY, STATE_KEY};
use latet_filter::vault::WorkerVault;
use latet_filter::worker::Worker;
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

const TOKEN: &str = "tok-QqSecretTokenQq";

/// One Envoy VM and its current request, as far as these tests need.
#[derive(Default)]
struct TestHost {
    now_ms: Cell<u64>,
    shared: RefCell<BTreeMap<String, (Vec<u8>, u32)>>,
    logs: RefCell<Vec<String>>,
    callouts: RefCell<Vec<(u32, Vec<u8>)>>,
    request_headers: RefCell<Vec<(String, String)>>,
    request_body: RefCell<Vec<u8>>,
    response_headers: RefCell<Vec<(String, String)>>,
    response_body: RefCell<Vec<u8>>,
    replies: RefCell<Vec<(u16, String)>>,
    resumed: Cell<u32>,
    metrics: RefCell<Vec<(String, i64)>>,
}

fn header(headers: &[(String, String)], name: &str) -> Option<String> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.clone())
}

impl Host for TestHost {
    fn now_ms(&self) -> u64 {
        self.now_ms.get()
    }
    fn clock_us(&self) -> u64 {
        self.now_ms.get() * 1000
    }
    fn log(&self, _level: Level, message: &str) {
        self.logs.borrow_mut().push(message.to_string());
    }
    fn property(&self, _path: &[&str]) -> Option<Vec<u8>> {
        None
    }
    fn plugin_configuration(&self) -> Option<Vec<u8>> {
        None
    }
    fn set_tick_period(&self, _period: Duration) -> Result<(), HostError> {
        Ok(())
    }
    fn shared_get(&self, key: &str) -> Result<(Option<Vec<u8>>, Option<u32>), HostError> {
        Ok(match self.shared.borrow().get(key) {
            Some((v, cas)) => (Some(v.clone()), Some(*cas)),
            None => (None, None),
        })
    }
    fn shared_set(&self, key: &str, value: &[u8], cas: Option<u32>) -> Result<(), HostError> {
        let mut shared = self.shared.borrow_mut();
        let current = shared.get(key).map(|(_, c)| *c);
        if let (Some(want), Some(have)) = (cas, current) {
            if want != have {
                return Err(HostError::CasMismatch);
            }
        }
        shared.insert(key.into(), (value.to_vec(), current.unwrap_or(0) + 1));
        Ok(())
    }
    fn queue_register(&self, _name: &str) -> Result<u32, HostError> {
        Ok(1)
    }
    fn queue_resolve(&self, _vm_id: &str, _name: &str) -> Result<Option<u32>, HostError> {
        Ok(None)
    }
    fn queue_enqueue(&self, _queue: u32, _message: &[u8]) -> Result<(), HostError> {
        Ok(())
    }
    fn queue_dequeue(&self, _queue: u32) -> Result<Option<Vec<u8>>, HostError> {
        Ok(None)
    }
    fn dispatch(&self, callout: &Callout<'_>) -> Result<u32, HostError> {
        let token = self.callouts.borrow().len() as u32 + 1;
        let body = callout.body.unwrap_or_default().to_vec();
        self.callouts.borrow_mut().push((token, body));
        Ok(token)
    }
    fn callout_answer(&self, _body_size: usize) -> CalloutAnswer {
        CalloutAnswer::default()
    }

    fn callout_body(&self, _start: usize, _len: usize) -> Option<Vec<u8>> {
        None
    }
    fn metric_define(&self, _kind: MetricKind, name: &str) -> Result<u32, HostError> {
        let mut metrics = self.metrics.borrow_mut();
        metrics.push((name.to_string(), 0));
        Ok(metrics.len() as u32 - 1)
    }
    fn metric_increment(&self, id: u32, by: i64) {
        if let Some(m) = self.metrics.borrow_mut().get_mut(id as usize) {
            m.1 += by;
        }
    }
    fn metric_record(&self, id: u32, value: u64) {
        if let Some(m) = self.metrics.borrow_mut().get_mut(id as usize) {
            m.1 = value as i64;
        }
    }
    fn request_header(&self, name: &str) -> Option<String> {
        header(&self.request_headers.borrow(), name)
    }
    fn request_headers(&self) -> Result<Vec<(String, String)>, HostError> {
        Ok(self.request_headers.borrow().clone())
    }
    fn set_request_header(&self, name: &str, values: &[String]) {
        let mut headers = self.request_headers.borrow_mut();
        headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        headers.extend(values.iter().map(|v| (name.to_string(), v.clone())));
    }
    fn request_trailers(&self) -> Result<Vec<(String, String)>, HostError> {
        Ok(Vec::new())
    }
    fn set_request_trailer(&self, _name: &str, _values: &[String]) {}
    fn remove_request_header(&self, name: &str) {
        self.request_headers
            .borrow_mut()
            .retain(|(n, _)| !n.eq_ignore_ascii_case(name));
    }
    fn request_body(&self, size: usize) -> Option<Vec<u8>> {
        let body = self.request_body.borrow();
        Some(body[..size.min(body.len())].to_vec())
    }
    fn set_request_body(&self, _size: usize, body: &[u8]) -> Result<(), HostError> {
        *self.request_body.borrow_mut() = body.to_vec();
        Ok(())
    }
    fn resume_request(&self) {
        self.resumed.set(self.resumed.get() + 1);
    }
    fn response_header(&self, name: &str) -> Option<String> {
        header(&self.response_headers.borrow(), name)
    }
    fn remove_response_header(&self, name: &str) {
        self.response_headers
            .borrow_mut()
            .retain(|(n, _)| !n.eq_ignore_ascii_case(name));
    }
    fn set_response_header(&self, name: &str, value: &str) {
        self.remove_response_header(name);
        self.response_headers
            .borrow_mut()
            .push((name.into(), value.into()));
    }
    fn response_body(&self, size: usize) -> Option<Vec<u8>> {
        let body = self.response_body.borrow();
        Some(body[..size.min(body.len())].to_vec())
    }
    fn set_response_body(&self, _size: usize, body: &[u8]) -> Result<(), HostError> {
        *self.response_body.borrow_mut() = body.to_vec();
        Ok(())
    }
    fn send_reply(&self, status: u16, _headers: &[(&str, &str)], body: &[u8]) {
        self.replies
            .borrow_mut()
            .push((status, String::from_utf8_lossy(body).into_owned()));
    }
}

const VAULT: &[(&str, &str)] = &[
    ("Mario Rossi", "Laura Bianchi"),
    ("José García", "Iñigo Pérez"),
    ("Ugo", "Luca"),
];

fn entry(value: &str, surrogate: &str, kind: Kind, generation: u64) -> Entry {
    Entry {
        id: EntryId(entry_id(b"plugin-bad-input", value)),
        value: value.into(),
        surrogate: surrogate.into(),
        kind,
        generation,
    }
}

fn vault_entries() -> Vec<Entry> {
    VAULT
        .iter()
        .map(|(v, s)| entry(v, s, Kind::Name, 1))
        .collect()
}

/// Publishes a snapshot (seq 1, generation 1) and `events` as the poller would.
fn publish(host: &TestHost, events: &[Event]) {
    let snapshot = Snapshot {
        version: 1,
        generation: 1,
        seq: 1,
        retired_salt: "00".into(),
        retired: vec![],
        entries: vault_entries(),
    };
    // The compact form, as the poller keeps it.
    let compact = latet_core::wire::encode_snapshot(&snapshot).unwrap();
    latet_filter::shared_snapshot::write_snapshot(
        host,
        &compact,
        latet_filter::shared_snapshot::PART_BYTES,
    )
    .unwrap();
    host.shared_set(EVENTS_KEY, &serde_json::to_vec(events).unwrap(), None)
        .unwrap();
    let state = SharedState {
        seq: events.last().map_or(1, |e| e.seq),
        snapshot_seq: 1,
        feed_answered_at_ms: host.now_ms(),
        key_deleted: false,
    };
    host.shared_set(STATE_KEY, &serde_json::to_vec(&state).unwrap(), None)
        .unwrap();
}

fn config_with(extra: &str) -> FilterConfig {
    let json = format!(r#"{{"controlCluster":"ctl","gatewayToken":"{TOKEN}"{extra}}}"#);
    FilterConfig::parse(json.as_bytes(), |_| None).unwrap()
}

/// A ready worker (snapshot published and loaded) and its host.
fn ready(extra: &str) -> (TestHost, Rc<Worker>) {
    let host = TestHost::default();
    host.now_ms.set(1_000_000);
    publish(&host, &[]);
    let config = config_with(extra);
    let detectors = Detectors::new(&config.detectors).unwrap();
    let vault = WorkerVault::new(detectors, config.memo_capacity_bytes);
    let metrics = Metrics::define(&host);
    let worker = Rc::new(Worker::new(Rc::new(config), vault, metrics));
    worker.catch_up(&host);
    assert!(worker.vault.borrow().is_ready());
    (host, worker)
}

/// What became of a request.
#[derive(Debug, PartialEq)]
enum Fate {
    /// Forwarded with this body.
    Forwarded(Vec<u8>),
    /// Answered locally with this status.
    Refused(u16),
    /// Waiting on an entries callout.
    Waiting,
}

fn send(
    host: &TestHost,
    worker: &Rc<Worker>,
    headers: &[(&str, &str)],
    body: &[u8],
) -> (Exchange, Fate) {
    *host.request_headers.borrow_mut() = headers
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect();
    *host.request_body.borrow_mut() = body.to_vec();
    host.replies.borrow_mut().clear();
    let mut exchange = Exchange::new(Rc::clone(worker));
    let mut flow = exchange.on_request_headers(host, body.is_empty());
    if flow == Flow::Continue && !body.is_empty() && !exchange.replied() {
        flow = exchange.on_request_body(host, body.len(), true);
    }
    let fate = fate(host, &exchange, flow);
    (exchange, fate)
}

fn fate(host: &TestHost, exchange: &Exchange, flow: Flow) -> Fate {
    if exchange.replied() {
        let replies = host.replies.borrow();
        let (status, body) = replies.last().expect("a refusal sends a reply");
        assert_no_value(body.as_bytes(), "a local reply");
        return Fate::Refused(*status);
    }
    match flow {
        Flow::Continue => Fate::Forwarded(host.request_body.borrow().clone()),
        Flow::Pause => Fate::Waiting,
    }
}

fn assert_no_value(bytes: &[u8], case: &str) {
    let text = String::from_utf8_lossy(bytes);
    for (value, _) in &VAULT[..2] {
        assert!(!text.contains(value), "{case}: a vault value went out");
    }
    for needle in ["mario.rossi@acme.it", "+39 347 123 4567"] {
        assert!(!text.contains(needle), "{case}: a detected value went out");
    }
}

/// (case, request headers, body, expected status).
type RefusalCase<'a> = (&'a str, Vec<(&'a str, &'a str)>, Vec<u8>, u16);

const CHAT_PATH: (&str, &str) = (":path", "/v1/chat/completions");

#[test]
fn bad_request_bodies_are_refused_never_forwarded_unmasked() {
    let (host, worker) = ready("");
    let deep = format!(
        r#"{{"messages":[{{"role":"user","content":{}"Mario Rossi"{}}}]}}"#,
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    let mut non_utf8 = br#"{"messages":[{"role":"user","content":"Mario Rossi "#.to_vec();
    non_utf8.extend_from_slice(&[0xff, 0xfe]);
    non_utf8.extend_from_slice(br#""}]}"#);
    // (case, headers, body, expected status)
    let cases: Vec<RefusalCase> = vec![
        (
            "truncated JSON",
            vec![CHAT_PATH],
            br#"{"messages":[{"role":"user","content":"Mario Rossi"#.to_vec(),
            400,
        ),
        (
            "not JSON at all",
            vec![CHAT_PATH],
            b"Mario Rossi says hi".to_vec(),
            400,
        ),
        ("non-UTF-8", vec![CHAT_PATH], non_utf8, 400),
        ("10,000 levels", vec![CHAT_PATH], deep.into_bytes(), 400),
        (
            "gzip body",
            vec![CHAT_PATH, ("content-encoding", "gzip")],
            vec![0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0],
            415,
        ),
        (
            "br body",
            vec![CHAT_PATH, ("content-encoding", " BR ")],
            b"Mario Rossi".to_vec(),
            415,
        ),
        (
            "form body on a JSON path",
            vec![
                CHAT_PATH,
                ("content-type", "application/x-www-form-urlencoded"),
            ],
            b"name=Mario+Rossi&to=Mario%20Rossi".to_vec(),
            400,
        ),
        (
            "multipart on a JSON path",
            vec![
                CHAT_PATH,
                ("content-type", "multipart/form-data; boundary=x"),
            ],
            b"--x\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nMario Rossi\r\n--x--"
                .to_vec(),
            400,
        ),
    ];
    for (case, headers, body, status) in cases {
        let (_, fate) = send(&host, &worker, &headers, &body);
        assert_eq!(fate, Fate::Refused(status), "{case}");
    }
}

#[test]
fn a_body_over_the_limit_is_413_and_a_10_mb_body_under_it_is_masked() {
    let message = r#"{"role":"user","content":"Mario Rossi and José García"}"#;
    let count = 10 * 1024 * 1024 / message.len() + 1;
    let body = format!(r#"{{"messages":[{}]}}"#, vec![message; count].join(","));

    let (host, worker) = ready("");
    let (_, fate) = send(&host, &worker, &[CHAT_PATH], body.as_bytes());
    assert_eq!(fate, Fate::Refused(413), "default limit is 1 MiB");

    let (host, worker) = ready(r#","bodyLimitBytes":16777216"#);
    let (_, fate) = send(&host, &worker, &[CHAT_PATH], body.as_bytes());
    let Fate::Forwarded(out) = fate else {
        panic!("10 MB body not forwarded: {fate:?}");
    };
    assert_no_value(&out, "10 MB body");
    assert_eq!(
        String::from_utf8(out)
            .unwrap()
            .matches("Laura Bianchi")
            .count(),
        count
    );
}

#[test]
fn new_values_with_a_garbage_or_failed_entries_answer_are_refused_or_redacted() {
    let body = br#"{"messages":[{"role":"user","content":"Mario Rossi: mario.rossi@acme.it, +39 347 123 4567"}]}"#;
    let answers: &[(&str, u16, &[u8])] = &[
        ("garbage", 200, b"\x00\xffnot json"),
        (
            "truncated",
            200,
            br#"{"version":1,"generation":1,"entries":[{"id":"#,
        ),
        (
            "wrong version",
            200,
            br#"{"version":9,"generation":1,"entries":[]}"#,
        ),
        ("500", 500, b"{}"),
        ("timeout (no status)", 0, b""),
        (
            "empty entries",
            200,
            br#"{"version":1,"generation":1,"entries":[]}"#,
        ),
    ];
    for (mode, expected) in [("reject", None), ("redact", Some(()))] {
        for (case, status, answer) in answers {
            let (host, worker) = ready(&format!(r#","failureMode":"{mode}""#));
            let (mut exchange, fate) = send(&host, &worker, &[CHAT_PATH], body);
            assert_eq!(fate, Fate::Waiting, "{case}");
            let (token, _) = host.callouts.borrow().last().cloned().unwrap();
            let answer = CalloutAnswer {
                status: *status,
                body: answer.to_vec(),
                etag: None,
                body_left: 0,
            };
            // An empty answer makes the filter ask again (a bounded number
            // of times): answer each the same way.
            exchange.on_callout(&host, token, &answer);
            let mut last = token;
            for _ in 0..8 {
                let again = host.callouts.borrow().last().map(|(t, _)| *t);
                match again {
                    Some(again) if again != last => {
                        exchange.on_callout(&host, again, &answer);
                        last = again;
                    }
                    _ => break,
                }
            }
            assert!(
                host.callouts.borrow().len() <= 4,
                "{mode}/{case}: unbounded"
            );
            let replies = host.replies.borrow().clone();
            match expected {
                None => {
                    assert_eq!(replies.len(), 1, "{mode}/{case}: no refusal");
                    assert_eq!(replies[0].0, 503, "{mode}/{case}");
                }
                Some(()) => {
                    assert!(replies.is_empty(), "{mode}/{case}: refused in redact mode");
                    assert_eq!(host.resumed.get(), 1, "{mode}/{case}: not resumed");
                    let out = host.request_body.borrow().clone();
                    assert_no_value(&out, &format!("{mode}/{case}"));
                }
            }
        }
    }
}

#[test]
fn an_entries_answer_from_before_a_forget_is_not_used() {
    let (host, worker) = ready("");
    let body = br#"{"messages":[{"role":"user","content":"write to mario.rossi@acme.it"}]}"#;
    let (mut exchange, fate) = send(&host, &worker, &[CHAT_PATH], body);
    assert_eq!(fate, Fate::Waiting);
    // While the callout is out, a forget arrives (generation 1 → 2)…
    let mario = &vault_entries()[0];
    publish(
        &host,
        &[Event {
            seq: 2,
            body: EventBody::Forgotten {
                ids: vec![mario.id],
                retired: vec![retired(&mario.surrogate)],
                generation: 2,
            },
        }],
    );
    // …and the answer was derived under generation 1: stale, asked again.
    let stale = serde_json::json!({
        "version": 1, "generation": 1,
        "entries": [entry("mario.rossi@acme.it", "old.surrogate@brightvale.it", Kind::Email, 1)]
    });
    let (token, _) = host.callouts.borrow()[0].clone();
    exchange.on_callout(
        &host,
        token,
        &CalloutAnswer {
            status: 200,
            body: serde_json::to_vec(&stale).unwrap(),
            etag: None,
            body_left: 0,
        },
    );
    assert_eq!(host.callouts.borrow().len(), 2, "the stale answer was used");
    assert!(worker
        .vault
        .borrow()
        .index()
        .by_value("mario.rossi@acme.it")
        .is_none());
    assert!(worker
        .vault
        .borrow()
        .index()
        .by_value("Mario Rossi")
        .is_none());
    let fresh = serde_json::json!({
        "version": 1, "generation": 2,
        "entries": [entry("mario.rossi@acme.it", "new.surrogate@brightvale.it", Kind::Email, 2)]
    });
    let (token, _) = host.callouts.borrow()[1].clone();
    exchange.on_callout(
        &host,
        token,
        &CalloutAnswer {
            status: 200,
            body: serde_json::to_vec(&fresh).unwrap(),
            etag: None,
            body_left: 0,
        },
    );
    let out = String::from_utf8(host.request_body.borrow().clone()).unwrap();
    assert!(
        out.contains("new.surrogate@brightvale.it"),
        "not masked with the new entry"
    );
    assert!(!out.contains("old.surrogate"));
}

#[test]
fn a_stream_split_at_every_byte_restores_the_same_through_the_filter() {
    let stream = concat!(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi Laura Bi\"}}]}\r\n\r\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"anchi and Luca\"}}]}\r\n\r\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\r\n\r\n",
        "data: [DONE]\r\n\r\n"
    )
    .as_bytes();
    let run = |cuts: &[usize]| -> Vec<u8> {
        let (host, worker) = ready("");
        // The agent sent both values: the answer may restore them.
        let (mut exchange, fate) = send(
            &host,
            &worker,
            &[CHAT_PATH],
            br#"{"messages":[{"role":"user","content":"Mario Rossi, Ugo"}]}"#,
        );
        assert!(matches!(fate, Fate::Forwarded(_)));
        *host.response_headers.borrow_mut() =
            vec![("content-type".into(), "text/event-stream".into())];
        exchange.on_response_headers(&host, false);
        let mut out = Vec::new();
        let mut at = 0;
        for &cut in cuts.iter().chain([stream.len()].iter()) {
            *host.response_body.borrow_mut() = stream[at..cut].to_vec();
            exchange.on_response_body(&host, cut - at, false);
            out.extend_from_slice(&host.response_body.borrow());
            at = cut;
        }
        host.response_body.borrow_mut().clear();
        exchange.on_response_body(&host, 0, true);
        out.extend_from_slice(&host.response_body.borrow());
        out
    };
    let whole = run(&[]);
    let text = String::from_utf8(whole.clone()).unwrap();
    assert!(
        text.contains("Mario Rossi") || text.contains("Mario Ro"),
        "not restored"
    );
    assert!(!text.contains("Laura"));
    for cut in 1..stream.len() {
        assert_eq!(run(&[cut]), whole, "cut at {cut}");
    }
}

#[test]
fn garbage_and_cut_answers_pass_without_a_crash() {
    for (content_type, answer) in [
        ("application/json", &b"\xff\xfe{\"a\":\"Laura Bianchi"[..]),
        ("application/json", &b"{\"a\":\"Laura Bianchi\""[..]),
        (
            "text/event-stream",
            &b"data: {\"choices\":[{\"delta\":{\"content\":\"Laura Bi"[..],
        ),
        ("text/event-stream", &[0u8, 1, 2, 0xff, b'\n', b'\n'][..]),
        ("image/png", &b"\x89PNG Laura Bianchi"[..]),
    ] {
        let (host, worker) = ready("");
        let (mut exchange, _) = send(&host, &worker, &[CHAT_PATH], br#"{"messages":[]}"#);
        *host.response_headers.borrow_mut() = vec![("content-type".into(), content_type.into())];
        exchange.on_response_headers(&host, false);
        *host.response_body.borrow_mut() = answer.to_vec();
        exchange.on_response_body(&host, answer.len(), false);
        exchange.on_response_body(&host, answer.len(), true);
    }
}

#[test]
fn configuration_errors_never_quote_the_token() {
    let cases = [
        format!(r#"{{"controlCluster":"ctl","gatewayToken":"{TOKEN} x"}}"#),
        format!(r#"{{"controlCluster":"ctl","gatewayToken":"{TOKEN}","tickMs":"{TOKEN}"}}"#),
        format!(
            r#"{{"controlCluster":"ctl","gatewayToken":"{TOKEN}","routes":[{{"path":"{TOKEN}","provider":"json"}}]}}"#
        ),
        format!(r#"{{"controlCluster":"ctl","gatewayToken":["{TOKEN}"]}}"#),
        format!(r#"{{"controlCluster":"ctl","gatewayToken":"{TOKEN}"#),
        format!(r#"{{"controlCluster":"ctl","gatewayToken":"{TOKEN}","bodyLimitBytes":0}}"#),
        format!(
            r#"{{"controlCluster":"ctl","gatewayToken":"{TOKEN}","detectors":{{"rules":[{{"kind":"x","regex":"({TOKEN}"}}]}}}}"#
        ),
    ];
    for case in &cases {
        let err = FilterConfig::parse(case.as_bytes(), |_| None).expect_err("accepted");
        let message = format!("{err} {err:?}");
        assert!(
            !message.contains("QqSecretTokenQq"),
            "error quotes the token: {}",
            err.field
        );
    }
}

/// Finding C1 (fixed): serde's "unknown variant" message quotes the value
/// written in an enum field, so a token pasted into `failureMode`,
/// `defaultProvider` or a route's `provider` would be printed in Envoy's log.
/// The error names the field and the allowed values instead.
#[test]
fn an_unknown_variant_error_does_not_quote_the_value() {
    let cases = [
        (
            format!(r#""failureMode":"{TOKEN}""#),
            "failureMode",
            "`reject` or `redact`",
        ),
        (
            format!(r#""defaultProvider":"{TOKEN}""#),
            "defaultProvider",
            "openai-chat",
        ),
        (
            format!(r#""routes":[{{"path":"/v1","provider":"{TOKEN}"}}]"#),
            "routes[0].provider",
            "anthropic-messages",
        ),
        (
            format!(r#""routes":[{{"path":"/{TOKEN}?","provider":"json"}}]"#),
            "routes[0].path",
            "query",
        ),
        // The quoted value itself holds serde's separator.
        (
            format!(r#""failureMode":"{TOKEN}, expected {TOKEN}""#),
            "failureMode",
            "`reject` or `redact`",
        ),
        (
            format!(r#""feedWaitMs":"{TOKEN}, expected {TOKEN}""#),
            "feedWaitMs",
            "expected u64",
        ),
    ];
    for (field, path, allowed) in &cases {
        let json = format!(r#"{{"controlCluster":"ctl","gatewayToken":"t",{field}}}"#);
        let err = FilterConfig::parse(json.as_bytes(), |_| None).expect_err("accepted");
        let message = format!("{err} {err:?}");
        assert!(
            !message.contains("QqSecretTokenQq"),
            "{path} quotes the value"
        );
        assert_eq!(err.field, *path);
        assert!(err.reason.contains(allowed), "{path}: {}", err.reason);
    }
}

/// Finding S1 (fixed): after a `forgotten` event, the shared-data copies
/// held the value in clear — the snapshot under `latet.v1.snapshot` (until
/// the poller next took one) and any `added` event in `latet.v1.events`.
/// The poller now rewrites both in the same publication as the forget
/// (snapshot, events, then state), and workers at any position still reach
/// the post-forget index: the one that had applied the `added` event, and
/// one that rebuilds from the rewritten copies.
#[test]
fn shared_data_drops_a_forgotten_value_once_its_forget_is_published() {
    use latet_filter::lease;
    use latet_filter::poller::Poller;
    let host = TestHost::default();
    host.now_ms.set(1_000_000);
    let config = Rc::new(config_with(""));
    let metrics = Metrics::define(&host);
    // Parts of one entry each: the snapshot lies in several parts.
    let mut poller =
        Poller::new(Rc::clone(&config), "sync".into(), "latet".into()).with_part_bytes(1);
    assert!(lease::hold(&host, "sync", config.lease_ms));
    let answer = |body: Vec<u8>| CalloutAnswer {
        status: 200,
        body,
        etag: None,
        body_left: 0,
    };
    let last_token = |host: &TestHost| host.callouts.borrow().last().unwrap().0;
    let new_worker = || {
        WorkerVault::new(
            Detectors::new(&config.detectors).unwrap(),
            config.memo_capacity_bytes,
        )
    };
    let with_mario = Snapshot {
        version: 1,
        generation: 1,
        seq: 1,
        retired_salt: "00".into(),
        retired: vec![],
        entries: vault_entries(),
    };
    poller.step(&host, &metrics);
    poller.on_answer(
        &host,
        &metrics,
        last_token(&host),
        &answer(serde_json::to_vec(&with_mario).unwrap()),
    );
    // A value added through the feed, then forgotten with Mario.
    let carla = entry("Carla Verdi", "Anna Neri", Kind::Name, 1);
    let feed = serde_json::json!({"status": "events", "version": 1, "head": 2, "events": [
        {"seq": 2, "type": "added", "entries": [carla]}
    ]});
    poller.on_answer(
        &host,
        &metrics,
        last_token(&host),
        &answer(serde_json::to_vec(&feed).unwrap()),
    );
    // A worker current at seq 2 (it holds Carla), one left behind at seq 1.
    let mut current = new_worker();
    assert!(current.catch_up(&host).current);
    assert_eq!(current.index().len(), 4);
    let mut behind = new_worker();
    behind
        .load_snapshot(latet_core::wire::encode_snapshot(&with_mario).unwrap())
        .unwrap();

    let mario = vault_entries()[0].clone();
    let feed = serde_json::json!({"status": "events", "version": 1, "head": 3, "events": [
        {"seq": 3, "type": "forgotten", "ids": [mario.id, carla.id],
         "retired": [retired(&mario.surrogate), retired(&carla.surrogate)], "generation": 2}
    ]});
    poller.on_answer(
        &host,
        &metrics,
        last_token(&host),
        &answer(serde_json::to_vec(&feed).unwrap()),
    );
    // Every key: the snapshot's manifest and parts, the events.
    let keys: Vec<String> = host.shared.borrow().keys().cloned().collect();
    assert!(keys.iter().any(|k| k == "latet.v1.snapshot.2"), "{keys:?}");
    // (Every key, the counters and tags included: none may hold a value.)
    for key in &keys {
        let (bytes, _) = host.shared_get(key).unwrap();
        let text = String::from_utf8_lossy(&bytes.unwrap_or_default()).into_owned();
        for gone in ["Mario Rossi", "Laura Bianchi", "Carla Verdi", "Anna Neri"] {
            assert!(!text.contains(gone), "{key} still holds a forgotten entry");
        }
    }
    // Each worker reaches the same post-forget index, whatever it held.
    for (name, worker) in [
        ("current", &mut current),
        ("behind", &mut behind),
        ("fresh", &mut new_worker()),
    ] {
        assert!(worker.catch_up(&host).current, "{name}");
        assert_eq!(
            (worker.index().seq(), worker.index().generation()),
            (3, 2),
            "{name}"
        );
        assert_eq!(worker.index().len(), 2, "{name}: only José and Ugo");
    }
}

/// A forgotten entry's retired surrogate, as its `forgotten` event carries
/// it (the test vaults' salt is `00`).
fn retired(surrogate: &str) -> RetiredSurrogate {
    RetiredSurrogate {
        hash: RetiredHash(retired_hash(&[0], surrogate)),
        lead: latet_core::text::lead_bucket(surrogate),
    }
}
