//! Server-sent events as the providers write them: OpenAI Chat Completions
//! sends bare `data:` lines; Anthropic and the Responses API name each event.

use crate::ordered_json::Json;

/// `data: {json}\n\n` (OpenAI Chat Completions).
pub fn data_event(data: &Json) -> String {
    format!("data: {data}\n\n")
}

/// `event: name\ndata: {json}\n\n` (Anthropic Messages, OpenAI Responses).
pub fn named_event(name: &str, data: &Json) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

/// OpenAI Chat Completions' end-of-stream marker.
pub const DONE: &str = "data: [DONE]\n\n";

/// Regroups a stream's bytes (SSE events, JSON-array elements, event-stream
/// frames) into writes of exactly `write_bytes` bytes (the
/// last may be shorter), ignoring event boundaries — and character
/// boundaries: a split inside a UTF-8 sequence is the point.
pub fn regroup(events: &[impl AsRef<[u8]>], write_bytes: usize) -> Vec<bytes::Bytes> {
    let all: Vec<u8> = events.iter().flat_map(|e| e.as_ref().to_vec()).collect();
    all.chunks(write_bytes.max(1))
        .map(bytes::Bytes::copy_from_slice)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_shapes() {
        let v = crate::jobj! {"a": 1u64};
        assert_eq!(data_event(&v), "data: {\"a\":1}\n\n");
        assert_eq!(named_event("ping", &v), "event: ping\ndata: {\"a\":1}\n\n");
    }

    #[test]
    fn regroup_splits_bytes_across_events() {
        let events = vec!["abc".to_owned(), "défg".to_owned()];
        let writes = regroup(&events, 4);
        let lens: Vec<usize> = writes.iter().map(|w| w.len()).collect();
        assert_eq!(lens, vec![4, 4]);
        let joined: Vec<u8> = writes.iter().flat_map(|w| w.to_vec()).collect();
        assert_eq!(joined, "abcdéfg".as_bytes());
    }
}
