//! The real control service (`latet serve`) on loopback, for scenarios: find
//! or build the `latet` binary, start it on a SQLite file in a fresh
//! directory, create keys and tokens through its own CLI, call its HTTP API,
//! stop it and start it again on the same port and database.

use crate::callout::{forward, CalloutAnswer, CalloutRequest};
use crate::wasm_build::workspace_root;
use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

/// Serializes builds of the binary inside one test process.
static BUILD_LOCK: Mutex<()> = Mutex::new(());

/// Sources whose changes make a built `latet` stale.
const SOURCES: [&str; 4] = [
    "control/src",
    "control/Cargo.toml",
    "core/src",
    "core/Cargo.toml",
];

fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => workspace_root().join("target"),
    }
}

fn newest_source(root: &Path) -> Option<SystemTime> {
    let mut newest = None;
    let mut stack: Vec<PathBuf> = SOURCES.iter().map(|s| root.join(s)).collect();
    while let Some(path) = stack.pop() {
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            if let Ok(entries) = std::fs::read_dir(&path) {
                stack.extend(entries.flatten().map(|entry| entry.path()));
            }
        } else if let Ok(modified) = meta.modified() {
            newest = newest.max(Some(modified));
        }
    }
    newest
}

fn is_fresh(binary: &Path, root: &Path) -> bool {
    let Ok(built) = std::fs::metadata(binary).and_then(|meta| meta.modified()) else {
        return false;
    };
    newest_source(root).is_none_or(|newest| newest <= built)
}

/// The `latet` binary: `$LATET_BIN` if set; else `debug/latet` in the target
/// directory when it is newer than its sources (`cargo test --workspace`
/// builds it); else built now with `cargo build -p latet` into
/// `<target>/host-tests-bin` (a separate directory: the running `cargo test`
/// may hold the usual one's lock).
pub fn latet_binary() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os("LATET_BIN") {
        return Ok(PathBuf::from(path));
    }
    let root = workspace_root();
    let usual = target_dir().join("debug").join("latet");
    if is_fresh(&usual, &root) {
        return Ok(usual);
    }
    let _guard = BUILD_LOCK
        .lock()
        .map_err(|_| "a latet build panicked".to_string())?;
    let own_dir = target_dir().join("host-tests-bin");
    let built = own_dir.join("debug").join("latet");
    if is_fresh(&built, &root) {
        return Ok(built);
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(&root)
        .args(["build", "-p", "latet", "--target-dir"])
        .arg(&own_dir)
        .status()
        .map_err(|e| format!("running cargo build -p latet: {e}"))?;
    if !status.success() {
        return Err(format!("cargo build -p latet failed ({status})"));
    }
    Ok(built)
}

/// A fresh directory under the system temp dir, removed on drop.
pub struct TempDir {
    path: PathBuf,
}

impl TempDir {
    /// Creates `<tmp>/latet-host-tests-<pid>-<n>-<ns>`.
    pub fn new() -> Result<TempDir, String> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path = std::env::temp_dir().join(format!(
            "latet-host-tests-{}-{}-{nanos}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(TempDir { path })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// A `latet serve` process on loopback with its database in a temp dir.
/// Killed when dropped.
pub struct ControlService {
    binary: PathBuf,
    dir: TempDir,
    addr: SocketAddr,
    child: Option<Child>,
}

/// An HTTP answer from the service.
#[derive(Clone, Debug, PartialEq)]
pub struct ServiceAnswer {
    /// HTTP status (0: the connection failed mid-way).
    pub status: u16,
    /// Body.
    pub body: Vec<u8>,
}

impl ServiceAnswer {
    /// The body as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

impl ControlService {
    /// Starts the service on a free loopback port with a new database.
    pub fn start() -> Result<ControlService, String> {
        let binary = latet_binary()?;
        let dir = TempDir::new()?;
        let mut service = ControlService {
            binary,
            dir,
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            child: None,
        };
        service.spawn()?;
        Ok(service)
    }

    fn spawn(&mut self) -> Result<(), String> {
        let mut command = Command::new(&self.binary);
        command
            .env_remove("LATET_MASTER_KEY")
            .arg("serve")
            .arg("--db")
            .arg(self.dir.path().join("latet.db"))
            .arg("--listen")
            .arg(self.addr.to_string())
            .arg("--admin-token-file")
            .arg(self.admin_token_file())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = command
            .spawn()
            .map_err(|e| format!("starting {}: {e}", self.binary.display()))?;
        let Some(stdout) = child.stdout.take() else {
            let _ = child.kill();
            return Err("latet serve: no stdout".into());
        };
        let mut line = String::new();
        let read = BufReader::new(stdout).read_line(&mut line);
        let addr = line
            .trim()
            .strip_prefix("latet listening on http://")
            .and_then(|addr| addr.parse::<SocketAddr>().ok());
        match (read, addr) {
            (Ok(_), Some(addr)) => {
                self.addr = addr;
                self.child = Some(child);
                Ok(())
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                Err(format!("latet serve did not start: first line {line:?}"))
            }
        }
    }

    /// Where it listens (kept across restarts).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://ADDR`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The admin token file the server created.
    pub fn admin_token_file(&self) -> PathBuf {
        self.dir.path().join("admin.token")
    }

    /// True while the process runs.
    pub fn is_running(&self) -> bool {
        self.child.is_some()
    }

    /// Stops the service (SIGKILL): calls to it now fail like a dead endpoint.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it again on the same port and database (a few tries while the
    /// port is released).
    pub fn restart(&mut self) -> Result<(), String> {
        self.stop();
        let mut last = String::new();
        for _ in 0..50 {
            if TcpListener::bind(self.addr).is_ok() {
                match self.spawn() {
                    Ok(()) => return Ok(()),
                    Err(e) => last = e,
                }
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Err(format!("restarting latet on {}: {last}", self.addr))
    }

    /// Runs `latet server --server URL --admin-token-file F <args>`; returns
    /// stdout, or an error with the exit status and stderr.
    pub fn cli(&self, args: &[&str]) -> Result<String, String> {
        let output = Command::new(&self.binary)
            .env_remove("LATET_MASTER_KEY")
            .arg("server")
            .arg("--server")
            .arg(self.url())
            .arg("--admin-token-file")
            .arg(self.admin_token_file())
            .args(args)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("running latet server {args:?}: {e}"))?;
        if !output.status.success() {
            return Err(format!(
                "latet server {args:?}: {} {}",
                output.status,
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }

    fn read_token(&self, file: &Path) -> Result<String, String> {
        std::fs::read_to_string(file)
            .map(|token| token.trim().to_string())
            .map_err(|e| format!("{}: {e}", file.display()))
    }

    /// Creates a key with the CLI (`keys create NAME --out FILE`); returns
    /// its first token (gateway, analyze, mask, restore).
    pub fn create_key(&self, name: &str) -> Result<String, String> {
        let file = self.dir.path().join(format!("{name}.token"));
        let out = file.to_string_lossy().into_owned();
        self.cli(&["keys", "create", name, "--out", &out])?;
        self.read_token(&file)
    }

    /// Adds a token with the CLI (`keys add-token KEY NAME --forget … --out
    /// FILE`); `flags` are permission flags such as `--forget`.
    pub fn add_token(&self, key: &str, token_name: &str, flags: &[&str]) -> Result<String, String> {
        let file = self.dir.path().join(format!("{key}.{token_name}.token"));
        let out = file.to_string_lossy().into_owned();
        let mut args = vec!["keys", "add-token", key, token_name];
        args.extend_from_slice(flags);
        args.extend_from_slice(&["--out", &out]);
        self.cli(&args)?;
        self.read_token(&file)
    }

    /// One HTTP call (JSON body when `body` is given).
    pub fn call(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<&[u8]>,
    ) -> ServiceAnswer {
        let mut headers = vec![
            (":method".to_string(), method.to_string()),
            (":path".to_string(), path.to_string()),
            (":authority".to_string(), self.addr.to_string()),
        ];
        if let Some(token) = token {
            headers.push(("authorization".into(), format!("Bearer {token}")));
        }
        if body.is_some() {
            headers.push(("content-type".into(), "application/json".into()));
        }
        let request = CalloutRequest {
            token: 0,
            upstream: "latet".into(),
            headers,
            body: body.map(<[u8]>::to_vec).unwrap_or_default(),
            trailers: Vec::new(),
            timeout_ms: 30_000,
        };
        match forward(self.addr, &request) {
            CalloutAnswer::Response(response) => ServiceAnswer {
                status: response.status,
                body: response.body,
            },
            _ => ServiceAnswer {
                status: 0,
                body: Vec::new(),
            },
        }
    }

    /// `POST /_latet/apps/v1/forget` with a token holding `forget`;
    /// `values_json` is the JSON array of values.
    pub fn forget(&self, token: &str, values_json: &str) -> ServiceAnswer {
        let body = format!("{{\"values\": {values_json}}}");
        self.call(
            "POST",
            "/_latet/apps/v1/forget",
            Some(token),
            Some(body.as_bytes()),
        )
    }
}

impl Drop for ControlService {
    fn drop(&mut self) {
        self.stop();
    }
}
