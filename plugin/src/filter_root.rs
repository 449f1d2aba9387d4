//! The HTTP filter's root context (`plugin_root_id` = `latet`), one per
//! worker VM: its vault, its wake-up queue, and — when it holds the lease
//! (no singleton, or the singleton is gone) — the poller.
//!
//! Envoy also starts the filter's root in a VM on its main thread, where no
//! request ever runs; with the singleton sync service configured, that VM is
//! the one the sync service runs in (same `vm_id`: one main-thread VM). A
//! root in that VM *stands by*: it holds no vault (measured in Envoy 1.40,
//! 100k entries: a third full index, ~13 MiB of that VM's linear memory).

use crate::config::FilterConfig;
use crate::host::{CalloutAnswer, Host, Level};
use crate::lease;
use crate::metrics::Metrics;
use crate::poller::Poller;
use crate::shared::{append_to_list, next_counter, QUEUES_KEY, QUEUE_COUNTER_KEY, QUEUE_PREFIX};
use crate::vault::WorkerVault;
use crate::worker::Worker;
use latet_core::detect::Detectors;
use std::rc::Rc;

/// A worker's root.
pub struct FilterRoot {
    worker: Rc<Worker>,
    queue: Option<u32>,
    poller: Poller,
    /// Shares its VM with the sync service: no request runs here, so no
    /// vault is held, nothing is caught up and no lease is taken.
    standing_by: bool,
}

impl FilterRoot {
    /// Sets the worker up: vault, metrics, its numbered wake-up queue, tick.
    /// `standing_by`: the VM already holds the sync service (see
    /// [`FilterRoot::stand_by`]); nothing published is taken.
    pub fn start(
        host: &dyn Host,
        config: FilterConfig,
        vm_id: String,
        standing_by: bool,
    ) -> Result<Self, String> {
        let detectors = Detectors::new(&config.detectors).map_err(|e| e.to_string())?;
        // The name lists are built now, not on this worker's first request.
        detectors.warm_up();
        let config = Rc::new(config);
        let vault = WorkerVault::new(detectors, config.memo_capacity_bytes);
        let metrics = Metrics::define(host);
        let number = next_counter(host, QUEUE_COUNTER_KEY);
        let queue = number.and_then(|n| {
            let name = format!("{QUEUE_PREFIX}{n}");
            let id = host.queue_register(&name).ok()?;
            if append_to_list(host, QUEUES_KEY, &name).is_err() {
                host.log(
                    Level::Warn,
                    "latet: wake-up queue not listed; this worker catches up on ticks and requests",
                );
            }
            Some(id)
        });
        if queue.is_none() {
            host.log(
                Level::Warn,
                "latet: no wake-up queue; this worker catches up on ticks and requests",
            );
        }
        let holder = format!("worker-{}", number.unwrap_or(0));
        let poller = Poller::new(Rc::clone(&config), holder, vm_id);
        if host.set_tick_period(config.tick).is_err() {
            host.log(Level::Error, "latet: tick period refused");
        }
        let worker = Rc::new(Worker::new(config, vault, metrics));
        let mut root = FilterRoot {
            worker,
            queue,
            poller,
            standing_by: false,
        };
        if standing_by {
            root.stand_by(host);
        } else {
            // Whatever is already published, take it now.
            root.worker.catch_up(host);
        }
        Ok(root)
    }

    /// This root shares its VM with the sync service, which Envoy runs on
    /// its main thread: no request is ever filtered here (HTTP filters run
    /// on the workers, each in its own VM). From now on it holds no vault
    /// (one held is dropped, zeroed), catches nothing up and never takes
    /// the lease (the sync service holds it). Wasm memory never shrinks:
    /// a vault never built here costs nothing, one dropped stays at its
    /// peak but is not built again. A request that did reach it would
    /// catch the vault up on its own path and be masked, or refused while
    /// no snapshot builds: never forwarded unmasked.
    pub fn stand_by(&mut self, host: &dyn Host) {
        if self.standing_by {
            return;
        }
        self.standing_by = true;
        self.worker.vault.borrow_mut().release();
        host.log(
            Level::Info,
            "latet: this filter root shares its VM with the sync service (Envoy's main thread, \
             where no request runs): it holds no vault",
        );
    }

    /// True once [`FilterRoot::stand_by`] ran.
    pub fn is_standing_by(&self) -> bool {
        self.standing_by
    }

    /// The worker state its HTTP contexts share.
    pub fn worker(&self) -> Rc<Worker> {
        Rc::clone(&self.worker)
    }

    /// This worker's lease-holder name.
    pub fn holder(&self) -> &str {
        self.poller.holder()
    }

    /// Tick: apply what was published, hold or take the lease, poll if held.
    pub fn on_tick(&mut self, host: &dyn Host) {
        if self.standing_by {
            return;
        }
        self.worker.catch_up(host);
        self.worker.record_feed_age(host);
        if lease::hold(host, self.poller.holder(), self.worker.config.lease_ms) {
            self.poller.step(host, &self.worker.metrics);
        }
    }

    /// The wake-up queue has messages: drain it and apply what was published.
    pub fn on_queue_ready(&mut self, host: &dyn Host, queue: u32) {
        if Some(queue) != self.queue {
            return;
        }
        while let Ok(Some(_)) = host.queue_dequeue(queue) {}
        if !self.standing_by {
            self.worker.catch_up(host);
        }
    }

    /// A callout answered to the root (the poller's).
    pub fn on_callout(&mut self, host: &dyn Host, token: u32, answer: &CalloutAnswer) {
        self.poller
            .on_answer(host, &self.worker.metrics, token, answer);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests;
