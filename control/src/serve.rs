//! `latet serve`: opens the store, the master key and the admin token, then
//! serves the HTTP API (HTTPS with `--tls-cert/--tls-key`) until SIGTERM or
//! Ctrl-C.

use crate::error::{ControlError, Result};
use crate::files::{read_token, write_private};
use crate::http::{router, AppState};
use crate::metrics::Metrics;
use crate::secrets::{MasterKey, MasterKeySource};
use crate::store::database::{Database, PostgresUrl};
use crate::store::postgresql::shared::AdminToken;
use crate::store::postgresql::{feed_listener, PostgresStore};
use crate::store::sqlite::SqliteStore;
use crate::store::Store;
use crate::tls::TlsListener;
use crate::tokens::{new_token, token_hash};
use crate::vault::Vaults;
use latet_core::detect::{DetectorConfig, Detectors};
use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Options of `latet serve`.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The SQLite file (created when missing) or the PostgreSQL database.
    pub db: Database,
    /// Address to listen on (`127.0.0.1:0` picks a free port).
    pub listen: SocketAddr,
    /// The admin token; created (mode 0600) when missing.
    pub admin_token_file: PathBuf,
    /// The master key file; default `<db>.master-key`, generated when
    /// missing (SQLite only: PostgreSQL needs it given).
    pub master_key_file: Option<PathBuf>,
    /// Events kept per key.
    pub feed_keep: u64,
    /// The detectors of the apps mask API.
    pub detectors: Detectors,
    /// HTTPS instead of plain HTTP: the certificate chain and key files.
    pub tls: Option<TlsFiles>,
}

/// `--tls-cert` and `--tls-key`: PEM files, the chain leaf first.
#[derive(Debug, Clone)]
pub struct TlsFiles {
    /// The certificate chain (PEM), the server's certificate first.
    pub cert: PathBuf,
    /// Its private key (PEM: PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
}

/// The detectors of `--detectors FILE` (the filter configuration's
/// `detectors` object, as JSON), or every built-in one. Errors name the
/// file and the field, never a rule or a word.
pub fn detectors_from(file: Option<&Path>) -> Result<Detectors> {
    let config = match file {
        None => DetectorConfig::default(),
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|err| {
                ControlError::Io(format!("--detectors {}: {err}", path.display()))
            })?;
            serde_json::from_str(&text).map_err(|err| {
                ControlError::Config(format!(
                    "--detectors {}: {}",
                    path.display(),
                    crate::http::body::describe(&err)
                ))
            })?
        }
    };
    Detectors::new(&config).map_err(|err| {
        let field = match &err {
            latet_core::CoreError::BadRule { index, reason } => {
                format!("rules[{index}]: {reason}")
            }
            latet_core::CoreError::BadNeverMask { index, reason } => {
                format!("neverMask[{index}]: {reason}")
            }
            other => other.to_string(),
        };
        let name = file.map(|p| p.display().to_string()).unwrap_or_default();
        ControlError::Config(format!("--detectors {name}: {field}"))
    })
}

/// Where the generated master key goes when none is given.
pub fn default_master_key_file(db: &Path) -> PathBuf {
    let mut name = db.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".master-key");
    db.with_file_name(name)
}

fn admin_token_hash(path: &Path) -> Result<[u8; 32]> {
    if !path.exists() {
        let hash = write_new_admin_token(path)?;
        log_admin_token_written(path);
        return Ok(hash);
    }
    Ok(token_hash(&read_token(path)?))
}

/// Makes an admin token into `path` (mode 0600); returns its hash.
fn write_new_admin_token(path: &Path) -> Result<[u8; 32]> {
    let token = new_token()?;
    write_private(path, format!("{token}\n").as_bytes())?;
    Ok(token_hash(&token))
}

fn log_admin_token_written(path: &Path) {
    crate::log::info(&format!(
        "admin token written to {} (mode 0600)",
        path.display()
    ));
}

/// The store, master key and admin token hash `latet serve` runs with.
struct Opened {
    store: Arc<dyn Store>,
    master: MasterKey,
    admin_hash: [u8; 32],
}

/// The embedded SQLite file: the master key given or generated beside it,
/// the admin token from its file (created when missing).
fn open_sqlite(path: &Path, options: &ServeOptions) -> Result<Opened> {
    let store = SqliteStore::open(path, options.feed_keep)?;
    let (master, source) = MasterKey::load(
        options.master_key_file.as_deref(),
        &default_master_key_file(path),
    )?;
    log_master_key_source(&source);
    Ok(Opened {
        store: Arc::new(store),
        master,
        admin_hash: admin_token_hash(&options.admin_token_file)?,
    })
}

fn log_master_key_source(source: &MasterKeySource) {
    match source {
        MasterKeySource::Generated(path) => {
            crate::log::warn(&format!(
                "WARNING: no master key was given: generated one in {} (mode 0600). \
                 Every vault is sealed with it: back it up apart from the database, \
                 or pass --master-key-file / LATET_MASTER_KEY. Losing it loses every vault.",
                path.display()
            ));
        }
        MasterKeySource::File(path) => {
            crate::log::info(&format!("master key from {}", path.display()))
        }
        MasterKeySource::Env => crate::log::info("master key from LATET_MASTER_KEY"),
    }
}

/// A PostgreSQL database shared by replicas: the master key must be given
/// (the same to each; the database keeps a check value of it), the admin
/// token's hash is the database's (the first replica makes the token).
/// Blocking: runs outside the async runtime.
fn open_postgres(url: &PostgresUrl, options: &ServeOptions) -> Result<Opened> {
    let (master, source) = MasterKey::load_given(options.master_key_file.as_deref())?;
    log_master_key_source(&source);
    let store = PostgresStore::open(url, options.feed_keep)?;
    store.check_master_key(&master.check_value())?;
    let path = &options.admin_token_file;
    let from_file = if path.exists() {
        Some(token_hash(&read_token(path)?))
    } else {
        None
    };
    let admin =
        store.shared_admin_token(from_file, &mut || write_new_admin_token(path), &mut || {
            let _ = std::fs::remove_file(path);
        })?;
    if let AdminToken::Generated(_) = admin {
        log_admin_token_written(path);
    }
    if let AdminToken::FromDatabase(_) = admin {
        crate::log::info(&format!(
            "admin token: the one another replica made (this one has no copy at {}; \
             the CLI needs that replica's file)",
            path.display()
        ));
    }
    Ok(Opened {
        store: Arc::new(store),
        master,
        admin_hash: admin.hash(),
    })
}

/// Runs the server until a shutdown signal.
pub async fn serve(options: ServeOptions) -> Result<()> {
    // Before anything is opened or created: a bad certificate stops here.
    let tls = match &options.tls {
        Some(files) => Some(crate::tls::server_config(&files.cert, &files.key)?),
        None => None,
    };
    let options = Arc::new(options);
    let opened = {
        let options = options.clone();
        tokio::task::spawn_blocking(move || match &options.db {
            Database::Sqlite(path) => open_sqlite(path, &options),
            Database::Postgres(url) => open_postgres(url, &options),
        })
        .await
        .map_err(|_| ControlError::Store("opening the store stopped".into()))??
    };
    let state = AppState {
        vaults: Arc::new(Vaults::new(opened.store, opened.master)),
        metrics: Arc::new(Metrics::default()),
        admin_hash: opened.admin_hash,
        detectors: Arc::new(options.detectors.clone()),
        feed_reads: Arc::default(),
    };
    if let Database::Postgres(url) = &options.db {
        feed_listener::spawn(url, state.vaults.clone())?;
    }
    let listener = tokio::net::TcpListener::bind(options.listen)
        .await
        .map_err(|err| ControlError::Io(format!("listen on {}: {err}", options.listen)))?;
    let addr = listener
        .local_addr()
        .map_err(|err| ControlError::Io(format!("listen address: {err}")))?;
    let scheme = if tls.is_some() { "https" } else { "http" };
    // On stdout, one line: scripts and tests read the address from it.
    println!("latet listening on {scheme}://{addr}");
    let _ = std::io::stdout().flush();
    crate::log::info(&format!(
        "serving {} on {addr} ({})",
        options.db,
        if tls.is_some() { "HTTPS" } else { "plain HTTP" }
    ));
    let vaults = state.vaults.clone();
    let shutdown = async move {
        shutdown_signal().await;
        // Open long-polls answer now; the graceful shutdown waits for
        // in-flight requests, and a poll would hold it for its wait_ms.
        vaults.signals().close();
    };
    let served = match tls {
        Some(config) => {
            let listener = TlsListener::new(listener, config)
                .map_err(|err| ControlError::Io(format!("listen address: {err}")))?;
            axum::serve(listener, router(state))
                .with_graceful_shutdown(shutdown)
                .await
        }
        None => {
            axum::serve(listener, router(state))
                .with_graceful_shutdown(shutdown)
                .await
        }
    };
    served.map_err(|err| ControlError::Io(format!("server: {err}")))
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(term) => term,
                Err(_) => {
                    let _ = ctrl_c.await;
                    return;
                }
            };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
    crate::log::info("shutting down");
}
