//! Every request the fake LLM answered, kept in memory in arrival order, so
//! tests can see exactly what the provider would have seen.

use std::sync::{Mutex, MutexGuard};

use bytes::Bytes;
use serde_json::{json, Map, Value};

/// One request as received.
#[derive(Clone)]
pub struct RecordedRequest {
    /// `POST`, `GET`, …
    pub method: String,
    /// Path and query.
    pub path: String,
    /// Header names (lower case) and values, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The raw body.
    pub body: Bytes,
}

impl RecordedRequest {
    /// `{"method", "path", "headers": {name: value}, "body": text}`; repeated
    /// headers are joined by `, `, a body that is not UTF-8 is decoded lossily.
    pub fn to_json(&self) -> Value {
        let mut headers = Map::new();
        for (name, value) in &self.headers {
            match headers.get_mut(name) {
                Some(Value::String(joined)) => {
                    joined.push_str(", ");
                    joined.push_str(value);
                }
                _ => {
                    headers.insert(name.clone(), Value::String(value.clone()));
                }
            }
        }
        json!({
            "method": self.method,
            "path": self.path,
            "headers": headers,
            "body": String::from_utf8_lossy(&self.body),
        })
    }
}

/// The log; shared by all connections.
#[derive(Default)]
pub struct RequestLog {
    entries: Mutex<Vec<RecordedRequest>>,
}

impl RequestLog {
    fn lock(&self) -> MutexGuard<'_, Vec<RecordedRequest>> {
        // A panic while holding the lock cannot leave the Vec half-written.
        self.entries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Appends a request; returns its position (1 for the first since the
    /// last clear).
    pub fn record(&self, request: RecordedRequest) -> u64 {
        let mut entries = self.lock();
        entries.push(request);
        entries.len() as u64
    }

    /// The last request, if any.
    pub fn last(&self) -> Option<RecordedRequest> {
        self.lock().last().cloned()
    }

    /// All requests, oldest first, as a JSON array.
    pub fn to_json(&self) -> Value {
        Value::Array(self.lock().iter().map(RecordedRequest::to_json).collect())
    }

    /// Forgets every request.
    pub fn clear(&self) {
        self.lock().clear();
    }
}
