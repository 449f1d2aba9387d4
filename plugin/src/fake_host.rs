//! A fake host for native tests: shared data with CAS, queues, a clock,
//! recorded callouts, headers, bodies, replies, logs and metrics. Several
//! "VMs" share one [`FakeEnvoy`] (shared data and queues); each request has
//! its own headers and bodies.

use crate::host::{header, Callout, CalloutAnswer, Host, HostError, Level, MetricKind};
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;
use std::time::Duration;

/// What several VMs of one Envoy share.
#[derive(Default)]
pub struct FakeEnvoy {
    pub now_ms: Cell<u64>,
    pub shared: RefCell<BTreeMap<String, (Vec<u8>, u32)>>,
    pub queues: RefCell<Vec<(String, VecDeque<Vec<u8>>)>>,
    pub metrics: RefCell<Vec<(String, MetricKind, i64)>>,
    /// Every histogram sample recorded, with its metric's name, in order.
    pub samples: RefCell<Vec<(String, u64)>>,
    /// How far the duration clock moves at each read (µs; 0: it moves
    /// only with `now_ms`), so that a duration is the reads in between.
    pub clock_step_us: Cell<u64>,
    clock_reads: Cell<u64>,
    pub next_token: Cell<u32>,
}

/// A recorded callout.
#[derive(Clone, Debug)]
pub struct SentCallout {
    pub token: u32,
    pub cluster: String,
    pub headers: Vec<(String, String)>,
    pub body: Option<Vec<u8>>,
}

impl SentCallout {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// One VM's (and its current request's) view of the host.
pub struct FakeHost {
    pub envoy: Rc<FakeEnvoy>,
    pub logs: RefCell<Vec<(Level, String)>>,
    pub callouts: RefCell<Vec<SentCallout>>,
    pub dispatch_fails: Cell<bool>,
    pub request_headers: RefCell<Vec<(String, String)>>,
    pub request_trailers: RefCell<Vec<(String, String)>>,
    pub request_body: RefCell<Vec<u8>>,
    pub resumed: Cell<u32>,
    pub response_headers: RefCell<Vec<(String, String)>>,
    pub response_body: RefCell<Vec<u8>>,
    pub replies: RefCell<Vec<(u16, String)>>,
    pub tick_period: Cell<Option<Duration>>,
    pub configuration: RefCell<Vec<u8>>,
    /// Every shared-data key read, in order (to count reads per request).
    pub shared_reads: RefCell<Vec<String>>,
    /// Body bytes copied into the VM (request and answer), in order.
    pub body_reads: RefCell<Vec<usize>>,
    /// Every call into this host, counted by [`Host`] method name.
    pub host_calls: RefCell<BTreeMap<&'static str, u64>>,
    /// The body of the callout being called back, as
    /// [`Host::callout_body`] reads it.
    pub callout_body: RefCell<Vec<u8>>,
    /// The length of each [`Host::callout_body`] read, in order.
    pub callout_body_reads: RefCell<Vec<usize>>,
    /// Runs before each shared-data read, with its key (another VM writing
    /// in between this VM's reads).
    #[allow(clippy::type_complexity)]
    pub before_shared_get: RefCell<Option<Box<dyn FnMut(&str)>>>,
}

impl FakeHost {
    pub fn new(envoy: Rc<FakeEnvoy>) -> Self {
        if envoy.now_ms.get() == 0 {
            envoy.now_ms.set(1_000_000);
        }
        FakeHost {
            envoy,
            logs: RefCell::default(),
            callouts: RefCell::default(),
            dispatch_fails: Cell::new(false),
            request_headers: RefCell::default(),
            request_trailers: RefCell::default(),
            request_body: RefCell::default(),
            resumed: Cell::new(0),
            response_headers: RefCell::default(),
            response_body: RefCell::default(),
            replies: RefCell::default(),
            tick_period: Cell::new(None),
            configuration: RefCell::default(),
            shared_reads: RefCell::default(),
            body_reads: RefCell::default(),
            host_calls: RefCell::default(),
            callout_body: RefCell::default(),
            callout_body_reads: RefCell::default(),
            before_shared_get: RefCell::default(),
        }
    }

    /// A fresh Envoy with one VM.
    pub fn alone() -> Self {
        FakeHost::new(Rc::new(FakeEnvoy::default()))
    }

    pub fn now_ms_value(&self) -> u64 {
        self.envoy.now_ms.get()
    }

    pub fn advance(&self, ms: u64) {
        self.envoy.now_ms.set(self.envoy.now_ms.get() + ms);
    }

    pub fn set_request(&self, headers: &[(&str, &str)], body: &[u8]) {
        *self.request_headers.borrow_mut() = headers
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        *self.request_body.borrow_mut() = body.to_vec();
    }

    pub fn set_response(&self, headers: &[(&str, &str)], body: &[u8]) {
        *self.response_headers.borrow_mut() = headers
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        *self.response_body.borrow_mut() = body.to_vec();
    }

    pub fn last_callout(&self) -> Option<SentCallout> {
        self.callouts.borrow().last().cloned()
    }

    /// The samples recorded to histogram `name`, in order.
    pub fn samples(&self, name: &str) -> Vec<u64> {
        self.envoy
            .samples
            .borrow()
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| *v)
            .collect()
    }

    pub fn metric(&self, name: &str) -> i64 {
        self.envoy
            .metrics
            .borrow()
            .iter()
            .find(|(n, _, _)| n == name)
            .map_or(0, |(_, _, v)| *v)
    }

    pub fn shared_value(&self, key: &str) -> Option<Vec<u8>> {
        self.envoy.shared.borrow().get(key).map(|(v, _)| v.clone())
    }

    pub fn put_shared(&self, key: &str, value: &[u8]) {
        let _ = self.shared_set(key, value, None);
    }

    /// The host calls counted since the last take, by method name (and
    /// starts counting afresh).
    pub fn take_host_calls(&self) -> BTreeMap<&'static str, u64> {
        std::mem::take(&mut *self.host_calls.borrow_mut())
    }

    fn called(&self, kind: &'static str) {
        *self.host_calls.borrow_mut().entry(kind).or_insert(0) += 1;
    }

    pub fn all_logs(&self) -> String {
        self.logs
            .borrow()
            .iter()
            .map(|(_, m)| m.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Host for FakeHost {
    fn now_ms(&self) -> u64 {
        self.called("now_ms");
        self.envoy.now_ms.get()
    }

    fn clock_us(&self) -> u64 {
        self.called("clock_us");
        let reads = self.envoy.clock_reads.get();
        self.envoy.clock_reads.set(reads + 1);
        self.envoy.now_ms.get() * 1000 + reads * self.envoy.clock_step_us.get()
    }

    fn log(&self, level: Level, message: &str) {
        self.called("log");
        self.logs.borrow_mut().push((level, message.to_string()));
    }

    fn property(&self, _path: &[&str]) -> Option<Vec<u8>> {
        self.called("property");
        None
    }

    fn plugin_configuration(&self) -> Option<Vec<u8>> {
        self.called("plugin_configuration");
        Some(self.configuration.borrow().clone())
    }

    fn set_tick_period(&self, period: Duration) -> Result<(), HostError> {
        self.called("set_tick_period");
        self.tick_period.set(Some(period));
        Ok(())
    }

    fn shared_get(&self, key: &str) -> Result<(Option<Vec<u8>>, Option<u32>), HostError> {
        self.called("shared_get");
        let hook = self.before_shared_get.borrow_mut().take();
        if let Some(mut hook) = hook {
            hook(key);
            *self.before_shared_get.borrow_mut() = Some(hook);
        }
        self.shared_reads.borrow_mut().push(key.to_string());
        Ok(match self.envoy.shared.borrow().get(key) {
            Some((value, cas)) => (Some(value.clone()), Some(*cas)),
            None => (None, None),
        })
    }

    fn shared_set(&self, key: &str, value: &[u8], cas: Option<u32>) -> Result<(), HostError> {
        self.called("shared_set");
        let mut shared = self.envoy.shared.borrow_mut();
        let current = shared.get(key).map(|(_, c)| *c);
        if let (Some(want), Some(have)) = (cas, current) {
            if want != have {
                return Err(HostError::CasMismatch);
            }
        }
        let next = current.unwrap_or(0) + 1;
        shared.insert(key.to_string(), (value.to_vec(), next));
        Ok(())
    }

    fn queue_register(&self, name: &str) -> Result<u32, HostError> {
        self.called("queue_register");
        let mut queues = self.envoy.queues.borrow_mut();
        if let Some(i) = queues.iter().position(|(n, _)| n == name) {
            return Ok(i as u32 + 1);
        }
        queues.push((name.to_string(), VecDeque::new()));
        Ok(queues.len() as u32)
    }

    fn queue_resolve(&self, _vm_id: &str, name: &str) -> Result<Option<u32>, HostError> {
        self.called("queue_resolve");
        Ok(self
            .envoy
            .queues
            .borrow()
            .iter()
            .position(|(n, _)| n == name)
            .map(|i| i as u32 + 1))
    }

    fn queue_enqueue(&self, queue: u32, message: &[u8]) -> Result<(), HostError> {
        self.called("queue_enqueue");
        let mut queues = self.envoy.queues.borrow_mut();
        let q = queues
            .get_mut(queue as usize - 1)
            .ok_or(HostError::NotFound)?;
        q.1.push_back(message.to_vec());
        Ok(())
    }

    fn queue_dequeue(&self, queue: u32) -> Result<Option<Vec<u8>>, HostError> {
        self.called("queue_dequeue");
        let mut queues = self.envoy.queues.borrow_mut();
        let q = queues
            .get_mut(queue as usize - 1)
            .ok_or(HostError::NotFound)?;
        Ok(q.1.pop_front())
    }

    fn dispatch(&self, callout: &Callout<'_>) -> Result<u32, HostError> {
        self.called("dispatch");
        if self.dispatch_fails.get() {
            return Err(HostError::BadArgument);
        }
        let token = self.envoy.next_token.get() + 1;
        self.envoy.next_token.set(token);
        self.callouts.borrow_mut().push(SentCallout {
            token,
            cluster: callout.cluster.to_string(),
            headers: callout
                .headers
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
            body: callout.body.map(<[u8]>::to_vec),
        });
        Ok(token)
    }

    fn callout_answer(&self, _body_size: usize) -> CalloutAnswer {
        self.called("callout_answer");
        CalloutAnswer::default()
    }

    fn callout_body(&self, start: usize, len: usize) -> Option<Vec<u8>> {
        self.called("callout_body");
        self.callout_body_reads.borrow_mut().push(len);
        let body = self.callout_body.borrow();
        body.get(start..start.checked_add(len)?).map(<[u8]>::to_vec)
    }

    fn metric_define(&self, kind: MetricKind, name: &str) -> Result<u32, HostError> {
        self.called("metric_define");
        let mut metrics = self.envoy.metrics.borrow_mut();
        if let Some(i) = metrics.iter().position(|(n, _, _)| n == name) {
            return Ok(i as u32);
        }
        metrics.push((name.to_string(), kind, 0));
        Ok(metrics.len() as u32 - 1)
    }

    fn metric_increment(&self, id: u32, by: i64) {
        self.called("metric_increment");
        if let Some(m) = self.envoy.metrics.borrow_mut().get_mut(id as usize) {
            m.2 += by;
        }
    }

    fn metric_record(&self, id: u32, value: u64) {
        self.called("metric_record");
        if let Some(m) = self.envoy.metrics.borrow_mut().get_mut(id as usize) {
            m.2 = value as i64;
            if m.1 == MetricKind::Histogram {
                self.envoy.samples.borrow_mut().push((m.0.clone(), value));
            }
        }
    }

    fn request_header(&self, name: &str) -> Option<String> {
        self.called("request_header");
        header(&self.request_headers.borrow(), name).map(str::to_string)
    }

    fn request_headers(&self) -> Result<Vec<(String, String)>, HostError> {
        self.called("request_headers");
        Ok(self.request_headers.borrow().clone())
    }

    fn set_request_header(&self, name: &str, values: &[String]) {
        self.called("set_request_header");
        set_pairs(&mut self.request_headers.borrow_mut(), name, values);
    }

    fn request_trailers(&self) -> Result<Vec<(String, String)>, HostError> {
        self.called("request_trailers");
        Ok(self.request_trailers.borrow().clone())
    }

    fn set_request_trailer(&self, name: &str, values: &[String]) {
        self.called("set_request_trailer");
        set_pairs(&mut self.request_trailers.borrow_mut(), name, values);
    }

    fn remove_request_header(&self, name: &str) {
        self.called("remove_request_header");
        self.request_headers
            .borrow_mut()
            .retain(|(n, _)| !n.eq_ignore_ascii_case(name));
    }

    fn request_body(&self, size: usize) -> Option<Vec<u8>> {
        self.called("request_body");
        self.body_reads.borrow_mut().push(size);
        let body = self.request_body.borrow();
        Some(body[..size.min(body.len())].to_vec())
    }

    fn set_request_body(&self, _size: usize, body: &[u8]) -> Result<(), HostError> {
        self.called("set_request_body");
        *self.request_body.borrow_mut() = body.to_vec();
        Ok(())
    }

    fn resume_request(&self) {
        self.called("resume_request");
        self.resumed.set(self.resumed.get() + 1);
    }

    fn response_header(&self, name: &str) -> Option<String> {
        self.called("response_header");
        header(&self.response_headers.borrow(), name).map(str::to_string)
    }

    fn remove_response_header(&self, name: &str) {
        self.called("remove_response_header");
        self.response_headers
            .borrow_mut()
            .retain(|(n, _)| !n.eq_ignore_ascii_case(name));
    }

    fn set_response_header(&self, name: &str, value: &str) {
        self.called("set_response_header");
        let mut headers = self.response_headers.borrow_mut();
        headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        headers.push((name.to_string(), value.to_string()));
    }

    fn response_body(&self, size: usize) -> Option<Vec<u8>> {
        self.called("response_body");
        self.body_reads.borrow_mut().push(size);
        let body = self.response_body.borrow();
        Some(body[..size.min(body.len())].to_vec())
    }

    fn set_response_body(&self, _size: usize, body: &[u8]) -> Result<(), HostError> {
        self.called("set_response_body");
        *self.response_body.borrow_mut() = body.to_vec();
        Ok(())
    }

    fn send_reply(&self, status: u16, _headers: &[(&str, &str)], body: &[u8]) {
        self.called("send_reply");
        self.replies
            .borrow_mut()
            .push((status, String::from_utf8_lossy(body).into_owned()));
    }
}

/// Replaces every pair named `name` by `values`, at the first one's place.
fn set_pairs(pairs: &mut Vec<(String, String)>, name: &str, values: &[String]) {
    let at = pairs
        .iter()
        .position(|(n, _)| n.eq_ignore_ascii_case(name))
        .unwrap_or(pairs.len());
    pairs.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
    let at = at.min(pairs.len());
    for (i, value) in values.iter().enumerate() {
        pairs.insert(at + i, (name.to_string(), value.clone()));
    }
}
