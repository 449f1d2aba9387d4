//! One request and its answer through the filter: the state machine the
//! proxy-wasm HTTP context forwards to.
//!
//! Request: headers (415 for an encoded body, `content-length` and
//! `accept-encoding` removed; every header, the path and the query examined
//! and masked, new values there asking for entries with the request paused)
//! → body buffered to the limit (413 beyond) → catch-up → mask → for new
//! values one entries callout, the request paused and resumed on the answer
//! → on failure, the configured failure mode. Trailers end the body: they
//! are examined (new values there become placeholders) and the body is
//! masked then, never forwarded unexamined.
//! Answer: SSE restored chunk by chunk; anything else restored whole at the
//! end of the stream; nothing restored when the feed is stale.

use crate::config::FailureMode;
use crate::config::RestoreScopeMode;
use crate::host::{header, Callout, CalloutAnswer, Flow, Host, Level};
use crate::metrics::{Metric, Stopwatch};
use crate::poller::ENTRIES_PATH;
use crate::reply::Refusal;
use crate::shared::read_sync_cause;
use crate::worker::Worker;
use latet_core::mask::{MaskOptions, MaskOutcome, MaskStats};
use latet_core::provider::ProviderRef;
use latet_core::restore::{
    restore_body, AnswerFormat, RequestScope, RestoreStats, RestoreView, StreamRestorer,
};
use latet_core::wire::{
    control_refusal, parse_entries_response, ControlRefusal, EntriesRequest, NewValue,
    MAX_VALUES_PER_CALL, WIRE_VERSION,
};
use latet_core::CoreError;
use std::rc::Rc;
use transport::{Section, SectionOutcome};

/// The `:path` a request refused at its headers is left with, so that
/// nothing unexamined reaches Envoy's access log.
pub const REFUSED_PATH: &str = "/latet-refused";

/// Header set on answers that were not restored, with the reason.
pub const RESTORE_HEADER: &str = "x-latet-restore";

/// How many entries callouts one request may make without progress: one
/// for its headers and one for its body, each asked once more when a forget
/// between the answer and its use made the entries stale. A request with
/// more new values than one call carries asks in chunks; a chunk that left
/// fewer new values than the call before is progress, not counted.
const MAX_ENTRIES_CALLOUTS: u8 = 4;

/// Where the request is.
#[derive(Debug)]
enum RequestPhase {
    Headers,
    /// The headers' new values wait for entries (the request is paused;
    /// `end_of_stream`: no body follows).
    AwaitingHeaderEntries {
        token: u32,
        end_of_stream: bool,
    },
    Body,
    AwaitingEntries {
        token: u32,
        body: Vec<u8>,
        size: usize,
    },
    Forwarded,
    Replied,
}

/// What an entries callout was for.
enum Pending {
    Body { body: Vec<u8>, size: usize },
    Headers { end_of_stream: bool },
}

/// How the answer is handled.
enum ResponseMode {
    PassThrough,
    Whole,
    Stream(StreamRestorer),
}

/// One request/answer exchange.
pub struct Exchange {
    worker: Rc<Worker>,
    request: RequestPhase,
    response: ResponseMode,
    provider: ProviderRef,
    /// The request's `:path` as sent (how its answer is framed may
    /// depend on it: Gemini's JSON-array stream).
    path: String,
    entries_callouts: u8,
    /// How many new values the last entries call was asked for (all of
    /// them, before the chunk was cut): progress is fewer than that.
    last_new_values: Option<usize>,
    /// Why the last entries call gave nothing: the refusal under
    /// `failureMode: reject`, the cause logged under `redact`.
    entries_failure: Refusal,
    /// The request body's buffered size so far (trailers end it).
    body_size: usize,
    /// The entries this request's masking used: what its answer restores
    /// under `restoreScope: request`. Ids only; freed with the exchange.
    scope: RequestScope,
    /// Time spent on this request's masking and restoring so far (µs), and
    /// when its entries callout was sent: the duration histograms.
    timing: Timing,
}

/// What the duration histograms of one exchange add up.
#[derive(Default)]
struct Timing {
    mask_us: u64,
    restore_us: u64,
    callout: Stopwatch,
}

impl Exchange {
    pub fn new(worker: Rc<Worker>) -> Self {
        // Until the headers name a path: the every-string fallback.
        let provider = latet_core::provider::GENERIC_JSON;
        Exchange {
            worker,
            request: RequestPhase::Headers,
            response: ResponseMode::PassThrough,
            provider,
            path: String::new(),
            entries_callouts: 0,
            last_new_values: None,
            entries_failure: Refusal::EntriesUnavailable,
            body_size: 0,
            scope: RequestScope::default(),
            timing: Timing::default(),
        }
    }

    /// True once the filter answered the request itself.
    pub fn replied(&self) -> bool {
        matches!(self.request, RequestPhase::Replied)
    }

    fn refuse(&mut self, host: &dyn Host, refusal: Refusal) -> Flow {
        self.worker.metrics.refused(host, refusal);
        host.log(
            Level::Info,
            &format!(
                "latet: request refused with {} ({})",
                refusal.status(),
                refusal.error_type()
            ),
        );
        if matches!(
            self.request,
            RequestPhase::Headers | RequestPhase::AwaitingHeaderEntries { .. }
        ) {
            // The path was not examined (or holds a value): the access log
            // must not print it.
            host.set_request_header(":path", &[REFUSED_PATH.to_string()]);
        }
        refusal.send(host);
        self.request = RequestPhase::Replied;
        Flow::Pause
    }

    /// Why the vault cannot serve a request now, if it cannot: the key was
    /// deleted, no snapshot yet (with the sync service's cause when it
    /// published one: unknown cluster, refused token, disabled key), or
    /// events it could not apply.
    fn vault_refusal(&self, host: &dyn Host, caught_up: &crate::vault::CatchUp) -> Option<Refusal> {
        let vault = self.worker.vault.borrow();
        if vault.is_key_deleted() {
            Some(Refusal::KeyDeleted)
        } else if !vault.is_ready() {
            Some(read_sync_cause(host).unwrap_or(Refusal::VaultNotReady))
        } else if !caught_up.current {
            Some(Refusal::VaultBehind)
        } else {
            None
        }
    }

    /// Request headers. They are read from the host once: the checks, the
    /// path and the masking all take them from that read.
    pub fn on_request_headers(&mut self, host: &dyn Host, end_of_stream: bool) -> Flow {
        let Ok(mut pairs) = host.request_headers() else {
            // Unreadable: not examined, so not forwarded.
            return self.refuse(host, Refusal::BadHeaders);
        };
        if let Some(encoding) = header(&pairs, "content-encoding") {
            if !encoding.trim().eq_ignore_ascii_case("identity") && !end_of_stream {
                return self.refuse(host, Refusal::EncodedBody);
            }
        }
        // The body changes length (Envoy truncates or hangs otherwise), and
        // answers must come back as text to be restored. Removed only when
        // sent (a host call each).
        for name in ["content-length", "accept-encoding"] {
            if header(&pairs, name).is_some() {
                host.remove_request_header(name);
                pairs.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
            }
        }
        let path = header(&pairs, ":path").unwrap_or_default().to_string();
        self.provider = self.worker.config.provider_for(&path);
        self.path = path;
        // Headers, path and query leave now: they are examined first, with
        // every forget applied.
        let caught_up = self.worker.catch_up(host);
        if let Some(refusal) = self.vault_refusal(host, &caught_up) {
            return self.refuse(host, refusal);
        }
        self.mask_headers(host, Some(pairs), end_of_stream, false, false)
    }

    /// Masks the headers, path and query; goes on to the body, asks for
    /// entries, or refuses. `resuming`: the request is paused.
    /// `pairs`: the headers as just read (`None`: read them again).
    fn mask_headers(
        &mut self,
        host: &dyn Host,
        pairs: Option<Vec<(String, String)>>,
        end_of_stream: bool,
        resuming: bool,
        redact_new: bool,
    ) -> Flow {
        let findings = self.worker.config.header_findings;
        let watch = Stopwatch::start(host);
        let outcome = {
            let mut vault = self.worker.vault.borrow_mut();
            transport::mask_section(
                host,
                &mut vault,
                Section::Headers,
                pairs,
                findings,
                redact_new,
            )
        };
        self.timing.mask_us += watch.elapsed_us(host);
        match outcome {
            Ok(SectionOutcome::Done {
                values_masked,
                used,
            }) => {
                self.scope.extend(&used);
                self.worker
                    .metrics
                    .add(host, Metric::ValuesMasked, values_masked);
                self.request = if end_of_stream {
                    self.count_masked(host);
                    RequestPhase::Forwarded
                } else {
                    RequestPhase::Body
                };
                if resuming {
                    host.resume_request();
                }
                Flow::Continue
            }
            Ok(SectionOutcome::NeedEntries(values)) => {
                if self.entries_callouts >= MAX_ENTRIES_CALLOUTS {
                    return self.fail_headers(host, end_of_stream, resuming);
                }
                match self.dispatch_entries(host, values) {
                    Some(token) => {
                        self.request = RequestPhase::AwaitingHeaderEntries {
                            token,
                            end_of_stream,
                        };
                        Flow::Pause
                    }
                    None => self.fail_headers(host, end_of_stream, resuming),
                }
            }
            Ok(SectionOutcome::Refuse(refusal)) => self.refuse(host, refusal),
            Err(err) => {
                host.log(Level::Warn, &format!("latet: headers not masked: {err}"));
                self.refuse(host, Refusal::BadHeaders)
            }
        }
    }

    /// The failure mode for headers: reject (503) or redact new values.
    fn fail_headers(&mut self, host: &dyn Host, end_of_stream: bool, resuming: bool) -> Flow {
        if self.worker.config.failure_mode == FailureMode::Reject {
            return self.refuse(host, self.entries_failure);
        }
        self.worker.metrics.add(host, Metric::RequestsRedacted, 1);
        self.mask_headers(host, None, end_of_stream, resuming, true)
    }

    /// Request trailers: they end the body. Examined (new values become
    /// placeholders: nothing waits for a callout after the body), then the
    /// body buffered so far is masked as at its end.
    pub fn on_request_trailers(&mut self, host: &dyn Host) -> Flow {
        match self.request {
            RequestPhase::Body | RequestPhase::Headers | RequestPhase::Forwarded => {}
            RequestPhase::AwaitingHeaderEntries { .. }
            | RequestPhase::AwaitingEntries { .. }
            | RequestPhase::Replied => return Flow::Pause,
        }
        let findings = self.worker.config.header_findings;
        let watch = Stopwatch::start(host);
        let outcome = {
            let mut vault = self.worker.vault.borrow_mut();
            transport::mask_section(host, &mut vault, Section::Trailers, None, findings, true)
        };
        self.timing.mask_us += watch.elapsed_us(host);
        match outcome {
            Ok(SectionOutcome::Done {
                values_masked,
                used,
            }) => {
                self.scope.extend(&used);
                self.worker
                    .metrics
                    .add(host, Metric::ValuesMasked, values_masked);
            }
            Ok(SectionOutcome::Refuse(refusal)) => return self.refuse(host, refusal),
            // Redacting never needs entries; refuse rather than forward.
            Ok(SectionOutcome::NeedEntries(_)) | Err(_) => {
                return self.refuse(host, Refusal::BadHeaders)
            }
        }
        if matches!(self.request, RequestPhase::Body) {
            if self.body_size == 0 {
                // Headers then trailers: no body to mask.
                self.request = RequestPhase::Forwarded;
                return Flow::Continue;
            }
            // The body never carried its end: it ends here.
            return self.on_request_body(host, self.body_size, true);
        }
        Flow::Continue
    }

    /// A request body callback (`size` is the buffered size so far).
    pub fn on_request_body(&mut self, host: &dyn Host, size: usize, end_of_stream: bool) -> Flow {
        match self.request {
            RequestPhase::Body => {}
            RequestPhase::AwaitingEntries { .. }
            | RequestPhase::AwaitingHeaderEntries { .. }
            | RequestPhase::Replied => return Flow::Pause,
            RequestPhase::Headers | RequestPhase::Forwarded => return Flow::Continue,
        }
        self.body_size = size;
        if size > self.worker.config.body_limit_bytes {
            return self.refuse(host, Refusal::BodyTooLarge);
        }
        if !end_of_stream {
            return Flow::Pause;
        }
        // Forgets first: before the body is read or masked.
        let caught_up = self.worker.catch_up(host);
        if let Some(refusal) = self.vault_refusal(host, &caught_up) {
            return self.refuse(host, refusal);
        }
        let body = host.request_body(size).unwrap_or_default();
        self.mask_and_go(host, body, size, false)
    }

    /// Masks `body`; forwards it, asks for entries, or fails by the mode.
    /// `resuming`: the request is paused and must be resumed to go on.
    fn mask_and_go(&mut self, host: &dyn Host, body: Vec<u8>, size: usize, resuming: bool) -> Flow {
        let watch = Stopwatch::start(host);
        let outcome = self.worker.vault.borrow_mut().mask(
            self.provider,
            &body,
            MaskOptions { redact_new: false },
        );
        self.timing.mask_us += watch.elapsed_us(host);
        match outcome {
            Ok(MaskOutcome::Masked {
                body: masked,
                stats,
                used,
            }) => {
                self.scope.extend(&used);
                self.forward(host, masked, size, &stats, resuming)
            }
            Ok(MaskOutcome::NeedEntries { values }) => {
                self.ask_entries(host, values, body, size, resuming)
            }
            Err(err) => {
                host.log(Level::Warn, &format!("latet: body not masked: {err}"));
                let refusal = match err {
                    CoreError::ValueInVerbatimField { .. } => Refusal::ValueInVerbatimField,
                    _ => Refusal::BadBody,
                };
                self.refuse(host, refusal)
            }
        }
    }

    fn forward(
        &mut self,
        host: &dyn Host,
        masked: Option<Vec<u8>>,
        size: usize,
        stats: &MaskStats,
        resuming: bool,
    ) -> Flow {
        if let Some(masked) = masked {
            if host.set_request_body(size, &masked).is_err() {
                host.log(Level::Error, "latet: masked body could not be set");
                return self.refuse(host, Refusal::EntriesUnavailable);
            }
        }
        self.count_masked(host);
        let metrics = &self.worker.metrics;
        metrics.add(host, Metric::ValuesMasked, stats.values_masked);
        metrics.add(host, Metric::MemoHits, stats.memo_hits);
        self.request = RequestPhase::Forwarded;
        if resuming {
            host.resume_request();
        }
        Flow::Continue
    }

    /// Counts a request that leaves masked, with the time its masking took.
    fn count_masked(&self, host: &dyn Host) {
        let metrics = &self.worker.metrics;
        metrics.add(host, Metric::RequestsMasked, 1);
        metrics.set(host, Metric::MaskDuration, self.timing.mask_us);
    }

    fn ask_entries(
        &mut self,
        host: &dyn Host,
        values: Vec<NewValue>,
        body: Vec<u8>,
        size: usize,
        resuming: bool,
    ) -> Flow {
        if self.entries_callouts >= MAX_ENTRIES_CALLOUTS {
            return self.fail(host, body, size, resuming);
        }
        match self.dispatch_entries(host, values) {
            Some(token) => {
                self.request = RequestPhase::AwaitingEntries { token, body, size };
                Flow::Pause
            }
            None => self.fail(host, body, size, resuming),
        }
    }

    /// Sends one entries callout for `values` (the first
    /// [`MAX_VALUES_PER_CALL`] of them: the rest are asked for when the
    /// masking that follows finds them still new); its token, or `None`
    /// when it could not be sent (counted and logged).
    fn dispatch_entries(&mut self, host: &dyn Host, mut values: Vec<NewValue>) -> Option<u32> {
        let progress = self.last_new_values.is_some_and(|last| values.len() < last);
        self.last_new_values = Some(values.len());
        if !progress {
            self.entries_callouts += 1;
        }
        values.truncate(MAX_VALUES_PER_CALL);
        let metrics = &self.worker.metrics;
        metrics.add(host, Metric::NewValues, values.len());
        metrics.add(host, Metric::EntriesCallouts, 1);
        let request = EntriesRequest {
            version: WIRE_VERSION,
            values,
        };
        let payload = serde_json::to_vec(&request).ok()?;
        let config = &self.worker.config;
        let bearer = format!("Bearer {}", config.gateway_token.expose());
        let callout = Callout {
            cluster: &config.control_cluster,
            headers: vec![
                (":method", "POST"),
                (":path", ENTRIES_PATH),
                (":authority", &config.control_authority),
                ("authorization", &bearer),
                ("content-type", "application/json"),
            ],
            body: Some(&payload),
            timeout: config.callout_timeout,
        };
        self.timing.callout = Stopwatch::start(host);
        match host.dispatch(&callout) {
            Ok(token) => Some(token),
            Err(err) => {
                let (refusal, cause) = Refusal::of_dispatch_error(err, &config.control_cluster);
                self.entries_failure = refusal;
                host.log(
                    Level::Warn,
                    &format!("latet: entries call not dispatched: {cause}"),
                );
                self.worker
                    .metrics
                    .add(host, Metric::EntriesCalloutFailures, 1);
                None
            }
        }
    }

    /// The entries callout answered.
    pub fn on_callout(&mut self, host: &dyn Host, token: u32, answer: &CalloutAnswer) {
        let pending = match std::mem::replace(&mut self.request, RequestPhase::Body) {
            RequestPhase::AwaitingEntries {
                token: t,
                body,
                size,
            } if t == token => Pending::Body { body, size },
            RequestPhase::AwaitingHeaderEntries {
                token: t,
                end_of_stream,
            } if t == token => Pending::Headers { end_of_stream },
            other => {
                self.request = other;
                return;
            }
        };
        let waited = self.timing.callout.elapsed_us(host);
        self.worker
            .metrics
            .set(host, Metric::EntriesCalloutDuration, waited);
        let refused = control_refusal(answer.status, &answer.body);
        if refused == Some(ControlRefusal::KeyDeleted) {
            // Before the poller publishes it: this worker drops the vault now.
            host.log(
                Level::Warn,
                "latet: the entries call answered that the key was deleted; this worker dropped its vault",
            );
            self.worker.vault.borrow_mut().drop_deleted_key();
            self.refuse(host, Refusal::KeyDeleted);
            return;
        }
        self.entries_failure = refused.map_or(Refusal::EntriesUnavailable, Refusal::of_control);
        // Forgets that arrived while waiting go first.
        let caught_up = self.worker.catch_up(host);
        if let Some(refusal) = self.vault_refusal(host, &caught_up) {
            self.refuse(host, refusal);
            return;
        }
        let added = if answer.status == 200 {
            match parse_entries_response(&answer.body) {
                Ok(entries) => self.worker.vault.borrow_mut().add_entries(entries),
                Err(err) => Err(err),
            }
        } else {
            Err(CoreError::Wire(format!(
                "entries call answered status {} ({})",
                answer.status,
                self.entries_failure.error_type()
            )))
        };
        // A forget that moved the generation in between: mask again, which
        // asks anew (at most MAX_ENTRIES_CALLOUTS in all).
        let retry = match &added {
            Ok(_) => true,
            Err(err) => {
                host.log(Level::Warn, &format!("latet: entries not used: {err}"));
                self.worker
                    .metrics
                    .add(host, Metric::EntriesCalloutFailures, 1);
                matches!(err, CoreError::StaleGeneration { .. })
            }
        };
        match (pending, retry) {
            (Pending::Body { body, size }, true) => {
                self.mask_and_go(host, body, size, true);
            }
            (Pending::Body { body, size }, false) => {
                self.fail(host, body, size, true);
            }
            (Pending::Headers { end_of_stream }, true) => {
                self.mask_headers(host, None, end_of_stream, true, false);
            }
            (Pending::Headers { end_of_stream }, false) => {
                self.fail_headers(host, end_of_stream, true);
            }
        }
    }

    /// The failure mode: reject (503) or redact new values and forward.
    fn fail(&mut self, host: &dyn Host, body: Vec<u8>, size: usize, resuming: bool) -> Flow {
        if self.worker.config.failure_mode == FailureMode::Reject {
            return self.refuse(host, self.entries_failure);
        }
        let watch = Stopwatch::start(host);
        let outcome = self.worker.vault.borrow_mut().mask(
            self.provider,
            &body,
            MaskOptions { redact_new: true },
        );
        self.timing.mask_us += watch.elapsed_us(host);
        match outcome {
            Ok(MaskOutcome::Masked {
                body: masked,
                stats,
                used,
            }) => {
                self.scope.extend(&used);
                self.worker.metrics.add(host, Metric::RequestsRedacted, 1);
                self.forward(host, masked, size, &stats, resuming)
            }
            // Redacting never needs entries; refuse rather than forward.
            Ok(MaskOutcome::NeedEntries { .. }) => self.refuse(host, Refusal::EntriesUnavailable),
            Err(CoreError::ValueInVerbatimField { .. }) => {
                self.refuse(host, Refusal::ValueInVerbatimField)
            }
            Err(_) => self.refuse(host, Refusal::BadBody),
        }
    }

    /// Answer headers: decides how the answer is restored.
    pub fn on_response_headers(&mut self, host: &dyn Host, end_of_stream: bool) -> Flow {
        self.response = ResponseMode::PassThrough;
        if self.replied() || end_of_stream {
            return Flow::Continue;
        }
        let caught_up = self.worker.catch_up(host);
        let ready = self.worker.vault.borrow().is_ready();
        if !ready || !caught_up.current || self.worker.is_stale(host) {
            // Leave surrogates as they are, and say so.
            host.set_response_header(RESTORE_HEADER, "stale");
            self.worker.metrics.add(host, Metric::RestoreStale, 1);
            self.worker.record_feed_age(host);
            return Flow::Continue;
        }
        if nothing_to_restore(&self.worker) {
            // No active surrogate and no retired one: the answer cannot hold
            // anything to restore or decline. Not buffered, not copied.
            return Flow::Continue;
        }
        if let Some(encoding) = host.response_header("content-encoding") {
            if !encoding.trim().eq_ignore_ascii_case("identity") {
                host.set_response_header(RESTORE_HEADER, "encoded");
                return Flow::Continue;
            }
        }
        let content_type = host.response_header("content-type").unwrap_or_default();
        let format = AnswerFormat::of(&content_type, &self.path);
        self.response = match StreamRestorer::new(format, self.provider) {
            Some(restorer) => ResponseMode::Stream(restorer),
            None if format == AnswerFormat::Whole => ResponseMode::Whole,
            None => return Flow::Continue,
        };
        host.remove_response_header("content-length");
        Flow::Continue
    }

    /// An answer body callback.
    pub fn on_response_body(&mut self, host: &dyn Host, size: usize, end_of_stream: bool) -> Flow {
        let worker = Rc::clone(&self.worker);
        let vault = worker.vault.borrow();
        let config = &worker.config;
        let scope = match config.restore_scope {
            RestoreScopeMode::Request => Some(&self.scope),
            RestoreScopeMode::Vault => None,
        };
        // The same scope and URL rule for every chunk of the answer; the
        // index is the one now (a forget applied mid-answer counts).
        let view = RestoreView::new(vault.index(), scope, &config.restore_into_urls);
        let stats = match &mut self.response {
            ResponseMode::PassThrough => return Flow::Continue,
            ResponseMode::Whole => {
                if !end_of_stream {
                    return Flow::Pause;
                }
                let body = host.response_body(size).unwrap_or_default();
                let watch = Stopwatch::start(host);
                let (restored, stats) = restore_body(view, &body);
                self.timing.restore_us += watch.elapsed_us(host);
                if let Some(restored) = restored {
                    if host.set_response_body(size, &restored).is_err() {
                        host.log(Level::Error, "latet: restored answer could not be set");
                    }
                }
                stats
            }
            ResponseMode::Stream(restorer) => {
                let chunk = if size > 0 {
                    host.response_body(size).unwrap_or_default()
                } else {
                    Vec::new()
                };
                let mut out = Vec::with_capacity(chunk.len() + 64);
                let was_broken = restorer.error().is_some();
                let watch = Stopwatch::start(host);
                let mut stats = restorer.push(view, &chunk, &mut out);
                if end_of_stream {
                    stats += restorer.finish(view, &mut out);
                }
                self.timing.restore_us += watch.elapsed_us(host);
                if let (false, Some(err)) = (was_broken, restorer.error()) {
                    // Position and reason only: the error never holds content.
                    host.log(
                        Level::Warn,
                        &format!("latet: answer stream broken off: {err}"),
                    );
                }
                if (out != chunk) && host.set_response_body(size, &out).is_err() {
                    host.log(Level::Error, "latet: restored chunk could not be set");
                }
                stats
            }
        };
        drop(vault);
        count_restore(&worker, host, stats);
        if end_of_stream {
            worker
                .metrics
                .set(host, Metric::RestoreDuration, self.timing.restore_us);
        }
        Flow::Continue
    }
}

/// True when the vault has no active entry and no retired surrogate: no
/// answer can hold anything to restore (or to decline).
fn nothing_to_restore(worker: &Worker) -> bool {
    let vault = worker.vault.borrow();
    let index = vault.index();
    index.is_empty() && index.retired_len() == 0
}

fn count_restore(worker: &Worker, host: &dyn Host, stats: RestoreStats) {
    worker.metrics.add(host, Metric::Restored, stats.restored);
    worker
        .metrics
        .add(host, Metric::RestoreDeclinedRetired, stats.declined_retired);
    worker.metrics.add(
        host,
        Metric::RestoreDeclinedOutOfScope,
        stats.declined_out_of_scope,
    );
    worker
        .metrics
        .add(host, Metric::RestoreDeclinedUrl, stats.declined_url);
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests;
mod transport;
