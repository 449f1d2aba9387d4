//! The host: one wasmtime engine and compiled module, several VMs of it
//! sharing one state (shared data, queues, metrics, clock), and the test's
//! controls over time, callouts and queue delivery.

use crate::callout::{
    forward, CalloutAnswer, CalloutRequest, CalloutResponder, CalloutResponse, CalloutScript,
};
use crate::error::{HostError, HostResult};
use crate::imports;
use crate::record::{format_dump, Event, Metric, Record};
use crate::state::HostState;
use crate::stream::HttpStream;
use crate::vm::{VmCtx, VmInner, VmSpec};
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::rc::{Rc, Weak};
use wasmtime::{Config, Engine, Linker, Module};

/// 2026-01-01T00:00:00Z: where every host clock starts, so runs repeat.
pub const DEFAULT_START_UNIX_SECONDS: u64 = 1_767_225_600;

/// The shared part of a host (stream and VM handles keep a weak link).
pub struct HostInner {
    module: Module,
    linker: Linker<VmCtx>,
    pub(crate) state: Rc<RefCell<HostState>>,
    vms: RefCell<Vec<Vm>>,
    auto_settle: Cell<bool>,
    hold_queues: Cell<bool>,
}

/// A proxy-wasm host running one module in several VMs.
pub struct Host {
    inner: Rc<HostInner>,
}

/// A VM handle (cheap to clone).
#[derive(Clone)]
pub struct Vm {
    pub(crate) inner: Rc<RefCell<VmInner>>,
    host: Weak<HostInner>,
    name: String,
}

/// A message waiting in a shared queue.
#[derive(Clone, Debug, PartialEq)]
pub struct QueueMessage {
    /// Queue id.
    pub queue_id: u32,
    /// Queue name.
    pub queue: String,
    /// The VM that consumes it.
    pub consumer_vm: String,
    /// The message.
    pub message: Vec<u8>,
}

impl Host {
    /// A host for the module at `wasm_path`, compiled with a fresh engine.
    pub fn new(wasm_path: &Path) -> HostResult<Host> {
        let bytes = std::fs::read(wasm_path)
            .map_err(|e| HostError::Setup(format!("reading {}: {e}", wasm_path.display())))?;
        Host::from_bytes(&bytes)
    }

    /// A host for a module given as bytes.
    pub fn from_bytes(wasm: &[u8]) -> HostResult<Host> {
        let setup = |e: wasmtime::Error| HostError::Setup(format!("{e:?}"));
        let mut config = Config::new();
        // For `perf record`: wasmtime writes /tmp/perf-<pid>.map with the
        // module's function names (build the `.wasm` without wasm-opt to
        // keep them).
        if std::env::var_os("LATET_WASM_PERFMAP").is_some() {
            config.profiler(wasmtime::ProfilingStrategy::PerfMap);
        }
        let engine = Engine::new(&config).map_err(setup)?;
        let module = Module::new(&engine, wasm).map_err(setup)?;
        let linker = imports::linker(&engine, &module).map_err(setup)?;
        let state = HostState::new(DEFAULT_START_UNIX_SECONDS * 1_000_000_000, 0x5eed);
        Ok(Host {
            inner: Rc::new(HostInner {
                module,
                linker,
                state: Rc::new(RefCell::new(state)),
                vms: RefCell::new(Vec::new()),
                auto_settle: Cell::new(true),
                hold_queues: Cell::new(false),
            }),
        })
    }

    /// The names of the imports the module needs, `module::name`.
    pub fn module_imports(&self) -> Vec<String> {
        self.inner
            .module
            .imports()
            .map(|import| format!("{}::{}", import.module(), import.name()))
            .collect()
    }

    /// Starts a VM: instantiates the module, creates and configures its
    /// root contexts. A refused start or configuration is an error (and the
    /// VM's logs are in the records).
    pub fn start_vm(&self, spec: VmSpec) -> HostResult<Vm> {
        let index = self.inner.vms.borrow().len();
        let inner = VmInner::start(
            &self.inner.module,
            &self.inner.linker,
            self.inner.state.clone(),
            index,
            &spec,
        )?;
        let vm = Vm {
            inner: Rc::new(RefCell::new(inner)),
            host: Rc::downgrade(&self.inner),
            name: spec.name,
        };
        self.inner.vms.borrow_mut().push(vm.clone());
        self.inner.auto_settle();
        Ok(vm)
    }

    /// Every VM, in start order.
    pub fn vms(&self) -> Vec<Vm> {
        self.inner.vms.borrow().clone()
    }

    /// The VM with this name.
    pub fn vm(&self, name: &str) -> Option<Vm> {
        self.inner
            .vms
            .borrow()
            .iter()
            .find(|vm| vm.name == name)
            .cloned()
    }

    /// Whether to settle (deliver due callout answers and queue
    /// notifications) after every stream step, tick and answer. On by default.
    pub fn set_auto_settle(&self, on: bool) {
        self.inner.auto_settle.set(on);
    }

    /// Holds queue notifications (messages stay queued, nobody is told)
    /// until released; lets a test drop one VM's messages first.
    pub fn hold_queues(&self, hold: bool) {
        self.inner.hold_queues.set(hold);
    }

    /// Delivers what is due now: scripted callout answers and (unless held)
    /// queue notifications, until nothing is left.
    pub fn settle(&self) -> HostResult<()> {
        self.inner.settle()
    }

    /// Host clock, ms since the host started.
    pub fn now_ms(&self) -> u64 {
        let state = self.inner.state.borrow();
        (state.now_ns - state.start_ns) / 1_000_000
    }

    /// Advances the clock by `ms`, firing every tick and scripted callout
    /// answer that falls due, in time order, then settles.
    pub fn advance(&self, ms: u64) -> HostResult<()> {
        let target = self.inner.state.borrow().now_ns + ms * 1_000_000;
        let mut first_error = self.inner.settle().err();
        for _ in 0..1_000_000 {
            let next_tick = self
                .vms()
                .into_iter()
                .filter_map(|vm| {
                    let next = vm.inner.borrow().next_tick();
                    next.map(|(due, root)| (due, root, vm))
                })
                .min_by_key(|(due, _, _)| *due);
            let next_callout = self
                .inner
                .state
                .borrow()
                .callouts
                .values()
                .filter_map(|pending| pending.due.as_ref().map(|due| due.at_ns))
                .min();
            let tick_due = next_tick.as_ref().map(|(due, _, _)| *due);
            let due = match (tick_due, next_callout) {
                (Some(a), Some(b)) => a.min(b),
                (a, b) => match a.or(b) {
                    Some(due) => due,
                    None => break,
                },
            };
            if due > target {
                break;
            }
            {
                let mut state = self.inner.state.borrow_mut();
                state.now_ns = state.now_ns.max(due);
            }
            if next_callout == Some(due) {
                // Answers due at this instant go first (settle delivers them).
            } else if let Some((_, root, vm)) = next_tick {
                let result = vm.inner.borrow_mut().tick(root);
                first_error = first_error.or(result.err());
            }
            first_error = first_error.or(self.inner.settle().err());
        }
        self.inner.state.borrow_mut().now_ns = target;
        first_error = first_error.or(self.inner.settle().err());
        first_error.map_or(Ok(()), Err)
    }

    /// Answers callouts as they are dispatched (scripted answer, delay,
    /// error, drop, forward). Without a responder they wait for the test.
    pub fn set_callout_responder(
        &self,
        responder: impl FnMut(&CalloutRequest) -> CalloutScript + 'static,
    ) {
        let responder: CalloutResponder = Box::new(responder);
        self.inner.state.borrow_mut().responder = Some(responder);
    }

    /// Removes the responder: callouts wait for the test again.
    pub fn clear_callout_responder(&self) {
        self.inner.state.borrow_mut().responder = None;
    }

    /// Only these upstreams (clusters) exist: a callout to another one gets
    /// BadArgument at once, like Envoy.
    pub fn set_known_upstreams(&self, names: &[&str]) {
        self.inner.state.borrow_mut().known_upstreams =
            Some(names.iter().map(|name| name.to_string()).collect());
    }

    /// Callouts waiting for an answer, by token.
    pub fn pending_callouts(&self) -> Vec<CalloutRequest> {
        self.inner
            .state
            .borrow()
            .callouts
            .values()
            .map(|pending| pending.request.clone())
            .collect()
    }

    /// Every callout ever dispatched, answered or not.
    pub fn callouts(&self) -> Vec<CalloutRequest> {
        self.inner.state.borrow().callout_log.clone()
    }

    /// Answers a pending callout now.
    pub fn answer_callout(&self, token: u32, response: CalloutResponse) -> HostResult<()> {
        self.deliver_callout(token, CalloutAnswer::Response(response))
    }

    /// Fails a pending callout now (Envoy's reset/timeout path).
    pub fn fail_callout(&self, token: u32) -> HostResult<()> {
        self.deliver_callout(token, CalloutAnswer::Failure)
    }

    /// Forgets a pending callout: it is never answered.
    pub fn drop_callout(&self, token: u32) -> HostResult<()> {
        self.deliver_callout(token, CalloutAnswer::Drop)
    }

    /// Sends a pending callout to a real HTTP server (e.g. the control
    /// service on loopback) and delivers its answer.
    pub fn forward_callout(&self, token: u32, addr: SocketAddr) -> HostResult<()> {
        let request = self
            .inner
            .state
            .borrow()
            .callouts
            .get(&token)
            .map(|pending| pending.request.clone())
            .ok_or_else(|| HostError::Unknown(format!("callout token {token}")))?;
        self.deliver_callout(token, forward(addr, &request))
    }

    fn deliver_callout(&self, token: u32, answer: CalloutAnswer) -> HostResult<()> {
        let result = self.inner.deliver_callout(token, &answer);
        self.inner.auto_settle();
        result
    }

    /// Messages waiting in shared queues.
    pub fn pending_queue_messages(&self) -> Vec<QueueMessage> {
        let vms = self.vms();
        let state = self.inner.state.borrow();
        state
            .queues
            .iter()
            .enumerate()
            .flat_map(|(index, queue)| {
                let consumer = vms
                    .get(queue.owner_vm)
                    .map(|vm| vm.name.clone())
                    .unwrap_or_default();
                queue.items.iter().map(move |message| QueueMessage {
                    queue_id: index as u32 + 1,
                    queue: queue.name.clone(),
                    consumer_vm: consumer.clone(),
                    message: message.clone(),
                })
            })
            .collect()
    }

    /// Drops every queued message (and its notification) a VM would
    /// consume, as if the broadcast never reached it. Returns how many.
    pub fn drop_queue_messages_to(&self, vm_name: &str) -> usize {
        let Some(vm_index) = self.vms().iter().position(|vm| vm.name == vm_name) else {
            return 0;
        };
        let mut state = self.inner.state.borrow_mut();
        let mut dropped_ids = Vec::new();
        let mut dropped = 0;
        for (index, queue) in state.queues.iter_mut().enumerate() {
            if queue.owner_vm == vm_index {
                dropped += queue.items.len();
                queue.items.clear();
                dropped_ids.push(index as u32 + 1);
            }
        }
        state.queue_ready.retain(|id| !dropped_ids.contains(id));
        state.record(
            vm_name,
            0,
            Event::Note(format!("test dropped {dropped} queued message(s)")),
        );
        dropped
    }

    /// Delivers queue notifications now, even while held.
    pub fn deliver_queues(&self) -> HostResult<()> {
        self.inner.deliver_queues()
    }

    /// Shared data under a vm_id: value and CAS.
    pub fn shared_data(&self, vm_id: &str, key: &str) -> Option<(Vec<u8>, u32)> {
        self.inner.state.borrow().get_shared(vm_id, key)
    }

    /// Writes shared data as another process would (unconditionally).
    pub fn set_shared_data(&self, vm_id: &str, key: &str, value: &[u8]) {
        self.inner
            .state
            .borrow_mut()
            .set_shared(vm_id, key, value.to_vec(), 0);
    }

    /// A metric's value (counter/gauge value; histogram: last sample).
    pub fn metric(&self, name: &str) -> Option<i64> {
        self.inner
            .state
            .borrow()
            .metrics
            .get(name)
            .map(|metric| metric.value)
    }

    /// Every metric.
    pub fn metrics(&self) -> BTreeMap<String, Metric> {
        self.inner.state.borrow().metrics.clone()
    }

    /// Sets a host-wide property (`["node", "id"]`…).
    pub fn set_property(&self, path: &[&str], value: impl Into<Vec<u8>>) {
        let path = path.iter().map(|part| part.to_string()).collect();
        self.inner
            .state
            .borrow_mut()
            .properties
            .insert(path, value.into());
    }

    /// The level VMs read from `proxy_get_log_level` (0 trace … 5 critical).
    pub fn set_log_level(&self, level: u32) {
        self.inner.state.borrow_mut().log_level = level;
    }

    /// Everything recorded, in order.
    pub fn records(&self) -> Vec<Record> {
        self.inner.state.borrow().records.clone()
    }

    /// Wall time spent inside the VMs' exported calls so far (the host
    /// calls they make included; the harness's own bookkeeping excluded).
    pub fn guest_time(&self) -> std::time::Duration {
        std::time::Duration::from_nanos(self.inner.state.borrow().guest_ns)
    }

    /// Forgets the records so far (a long loop keeps only its latest
    /// iteration for the dump). Metrics are kept.
    pub fn clear_records(&self) {
        self.inner.state.borrow_mut().records.clear();
    }

    /// Every log line: (vm, level, message).
    pub fn logs(&self) -> Vec<(String, u32, String)> {
        self.records()
            .into_iter()
            .filter_map(|record| match record.event {
                Event::Log { level, message } => Some((record.vm, level, message)),
                _ => None,
            })
            .collect()
    }

    /// Every string a VM emitted where a value must never appear: log
    /// lines, stdout/stderr lines, metric names, local replies (status
    /// details, headers, body). Scan it for leaks.
    pub fn emitted_strings(&self) -> Vec<String> {
        let mut strings = Vec::new();
        for record in self.records() {
            match record.event {
                Event::Log { message, .. } => strings.push(message),
                Event::Output { line, .. } => strings.push(line),
                Event::Metric { name, .. } => strings.push(name),
                Event::LocalReply {
                    details,
                    headers,
                    body,
                    ..
                } => {
                    strings.push(details);
                    strings.extend(
                        headers
                            .into_iter()
                            .map(|(name, value)| format!("{name}: {value}")),
                    );
                    strings.push(String::from_utf8_lossy(&body).into_owned());
                }
                _ => {}
            }
        }
        strings
    }

    /// What the VMs did (records and metrics), for assertion messages.
    pub fn dump(&self) -> String {
        let state = self.inner.state.borrow();
        let mut out = format_dump(&state.records, &state.metrics);
        if !state.callouts.is_empty() {
            out.push_str("---- callouts pending ----\n");
            for (token, pending) in &state.callouts {
                out.push_str(&format!(
                    "#{token} {} {}\n",
                    pending.request.upstream,
                    pending.request.path()
                ));
            }
        }
        drop(state);
        for vm in self.vms() {
            if let Some(reason) = vm.crashed() {
                out.push_str(&format!("VM {} CRASHED: {reason}\n", vm.name));
            }
        }
        out
    }
}

impl HostInner {
    /// Settles if auto-settle is on; errors are already recorded (a trap
    /// crashes its VM and shows in the dump), so they are not returned here.
    pub(crate) fn auto_settle(&self) {
        if self.auto_settle.get() {
            let _ = self.settle();
        }
    }

    fn settle(&self) -> HostResult<()> {
        let mut first_error = None;
        for _ in 0..100_000 {
            let now = self.state.borrow().now_ns;
            let due_token = self
                .state
                .borrow()
                .callouts
                .iter()
                .find(|(_, pending)| pending.due.as_ref().is_some_and(|due| due.at_ns <= now))
                .map(|(token, _)| *token);
            if let Some(token) = due_token {
                let answer = self
                    .state
                    .borrow()
                    .callouts
                    .get(&token)
                    .and_then(|pending| pending.due.clone())
                    .map(|due| due.answer);
                if let Some(answer) = answer {
                    first_error = first_error.or(self.deliver_callout(token, &answer).err());
                }
                continue;
            }
            if self.hold_queues.get() || self.state.borrow().queue_ready.is_empty() {
                return first_error.map_or(Ok(()), Err);
            }
            first_error = first_error.or(self.deliver_one_queue().err());
        }
        Err(HostError::Misuse(
            "settling did not finish: VMs keep making work".into(),
        ))
    }

    fn deliver_queues(&self) -> HostResult<()> {
        let mut first_error = None;
        while !self.state.borrow().queue_ready.is_empty() {
            first_error = first_error.or(self.deliver_one_queue().err());
        }
        first_error.map_or(Ok(()), Err)
    }

    fn deliver_one_queue(&self) -> HostResult<()> {
        let target = {
            let mut state = self.state.borrow_mut();
            let Some(queue_id) = state.queue_ready.pop_front() else {
                return Ok(());
            };
            state
                .queue_mut(queue_id)
                .map(|queue| (queue.owner_vm, queue.owner_context, queue_id))
        };
        let Some((vm_index, context, queue_id)) = target else {
            return Ok(());
        };
        let vm = self.vms.borrow().get(vm_index).cloned();
        match vm {
            Some(vm) => vm.inner.borrow_mut().queue_ready(context, queue_id),
            None => Ok(()),
        }
    }

    fn deliver_callout(&self, token: u32, answer: &CalloutAnswer) -> HostResult<()> {
        let pending = self
            .state
            .borrow_mut()
            .callouts
            .remove(&token)
            .ok_or_else(|| HostError::Unknown(format!("callout token {token}")))?;
        let vm = self.vms.borrow().get(pending.vm).cloned();
        let Some(vm) = vm else {
            return Err(HostError::Unknown(format!(
                "VM #{} for callout {token}",
                pending.vm
            )));
        };
        if *answer == CalloutAnswer::Drop {
            let mut state = self.state.borrow_mut();
            state.record(
                &vm.name,
                pending.context,
                Event::Note(format!("callout #{token} dropped, never answered")),
            );
            return Ok(());
        }
        let result = vm
            .inner
            .borrow_mut()
            .http_call_response(pending.context, token, answer);
        result
    }
}

impl Vm {
    /// The VM's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The context id of the root with this root id.
    pub fn root_context(&self, root_id: &str) -> Option<u32> {
        self.inner.borrow().root_context(root_id)
    }

    /// A copy of the VM's whole linear memory (for leak hunts).
    pub fn memory_snapshot(&self) -> Vec<u8> {
        self.inner.borrow_mut().memory_snapshot()
    }

    /// The size of the VM's linear memory in bytes (wasm memory never
    /// shrinks: this is its peak so far).
    pub fn memory_size(&self) -> usize {
        self.inner.borrow_mut().memory_size()
    }

    /// How many calls the module has made into the host so far (every
    /// import: proxy-wasm and WASI).
    pub fn host_calls(&self) -> u64 {
        self.inner.borrow().ctx().host_calls
    }

    /// Why the VM crashed, if it did.
    pub fn crashed(&self) -> Option<String> {
        self.inner.borrow().crashed().map(str::to_string)
    }

    /// A new HTTP stream under the VM's first root context.
    pub fn new_http_stream(&self) -> HostResult<HttpStream> {
        let root = self.inner.borrow().ctx().roots.keys().next().copied();
        let root =
            root.ok_or_else(|| HostError::Unknown(format!("root context in VM {}", self.name)))?;
        self.new_http_stream_on(root)
    }

    /// A new HTTP stream under the root with this root id.
    pub fn new_http_stream_for(&self, root_id: &str) -> HostResult<HttpStream> {
        let root = self
            .root_context(root_id)
            .ok_or_else(|| HostError::Unknown(format!("root {root_id} in VM {}", self.name)))?;
        self.new_http_stream_on(root)
    }

    fn new_http_stream_on(&self, root: u32) -> HostResult<HttpStream> {
        let context = self.inner.borrow_mut().create_stream(root)?;
        Ok(HttpStream {
            vm: self.inner.clone(),
            host: self.host.clone(),
            context,
        })
    }

    /// Adds a root context (another plugin on this VM) after start.
    pub fn add_root(&self, root_id: &str, plugin_config: &[u8]) -> HostResult<u32> {
        let result = self.inner.borrow_mut().create_root(root_id, plugin_config);
        if let Some(host) = self.host.upgrade() {
            host.auto_settle();
        }
        result
    }
}
