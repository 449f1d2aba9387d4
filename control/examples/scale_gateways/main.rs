//! Scale simulation of the gateway fleet against `latet serve` replicas
//! (driven by `envoy/scale.sh`; figures in BENCHMARKS.md).
//!
//! `seed` (seed.rs) creates a key, a token with `forget`, and a vault of synthetic
//! e-mail addresses through the entries API (1,000 a call, the fastest way
//! in); `run` starts N simulated gateways spread over the replicas, each
//! doing what the filter's poller does (snapshot, then long-poll the feed),
//! measures the cold start, then forgets values one by one and measures how
//! long each `forgotten` event takes to reach every gateway, with the
//! replicas' CPU and memory read from `/proc`. Tokens are read from files
//! and never printed; no value is printed.

mod gateway;
mod http;
mod report;
mod seed;

use bytes::Bytes;
use clap::{Parser, Subcommand};
use gateway::{Report, Timings};
use http::{post_json, CallError, Connection, Replica, CALL_TIMEOUT};
use hyper::{header, Method};
use latet_core::kind::Kind;
use latet_core::wire::parse_snapshot;
use report::{sample_all, Figures};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;

#[derive(Parser)]
#[command(about = "Scale simulation: N gateways long-polling latet serve replicas")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Creates KEY with a forget token and VALUES synthetic entries.
    Seed {
        /// A replica, `http://HOST:PORT` (repeat: the batches alternate).
        #[arg(long = "replica", required = true)]
        replicas: Vec<String>,
        #[arg(long)]
        admin_token_file: PathBuf,
        #[arg(long, default_value = "scale")]
        key: String,
        #[arg(long, default_value_t = 10_000)]
        values: usize,
        /// Where `gateway.token` and `forget.token` are written (mode 0600).
        #[arg(long)]
        out_dir: PathBuf,
    },
    /// Runs N simulated gateways and prints the figures.
    Run {
        /// A replica, `http://HOST:PORT`, repeated; gateway i uses replica i mod count.
        #[arg(long = "replica", required = true)]
        replicas: Vec<String>,
        /// Each replica's pid, in the same order (for `/proc`).
        #[arg(long = "replica-pid", required = true)]
        pids: Vec<u32>,
        #[arg(long)]
        gateway_token_file: PathBuf,
        #[arg(long)]
        forget_token_file: PathBuf,
        #[arg(long)]
        gateways: usize,
        #[arg(long, default_value_t = 10)]
        forgets: usize,
        #[arg(long, default_value_t = 2_000)]
        forget_every_ms: u64,
        /// The filter's `feedWaitMs` default.
        #[arg(long, default_value_t = 25_000)]
        feed_wait_ms: u64,
        /// The filter's `calloutTimeoutMs` default (the snapshot's whole call).
        #[arg(long, default_value_t = 5_000)]
        callout_timeout_ms: u64,
        /// Give up the cold start after this long (and say how many parked).
        #[arg(long, default_value_t = 600)]
        cold_start_limit_s: u64,
        /// After the last forget, wait at most this long for every receipt.
        #[arg(long, default_value_t = 30)]
        drain_limit_s: u64,
        /// Exit 1 unless every gateway parked and received every forget.
        #[arg(long)]
        require_all: bool,
        /// Start the gateways from the seq of a snapshot taken once here,
        /// without one each (gateways reconnecting to restarted replicas):
        /// the forget fan-out and memory per parked poll, without the
        /// snapshot herd.
        #[arg(long)]
        warm: bool,
        /// The database's postmaster pid: its CPU and its backends' too.
        #[arg(long)]
        db_pid: Option<u32>,
    },
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let result = match Cli::parse().command {
        Command::Seed {
            replicas,
            admin_token_file,
            key,
            values,
            out_dir,
        } => seed::seed(&replicas, &admin_token_file, &key, values, &out_dir).await,
        Command::Run {
            replicas,
            pids,
            gateway_token_file,
            forget_token_file,
            gateways,
            forgets,
            forget_every_ms,
            feed_wait_ms,
            callout_timeout_ms,
            cold_start_limit_s,
            drain_limit_s,
            require_all,
            warm,
            db_pid,
        } => {
            let setup = RunSetup {
                gateways,
                forgets,
                forget_every: Duration::from_millis(forget_every_ms),
                timings: Timings {
                    feed_wait: Duration::from_millis(feed_wait_ms),
                    callout_timeout: Duration::from_millis(callout_timeout_ms),
                },
                cold_start_limit: Duration::from_secs(cold_start_limit_s),
                drain_limit: Duration::from_secs(drain_limit_s),
                warm,
                db_pid,
            };
            match run(
                &replicas,
                &pids,
                &gateway_token_file,
                &forget_token_file,
                setup,
            )
            .await
            {
                Ok(figures) => {
                    figures.print();
                    if require_all && (figures.parked < gateways || !figures.complete()) {
                        Err(CallError(
                            "not every gateway parked and received every forget".into(),
                        ))
                    } else {
                        Ok(())
                    }
                }
                Err(err) => Err(err),
            }
        }
    };
    if let Err(err) = result {
        eprintln!("scale_gateways: {err}");
        std::process::exit(1);
    }
}

pub(crate) fn read_token(path: &Path) -> Result<String, CallError> {
    std::fs::read_to_string(path)
        .map(|t| t.trim().to_string())
        .map_err(|err| CallError(format!("{}: {err}", path.display())))
}

/// How often the cold start says how far it got (stderr).
const PROGRESS_EVERY: Duration = Duration::from_secs(30);

/// The knobs of one run.
struct RunSetup {
    gateways: usize,
    forgets: usize,
    forget_every: Duration,
    timings: Timings,
    cold_start_limit: Duration,
    drain_limit: Duration,
    warm: bool,
    db_pid: Option<u32>,
}

/// A forget made: the id it names and when its answer came.
struct ForgetMade {
    id: String,
    answered: Instant,
}

async fn run(
    replica_urls: &[String],
    pids: &[u32],
    gateway_token_file: &Path,
    forget_token_file: &Path,
    setup: RunSetup,
) -> Result<Figures, CallError> {
    if replica_urls.len() != pids.len() {
        return Err(CallError("give one --replica-pid per --replica".into()));
    }
    let replicas = replica_urls
        .iter()
        .map(|url| Replica::parse(url))
        .collect::<Result<Vec<_>, _>>()?;
    let token = Arc::new(read_token(gateway_token_file)?);
    let forget_token = read_token(forget_token_file)?;
    let client_cpu_start = report::sample(std::process::id()).unwrap_or_default();

    // The values to forget: e-mail entries of the vault, read once here.
    let (entries, seq, targets) = forget_targets(&replicas[0], &token, setup.forgets).await?;
    let warm = setup.warm.then_some(seq);
    let db_cpu = || setup.db_pid.map(report::tree_cpu_s);

    let before = sample_all(pids);
    let db_before = db_cpu();
    let started = Instant::now();
    let (reports_tx, mut reports) = mpsc::unbounded_channel();
    for id in 0..setup.gateways {
        let replica = replicas[id % replicas.len()].clone();
        tokio::spawn(gateway::run(
            id,
            replica,
            token.clone(),
            setup.timings,
            warm,
            reports_tx.clone(),
        ));
    }
    drop(reports_tx);

    // Cold start: until every gateway holds a snapshot and polls.
    let mut parked = vec![false; setup.gateways];
    let (mut parked_count, mut last_parked) = (0usize, started);
    let mut snapshot_bytes = None;
    let mut cold_failures = 0u64;
    let cold_deadline = started + setup.cold_start_limit;
    let mut progress_at = started + PROGRESS_EVERY;
    while parked_count < setup.gateways {
        if Instant::now() >= progress_at {
            progress_at += PROGRESS_EVERY;
            eprintln!(
                "scale_gateways: cold start, {:.0} s: {parked_count}/{} parked, {cold_failures} failed calls",
                started.elapsed().as_secs_f64(),
                setup.gateways
            );
        }
        match tokio::time::timeout_at(cold_deadline.min(progress_at), reports.recv()).await {
            Ok(Some(Report::Parked {
                gateway,
                at,
                snapshot_bytes: bytes,
            })) => {
                if !parked[gateway] {
                    parked[gateway] = true;
                    parked_count += 1;
                    last_parked = at;
                    snapshot_bytes.get_or_insert(bytes);
                }
            }
            Ok(Some(Report::Failed)) => cold_failures += 1,
            Ok(Some(Report::Forgotten { .. })) => {}
            Ok(None) => break,
            Err(_) if Instant::now() >= cold_deadline => break,
            Err(_) => {}
        }
    }
    let cold_start = last_parked - started;
    // Let the replicas finish answering the first polls' reads before the CPU sample.
    drain_for(&mut reports, Duration::from_secs(1), &mut cold_failures).await;
    let after_cold = sample_all(pids);
    let db_cold = db_cpu();

    // Forgets, spaced, each through the next replica; the receipts are
    // gathered meanwhile.
    let (made_tx, mut made_rx) = mpsc::unbounded_channel::<ForgetMade>();
    let forget_task = tokio::spawn(forget_one_by_one(
        replicas.clone(),
        forget_token,
        targets,
        setup.forget_every,
        made_tx,
    ));
    let mut made: HashMap<String, Instant> = HashMap::new();
    // (gateway, forgotten id) → receipt; a gateway that got an event twice
    // (a retried poll) counts once, at its first receipt.
    let mut receipts: HashMap<(usize, String), Instant> = HashMap::new();
    let mut run_failures = 0u64;
    let mut forgets_done = false;
    let mut drain_deadline = None;
    loop {
        if forgets_done && receipts.len() >= parked_count * setup.forgets {
            break;
        }
        let wake = drain_deadline.unwrap_or_else(|| Instant::now() + Duration::from_secs(3600));
        tokio::select! {
            report = reports.recv() => match report {
                Some(Report::Forgotten { gateway, first_id, at }) => {
                    receipts.entry((gateway, first_id)).or_insert(at);
                }
                Some(Report::Failed) => run_failures += 1,
                Some(Report::Parked { .. }) => {}
                None => break,
            },
            forget = made_rx.recv(), if !forgets_done => match forget {
                Some(forget) => { made.insert(forget.id, forget.answered); }
                None => {
                    forgets_done = true;
                    drain_deadline = Some(Instant::now() + setup.drain_limit);
                }
            },
            () = tokio::time::sleep_until(wake) => break,
        }
    }
    forget_task
        .await
        .map_err(|err| CallError(format!("forget task: {err}")))??;
    let after_forgets = sample_all(pids);
    let db_end = db_cpu();

    let mut propagation = Vec::with_capacity(receipts.len());
    let mut before_answer = 0;
    for ((_, id), at) in &receipts {
        if let Some(answered) = made.get(id) {
            if at < answered {
                before_answer += 1;
            }
            propagation.push(at.saturating_duration_since(*answered));
        }
    }
    propagation.sort();
    let client_cpu_end = report::sample(std::process::id()).unwrap_or_default();
    Ok(Figures {
        gateways: setup.gateways,
        replicas: replicas.len(),
        entries,
        forgets: setup.forgets,
        forget_every: setup.forget_every,
        parked: parked_count,
        cold_start,
        cold_failures,
        snapshot_bytes,
        before,
        after_cold,
        after_forgets,
        propagation,
        before_answer,
        run_failures,
        db_cpu: match (db_before, db_cold, db_end) {
            (Some(a), Some(b), Some(c)) => Some([a, b, c]),
            _ => None,
        },
        warm: setup.warm,
        client_cpu_s: client_cpu_end.cpu_s - client_cpu_start.cpu_s,
    })
}

/// Reads reports for `span`, counting failures.
async fn drain_for(
    reports: &mut mpsc::UnboundedReceiver<Report>,
    span: Duration,
    failures: &mut u64,
) {
    let until = Instant::now() + span;
    while let Ok(Some(report)) = tokio::time::timeout_at(until, reports.recv()).await {
        if let Report::Failed = report {
            *failures += 1;
        }
    }
}

/// The vault's entry count, its seq, and `count` e-mail entries (id,
/// value) to forget.
async fn forget_targets(
    replica: &Replica,
    token: &str,
    count: usize,
) -> Result<(usize, u64, Vec<(String, String)>), CallError> {
    let mut connection = Connection::open(replica, Duration::from_secs(10)).await?;
    let bearer = format!("Bearer {token}");
    let answer = connection
        .call(
            Method::GET,
            "/_latet/gateway/v1/snapshot",
            &[(header::AUTHORIZATION, &bearer)],
            Bytes::new(),
            CALL_TIMEOUT,
            || {},
        )
        .await?;
    if answer.status != 200 {
        return Err(CallError(format!("snapshot answered {}", answer.status)));
    }
    let snapshot = parse_snapshot(&answer.body).map_err(|err| CallError(err.to_string()))?;
    let targets: Vec<(String, String)> = snapshot
        .entries
        .iter()
        .filter(|entry| entry.kind == Kind::Email)
        .take(count)
        .map(|entry| (entry.id.to_hex(), entry.value.clone()))
        .collect();
    if targets.len() < count {
        return Err(CallError(format!(
            "the vault holds {} e-mail entries, {count} forgets asked (seed more)",
            targets.len()
        )));
    }
    Ok((snapshot.entries.len(), snapshot.seq, targets))
}

/// How often a refused forget call is asked again.
const FORGET_TRIES: u32 = 30;

/// Forgets each target in turn through the next replica, `every` apart.
async fn forget_one_by_one(
    replicas: Vec<Replica>,
    token: String,
    targets: Vec<(String, String)>,
    every: Duration,
    made: mpsc::UnboundedSender<ForgetMade>,
) -> Result<(), CallError> {
    let mut connections = Vec::new();
    for replica in &replicas {
        connections.push(Connection::open(replica, Duration::from_secs(10)).await?);
    }
    for (k, (id, value)) in targets.into_iter().enumerate() {
        if k > 0 {
            tokio::time::sleep(every).await;
        }
        let connection = &mut connections[k % replicas.len()];
        let body = serde_json::json!({"values": [value]});
        // A replica whose pool is exhausted answers 503 and changes
        // nothing: ask again, as an app would; the clock starts at the
        // answer that forgot.
        let mut tries = 0;
        let answer = loop {
            match post_json(connection, "/_latet/apps/v1/forget", &token, &body).await {
                Ok(answer) => break answer,
                Err(err) if tries < FORGET_TRIES => {
                    tries += 1;
                    eprintln!("scale_gateways: forget {k}: {err}; asking again in 1 s");
                    *connection =
                        Connection::open(&replicas[k % replicas.len()], CALL_TIMEOUT).await?;
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
                Err(err) => return Err(err),
            }
        };
        let answered = Instant::now();
        if answer["forgotten"].as_u64() != Some(1) {
            return Err(CallError(format!("forget {k}: nothing forgotten")));
        }
        let _ = made.send(ForgetMade { id, answered });
    }
    Ok(())
}
