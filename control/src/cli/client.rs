//! The CLI's HTTP client for the admin API.

use crate::error::{ControlError, Result};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::path::Path;
use std::time::Duration;

/// How long one call may take (a forget batch may index a large vault first).
pub const CALL_TIMEOUT: Duration = Duration::from_secs(300);

/// An admin API client.
pub struct AdminClient {
    base: String,
    token: String,
    agent: ureq::Agent,
}

impl AdminClient {
    /// A client for `server` (`https://host:port` or `http://host:port`)
    /// with the admin token. With `ca_cert`, HTTPS trusts only the CAs of
    /// that PEM file (a private CA); without, the built-in Mozilla roots.
    /// A CA with a plain-HTTP URL is refused: the token would go in clear.
    pub fn new(server: &str, token: String, ca_cert: Option<&Path>) -> Result<Self> {
        let base = server.trim_end_matches('/').to_string();
        let scheme = base.split_once("://").map(|(scheme, _)| scheme);
        let mut builder = ureq::AgentBuilder::new()
            .timeout_connect(Duration::from_secs(10))
            .timeout(CALL_TIMEOUT);
        match (scheme, ca_cert) {
            (Some("https"), Some(ca)) => {
                builder = builder.tls_config(crate::tls::client_config("--ca-cert", ca)?);
            }
            (Some("https"), None) => {}
            (Some("http"), None) => {}
            (Some("http"), Some(_)) => {
                return Err(ControlError::Refused(format!(
                    "--ca-cert (or LATET_CA_CERT) is set but --server {base} is plain HTTP: \
                     use https:// (or unset the CA)"
                )))
            }
            _ => {
                return Err(ControlError::Refused(format!(
                    "--server {base}: expected https://host:port or http://host:port"
                )))
            }
        }
        Ok(Self {
            base,
            token,
            agent: builder.build(),
        })
    }

    fn url(&self, path: &str) -> String {
        format!("{}/_latet/admin/v1{path}", self.base)
    }

    fn answer<T: DeserializeOwned>(
        result: std::result::Result<ureq::Response, ureq::Error>,
    ) -> Result<T> {
        match result {
            Ok(response) => response
                .into_json()
                .map_err(|err| ControlError::Io(format!("reading the answer: {err}"))),
            Err(ureq::Error::Status(status, response)) => {
                let message = response
                    .into_json::<serde_json::Value>()
                    .ok()
                    .and_then(|v| v.get("message").and_then(|m| m.as_str()).map(String::from))
                    .unwrap_or_default();
                Err(match status {
                    400 => ControlError::BadRequest(message),
                    401 => ControlError::Io("the server refused the admin token (401)".into()),
                    404 => {
                        ControlError::NotFound(message.trim_end_matches(" not found").to_string())
                    }
                    409 => ControlError::Conflict(message),
                    _ => ControlError::Io(format!("the server answered {status}: {message}")),
                })
            }
            Err(err) => Err(ControlError::Io(format!(
                "cannot reach the server: {}",
                transport_reason(&err)
            ))),
        }
    }

    /// GET an admin path.
    pub fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T> {
        Self::answer(
            self.agent
                .get(&self.url(path))
                .set("Authorization", &format!("Bearer {}", self.token))
                .call(),
        )
    }

    /// DELETE an admin path.
    pub fn delete<T: DeserializeOwned>(&self, path: &str) -> Result<T> {
        Self::answer(
            self.agent
                .delete(&self.url(path))
                .set("Authorization", &format!("Bearer {}", self.token))
                .call(),
        )
    }

    /// POST JSON to an admin path.
    pub fn post<B: Serialize, T: DeserializeOwned>(&self, path: &str, body: &B) -> Result<T> {
        Self::answer(
            self.agent
                .post(&self.url(path))
                .set("Authorization", &format!("Bearer {}", self.token))
                .send_json(body),
        )
    }
}

/// Why a call did not get an answer: the kind, and for TLS what rustls
/// said with a hint at the fix. URLs and reasons name no value or token.
fn transport_reason(err: &ureq::Error) -> String {
    // ureq wraps rustls's error in an io::Error, whose `source()` skips
    // the wrapped error itself: look inside with `get_ref`.
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(err);
    while let Some(current) = source {
        if let Some(tls) = current.downcast_ref::<rustls::Error>() {
            return match tls {
                rustls::Error::InvalidCertificate(reason) => format!(
                    "TLS: the server's certificate was refused ({reason}); \
                     for a private CA pass --ca-cert FILE or set LATET_CA_CERT"
                ),
                rustls::Error::InvalidMessage(_) => {
                    "TLS: the server did not answer with TLS (is it plain HTTP? use http://)"
                        .to_string()
                }
                other => format!("TLS: {other}"),
            };
        }
        source = match current.downcast_ref::<std::io::Error>() {
            Some(io) => match io.get_ref() {
                Some(inner) => Some(inner as &(dyn std::error::Error + 'static)),
                None => None,
            },
            None => current.source(),
        };
    }
    match err {
        ureq::Error::Transport(transport) => {
            let mut reason = transport.kind().to_string();
            if let Some(message) = transport.message() {
                reason.push_str(&format!(": {message}"));
            }
            // The OS's reason (`Connection refused`), when there is one.
            if let Some(source) = std::error::Error::source(transport) {
                reason.push_str(&format!(" ({source})"));
            }
            reason
        }
        other => other.kind().to_string(),
    }
}

/// A path segment, percent-encoded (key names may hold spaces).
pub fn segment(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
