//! A real `latet serve` on loopback with a real store, and small HTTP
//! helpers. The store is an SQLite file in the test's temp dir, or, with
//! `LATET_TEST_STORE=postgres`, a database of its own in the PostgreSQL
//! cluster at `LATET_TEST_PG_URL` (scripts/pg-test-cluster.sh starts one;
//! scripts/test.sh runs the suite both ways).
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
    /// Its `--db`: the SQLite file or the PostgreSQL URL.
    pub db: String,
}

/// The store the servers of this test run use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// `LATET_TEST_STORE`: `postgres`, or SQLite by default.
pub fn backend() -> Backend {
    match std::env::var("LATET_TEST_STORE").as_deref() {
        Ok("postgres") => Backend::Postgres,
        Ok("sqlite" | "") | Err(_) => Backend::Sqlite,
        Ok(other) => panic!("LATET_TEST_STORE: `{other}` is neither sqlite nor postgres"),
    }
}

/// The test cluster's URL (`LATET_TEST_PG_URL`, a role that may create
/// databases). None when absent — unless PostgreSQL runs are required
/// (`LATET_TEST_PG_REQUIRED=1`, set by scripts/test.sh, or
/// `LATET_TEST_STORE=postgres`): then its absence fails the test.
pub fn pg_cluster_url() -> Option<String> {
    match std::env::var("LATET_TEST_PG_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            let required = std::env::var("LATET_TEST_PG_REQUIRED").is_ok_and(|v| v == "1")
                || backend() == Backend::Postgres;
            assert!(
                !required,
                "PostgreSQL tests are required but LATET_TEST_PG_URL is not set \
                 (start a cluster: scripts/pg-test-cluster.sh start DIR)"
            );
            eprintln!("LATET_TEST_PG_URL not set: PostgreSQL-only test skipped");
            None
        }
    }
}

/// `url` with its database name replaced by `name`.
pub fn with_dbname(url: &str, name: &str) -> String {
    let after_scheme = url.find("://").map(|i| i + 3).unwrap();
    let path_start = url[after_scheme..]
        .find(['/', '?'])
        .map(|i| after_scheme + i)
        .unwrap_or(url.len());
    let query_start = url[path_start..]
        .find('?')
        .map(|i| path_start + i)
        .unwrap_or(url.len());
    format!("{}/{name}{}", &url[..path_start], &url[query_start..])
}

/// A fresh database in the test cluster (dropped first if it exists);
/// returns its URL.
pub fn fresh_pg_database(cluster: &str, name: &str) -> String {
    let mut client = postgres::Client::connect(cluster, postgres::NoTls).unwrap();
    // Two statements: neither may run inside a transaction block.
    client
        .batch_execute(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"))
        .unwrap();
    client
        .batch_execute(&format!("CREATE DATABASE \"{name}\""))
        .unwrap();
    with_dbname(cluster, name)
}

/// The database of a test dir: one per dir, made at its first server, kept
/// across restarts of the server in that dir.
fn pg_database_of(dir: &Path) -> String {
    use std::hash::{Hash, Hasher};
    let cluster = pg_cluster_url().unwrap();
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    dir.hash(&mut hasher);
    let name = format!("latet_test_{:016x}", hasher.finish());
    let marker = dir.join("pg-database");
    if marker.exists() {
        return std::fs::read_to_string(marker).unwrap();
    }
    let url = fresh_pg_database(&cluster, &name);
    std::fs::write(&marker, &url).unwrap();
    url
}

/// A master key file in `dir` (made once): PostgreSQL needs one given.
pub fn master_key_file(dir: &Path) -> PathBuf {
    let path = dir.join("master.key");
    if !path.exists() {
        let key: [u8; 32] = latet::secrets::random_bytes().unwrap();
        std::fs::write(&path, latet_core::keyed_hash::to_hex(&key)).unwrap();
    }
    path
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
        let db = match backend() {
            Backend::Sqlite => dir.join("latet.db").display().to_string(),
            Backend::Postgres => pg_database_of(dir),
        };
        Self::start_on(dir, &db, extra)
    }

    /// A server on the store `db` (a replica, when another server uses it).
    pub fn start_on(dir: &Path, db: &str, extra: &[&str]) -> Server {
        let mut command = Command::new(BIN);
        clean_env(&mut command).arg("serve").arg("--db").arg(db);
        if db.starts_with("postgres") && !extra.contains(&"--master-key-file") {
            command.arg("--master-key-file").arg(master_key_file(dir));
        }
        command
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
            db: db.to_string(),
        }
    }

    /// Runs SQL on the server's store, behind its back (faults, checks).
    pub fn exec_sql(&self, sql: &str) {
        if self.db.starts_with("postgres") {
            let mut client = postgres::Client::connect(&self.db, postgres::NoTls).unwrap();
            client.batch_execute(sql).unwrap();
        } else {
            let conn = rusqlite::Connection::open(&self.db).unwrap();
            conn.execute_batch(sql).unwrap();
        }
    }

    /// SQL that makes every insert into `table` fail, and SQL that undoes it.
    pub fn refuse_inserts(&self, table: &str) -> (String, String) {
        if self.db.starts_with("postgres") {
            (
                format!(
                    "CREATE FUNCTION refuse_{table}() RETURNS trigger LANGUAGE plpgsql AS \
                     $$ BEGIN RAISE EXCEPTION 'injected fault'; END $$; \
                     CREATE TRIGGER refuse_{table} BEFORE INSERT ON {table} \
                     FOR EACH ROW EXECUTE FUNCTION refuse_{table}();"
                ),
                format!("DROP TRIGGER refuse_{table} ON {table}; DROP FUNCTION refuse_{table}();"),
            )
        } else {
            (
                format!(
                    "CREATE TRIGGER refuse_{table} BEFORE INSERT ON {table} \
                     BEGIN SELECT RAISE(ABORT, 'injected fault'); END;"
                ),
                format!("DROP TRIGGER refuse_{table};"),
            )
        }
    }

    /// The SQLite file, when the store is one.
    pub fn sqlite_file(&self) -> Option<PathBuf> {
        (!self.db.starts_with("postgres")).then(|| PathBuf::from(&self.db))
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

/// A long-poll of the feed after `head` (10 s at most) on a thread of its
/// own: when it answered, and what.
pub fn poll_events_in_background(
    url: &str,
    token: &str,
    head: u64,
) -> std::thread::JoinHandle<(std::time::Instant, Value)> {
    let (url, token) = (url.to_string(), token.to_string());
    std::thread::spawn(move || {
        let answer: Value = agent()
            .get(&format!(
                "{url}/_latet/gateway/v1/events?after={head}&wait_ms=10000"
            ))
            .set("Authorization", &format!("Bearer {token}"))
            .call()
            .unwrap()
            .into_json()
            .unwrap();
        (std::time::Instant::now(), answer)
    })
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
