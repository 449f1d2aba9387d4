//! Numbers and encodings of the proxy-wasm ABI 0.2.1 as the Rust SDK 0.2.5
//! uses them (its `types.rs` and `hostcalls.rs` `utils`).

/// Status codes a host call returns.
pub mod status {
    /// Success.
    pub const OK: i32 = 0;
    /// The thing asked for does not exist.
    pub const NOT_FOUND: i32 = 1;
    /// An argument is out of range or malformed.
    pub const BAD_ARGUMENT: i32 = 2;
    /// A serialized argument could not be read.
    pub const SERIALIZATION_FAILURE: i32 = 3;
    /// A queue holds nothing.
    pub const EMPTY: i32 = 7;
    /// Shared data changed since its CAS was read.
    pub const CAS_MISMATCH: i32 = 8;
    /// The host could not do it.
    pub const INTERNAL_FAILURE: i32 = 10;
    /// The host does not implement it.
    pub const UNIMPLEMENTED: i32 = 12;
}

/// What a stream callback returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Forward and go on.
    Continue,
    /// Stop iteration (buffer) until the filter resumes or more data comes.
    Pause,
}

impl Action {
    /// Decodes the i32 a callback returned; anything but 0 stops iteration.
    pub fn from_raw(raw: i32) -> Action {
        if raw == 0 {
            Action::Continue
        } else {
            Action::Pause
        }
    }
}

/// Header maps a host call can name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MapType {
    /// Request headers.
    RequestHeaders,
    /// Request trailers.
    RequestTrailers,
    /// Response headers.
    ResponseHeaders,
    /// Response trailers.
    ResponseTrailers,
    /// Headers of the HTTP call response being delivered.
    CallResponseHeaders,
    /// Trailers of the HTTP call response being delivered.
    CallResponseTrailers,
}

impl MapType {
    /// Decodes the ABI number; gRPC metadata maps are not supported.
    pub fn from_raw(raw: i32) -> Option<MapType> {
        Some(match raw {
            0 => MapType::RequestHeaders,
            1 => MapType::RequestTrailers,
            2 => MapType::ResponseHeaders,
            3 => MapType::ResponseTrailers,
            6 => MapType::CallResponseHeaders,
            7 => MapType::CallResponseTrailers,
            _ => return None,
        })
    }
}

/// Buffers a host call can name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BufferType {
    /// The request body buffered so far.
    RequestBody,
    /// The response body buffered so far.
    ResponseBody,
    /// The body of the HTTP call response being delivered.
    CallResponseBody,
    /// The VM configuration.
    VmConfiguration,
    /// The plugin configuration of the root context being configured.
    PluginConfiguration,
}

impl BufferType {
    /// Decodes the ABI number; TCP and gRPC buffers are not supported.
    pub fn from_raw(raw: i32) -> Option<BufferType> {
        Some(match raw {
            0 => BufferType::RequestBody,
            1 => BufferType::ResponseBody,
            4 => BufferType::CallResponseBody,
            6 => BufferType::VmConfiguration,
            7 => BufferType::PluginConfiguration,
            _ => return None,
        })
    }
}

/// Metric kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetricKind {
    /// Only goes up.
    Counter,
    /// Goes up and down, or is set.
    Gauge,
    /// Records samples.
    Histogram,
}

impl MetricKind {
    /// Decodes the ABI number.
    pub fn from_raw(raw: i32) -> Option<MetricKind> {
        Some(match raw {
            0 => MetricKind::Counter,
            1 => MetricKind::Gauge,
            2 => MetricKind::Histogram,
            _ => return None,
        })
    }
}

/// Log level names, indexed by the ABI number.
pub const LOG_LEVELS: [&str; 6] = ["TRACE", "DEBUG", "INFO", "WARN", "ERROR", "CRITICAL"];

/// A header map as the host keeps it: lowercase names, values in order.
pub type Headers = Vec<(String, String)>;

/// Encodes a header map the way the SDK decodes it: count, then the
/// (name length, value length) pairs, then each name and value followed by
/// a NUL byte.
pub fn encode_map(map: &[(String, String)]) -> Vec<u8> {
    let mut bytes = Vec::new();
    bytes.extend_from_slice(&(map.len() as u32).to_le_bytes());
    for (name, value) in map {
        bytes.extend_from_slice(&(name.len() as u32).to_le_bytes());
        bytes.extend_from_slice(&(value.len() as u32).to_le_bytes());
    }
    for (name, value) in map {
        bytes.extend_from_slice(name.as_bytes());
        bytes.push(0);
        bytes.extend_from_slice(value.as_bytes());
        bytes.push(0);
    }
    bytes
}

/// Decodes a header map the SDK encoded; `None` if it is malformed.
pub fn decode_map(bytes: &[u8]) -> Option<Headers> {
    if bytes.is_empty() {
        return Some(Vec::new());
    }
    let read_u32 = |at: usize| -> Option<usize> {
        let raw: [u8; 4] = bytes.get(at..at + 4)?.try_into().ok()?;
        Some(u32::from_le_bytes(raw) as usize)
    };
    let count = read_u32(0)?;
    let mut sizes = Vec::with_capacity(count.min(1024));
    for index in 0..count {
        let at = 4 + index * 8;
        sizes.push((read_u32(at)?, read_u32(at + 4)?));
    }
    let mut at = 4 + count * 8;
    let mut map = Vec::with_capacity(sizes.len());
    for (name_len, value_len) in sizes {
        let name = bytes.get(at..at + name_len)?;
        at += name_len + 1;
        let value = bytes.get(at..at + value_len)?;
        at += value_len + 1;
        map.push((
            String::from_utf8_lossy(name).to_lowercase(),
            String::from_utf8_lossy(value).into_owned(),
        ));
    }
    Some(map)
}

/// Splits a property path the SDK serialized (parts joined by NUL bytes).
pub fn decode_property_path(bytes: &[u8]) -> Vec<String> {
    if bytes.is_empty() {
        return Vec::new();
    }
    bytes
        .split(|byte| *byte == 0)
        .map(|part| String::from_utf8_lossy(part).into_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_round_trips() {
        let map = vec![
            (":path".to_string(), "/v1/chat".to_string()),
            ("x-empty".to_string(), String::new()),
        ];
        assert_eq!(decode_map(&encode_map(&map)), Some(map));
    }

    #[test]
    fn truncated_map_is_refused() {
        let map = vec![("a".to_string(), "bcd".to_string())];
        let bytes = encode_map(&map);
        assert_eq!(decode_map(&bytes[..bytes.len() - 3]), None);
    }

    #[test]
    fn property_path_splits_on_nul() {
        assert_eq!(
            decode_property_path(b"request\0path"),
            vec!["request", "path"]
        );
        assert!(decode_property_path(b"").is_empty());
    }
}
