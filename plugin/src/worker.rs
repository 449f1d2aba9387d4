//! What the HTTP filter's root context shares with its requests: the
//! configuration, the worker's vault, and the metrics.

use crate::config::FilterConfig;
use crate::host::Host;
use crate::metrics::{Metric, Metrics, Stopwatch};
use crate::shared::STATE_KEY;
use crate::vault::{CatchUp, WorkerVault};
use std::cell::RefCell;
use std::rc::Rc;

/// One worker VM's state, shared by its root and HTTP contexts.
pub struct Worker {
    pub config: Rc<FilterConfig>,
    pub vault: RefCell<WorkerVault>,
    pub metrics: Metrics,
    /// The published state record's bytes as read before the last catch-up
    /// that left the vault current (empty: none yet). The poller writes the
    /// state record last, with a new `seq`, whenever it publishes anything a
    /// worker must apply (a forget included); so while the record's bytes
    /// are these, nothing new was published and the vault is still current.
    current_at_state: RefCell<Vec<u8>>,
}

impl Worker {
    pub fn new(config: Rc<FilterConfig>, vault: WorkerVault, metrics: Metrics) -> Self {
        Worker {
            config,
            vault: RefCell::new(vault),
            metrics,
            current_at_state: RefCell::new(Vec::new()),
        }
    }

    /// Applies what this worker missed (forgets included), counts it and
    /// times it.
    ///
    /// Every request calls this before it touches a body, so its usual case
    /// is cheap: one read of the small state record, compared with the one
    /// the vault was last current at; only when it differs does the vault
    /// parse it and read the events (or the snapshot).
    pub fn catch_up(&self, host: &dyn Host) -> CatchUp {
        let state = match host.shared_get(STATE_KEY) {
            Ok((Some(bytes), _)) => bytes,
            // Nothing published (or unreadable): the vault decides.
            _ => Vec::new(),
        };
        if !state.is_empty() && *self.current_at_state.borrow() == state {
            return CatchUp {
                current: true,
                ..CatchUp::default()
            };
        }
        let watch = Stopwatch::start(host);
        let done = self.vault.borrow_mut().catch_up(host);
        if !state.is_empty() {
            // Timed only when something published had moved.
            let spent = watch.elapsed_us(host);
            self.metrics.set(host, Metric::CatchUpDuration, spent);
        }
        // The vault read the record again, at or after `state`: current at
        // that read means current at `state` (positions only move forward).
        *self.current_at_state.borrow_mut() = if done.current { state } else { Vec::new() };
        self.metrics
            .add(host, Metric::ForgetEventsApplied, done.forgets_applied);
        if done.snapshot_loaded {
            self.metrics.add(host, Metric::SnapshotLoads, 1);
        }
        done
    }

    /// Sets the feed-age gauge (on ticks and stale answers, not per request:
    /// it costs a clock read and a host call).
    pub fn record_feed_age(&self, host: &dyn Host) {
        if let Some(age) = self.feed_age_ms(host) {
            self.metrics.set(host, Metric::FeedAgeSeconds, age / 1000);
        }
    }

    /// Milliseconds since the feed last answered (`None`: never).
    pub fn feed_age_ms(&self, host: &dyn Host) -> Option<u64> {
        let at = self.vault.borrow().feed_answered_at_ms();
        (at > 0).then(|| host.now_ms().saturating_sub(at))
    }

    /// True when answers must not be restored: the feed has not answered
    /// for longer than `restoreMaxStalenessMs` (or never did).
    pub fn is_stale(&self, host: &dyn Host) -> bool {
        self.feed_age_ms(host)
            .is_none_or(|age| age > self.config.restore_max_staleness_ms)
    }
}
