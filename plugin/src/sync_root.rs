//! The singleton sync service (`plugin_root_id` = `latet-sync`): holds the
//! lease unconditionally and runs the poller on the main thread.

use crate::config::FilterConfig;
use crate::host::{CalloutAnswer, Host, Level};
use crate::lease;
use crate::metrics::Metrics;
use crate::poller::Poller;
use crate::shared::SYNC_HOLDER;
use std::rc::Rc;

/// The sync service's root.
pub struct SyncRoot {
    config: Rc<FilterConfig>,
    metrics: Metrics,
    poller: Poller,
}

impl SyncRoot {
    pub fn start(host: &dyn Host, config: FilterConfig, vm_id: String) -> Self {
        let config = Rc::new(config);
        let metrics = Metrics::define(host);
        let poller = Poller::new(Rc::clone(&config), SYNC_HOLDER.to_string(), vm_id);
        if host.set_tick_period(config.tick).is_err() {
            host.log(Level::Error, "latet sync: tick period refused");
        }
        SyncRoot {
            config,
            metrics,
            poller,
        }
    }

    /// Tick: keep the lease, and poll.
    pub fn on_tick(&mut self, host: &dyn Host) {
        if !lease::seize(host, SYNC_HOLDER, self.config.lease_ms) {
            host.log(Level::Warn, "latet sync: lease not written");
        }
        self.poller.step(host, &self.metrics);
    }

    /// A callout answered.
    pub fn on_callout(&mut self, host: &dyn Host, token: u32, answer: &CalloutAnswer) {
        self.poller.on_answer(host, &self.metrics, token, answer);
    }
}
