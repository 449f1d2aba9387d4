//! The host as the filter sees it: every call into Envoy goes through
//! [`Host`], so the glue's decisions run natively against a fake in tests.
//!
//! Every method that can fail returns a `Result` or an `Option`: the wasm
//! implementation never panics on an unexpected status.

use std::time::Duration;

/// Log levels, as proxy-wasm numbers them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Trace,
    Debug,
    Info,
    Warn,
    Error,
    Critical,
}

/// Why a host call failed (a status, never data).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostError {
    /// A compare-and-swap lost: someone wrote the key in between.
    CasMismatch,
    /// The thing named does not exist (cluster, queue, key).
    NotFound,
    /// The host refused the call's arguments (an unknown cluster, …).
    BadArgument,
    /// Any other status.
    Other,
}

/// The answer of an HTTP callout.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CalloutAnswer {
    /// `:status`, if the answer had one (0 otherwise).
    pub status: u16,
    /// The body.
    pub body: Vec<u8>,
    /// The `etag` header, if the answer had one (the snapshot's).
    pub etag: Option<String>,
    /// Bytes of the body after `body` not read into the VM (0: `body` is
    /// the whole body); read with [`Host::callout_body`] while the answer
    /// is being called back.
    pub body_left: usize,
}

/// One HTTP callout to make.
#[derive(Clone, Debug)]
pub struct Callout<'a> {
    pub cluster: &'a str,
    pub headers: Vec<(&'a str, &'a str)>,
    pub body: Option<&'a [u8]>,
    pub timeout: Duration,
}

/// What a body callback may answer with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Pause,
}

/// Metric kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetricKind {
    Counter,
    Gauge,
    /// Integer samples; Envoy exports buckets, a sum and a count.
    Histogram,
}

/// Calls the filter makes into the host. One value serves every context: in
/// proxy-wasm the host applies a call to the context being called back.
pub trait Host {
    /// Milliseconds since the Unix epoch.
    fn now_ms(&self) -> u64;
    /// Microseconds, for durations only (differences of two reads).
    fn clock_us(&self) -> u64;
    fn log(&self, level: Level, message: &str);
    /// A property (`["plugin_root_id"]`, …).
    fn property(&self, path: &[&str]) -> Option<Vec<u8>>;
    /// The plugin's configuration bytes.
    fn plugin_configuration(&self) -> Option<Vec<u8>>;
    fn set_tick_period(&self, period: Duration) -> Result<(), HostError>;

    /// A shared-data value and its CAS token (an absent key has neither).
    fn shared_get(&self, key: &str) -> Result<(Option<Vec<u8>>, Option<u32>), HostError>;
    /// Writes a shared-data value; with `cas`, only if the key is unchanged.
    fn shared_set(&self, key: &str, value: &[u8], cas: Option<u32>) -> Result<(), HostError>;
    fn queue_register(&self, name: &str) -> Result<u32, HostError>;
    fn queue_resolve(&self, vm_id: &str, name: &str) -> Result<Option<u32>, HostError>;
    fn queue_enqueue(&self, queue: u32, message: &[u8]) -> Result<(), HostError>;
    fn queue_dequeue(&self, queue: u32) -> Result<Option<Vec<u8>>, HostError>;

    /// Starts a callout; its answer arrives in the calling context's
    /// callout callback with the returned token.
    fn dispatch(&self, callout: &Callout<'_>) -> Result<u32, HostError>;
    /// The answer of the callout being called back (`body_size` bytes).
    fn callout_answer(&self, body_size: usize) -> CalloutAnswer;
    /// Bytes `start..start + len` of the body of the callout being called
    /// back (`None`: not available).
    fn callout_body(&self, start: usize, len: usize) -> Option<Vec<u8>>;

    fn metric_define(&self, kind: MetricKind, name: &str) -> Result<u32, HostError>;
    fn metric_increment(&self, id: u32, by: i64);
    fn metric_record(&self, id: u32, value: u64);

    fn request_header(&self, name: &str) -> Option<String>;
    /// Every request header (pseudo-headers included), in order; a value
    /// that is not UTF-8 is read lossily.
    fn request_headers(&self) -> Result<Vec<(String, String)>, HostError>;
    /// Replaces every value of request header `name` with `values`, in
    /// order (headers callback only).
    fn set_request_header(&self, name: &str, values: &[String]);
    fn remove_request_header(&self, name: &str);
    /// Every request trailer (trailers callback only).
    fn request_trailers(&self) -> Result<Vec<(String, String)>, HostError>;
    /// Replaces every value of request trailer `name` with `values`
    /// (trailers callback only).
    fn set_request_trailer(&self, name: &str, values: &[String]);
    fn request_body(&self, size: usize) -> Option<Vec<u8>>;
    fn set_request_body(&self, size: usize, body: &[u8]) -> Result<(), HostError>;
    fn resume_request(&self);

    fn response_header(&self, name: &str) -> Option<String>;
    fn remove_response_header(&self, name: &str);
    fn set_response_header(&self, name: &str, value: &str);
    fn response_body(&self, size: usize) -> Option<Vec<u8>>;
    fn set_response_body(&self, size: usize, body: &[u8]) -> Result<(), HostError>;

    /// Answers the request locally.
    fn send_reply(&self, status: u16, headers: &[(&str, &str)], body: &[u8]);
}

/// The first value of header `name` in `pairs` as a host gives them (names
/// compared as ASCII case-insensitive).
pub(crate) fn header<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}
