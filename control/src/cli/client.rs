//! The CLI's HTTP client for the admin API.

use crate::error::{ControlError, Result};
use serde::de::DeserializeOwned;
use serde::Serialize;
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
    /// A client for `server` (`http://host:port`) with the admin token.
    pub fn new(server: &str, token: String) -> Self {
        Self {
            base: server.trim_end_matches('/').to_string(),
            token,
            agent: ureq::AgentBuilder::new()
                .timeout_connect(Duration::from_secs(10))
                .timeout(CALL_TIMEOUT)
                .build(),
        }
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
                err.kind()
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
