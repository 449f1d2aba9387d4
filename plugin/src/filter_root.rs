//! The HTTP filter's root context (`plugin_root_id` = `latet`), one per
//! worker VM: its vault, its wake-up queue, and — when it holds the lease
//! (no singleton, or the singleton is gone) — the poller.

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
}

impl FilterRoot {
    /// Sets the worker up: vault, metrics, its numbered wake-up queue, tick.
    pub fn start(host: &dyn Host, config: FilterConfig, vm_id: String) -> Result<Self, String> {
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
        // Whatever is already published, take it now.
        worker.catch_up(host);
        Ok(FilterRoot {
            worker,
            queue,
            poller,
        })
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
        self.worker.catch_up(host);
    }

    /// A callout answered to the root (the poller's).
    pub fn on_callout(&mut self, host: &dyn Host, token: u32, answer: &CalloutAnswer) {
        self.poller
            .on_answer(host, &self.worker.metrics, token, answer);
    }
}
