//! What every VM of one host shares: the clock, shared data (with CAS),
//! shared queues, metrics, pending callouts and the record of events. One
//! per `Host`, behind `Rc<RefCell<…>>`: no global state, so tests run in
//! parallel, each with its own.

use crate::abi::{status, Headers, MetricKind};
use crate::callout::{CalloutRequest, CalloutResponder, Due};
use crate::record::{Event, Metric, Record};
use std::collections::{BTreeMap, HashMap, VecDeque};

/// Index of a VM inside its host.
pub type VmIndex = usize;

/// A shared queue (`proxy_register_shared_queue`).
pub struct SharedQueue {
    /// The vm_id namespace it was registered under.
    pub vm_id: String,
    /// Its name.
    pub name: String,
    /// The VM whose root context gets `on_queue_ready` (the last registrant).
    pub owner_vm: VmIndex,
    /// That root context.
    pub owner_context: u32,
    /// Messages not yet dequeued.
    pub items: VecDeque<Vec<u8>>,
}

/// A callout waiting for its answer.
pub struct PendingCallout {
    /// The VM that dispatched it.
    pub vm: VmIndex,
    /// The context that dispatched it (the SDK routes the answer by token).
    pub context: u32,
    /// What was asked.
    pub request: CalloutRequest,
    /// A scripted answer and when it is due, if the responder gave one.
    pub due: Option<Due>,
}

/// The shared state of one host.
pub struct HostState {
    /// Host clock in nanoseconds since the Unix epoch.
    pub now_ns: u64,
    /// The clock when the host started (records show time since then).
    pub start_ns: u64,
    /// Shared data by (vm_id, key): value and CAS.
    pub shared_data: HashMap<(String, String), (Vec<u8>, u32)>,
    next_cas: u32,
    /// Queues; a queue's id is its index + 1.
    pub queues: Vec<SharedQueue>,
    /// One entry per enqueue not yet notified: the queue id.
    pub queue_ready: VecDeque<u32>,
    /// Metrics by name (shared by every VM, like Envoy's stats store).
    pub metrics: BTreeMap<String, Metric>,
    /// Metric ids → names (ids are host-wide).
    pub metric_ids: Vec<String>,
    /// Callouts not yet answered, by token.
    pub callouts: BTreeMap<u32, PendingCallout>,
    /// Every callout ever dispatched, by token (answered or not).
    pub callout_log: Vec<CalloutRequest>,
    next_token: u32,
    /// Answers callouts as they are dispatched (none: they wait for the test).
    pub responder: Option<CalloutResponder>,
    /// Upstreams (clusters) that exist; `None`: every name exists.
    pub known_upstreams: Option<Vec<String>>,
    /// Log level the VMs are told (`proxy_get_log_level`).
    pub log_level: u32,
    /// Wall time spent inside the VMs' exported calls (host calls they
    /// make included), nanoseconds: what a measurement compares.
    pub guest_ns: u64,
    /// Host-wide properties, by path parts.
    pub properties: HashMap<Vec<String>, Vec<u8>>,
    /// Everything that happened.
    pub records: Vec<Record>,
    rng: u64,
}

impl HostState {
    /// A fresh state with the clock at `start_ns` and a seeded random source.
    pub fn new(start_ns: u64, seed: u64) -> HostState {
        HostState {
            now_ns: start_ns,
            start_ns,
            shared_data: HashMap::new(),
            next_cas: 0,
            queues: Vec::new(),
            queue_ready: VecDeque::new(),
            metrics: BTreeMap::new(),
            metric_ids: Vec::new(),
            callouts: BTreeMap::new(),
            callout_log: Vec::new(),
            next_token: 0,
            responder: None,
            known_upstreams: None,
            log_level: 0,
            guest_ns: 0,
            properties: HashMap::new(),
            records: Vec::new(),
            rng: seed | 1,
        }
    }

    /// Appends a record stamped with the current clock.
    pub fn record(&mut self, vm: &str, context: u32, event: Event) {
        let at_ms = (self.now_ns - self.start_ns) / 1_000_000;
        self.records.push(Record {
            at_ms,
            vm: vm.to_string(),
            context,
            event,
        });
    }

    /// Deterministic pseudo-random bytes (xorshift64*): tests repeat.
    pub fn fill_random(&mut self, out: &mut [u8]) {
        for byte in out.iter_mut() {
            self.rng ^= self.rng >> 12;
            self.rng ^= self.rng << 25;
            self.rng ^= self.rng >> 27;
            *byte = (self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 56) as u8;
        }
    }

    /// `proxy_get_shared_data`: value and CAS, or `None` if absent.
    pub fn get_shared(&self, vm_id: &str, key: &str) -> Option<(Vec<u8>, u32)> {
        self.shared_data
            .get(&(vm_id.to_string(), key.to_string()))
            .cloned()
    }

    /// `proxy_set_shared_data` with Envoy's CAS rule: CAS 0 writes
    /// unconditionally; another CAS must match the current one (an absent
    /// key accepts any CAS). Returns the ABI status.
    pub fn set_shared(&mut self, vm_id: &str, key: &str, value: Vec<u8>, cas: u32) -> i32 {
        let slot = (vm_id.to_string(), key.to_string());
        if let Some((_, current)) = self.shared_data.get(&slot) {
            if cas != 0 && cas != *current {
                return status::CAS_MISMATCH;
            }
        }
        self.next_cas = self.next_cas.wrapping_add(1).max(1);
        self.shared_data.insert(slot, (value, self.next_cas));
        status::OK
    }

    /// `proxy_register_shared_queue`: same (vm_id, name) → same id; the
    /// last registrant becomes the consumer.
    pub fn register_queue(&mut self, vm_id: &str, name: &str, vm: VmIndex, context: u32) -> u32 {
        if let Some(id) = self.find_queue(vm_id, name) {
            if let Some(queue) = self.queues.get_mut(id as usize - 1) {
                queue.owner_vm = vm;
                queue.owner_context = context;
            }
            return id;
        }
        self.queues.push(SharedQueue {
            vm_id: vm_id.to_string(),
            name: name.to_string(),
            owner_vm: vm,
            owner_context: context,
            items: VecDeque::new(),
        });
        self.queues.len() as u32
    }

    /// `proxy_resolve_shared_queue`.
    pub fn find_queue(&self, vm_id: &str, name: &str) -> Option<u32> {
        self.queues
            .iter()
            .position(|queue| queue.vm_id == vm_id && queue.name == name)
            .map(|index| index as u32 + 1)
    }

    /// The queue with this id.
    pub fn queue_mut(&mut self, id: u32) -> Option<&mut SharedQueue> {
        self.queues.get_mut((id as usize).checked_sub(1)?)
    }

    /// `proxy_define_metric`: the same name gives the same metric.
    pub fn define_metric(&mut self, kind: MetricKind, name: &str) -> u32 {
        self.metrics.entry(name.to_string()).or_insert(Metric {
            kind,
            value: 0,
            samples: Vec::new(),
        });
        match self.metric_ids.iter().position(|known| known == name) {
            Some(index) => index as u32 + 1,
            None => {
                self.metric_ids.push(name.to_string());
                self.metric_ids.len() as u32
            }
        }
    }

    /// The metric an id names.
    pub fn metric_mut(&mut self, id: u32) -> Option<(String, &mut Metric)> {
        let name = self.metric_ids.get((id as usize).checked_sub(1)?)?.clone();
        let metric = self.metrics.get_mut(&name)?;
        Some((name, metric))
    }

    /// Registers a dispatched callout; returns its token.
    pub fn add_callout(&mut self, vm: VmIndex, context: u32, request: CalloutRequest) -> u32 {
        self.next_token += 1;
        let token = self.next_token;
        let request = CalloutRequest { token, ..request };
        self.callout_log.push(request.clone());
        let due = match self.responder.as_mut() {
            Some(responder) => responder(&request).due(self.now_ns, &request),
            None => None,
        };
        self.callouts.insert(
            token,
            PendingCallout {
                vm,
                context,
                request,
                due,
            },
        );
        token
    }

    /// Is this upstream (cluster) known?
    pub fn upstream_exists(&self, upstream: &str) -> bool {
        match &self.known_upstreams {
            Some(known) => known.iter().any(|name| name == upstream),
            None => true,
        }
    }
}

/// Finds a header's first value (names compared lowercase).
pub fn header<'a>(headers: &'a Headers, name: &str) -> Option<&'a str> {
    let name = name.to_lowercase();
    headers
        .iter()
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cas_rules_match_envoy() {
        let mut state = HostState::new(0, 1);
        // Absent key: any CAS is accepted (Envoy's rule).
        assert_eq!(state.set_shared("vm", "k", b"1".to_vec(), 77), status::OK);
        let (_, cas) = state.get_shared("vm", "k").unwrap();
        assert_eq!(
            state.set_shared("vm", "k", b"2".to_vec(), cas + 1),
            status::CAS_MISMATCH
        );
        assert_eq!(state.set_shared("vm", "k", b"2".to_vec(), cas), status::OK);
        assert_eq!(
            state.set_shared("vm", "k", b"3".to_vec(), cas),
            status::CAS_MISMATCH
        );
        assert_eq!(state.set_shared("vm", "k", b"3".to_vec(), 0), status::OK);
        assert_eq!(state.get_shared("other-vm", "k"), None);
    }

    #[test]
    fn queue_registration_moves_the_consumer() {
        let mut state = HostState::new(0, 1);
        let first = state.register_queue("vm", "q", 0, 1);
        let again = state.register_queue("vm", "q", 1, 1);
        assert_eq!(first, again);
        assert_eq!(state.queues[0].owner_vm, 1);
        assert_eq!(state.find_queue("vm", "q"), Some(first));
        assert_eq!(state.find_queue("other", "q"), None);
    }

    #[test]
    fn random_is_deterministic_per_seed() {
        let (mut a, mut b) = (HostState::new(0, 9), HostState::new(0, 9));
        let (mut x, mut y) = ([0u8; 16], [0u8; 16]);
        a.fill_random(&mut x);
        b.fill_random(&mut y);
        assert_eq!(x, y);
        assert_ne!(x, [0u8; 16]);
    }
}
