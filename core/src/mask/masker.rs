//! The request masker: one per worker, holding the detectors and the memo.

use super::find::{mask_text_once, MaskedText, NewValues, Scratch, TextMasking};
use super::memo::{MaskMemo, TextContext, MIN_MEMO_LEN};
use super::shape::{select, ApiShape, Treatment};
use super::MaskOptions;
use crate::detect::Detectors;
use crate::error::CoreError;
use crate::json::{Document, InOrderSplice, JsonError, Limits};
use crate::snapshot::SnapshotIndex;
use crate::wire::{EntryId, NewValue};

/// What masking a request gave. Its `Debug` shows sizes and counts only,
/// never the body.
#[derive(Clone, PartialEq, Eq)]
pub enum MaskOutcome {
    /// The request, masked. `body` is `None` when nothing changed: forward
    /// the original bytes.
    Masked {
        body: Option<Vec<u8>>,
        stats: MaskStats,
    },
    /// Distinct new values (detector findings the vault does not hold), in
    /// the order first seen. Get entries for them (one callout), add them to
    /// the index, and call [`Masker::mask_request`] again.
    NeedEntries { values: Vec<NewValue> },
}

impl std::fmt::Debug for MaskOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MaskOutcome::Masked { body, stats } => f
                .debug_struct("Masked")
                .field("body_bytes", &body.as_ref().map(Vec::len))
                .field("stats", stats)
                .finish(),
            MaskOutcome::NeedEntries { values } => f
                .debug_struct("NeedEntries")
                .field("values", values)
                .finish(),
        }
    }
}

/// Counts of one masking (no values: safe to log).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MaskStats {
    /// Strings a person wrote that were examined.
    pub texts: usize,
    /// Values replaced by their surrogate.
    pub values_masked: usize,
    /// New values replaced by a placeholder (redact mode).
    pub redacted: usize,
    /// Texts (and texts inside tool-call arguments) served from the memo.
    pub memo_hits: usize,
}

/// Masks requests for one worker: its detectors and its memo of masked
/// texts. Not shared between threads (one per VM).
pub struct Masker {
    detectors: Detectors,
    memo: MaskMemo,
    limits: Limits,
    scratch: Scratch,
    /// The index position last masked against, to notice a replaced index.
    last_seen: Option<(u64, u64)>,
}

/// One request's work in progress.
struct Run<'m> {
    detectors: &'m Detectors,
    memo: &'m mut MaskMemo,
    scratch: &'m mut Scratch,
    limits: Limits,
    index: &'m SnapshotIndex,
    options: MaskOptions,
    new_values: NewValues,
    stats: MaskStats,
}

impl Masker {
    /// A masker with `detectors` and a memo of at most about
    /// `memo_capacity_bytes` (0 disables the memo).
    pub fn new(detectors: Detectors, memo_capacity_bytes: usize) -> Self {
        Masker {
            detectors,
            memo: MaskMemo::new(memo_capacity_bytes),
            limits: Limits::default(),
            scratch: Scratch::default(),
            last_seen: None,
        }
    }

    /// Sets the JSON parsing limits (nesting depth) for request bodies and
    /// tool-call arguments.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The detectors this masker runs.
    pub fn detectors(&self) -> &Detectors {
        &self.detectors
    }

    /// Masks a request body of `shape` against `index`.
    ///
    /// Errors: a JSON shape whose body is not valid JSON (or nests deeper
    /// than the limit), a string with a bad escape, or a text body that is
    /// not UTF-8 — [`CoreError::BadBody`] naming the byte offset. The caller
    /// must then refuse the request (never forward it unmasked).
    ///
    /// When the caller replaces the index with a new snapshot, it must call
    /// [`Masker::clear_memo`] (a replaced index is also noticed when its feed
    /// position or add epoch goes back, but not in every case).
    pub fn mask_request(
        &mut self,
        index: &SnapshotIndex,
        shape: ApiShape,
        body: &[u8],
        options: MaskOptions,
    ) -> Result<MaskOutcome, CoreError> {
        self.notice_replaced_index(index);
        let mut run = Run {
            detectors: &self.detectors,
            memo: &mut self.memo,
            scratch: &mut self.scratch,
            limits: self.limits,
            index,
            options,
            new_values: NewValues::default(),
            stats: MaskStats::default(),
        };
        let body = match shape {
            ApiShape::Text => {
                let text = std::str::from_utf8(body).map_err(|e| {
                    CoreError::BadBody(format!("not UTF-8 at byte {}", e.valid_up_to()))
                })?;
                run.stats.texts = 1;
                run.unit(TextContext::Text, text, false, false)?
                    .masked
                    .map(|m| m.into_string().into_bytes())
            }
            _ => run.json_body(shape, body)?,
        };
        if !run.new_values.is_empty() {
            return Ok(MaskOutcome::NeedEntries {
                values: run.new_values.into_list(),
            });
        }
        Ok(MaskOutcome::Masked {
            body,
            stats: run.stats,
        })
    }

    /// Drops memo entries that used any of these entry ids (the forget path
    /// calls this with [`crate::snapshot::AppliedEvent::forgotten`]).
    pub fn forget(&mut self, ids: &[EntryId]) {
        self.memo.forget(ids);
    }

    /// Empties the memo (a new snapshot replaced the index).
    pub fn clear_memo(&mut self) {
        self.memo.clear();
    }

    /// Texts held in the memo.
    pub fn memo_len(&self) -> usize {
        self.memo.len()
    }

    /// Approximate bytes the memo holds.
    pub fn memo_bytes(&self) -> usize {
        self.memo.bytes()
    }

    fn notice_replaced_index(&mut self, index: &SnapshotIndex) {
        let now = (index.seq(), index.add_epoch());
        if let Some((seq, epoch)) = self.last_seen {
            if now.0 < seq || now.1 < epoch {
                self.memo.clear();
            }
        }
        self.last_seen = Some(now);
    }
}

impl Run<'_> {
    fn json_body(&mut self, shape: ApiShape, body: &[u8]) -> Result<Option<Vec<u8>>, CoreError> {
        let doc = Document::parse_with(body, self.limits)?;
        let targets = select(&doc, shape);
        self.stats.texts = targets.len();
        // Targets come in document order: the output is written as we go.
        let mut splice = InOrderSplice::new(body);
        for (node, treatment) in targets {
            let Some(text) = doc.str_value(node) else {
                continue;
            };
            let text = text?;
            let context = match treatment {
                Treatment::Text => TextContext::Text,
                Treatment::JsonText => TextContext::JsonText,
            };
            let plain_source = !doc.is_escaped(node);
            let masking = self.unit(context, &text, false, plain_source)?;
            if let Some(masked) = &masking.masked {
                if self.new_values.is_empty() {
                    splice.replace_string(doc.span(node), masked.as_str(), masking.plain)?;
                }
            }
        }
        if !self.new_values.is_empty() {
            return Ok(None);
        }
        Ok(splice.finish())
    }

    /// Masks one text, through the memo. `want_used` asks for the entries
    /// the masked text used even when it comes from the memo (the caller
    /// folds them into an outer text's record). `plain_source`: `text` is
    /// known to hold no byte a JSON string escapes (a string sent without
    /// escapes).
    fn unit(
        &mut self,
        context: TextContext,
        text: &str,
        want_used: bool,
        plain_source: bool,
    ) -> Result<TextMasking, CoreError> {
        let key = (self.memo.is_enabled() && text.len() >= MIN_MEMO_LEN)
            .then(|| self.memo.key(context, text));
        if let Some(key) = key {
            if let Some(hit) = self.memo.get(key, text, self.index, want_used) {
                self.stats.memo_hits += 1;
                self.stats.values_masked += hit.values_masked;
                return Ok(hit);
            }
        }
        let masking = match context {
            TextContext::Text => self.text(text, plain_source),
            TextContext::JsonText => self.json_text(text)?,
        };
        if let Some(key) = key {
            self.memo.insert(key, &masking, self.index);
        }
        Ok(masking)
    }

    fn text(&mut self, text: &str, plain_source: bool) -> TextMasking {
        let masking = mask_text_once(
            self.detectors,
            self.index,
            text,
            self.options,
            self.scratch,
            &mut self.new_values,
            plain_source,
        );
        self.stats.values_masked += masking.values_masked;
        self.stats.redacted += masking.redacted;
        masking
    }

    /// A string that holds JSON (tool-call arguments): every string value
    /// inside is masked and re-encoded; when it is not valid JSON, it is
    /// masked as text.
    fn json_text(&mut self, text: &str) -> Result<TextMasking, CoreError> {
        let inner = match Document::parse_with(text.as_bytes(), self.limits) {
            Ok(inner) => inner,
            Err(JsonError::TooDeep { offset, limit }) => {
                // Refuse rather than guess: deep JSON masked as text would
                // be fine too, but a clear error is easier to act on.
                return Err(JsonError::TooDeep { offset, limit }.into());
            }
            Err(_) => return Ok(self.text(text, false)),
        };
        // Decode every string first: a lone surrogate escape inside the
        // arguments is not JSON we can rewrite, so the whole text is masked
        // as text instead (before any inner text was counted).
        let mut values = Vec::new();
        for node in inner.strings() {
            match inner.str_value(node) {
                Some(Ok(value)) => values.push((inner.span(node), value, !inner.is_escaped(node))),
                Some(Err(_)) => return Ok(self.text(text, false)),
                None => {}
            }
        }
        let mut result = TextMasking::default();
        let mut splice = InOrderSplice::new(text.as_bytes());
        for (span, value, plain_source) in values {
            let masking = self.unit(TextContext::Text, &value, true, plain_source)?;
            result.absorb_counts(&masking);
            if let Some(masked) = &masking.masked {
                if !result.incomplete {
                    splice.replace_string(span, masked.as_str(), masking.plain)?;
                }
            }
        }
        if !result.incomplete {
            if let Some(bytes) = splice.finish() {
                let masked = String::from_utf8(bytes).map_err(|e| JsonError::NotUtf8 {
                    offset: e.utf8_error().valid_up_to(),
                })?;
                result.masked = Some(MaskedText::Owned(masked));
            }
        }
        result.used.sort_unstable();
        result.used.dedup();
        Ok(result)
    }
}
