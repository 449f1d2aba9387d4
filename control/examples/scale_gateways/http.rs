//! One keep-alive HTTP/1.1 connection to a control-service replica, as a
//! gateway's Envoy holds to its control cluster: hyper's low-level client
//! over a tokio TCP stream, reconnected by the caller after an error.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::{self, SendRequest};
use hyper::{header, Method, Request};
use hyper_util::rt::TokioIo;
use std::time::Duration;
use tokio::net::TcpStream;

/// A failed call: what went wrong, never a token or a value.
#[derive(Debug)]
pub struct CallError(pub String);

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A replica's address, from `http://HOST:PORT`.
#[derive(Clone, Debug)]
pub struct Replica {
    /// `HOST:PORT`, for the TCP connect and the Host header.
    pub authority: String,
}

impl Replica {
    /// Parses `http://HOST:PORT` (plain HTTP on loopback: a simulation).
    pub fn parse(url: &str) -> Result<Self, CallError> {
        let authority = url
            .strip_prefix("http://")
            .map(|rest| rest.trim_end_matches('/'))
            .filter(|rest| !rest.is_empty() && !rest.contains('/'))
            .ok_or_else(|| CallError(format!("replica URL {url:?}: expected http://HOST:PORT")))?;
        Ok(Self {
            authority: authority.to_string(),
        })
    }
}

/// An open connection to one replica.
pub struct Connection {
    replica: Replica,
    sender: SendRequest<Full<Bytes>>,
}

/// What a call answered.
pub struct Answer {
    pub status: u16,
    pub body: Bytes,
}

impl Connection {
    /// Connects (TCP, then the HTTP/1.1 handshake) within `timeout`.
    pub async fn open(replica: &Replica, timeout: Duration) -> Result<Self, CallError> {
        let stream = tokio::time::timeout(timeout, TcpStream::connect(&replica.authority))
            .await
            .map_err(|_| CallError("connect timed out".into()))?
            .map_err(|err| CallError(format!("connect: {err}")))?;
        // Long-polls answer small bodies; no Nagle delay on them.
        let _ = stream.set_nodelay(true);
        let (sender, connection) = http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|err| CallError(format!("handshake: {err}")))?;
        tokio::spawn(async move {
            // Ends when the peer closes or the sender is dropped; the next
            // call on the sender then fails and the caller reconnects.
            let _ = connection.await;
        });
        Ok(Self {
            replica: replica.clone(),
            sender,
        })
    }

    /// Sends one request and reads the whole answer within `timeout`.
    /// `sent` runs once the connection is ready to take the request.
    pub async fn call(
        &mut self,
        method: Method,
        path: &str,
        headers: &[(header::HeaderName, &str)],
        body: Bytes,
        timeout: Duration,
        sent: impl FnOnce(),
    ) -> Result<Answer, CallError> {
        let mut builder = Request::builder()
            .method(method)
            .uri(path)
            .header(header::HOST, &self.replica.authority);
        for (name, value) in headers {
            builder = builder.header(name, *value);
        }
        let request = builder
            .body(Full::new(body))
            .map_err(|err| CallError(format!("request: {err}")))?;
        let exchange = async {
            self.sender
                .ready()
                .await
                .map_err(|err| CallError(format!("connection: {err}")))?;
            let answer = self.sender.send_request(request);
            sent();
            let response = answer
                .await
                .map_err(|err| CallError(format!("send: {err}")))?;
            let status = response.status().as_u16();
            let body = response
                .into_body()
                .collect()
                .await
                .map_err(|err| CallError(format!("body: {err}")))?
                .to_bytes();
            Ok(Answer { status, body })
        };
        tokio::time::timeout(timeout, exchange)
            .await
            .map_err(|_| CallError("timed out".into()))?
    }
}

/// The limit of one seeding, admin or forget call.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(120);

/// POSTs JSON with a bearer token; the answer's body as JSON, 200 only.
pub async fn post_json(
    connection: &mut Connection,
    path: &str,
    token: &str,
    body: &impl serde::Serialize,
) -> Result<serde_json::Value, CallError> {
    let bytes = serde_json::to_vec(body).map_err(|err| CallError(err.to_string()))?;
    let bearer = format!("Bearer {token}");
    let answer = connection
        .call(
            Method::POST,
            path,
            &[
                (header::AUTHORIZATION, &bearer),
                (header::CONTENT_TYPE, "application/json"),
            ],
            Bytes::from(bytes),
            CALL_TIMEOUT,
            || {},
        )
        .await?;
    if answer.status != 200 {
        // The error body names codes and counts, never a value.
        return Err(CallError(format!(
            "{path} answered {}: {}",
            answer.status,
            String::from_utf8_lossy(&answer.body)
        )));
    }
    serde_json::from_slice(&answer.body).map_err(|err| CallError(format!("{path}: {err}")))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn replica_urls_table() {
        for (url, want) in [
            ("http://127.0.0.1:8787", Some("127.0.0.1:8787")),
            ("http://127.0.0.1:8787/", Some("127.0.0.1:8787")),
            ("https://127.0.0.1:8787", None),
            ("http://127.0.0.1:8787/x", None),
            ("http://", None),
        ] {
            let parsed = Replica::parse(url).ok().map(|r| r.authority);
            assert_eq!(parsed.as_deref(), want, "{url}");
        }
    }
}
