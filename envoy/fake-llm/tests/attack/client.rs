//! Sends an attack as written: HTTP/1.1 by hand over TCP (so framing,
//! chunk sizes, trailers and odd request lines are exactly the attack's),
//! HTTP/2 with hyper's client (prior knowledge, DATA frames and trailers).
//! Errors never quote a request: they name the step.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::Frame;
use hyper::header::{HeaderName, HeaderValue};
use hyper::{HeaderMap, Request};
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::corpus::{Attack, Transport};

/// How long one attack may take, answer included.
const ATTACK_TIMEOUT: Duration = Duration::from_secs(30);

/// What came back: the status (0 when the connection closed without an
/// answer).
#[derive(Clone, Copy, Debug)]
pub struct Answer {
    pub status: u16,
}

fn has_header(attack: &Attack, name: &str) -> bool {
    attack
        .headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case(name))
}

/// The bytes of an HTTP/1.x request for `attack` (`connection: close`).
pub fn http1_bytes(attack: &Attack, addr: SocketAddr) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(
        format!(
            "{} {} {}\r\n",
            attack.method, attack.path, attack.http_version
        )
        .as_bytes(),
    );
    if !has_header(attack, "host") {
        out.extend_from_slice(format!("host: {addr}\r\n").as_bytes());
    }
    out.extend_from_slice(b"connection: close\r\n");
    for (name, value) in &attack.headers {
        out.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
    }
    let chunked = attack.transport == Transport::Chunked;
    if chunked {
        if !has_header(attack, "transfer-encoding") {
            out.extend_from_slice(b"transfer-encoding: chunked\r\n");
        }
    } else if !attack.body.is_empty() || attack.method == "POST" {
        out.extend_from_slice(format!("content-length: {}\r\n", attack.body.len()).as_bytes());
    }
    out.extend_from_slice(b"\r\n");
    if chunked {
        for piece in attack.pieces(attack.body.len().max(1)) {
            out.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
            out.extend_from_slice(piece);
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"0\r\n");
        for (name, value) in &attack.trailers {
            out.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
        }
        out.extend_from_slice(b"\r\n");
    } else {
        out.extend_from_slice(&attack.body);
    }
    out
}

/// The status on the first line of `raw`, 0 if none.
fn head_status(raw: &[u8]) -> u16 {
    raw.split(|b| *b == b'\n')
        .next()
        .and_then(|line| std::str::from_utf8(line).ok())
        .and_then(|line| line.split(' ').nth(1))
        .and_then(|code| code.trim().parse::<u16>().ok())
        .unwrap_or(0)
}

/// The status of the final (non-1xx) answer in `raw`, 0 if none.
pub fn final_status(raw: &[u8]) -> u16 {
    let mut rest = raw;
    loop {
        let status = head_status(rest);
        if !(100..200).contains(&status) {
            return status;
        }
        match rest.windows(4).position(|w| w == b"\r\n\r\n") {
            Some(end) => rest = &rest[end + 4..],
            None => return 0,
        }
    }
}

async fn send_http1(addr: SocketAddr, request: Vec<u8>) -> Result<Vec<u8>, String> {
    let stream = TcpStream::connect(addr)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let (mut reader, mut writer) = stream.into_split();
    // Written on its own task: the gateway may answer (413) before it has
    // read the whole body, and then stop reading.
    let writing = tokio::spawn(async move {
        let _ = writer.write_all(&request).await;
        let _ = writer.flush().await;
        writer
    });
    let mut raw = Vec::new();
    let mut buffer = vec![0u8; 64 * 1024];
    // Until the answer is whole: Envoy closes a connection after a local
    // reply only once the client did (or after its 1 s delayed close). A
    // reset after the answer is not an error worth reporting.
    while !answer_complete(&raw) {
        match reader.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(n) => raw.extend_from_slice(&buffer[..n]),
        }
    }
    writing.abort();
    Ok(raw)
}

/// True once `raw` holds a whole final answer (by its `content-length` or
/// its last chunk; a 1xx answer is skipped).
pub fn answer_complete(raw: &[u8]) -> bool {
    let mut rest = raw;
    loop {
        let Some(end) = rest.windows(4).position(|w| w == b"\r\n\r\n") else {
            return false;
        };
        let head = String::from_utf8_lossy(&rest[..end]).to_ascii_lowercase();
        let body = &rest[end + 4..];
        let status = head_status(rest);
        if (100..200).contains(&status) {
            rest = body;
            continue;
        }
        let length = head.lines().find_map(|line| {
            line.strip_prefix("content-length:")
                .and_then(|v| v.trim().parse::<usize>().ok())
        });
        if let Some(length) = length {
            return body.len() >= length;
        }
        if head.contains("transfer-encoding: chunked") {
            return body.ends_with(b"0\r\n\r\n");
        }
        return status == 204 || status == 304;
    }
}

/// A request body of given frames: data, then trailers.
struct Frames(VecDeque<Frame<Bytes>>);

impl hyper::body::Body for Frames {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.0.pop_front().map(Ok))
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_empty()
    }
}

fn header_map(fields: &[(String, String)]) -> Result<HeaderMap, String> {
    let mut map = HeaderMap::new();
    for (index, (name, value)) in fields.iter().enumerate() {
        let name = HeaderName::from_bytes(name.to_ascii_lowercase().as_bytes())
            .map_err(|_| format!("field {index} has a bad name"))?;
        let value =
            HeaderValue::from_str(value).map_err(|_| format!("field {index} has a bad value"))?;
        map.append(name, value);
    }
    Ok(map)
}

async fn send_http2(addr: SocketAddr, attack: &Attack) -> Result<Answer, String> {
    let stream = TcpStream::connect(addr)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let (mut sender, connection) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(stream))
            .await
            .map_err(|e| format!("h2 handshake: {e}"))?;
    tokio::spawn(connection);
    let mut frames: VecDeque<Frame<Bytes>> = attack
        .pieces(16 * 1024)
        .into_iter()
        .map(|piece| Frame::data(Bytes::copy_from_slice(piece)))
        .collect();
    if !attack.trailers.is_empty() {
        frames.push_back(Frame::trailers(header_map(&attack.trailers)?));
    }
    let mut request = Request::builder()
        .method(attack.method.as_str())
        .uri(format!("http://{addr}{}", attack.path))
        .body(Frames(frames))
        .map_err(|_| "the request line does not build".to_owned())?;
    *request.headers_mut() = header_map(&attack.headers)?;
    let answer = match sender.send_request(request).await {
        Ok(answer) => answer,
        // A stream reset without an answer: nothing came back.
        Err(_) => return Ok(Answer { status: 0 }),
    };
    let status = answer.status().as_u16();
    let _ = answer.into_body().collect().await;
    Ok(Answer { status })
}

/// Sends `attack` to the gateway at `addr` and waits for the answer.
pub async fn send(addr: SocketAddr, attack: &Attack) -> Result<Answer, String> {
    let sending = async {
        match attack.transport {
            Transport::Http2 => send_http2(addr, attack).await,
            Transport::Http1 | Transport::Chunked => {
                let raw = send_http1(addr, http1_bytes(attack, addr)).await?;
                Ok(Answer {
                    status: final_status(&raw),
                })
            }
        }
    };
    tokio::time::timeout(ATTACK_TIMEOUT, sending)
        .await
        .map_err(|_| "no answer within 30 s".to_owned())?
}

/// A plain request to the fake LLM's own routes: (status, body).
pub async fn fake_call(
    addr: SocketAddr,
    method: &str,
    path: &str,
) -> Result<(u16, Vec<u8>), String> {
    let request = format!("{method} {path} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n");
    let raw = tokio::time::timeout(ATTACK_TIMEOUT, send_http1(addr, request.into_bytes()))
        .await
        .map_err(|_| "the fake LLM did not answer".to_owned())??;
    let status = final_status(&raw);
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("the fake LLM's answer has no head")?;
    let head = String::from_utf8_lossy(&raw[..split]).to_ascii_lowercase();
    let body = &raw[split + 4..];
    let body = if head.contains("transfer-encoding: chunked") {
        dechunk(body)?
    } else {
        body.to_vec()
    };
    Ok((status, body))
}

fn dechunk(mut rest: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    loop {
        let line_end = rest
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or("bad chunk")?;
        let size = std::str::from_utf8(&rest[..line_end])
            .ok()
            .and_then(|s| usize::from_str_radix(s.trim(), 16).ok())
            .ok_or("bad chunk size")?;
        rest = &rest[line_end + 2..];
        if size == 0 {
            return Ok(out);
        }
        if rest.len() < size + 2 {
            return Err("short chunk".to_owned());
        }
        out.extend_from_slice(&rest[..size]);
        rest = &rest[size + 2..];
    }
}
