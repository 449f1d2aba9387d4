//! One playground run: the filter's configuration, a vault and a request
//! in; what the filter would send upstream, and what it would give back for
//! an answer, out. The steps and the core calls are the filter's
//! (`plugin/src/exchange.rs`): `FilterConfig::parse`, the route table's
//! provider for the path, `Masker::mask_request` (asking for entries and
//! masking again when new values are found), then `restore_body` or a
//! `StreamRestorer` chosen by `AnswerFormat::of`, under the same
//! `RestoreView` (request scope, URL rule).
//!
//! Everything stays in the caller's memory: no log line, and errors name
//! the field, the kind or the position, never a value.

use crate::demo_vault::{self, ShownEntry};
use latet_core::config::{FilterConfig, RestoreScopeMode};
use latet_core::detect::Detectors;
use latet_core::mask::{MaskOptions, MaskOutcome, Masker};
use latet_core::provider::ProviderRef;
use latet_core::restore::{
    restore_body, AnswerFormat, RequestScope, RestoreStats, RestoreView, StreamRestorer,
};
use latet_core::snapshot::{SnapshotIndex, VaultMatch};
use latet_core::CoreError;
use serde::{Deserialize, Serialize};

/// The environment variable a `gatewayTokenEnv` names is taken as set: the
/// page has no environment, and the token is never used here.
const DEMO_TOKEN: &str = "playground-demo-token";

/// How many times a request is masked again after new entries (the
/// filter's bound on entries callouts).
const MAX_ENTRIES_ROUNDS: usize = 4;

/// What the page sends.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Call {
    /// The filter's configuration JSON, as pasted.
    pub config: String,
    /// The vault: a JSON list of entries, or empty.
    #[serde(default)]
    pub vault: String,
    /// The request's `:path` (routes the body to a provider).
    pub path: String,
    /// The request body.
    pub body: String,
    /// An answer to restore (optional).
    #[serde(default)]
    pub answer: Option<String>,
    /// The answer's `content-type` (default `application/json`).
    #[serde(default)]
    pub content_type: Option<String>,
    /// Feed the answer in chunks of this many bytes (default: one chunk).
    #[serde(default)]
    pub chunk_bytes: Option<usize>,
}

/// What the page gets back.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Outcome {
    /// Why nothing (or not everything) could be computed.
    pub error: Option<Problem>,
    /// The provider module that reads the request.
    pub provider: Option<String>,
    /// The body the provider would receive.
    pub masked: Option<String>,
    /// False when the filter would forward the body as it came.
    pub changed: bool,
    /// Surrogates in `masked` that stand for values of this request.
    pub spans: Vec<Span>,
    /// Entries the control service would create for this request.
    pub new_entries: Vec<ShownEntry>,
    /// Entries derived for pasted vault values without a surrogate.
    pub vault_derived: Vec<ShownEntry>,
    /// Values replaced.
    pub values_masked: usize,
    /// The answer as the agent would get it.
    pub restore: Option<RestoreOutcome>,
}

/// An error: where it is (`config`, `vault`, `request`, `answer`, `call`),
/// the field when one is at fault, and a message with no value in it.
#[derive(Debug, Serialize)]
pub struct Problem {
    pub stage: &'static str,
    pub field: Option<String>,
    pub message: String,
}

/// One surrogate in the masked body, in UTF-16 code units (JavaScript
/// string offsets) and in bytes.
#[derive(Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Span {
    pub start: usize,
    pub end: usize,
    pub byte_start: usize,
    pub byte_end: usize,
    pub kind: String,
    /// The entry is one this request created.
    pub new: bool,
}

/// What restoring the answer gave.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RestoreOutcome {
    /// `whole`, `sse`, `event-stream`, `json-array` or `passed` (left as
    /// it came, as the filter does for other formats or an empty vault).
    pub format: &'static str,
    /// The whole restored answer.
    pub restored: String,
    /// Chunk by chunk (streams): what came in and what went out.
    pub chunks: Vec<ChunkOut>,
    pub restored_count: usize,
    pub declined_retired: usize,
    pub declined_out_of_scope: usize,
    pub declined_url: usize,
    /// A stream broken off (position and reason only).
    pub error: Option<String>,
}

/// One simulated network chunk of a streamed answer.
#[derive(Debug, Serialize)]
pub struct ChunkOut {
    #[serde(rename = "in")]
    pub input: String,
    pub out: String,
}

impl Problem {
    fn new(stage: &'static str, field: Option<String>, message: impl Into<String>) -> Self {
        Problem {
            stage,
            field,
            message: message.into(),
        }
    }
}

/// Runs a call given as JSON; answers JSON (never fails: a bad call is an
/// outcome with an error).
pub fn run_json(call: &[u8]) -> Vec<u8> {
    let outcome = match serde_json::from_slice::<Call>(call) {
        Ok(call) => run(&call),
        Err(err) => Outcome {
            error: Some(Problem::new(
                "call",
                None,
                format!(
                    "the page's call is malformed ({:?} error at column {})",
                    err.classify(),
                    err.column()
                ),
            )),
            ..Outcome::default()
        },
    };
    serde_json::to_vec(&outcome).unwrap_or_else(|_| b"{\"error\":{\"stage\":\"call\",\"field\":null,\"message\":\"the answer could not be written\"}}".to_vec())
}

/// Runs a call.
pub fn run(call: &Call) -> Outcome {
    let mut outcome = Outcome::default();
    if let Err(problem) = run_into(call, &mut outcome) {
        outcome.error = Some(problem);
    }
    outcome
}

fn run_into(call: &Call, outcome: &mut Outcome) -> Result<(), Problem> {
    let config = FilterConfig::parse(call.config.as_bytes(), |_| Some(DEMO_TOKEN.to_string()))
        .map_err(|err| Problem::new("config", Some(err.field.clone()), err.to_string()))?;
    let (mut index, vault_derived) = demo_vault::index_of(&call.vault).map_err(|err| {
        Problem::new(
            "vault",
            Some(err.field.clone()),
            format!("vault field '{}': {}", err.field, err.reason),
        )
    })?;
    outcome.vault_derived = vault_derived;
    let provider = config.provider_for(&call.path);
    outcome.provider = Some(provider.name().to_string());
    let body = call.body.as_bytes();
    if body.len() > config.body_limit_bytes {
        return Err(Problem::new(
            "request",
            None,
            format!(
                "refused with 413: the body is {} bytes, over bodyLimitBytes ({})",
                body.len(),
                config.body_limit_bytes
            ),
        ));
    }
    let detectors = Detectors::new(&config.detectors)
        .map_err(|err| Problem::new("config", Some("detectors".into()), err.to_string()))?;
    let mut masker = Masker::new(detectors, config.memo_capacity_bytes);
    let masked = mask(&mut masker, &mut index, provider, body, outcome)?;
    let (masked, used) = masked;
    let mut scope = RequestScope::default();
    scope.extend(&used);
    let text = String::from_utf8_lossy(masked.as_deref().unwrap_or(body)).into_owned();
    outcome.changed = masked.is_some();
    outcome.spans = spans(&index, &text, &used, &outcome.new_entries);
    outcome.masked = Some(text);
    if let Some(answer) = &call.answer {
        let scope = match config.restore_scope {
            RestoreScopeMode::Request => Some(&scope),
            RestoreScopeMode::Vault => None,
        };
        let view = RestoreView::new(&index, scope, &config.restore_into_urls);
        let content_type = call.content_type.as_deref().unwrap_or("application/json");
        outcome.restore = Some(restore(
            view,
            provider,
            &call.path,
            content_type,
            answer.as_bytes(),
            call.chunk_bytes,
        ));
    }
    Ok(())
}

type Used = Vec<(
    latet_core::snapshot::Slot,
    latet_core::wire::EntryFingerprint,
)>;

/// Masks as the filter's exchange does: mask; for new values, entries (the
/// demo vault stands for the control service), added, then mask again.
fn mask(
    masker: &mut Masker,
    index: &mut SnapshotIndex,
    provider: ProviderRef,
    body: &[u8],
    outcome: &mut Outcome,
) -> Result<(Option<Vec<u8>>, Used), Problem> {
    for _ in 0..=MAX_ENTRIES_ROUNDS {
        let masked = masker
            .mask_request(index, provider, body, MaskOptions { redact_new: false })
            .map_err(refusal)?;
        match masked {
            MaskOutcome::Masked { body, stats, used } => {
                outcome.values_masked = stats.values_masked;
                return Ok((body, used));
            }
            MaskOutcome::NeedEntries { values } => {
                let created = demo_vault::create_entries(index, &values)
                    .map_err(|err| Problem::new("request", None, err.to_string()))?;
                outcome
                    .new_entries
                    .extend(created.iter().map(|e| ShownEntry::of(e, true)));
                demo_vault::add(index, created)
                    .map_err(|err| Problem::new("request", None, err.to_string()))?;
            }
        }
    }
    Err(Problem::new(
        "request",
        None,
        "refused with 503: new values kept appearing after entries were added",
    ))
}

/// The filter's refusal for a masking error (`plugin/src/exchange.rs`).
fn refusal(err: CoreError) -> Problem {
    let status = match err {
        CoreError::ValueInVerbatimField { .. } => "422 (latet_value_in_verbatim_field)",
        _ => "400 (latet_bad_body)",
    };
    Problem::new("request", None, format!("refused with {status}: {err}"))
}

/// The surrogates in `masked` of entries this request used.
fn spans(index: &SnapshotIndex, masked: &str, used: &Used, new: &[ShownEntry]) -> Vec<Span> {
    let mut found: Vec<VaultMatch> = Vec::new();
    index.find_surrogates(masked, &mut found);
    found.sort_by_key(|m| (m.start, std::cmp::Reverse(m.end)));
    let mut spans: Vec<Span> = Vec::with_capacity(found.len());
    for m in found {
        if !used.iter().any(|(slot, _)| *slot == m.slot) {
            continue;
        }
        if spans.last().is_some_and(|last| m.start < last.byte_end) {
            continue; // inside a longer surrogate already taken
        }
        let Some(entry) = index.entry(m.slot) else {
            continue;
        };
        let start = utf16_len(&masked[..m.start]);
        spans.push(Span {
            start,
            end: start + utf16_len(&masked[m.start..m.end]),
            byte_start: m.start,
            byte_end: m.end,
            kind: entry.kind.as_str().to_string(),
            new: new.iter().any(|n| n.surrogate == entry.surrogate),
        });
    }
    spans
}

fn utf16_len(text: &str) -> usize {
    text.encode_utf16().count()
}

/// Restores an answer as the filter's answer path does.
fn restore(
    view: RestoreView<'_>,
    provider: ProviderRef,
    path: &str,
    content_type: &str,
    answer: &[u8],
    chunk_bytes: Option<usize>,
) -> RestoreOutcome {
    let passed = || RestoreOutcome {
        format: "passed",
        restored: String::from_utf8_lossy(answer).into_owned(),
        ..RestoreOutcome::default()
    };
    let index = view.index();
    if index.is_empty() && index.retired_len() == 0 {
        return passed();
    }
    let format = AnswerFormat::of(content_type, path);
    let chunk = chunk_bytes.unwrap_or(answer.len()).max(1);
    let mut out = RestoreOutcome {
        format: match format {
            AnswerFormat::Whole => "whole",
            AnswerFormat::Sse => "sse",
            AnswerFormat::EventStream => "event-stream",
            AnswerFormat::JsonArray => "json-array",
            AnswerFormat::Other => "passed",
        },
        ..RestoreOutcome::default()
    };
    let stats = match StreamRestorer::new(format, provider) {
        Some(mut restorer) => {
            let mut whole = Vec::with_capacity(answer.len());
            let mut stats = RestoreStats::default();
            let pieces: Vec<&[u8]> = if answer.is_empty() {
                vec![&[][..]]
            } else {
                answer.chunks(chunk).collect()
            };
            let last = pieces.len() - 1;
            for (i, piece) in pieces.into_iter().enumerate() {
                let mut sent = Vec::with_capacity(piece.len() + 64);
                stats += restorer.push(view, piece, &mut sent);
                if i == last {
                    stats += restorer.finish(view, &mut sent);
                }
                out.chunks.push(ChunkOut {
                    input: String::from_utf8_lossy(piece).into_owned(),
                    out: String::from_utf8_lossy(&sent).into_owned(),
                });
                whole.extend_from_slice(&sent);
            }
            out.error = restorer
                .error()
                .map(|err| format!("stream broken off: {err}"));
            out.restored = String::from_utf8_lossy(&whole).into_owned();
            stats
        }
        None if format == AnswerFormat::Whole => {
            let (restored, stats) = restore_body(view, answer);
            out.restored =
                String::from_utf8_lossy(restored.as_deref().unwrap_or(answer)).into_owned();
            stats
        }
        None => return passed(),
    };
    out.restored_count = stats.restored;
    out.declined_retired = stats.declined_retired;
    out.declined_out_of_scope = stats.declined_out_of_scope;
    out.declined_url = stats.declined_url;
    out
}
