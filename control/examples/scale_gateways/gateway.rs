//! One simulated gateway: what the filter's poller does
//! (`plugin/src/poller.rs`, rules in `core/src/feed/`), minus shared data:
//! take the snapshot, long-poll the feed from its `seq`, apply events in
//! order; `snapshot_required` or a gap → a new snapshot; an error → the
//! poller's backoff (tick × 2^failures, at most 30 s). Each step is reported
//! to the coordinator; no value or token is ever reported or printed.

use crate::http::{Connection, Replica};
use bytes::Bytes;
use hyper::{header, Method};
use latet_core::wire::{CompactSnapshot, EventBody, FeedAnswer};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// The Accept header of the snapshot request: the compact binary snapshot,
/// as the filter's poller asks for it.
pub const SNAPSHOT_ACCEPT: &str = latet_core::wire::SNAPSHOT_MEDIA_TYPE;

const SNAPSHOT_PATH: &str = "/_latet/gateway/v1/snapshot";
const EVENTS_PATH: &str = "/_latet/gateway/v1/events";
/// The poller's backoff tick and cap (`tickMs` default, `MAX_BACKOFF_MS`).
const TICK: Duration = Duration::from_millis(1_000);
const MAX_BACKOFF: Duration = Duration::from_millis(30_000);

/// The timings of the filter's defaults (`feedWaitMs`, `calloutTimeoutMs`).
#[derive(Clone, Copy)]
pub struct Timings {
    pub feed_wait: Duration,
    pub callout_timeout: Duration,
}

/// What a gateway tells the coordinator.
pub enum Report {
    /// A snapshot is held and the first long-poll after it is on its way.
    Parked {
        gateway: usize,
        at: Instant,
        snapshot_bytes: usize,
    },
    /// A `forgotten` event arrived; `first_id` names it (32 hex digits).
    Forgotten {
        gateway: usize,
        first_id: String,
        at: Instant,
    },
    /// A call failed (refused, timed out, connection lost).
    Failed,
}

/// The feed position of a compact snapshot body: its head only. The
/// entries are skipped, not kept: 5,000 gateways holding a vault each would
/// measure this process, not the control service.
fn snapshot_position(body: &[u8]) -> Option<u64> {
    CompactSnapshot::parse(body).ok().map(|s| s.seq)
}

/// One gateway's poller state.
struct Gateway {
    id: usize,
    replica: Replica,
    bearer: String,
    timings: Timings,
    reports: mpsc::UnboundedSender<Report>,
    connection: Option<Connection>,
    /// The feed position held: None until a snapshot is held.
    position: Option<u64>,
    /// The first snapshot's size, until the first long-poll after it leaves.
    unreported_snapshot: Option<usize>,
}

/// Runs gateway `id` against `replica` until the coordinator goes away.
/// `warm`: the feed position of a snapshot it already holds (a gateway
/// reconnecting after a control-service restart): it long-polls at once.
pub async fn run(
    id: usize,
    replica: Replica,
    token: Arc<String>,
    timings: Timings,
    warm: Option<u64>,
    reports: mpsc::UnboundedSender<Report>,
) {
    let mut gateway = Gateway {
        id,
        replica,
        bearer: format!("Bearer {token}"),
        timings,
        reports,
        connection: None,
        position: warm,
        // A warm gateway reports parked at its first poll, with no snapshot.
        unreported_snapshot: warm.map(|_| 0),
    };
    let mut failures: u32 = 0;
    let mut parked = false;
    loop {
        if gateway.step(&mut parked).await.is_ok() {
            failures = 0;
            continue;
        }
        gateway.connection = None;
        if gateway.reports.send(Report::Failed).is_err() {
            return;
        }
        failures = failures.saturating_add(1);
        let backoff = (TICK * (1u32 << failures.min(5))).min(MAX_BACKOFF);
        tokio::time::sleep(backoff).await;
    }
}

impl Gateway {
    /// One call: the snapshot when none is held, else one long-poll.
    async fn step(&mut self, parked: &mut bool) -> Result<(), ()> {
        if self.connection.is_none() {
            self.connection = Some(
                Connection::open(&self.replica, self.timings.callout_timeout)
                    .await
                    .map_err(|_| ())?,
            );
        }
        let Some(connection) = self.connection.as_mut() else {
            return Err(());
        };
        let Some(seq) = self.position else {
            let answer = connection
                .call(
                    Method::GET,
                    SNAPSHOT_PATH,
                    &[
                        (header::AUTHORIZATION, &self.bearer),
                        (header::ACCEPT, SNAPSHOT_ACCEPT),
                    ],
                    Bytes::new(),
                    self.timings.callout_timeout,
                    || {},
                )
                .await
                .map_err(|_| ())?;
            if answer.status != 200 {
                return Err(());
            }
            self.position = Some(snapshot_position(&answer.body).ok_or(())?);
            if !*parked {
                self.unreported_snapshot = Some(answer.body.len());
            }
            return Ok(());
        };
        let path = format!(
            "{EVENTS_PATH}?after={seq}&wait_ms={}",
            self.timings.feed_wait.as_millis()
        );
        let (id, reports) = (self.id, &self.reports);
        let unreported = self.unreported_snapshot.take();
        let answer = connection
            .call(
                Method::GET,
                &path,
                &[(header::AUTHORIZATION, &self.bearer)],
                Bytes::new(),
                self.timings.feed_wait + self.timings.callout_timeout,
                || {
                    if let Some(snapshot_bytes) = unreported {
                        *parked = true;
                        let _ = reports.send(Report::Parked {
                            gateway: id,
                            at: Instant::now(),
                            snapshot_bytes,
                        });
                    }
                },
            )
            .await
            .map_err(|_| ())?;
        let at = Instant::now();
        if answer.status != 200 {
            return Err(());
        }
        let feed: FeedAnswer = serde_json::from_slice(&answer.body).map_err(|_| ())?;
        match feed {
            FeedAnswer::SnapshotRequired { .. } => self.position = None,
            FeedAnswer::Events { events, .. } => {
                for event in events {
                    if Some(event.seq) != self.position.map(|held| held + 1) {
                        // A gap: the poller takes a new snapshot.
                        self.position = None;
                        break;
                    }
                    self.position = Some(event.seq);
                    if let EventBody::Forgotten { ids, .. } = event.body {
                        if let Some(first) = ids.first() {
                            let _ = self.reports.send(Report::Forgotten {
                                gateway: self.id,
                                first_id: first.to_hex(),
                                at,
                            });
                        }
                    }
                }
            }
        }
        Ok(())
    }
}
