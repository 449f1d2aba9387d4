//! Finds a workspace filter's release `.wasm` for the tests, building it
//! (`cargo build -p <package> --release --target wasm32-wasip1`) when it is
//! missing or older than its sources. The README's test command builds it
//! first, so this is a safety net, not the usual path.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::SystemTime;

/// The wasm target filters are built for.
pub const WASM_TARGET: &str = "wasm32-wasip1";

/// Serializes builds inside one test process (cargo locks across processes).
static BUILD_LOCK: Mutex<()> = Mutex::new(());

/// The workspace root (this crate's parent directory).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => workspace_root().join("target"),
    }
}

/// Newest modification time of the files under `dirs` (recursively).
fn newest_source(dirs: &[PathBuf]) -> Option<SystemTime> {
    let mut newest = None;
    let mut stack: Vec<PathBuf> = dirs.to_vec();
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

fn is_fresh(wasm: &Path, sources: &[PathBuf]) -> bool {
    let Ok(built) = std::fs::metadata(wasm).and_then(|meta| meta.modified()) else {
        return false;
    };
    newest_source(sources).is_none_or(|newest| newest <= built)
}

/// The release `.wasm` of a workspace package: `package` is its cargo name,
/// `lib_name` its library file stem (`latet_floor_filter`), `sources` the
/// directories (relative to the workspace root) whose changes make it
/// stale. Builds it in a separate target directory when the usual one has
/// no fresh copy (so a running `cargo test` never waits on its own lock).
pub fn release_wasm(package: &str, lib_name: &str, sources: &[&str]) -> Result<PathBuf, String> {
    let root = workspace_root();
    let sources: Vec<PathBuf> = sources.iter().map(|dir| root.join(dir)).collect();
    let file = format!("{lib_name}.wasm");
    let usual = target_dir().join(WASM_TARGET).join("release").join(&file);
    if is_fresh(&usual, &sources) {
        return Ok(usual);
    }
    let _guard = BUILD_LOCK
        .lock()
        .map_err(|_| "a wasm build panicked".to_string())?;
    let own_dir = target_dir().join("host-tests-wasm");
    let built = own_dir.join(WASM_TARGET).join("release").join(&file);
    if is_fresh(&built, &sources) {
        return Ok(built);
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(&root)
        .args([
            "build",
            "-p",
            package,
            "--release",
            "--target",
            WASM_TARGET,
            "--target-dir",
        ])
        .arg(&own_dir)
        .status()
        .map_err(|e| format!("running cargo build for {package}: {e}"))?;
    if !status.success() {
        return Err(format!(
            "cargo build -p {package} --release --target {WASM_TARGET} failed ({status})"
        ));
    }
    Ok(built)
}

/// A release `.wasm` built with extra cargo arguments (`--no-default-features`,
/// `--features …`) into `<target>/<dir_name>`, rebuilt when older than
/// `sources`. For measurements that compare builds.
pub fn release_wasm_variant(
    package: &str,
    lib_name: &str,
    sources: &[&str],
    cargo_args: &[&str],
    dir_name: &str,
) -> Result<PathBuf, String> {
    let root = workspace_root();
    let sources: Vec<PathBuf> = sources.iter().map(|dir| root.join(dir)).collect();
    let _guard = BUILD_LOCK
        .lock()
        .map_err(|_| "a wasm build panicked".to_string())?;
    let own_dir = target_dir().join(dir_name);
    let built = own_dir
        .join(WASM_TARGET)
        .join("release")
        .join(format!("{lib_name}.wasm"));
    if is_fresh(&built, &sources) {
        return Ok(built);
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(&root)
        .args(["build", "-p", package, "--release", "--target", WASM_TARGET])
        .args(cargo_args)
        .arg("--target-dir")
        .arg(&own_dir)
        .status()
        .map_err(|e| format!("running cargo build for {package}: {e}"))?;
    if !status.success() {
        return Err(format!(
            "cargo build -p {package} {cargo_args:?} failed ({status})"
        ));
    }
    Ok(built)
}

/// The floor filter's release `.wasm`.
pub fn floor_filter_wasm() -> Result<PathBuf, String> {
    release_wasm(
        "latet-floor-filter",
        "latet_floor_filter",
        &["envoy/floor-filter"],
    )
}
