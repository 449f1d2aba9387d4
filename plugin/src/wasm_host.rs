//! [`Host`] over `proxy_wasm::hostcalls`. Every result is matched: a failed
//! call becomes an error value or a logged no-op, never a panic of ours.
//! (The SDK still panics on statuses it does not know; see README.)

use crate::host::{Callout, CalloutAnswer, Host, HostError, Level, MetricKind};
use proxy_wasm::hostcalls;
use proxy_wasm::types::{BufferType, LogLevel, MapType, MetricType, Status};
use std::time::{Duration, UNIX_EPOCH};

/// The host of the running VM (a unit: the host knows the current context).
#[derive(Clone, Copy, Debug, Default)]
pub struct WasmHost;

fn host_error(status: Status) -> HostError {
    match status {
        Status::CasMismatch => HostError::CasMismatch,
        Status::NotFound => HostError::NotFound,
        Status::BadArgument => HostError::BadArgument,
        _ => HostError::Other,
    }
}

fn log_level(level: Level) -> LogLevel {
    match level {
        Level::Trace => LogLevel::Trace,
        Level::Debug => LogLevel::Debug,
        Level::Info => LogLevel::Info,
        Level::Warn => LogLevel::Warn,
        Level::Error => LogLevel::Error,
        Level::Critical => LogLevel::Critical,
    }
}

/// A header map's pairs; values that are not UTF-8 are read lossily (they
/// are examined all the same; names are ASCII: Envoy validates them).
fn map_pairs(map: MapType) -> Result<Vec<(String, String)>, HostError> {
    let pairs = hostcalls::get_map_bytes(map).map_err(host_error)?;
    Ok(pairs
        .into_iter()
        .map(|(name, value)| {
            let value = String::from_utf8(value)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
            (name, value)
        })
        .collect())
}

/// Every value of `name` in `map` replaced by `values`: the first by
/// replace (which drops the others), the rest added after it.
fn replace_values(map: MapType, name: &str, values: &[String]) {
    let mut values = values.iter();
    match values.next() {
        Some(first) => {
            let _ = hostcalls::set_map_value(map, name, Some(first));
        }
        None => {
            let _ = hostcalls::set_map_value(map, name, None);
        }
    }
    for value in values {
        let _ = hostcalls::add_map_value(map, name, value);
    }
}

impl Host for WasmHost {
    fn now_ms(&self) -> u64 {
        self.clock_us() / 1000
    }

    fn clock_us(&self) -> u64 {
        // The proxy-wasm clock, in whole microseconds: no code of its own
        // (std's `Instant` cost 1.4 KB of module). A wall-clock step during
        // a measurement skews that one sample (backwards: it reads 0).
        hostcalls::get_current_time()
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
    }

    fn log(&self, level: Level, message: &str) {
        let _ = hostcalls::log(log_level(level), message);
    }

    fn property(&self, path: &[&str]) -> Option<Vec<u8>> {
        hostcalls::get_property(path.to_vec()).ok().flatten()
    }

    fn plugin_configuration(&self) -> Option<Vec<u8>> {
        hostcalls::get_buffer(BufferType::PluginConfiguration, 0, usize::MAX)
            .ok()
            .flatten()
    }

    fn set_tick_period(&self, period: Duration) -> Result<(), HostError> {
        hostcalls::set_tick_period(period).map_err(host_error)
    }

    fn shared_get(&self, key: &str) -> Result<(Option<Vec<u8>>, Option<u32>), HostError> {
        hostcalls::get_shared_data(key).map_err(host_error)
    }

    fn shared_set(&self, key: &str, value: &[u8], cas: Option<u32>) -> Result<(), HostError> {
        hostcalls::set_shared_data(key, Some(value), cas).map_err(host_error)
    }

    fn queue_register(&self, name: &str) -> Result<u32, HostError> {
        hostcalls::register_shared_queue(name).map_err(host_error)
    }

    fn queue_resolve(&self, vm_id: &str, name: &str) -> Result<Option<u32>, HostError> {
        hostcalls::resolve_shared_queue(vm_id, name).map_err(host_error)
    }

    fn queue_enqueue(&self, queue: u32, message: &[u8]) -> Result<(), HostError> {
        hostcalls::enqueue_shared_queue(queue, Some(message)).map_err(host_error)
    }

    fn queue_dequeue(&self, queue: u32) -> Result<Option<Vec<u8>>, HostError> {
        hostcalls::dequeue_shared_queue(queue).map_err(host_error)
    }

    fn dispatch(&self, callout: &Callout<'_>) -> Result<u32, HostError> {
        hostcalls::dispatch_http_call(
            callout.cluster,
            callout.headers.clone(),
            callout.body,
            Vec::new(),
            callout.timeout,
        )
        .map_err(host_error)
    }

    fn callout_answer(&self, body_size: usize) -> CalloutAnswer {
        let status = hostcalls::get_map_value(MapType::HttpCallResponseHeaders, ":status")
            .ok()
            .flatten()
            .and_then(|s| s.parse::<u16>().ok())
            .unwrap_or(0);
        let body = hostcalls::get_buffer(BufferType::HttpCallResponseBody, 0, body_size)
            .ok()
            .flatten()
            .unwrap_or_default();
        let etag = hostcalls::get_map_value(MapType::HttpCallResponseHeaders, "etag")
            .ok()
            .flatten();
        CalloutAnswer {
            status,
            body,
            etag,
            body_left: 0,
        }
    }

    fn callout_body(&self, start: usize, len: usize) -> Option<Vec<u8>> {
        hostcalls::get_buffer(BufferType::HttpCallResponseBody, start, len)
            .ok()
            .flatten()
    }

    fn metric_define(&self, kind: MetricKind, name: &str) -> Result<u32, HostError> {
        let kind = match kind {
            MetricKind::Counter => MetricType::Counter,
            MetricKind::Gauge => MetricType::Gauge,
            MetricKind::Histogram => MetricType::Histogram,
        };
        hostcalls::define_metric(kind, name).map_err(host_error)
    }

    fn metric_increment(&self, id: u32, by: i64) {
        let _ = hostcalls::increment_metric(id, by);
    }

    fn metric_record(&self, id: u32, value: u64) {
        let _ = hostcalls::record_metric(id, value);
    }

    fn request_header(&self, name: &str) -> Option<String> {
        hostcalls::get_map_value(MapType::HttpRequestHeaders, name)
            .ok()
            .flatten()
    }

    fn request_headers(&self) -> Result<Vec<(String, String)>, HostError> {
        map_pairs(MapType::HttpRequestHeaders)
    }

    fn set_request_header(&self, name: &str, values: &[String]) {
        replace_values(MapType::HttpRequestHeaders, name, values);
    }

    fn request_trailers(&self) -> Result<Vec<(String, String)>, HostError> {
        map_pairs(MapType::HttpRequestTrailers)
    }

    fn set_request_trailer(&self, name: &str, values: &[String]) {
        replace_values(MapType::HttpRequestTrailers, name, values);
    }

    fn remove_request_header(&self, name: &str) {
        let _ = hostcalls::remove_map_value(MapType::HttpRequestHeaders, name);
    }

    fn request_body(&self, size: usize) -> Option<Vec<u8>> {
        hostcalls::get_buffer(BufferType::HttpRequestBody, 0, size)
            .ok()
            .flatten()
    }

    fn set_request_body(&self, size: usize, body: &[u8]) -> Result<(), HostError> {
        hostcalls::set_buffer(BufferType::HttpRequestBody, 0, size, body).map_err(host_error)
    }

    fn resume_request(&self) {
        let _ = hostcalls::resume_http_request();
    }

    fn response_header(&self, name: &str) -> Option<String> {
        hostcalls::get_map_value(MapType::HttpResponseHeaders, name)
            .ok()
            .flatten()
    }

    fn remove_response_header(&self, name: &str) {
        let _ = hostcalls::remove_map_value(MapType::HttpResponseHeaders, name);
    }

    fn set_response_header(&self, name: &str, value: &str) {
        let _ = hostcalls::set_map_value(MapType::HttpResponseHeaders, name, Some(value));
    }

    fn response_body(&self, size: usize) -> Option<Vec<u8>> {
        hostcalls::get_buffer(BufferType::HttpResponseBody, 0, size)
            .ok()
            .flatten()
    }

    fn set_response_body(&self, size: usize, body: &[u8]) -> Result<(), HostError> {
        hostcalls::set_buffer(BufferType::HttpResponseBody, 0, size, body).map_err(host_error)
    }

    fn send_reply(&self, status: u16, headers: &[(&str, &str)], body: &[u8]) {
        let _ = hostcalls::send_http_response(u32::from(status), headers.to_vec(), Some(body));
    }
}
