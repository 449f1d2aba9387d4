//! What the VMs did, in order: every log line, metric change, header change,
//! local reply, callout, queue message and trap. Tests assert on it and print
//! it (`Host::dump`) when they fail.

use crate::abi::{MetricKind, LOG_LEVELS};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One thing a VM did.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// `proxy_log`.
    Log {
        /// The ABI level number (0 trace … 5 critical).
        level: u32,
        /// The line.
        message: String,
    },
    /// A line written to stdout (fd 1) or stderr (fd 2) through WASI.
    Output {
        /// 1 or 2.
        fd: u32,
        /// The line, without its newline.
        line: String,
    },
    /// A header map changed (`add`, `replace`, `remove` or `set_pairs`).
    HeaderChange {
        /// Which map.
        map: String,
        /// What was done.
        op: &'static str,
        /// The header name (empty for `set_pairs`).
        name: String,
        /// The new value (empty for `remove`).
        value: String,
    },
    /// A body buffer was replaced (`proxy_set_buffer_bytes`).
    BodyChange {
        /// Which buffer.
        buffer: String,
        /// The buffer after the change.
        body: Vec<u8>,
    },
    /// A local reply was sent.
    LocalReply {
        /// HTTP status.
        status: u32,
        /// The details string.
        details: String,
        /// Headers.
        headers: Vec<(String, String)>,
        /// Body.
        body: Vec<u8>,
    },
    /// A metric was defined, changed or recorded.
    Metric {
        /// Name.
        name: String,
        /// What was done (`define`, `increment`, `record`).
        op: &'static str,
        /// The argument.
        value: i64,
    },
    /// A callout was dispatched.
    Callout {
        /// Its token.
        token: u32,
        /// The upstream (cluster) named.
        upstream: String,
        /// Its headers.
        headers: Vec<(String, String)>,
        /// Its body.
        body: Vec<u8>,
    },
    /// A callout answer was delivered.
    CalloutAnswer {
        /// The token.
        token: u32,
        /// `:status` of the answer, or 0 for a failure.
        status: u32,
    },
    /// A message was put on a shared queue.
    Enqueue {
        /// Queue name.
        queue: String,
        /// The message.
        message: Vec<u8>,
    },
    /// Shared data was written.
    SharedData {
        /// Key.
        key: String,
        /// Outcome: `ok` or `cas-mismatch`.
        outcome: &'static str,
    },
    /// An exported call trapped (a panic, `unreachable`, out of bounds…).
    Trap {
        /// The export called.
        call: String,
        /// wasmtime's message.
        message: String,
    },
    /// A host-side note (a callback called, a stream resumed, a drop).
    Note(String),
}

/// An event with where and when it happened.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// Host clock (ms since the host started) when it happened.
    pub at_ms: u64,
    /// The VM's name.
    pub vm: String,
    /// The effective context id (0 when none).
    pub context: u32,
    /// What happened.
    pub event: Event,
}

/// A metric's current state.
#[derive(Clone, Debug, PartialEq)]
pub struct Metric {
    /// Its kind.
    pub kind: MetricKind,
    /// Counter or gauge value; for a histogram, the last sample.
    pub value: i64,
    /// Histogram samples.
    pub samples: Vec<u64>,
}

/// Formats records and metrics for a failing test's message.
pub fn format_dump(records: &[Record], metrics: &BTreeMap<String, Metric>) -> String {
    let mut out = String::from("---- what the VMs did ----\n");
    for record in records {
        let _ = writeln!(
            out,
            "[+{}ms] {} ctx {}: {}",
            record.at_ms,
            record.vm,
            record.context,
            describe(&record.event)
        );
    }
    out.push_str("---- metrics ----\n");
    for (name, metric) in metrics {
        let _ = writeln!(
            out,
            "{name} ({:?}) = {} {}",
            metric.kind,
            metric.value,
            if metric.samples.is_empty() {
                String::new()
            } else {
                format!("samples {:?}", metric.samples)
            }
        );
    }
    out
}

fn describe(event: &Event) -> String {
    match event {
        Event::Log { level, message } => {
            let name = LOG_LEVELS.get(*level as usize).copied().unwrap_or("LEVEL?");
            format!("{name} {message}")
        }
        Event::Output { fd, line } => format!("fd{fd} {line}"),
        Event::HeaderChange {
            map,
            op,
            name,
            value,
        } => format!("{map} {op} {name}: {value}"),
        Event::BodyChange { buffer, body } => {
            format!("{buffer} set ({} bytes) {}", body.len(), preview(body))
        }
        Event::LocalReply {
            status,
            details,
            headers,
            body,
        } => {
            format!(
                "local reply {status} {details} {headers:?} {}",
                preview(body)
            )
        }
        Event::Metric { name, op, value } => format!("metric {op} {name} {value}"),
        Event::Callout {
            token,
            upstream,
            headers,
            body,
        } => {
            format!(
                "callout #{token} to {upstream} {headers:?} {}",
                preview(body)
            )
        }
        Event::CalloutAnswer { token, status } => format!("callout #{token} answered {status}"),
        Event::Enqueue { queue, message } => format!("enqueue {queue} {}", preview(message)),
        Event::SharedData { key, outcome } => format!("shared data {key}: {outcome}"),
        Event::Trap { call, message } => format!("TRAP in {call}: {message}"),
        Event::Note(note) => note.clone(),
    }
}

/// The first 200 bytes of a body, lossily as text.
fn preview(bytes: &[u8]) -> String {
    let shown = &bytes[..bytes.len().min(200)];
    let more = if bytes.len() > 200 { "…" } else { "" };
    format!("{:?}{more}", String::from_utf8_lossy(shown))
}
