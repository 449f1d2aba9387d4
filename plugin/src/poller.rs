//! The poller: pulls the snapshot, long-polls the event feed, and publishes
//! both to shared data, then wakes every worker's queue. One runs per Envoy:
//! in the singleton sync service, or in the worker holding the lease.
//!
//! It keeps no position of its own: it reads the published one, so a new
//! lease holder goes on where the last one stopped.
//!
//! The rules (which call comes next, which events of an answer are taken,
//! when a new snapshot is due, what a `forgotten` event erases from the
//! shared snapshot and earlier `added` events) are `latet_core::feed`'s;
//! this module reads and writes shared data, makes the calls, logs and
//! counts. The snapshot and earlier `added` events are rewritten without
//! the forgotten entries before the state record moves.

use crate::config::FilterConfig;
use crate::host::{Callout, CalloutAnswer, Host, Level};
use crate::metrics::{Metric, Metrics};
use crate::reply::Refusal;
use crate::shared::{
    clear_snapshot_tag, read_events, read_lease, read_list, read_snapshot_tag, read_state,
    write_json, write_snapshot_tag, write_sync_cause, SnapshotTag, EVENTS_KEY, QUEUES_KEY,
    STATE_KEY,
};
use crate::shared_snapshot::{clear_snapshot, write_snapshot, write_snapshot_windowed, PART_BYTES};
use latet_core::feed::{
    append_feed_events, next_call, plan_feed_answer, FeedAnswerPlan, FeedGap, NextCall,
    PublishedState,
};
use latet_core::wire::snapshot_parts::{split_windowed, SplitError};
use latet_core::wire::{
    control_refusal, encode_snapshot, is_compact_snapshot, parse_feed_answer, parse_snapshot,
    CompactSnapshot, ControlRefusal, EntryId, Event, SNAPSHOT_MEDIA_TYPE,
};
use std::collections::HashSet;
use std::rc::Rc;

/// The control service's gateway paths.
pub const SNAPSHOT_PATH: &str = "/_latet/gateway/v1/snapshot";
pub const EVENTS_PATH: &str = "/_latet/gateway/v1/events";
pub const ENTRIES_PATH: &str = "/_latet/gateway/v1/entries";

/// The bytes of a callout answer the sync service reads at once; a longer
/// compact snapshot is read in windows of a part, any other answer whole.
pub const ANSWER_HEAD_BYTES: usize = 64 * 1024;

/// The longest wait between retries after failures.
const MAX_BACKOFF_MS: u64 = 30_000;

/// Which call is in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum InFlight {
    Snapshot,
    Feed,
}

/// One Envoy's poller.
pub struct Poller {
    config: Rc<FilterConfig>,
    /// Lease holder name this poller writes and checks (`sync`, `worker-<n>`).
    holder: String,
    /// The vm_id whose queues it wakes.
    vm_id: String,
    in_flight: Option<(u32, InFlight)>,
    /// Set by a `snapshot_required` answer or a gap: the next call is a snapshot.
    need_snapshot: bool,
    retry_at_ms: u64,
    failures: u32,
    /// The sync cause last written to shared data (`None`: not yet
    /// written by this poller, so the first outcome is written).
    published_cause: Option<Option<Refusal>>,
    /// The ETag sent with the snapshot call in flight: a 304 keeps the
    /// shared snapshot only while its tag is still this one.
    sent_tag: Option<String>,
    /// Bytes of entries in each part of the shared snapshot.
    part_bytes: usize,
}

impl Poller {
    pub fn new(config: Rc<FilterConfig>, holder: String, vm_id: String) -> Self {
        Poller {
            config,
            holder,
            vm_id,
            in_flight: None,
            need_snapshot: false,
            retry_at_ms: 0,
            failures: 0,
            published_cause: None,
            sent_tag: None,
            part_bytes: PART_BYTES,
        }
    }

    /// The same poller writing parts of about `part_bytes` (tests: many
    /// parts from a small vault).
    pub fn with_part_bytes(mut self, part_bytes: usize) -> Self {
        self.part_bytes = part_bytes;
        self
    }

    /// The lease holder name.
    pub fn holder(&self) -> &str {
        &self.holder
    }

    /// True while a call is in flight.
    pub fn is_waiting(&self) -> bool {
        self.in_flight.is_some()
    }

    /// Starts the next call if none is in flight and no backoff holds it.
    pub fn step(&mut self, host: &dyn Host, metrics: &Metrics) {
        if self.in_flight.is_some() || host.now_ms() < self.retry_at_ms {
            return;
        }
        let state = read_state(host);
        let (path, kind, timeout) = match next_call(state.as_ref(), self.need_snapshot) {
            NextCall::EventsAfter(seq) => (
                format!(
                    "{EVENTS_PATH}?after={seq}&wait_ms={}",
                    self.config.feed_wait.as_millis()
                ),
                InFlight::Feed,
                self.config.feed_wait + self.config.callout_timeout,
            ),
            NextCall::Snapshot => (
                SNAPSHOT_PATH.to_string(),
                InFlight::Snapshot,
                self.config.callout_timeout,
            ),
        };
        let bearer = format!("Bearer {}", self.config.gateway_token.expose());
        let mut headers = vec![
            (":method", "GET"),
            (":path", path.as_str()),
            (":authority", self.config.control_authority.as_str()),
            ("authorization", bearer.as_str()),
        ];
        // The compact form; and, when the shared snapshot is still the one
        // the service tagged (and a vault is published), its tag: a 304
        // then keeps it instead of sending it again.
        let known = match kind {
            InFlight::Snapshot => {
                headers.push(("accept", SNAPSHOT_MEDIA_TYPE));
                state
                    .filter(|s| !s.key_deleted)
                    .and_then(|_| read_snapshot_tag(host))
            }
            InFlight::Feed => None,
        };
        if let Some(tag) = &known {
            headers.push(("if-none-match", tag.etag.as_str()));
        }
        self.sent_tag = known.as_ref().map(|t| t.etag.clone());
        let callout = Callout {
            cluster: &self.config.control_cluster,
            headers,
            body: None,
            timeout,
        };
        match host.dispatch(&callout) {
            Ok(token) => self.in_flight = Some((token, kind)),
            Err(err) => {
                let (refusal, cause) =
                    Refusal::of_dispatch_error(err, &self.config.control_cluster);
                // An unknown cluster: no call can ever leave, and the
                // workers say so too.
                let unknown_cluster = refusal == Refusal::ControlClusterUnknown;
                host.log(
                    if unknown_cluster {
                        Level::Error
                    } else {
                        Level::Warn
                    },
                    &format!("latet sync: control-service call not dispatched: {cause}"),
                );
                if unknown_cluster {
                    self.publish_cause(host, Some(refusal));
                }
                self.failed(host, metrics);
            }
        }
    }

    /// Handles a callout answer; false when the token is not this poller's.
    pub fn on_answer(
        &mut self,
        host: &dyn Host,
        metrics: &Metrics,
        token: u32,
        answer: &CalloutAnswer,
    ) -> bool {
        let kind = match self.in_flight {
            Some((t, kind)) if t == token => kind,
            _ => return false,
        };
        self.in_flight = None;
        if !self.still_holder(host) {
            // Another poller took over: publishing now could race it.
            return true;
        }
        // Only a compact snapshot is read in windows; any other answer
        // not read whole yet is read whole now.
        let whole;
        let answer = if answer.body_left > 0
            && !(kind == InFlight::Snapshot
                && answer.status == 200
                && is_compact_snapshot(&answer.body))
        {
            let total = answer.body.len() + answer.body_left;
            whole = CalloutAnswer {
                status: answer.status,
                body: host.callout_body(0, total).unwrap_or_default(),
                etag: answer.etag.clone(),
                body_left: 0,
            };
            &whole
        } else {
            answer
        };
        match control_refusal(answer.status, &answer.body) {
            Some(ControlRefusal::KeyDeleted) => {
                self.publish_key_deleted(host);
                // Asked again after the backoff: a token of a deleted key
                // never works again, but the gateway may be given another.
                self.failed(host, metrics);
                return true;
            }
            Some(refused) => {
                // The cached vault stays: it still masks what it holds, and
                // restoring stops by itself once the feed is stale.
                let cause = Refusal::of_control(refused);
                host.log(
                    Level::Error,
                    &format!(
                        "latet sync: the control service refused the {} call with status {} ({})",
                        kind_name(kind),
                        answer.status,
                        cause.error_type()
                    ),
                );
                self.publish_cause(host, Some(cause));
                self.failed(host, metrics);
                return true;
            }
            None => {}
        }
        if kind == InFlight::Snapshot && answer.status == 304 {
            let published = self.republish_snapshot(host, metrics);
            self.settle(host, metrics, published);
            return true;
        }
        if answer.status != 200 {
            host.log(
                Level::Warn,
                &format!(
                    "latet sync: {} call answered status {}",
                    kind_name(kind),
                    answer.status
                ),
            );
            self.failed(host, metrics);
            return true;
        }
        let published = match kind {
            InFlight::Snapshot if answer.body_left > 0 => {
                self.publish_snapshot_windowed(host, metrics, answer)
            }
            InFlight::Snapshot => {
                self.publish_snapshot(host, metrics, &answer.body, answer.etag.as_deref())
            }
            InFlight::Feed => self.publish_feed(host, metrics, &answer.body),
        };
        self.settle(host, metrics, published);
        true
    }

    /// After an answer: published, the failures are over and the next call
    /// (a long-poll) leaves at once; not published, it counts as a failure.
    fn settle(&mut self, host: &dyn Host, metrics: &Metrics, published: bool) {
        if published {
            self.publish_cause(host, None);
            self.failures = 0;
            self.retry_at_ms = 0;
            self.step(host, metrics);
        } else {
            self.failed(host, metrics);
        }
    }

    /// Writes the sync cause when it changed (a fresh poller writes once).
    fn publish_cause(&mut self, host: &dyn Host, cause: Option<Refusal>) {
        if self.published_cause == Some(cause) {
            return;
        }
        if write_sync_cause(host, cause).is_ok() {
            self.published_cause = Some(cause);
        }
    }

    fn still_holder(&self, host: &dyn Host) -> bool {
        match read_lease(host).0 {
            Some(lease) => lease.holder == self.holder,
            // No lease record at all: nobody competes.
            None => true,
        }
    }

    fn failed(&mut self, host: &dyn Host, metrics: &Metrics) {
        metrics.add(host, Metric::FeedErrors, 1);
        self.failures = self.failures.saturating_add(1);
        let tick = u64::try_from(self.config.tick.as_millis()).unwrap_or(1000);
        let backoff = tick
            .saturating_mul(1 << self.failures.min(5))
            .min(MAX_BACKOFF_MS);
        self.retry_at_ms = host.now_ms().saturating_add(backoff);
    }

    /// The key was deleted: the shared snapshot and events are emptied,
    /// then the state record says so, and the workers are woken; each drops
    /// its copy and refuses requests (`latet_key_deleted`).
    fn publish_key_deleted(&mut self, host: &dyn Host) {
        let before = read_state(host);
        if before.is_some_and(|state| state.key_deleted) {
            return;
        }
        host.log(
            Level::Error,
            "latet sync: the control service answered that this gateway's key was deleted \
             (410 key_deleted); every cached value is dropped and requests are refused",
        );
        let state = PublishedState::key_deleted(before.as_ref(), host.now_ms());
        // Emptied first: a worker never reads a deleted key's values again.
        let emptied = clear_snapshot_tag(host).is_ok()
            && clear_snapshot(host).is_ok()
            && write_json(host, EVENTS_KEY, &Vec::<Event>::new(), None).is_ok();
        if !emptied || write_json(host, STATE_KEY, &state, None).is_err() {
            host.log(
                Level::Error,
                "latet sync: the deleted key could not be published to shared data",
            );
            return;
        }
        self.need_snapshot = false;
        self.wake(host, state.seq);
    }

    /// Publishes a snapshot answer: kept in shared data as it came (the
    /// compact form), after a check that every worker can read it. A JSON
    /// answer (a control service that does not know the compact form) is
    /// converted first.
    fn publish_snapshot(
        &mut self,
        host: &dyn Host,
        metrics: &Metrics,
        body: &[u8],
        etag: Option<&str>,
    ) -> bool {
        let converted;
        let (compact, etag) = if is_compact_snapshot(body) {
            (body, etag)
        } else {
            match parse_snapshot(body).and_then(|s| encode_snapshot(&s)) {
                Ok(bytes) => {
                    converted = bytes;
                    // The tag named the JSON bytes, not these.
                    (converted.as_slice(), None)
                }
                Err(err) => {
                    host.log(
                        Level::Error,
                        &format!("latet sync: snapshot refused: {err}"),
                    );
                    return false;
                }
            }
        };
        let (seq, entries) = match check_compact(compact) {
            Ok(read) => read,
            Err(err) => {
                host.log(
                    Level::Error,
                    &format!("latet sync: snapshot refused: {err}"),
                );
                return false;
            }
        };
        // Tag emptied, then the snapshot, its tag, its (empty) events, and
        // the state record last.
        if clear_snapshot_tag(host).is_err()
            || write_snapshot(host, compact, self.part_bytes).is_err()
        {
            return false;
        }
        let read = format!("{} bytes", compact.len());
        self.finish_snapshot(host, metrics, etag, seq, entries as u64, &read)
    }

    /// After a snapshot's bytes are in shared data: its tag (when the
    /// service sent one), its position published, and the log line
    /// (`read` says how much was read and how).
    fn finish_snapshot(
        &mut self,
        host: &dyn Host,
        metrics: &Metrics,
        etag: Option<&str>,
        seq: u64,
        entries: u64,
        read: &str,
    ) -> bool {
        if let Some(etag) = etag {
            let tag = SnapshotTag {
                etag: etag.to_string(),
                seq,
            };
            // Only an optimisation: a tag not written costs a whole
            // snapshot next time.
            let _ = write_snapshot_tag(host, &tag);
        }
        if !self.publish_at_snapshot(host, metrics, seq) {
            return false;
        }
        host.log(
            Level::Info,
            &format!("latet sync: snapshot published at seq {seq} ({entries} entries, {read})"),
        );
        true
    }

    /// Publishes a compact snapshot answer read in windows
    /// ([`crate::shared_snapshot::write_snapshot_windowed`]): every byte is
    /// read and checked once before anything is written, then again as the
    /// parts are cut and written. The VM holds the head, a window and a
    /// part at most, never the whole body.
    fn publish_snapshot_windowed(
        &mut self,
        host: &dyn Host,
        metrics: &Metrics,
        answer: &CalloutAnswer,
    ) -> bool {
        let total = answer.body.len() + answer.body_left;
        let read = |start: usize, len: usize| host.callout_body(start, len);
        let checked = split_windowed(total, self.part_bytes, 0, read, |_, _| {
            Ok::<(), std::convert::Infallible>(())
        });
        let (seq, entries) = match checked.map(|m| (m.seq(), m.entry_count())) {
            Ok((Ok(seq), entries)) => (seq, entries),
            Ok((Err(err), _)) | Err(SplitError::Bad(err)) => {
                host.log(
                    Level::Error,
                    &format!("latet sync: snapshot refused: {err}"),
                );
                return false;
            }
            Err(_) => {
                host.log(
                    Level::Warn,
                    "latet sync: snapshot answer could not be read from the host",
                );
                return false;
            }
        };
        if clear_snapshot_tag(host).is_err()
            || write_snapshot_windowed(host, total, self.part_bytes, read).is_err()
        {
            return false;
        }
        let read = format!("{total} bytes, read in windows");
        self.finish_snapshot(host, metrics, answer.etag.as_deref(), seq, entries, &read)
    }

    /// A 304: the shared snapshot is still the vault's state. It is
    /// published again at its position, as a fresh answer would be.
    fn republish_snapshot(&mut self, host: &dyn Host, metrics: &Metrics) -> bool {
        let sent = self.sent_tag.take();
        // Kept only while it is a manifest a worker can read (an earlier
        // build's form, left in shared data across a plugin reload, is not).
        let readable = crate::shared_snapshot::read_manifest(host).is_some();
        let Some(tag) =
            read_snapshot_tag(host).filter(|t| readable && Some(&t.etag) == sent.as_ref())
        else {
            host.log(
                Level::Warn,
                "latet sync: snapshot answered 304 but the shared snapshot is no longer the one tagged; taking a new one",
            );
            return false;
        };
        if !self.publish_at_snapshot(host, metrics, tag.seq) {
            return false;
        }
        host.log(
            Level::Info,
            &format!("latet sync: snapshot unchanged at seq {} (304)", tag.seq),
        );
        true
    }

    /// The events emptied and the state record at a snapshot's `seq`.
    fn publish_at_snapshot(&mut self, host: &dyn Host, metrics: &Metrics, seq: u64) -> bool {
        if write_json(host, EVENTS_KEY, &Vec::<Event>::new(), None).is_err() {
            return false;
        }
        let state = PublishedState::at_snapshot(seq, host.now_ms());
        if write_json(host, STATE_KEY, &state, None).is_err() {
            return false;
        }
        self.need_snapshot = false;
        metrics.set(host, Metric::FeedPosition, seq);
        self.wake(host, seq);
        true
    }

    fn publish_feed(&mut self, host: &dyn Host, metrics: &Metrics, body: &[u8]) -> bool {
        let answer = match parse_feed_answer(body) {
            Ok(a) => a,
            Err(err) => {
                host.log(
                    Level::Error,
                    &format!("latet sync: feed answer refused: {err}"),
                );
                return false;
            }
        };
        let (published, new_events) = match plan_feed_answer(read_state(host), answer) {
            FeedAnswerPlan::NothingPublished => {
                self.need_snapshot = true;
                return true;
            }
            FeedAnswerPlan::SnapshotRequired => {
                host.log(Level::Info, "latet sync: feed says snapshot required");
                self.need_snapshot = true;
                return true;
            }
            FeedAnswerPlan::Append { published, events } => (published, events),
        };
        let publication =
            append_feed_events(published, read_events(host), new_events, host.now_ms());
        if let Some(FeedGap { after, found }) = publication.gap {
            host.log(
                Level::Warn,
                &format!("latet sync: feed gap after seq {after} (got {found}); taking a snapshot"),
            );
            self.need_snapshot = true;
        }
        // Snapshot, then events, then state, as always: a worker reading in
        // between sees a rewritten snapshot at the same `seq` (it only lacks
        // entries the events it applies next forget anyway).
        if let Some(forgotten) = &publication.forgotten {
            self.scrub_snapshot(host, forgotten);
        }
        let state = publication.state;
        if publication.advanced && write_json(host, EVENTS_KEY, &publication.events, None).is_err()
        {
            return false;
        }
        if write_json(host, STATE_KEY, &state, None).is_err() {
            return false;
        }
        metrics.set(host, Metric::FeedPosition, state.seq);
        if publication.advanced {
            self.wake(host, state.seq);
        }
        if publication.too_many_events(self.config.max_shared_events) {
            self.need_snapshot = true;
        }
        true
    }

    /// Rewrites the shared snapshot without the `forgotten` entries. When it
    /// cannot (unreadable, not writable) the forget is still published —
    /// workers must apply it — and a fresh snapshot is taken at once, which
    /// replaces the copy.
    fn scrub_snapshot(&mut self, host: &dyn Host, forgotten: &HashSet<EntryId>) {
        // The copy is about to differ from what the service tagged. (A tag
        // left behind is harmless: the forget moved the service's `seq`, so
        // the tag never matches again.)
        let _ = clear_snapshot_tag(host);
        if let Err(err) = crate::shared_snapshot::scrub_snapshot(host, forgotten) {
            host.log(
                Level::Warn,
                &format!(
                    "latet sync: shared snapshot not rewritten after a forget ({err:?}); taking a new one"
                ),
            );
            self.need_snapshot = true;
        }
    }

    /// Enqueues the new position to every worker's queue.
    fn wake(&self, host: &dyn Host, seq: u64) {
        let message = seq.to_string();
        for name in read_list(host, QUEUES_KEY) {
            if let Ok(Some(queue)) = host.queue_resolve(&self.vm_id, &name) {
                let _ = host.queue_enqueue(queue, message.as_bytes());
            }
        }
    }
}

/// The `seq` and entry count of a compact snapshot, once every byte of it
/// has been read (a worker must be able to build its index from it).
fn check_compact(bytes: &[u8]) -> Result<(u64, usize), latet_core::CoreError> {
    let compact = CompactSnapshot::parse(bytes)?;
    let mut entries = 0;
    for entry in compact.entries() {
        entry?;
        entries += 1;
    }
    Ok((compact.seq, entries))
}

fn kind_name(kind: InFlight) -> &'static str {
    match kind {
        InFlight::Snapshot => "snapshot",
        InFlight::Feed => "feed",
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests;
