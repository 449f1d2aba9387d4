//! The filter's metrics: names as constants under one prefix, defined once
//! per root context. A metric the host refused to define is a no-op.

use crate::host::{Host, MetricKind};

pub const REQUESTS_MASKED: &str = "latet_requests_masked";
pub const VALUES_MASKED: &str = "latet_values_masked";
pub const NEW_VALUES: &str = "latet_new_values";
pub const MEMO_HITS: &str = "latet_memo_hits";
pub const CALLOUTS: &str = "latet_callouts";
pub const CALLOUT_FAILURES: &str = "latet_callout_failures";
pub const FAIL_REJECT: &str = "latet_fail_reject";
pub const FAIL_REDACT: &str = "latet_fail_redact";
pub const REQUESTS_REFUSED: &str = "latet_requests_refused";
pub const RESTORED: &str = "latet_restored";
pub const RESTORE_DECLINED_RETIRED: &str = "latet_restore_declined_retired";
pub const RESTORE_DECLINED_OUT_OF_SCOPE: &str = "latet_restore_declined_out_of_scope";
pub const RESTORE_DECLINED_URL: &str = "latet_restore_declined_url";
pub const RESTORE_STALE: &str = "latet_restore_stale";
pub const FORGET_EVENTS_APPLIED: &str = "latet_forget_events_applied";
pub const SNAPSHOT_LOADS: &str = "latet_snapshot_loads";
pub const FEED_POSITION: &str = "latet_feed_position";
pub const FEED_AGE_MS: &str = "latet_feed_age_ms";
pub const FEED_ERRORS: &str = "latet_feed_errors";

/// One metric of the list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    RequestsMasked,
    ValuesMasked,
    NewValues,
    MemoHits,
    Callouts,
    CalloutFailures,
    FailReject,
    FailRedact,
    RequestsRefused,
    Restored,
    RestoreDeclinedRetired,
    RestoreDeclinedOutOfScope,
    RestoreDeclinedUrl,
    RestoreStale,
    ForgetEventsApplied,
    SnapshotLoads,
    FeedPosition,
    FeedAgeMs,
    FeedErrors,
}

/// Every metric, its name and kind, in definition order.
pub const ALL: [(Metric, &str, MetricKind); 19] = [
    (Metric::RequestsMasked, REQUESTS_MASKED, MetricKind::Counter),
    (Metric::ValuesMasked, VALUES_MASKED, MetricKind::Counter),
    (Metric::NewValues, NEW_VALUES, MetricKind::Counter),
    (Metric::MemoHits, MEMO_HITS, MetricKind::Counter),
    (Metric::Callouts, CALLOUTS, MetricKind::Counter),
    (
        Metric::CalloutFailures,
        CALLOUT_FAILURES,
        MetricKind::Counter,
    ),
    (Metric::FailReject, FAIL_REJECT, MetricKind::Counter),
    (Metric::FailRedact, FAIL_REDACT, MetricKind::Counter),
    (
        Metric::RequestsRefused,
        REQUESTS_REFUSED,
        MetricKind::Counter,
    ),
    (Metric::Restored, RESTORED, MetricKind::Counter),
    (
        Metric::RestoreDeclinedRetired,
        RESTORE_DECLINED_RETIRED,
        MetricKind::Counter,
    ),
    (
        Metric::RestoreDeclinedOutOfScope,
        RESTORE_DECLINED_OUT_OF_SCOPE,
        MetricKind::Counter,
    ),
    (
        Metric::RestoreDeclinedUrl,
        RESTORE_DECLINED_URL,
        MetricKind::Counter,
    ),
    (Metric::RestoreStale, RESTORE_STALE, MetricKind::Counter),
    (
        Metric::ForgetEventsApplied,
        FORGET_EVENTS_APPLIED,
        MetricKind::Counter,
    ),
    (Metric::SnapshotLoads, SNAPSHOT_LOADS, MetricKind::Counter),
    (Metric::FeedPosition, FEED_POSITION, MetricKind::Gauge),
    (Metric::FeedAgeMs, FEED_AGE_MS, MetricKind::Gauge),
    (Metric::FeedErrors, FEED_ERRORS, MetricKind::Counter),
];

/// The ids the host gave the metrics of one root context.
#[derive(Clone, Debug, Default)]
pub struct Metrics {
    ids: Vec<Option<u32>>,
}

impl Metrics {
    /// Defines every metric (once per root context).
    pub fn define(host: &dyn Host) -> Self {
        Metrics {
            ids: ALL
                .iter()
                .map(|(_, name, kind)| host.metric_define(*kind, name).ok())
                .collect(),
        }
    }

    /// `ALL` lists the metrics in the enum's order (a test checks it), so
    /// the discriminant is the index: no search per update.
    fn id(&self, metric: Metric) -> Option<u32> {
        self.ids.get(metric as usize).copied().flatten()
    }

    /// Adds `by` to a counter (nothing for 0).
    pub fn add(&self, host: &dyn Host, metric: Metric, by: usize) {
        if by == 0 {
            return;
        }
        if let Some(id) = self.id(metric) {
            host.metric_increment(id, i64::try_from(by).unwrap_or(i64::MAX));
        }
    }

    /// Sets a gauge.
    pub fn set(&self, host: &dyn Host, metric: Metric, value: u64) {
        if let Some(id) = self.id(metric) {
            host.metric_record(id, value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_lists_the_metrics_in_enum_order() {
        for (i, (metric, _, _)) in ALL.iter().enumerate() {
            assert_eq!(*metric as usize, i);
        }
    }
}
