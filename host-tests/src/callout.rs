//! Callouts (`proxy_http_call`): what the filter asked, how the test answers
//! (scripted answer, delay, error, drop), and forwarding to a real HTTP
//! server on loopback such as the control service.

use crate::abi::Headers;
use crate::state::header;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// A callout as the filter dispatched it.
#[derive(Clone, Debug, PartialEq)]
pub struct CalloutRequest {
    /// Token the host gave it (answers name it).
    pub token: u32,
    /// The upstream (Envoy cluster) named.
    pub upstream: String,
    /// Headers, pseudo-headers (`:method`, `:path`, `:authority`) included.
    pub headers: Headers,
    /// Body.
    pub body: Vec<u8>,
    /// Trailers.
    pub trailers: Headers,
    /// The filter's timeout in milliseconds.
    pub timeout_ms: u32,
}

impl CalloutRequest {
    /// A header's first value.
    pub fn header(&self, name: &str) -> Option<&str> {
        header(&self.headers, name)
    }

    /// `:path`, or empty.
    pub fn path(&self) -> &str {
        self.header(":path").unwrap_or("")
    }

    /// `:method`, or empty.
    pub fn method(&self) -> &str {
        self.header(":method").unwrap_or("")
    }
}

/// An HTTP answer to a callout.
#[derive(Clone, Debug, PartialEq)]
pub struct CalloutResponse {
    /// HTTP status (becomes `:status`).
    pub status: u16,
    /// Headers besides `:status`.
    pub headers: Headers,
    /// Body.
    pub body: Vec<u8>,
    /// Trailers.
    pub trailers: Headers,
}

impl CalloutResponse {
    /// A response with a status and a body.
    pub fn new(status: u16, body: impl Into<Vec<u8>>) -> CalloutResponse {
        CalloutResponse {
            status,
            headers: Vec::new(),
            body: body.into(),
            trailers: Vec::new(),
        }
    }

    /// Adds a header.
    pub fn with_header(mut self, name: &str, value: &str) -> CalloutResponse {
        self.headers.push((name.to_lowercase(), value.to_string()));
        self
    }

    /// The header map the filter sees: `:status` first.
    pub fn header_map(&self) -> Headers {
        let mut map = vec![(":status".to_string(), self.status.to_string())];
        map.extend(self.headers.iter().cloned());
        map
    }
}

/// How a callout ends.
#[derive(Clone, Debug, PartialEq)]
pub enum CalloutAnswer {
    /// An HTTP response (any status; Envoy answers a dead endpoint with 503).
    Response(CalloutResponse),
    /// Envoy's failure path (reset, timeout): the callback runs with no
    /// headers, no body and no trailers.
    Failure,
    /// Never answered: the callout is forgotten.
    Drop,
}

/// What a responder does with a callout when it is dispatched.
#[derive(Clone, Debug)]
pub enum CalloutScript {
    /// Leave it pending: the test answers with `Host::answer_callout`.
    Hold,
    /// Answer at once (on the next settle, after the callback returns).
    Answer(CalloutResponse),
    /// Answer once the clock has advanced this many milliseconds.
    AnswerAfter(u64, CalloutResponse),
    /// Fail at once (reset).
    Fail,
    /// Fail when the callout's own timeout has passed on the host clock.
    Timeout,
    /// Never answer.
    Drop,
    /// Send it to this HTTP server (blocking, at dispatch) and answer with
    /// what it said (503 if it cannot be reached, like Envoy).
    Forward(SocketAddr),
}

/// A scripted answer and when the host delivers it.
#[derive(Clone, Debug, PartialEq)]
pub struct Due {
    /// Host clock (ns) at which it is delivered.
    pub at_ns: u64,
    /// The answer.
    pub answer: CalloutAnswer,
}

/// Decides each callout's fate as it is dispatched.
pub type CalloutResponder = Box<dyn FnMut(&CalloutRequest) -> CalloutScript>;

impl CalloutScript {
    /// When and how this script answers, from the clock at dispatch.
    pub fn due(self, now_ns: u64, request: &CalloutRequest) -> Option<Due> {
        let (after_ms, answer) = match self {
            CalloutScript::Hold => return None,
            CalloutScript::Answer(response) => (0, CalloutAnswer::Response(response)),
            CalloutScript::AnswerAfter(ms, response) => (ms, CalloutAnswer::Response(response)),
            CalloutScript::Fail => (0, CalloutAnswer::Failure),
            CalloutScript::Timeout => (u64::from(request.timeout_ms), CalloutAnswer::Failure),
            CalloutScript::Drop => (0, CalloutAnswer::Drop),
            CalloutScript::Forward(addr) => (0, forward(addr, request)),
        };
        Some(Due {
            at_ns: now_ns + after_ms * 1_000_000,
            answer,
        })
    }
}

/// Sends a callout to an HTTP/1.1 server and returns its answer: 503 when
/// the server cannot be reached (Envoy's answer for a dead endpoint),
/// [`CalloutAnswer::Failure`] when it stops answering mid-way.
pub fn forward(addr: SocketAddr, request: &CalloutRequest) -> CalloutAnswer {
    let timeout = Duration::from_millis(u64::from(request.timeout_ms.max(1)));
    let Ok(mut stream) = TcpStream::connect_timeout(&addr, timeout) else {
        return CalloutAnswer::Response(CalloutResponse::new(503, "upstream connect error"));
    };
    let _ = stream.set_read_timeout(Some(timeout));
    let _ = stream.set_write_timeout(Some(timeout));
    let mut head = format!(
        "{} {} HTTP/1.1\r\nhost: {}\r\nconnection: close\r\ncontent-length: {}\r\n",
        non_empty(request.method(), "GET"),
        non_empty(request.path(), "/"),
        request.header(":authority").unwrap_or("localhost"),
        request.body.len()
    );
    for (name, value) in &request.headers {
        if name.starts_with(':')
            || name == "host"
            || name == "content-length"
            || name == "connection"
        {
            continue;
        }
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let mut raw = Vec::new();
    let sent = stream
        .write_all(head.as_bytes())
        .and_then(|()| stream.write_all(&request.body))
        .and_then(|()| stream.read_to_end(&mut raw));
    if sent.is_err() {
        return CalloutAnswer::Failure;
    }
    parse_response(&raw).map_or(CalloutAnswer::Failure, CalloutAnswer::Response)
}

fn non_empty<'a>(value: &'a str, fallback: &'a str) -> &'a str {
    if value.is_empty() {
        fallback
    } else {
        value
    }
}

/// Parses an HTTP/1.1 response read to the end of the connection.
fn parse_response(raw: &[u8]) -> Option<CalloutResponse> {
    let split = raw.windows(4).position(|window| window == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&raw[..split]).ok()?;
    let rest = &raw[split + 4..];
    let mut lines = head.split("\r\n");
    let status: u16 = lines.next()?.split(' ').nth(1)?.parse().ok()?;
    let mut headers = Vec::new();
    for line in lines {
        let (name, value) = line.split_once(':')?;
        headers.push((name.trim().to_lowercase(), value.trim().to_string()));
    }
    let chunked =
        header(&headers, "transfer-encoding").is_some_and(|value| value.contains("chunked"));
    let body = if chunked {
        decode_chunked(rest)?
    } else if let Some(length) =
        header(&headers, "content-length").and_then(|v| v.parse::<usize>().ok())
    {
        rest.get(..length)?.to_vec()
    } else {
        rest.to_vec()
    };
    headers.retain(|(name, _)| name != "transfer-encoding" && name != "connection");
    Some(CalloutResponse {
        status,
        headers,
        body,
        trailers: Vec::new(),
    })
}

fn decode_chunked(mut rest: &[u8]) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line_end = rest.windows(2).position(|window| window == b"\r\n")?;
        let size_text = std::str::from_utf8(&rest[..line_end]).ok()?;
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        rest = &rest[line_end + 2..];
        if size == 0 {
            return Some(body);
        }
        body.extend_from_slice(rest.get(..size)?);
        rest = rest.get(size + 2..)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    fn request(path: &str) -> CalloutRequest {
        CalloutRequest {
            token: 1,
            upstream: "control".into(),
            headers: vec![
                (":method".into(), "POST".into()),
                (":path".into(), path.into()),
                (":authority".into(), "control".into()),
                ("x-test".into(), "yes".into()),
            ],
            body: b"ping".to_vec(),
            trailers: Vec::new(),
            timeout_ms: 2000,
        }
    }

    #[test]
    fn parses_length_and_chunked_bodies() {
        let whole =
            parse_response(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: b\r\n\r\nhello").unwrap();
        assert_eq!((whole.status, whole.body.as_slice()), (200, &b"hello"[..]));
        assert_eq!(header(&whole.headers, "x-a"), Some("b"));
        let chunked =
            parse_response(b"HTTP/1.1 404 NF\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n")
                .unwrap();
        assert_eq!(
            (chunked.status, chunked.body.as_slice()),
            (404, &b"abcde"[..])
        );
    }

    #[test]
    fn forwards_to_a_loopback_server() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            let mut seen = Vec::new();
            let mut buf = [0u8; 1024];
            while !seen.ends_with(b"ping") {
                let n = conn.read(&mut buf).unwrap();
                seen.extend_from_slice(&buf[..n]);
            }
            conn.write_all(b"HTTP/1.1 201 Created\r\ncontent-length: 4\r\n\r\npong")
                .unwrap();
            String::from_utf8(seen).unwrap()
        });
        let answer = forward(addr, &request("/v1/x"));
        let seen = server.join().unwrap();
        assert!(seen.starts_with("POST /v1/x HTTP/1.1\r\n"), "{seen}");
        assert!(seen.contains("x-test: yes\r\n"), "{seen}");
        assert_eq!(
            answer,
            CalloutAnswer::Response(
                CalloutResponse::new(201, "pong").with_header("content-length", "4")
            )
        );
    }

    #[test]
    fn dead_endpoint_answers_503() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        match forward(addr, &request("/")) {
            CalloutAnswer::Response(response) => assert_eq!(response.status, 503),
            other => panic!("expected 503, got {other:?}"),
        }
    }
}
