//! The host's view of one HTTP stream: each direction's headers, the body
//! buffered for the filter, what was forwarded, and where it is paused.

use crate::abi::Headers;
use std::collections::HashMap;

/// Where one direction of a stream stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Stage {
    /// Headers not yet delivered.
    #[default]
    Idle,
    /// The headers callback returned Pause: nothing more is delivered to the
    /// filter until it resumes (Envoy's StopAllIteration).
    HeadersPaused,
    /// The body callback returned Pause: the body buffers.
    BodyPaused,
    /// Headers forwarded; body chunks pass through the filter.
    Flowing,
    /// A local reply ended this direction.
    Stopped,
}

/// One direction (request or response) of a stream.
#[derive(Clone, Debug, Default)]
pub struct Direction {
    /// The header map as the filter sees and changes it.
    pub headers: Headers,
    /// Trailers as the filter sees them.
    pub trailers: Headers,
    /// Body bytes buffered and not yet forwarded (the filter's body buffer).
    pub body: Vec<u8>,
    /// The headers as forwarded (after the filter), once forwarded.
    pub forwarded_headers: Option<Headers>,
    /// Every body byte forwarded, in order.
    pub forwarded_body: Vec<u8>,
    /// The forwarded body, one entry per forward (streaming shows here).
    pub forwarded_chunks: Vec<Vec<u8>>,
    /// The test delivered end of stream.
    pub end_received: bool,
    /// End of stream was forwarded.
    pub ended: bool,
    /// Where it stands.
    pub stage: Stage,
    /// The filter called `proxy_continue_stream` for this direction.
    pub resume_requested: bool,
    /// How many times the filter resumed a paused direction.
    pub resumes: u32,
    /// The filter closed (reset) this direction.
    pub reset: bool,
}

impl Direction {
    /// Forwards the headers as they are now.
    pub fn forward_headers(&mut self) {
        self.forwarded_headers = Some(self.headers.clone());
    }

    /// Forwards the buffered body (an empty buffer forwards nothing, except
    /// that it may carry end of stream).
    pub fn forward_body(&mut self) {
        let chunk = std::mem::take(&mut self.body);
        if !chunk.is_empty() {
            self.forwarded_body.extend_from_slice(&chunk);
            self.forwarded_chunks.push(chunk);
        }
        if self.end_received {
            self.ended = true;
        }
    }
}

/// A local reply the filter sent (`proxy_send_local_response`).
#[derive(Clone, Debug, PartialEq)]
pub struct LocalReply {
    /// HTTP status.
    pub status: u32,
    /// Details string.
    pub details: String,
    /// Headers (besides `:status`).
    pub headers: Headers,
    /// Body.
    pub body: Vec<u8>,
}

/// One HTTP stream (an HTTP context) inside a VM.
#[derive(Clone, Debug, Default)]
pub struct StreamState {
    /// The root context it belongs to.
    pub root: u32,
    /// The request.
    pub request: Direction,
    /// The response.
    pub response: Direction,
    /// The local reply, once sent.
    pub local_reply: Option<LocalReply>,
    /// A local reply waits to run through the response callbacks.
    pub local_reply_pending: bool,
    /// Per-stream properties (`request.path`, set by the test or filter).
    pub properties: HashMap<Vec<String>, Vec<u8>>,
    /// `on_done`/`on_log`/`on_delete` have run.
    pub finished: bool,
}

impl StreamState {
    /// The direction a stream type (0 request, 1 response) names.
    pub fn direction_mut(&mut self, response: bool) -> &mut Direction {
        if response {
            &mut self.response
        } else {
            &mut self.request
        }
    }

    /// Does any effect wait for the host to act on it?
    pub fn has_pending_effects(&self) -> bool {
        self.local_reply_pending || self.request.resume_requested || self.response.resume_requested
    }
}
