//! The floor filter: buffers the request body and the response body and
//! copies each back unchanged. It is the cost any buffering proxy-wasm filter
//! pays (benchmarks) and, with probe words in its plugin configuration, the
//! module the host-tests harness proves itself on before the Latet filter
//! exists.
//!
//! With an empty configuration it does exactly the buffer-and-copy work
//! (remove `content-length` in the headers callbacks, pause until
//! `end_of_stream`, put the same bytes back) and nothing else. Probe words
//! (`log metrics shared queue tick callout`, any order) switch on one host
//! feature each; see `probes.rs`.

mod probes;

use probes::Probes;
use proxy_wasm::hostcalls;
use proxy_wasm::traits::{Context, HttpContext, RootContext};
use proxy_wasm::types::{Action, BufferType, ContextType, LogLevel, MapType};

proxy_wasm::main! {{
    proxy_wasm::set_log_level(LogLevel::Trace);
    proxy_wasm::set_root_context(|_| -> Box<dyn RootContext> { Box::new(FloorRoot::default()) });
}}

/// The root context: reads the probe words and hands them to each stream.
#[derive(Default)]
struct FloorRoot {
    probes: Probes,
    /// This VM's own broadcast queue (probe `queue`).
    queue_id: Option<u32>,
}

impl Context for FloorRoot {}

impl RootContext for FloorRoot {
    fn on_configure(&mut self, _size: usize) -> bool {
        let config = hostcalls::get_buffer(BufferType::PluginConfiguration, 0, usize::MAX)
            .ok()
            .flatten()
            .unwrap_or_default();
        self.probes = Probes::parse(&config);
        self.queue_id = self.probes.configure();
        true
    }

    fn on_tick(&mut self) {
        self.probes.tick();
    }

    fn on_queue_ready(&mut self, queue_id: u32) {
        self.probes.queue_ready(queue_id);
    }

    fn get_type(&self) -> Option<ContextType> {
        Some(ContextType::HttpContext)
    }

    fn create_http_context(&self, context_id: u32) -> Option<Box<dyn HttpContext>> {
        Some(Box::new(FloorStream {
            context_id,
            probes: self.probes,
            shared_cas: None,
        }))
    }
}

/// One HTTP stream: buffer, copy back, continue.
struct FloorStream {
    context_id: u32,
    probes: Probes,
    /// The CAS read in the request headers, written back in the request body
    /// (probe `shared`): a write from another VM in between is a conflict.
    shared_cas: Option<u32>,
}

impl Context for FloorStream {
    fn on_http_call_response(
        &mut self,
        _token: u32,
        _headers: usize,
        body_size: usize,
        _trailers: usize,
    ) {
        probes::callout_answered(body_size);
    }
}

impl FloorStream {
    /// Copies a whole buffered body back in place.
    fn copy_back(&self, buffer: BufferType, size: usize) {
        if let Ok(Some(body)) = hostcalls::get_buffer(buffer, 0, size) {
            let _ = hostcalls::set_buffer(buffer, 0, size, &body);
        }
        self.probes.body_copied(self.context_id, size);
    }
}

impl HttpContext for FloorStream {
    fn on_http_request_headers(&mut self, _num_headers: usize, _end_of_stream: bool) -> Action {
        let _ = hostcalls::remove_map_value(MapType::HttpRequestHeaders, "content-length");
        self.shared_cas = self.probes.request_started();
        Action::Continue
    }

    fn on_http_request_body(&mut self, body_size: usize, end_of_stream: bool) -> Action {
        if !end_of_stream {
            return Action::Pause;
        }
        self.copy_back(BufferType::HttpRequestBody, body_size);
        self.probes.request_ended(self.shared_cas)
    }

    fn on_http_response_headers(&mut self, _num_headers: usize, _end_of_stream: bool) -> Action {
        let _ = hostcalls::remove_map_value(MapType::HttpResponseHeaders, "content-length");
        Action::Continue
    }

    fn on_http_response_body(&mut self, body_size: usize, end_of_stream: bool) -> Action {
        if !end_of_stream {
            return Action::Pause;
        }
        self.copy_back(BufferType::HttpResponseBody, body_size);
        Action::Continue
    }
}
