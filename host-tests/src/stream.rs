//! An HTTP stream handle: the test plays the proxy's part (headers, body
//! chunks, trailers, the upstream's answer) and reads what the filter let
//! through. After each step the host settles (callouts due, queue
//! notifications) unless auto-settle is off.

use crate::abi::{Action, Headers};
use crate::error::HostResult;
use crate::host::HostInner;
use crate::stream_state::{LocalReply, StreamState};
use crate::vm::VmInner;
use std::cell::RefCell;
use std::rc::{Rc, Weak};

/// One HTTP stream inside one VM.
#[derive(Clone)]
pub struct HttpStream {
    pub(crate) vm: Rc<RefCell<VmInner>>,
    pub(crate) host: Weak<HostInner>,
    pub(crate) context: u32,
}

/// Turns `&[(&str, &str)]` into a header map (names lowercased).
pub fn headers(pairs: &[(&str, &str)]) -> Headers {
    pairs
        .iter()
        .map(|(name, value)| (name.to_lowercase(), value.to_string()))
        .collect()
}

impl HttpStream {
    /// The stream's context id.
    pub fn context_id(&self) -> u32 {
        self.context
    }

    fn step<T>(&self, op: impl FnOnce(&mut VmInner, u32) -> HostResult<T>) -> HostResult<T> {
        let result = {
            let mut vm = self.vm.borrow_mut();
            let result = op(&mut vm, self.context);
            match result {
                Ok(value) => vm.process_effects().map(|()| value),
                Err(error) => Err(error),
            }
        };
        if let Some(host) = self.host.upgrade() {
            host.auto_settle();
        }
        result
    }

    /// Request headers arrive from downstream.
    pub fn request_headers(
        &self,
        pairs: &[(&str, &str)],
        end_of_stream: bool,
    ) -> HostResult<Action> {
        self.step(|vm, ctx| vm.deliver_headers(ctx, false, headers(pairs), end_of_stream))
    }

    /// A request body chunk arrives.
    pub fn request_body(&self, chunk: &[u8], end_of_stream: bool) -> HostResult<Action> {
        self.step(|vm, ctx| vm.deliver_body(ctx, false, chunk, end_of_stream))
    }

    /// Request trailers arrive.
    pub fn request_trailers(&self, pairs: &[(&str, &str)]) -> HostResult<Action> {
        self.step(|vm, ctx| vm.deliver_trailers(ctx, false, headers(pairs)))
    }

    /// Response headers arrive from upstream.
    pub fn response_headers(
        &self,
        pairs: &[(&str, &str)],
        end_of_stream: bool,
    ) -> HostResult<Action> {
        self.step(|vm, ctx| vm.deliver_headers(ctx, true, headers(pairs), end_of_stream))
    }

    /// A response body chunk arrives.
    pub fn response_body(&self, chunk: &[u8], end_of_stream: bool) -> HostResult<Action> {
        self.step(|vm, ctx| vm.deliver_body(ctx, true, chunk, end_of_stream))
    }

    /// Response trailers arrive.
    pub fn response_trailers(&self, pairs: &[(&str, &str)]) -> HostResult<Action> {
        self.step(|vm, ctx| vm.deliver_trailers(ctx, true, headers(pairs)))
    }

    /// The stream ends: done, log, delete. Its pending callouts are cancelled.
    pub fn finish(&self) -> HostResult<()> {
        self.step(|vm, ctx| vm.finish_stream(ctx))
    }

    /// Sets a per-stream property (e.g. `["request", "path"]`).
    pub fn set_property(&self, path: &[&str], value: impl Into<Vec<u8>>) {
        let path: Vec<String> = path.iter().map(|part| part.to_string()).collect();
        let value = value.into();
        if let Some(stream) = self
            .vm
            .borrow_mut()
            .ctx_mut()
            .streams
            .get_mut(&self.context)
        {
            stream.properties.insert(path, value);
        }
    }

    /// A copy of everything the host knows about this stream.
    pub fn state(&self) -> StreamState {
        let vm = self.vm.borrow();
        let ctx = vm.ctx();
        ctx.streams
            .get(&self.context)
            .or_else(|| ctx.finished_streams.get(&self.context))
            .cloned()
            .unwrap_or_default()
    }

    /// The request headers as forwarded upstream (None: not forwarded yet).
    pub fn upstream_headers(&self) -> Option<Headers> {
        self.state().request.forwarded_headers
    }

    /// The request body forwarded upstream so far.
    pub fn upstream_body(&self) -> Vec<u8> {
        self.state().request.forwarded_body
    }

    /// Did the whole request (end of stream) go upstream?
    pub fn request_complete(&self) -> bool {
        self.state().request.ended
    }

    /// The response headers as forwarded downstream.
    pub fn downstream_headers(&self) -> Option<Headers> {
        self.state().response.forwarded_headers
    }

    /// The response body forwarded downstream so far.
    pub fn downstream_body(&self) -> Vec<u8> {
        self.state().response.forwarded_body
    }

    /// The response body as forwarded, one entry per forward.
    pub fn downstream_chunks(&self) -> Vec<Vec<u8>> {
        self.state().response.forwarded_chunks
    }

    /// Did the whole response go downstream?
    pub fn response_complete(&self) -> bool {
        self.state().response.ended
    }

    /// The local reply the filter sent, if any.
    pub fn local_reply(&self) -> Option<LocalReply> {
        self.state().local_reply
    }

    /// How many times the filter resumed the paused request.
    pub fn request_resumes(&self) -> u32 {
        self.state().request.resumes
    }

    /// How many times the filter resumed the paused response.
    pub fn response_resumes(&self) -> u32 {
        self.state().response.resumes
    }
}
