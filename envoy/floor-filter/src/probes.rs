//! Probe behaviours: each probe word in the plugin configuration switches on
//! one host feature, so the host-tests harness can prove that feature on a
//! real module. None of them runs with an empty configuration (benchmarks).
//! Every host call here tolerates failure: a probe never crashes the VM.

use proxy_wasm::hostcalls;
use proxy_wasm::types::{Action, MapType, MetricType, Status};
use std::time::Duration;

/// Shared-data key counting finished requests (probe `shared`).
const REQUEST_COUNT_KEY: &str = "floor.count";
/// Shared-data key numbering the VMs that registered a queue (probe `queue`).
const VM_COUNT_KEY: &str = "floor.vm_count";
/// Shared-data key listing every VM's queue name, comma-separated.
const QUEUE_LIST_KEY: &str = "floor.queues";
/// The upstream (cluster) callouts go to (probe `callout`).
const CALLOUT_UPSTREAM: &str = "control";

/// Which probes are on, and the metric ids they defined.
#[derive(Clone, Copy, Default)]
pub struct Probes {
    log: bool,
    metrics: Option<Metrics>,
    shared: bool,
    /// This VM's queue number, when probe `queue` is on and registered.
    queue_number: Option<u32>,
    queue: bool,
    tick: bool,
    callout: bool,
}

/// Metric ids (probe `metrics`).
#[derive(Clone, Copy)]
struct Metrics {
    requests: u32,
    cas_conflicts: u32,
    ticks: u32,
    queue_messages: u32,
    body_bytes: u32,
}

impl Probes {
    /// Reads the probe words from the plugin configuration.
    pub fn parse(config: &[u8]) -> Probes {
        let text = String::from_utf8_lossy(config);
        let mut probes = Probes::default();
        for word in text.split_whitespace() {
            match word {
                "log" => probes.log = true,
                "metrics" => probes.metrics = define_metrics(),
                "shared" => probes.shared = true,
                "queue" => probes.queue = true,
                "tick" => probes.tick = true,
                "callout" => probes.callout = true,
                _ => log(
                    2,
                    &format!("floor: unknown probe word at length {}", word.len()),
                ),
            }
        }
        probes
    }

    /// Root-context setup: ticks and this VM's queue. Returns the queue id.
    pub fn configure(&mut self) -> Option<u32> {
        if self.tick {
            let _ = hostcalls::set_tick_period(Duration::from_secs(1));
        }
        if !self.queue {
            return None;
        }
        let number = cas_increment(VM_COUNT_KEY)?;
        let name = format!("floor-{number}");
        let queue_id = hostcalls::register_shared_queue(&name).ok()?;
        cas_append(QUEUE_LIST_KEY, &name);
        self.queue_number = Some(number);
        self.log_info(&format!("floor: registered queue {name}"));
        Some(queue_id)
    }

    /// Probe `tick`: count and log each tick.
    pub fn tick(&self) {
        self.count(|m| m.ticks);
        self.log_info("floor: tick");
    }

    /// Probe `queue`: drain this VM's queue, logging each message.
    pub fn queue_ready(&self, queue_id: u32) {
        while let Ok(Some(message)) = hostcalls::dequeue_shared_queue(queue_id) {
            self.count(|m| m.queue_messages);
            let text = String::from_utf8_lossy(&message);
            self.log_info(&format!("floor: queue message: {text}"));
        }
    }

    /// Start of a request: count it; probe `shared` reads the CAS.
    pub fn request_started(&self) -> Option<u32> {
        self.count(|m| m.requests);
        if !self.shared {
            return None;
        }
        hostcalls::get_shared_data(REQUEST_COUNT_KEY)
            .ok()
            .and_then(|(_, cas)| cas)
    }

    /// A whole body was copied back.
    pub fn body_copied(&self, context_id: u32, size: usize) {
        if let Some(metrics) = self.metrics {
            let _ = hostcalls::record_metric(metrics.body_bytes, size as u64);
        }
        self.log_info(&format!(
            "floor: context {context_id} copied a body of {size} bytes"
        ));
    }

    /// End of the request body: probe `shared` writes with the CAS read at
    /// the start; probe `queue` broadcasts; probe `callout` pauses for one
    /// callout.
    pub fn request_ended(&self, shared_cas: Option<u32>) -> Action {
        if self.shared {
            self.write_count(shared_cas);
        }
        if let (true, Some(number)) = (self.queue, self.queue_number) {
            broadcast(&format!("request seen by floor-{number}"));
        }
        if self.callout {
            let headers = vec![
                (":method", "GET"),
                (":path", "/floor"),
                (":authority", CALLOUT_UPSTREAM),
            ];
            let sent = hostcalls::dispatch_http_call(
                CALLOUT_UPSTREAM,
                headers,
                None,
                vec![],
                Duration::from_secs(5),
            );
            if sent.is_ok() {
                return Action::Pause;
            }
            let _ = hostcalls::send_http_response(502, vec![], Some(b"floor: callout refused"));
            return Action::Pause;
        }
        Action::Continue
    }

    fn write_count(&self, cas: Option<u32>) {
        let current = read_u64(REQUEST_COUNT_KEY);
        let next = (current + 1).to_string();
        match hostcalls::set_shared_data(REQUEST_COUNT_KEY, Some(next.as_bytes()), cas) {
            Err(Status::CasMismatch) => {
                self.count(|m| m.cas_conflicts);
                log(3, "floor: shared count CAS conflict");
            }
            _ => self.log_info("floor: shared count written"),
        }
    }

    fn count(&self, pick: fn(&Metrics) -> u32) {
        if let Some(metrics) = self.metrics {
            let _ = hostcalls::increment_metric(pick(&metrics), 1);
        }
    }

    fn log_info(&self, message: &str) {
        if self.log {
            log(2, message);
        }
    }
}

/// Probe `callout`: the answer resumes the request on 200, else answers 502.
pub fn callout_answered(body_size: usize) {
    let status = hostcalls::get_map_value(MapType::HttpCallResponseHeaders, ":status")
        .ok()
        .flatten();
    log(
        2,
        &format!("floor: callout answered with a body of {body_size} bytes"),
    );
    if status.as_deref() == Some("200") {
        let _ = hostcalls::resume_http_request();
    } else {
        let _ = hostcalls::send_http_response(
            502,
            vec![("x-floor", "callout-failed")],
            Some(b"floor: callout failed"),
        );
    }
}

fn define_metrics() -> Option<Metrics> {
    Some(Metrics {
        requests: hostcalls::define_metric(MetricType::Counter, "floor_requests").ok()?,
        cas_conflicts: hostcalls::define_metric(MetricType::Counter, "floor_cas_conflicts").ok()?,
        ticks: hostcalls::define_metric(MetricType::Counter, "floor_ticks").ok()?,
        queue_messages: hostcalls::define_metric(MetricType::Counter, "floor_queue_messages")
            .ok()?,
        body_bytes: hostcalls::define_metric(MetricType::Histogram, "floor_body_bytes").ok()?,
    })
}

/// Sends `message` to every queue listed under [`QUEUE_LIST_KEY`].
fn broadcast(message: &str) {
    let vm_id = hostcalls::get_property(vec!["plugin_vm_id"])
        .ok()
        .flatten()
        .map(|id| String::from_utf8_lossy(&id).into_owned())
        .unwrap_or_default();
    let list = read_string(QUEUE_LIST_KEY);
    for name in list.split(',').filter(|name| !name.is_empty()) {
        if let Ok(Some(queue_id)) = hostcalls::resolve_shared_queue(&vm_id, name) {
            let _ = hostcalls::enqueue_shared_queue(queue_id, Some(message.as_bytes()));
        }
    }
}

fn read_string(key: &str) -> String {
    match hostcalls::get_shared_data(key) {
        Ok((Some(bytes), _)) => String::from_utf8_lossy(&bytes).into_owned(),
        _ => String::new(),
    }
}

fn read_u64(key: &str) -> u64 {
    read_string(key).parse().unwrap_or(0)
}

/// Adds one to a shared counter under CAS; returns the new value.
fn cas_increment(key: &str) -> Option<u32> {
    for _ in 0..16 {
        let (value, cas) = hostcalls::get_shared_data(key).ok()?;
        let current: u32 = value
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .and_then(|text| text.parse().ok())
            .unwrap_or(0);
        let next = current + 1;
        if hostcalls::set_shared_data(key, Some(next.to_string().as_bytes()), cas).is_ok() {
            return Some(next);
        }
    }
    None
}

/// Appends `item` to a comma-separated shared list under CAS.
fn cas_append(key: &str, item: &str) {
    for _ in 0..16 {
        let Ok((value, cas)) = hostcalls::get_shared_data(key) else {
            return;
        };
        let mut list = value
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .unwrap_or_default();
        if !list.is_empty() {
            list.push(',');
        }
        list.push_str(item);
        if hostcalls::set_shared_data(key, Some(list.as_bytes()), cas).is_ok() {
            return;
        }
    }
}

/// Logs at a proxy-wasm level number (2 info, 3 warn), ignoring failure.
fn log(level: u32, message: &str) {
    let level = match level {
        3 => proxy_wasm::types::LogLevel::Warn,
        _ => proxy_wasm::types::LogLevel::Info,
    };
    let _ = hostcalls::log(level, message);
}
