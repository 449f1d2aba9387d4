//! A raw HTTP/1.1 client for the tests: it keeps the chunked framing, so a
//! test can see how the fake LLM split its writes.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod frames;

use std::net::SocketAddr;
use std::sync::Arc;

use latet_fake_llm::{serve, FakeLlm};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Starts a fake LLM on a free port of 127.0.0.1.
pub async fn start() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(serve(listener, Arc::new(FakeLlm::default())));
    addr
}

/// A response as it came over the wire.
pub struct RawResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// The body's chunks when `transfer-encoding: chunked`, else one piece.
    pub chunks: Vec<Vec<u8>>,
}

impl RawResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn body(&self) -> Vec<u8> {
        self.chunks.concat()
    }

    pub fn text(&self) -> String {
        String::from_utf8(self.body()).unwrap()
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body()).unwrap()
    }

    /// Server-sent events: `(event name or "", data)`.
    pub fn events(&self) -> Vec<(String, String)> {
        let text = self.text();
        assert!(text.ends_with("\n\n"), "a stream ends with a blank line");
        text.trim_end_matches('\n')
            .split("\n\n")
            .map(|block| {
                let mut name = String::new();
                let mut data = String::new();
                for line in block.lines() {
                    if let Some(rest) = line.strip_prefix("event: ") {
                        name = rest.to_owned();
                    } else if let Some(rest) = line.strip_prefix("data: ") {
                        data = rest.to_owned();
                    } else {
                        panic!("unexpected SSE line {line:?}");
                    }
                }
                (name, data)
            })
            .collect()
    }

    /// The JSON data of every event except `[DONE]`.
    pub fn event_data(&self) -> Vec<Value> {
        self.events()
            .into_iter()
            .filter(|(_, data)| data != "[DONE]")
            .map(|(_, data)| serde_json::from_str(&data).unwrap())
            .collect()
    }
}

/// Sends one request on a fresh connection and reads the whole answer.
pub async fn send(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> RawResponse {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.unwrap();
    parse(&raw)
}

pub async fn post(
    addr: SocketAddr,
    path: &str,
    headers: &[(&str, &str)],
    body: &Value,
) -> RawResponse {
    send(addr, "POST", path, headers, &body.to_string()).await
}

fn parse(raw: &[u8]) -> RawResponse {
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = std::str::from_utf8(&raw[..split]).unwrap();
    let mut rest = &raw[split + 4..];
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap();
    let status = status_line.split(' ').nth(1).unwrap().parse().unwrap();
    let headers: Vec<(String, String)> = lines
        .map(|line| {
            let (name, value) = line.split_once(':').unwrap();
            (name.trim().to_ascii_lowercase(), value.trim().to_owned())
        })
        .collect();
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v == "chunked");
    let mut chunks = Vec::new();
    if chunked {
        loop {
            let line_end = rest.windows(2).position(|w| w == b"\r\n").unwrap();
            let size =
                usize::from_str_radix(std::str::from_utf8(&rest[..line_end]).unwrap(), 16).unwrap();
            rest = &rest[line_end + 2..];
            if size == 0 {
                break;
            }
            chunks.push(rest[..size].to_vec());
            assert_eq!(&rest[size..size + 2], b"\r\n");
            rest = &rest[size + 2..];
        }
    } else {
        chunks.push(rest.to_vec());
    }
    RawResponse {
        status,
        headers,
        chunks,
    }
}
