//! The filter's metrics: names as constants under one prefix, defined once
//! per root context. A metric the host refused to define is a no-op.
//!
//! Names follow Prometheus conventions as Envoy exports them (measured in
//! `docs/envoy-facts.md#metrics`): Envoy adds nothing to a wasm metric's
//! name on `/stats/prometheus` (no prefix, no `_total`), so counters end in
//! `_total` here. Histograms take integers, and Envoy does not scale a wasm
//! histogram's values, so durations are recorded and named in
//! microseconds. Refusals are counted per cause, one counter each
//! (`latet_requests_refused_<cause>_total`), which Envoy's tag extraction
//! ([`REFUSED_CAUSE_TAG_REGEX`]) exports as one counter with a `cause` label.

use crate::host::MetricKind::{Counter, Gauge, Histogram};
use crate::host::{Host, MetricKind};
use crate::reply::Refusal;

pub const REQUESTS_MASKED: &str = "latet_requests_masked_total";
pub const VALUES_MASKED: &str = "latet_values_masked_total";
pub const NEW_VALUES: &str = "latet_new_values_total";
pub const MEMO_HITS: &str = "latet_memo_hits_total";
pub const ENTRIES_CALLOUTS: &str = "latet_entries_callouts_total";
pub const ENTRIES_CALLOUT_FAILURES: &str = "latet_entries_callout_failures_total";
pub const REQUESTS_REDACTED: &str = "latet_requests_redacted_total";
pub const RESTORED: &str = "latet_surrogates_restored_total";
pub const RESTORE_DECLINED_RETIRED: &str = "latet_restore_declined_retired_total";
pub const RESTORE_DECLINED_OUT_OF_SCOPE: &str = "latet_restore_declined_out_of_scope_total";
pub const RESTORE_DECLINED_URL: &str = "latet_restore_declined_url_total";
pub const RESTORE_STALE: &str = "latet_restore_stale_total";
pub const FORGET_EVENTS_APPLIED: &str = "latet_forget_events_applied_total";
pub const SNAPSHOT_LOADS: &str = "latet_snapshot_loads_total";
pub const FEED_POSITION: &str = "latet_feed_position";
pub const FEED_AGE_SECONDS: &str = "latet_feed_age_seconds";
pub const FEED_ERRORS: &str = "latet_feed_errors_total";
pub const MASK_DURATION: &str = "latet_mask_duration_microseconds";
pub const RESTORE_DURATION: &str = "latet_restore_duration_microseconds";
pub const ENTRIES_CALLOUT_DURATION: &str = "latet_entries_callout_duration_microseconds";
pub const CATCH_UP_DURATION: &str = "latet_catch_up_duration_microseconds";

/// The refusal counter as Envoy exports it with [`REFUSED_CAUSE_TAG_REGEX`]
/// (`cause` label); the filter defines one counter per cause
/// ([`refused_name`]).
pub const REQUESTS_REFUSED: &str = "latet_requests_refused_total";

/// The `stats_config.stats_tags` regex that turns
/// `latet_requests_refused_<cause>_total` into `latet_requests_refused_total`
/// with `cause="<cause>"` (Envoy removes the first group from the name; the
/// second is the label's value). Every Envoy config in the repository has it.
pub const REFUSED_CAUSE_TAG_REGEX: &str = r"^wasmcustom\.latet_requests_refused(_(\w+?))_total$";

/// Every refusal the filter counts, one line per cause, in the enum's order:
/// a new [`Refusal`] gets its counter by being listed here (a test fails
/// until it is).
pub const REFUSALS: &[Refusal] = &[
    Refusal::BodyTooLarge,
    Refusal::EncodedBody,
    Refusal::VaultNotReady,
    Refusal::VaultBehind,
    Refusal::EntriesUnavailable,
    Refusal::ControlClusterUnknown,
    Refusal::TokenRefused,
    Refusal::KeyDisabled,
    Refusal::BadBody,
    Refusal::ValueInVerbatimField,
    Refusal::ValueInHeader,
    Refusal::BadHeaders,
    Refusal::KeyDeleted,
];

/// A refusal's `cause` label: its error type without the `latet_` prefix
/// (every error type has it: a test checks).
pub fn cause(refusal: Refusal) -> &'static str {
    let error_type = refusal.error_type();
    error_type.get("latet_".len()..).unwrap_or(error_type)
}

const REFUSED_PREFIX: &str = "latet_requests_refused_";

/// The name the filter defines for one cause's refusal counter.
pub fn refused_name(refusal: Refusal) -> String {
    format!("{REFUSED_PREFIX}{}_total", cause(refusal))
}

/// One metric of the list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    RequestsMasked,
    ValuesMasked,
    NewValues,
    MemoHits,
    EntriesCallouts,
    EntriesCalloutFailures,
    RequestsRedacted,
    Restored,
    RestoreDeclinedRetired,
    RestoreDeclinedOutOfScope,
    RestoreDeclinedUrl,
    RestoreStale,
    ForgetEventsApplied,
    SnapshotLoads,
    FeedPosition,
    FeedAgeSeconds,
    FeedErrors,
    /// Microseconds spent masking one forwarded request (headers, body,
    /// trailers; not the catch-up nor the wait for entries).
    MaskDuration,
    /// Microseconds spent restoring one answer (every chunk of a stream).
    RestoreDuration,
    /// Microseconds from an entries callout's dispatch to its answer.
    EntriesCalloutDuration,
    /// Microseconds of a worker's catch-up that read what was published.
    CatchUpDuration,
}

/// Every metric, its name and kind, in definition order.
pub const ALL: [(Metric, &str, MetricKind); 21] = [
    (Metric::RequestsMasked, REQUESTS_MASKED, Counter),
    (Metric::ValuesMasked, VALUES_MASKED, Counter),
    (Metric::NewValues, NEW_VALUES, Counter),
    (Metric::MemoHits, MEMO_HITS, Counter),
    (Metric::EntriesCallouts, ENTRIES_CALLOUTS, Counter),
    (
        Metric::EntriesCalloutFailures,
        ENTRIES_CALLOUT_FAILURES,
        Counter,
    ),
    (Metric::RequestsRedacted, REQUESTS_REDACTED, Counter),
    (Metric::Restored, RESTORED, Counter),
    (
        Metric::RestoreDeclinedRetired,
        RESTORE_DECLINED_RETIRED,
        Counter,
    ),
    (
        Metric::RestoreDeclinedOutOfScope,
        RESTORE_DECLINED_OUT_OF_SCOPE,
        Counter,
    ),
    (Metric::RestoreDeclinedUrl, RESTORE_DECLINED_URL, Counter),
    (Metric::RestoreStale, RESTORE_STALE, Counter),
    (Metric::ForgetEventsApplied, FORGET_EVENTS_APPLIED, Counter),
    (Metric::SnapshotLoads, SNAPSHOT_LOADS, Counter),
    (Metric::FeedPosition, FEED_POSITION, Gauge),
    (Metric::FeedAgeSeconds, FEED_AGE_SECONDS, Gauge),
    (Metric::FeedErrors, FEED_ERRORS, Counter),
    (Metric::MaskDuration, MASK_DURATION, Histogram),
    (Metric::RestoreDuration, RESTORE_DURATION, Histogram),
    (
        Metric::EntriesCalloutDuration,
        ENTRIES_CALLOUT_DURATION,
        Histogram,
    ),
    (Metric::CatchUpDuration, CATCH_UP_DURATION, Histogram),
];

/// How many metrics the filter defines: [`ALL`] and a counter per refusal.
const DEFINED: usize = ALL.len() + REFUSALS.len();

/// The ids the host gave the metrics of one root context: [`ALL`]'s, then
/// the refusal counters in [`REFUSALS`] order.
#[derive(Clone, Debug)]
pub struct Metrics {
    /// Boxed: the roots that hold it stay small.
    ids: Box<[Option<u32>; DEFINED]>,
}

impl Default for Metrics {
    /// No metric defined: every update is a no-op.
    fn default() -> Self {
        Metrics {
            ids: Box::new([None; DEFINED]),
        }
    }
}

impl Metrics {
    /// Defines every metric (once per root context).
    pub fn define(host: &dyn Host) -> Self {
        // An array and plain loops: iterator chains and a growing Vec cost
        // bytes of module, which is at its size limit.
        let mut metrics = Metrics::default();
        for (i, (_, name, kind)) in ALL.iter().enumerate() {
            metrics.ids[i] = host.metric_define(*kind, name).ok();
        }
        for (i, refusal) in REFUSALS.iter().enumerate() {
            let name = refused_name(*refusal);
            metrics.ids[ALL.len() + i] = host.metric_define(Counter, &name).ok();
        }
        metrics
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

    /// Sets a gauge, or records a histogram's sample.
    pub fn set(&self, host: &dyn Host, metric: Metric, value: u64) {
        if let Some(id) = self.id(metric) {
            host.metric_record(id, value);
        }
    }

    /// Counts a refused request under its cause (`REFUSALS` is in the
    /// enum's order, a test checks it: the discriminant is the index).
    pub fn refused(&self, host: &dyn Host, refusal: Refusal) {
        let id = self
            .ids
            .get(ALL.len() + refusal as usize)
            .copied()
            .flatten();
        if let Some(id) = id {
            host.metric_increment(id, 1);
        }
    }
}

/// A start time on the host's clock, for a duration histogram.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stopwatch {
    started_us: u64,
}

impl Stopwatch {
    pub fn start(host: &dyn Host) -> Self {
        Stopwatch {
            started_us: host.clock_us(),
        }
    }

    /// Microseconds since [`Stopwatch::start`].
    pub fn elapsed_us(self, host: &dyn Host) -> u64 {
        host.clock_us().saturating_sub(self.started_us)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests;
