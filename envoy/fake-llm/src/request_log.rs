//! Every request the fake LLM answered, kept in memory in arrival order, so
//! tests can see exactly what the provider would have seen: method, path
//! with query, protocol, every header, the body and the trailers.
//!
//! A request is logged as soon as its headers arrive, and its body and
//! trailers are added as they come: a request whose body never completes (a
//! gateway that refused it after sending the headers on) is still in the
//! log, with `complete: false` and whatever part of the body arrived.

use std::sync::{Mutex, MutexGuard};

use base64::Engine as _;
use bytes::{Bytes, BytesMut};
use serde_json::{json, Map, Value};

/// One request as received.
#[derive(Clone)]
pub struct RecordedRequest {
    /// `POST`, `GET`, …
    pub method: String,
    /// Path and query.
    pub path: String,
    /// `HTTP/1.1`, `HTTP/2`, …
    pub version: String,
    /// Header names (lower case) and values, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The raw body (so far, while the request is in flight).
    pub body: Bytes,
    /// Trailer names (lower case) and values, in arrival order.
    pub trailers: Vec<(String, String)>,
    /// The whole body (and trailers, if any) arrived.
    pub complete: bool,
}

/// `{name: value}`; repeated names joined by `, `.
fn fields_json(fields: &[(String, String)]) -> Value {
    let mut map = Map::new();
    for (name, value) in fields {
        match map.get_mut(name) {
            Some(Value::String(joined)) => {
                joined.push_str(", ");
                joined.push_str(value);
            }
            _ => {
                map.insert(name.clone(), Value::String(value.clone()));
            }
        }
    }
    Value::Object(map)
}

impl RecordedRequest {
    /// A request whose headers just arrived: no body yet.
    pub fn new(
        method: String,
        path: String,
        version: String,
        headers: Vec<(String, String)>,
    ) -> Self {
        RecordedRequest {
            method,
            path,
            version,
            headers,
            body: Bytes::new(),
            trailers: Vec::new(),
            complete: false,
        }
    }

    /// `{"method", "path", "version", "headers": {name: value}, "body": text,
    /// "trailers": {name: value}, "complete": bool}`; repeated headers are
    /// joined by `, `; a body that is not UTF-8 is decoded lossily in
    /// `body`, and given byte for byte in `body_base64`.
    pub fn to_json(&self) -> Value {
        let mut entry = json!({
            "method": self.method,
            "path": self.path,
            "version": self.version,
            "headers": fields_json(&self.headers),
            "body": String::from_utf8_lossy(&self.body),
            "trailers": fields_json(&self.trailers),
            "complete": self.complete,
        });
        if std::str::from_utf8(&self.body).is_err() {
            entry["body_base64"] =
                Value::String(base64::engine::general_purpose::STANDARD.encode(&self.body));
        }
        entry
    }
}

/// One request in the log and where it is.
struct Entry {
    /// Unique since start (the log may be cleared in between).
    id: u64,
    request: RecordedRequest,
    /// Body bytes received so far.
    body: BytesMut,
    /// The handler is done with it (complete, failed or dropped).
    ended: bool,
}

#[derive(Default)]
struct Inner {
    entries: Vec<Entry>,
    next_id: u64,
}

/// The log; shared by all connections.
#[derive(Default)]
pub struct RequestLog {
    inner: Mutex<Inner>,
}

/// A request being received: add its body and trailers through it. Dropping
/// it (the request ended, or its connection went away) ends the request in
/// the log.
pub struct Recording<'l> {
    log: &'l RequestLog,
    id: u64,
    /// Position in the log when it arrived (1 for the first since the last
    /// clear).
    pub seq: u64,
}

impl Recording<'_> {
    /// Appends body bytes.
    pub fn body(&self, data: &[u8]) {
        self.log
            .update(self.id, |entry| entry.body.extend_from_slice(data));
    }

    /// Adds trailers.
    pub fn trailers(&self, trailers: Vec<(String, String)>) {
        self.log
            .update(self.id, |entry| entry.request.trailers.extend(trailers));
    }

    /// The whole request arrived.
    pub fn complete(&self) {
        self.log
            .update(self.id, |entry| entry.request.complete = true);
    }
}

impl Drop for Recording<'_> {
    fn drop(&mut self) {
        self.log.update(self.id, |entry| entry.ended = true);
    }
}

impl RequestLog {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock cannot leave the Vec half-written.
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn update(&self, id: u64, change: impl FnOnce(&mut Entry)) {
        // A request cleared from the log meanwhile is not added back.
        if let Some(entry) = self.lock().entries.iter_mut().find(|e| e.id == id) {
            change(entry);
        }
    }

    fn snapshot(entry: &Entry) -> RecordedRequest {
        let mut request = entry.request.clone();
        request.body = Bytes::copy_from_slice(&entry.body);
        request
    }

    /// Logs a request whose headers arrived; its body and trailers go
    /// through the returned [`Recording`].
    pub fn start(&self, request: RecordedRequest) -> Recording<'_> {
        let mut inner = self.lock();
        let id = inner.next_id;
        inner.next_id += 1;
        let body = BytesMut::from(&request.body[..]);
        let ended = request.complete;
        inner.entries.push(Entry {
            id,
            request,
            body,
            ended,
        });
        let seq = inner.entries.len() as u64;
        Recording { log: self, id, seq }
    }

    /// Appends a whole request; returns its position (1 for the first since
    /// the last clear).
    pub fn record(&self, mut request: RecordedRequest) -> u64 {
        request.complete = true;
        self.start(request).seq
    }

    /// The last request, if any.
    pub fn last(&self) -> Option<RecordedRequest> {
        self.lock().entries.last().map(Self::snapshot)
    }

    /// Requests whose headers arrived but that have not ended yet.
    pub fn in_flight(&self) -> usize {
        self.lock().entries.iter().filter(|e| !e.ended).count()
    }

    /// All requests, oldest first, as a JSON array.
    pub fn to_json(&self) -> Value {
        Value::Array(
            self.lock()
                .entries
                .iter()
                .map(|e| Self::snapshot(e).to_json())
                .collect(),
        )
    }

    /// Forgets every request.
    pub fn clear(&self) {
        self.lock().entries.clear();
    }
}
