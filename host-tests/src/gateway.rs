//! The Latet filter as Envoy runs it, for scenarios: one host with the
//! singleton sync VM (`latet-sync`) and worker VMs (`latet`) of the built
//! `latet_filter.wasm`, all under one `vm_id`, their control-service
//! callouts routed to a real control service on loopback (or scripted).
//!
//! The event feed is a long poll: its callouts are held, and
//! [`Gateway::pump_feed`] answers them from the service *now* (with
//! `wait_ms=0`), so a test decides when the feed moves.

use crate::callout::{forward, CalloutAnswer, CalloutRequest, CalloutResponse, CalloutScript};
use crate::error::HostError;
use crate::host::{Host, Vm};
use crate::record::Event;
use crate::stream::HttpStream;
use crate::vm::VmSpec;
use crate::wasm_build::release_wasm;
use std::cell::RefCell;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// The Envoy cluster name scenarios give the control service.
pub const CONTROL_CLUSTER: &str = "latet_control";
/// The vm_id every VM of a gateway shares.
pub const VM_ID: &str = "latet";
/// The filter's root id.
pub const FILTER_ROOT: &str = "latet";
/// The sync service's root id.
pub const SYNC_ROOT: &str = "latet-sync";
/// Control-service paths the filter calls.
pub const SNAPSHOT_PATH: &str = "/_latet/gateway/v1/snapshot";
pub const EVENTS_PATH: &str = "/_latet/gateway/v1/events";
pub const ENTRIES_PATH: &str = "/_latet/gateway/v1/entries";
/// The chat path (OpenAI chat shape by the default routes).
pub const CHAT_PATH: &str = "/v1/chat/completions";

/// The filter's release `.wasm`: `$LATET_FILTER_WASM` if set (e.g. the
/// `wasm-opt` output of `plugin/build.sh`), else the release build (built
/// when missing or stale).
pub fn filter_wasm() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os("LATET_FILTER_WASM") {
        return Ok(PathBuf::from(path));
    }
    release_wasm("latet-filter", "latet_filter", &FILTER_SOURCES)
}

/// What the filter's `.wasm` is built from (its staleness check).
pub const FILTER_SOURCES: [&str; 5] = [
    "plugin/src",
    "plugin/Cargo.toml",
    "plugin/build.rs",
    "core/src",
    "core/Cargo.toml",
];

/// Which control-service call a callout is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallKind {
    Snapshot,
    Feed,
    Entries,
    Other,
}

impl CallKind {
    /// The kind of a callout by its path.
    pub fn of(request: &CalloutRequest) -> CallKind {
        let path = request.path();
        if path.starts_with(SNAPSHOT_PATH) {
            CallKind::Snapshot
        } else if path.starts_with(EVENTS_PATH) {
            CallKind::Feed
        } else if path.starts_with(ENTRIES_PATH) {
            CallKind::Entries
        } else {
            CallKind::Other
        }
    }
}

/// What the link does with a kind of call when it is dispatched.
#[derive(Clone, Debug, PartialEq)]
pub enum Route {
    /// Send it to the control service at once and answer with what it said
    /// (503 when it is down, like Envoy for a dead endpoint).
    Forward,
    /// Leave it pending (the test answers; feed calls: [`Gateway::pump_feed`]).
    Hold,
    /// Fail it (reset).
    Fail,
    /// Answer 200 with this body.
    Scripted(Vec<u8>),
}

struct LinkState {
    addr: SocketAddr,
    snapshot: Route,
    feed: Route,
    entries: Route,
}

impl LinkState {
    fn route(&self, kind: CallKind) -> &Route {
        match kind {
            CallKind::Snapshot => &self.snapshot,
            CallKind::Feed => &self.feed,
            CallKind::Entries => &self.entries,
            CallKind::Other => &Route::Fail,
        }
    }
}

/// A gateway: the host, its sync VM and workers, and the control link.
pub struct Gateway {
    pub host: Host,
    pub sync: Vm,
    pub workers: Vec<Vm>,
    link: Rc<RefCell<LinkState>>,
}

/// A configuration for both roots: `extra` is added to the object
/// (`"\"failureMode\": \"redact\""`, or empty).
pub fn config(token: &str, extra: &str) -> String {
    let comma = if extra.trim().is_empty() { "" } else { ", " };
    format!(
        "{{\"controlCluster\": \"{CONTROL_CLUSTER}\", \"gatewayToken\": \"{token}\"{comma}{extra}}}"
    )
}

impl Gateway {
    /// Starts the sync VM first (so it ticks first and holds the lease),
    /// then `workers` workers (`worker-1`…), all with `config`. Snapshot and
    /// entries calls are forwarded to `control`; feed calls are held.
    pub fn start(config: &str, workers: usize, control: SocketAddr) -> Result<Gateway, String> {
        Gateway::start_with(&filter_wasm()?, config, workers, control)
    }

    /// [`Gateway::start`] with another build of the filter.
    pub fn start_with(
        wasm: &Path,
        config: &str,
        workers: usize,
        control: SocketAddr,
    ) -> Result<Gateway, String> {
        let host = Host::new(wasm).map_err(|e| e.to_string())?;
        host.set_known_upstreams(&[CONTROL_CLUSTER]);
        let link = Rc::new(RefCell::new(LinkState {
            addr: control,
            snapshot: Route::Forward,
            feed: Route::Hold,
            entries: Route::Forward,
        }));
        let responder_link = Rc::clone(&link);
        host.set_callout_responder(move |request| {
            let link = responder_link.borrow();
            match link.route(CallKind::of(request)) {
                Route::Forward => CalloutScript::Forward(link.addr),
                Route::Hold => CalloutScript::Hold,
                Route::Fail => CalloutScript::Fail,
                Route::Scripted(body) => CalloutScript::Answer(
                    CalloutResponse::new(200, body.clone())
                        .with_header("content-type", "application/json"),
                ),
            }
        });
        let start = |spec: VmSpec| {
            host.start_vm(spec)
                .map_err(|e| format!("{e}\n{}", host.dump()))
        };
        let sync = start(VmSpec::new("sync", VM_ID).root(SYNC_ROOT, config))?;
        let mut started = Vec::new();
        for n in 1..=workers {
            started.push(start(
                VmSpec::new(&format!("worker-{n}"), VM_ID).root(FILTER_ROOT, config),
            )?);
        }
        Ok(Gateway {
            host,
            sync,
            workers: started,
            link,
        })
    }

    /// Sets what the link does with one kind of call from now on.
    pub fn route(&self, kind: CallKind, route: Route) {
        let mut link = self.link.borrow_mut();
        match kind {
            CallKind::Snapshot => link.snapshot = route,
            CallKind::Feed => link.feed = route,
            CallKind::Entries => link.entries = route,
            CallKind::Other => {}
        }
    }

    /// Where forwarded calls go.
    pub fn control_addr(&self) -> SocketAddr {
        self.link.borrow().addr
    }

    /// Worker `n` (1-based, as named).
    pub fn worker(&self, n: usize) -> &Vm {
        &self.workers[n - 1]
    }

    /// Pending callouts of one kind.
    pub fn pending(&self, kind: CallKind) -> Vec<CalloutRequest> {
        self.host
            .pending_callouts()
            .into_iter()
            .filter(|request| CallKind::of(request) == kind)
            .collect()
    }

    /// Every callout of one kind ever dispatched.
    pub fn dispatched(&self, kind: CallKind) -> Vec<CalloutRequest> {
        self.host
            .callouts()
            .into_iter()
            .filter(|request| CallKind::of(request) == kind)
            .collect()
    }

    /// Forwards a pending callout to the control service now.
    pub fn forward_pending(&self, token: u32) -> Result<(), HostError> {
        self.host.forward_callout(token, self.control_addr())
    }

    /// Answers every feed call pending now from the control service, as
    /// the long poll would return now (`wait_ms=0`); returns how many. The
    /// poller publishes what came and wakes the workers (queues settle
    /// unless held).
    pub fn pump_feed(&self) -> usize {
        let pending = self.pending(CallKind::Feed);
        for request in &pending {
            let mut now = request.clone();
            for (name, value) in &mut now.headers {
                if name == ":path" {
                    *value = without_wait(value);
                }
            }
            let result = match forward(self.control_addr(), &now) {
                CalloutAnswer::Response(response) => {
                    self.host.answer_callout(request.token, response)
                }
                _ => self.host.fail_callout(request.token),
            };
            // A callout the filter dropped meanwhile is not an error here.
            let _ = result;
        }
        pending.len()
    }

    /// The shared snapshot in its compact form, joined from its manifest
    /// (`latet.v1.snapshot`) and parts (`latet.v1.snapshot.<n>`) as a
    /// worker reads it (`None`: absent, emptied, torn or unreadable).
    pub fn shared_snapshot(&self) -> Option<Vec<u8>> {
        use latet_core::wire::snapshot_parts::{join_snapshot, SnapshotManifest};
        let (bytes, _) = self.host.shared_data(VM_ID, "latet.v1.snapshot")?;
        let manifest = SnapshotManifest::parse(&bytes).ok()?;
        join_snapshot(&manifest, |i| {
            Some(
                self.host
                    .shared_data(VM_ID, &format!("latet.v1.snapshot.{i}"))?
                    .0,
            )
        })
        .ok()
    }

    /// Every shared-data key that may hold values: the snapshot's
    /// manifest and every part present among the first 4,096, the events
    /// and the state.
    pub fn value_keys(&self) -> Vec<String> {
        let mut keys = vec!["latet.v1.snapshot".to_string()];
        for i in 0..4096 {
            let key = format!("latet.v1.snapshot.{i}");
            if self.host.shared_data(VM_ID, &key).is_some() {
                keys.push(key);
            }
        }
        keys.extend(["latet.v1.events".to_string(), "latet.v1.state".to_string()]);
        keys
    }

    /// The published feed position (`latet.v1.state`'s `seq`).
    pub fn published_seq(&self) -> Option<u64> {
        let (bytes, _) = self.host.shared_data(VM_ID, "latet.v1.state")?;
        let state: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
        state["seq"].as_u64()
    }

    /// When the feed last answered (`latet.v1.state`'s `feedAnsweredAtMs`).
    pub fn feed_answered_at_ms(&self) -> Option<u64> {
        let (bytes, _) = self.host.shared_data(VM_ID, "latet.v1.state")?;
        let state: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
        state["feedAnsweredAtMs"].as_u64()
    }

    /// Pumps the feed until the published position stops moving (the
    /// clock does not move); returns it.
    pub fn settle_feed(&self) -> Option<u64> {
        let mut last = self.published_seq();
        for _ in 0..20 {
            self.pump_feed();
            let _ = self.host.settle();
            let now = self.published_seq();
            if now == last && self.pending(CallKind::Feed).len() <= 1 {
                return now;
            }
            last = now;
        }
        last
    }

    /// Starts a chat request on `vm`: headers, then the whole body (one
    /// chunk, end of stream). Returns the stream for the answer.
    pub fn chat(&self, vm: &Vm, body: &[u8]) -> Result<HttpStream, HostError> {
        let stream = vm.new_http_stream()?;
        let length = body.len().to_string();
        stream.request_headers(
            &[
                (":method", "POST"),
                (":path", CHAT_PATH),
                (":authority", "api.openai.com"),
                ("content-type", "application/json"),
                ("content-length", &length),
            ],
            false,
        )?;
        // Envoy sends no body after a local reply (the filter refuses at
        // the headers when it cannot examine them).
        if stream.local_reply().is_none() {
            stream.request_body(body, true)?;
        }
        Ok(stream)
    }

    /// How much a VM moved a counter (its own increments, from the records).
    pub fn counter_of(&self, vm: &Vm, metric: &str) -> i64 {
        self.host
            .records()
            .into_iter()
            .filter(|record| record.vm == vm.name())
            .filter_map(|record| match record.event {
                Event::Metric {
                    name,
                    op: "increment",
                    value,
                } if name == metric => Some(value),
                _ => None,
            })
            .sum()
    }
}

/// `wait_ms=N` in a feed path rewritten to `wait_ms=0`.
fn without_wait(path: &str) -> String {
    match path.split_once('?') {
        Some((base, query)) => {
            let query: Vec<String> = query
                .split('&')
                .map(|part| {
                    if part.starts_with("wait_ms=") {
                        "wait_ms=0".to_string()
                    } else {
                        part.to_string()
                    }
                })
                .collect();
            format!("{base}?{}", query.join("&"))
        }
        None => path.to_string(),
    }
}

/// A chat request body: `messages` as (role, content).
pub fn chat_body(messages: &[(&str, &str)]) -> Vec<u8> {
    let messages: Vec<serde_json::Value> = messages
        .iter()
        .map(|(role, content)| serde_json::json!({"role": role, "content": content}))
        .collect();
    serde_json::json!({"model": "gpt-4o-mini", "messages": messages})
        .to_string()
        .into_bytes()
}

/// A chat completion answer body carrying `text`.
pub fn chat_answer(text: &str) -> Vec<u8> {
    serde_json::json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]
    })
    .to_string()
    .into_bytes()
}

/// Answers a stream with a whole JSON body (one chunk, end of stream).
pub fn answer_json(stream: &HttpStream, body: &[u8]) -> Result<(), HostError> {
    let length = body.len().to_string();
    stream.response_headers(
        &[
            (":status", "200"),
            ("content-type", "application/json"),
            ("content-length", &length),
        ],
        false,
    )?;
    stream.response_body(body, true)?;
    Ok(())
}

/// The first value of a header in a header list.
pub fn header_value(headers: &[(String, String)], name: &str) -> Option<String> {
    headers
        .iter()
        .find(|(key, _)| key.eq_ignore_ascii_case(name))
        .map(|(_, value)| value.clone())
}

/// The surrogate the vault gives `value` (from the control service's
/// snapshot), if any.
pub fn surrogate_in_snapshot(snapshot: &[u8], value: &str) -> Option<String> {
    let snapshot: serde_json::Value = serde_json::from_slice(snapshot).ok()?;
    snapshot["entries"]
        .as_array()?
        .iter()
        .find(|entry| entry["value"] == value)
        .and_then(|entry| entry["surrogate"].as_str())
        .map(str::to_string)
}

/// Asserts that the filter answered `s` itself with `status` and a body
/// naming `error_type`, and forwarded nothing; returns the body. `what`
/// names the request in the failure, `dump` shows the host's record.
pub fn assert_refused(
    s: &HttpStream,
    status: u32,
    error_type: &str,
    what: &str,
    dump: &dyn Fn() -> String,
) -> String {
    let reply = s.local_reply();
    assert!(reply.is_some(), "{what}: a local reply\n{}", dump());
    let Some(reply) = reply else {
        return String::new();
    };
    assert_eq!(reply.status, status, "{what}\n{}", dump());
    let body = String::from_utf8_lossy(&reply.body).into_owned();
    assert!(body.contains(error_type), "{what}: {body}");
    assert!(
        s.upstream_body().is_empty(),
        "{what}: nothing forwarded\n{}",
        dump()
    );
    body
}

/// True when `needle` occurs in `haystack`.
pub fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty()
        && haystack
            .windows(needle.len())
            .any(|window| window == needle)
}
