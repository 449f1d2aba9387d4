//! What the HTTP filter's root context shares with its requests: the
//! configuration, the worker's vault, and the metrics.

use crate::config::FilterConfig;
use crate::host::Host;
use crate::metrics::{Metric, Metrics};
use crate::vault::{CatchUp, WorkerVault};
use std::cell::RefCell;
use std::rc::Rc;

/// One worker VM's state, shared by its root and HTTP contexts.
pub struct Worker {
    pub config: Rc<FilterConfig>,
    pub vault: RefCell<WorkerVault>,
    pub metrics: Metrics,
}

impl Worker {
    pub fn new(config: Rc<FilterConfig>, vault: WorkerVault, metrics: Metrics) -> Self {
        Worker {
            config,
            vault: RefCell::new(vault),
            metrics,
        }
    }

    /// Applies what this worker missed (forgets included) and counts it.
    pub fn catch_up(&self, host: &dyn Host) -> CatchUp {
        let done = self.vault.borrow_mut().catch_up(host);
        self.metrics
            .add(host, Metric::ForgetEventsApplied, done.forgets_applied);
        if done.snapshot_loaded {
            self.metrics.add(host, Metric::SnapshotLoads, 1);
        }
        if let Some(age) = self.feed_age_ms(host) {
            self.metrics.set(host, Metric::FeedAgeMs, age);
        }
        done
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
