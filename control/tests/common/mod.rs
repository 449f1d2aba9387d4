//! A real `latet serve` on loopback with a real SQLite file in a temp dir,
//! and small HTTP helpers.
#![allow(dead_code)]

use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub const BIN: &str = env!("CARGO_BIN_EXE_latet");

/// A running server; killed when dropped.
pub struct Server {
    pub child: Child,
    pub url: String,
    pub dir: PathBuf,
}

/// Removes every coding-agent marker from a command's environment (the
/// tests themselves may run inside an agent).
pub fn clean_env(command: &mut Command) -> &mut Command {
    for (name, _) in std::env::vars() {
        if latet::agent_env::is_agent_marker(&name) {
            command.env_remove(name);
        }
    }
    // The CLI's defaults from the environment: each test names its own.
    for name in ["LATET_SERVER", "LATET_ADMIN_TOKEN_FILE", "LATET_CA_CERT"] {
        command.env_remove(name);
    }
    command.env_remove("LATET_MASTER_KEY")
}

impl Server {
    pub fn start(dir: &Path) -> Server {
        Self::start_with(dir, &[])
    }

    pub fn start_with(dir: &Path, extra: &[&str]) -> Server {
        let mut command = Command::new(BIN);
        clean_env(&mut command)
            .arg("serve")
            .arg("--db")
            .arg(dir.join("latet.db"))
            .arg("--listen")
            .arg("127.0.0.1:0")
            .arg("--admin-token-file")
            .arg(dir.join("admin.token"))
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = command.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).unwrap();
        let url = line
            .trim()
            .strip_prefix("latet listening on ")
            .unwrap_or_else(|| panic!("unexpected first line: {line:?}"))
            .to_string();
        Server {
            child,
            url,
            dir: dir.to_path_buf(),
        }
    }

    pub fn admin_token(&self) -> String {
        std::fs::read_to_string(self.dir.join("admin.token"))
            .unwrap()
            .trim()
            .to_string()
    }

    /// Kills the process hard (SIGKILL) and waits for it.
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    pub fn get(&self, path: &str, token: Option<&str>) -> (u16, Value) {
        let mut request = agent().get(&format!("{}{path}", self.url));
        if let Some(token) = token {
            request = request.set("Authorization", &format!("Bearer {token}"));
        }
        answer(request.call())
    }

    pub fn post(&self, path: &str, token: Option<&str>, body: &Value) -> (u16, Value) {
        let mut request = agent().post(&format!("{}{path}", self.url));
        if let Some(token) = token {
            request = request.set("Authorization", &format!("Bearer {token}"));
        }
        answer(request.send_json(body.clone()))
    }

    pub fn post_raw(&self, path: &str, token: Option<&str>, body: &str) -> (u16, Value) {
        let mut request = agent()
            .post(&format!("{}{path}", self.url))
            .set("Content-Type", "application/json");
        if let Some(token) = token {
            request = request.set("Authorization", &format!("Bearer {token}"));
        }
        answer(request.send_string(body))
    }

    /// Creates a key through the admin API; returns its first token.
    pub fn create_key(&self, name: &str) -> String {
        let (status, body) = self.post(
            "/_latet/admin/v1/keys",
            Some(&self.admin_token()),
            &json!({ "name": name }),
        );
        assert_eq!(status, 200, "{body}");
        body["token"].as_str().unwrap().to_string()
    }

    /// Adds a token with `permissions` through the admin API.
    pub fn add_token(&self, key: &str, name: &str, permissions: &[&str]) -> String {
        let (status, body) = self.post(
            &format!("/_latet/admin/v1/keys/{key}/tokens"),
            Some(&self.admin_token()),
            &json!({ "name": name, "permissions": permissions }),
        );
        assert_eq!(status, 200, "{body}");
        body["token"].as_str().unwrap().to_string()
    }

    /// Entries for `(kind, value)` pairs; returns the answer.
    pub fn entries(&self, token: &str, values: &[(&str, &str)]) -> Value {
        let values: Vec<Value> = values
            .iter()
            .map(|(kind, value)| json!({ "kind": kind, "value": value }))
            .collect();
        let (status, body) = self.post(
            "/_latet/gateway/v1/entries",
            Some(token),
            &json!({ "version": 1, "values": values }),
        );
        assert_eq!(status, 200, "{body}");
        body
    }

    pub fn snapshot(&self, token: &str) -> Value {
        let (status, body) = self.get("/_latet/gateway/v1/snapshot", Some(token));
        assert_eq!(status, 200, "{body}");
        body
    }

    pub fn admin_log(&self, action: &str) -> Vec<Value> {
        let (status, body) = self.get(
            &format!("/_latet/admin/v1/log?action={action}"),
            Some(&self.admin_token()),
        );
        assert_eq!(status, 200, "{body}");
        body["log"].as_array().unwrap().clone()
    }

    /// A `latet server …` command against this server, agent markers removed.
    pub fn cli(&self) -> Command {
        let mut command = Command::new(BIN);
        clean_env(&mut command)
            .arg("server")
            .arg("--server")
            .arg(&self.url)
            .arg("--admin-token-file")
            .arg(self.dir.join("admin.token"));
        command
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn agent() -> ureq::Agent {
    ureq::AgentBuilder::new()
        .timeout(Duration::from_secs(120))
        .build()
}

fn answer(result: Result<ureq::Response, ureq::Error>) -> (u16, Value) {
    match result {
        Ok(response) => {
            let status = response.status();
            let text = response.into_string().unwrap();
            (
                status,
                serde_json::from_str(&text).unwrap_or(Value::String(text)),
            )
        }
        Err(ureq::Error::Status(status, response)) => {
            let text = response.into_string().unwrap();
            (
                status,
                serde_json::from_str(&text).unwrap_or(Value::String(text)),
            )
        }
        Err(err) => panic!("transport error: {err}"),
    }
}

/// The surrogate of `value` in an entries answer or snapshot.
pub fn surrogate_of(doc: &Value, value: &str) -> Option<String> {
    doc["entries"]
        .as_array()?
        .iter()
        .find(|e| e["value"] == value)
        .map(|e| e["surrogate"].as_str().unwrap().to_string())
}

/// The snapshot's retired salt as bytes.
pub fn salt_of(snapshot: &Value) -> Vec<u8> {
    let hex = snapshot["retired_salt"].as_str().unwrap();
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

/// Whether the snapshot lists `surrogate` as retired (hash and lead bucket).
pub fn is_retired(snapshot: &Value, surrogate: &str) -> bool {
    let salt = salt_of(snapshot);
    let hash =
        latet_core::keyed_hash::to_hex(&latet_core::keyed_hash::retired_hash(&salt, surrogate));
    let lead = latet_core::text::lead_bucket(surrogate);
    snapshot["retired"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["hash"] == hash.as_str() && r["lead"] == lead)
}
