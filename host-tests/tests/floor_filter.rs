//! The harness proven on the floor filter (envoy/floor-filter): bodies,
//! headers, metrics, logs, shared data with CAS, queue broadcast, ticks,
//! callouts. Each test has its own host (engine, module, VMs): they run in
//! parallel. Every assertion prints `host.dump()` when it fails.

// Test helpers unwrap and panic like the tests themselves.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use host_tests::wasm_build::floor_filter_wasm;
use host_tests::{Action, CalloutResponse, CalloutScript, Event, Host, HostError, Vm, VmSpec};
use std::io::{Read, Write};
use std::net::TcpListener;

const VM_ID: &str = "floor";

fn host() -> Host {
    let wasm = floor_filter_wasm().unwrap_or_else(|e| panic!("building the floor filter: {e}"));
    Host::new(&wasm).unwrap()
}

fn worker(host: &Host, name: &str, probes: &str) -> Vm {
    host.start_vm(VmSpec::new(name, VM_ID).root("floor", probes))
        .unwrap_or_else(|e| panic!("{e}\n{}", host.dump()))
}

const REQUEST: [(&str, &str); 4] = [
    (":method", "POST"),
    (":path", "/v1/chat/completions"),
    (":authority", "llm"),
    ("content-length", "11"),
];

fn has_header(headers: &[(String, String)], name: &str) -> bool {
    headers.iter().any(|(key, _)| key == name)
}

#[test]
fn headers_lose_content_length_and_bodies_are_buffered_then_copied() {
    let host = host();
    let vm = worker(&host, "worker-1", "");
    let s = vm.new_http_stream().unwrap();
    let d = || host.dump();

    assert_eq!(
        s.request_headers(&REQUEST, false).unwrap(),
        Action::Continue,
        "{}",
        d()
    );
    let upstream = s.upstream_headers().unwrap();
    assert!(
        !has_header(&upstream, "content-length"),
        "{upstream:?}\n{}",
        d()
    );
    assert!(has_header(&upstream, ":path"), "{}", d());

    assert_eq!(
        s.request_body(b"hello ", false).unwrap(),
        Action::Pause,
        "{}",
        d()
    );
    assert!(s.upstream_body().is_empty(), "{}", d());
    assert_eq!(
        s.request_body(b"world", true).unwrap(),
        Action::Continue,
        "{}",
        d()
    );
    assert_eq!(s.upstream_body(), b"hello world", "{}", d());
    assert!(s.request_complete(), "{}", d());

    let response = [(":status", "200"), ("content-length", "7")];
    assert_eq!(
        s.response_headers(&response, false).unwrap(),
        Action::Continue,
        "{}",
        d()
    );
    assert!(
        !has_header(&s.downstream_headers().unwrap(), "content-length"),
        "{}",
        d()
    );
    for (chunk, end) in [(&b"an"[..], false), (b"sw", false), (b"er!", true)] {
        s.response_body(chunk, end).unwrap();
    }
    assert_eq!(s.downstream_body(), b"answer!", "{}", d());
    assert_eq!(
        s.downstream_chunks().len(),
        1,
        "buffered: one forward\n{}",
        d()
    );
    assert!(s.response_complete(), "{}", d());

    let records = host.records();
    let removals = records
        .iter()
        .filter(|r| matches!(&r.event, Event::HeaderChange { op: "remove", name, .. } if name == "content-length"))
        .count();
    assert_eq!(removals, 2, "{}", d());
    let copies: Vec<Vec<u8>> = records
        .iter()
        .filter_map(|r| match &r.event {
            Event::BodyChange { body, .. } => Some(body.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        copies,
        vec![b"hello world".to_vec(), b"answer!".to_vec()],
        "{}",
        d()
    );
    s.finish().unwrap();
    assert!(s.finish().is_err(), "a finished stream takes no more calls");
}

#[test]
fn metrics_and_logs_are_recorded() {
    let host = host();
    let vm = worker(&host, "worker-1", "log metrics");
    for body in [&b"abc"[..], b"abcdefgh"] {
        let s = vm.new_http_stream().unwrap();
        s.request_headers(&REQUEST, false).unwrap();
        s.request_body(body, true).unwrap();
        s.finish().unwrap();
    }
    let d = host.dump();
    assert_eq!(host.metric("floor_requests"), Some(2), "{d}");
    assert_eq!(
        host.metrics()["floor_body_bytes"].samples,
        vec![3, 8],
        "{d}"
    );
    let lines: Vec<String> = host.logs().into_iter().map(|(_, _, line)| line).collect();
    assert!(
        lines
            .iter()
            .any(|l| l.ends_with("copied a body of 8 bytes")),
        "{d}"
    );
    assert!(
        d.contains("INFO floor: context"),
        "the dump shows log lines:\n{d}"
    );
    assert!(
        d.contains("floor_requests (Counter) = 2"),
        "the dump shows metrics:\n{d}"
    );
}

#[test]
fn two_vms_share_data_and_a_stale_cas_conflicts() {
    let host = host();
    let a = worker(&host, "worker-1", "shared metrics log");
    let b = worker(&host, "worker-2", "shared metrics log");
    // An absent key has no CAS (the first write is unconditional): seed it.
    host.set_shared_data(VM_ID, "floor.count", b"0");
    let (sa, sb) = (a.new_http_stream().unwrap(), b.new_http_stream().unwrap());
    // Both read the CAS, B writes first, A's write is then stale.
    sa.request_headers(&REQUEST, false).unwrap();
    sb.request_headers(&REQUEST, false).unwrap();
    sb.request_body(b"b", true).unwrap();
    sa.request_body(b"a", true).unwrap();
    let d = host.dump();
    assert_eq!(host.metric("floor_cas_conflicts"), Some(1), "{d}");
    let (value, cas) = host.shared_data(VM_ID, "floor.count").unwrap();
    assert_eq!(value, b"1", "{d}");
    assert_ne!(cas, 0);
    assert_eq!(
        host.shared_data("another-vm-id", "floor.count"),
        None,
        "namespaced by vm_id"
    );
    // A fresh read then write succeeds.
    let s = a.new_http_stream().unwrap();
    s.request_headers(&REQUEST, false).unwrap();
    s.request_body(b"a", true).unwrap();
    assert_eq!(
        host.shared_data(VM_ID, "floor.count").unwrap().0,
        b"2",
        "{}",
        host.dump()
    );
}

#[test]
fn a_queue_broadcast_reaches_every_vm_unless_dropped() {
    let host = host();
    let vms: Vec<Vm> = ["sync", "worker-1", "worker-2"]
        .iter()
        .map(|name| worker(&host, name, "queue metrics log"))
        .collect();
    let send = |vm: &Vm| {
        let s = vm.new_http_stream().unwrap();
        s.request_headers(&REQUEST, false).unwrap();
        s.request_body(b"x", true).unwrap();
    };
    send(&vms[1]);
    let d = host.dump();
    assert_eq!(host.metric("floor_queue_messages"), Some(3), "{d}");
    for name in ["sync", "worker-1", "worker-2"] {
        let got = host.logs().iter().any(|(vm, _, line)| {
            vm == name && line == "floor: queue message: request seen by floor-2"
        });
        assert!(got, "{name} got the broadcast\n{d}");
    }

    // Hold delivery, drop worker-2's copy, release: the other two get it.
    host.hold_queues(true);
    send(&vms[0]);
    assert_eq!(host.pending_queue_messages().len(), 3, "{}", host.dump());
    assert_eq!(host.drop_queue_messages_to("worker-2"), 1);
    host.hold_queues(false);
    host.settle().unwrap();
    let d = host.dump();
    assert_eq!(host.metric("floor_queue_messages"), Some(5), "{d}");
    let worker2_lines = host
        .logs()
        .iter()
        .filter(|(vm, _, line)| vm == "worker-2" && line.starts_with("floor: queue message"))
        .count();
    assert_eq!(worker2_lines, 1, "{d}");
}

#[test]
fn ticks_fire_only_when_the_clock_advances() {
    let host = host();
    worker(&host, "worker-1", "tick metrics");
    worker(&host, "worker-2", "tick metrics");
    let ticks = || host.metric("floor_ticks").unwrap_or(0);
    assert_eq!(ticks(), 0);
    host.advance(999).unwrap();
    assert_eq!(ticks(), 0, "{}", host.dump());
    host.advance(1).unwrap();
    assert_eq!(ticks(), 2, "{}", host.dump());
    host.advance(3_500).unwrap();
    assert_eq!(ticks(), 8, "{}", host.dump());
    assert_eq!(host.now_ms(), 4_500);
}

fn paused_callout_stream(host: &Host) -> host_tests::HttpStream {
    let vm = worker(host, "worker-1", "callout log");
    let s = vm.new_http_stream().unwrap();
    s.request_headers(&REQUEST, false).unwrap();
    assert_eq!(
        s.request_body(b"hello world", true).unwrap(),
        Action::Pause,
        "{}",
        host.dump()
    );
    s
}

#[test]
fn a_callout_pauses_the_request_until_answered() {
    let host = host();
    let s = paused_callout_stream(&host);
    let pending = host.pending_callouts();
    assert_eq!(pending.len(), 1, "{}", host.dump());
    assert_eq!(
        (pending[0].upstream.as_str(), pending[0].path()),
        ("control", "/floor")
    );
    assert!(
        s.upstream_body().is_empty() && !s.request_complete(),
        "{}",
        host.dump()
    );

    host.answer_callout(pending[0].token, CalloutResponse::new(200, "ok"))
        .unwrap();
    let d = host.dump();
    assert_eq!(s.request_resumes(), 1, "{d}");
    assert_eq!(s.upstream_body(), b"hello world", "{d}");
    assert!(s.request_complete(), "{d}");
    assert!(host.pending_callouts().is_empty());
    assert!(
        host.answer_callout(pending[0].token, CalloutResponse::new(200, ""))
            .is_err(),
        "answered once"
    );
}

#[test]
fn a_failed_callout_becomes_a_local_reply_through_the_response_callbacks() {
    let host = host();
    let s = paused_callout_stream(&host);
    let token = host.pending_callouts()[0].token;
    host.answer_callout(token, CalloutResponse::new(503, "down"))
        .unwrap();
    let d = host.dump();
    let reply = s
        .local_reply()
        .unwrap_or_else(|| panic!("no local reply\n{d}"));
    assert_eq!(reply.status, 502, "{d}");
    assert!(
        s.upstream_body().is_empty() && !s.request_complete(),
        "never forwarded\n{d}"
    );
    let downstream = s.downstream_headers().unwrap();
    assert!(
        downstream.contains(&(":status".into(), "502".into())),
        "{downstream:?}"
    );
    assert!(
        downstream.contains(&("x-floor".into(), "callout-failed".into())),
        "{downstream:?}"
    );
    assert_eq!(s.downstream_body(), b"floor: callout failed", "{d}");
}

#[test]
fn scripted_callouts_answer_after_a_delay_time_out_or_drop() {
    // Answer after 100 ms of host time.
    let host = host();
    host.set_callout_responder(|_| CalloutScript::AnswerAfter(100, CalloutResponse::new(200, "")));
    let s = paused_callout_stream(&host);
    host.advance(99).unwrap();
    assert_eq!(s.request_resumes(), 0, "{}", host.dump());
    host.advance(1).unwrap();
    assert_eq!(s.request_resumes(), 1, "{}", host.dump());

    // Time out after the callout's own 5 s: the failure path.
    let host = self::host();
    host.set_callout_responder(|_| CalloutScript::Timeout);
    let s = paused_callout_stream(&host);
    host.advance(4_999).unwrap();
    assert!(s.local_reply().is_none(), "{}", host.dump());
    host.advance(1).unwrap();
    assert_eq!(
        s.local_reply().map(|r| r.status),
        Some(502),
        "{}",
        host.dump()
    );

    // Dropped: never answered, the request stays paused.
    let host = self::host();
    host.set_callout_responder(|_| CalloutScript::Drop);
    let s = paused_callout_stream(&host);
    host.advance(60_000).unwrap();
    assert!(host.pending_callouts().is_empty());
    assert_eq!(
        (s.request_resumes(), s.local_reply()),
        (0, None),
        "{}",
        host.dump()
    );
}

#[test]
fn an_unknown_upstream_is_refused_at_dispatch() {
    let host = host();
    host.set_known_upstreams(&["somewhere-else"]);
    let s = paused_callout_stream(&host);
    assert!(host.callouts().is_empty(), "{}", host.dump());
    assert_eq!(
        s.local_reply().map(|r| r.status),
        Some(502),
        "{}",
        host.dump()
    );
}

#[test]
fn a_callout_forwarded_to_a_loopback_server() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let server = std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        let mut buf = [0u8; 4096];
        let n = conn.read(&mut buf).unwrap();
        conn.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
            .unwrap();
        String::from_utf8_lossy(&buf[..n]).into_owned()
    });
    let host = host();
    let s = paused_callout_stream(&host);
    let token = host.pending_callouts()[0].token;
    host.forward_callout(token, addr).unwrap();
    let seen = server.join().unwrap();
    assert!(seen.starts_with("GET /floor HTTP/1.1\r\n"), "{seen}");
    assert_eq!(s.request_resumes(), 1, "{}", host.dump());
    assert_eq!(s.upstream_body(), b"hello world");
}

#[test]
fn memory_snapshots_show_what_a_vm_holds() {
    let host = host();
    let vm = worker(&host, "worker-1", "");
    let marker = b"marker-7f3a9c-in-linear-memory-long-enough-to-outlive-free-list-links";
    let s = vm.new_http_stream().unwrap();
    s.request_headers(&REQUEST, false).unwrap();
    s.request_body(marker, true).unwrap();
    let memory = vm.memory_snapshot();
    assert!(memory.len() >= 65_536);
    // The body was freed after the copy; the allocator's links and later
    // allocations overwrite most of it, its last bytes stay (deterministic:
    // same module, same host): the kind of remnant leak hunts look for.
    let tail = &marker[marker.len() - 16..];
    assert!(
        memory.windows(tail.len()).any(|w| w == tail),
        "freed body bytes stay in memory"
    );
}

#[test]
fn the_floor_filter_imports_are_all_provided() {
    let host = host();
    let imports = host.module_imports();
    for expected in [
        "env::proxy_log",
        "env::proxy_get_buffer_bytes",
        "env::proxy_set_buffer_bytes",
        "env::proxy_http_call",
        "wasi_snapshot_preview1::fd_write",
        "wasi_snapshot_preview1::proc_exit",
    ] {
        assert!(
            imports.iter().any(|i| i == expected),
            "{expected} in {imports:?}"
        );
    }
    println!("floor filter imports: {imports:?}");
}

#[test]
fn an_unknown_import_fails_loudly_with_its_name() {
    // (module (type (func)) (import "env" "proxy_bogus" (func (type 0))))
    let mut wasm = b"\0asm\x01\0\0\0".to_vec();
    wasm.extend_from_slice(&[0x01, 0x04, 0x01, 0x60, 0x00, 0x00]);
    wasm.extend_from_slice(&[0x02, 0x13, 0x01, 0x03]);
    wasm.extend_from_slice(b"env");
    wasm.push(0x0b);
    wasm.extend_from_slice(b"proxy_bogus");
    wasm.extend_from_slice(&[0x00, 0x00]);
    let host = Host::from_bytes(&wasm).unwrap();
    match host.start_vm(VmSpec::new("vm", "x")) {
        Err(HostError::Setup(message)) => {
            assert!(message.contains("env::proxy_bogus"), "{message}")
        }
        Err(other) => panic!("wrong error: {other}"),
        Ok(_) => panic!("a module with an unknown import started"),
    }
}
