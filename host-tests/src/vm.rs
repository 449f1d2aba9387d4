//! One VM: a wasmtime `Store` and `Instance` of the module, with the
//! contexts it holds (root contexts and HTTP streams) and the calls into its
//! exports. Several VMs of one module make a host, like Envoy's workers.

use crate::abi::{Action, BufferType, Headers, MapType};
use crate::callout::CalloutAnswer;
use crate::error::{HostError, HostResult};
use crate::record::Event;
use crate::state::{HostState, VmIndex};
use crate::stream_state::{Stage, StreamState};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;
use wasmtime::{Instance, Linker, Module, Store, Val};

/// What a VM is started with.
#[derive(Clone, Debug)]
pub struct VmSpec {
    /// A name for records and dumps (`sync`, `worker-1`).
    pub name: String,
    /// Envoy's `vm_id`: shared data and queues are namespaced by it.
    pub vm_id: String,
    /// The VM configuration (`proxy_on_vm_start`).
    pub vm_config: Vec<u8>,
    /// Root contexts to create, in order: root id and plugin configuration.
    pub roots: Vec<(String, Vec<u8>)>,
    /// WASI environment variables.
    pub env: Vec<(String, String)>,
}

impl VmSpec {
    /// A VM with no root context yet.
    pub fn new(name: &str, vm_id: &str) -> VmSpec {
        VmSpec {
            name: name.to_string(),
            vm_id: vm_id.to_string(),
            vm_config: Vec::new(),
            roots: Vec::new(),
            env: Vec::new(),
        }
    }

    /// Adds a root context (a plugin) with its configuration.
    pub fn root(mut self, root_id: &str, plugin_config: impl Into<Vec<u8>>) -> VmSpec {
        self.roots.push((root_id.to_string(), plugin_config.into()));
        self
    }

    /// Sets the VM configuration.
    pub fn vm_config(mut self, vm_config: impl Into<Vec<u8>>) -> VmSpec {
        self.vm_config = vm_config.into();
        self
    }
}

/// A root context as the host keeps it.
#[derive(Clone, Debug)]
pub struct RootState {
    /// Its root id.
    pub root_id: String,
    /// Its plugin configuration.
    pub plugin_config: Vec<u8>,
    /// Tick period (0: no ticks).
    pub tick_period_ms: u64,
    /// When the next tick is due (host clock, ns).
    pub next_tick_ns: Option<u64>,
}

/// The HTTP call response being delivered (`proxy_on_http_call_response`).
#[derive(Clone, Debug, Default)]
pub struct CallResponseView {
    /// Headers, `:status` first.
    pub headers: Headers,
    /// Body.
    pub body: Vec<u8>,
    /// Trailers.
    pub trailers: Headers,
}

/// The data of a VM's store: what host functions see.
pub struct VmCtx {
    /// Position in the host.
    pub index: VmIndex,
    /// Name for records.
    pub name: String,
    /// Envoy's vm_id.
    pub vm_id: String,
    /// VM configuration.
    pub vm_config: Vec<u8>,
    /// The state shared with the other VMs.
    pub host: Rc<RefCell<HostState>>,
    /// Root contexts by id.
    pub roots: BTreeMap<u32, RootState>,
    /// HTTP streams by context id.
    pub streams: BTreeMap<u32, StreamState>,
    /// Streams that finished, kept for reading back (out of `streams` so
    /// that a long run's steps do not walk every stream ever made).
    pub finished_streams: BTreeMap<u32, StreamState>,
    /// The context host calls apply to.
    pub effective: u32,
    /// The HTTP call response being delivered, during that callback.
    pub call_response: Option<CallResponseView>,
    /// VM-level properties the filter set outside a stream.
    pub properties: HashMap<Vec<String>, Vec<u8>>,
    /// Unfinished stdout / stderr lines.
    output: [Vec<u8>; 2],
    /// WASI environment.
    pub env: Vec<(String, String)>,
    /// Calls the module made into the host (every import, WASI included).
    pub host_calls: u64,
}

impl VmCtx {
    /// Records an event against the effective context.
    pub fn record(&self, event: Event) {
        self.host
            .borrow_mut()
            .record(&self.name, self.effective, event);
    }

    /// The buffer a host call names, in the effective context.
    pub fn buffer_mut(&mut self, kind: BufferType) -> Option<&mut Vec<u8>> {
        match kind {
            BufferType::RequestBody => self
                .streams
                .get_mut(&self.effective)
                .map(|s| &mut s.request.body),
            BufferType::ResponseBody => self
                .streams
                .get_mut(&self.effective)
                .map(|s| &mut s.response.body),
            BufferType::CallResponseBody => self.call_response.as_mut().map(|r| &mut r.body),
            BufferType::VmConfiguration => Some(&mut self.vm_config),
            BufferType::PluginConfiguration => {
                let root = self.root_of(self.effective)?;
                self.roots.get_mut(&root).map(|r| &mut r.plugin_config)
            }
        }
    }

    /// The header map a host call names, in the effective context.
    pub fn map_mut(&mut self, map: MapType) -> Option<&mut Headers> {
        match map {
            MapType::CallResponseHeaders => self.call_response.as_mut().map(|r| &mut r.headers),
            MapType::CallResponseTrailers => self.call_response.as_mut().map(|r| &mut r.trailers),
            _ => {
                let stream = self.streams.get_mut(&self.effective)?;
                Some(match map {
                    MapType::RequestHeaders => &mut stream.request.headers,
                    MapType::RequestTrailers => &mut stream.request.trailers,
                    MapType::ResponseHeaders => &mut stream.response.headers,
                    _ => &mut stream.response.trailers,
                })
            }
        }
    }

    /// The root context a context belongs to (itself for a root).
    pub fn root_of(&self, context: u32) -> Option<u32> {
        if self.roots.contains_key(&context) {
            return Some(context);
        }
        self.streams.get(&context).map(|stream| stream.root)
    }

    /// A property: the stream's, then the VM's, then the built-in plugin
    /// properties, then the host's.
    pub fn property(&self, path: &[String]) -> Option<Vec<u8>> {
        if let Some(value) = self
            .streams
            .get(&self.effective)
            .and_then(|s| s.properties.get(path))
        {
            return Some(value.clone());
        }
        if let Some(value) = self.properties.get(path) {
            return Some(value.clone());
        }
        let root_id = self
            .root_of(self.effective)
            .and_then(|root| self.roots.get(&root))
            .map(|root| root.root_id.clone());
        match path
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .as_slice()
        {
            ["plugin_root_id"] | ["plugin_name"] => return root_id.map(String::into_bytes),
            ["plugin_vm_id"] => return Some(self.vm_id.clone().into_bytes()),
            _ => {}
        }
        self.host.borrow().properties.get(path).cloned()
    }

    /// Sets a property on the effective stream, or on the VM outside one.
    pub fn set_property(&mut self, path: Vec<String>, value: Vec<u8>) {
        match self.streams.get_mut(&self.effective) {
            Some(stream) => {
                stream.properties.insert(path, value);
            }
            None => {
                self.properties.insert(path, value);
            }
        }
    }

    /// Collects stdout/stderr bytes; each finished line becomes a record.
    pub fn write_output(&mut self, fd: u32, bytes: &[u8]) {
        let slot = if fd == 2 { 1 } else { 0 };
        self.output[slot].extend_from_slice(bytes);
        while let Some(end) = self.output[slot].iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.output[slot].drain(..=end).collect();
            let line = String::from_utf8_lossy(&line[..line.len() - 1]).into_owned();
            self.record(Event::Output { fd, line });
        }
    }
}

/// A running VM (held by the host and by stream handles).
pub(crate) struct VmInner {
    store: Store<VmCtx>,
    instance: Instance,
    crashed: Option<String>,
    next_context: u32,
}

impl VmInner {
    /// Instantiates the module, runs its initializer and creates the roots.
    pub fn start(
        module: &Module,
        linker: &Linker<VmCtx>,
        host: Rc<RefCell<HostState>>,
        index: VmIndex,
        spec: &VmSpec,
    ) -> HostResult<VmInner> {
        let ctx = VmCtx {
            index,
            name: spec.name.clone(),
            vm_id: spec.vm_id.clone(),
            vm_config: spec.vm_config.clone(),
            host,
            roots: BTreeMap::new(),
            streams: BTreeMap::new(),
            finished_streams: BTreeMap::new(),
            effective: 0,
            call_response: None,
            properties: HashMap::new(),
            output: [Vec::new(), Vec::new()],
            env: spec.env.clone(),
            host_calls: 0,
        };
        let mut store = Store::new(module.engine(), ctx);
        store.call_hook(|mut store, hook| {
            if matches!(hook, wasmtime::CallHook::CallingHost) {
                store.data_mut().host_calls += 1;
            }
            Ok(())
        });
        crate::imports::check_imports(linker, &mut store, module)
            .map_err(|e| HostError::Setup(e.to_string()))?;
        let instance = linker
            .instantiate(&mut store, module)
            .map_err(|e| HostError::Setup(format!("{e:?}")))?;
        let mut vm = VmInner {
            store,
            instance,
            crashed: None,
            next_context: 0,
        };
        if vm
            .instance
            .get_export(&mut vm.store, "proxy_abi_version_0_2_1")
            .is_none()
        {
            return Err(HostError::Setup(
                "the module does not export proxy_abi_version_0_2_1".into(),
            ));
        }
        for initializer in ["_initialize", "_start"] {
            if vm.instance.get_func(&mut vm.store, initializer).is_some() {
                vm.call(initializer, 0, &[])?;
                break;
            }
        }
        for (root_id, config) in &spec.roots {
            vm.create_root(root_id, config)?;
        }
        Ok(vm)
    }

    /// The VM's name.
    pub fn name(&self) -> &str {
        &self.store.data().name
    }

    /// Read access to the store data.
    pub fn ctx(&self) -> &VmCtx {
        self.store.data()
    }

    /// Write access to the store data.
    pub fn ctx_mut(&mut self) -> &mut VmCtx {
        self.store.data_mut()
    }

    /// Why the VM crashed, if it did.
    pub fn crashed(&self) -> Option<&str> {
        self.crashed.as_deref()
    }

    /// A copy of the whole linear memory.
    pub fn memory_snapshot(&mut self) -> Vec<u8> {
        match self.instance.get_memory(&mut self.store, "memory") {
            Some(memory) => memory.data(&self.store).to_vec(),
            None => Vec::new(),
        }
    }

    /// The size of the linear memory in bytes (it never shrinks: its peak).
    pub fn memory_size(&mut self) -> usize {
        match self.instance.get_memory(&mut self.store, "memory") {
            Some(memory) => memory.data_size(&self.store),
            None => 0,
        }
    }

    /// Calls an export with i32 arguments; returns its i32 result if any.
    /// A trap is recorded and crashes the VM.
    pub fn call(&mut self, export: &str, context: u32, args: &[i32]) -> HostResult<Option<i32>> {
        if self.crashed.is_some() {
            return Err(HostError::Crashed(self.name().to_string()));
        }
        let Some(func) = self.instance.get_func(&mut self.store, export) else {
            return Err(HostError::Unknown(format!(
                "export {export} in VM {}",
                self.name()
            )));
        };
        self.store.data_mut().effective = context;
        let params: Vec<Val> = args.iter().map(|arg| Val::I32(*arg)).collect();
        let mut results = vec![Val::I32(0); func.ty(&self.store).results().len()];
        let started = std::time::Instant::now();
        let outcome = func.call(&mut self.store, &params, &mut results);
        let spent = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.store.data().host.borrow_mut().guest_ns += spent;
        match outcome {
            Ok(()) => Ok(results.first().and_then(Val::i32)),
            Err(error) => {
                let message = format!("{error:?}");
                self.store.data().record(Event::Trap {
                    call: export.to_string(),
                    message: message.clone(),
                });
                self.crashed = Some(message.clone());
                Err(HostError::Trap {
                    vm: self.name().to_string(),
                    call: export.to_string(),
                    message,
                })
            }
        }
    }

    fn new_context_id(&mut self) -> u32 {
        self.next_context += 1;
        self.next_context
    }

    /// Creates a root context, starts and configures it.
    pub fn create_root(&mut self, root_id: &str, config: &[u8]) -> HostResult<u32> {
        let id = self.new_context_id();
        self.ctx_mut().roots.insert(
            id,
            RootState {
                root_id: root_id.to_string(),
                plugin_config: config.to_vec(),
                tick_period_ms: 0,
                next_tick_ns: None,
            },
        );
        let refused = |vm: &VmInner, started: bool| {
            let (vm, root_id) = (vm.name().to_string(), root_id.to_string());
            if started {
                HostError::ConfigureRefused { vm, root_id }
            } else {
                HostError::StartRefused { vm, root_id }
            }
        };
        self.call("proxy_on_context_create", id, &[id as i32, 0])?;
        let vm_config_len = self.ctx().vm_config.len() as i32;
        if self.call("proxy_on_vm_start", id, &[id as i32, vm_config_len])? == Some(0) {
            return Err(refused(self, false));
        }
        let config_len = config.len() as i32;
        if self.call("proxy_on_configure", id, &[id as i32, config_len])? == Some(0) {
            return Err(refused(self, true));
        }
        self.process_effects()?;
        Ok(id)
    }

    /// The root context with this root id.
    pub fn root_context(&self, root_id: &str) -> Option<u32> {
        self.ctx()
            .roots
            .iter()
            .find(|(_, root)| root.root_id == root_id)
            .map(|(id, _)| *id)
    }

    /// Creates an HTTP context under a root.
    pub fn create_stream(&mut self, root: u32) -> HostResult<u32> {
        if !self.ctx().roots.contains_key(&root) {
            return Err(HostError::Unknown(format!(
                "root context {root} in VM {}",
                self.name()
            )));
        }
        let id = self.new_context_id();
        self.ctx_mut().streams.insert(
            id,
            StreamState {
                root,
                ..StreamState::default()
            },
        );
        self.call("proxy_on_context_create", id, &[id as i32, root as i32])?;
        Ok(id)
    }

    fn stream_mut(&mut self, context: u32) -> HostResult<&mut StreamState> {
        let name = self.name().to_string();
        if self.ctx().finished_streams.contains_key(&context) {
            return Err(HostError::Misuse(format!(
                "stream {context} in VM {name} has finished"
            )));
        }
        match self.ctx_mut().streams.get_mut(&context) {
            Some(stream) if !stream.finished => Ok(stream),
            Some(_) => Err(HostError::Misuse(format!(
                "stream {context} in VM {name} has finished"
            ))),
            None => Err(HostError::Unknown(format!("stream {context} in VM {name}"))),
        }
    }

    /// Delivers headers to one direction and acts on the filter's answer.
    pub fn deliver_headers(
        &mut self,
        context: u32,
        response: bool,
        headers: Headers,
        eos: bool,
    ) -> HostResult<Action> {
        let count = headers.len() as i32;
        let dir = self.stream_mut(context)?.direction_mut(response);
        if dir.stage != Stage::Idle {
            return Err(HostError::Misuse(format!(
                "headers delivered twice on stream {context}"
            )));
        }
        dir.headers = headers;
        dir.end_received = eos;
        let export = if response {
            "proxy_on_response_headers"
        } else {
            "proxy_on_request_headers"
        };
        let raw = self.call(export, context, &[context as i32, count, eos as i32])?;
        let action = Action::from_raw(raw.unwrap_or(0));
        let dir = self.stream_mut(context)?.direction_mut(response);
        match action {
            Action::Continue => {
                dir.forward_headers();
                dir.stage = Stage::Flowing;
                dir.ended = eos;
            }
            Action::Pause => dir.stage = Stage::HeadersPaused,
        }
        Ok(action)
    }

    /// Delivers a body chunk to one direction (the filter sees everything
    /// buffered so far) and acts on its answer. While the headers are
    /// paused the chunk is held, not delivered, and Pause is returned.
    pub fn deliver_body(
        &mut self,
        context: u32,
        response: bool,
        chunk: &[u8],
        eos: bool,
    ) -> HostResult<Action> {
        let dir = self.stream_mut(context)?.direction_mut(response);
        match dir.stage {
            Stage::Idle => {
                return Err(HostError::Misuse(format!(
                    "body before headers on stream {context}"
                )))
            }
            Stage::Stopped => {
                return Err(HostError::Misuse(format!(
                    "body after a local reply on stream {context}"
                )))
            }
            _ => {}
        }
        dir.end_received |= eos;
        dir.body.extend_from_slice(chunk);
        if dir.stage == Stage::HeadersPaused {
            return Ok(Action::Pause);
        }
        let (size, end) = (dir.body.len() as i32, dir.end_received);
        let export = if response {
            "proxy_on_response_body"
        } else {
            "proxy_on_request_body"
        };
        let raw = self.call(export, context, &[context as i32, size, end as i32])?;
        let action = Action::from_raw(raw.unwrap_or(0));
        let dir = self.stream_mut(context)?.direction_mut(response);
        if dir.stage == Stage::Stopped {
            return Ok(action);
        }
        match action {
            Action::Continue => {
                dir.forward_body();
                dir.stage = Stage::Flowing;
            }
            Action::Pause => dir.stage = Stage::BodyPaused,
        }
        Ok(action)
    }

    /// Delivers trailers to one direction.
    pub fn deliver_trailers(
        &mut self,
        context: u32,
        response: bool,
        trailers: Headers,
    ) -> HostResult<Action> {
        let count = trailers.len() as i32;
        let dir = self.stream_mut(context)?.direction_mut(response);
        dir.trailers = trailers;
        dir.end_received = true;
        let export = if response {
            "proxy_on_response_trailers"
        } else {
            "proxy_on_request_trailers"
        };
        let raw = self.call(export, context, &[context as i32, count])?;
        Ok(Action::from_raw(raw.unwrap_or(0)))
    }

    /// Acts on what the last callbacks asked: resumes and local replies.
    pub fn process_effects(&mut self) -> HostResult<()> {
        for _ in 0..256 {
            let next = self
                .ctx()
                .streams
                .iter()
                .find(|(_, stream)| !stream.finished && stream.has_pending_effects())
                .map(|(id, _)| *id);
            let Some(context) = next else {
                return Ok(());
            };
            let stream = self.stream_mut(context)?;
            if stream.local_reply_pending {
                stream.local_reply_pending = false;
                stream.request.resume_requested = false;
                if !stream.request.ended {
                    stream.request.stage = Stage::Stopped;
                }
                let Some(reply) = stream.local_reply.clone() else {
                    continue;
                };
                if stream.response.stage != Stage::Idle {
                    continue; // the response had started: Envoy resets instead
                }
                // Envoy runs a local reply through this filter's own
                // response callbacks.
                let mut headers = vec![(":status".to_string(), reply.status.to_string())];
                headers.extend(reply.headers.iter().cloned());
                let empty = reply.body.is_empty();
                if self.deliver_headers(context, true, headers, empty)? == Action::Continue
                    && !empty
                {
                    self.deliver_body(context, true, &reply.body, true)?;
                }
                continue;
            }
            for response in [false, true] {
                self.resume_if_requested(context, response)?;
            }
        }
        Err(HostError::Misuse(
            "stream effects did not settle after 256 rounds".into(),
        ))
    }

    fn resume_if_requested(&mut self, context: u32, response: bool) -> HostResult<()> {
        let dir = self.stream_mut(context)?.direction_mut(response);
        if !dir.resume_requested {
            return Ok(());
        }
        dir.resume_requested = false;
        match dir.stage {
            Stage::HeadersPaused => {
                dir.resumes += 1;
                dir.forward_headers();
                dir.stage = Stage::Flowing;
                if !dir.body.is_empty() {
                    // Envoy delivers what it held while the headers paused.
                    self.deliver_body(context, response, &[], false)?;
                } else if dir.end_received {
                    dir.ended = true;
                }
            }
            Stage::BodyPaused => {
                dir.resumes += 1;
                dir.forward_body();
                dir.stage = Stage::Flowing;
            }
            _ => {
                let side = if response { "response" } else { "request" };
                self.ctx().record(Event::Note(format!(
                    "{side} resumed while not paused (no effect)"
                )));
            }
        }
        Ok(())
    }

    /// Ends a stream: `proxy_on_done`, `proxy_on_log`, `proxy_on_delete`.
    pub fn finish_stream(&mut self, context: u32) -> HostResult<()> {
        self.stream_mut(context)?;
        self.call("proxy_on_done", context, &[context as i32])?;
        self.call("proxy_on_log", context, &[context as i32])?;
        self.call("proxy_on_delete", context, &[context as i32])?;
        self.stream_mut(context)?.finished = true;
        if let Some(stream) = self.ctx_mut().streams.remove(&context) {
            self.ctx_mut().finished_streams.insert(context, stream);
        }
        // Envoy cancels the callouts of a stream that is gone.
        let index = self.ctx().index;
        let mut host = self.ctx().host.borrow_mut();
        host.callouts
            .retain(|_, pending| !(pending.vm == index && pending.context == context));
        Ok(())
    }

    /// The earliest tick due: (time ns, root context).
    pub fn next_tick(&self) -> Option<(u64, u32)> {
        self.ctx()
            .roots
            .iter()
            .filter_map(|(id, root)| root.next_tick_ns.map(|due| (due, *id)))
            .min()
    }

    /// Fires the tick of a root context and schedules the next one.
    pub fn tick(&mut self, root: u32) -> HostResult<()> {
        if let Some(state) = self.ctx_mut().roots.get_mut(&root) {
            let period_ns = state.tick_period_ms * 1_000_000;
            state.next_tick_ns = state.next_tick_ns.map(|due| due + period_ns);
        }
        self.call("proxy_on_tick", root, &[root as i32])?;
        self.process_effects()
    }

    /// Tells a root context its queue has a message.
    pub fn queue_ready(&mut self, root: u32, queue_id: u32) -> HostResult<()> {
        self.call(
            "proxy_on_queue_ready",
            root,
            &[root as i32, queue_id as i32],
        )?;
        self.process_effects()
    }

    /// Delivers a callout's answer to the context that dispatched it.
    pub fn http_call_response(
        &mut self,
        context: u32,
        token: u32,
        answer: &CalloutAnswer,
    ) -> HostResult<()> {
        let alive = self.ctx().roots.contains_key(&context)
            || self
                .ctx()
                .streams
                .get(&context)
                .is_some_and(|stream| !stream.finished);
        if !alive {
            self.ctx().record(Event::Note(format!(
                "callout #{token} answer dropped: context {context} is gone"
            )));
            return Ok(());
        }
        let view = match answer {
            CalloutAnswer::Response(response) => CallResponseView {
                headers: response.header_map(),
                body: response.body.clone(),
                trailers: response.trailers.clone(),
            },
            CalloutAnswer::Failure | CalloutAnswer::Drop => CallResponseView::default(),
        };
        let status = match answer {
            CalloutAnswer::Response(response) => u32::from(response.status),
            _ => 0,
        };
        let args = [
            context as i32,
            token as i32,
            view.headers.len() as i32,
            view.body.len() as i32,
            view.trailers.len() as i32,
        ];
        self.ctx_mut().effective = context;
        self.ctx().record(Event::CalloutAnswer { token, status });
        self.ctx_mut().call_response = Some(view);
        let called = self.call("proxy_on_http_call_response", context, &args);
        self.ctx_mut().call_response = None;
        called?;
        self.process_effects()
    }
}
