//! The request masker: one per worker, holding the detectors and the memo.

use super::clean_texts::{CleanTexts, MAX_CLEAN_LEN};
use super::find::{
    holds_value, mask_text_once, mask_whole_as, replacements, MaskedText, NewValues, Scratch,
    TextMasking,
};
use super::memo::{MaskMemo, TextContext, MIN_MEMO_LEN};
use super::views::{self, Reading};
use super::MaskOptions;
use crate::detect::Detectors;
use crate::error::CoreError;
use crate::json::{
    encode_into, needs_escape, Document, InOrderSplice, JsonError, Limits, NodeId, NodeKind,
};
use crate::kind::Kind;
use crate::provider::verbatim::field_for;
use crate::provider::{
    is_base64_media, is_data_url_media, BodyFormat, ProviderRef, Verbatim, VerbatimField,
};
use crate::snapshot::{EntryRef, Slot, SnapshotIndex};
use crate::surrogate::email_company_domain;
use crate::wire::{EntryFingerprint, EntryId, NewValue};
use std::ops::Range;

/// JSON written inside a JSON string (tool arguments, a tool's output) is
/// decoded and examined this many levels deep; deeper is refused rather
/// than examined as text, where escapes could hide a value.
pub const MAX_JSON_IN_STRING_DEPTH: usize = 4;

/// What masking a request gave. Its `Debug` shows sizes and counts only,
/// never the body.
#[derive(Clone, PartialEq, Eq)]
pub enum MaskOutcome {
    /// The request, masked. `body` is `None` when nothing changed: forward
    /// the original bytes.
    Masked {
        body: Option<Vec<u8>>,
        stats: MaskStats,
        /// The entries whose surrogates the masked body holds for values
        /// it sent (slot and id fingerprint, sorted): what its answer may restore
        /// ([`crate::restore::RequestScope`]). A surrogate the request
        /// carried as written is not among them.
        used: Vec<(Slot, EntryFingerprint)>,
    },
    /// Distinct new values (detector findings the vault does not hold), in
    /// the order first seen. Get entries for them (one callout), add them to
    /// the index, and call [`Masker::mask_request`] again.
    NeedEntries { values: Vec<NewValue> },
}

impl std::fmt::Debug for MaskOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MaskOutcome::Masked { body, stats, used } => f
                .debug_struct("Masked")
                .field("body_bytes", &body.as_ref().map(Vec::len))
                .field("stats", stats)
                .field("used", &used.len())
                .finish(),
            MaskOutcome::NeedEntries { values } => f
                .debug_struct("NeedEntries")
                .field("values", values)
                .finish(),
        }
    }
}

/// What masking a list of loose texts (header values, path and query
/// components) gave. Its `Debug` shows counts only.
#[derive(Clone, PartialEq, Eq)]
pub enum TextsOutcome {
    /// One entry per text: its masked form, or `None` when it is unchanged.
    Masked {
        texts: Vec<Option<String>>,
        stats: MaskStats,
        /// As [`MaskOutcome::Masked::used`].
        used: Vec<(Slot, EntryFingerprint)>,
    },
    /// Distinct new values, as for [`MaskOutcome::NeedEntries`].
    NeedEntries { values: Vec<NewValue> },
}

impl std::fmt::Debug for TextsOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TextsOutcome::Masked { texts, stats, .. } => f
                .debug_struct("Masked")
                .field("changed", &texts.iter().filter(|t| t.is_some()).count())
                .field("stats", stats)
                .finish(),
            TextsOutcome::NeedEntries { values } => f
                .debug_struct("NeedEntries")
                .field("values", values)
                .finish(),
        }
    }
}

/// Counts of one masking (no values: safe to log).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MaskStats {
    /// Strings, keys and numbers examined.
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
    clean: CleanTexts,
    limits: Limits,
    scratch: Scratch,
    /// The index position last masked against, to notice a replaced index.
    last_seen: Option<(u64, u64)>,
}

/// One request's work in progress.
struct Run<'m> {
    detectors: &'m Detectors,
    memo: &'m mut MaskMemo,
    clean: &'m mut CleanTexts,
    scratch: &'m mut Scratch,
    limits: Limits,
    index: &'m SnapshotIndex,
    options: MaskOptions,
    new_values: NewValues,
    stats: MaskStats,
    /// Every entry a text of this request was masked with.
    used: Vec<(Slot, EntryFingerprint)>,
}

impl Masker {
    /// A masker with `detectors` and a memo of at most about
    /// `memo_capacity_bytes` (0 disables the memo).
    pub fn new(detectors: Detectors, memo_capacity_bytes: usize) -> Self {
        Masker {
            detectors,
            memo: MaskMemo::new(memo_capacity_bytes),
            clean: CleanTexts::default(),
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

    /// Masks a request body sent to `provider` against `index`: every
    /// string value, object key and number at any depth (JSON inside
    /// strings included), but the provider's verbatim fields
    /// ([`crate::provider::Provider::verbatim_fields`]).
    ///
    /// Errors: a JSON provider whose body is not valid JSON (or nests deeper
    /// than the limit, or nests JSON in strings deeper than
    /// [`MAX_JSON_IN_STRING_DEPTH`]), a string with a bad escape, a text
    /// body that is not UTF-8 — [`CoreError::BadBody`] naming the byte
    /// offset; a value in a signed field —
    /// [`CoreError::ValueInVerbatimField`]. The caller must then refuse the
    /// request (never forward it unmasked).
    ///
    /// When the caller replaces the index with a new snapshot, it must call
    /// [`Masker::clear_memo`] (a replaced index is also noticed when its feed
    /// position or add epoch goes back, but not in every case).
    pub fn mask_request(
        &mut self,
        index: &SnapshotIndex,
        provider: ProviderRef,
        body: &[u8],
        options: MaskOptions,
    ) -> Result<MaskOutcome, CoreError> {
        self.notice_replaced_index(index);
        let mut run = Run {
            detectors: &self.detectors,
            memo: &mut self.memo,
            clean: &mut self.clean,
            scratch: &mut self.scratch,
            limits: self.limits,
            index,
            options,
            new_values: NewValues::default(),
            stats: MaskStats::default(),
            used: Vec::new(),
        };
        let body = match provider.body_format() {
            BodyFormat::Text => {
                let text = std::str::from_utf8(body).map_err(|e| {
                    CoreError::BadBody(format!("not UTF-8 at byte {}", e.valid_up_to()))
                })?;
                run.stats.texts = 1;
                run.unit(TextContext::Text, text, false, false, 0)?
                    .masked
                    .map(|m| m.into_string().into_bytes())
            }
            BodyFormat::Json => run.json_body(provider, body)?,
            BodyFormat::Multipart => run.multipart_body(body)?,
        };
        if !run.new_values.is_empty() {
            return Ok(MaskOutcome::NeedEntries {
                values: run.new_values.into_list(),
            });
        }
        Ok(MaskOutcome::Masked {
            body,
            stats: run.stats,
            used: run.into_used(),
        })
    }

    /// Masks loose texts (header values, decoded path and query components)
    /// against `index`, each as a body string would be (JSON written in one
    /// is examined as JSON). Errors as [`Masker::mask_request`].
    pub fn mask_texts(
        &mut self,
        index: &SnapshotIndex,
        texts: &[&str],
        options: MaskOptions,
    ) -> Result<TextsOutcome, CoreError> {
        self.notice_replaced_index(index);
        let mut run = Run {
            detectors: &self.detectors,
            memo: &mut self.memo,
            clean: &mut self.clean,
            scratch: &mut self.scratch,
            limits: self.limits,
            index,
            options,
            new_values: NewValues::default(),
            stats: MaskStats::default(),
            used: Vec::new(),
        };
        let mut out = Vec::with_capacity(texts.len());
        for text in texts {
            run.stats.texts += 1;
            let context = if looks_like_json(text) {
                TextContext::JsonText
            } else {
                TextContext::Text
            };
            let masking = run.unit(context, text, false, false, 0)?;
            out.push(masking.masked.map(MaskedText::into_string));
        }
        if !run.new_values.is_empty() {
            return Ok(TextsOutcome::NeedEntries {
                values: run.new_values.into_list(),
            });
        }
        Ok(TextsOutcome::Masked {
            texts: out,
            stats: run.stats,
            used: run.into_used(),
        })
    }

    /// Drops memo entries that used any of these entry ids (the forget path
    /// calls this with [`crate::snapshot::AppliedEvent::forgotten`]).
    pub fn forget(&mut self, ids: &[EntryId]) {
        self.memo.forget(ids);
        self.clean.clear();
    }

    /// Empties the memo and the short clean texts (a new snapshot
    /// replaced the index).
    pub fn clear_memo(&mut self) {
        self.memo.clear();
        self.clean.clear();
    }

    /// Short texts held as examined and clean.
    pub fn clean_texts_len(&self) -> usize {
        self.clean.len()
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
                self.clean.clear();
            }
        }
        self.last_seen = Some(now);
    }
}

/// An error of one JSON line of a multipart part, said where the line
/// starts in the whole body.
fn shifted(err: CoreError, line_at: usize) -> CoreError {
    match err {
        CoreError::BadBody(why) => {
            CoreError::BadBody(format!("multipart: the JSON line at byte {line_at}: {why}"))
        }
        other => other,
    }
}

impl Run<'_> {
    /// The entries used, sorted; an e-mail's company domain counts as
    /// sent with it (its surrogate is the domain part of the e-mail's).
    fn into_used(mut self) -> Vec<(Slot, EntryFingerprint)> {
        crate::sort::sort(&mut self.used);
        self.used.dedup();
        let domains: Vec<(Slot, EntryFingerprint)> = self
            .used
            .iter()
            .filter_map(|(slot, _)| self.index.entry(*slot))
            .filter(|entry| *entry.kind == Kind::Email)
            .filter_map(|entry| company_domain_entry(self.index, entry.value))
            .map(|domain| (domain.slot, domain.fingerprint))
            .collect();
        if !domains.is_empty() {
            self.used.extend(domains);
            crate::sort::sort(&mut self.used);
            self.used.dedup();
        }
        self.used
    }

    fn json_body(
        &mut self,
        provider: ProviderRef,
        body: &[u8],
    ) -> Result<Option<Vec<u8>>, CoreError> {
        let doc = Document::parse_with(body, self.limits)?;
        let mut splice = InOrderSplice::new(body);
        let mut whole = TextMasking::default();
        self.walk(&doc, provider.verbatim_fields(), &mut splice, &mut whole, 0)?;
        if whole.incomplete || !self.new_values.is_empty() {
            return Ok(None);
        }
        Ok(splice.finish())
    }

    /// A `multipart/form-data` body, part by part (`multipart.rs` says how
    /// each piece is read). `None` when nothing changed.
    fn multipart_body(&mut self, body: &[u8]) -> Result<Option<Vec<u8>>, CoreError> {
        use super::multipart::{self, BodyReading, Piece};
        let split = multipart::split(body)?;
        // Boundary characters are ASCII (checked by the split).
        let boundary = std::str::from_utf8(&body[split.boundary.clone()]).unwrap_or_default();
        let found = self.unit(TextContext::Text, boundary, false, true, 0)?;
        if found.masked.is_some() || found.incomplete {
            return Err(CoreError::BadBody(format!(
                "multipart: a value was found in the boundary at byte {}: it repeats between the parts and in the content-type header, so it cannot be masked",
                split.boundary.start
            )));
        }
        let mut out = Vec::with_capacity(body.len() + 64);
        let mut changed = false;
        for piece in &split.pieces {
            let (range, is_body) = match piece {
                Piece::Delimiter(range) => {
                    out.extend_from_slice(&body[range.clone()]);
                    continue;
                }
                Piece::Text(range) => (range.clone(), false),
                Piece::Body(range) => (range.clone(), true),
            };
            let bytes = &body[range.clone()];
            let reading = if is_body {
                multipart::reading(bytes, range.start)?
            } else {
                BodyReading::Text(std::str::from_utf8(bytes).map_err(|e| {
                    CoreError::BadBody(format!(
                        "multipart: not UTF-8 at byte {}",
                        range.start + e.valid_up_to()
                    ))
                })?)
            };
            match reading {
                BodyReading::Media => out.extend_from_slice(bytes),
                BodyReading::Text(text) => {
                    self.stats.texts += 1;
                    match self.unit(TextContext::Text, text, false, false, 0)?.masked {
                        Some(masked) => {
                            changed = true;
                            out.extend_from_slice(masked.as_str().as_bytes());
                        }
                        None => out.extend_from_slice(bytes),
                    }
                }
                BodyReading::JsonLines(lines) => {
                    let mut copied = 0;
                    for (line, provider) in lines {
                        out.extend_from_slice(&bytes[copied..line.start]);
                        let masked = self
                            .json_body(provider, &bytes[line.clone()])
                            .map_err(|err| shifted(err, range.start + line.start))?;
                        match masked {
                            Some(masked) => {
                                changed = true;
                                out.extend_from_slice(&masked);
                            }
                            None => out.extend_from_slice(&bytes[line.clone()]),
                        }
                        copied = line.end;
                    }
                    out.extend_from_slice(&bytes[copied..]);
                }
            }
        }
        Ok(changed.then_some(out))
    }

    /// Examines every key, string and number of `doc` (document order), but
    /// the verbatim `fields`, and writes the masked ones into `splice`.
    /// `acc` gathers what the texts used; once a new value is found nothing
    /// more is written (the request will ask for entries first).
    fn walk(
        &mut self,
        doc: &Document<'_>,
        fields: &'static [VerbatimField],
        splice: &mut InOrderSplice<'_>,
        acc: &mut TextMasking,
        depth: usize,
    ) -> Result<(), CoreError> {
        let want_used = depth > 0;
        for node in doc.nodes() {
            if let (Some(key), Some(span)) = (doc.key_value(node), doc.key_span(node)) {
                // Keys are examined as any text: agents write values there
                // too (`{"mario@example.org": "ok"}`).
                let key = key?;
                let plain = !doc.key_is_escaped(node);
                let context = if looks_like_json(&key) {
                    TextContext::JsonText
                } else {
                    TextContext::Text
                };
                let masking = self.unit(context, &key, want_used, plain, depth)?;
                self.write(splice, span, &masking, acc)?;
            }
            match doc.kind(node) {
                NodeKind::String => {
                    let Some(text) = doc.str_value(node) else {
                        continue;
                    };
                    let text = text?;
                    if let Some(field) = field_for(fields, doc, node) {
                        if self.kept_verbatim(field, doc, node, &text)? {
                            continue;
                        }
                    }
                    if let Some((at, payload)) = views::base64_data_url(&text) {
                        let offset = doc.span(node).start;
                        let masking =
                            self.data_url(&text, at, payload, offset, want_used, depth)?;
                        self.write(splice, doc.span(node), &masking, acc)?;
                        continue;
                    }
                    let context = if looks_like_json(&text) {
                        TextContext::JsonText
                    } else {
                        TextContext::Text
                    };
                    let plain = !doc.is_escaped(node);
                    let masking = self.unit(context, &text, want_used, plain, depth)?;
                    self.write(splice, doc.span(node), &masking, acc)?;
                }
                NodeKind::Number => self.number(doc, node, splice, acc, depth)?,
                _ => {}
            }
        }
        Ok(())
    }

    /// Writes one masked text (a string body or a key) into `splice`.
    fn write(
        &mut self,
        splice: &mut InOrderSplice<'_>,
        span: Range<usize>,
        masking: &TextMasking,
        acc: &mut TextMasking,
    ) -> Result<(), CoreError> {
        self.stats.texts += 1;
        acc.absorb_counts(masking);
        if let Some(masked) = &masking.masked {
            // Only `acc`'s own completeness counts: an inner JSON text is
            // memoised whole, whatever other texts of the request lack.
            if !acc.incomplete {
                splice.replace_string(span, masked.as_str(), masking.plain)?;
            }
        }
        Ok(())
    }

    /// A number is examined as the text it is written as (a card number
    /// sent as a JSON number). Masked, it stays a number when its surrogate
    /// is one, and becomes a string otherwise: the value must not leave.
    fn number(
        &mut self,
        doc: &Document<'_>,
        node: NodeId,
        splice: &mut InOrderSplice<'_>,
        acc: &mut TextMasking,
        depth: usize,
    ) -> Result<(), CoreError> {
        let Some(text) = doc.raw_str(node) else {
            return Ok(()); // the parser checked it: ASCII
        };
        self.stats.texts += 1;
        let mut masking = self.unit(TextContext::Text, text, depth > 0, true, depth)?;
        if masking.masked.is_none() && !masking.incomplete {
            // An integer written with a fraction or an exponent
            // (`4.539148803436467e15`) is examined as its digits too.
            if let Some(digits) = integer_form(text) {
                masking = self.unit(TextContext::Text, &digits, depth > 0, true, depth)?;
            }
        }
        let digits = integer_form(text);
        let plain_digits = digits.as_deref().unwrap_or(text);
        if masking.masked.is_none() && !masking.incomplete && self.phone_digits(plain_digits) {
            masking = mask_whole_as(
                self.index,
                plain_digits,
                Kind::Phone,
                self.options,
                &mut self.new_values,
            );
            self.stats.values_masked += masking.values_masked;
            self.stats.redacted += masking.redacted;
            self.used.extend_from_slice(&masking.used);
        }
        acc.absorb_counts(&masking);
        let Some(masked) = &masking.masked else {
            return Ok(());
        };
        if acc.incomplete {
            return Ok(());
        }
        let masked = masked.as_str();
        if is_json_number(masked) {
            splice.replace_raw(doc.span(node), masked.as_bytes())?;
        } else {
            let mut quoted = Vec::with_capacity(masked.len() + 2);
            quoted.push(b'"');
            encode_into(masked, &mut quoted);
            quoted.push(b'"');
            splice.replace_raw(doc.span(node), &quoted)?;
        }
        Ok(())
    }

    /// Whether a JSON number is a phone number written as its digits
    /// without `+` (international form, 11 to 15 digits): the phone
    /// detector reads it with its `+`. A 13-digit number starting with 1
    /// is left out: it is a millisecond timestamp far more often than a
    /// phone (and no number of country code 1 has 13 digits).
    fn phone_digits(&mut self, text: &str) -> bool {
        let len = text.len();
        if !(11..=15).contains(&len) || !text.bytes().all(|b| b.is_ascii_digit()) {
            return false;
        }
        if len == 13 && text.starts_with('1') {
            return false;
        }
        let plus = format!("+{text}");
        let findings = &mut self.scratch.findings;
        findings.clear();
        self.detectors.find(&plus, findings);
        findings
            .iter()
            .any(|f| f.kind == Kind::Phone && f.start == 0 && f.end == plus.len())
    }

    /// Whether a verbatim field is kept as written. Media fields are kept
    /// when their form holds (anything else is masked by the caller) and
    /// their base64 holds no value the walk finds anywhere else; a signed
    /// field is kept when it holds no value, in any reading. A value in a
    /// field kept as written refuses the request.
    fn kept_verbatim(
        &mut self,
        field: &'static VerbatimField,
        doc: &Document<'_>,
        node: NodeId,
        text: &str,
    ) -> Result<bool, CoreError> {
        let holds = match field.handling {
            Verbatim::Base64Media if is_base64_media(text) => {
                // Checked as written: a token between `/` and `+` of the
                // base64 alphabet is one the detectors read elsewhere.
                holds_value(self.detectors, self.index, text, self.scratch)
            }
            Verbatim::DataUrlMedia if is_data_url_media(text) => {
                holds_value(self.detectors, self.index, text, self.scratch)
            }
            Verbatim::Base64Media | Verbatim::DataUrlMedia => return Ok(false),
            Verbatim::Signed => self.holds_any(text, 0)?,
        };
        self.stats.texts += 1;
        if holds {
            return Err(CoreError::ValueInVerbatimField {
                field: field.key,
                offset: doc.span(node).start,
            });
        }
        Ok(true)
    }

    /// Whether `text` holds a value wherever the walk would look for one:
    /// as written, behind a reading (percent-decoded, a `data:` URL's
    /// payload, decoded when base64), and in every key, string and number
    /// of JSON inside it. Nothing is replaced, nothing asked for.
    fn holds_any(&mut self, text: &str, depth: usize) -> Result<bool, CoreError> {
        if depth > MAX_JSON_IN_STRING_DEPTH {
            return Err(CoreError::BadBody(format!(
                "a field kept as written nests readings or JSON deeper than {MAX_JSON_IN_STRING_DEPTH} levels"
            )));
        }
        if holds_value(self.detectors, self.index, text, self.scratch) {
            return Ok(true);
        }
        if views::may_hide(text) {
            for reading in [Reading::DataPayload, Reading::PercentDecoded] {
                if let Some(view) = views::view(text, reading) {
                    if self.holds_any(&view.text, depth + 1)? {
                        return Ok(true);
                    }
                }
            }
            if let Some((_, payload)) = views::base64_data_url(text) {
                let payload = String::from_utf8_lossy(&payload).into_owned();
                if self.holds_any(&payload, depth + 1)? {
                    return Ok(true);
                }
            }
        }
        if !looks_like_json(text) {
            return Ok(false);
        }
        let Ok(inner) = Document::parse_with(text.as_bytes(), self.limits) else {
            return Ok(false); // examined as text above
        };
        for node in inner.nodes() {
            if let Some(Ok(key)) = inner.key_value(node) {
                if self.holds_any(&key, depth + 1)? {
                    return Ok(true);
                }
            }
            let holds = match inner.kind(node) {
                NodeKind::String => match inner.str_value(node) {
                    Some(Ok(value)) => self.holds_any(&value, depth + 1)?,
                    _ => false,
                },
                NodeKind::Number => {
                    let raw = inner.raw_str(node).unwrap_or_default();
                    let digits = integer_form(raw);
                    let digits = digits.as_deref().unwrap_or(raw);
                    holds_value(self.detectors, self.index, digits, self.scratch)
                        || self.phone_digits(digits)
                }
                _ => false,
            };
            if holds {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// A `data:` URL whose payload is base64 but not a media file the
    /// provider takes (`data:text/plain;base64,…`, a file the provider
    /// decodes): the payload is decoded and masked as the text it is, then
    /// encoded again; its header is masked as text. A payload that is not
    /// text cannot be masked: it is examined, and a value in it refuses
    /// the request.
    fn data_url(
        &mut self,
        text: &str,
        payload_at: usize,
        payload: Vec<u8>,
        offset: usize,
        want_used: bool,
        depth: usize,
    ) -> Result<TextMasking, CoreError> {
        if depth >= MAX_JSON_IN_STRING_DEPTH {
            return Err(CoreError::BadBody(format!(
                "JSON inside JSON strings nested deeper than {MAX_JSON_IN_STRING_DEPTH} levels"
            )));
        }
        let header = &text[..payload_at];
        let mut result = self.unit(TextContext::Text, header, want_used, false, depth)?;
        let decoded = match String::from_utf8(payload) {
            Ok(decoded) => decoded,
            Err(not_text) => {
                let lossy = String::from_utf8_lossy(not_text.as_bytes()).into_owned();
                if self.holds_any(&lossy, depth + 1)? {
                    return Err(CoreError::ValueInVerbatimField {
                        field: "data: URL of a binary file",
                        offset,
                    });
                }
                return Ok(result);
            }
        };
        let context = if looks_like_json(&decoded) {
            TextContext::JsonText
        } else {
            TextContext::Text
        };
        let inner = self.unit(context, &decoded, want_used, false, depth + 1)?;
        result.absorb_counts(&inner);
        crate::sort::sort(&mut result.used);
        result.used.dedup();
        if result.incomplete {
            result.masked = None;
            return Ok(result);
        }
        if result.masked.is_some() || inner.masked.is_some() {
            let header = result.masked.as_ref().map_or(header, |m| m.as_str());
            let payload = inner
                .masked
                .as_ref()
                .map_or(decoded.as_str(), |m| m.as_str());
            let out = format!("{header}{}", views::base64_encode(payload.as_bytes()));
            result.plain = !needs_escape(&out);
            result.masked = Some(MaskedText::Owned(out));
        }
        Ok(result)
    }

    /// Masks one text, through the memo. `want_used` asks for the entries
    /// the masked text used even when it comes from the memo (the caller
    /// folds them into an outer text's record). `plain_source`: `text` is
    /// known to hold no byte a JSON string escapes (a string sent without
    /// escapes). `depth`: how deep in JSON-inside-strings `text` sits.
    fn unit(
        &mut self,
        context: TextContext,
        text: &str,
        want_used: bool,
        plain_source: bool,
        depth: usize,
    ) -> Result<TextMasking, CoreError> {
        let short =
            self.memo.is_enabled() && context == TextContext::Text && text.len() < MAX_CLEAN_LEN;
        let at = (self.index.seq(), self.index.add_epoch());
        if short && self.clean.contains(at, text) {
            return Ok(TextMasking::default());
        }
        let key = (self.memo.is_enabled() && text.len() >= MIN_MEMO_LEN)
            .then(|| self.memo.key(context, text));
        if let Some(key) = key {
            if let Some(hit) = self
                .memo
                .get(key, text, self.index, want_used, &mut self.used)
            {
                self.stats.memo_hits += 1;
                self.stats.values_masked += hit.values_masked;
                return Ok(hit);
            }
        }
        let masking = match context {
            TextContext::Text => self.text(text, plain_source),
            TextContext::JsonText => self.json_text(text, depth + 1)?,
        };
        self.used.extend_from_slice(&masking.used);
        if let Some(key) = key {
            self.memo.insert(key, &masking, self.index);
        }
        let clean = masking.masked.is_none()
            && !masking.incomplete
            && masking.values_masked == 0
            && masking.redacted == 0;
        if short && clean {
            self.clean.insert(at, text);
        }
        Ok(masking)
    }

    fn text(&mut self, text: &str, plain_source: bool) -> TextMasking {
        let mut masking = mask_text_once(
            self.detectors,
            self.index,
            text,
            self.options,
            self.scratch,
            &mut self.new_values,
            plain_source,
        );
        if views::may_hide(text) {
            self.readings(text, &mut masking);
        }
        self.stats.values_masked += masking.values_masked;
        self.stats.redacted += masking.redacted;
        masking
    }

    /// Examines the other readings of a text (percent-decoded, a `data:`
    /// URL's payload) and replaces a value found there where it was
    /// written, encoded as it was (`mario.rossi%40acme.it` becomes the
    /// surrogate percent-encoded).
    fn readings(&mut self, text: &str, masking: &mut TextMasking) {
        let first = masking.masked.as_ref().map(|m| m.as_str().to_string());
        let mut current: Option<String> = None;
        for reading in [Reading::DataPayload, Reading::PercentDecoded] {
            let source = current.as_deref().or(first.as_deref()).unwrap_or(text);
            let Some(view) = views::view(source, reading) else {
                continue;
            };
            let mut edits: Vec<(Range<usize>, String)> = Vec::new();
            let found = replacements(
                self.detectors,
                self.index,
                &view.text,
                self.options,
                self.scratch,
                &mut self.new_values,
                |start, end, replacement| {
                    edits.push((view.original(start..end), view.encode(replacement)));
                },
            );
            masking.absorb_counts(&found);
            if masking.incomplete || edits.is_empty() {
                continue;
            }
            let mut out = String::with_capacity(source.len() + 16);
            let mut copied = 0;
            for (range, replacement) in edits {
                out.push_str(&source[copied..range.start]);
                out.push_str(&replacement);
                copied = range.end;
            }
            out.push_str(&source[copied..]);
            current = Some(out);
        }
        crate::sort::sort(&mut masking.used);
        masking.used.dedup();
        if masking.incomplete {
            masking.masked = None;
        } else if let Some(out) = current {
            masking.plain = !needs_escape(&out);
            masking.masked = Some(MaskedText::Owned(out));
        }
    }

    /// A string that holds JSON (tool arguments, a tool's output): every
    /// key, string and number inside is examined, at any depth, and the
    /// masked ones re-encoded in place; when it is not valid JSON, it is
    /// masked as text.
    fn json_text(&mut self, text: &str, depth: usize) -> Result<TextMasking, CoreError> {
        let inner = match Document::parse_with(text.as_bytes(), self.limits) {
            Ok(inner) => inner,
            Err(JsonError::TooDeep { offset, limit }) => {
                // Refuse rather than guess: deep JSON masked as text would
                // be fine too, but a clear error is easier to act on.
                return Err(JsonError::TooDeep { offset, limit }.into());
            }
            Err(_) => return Ok(self.text(text, false)),
        };
        if depth > MAX_JSON_IN_STRING_DEPTH {
            return Err(CoreError::BadBody(format!(
                "JSON inside JSON strings nested deeper than {MAX_JSON_IN_STRING_DEPTH} levels"
            )));
        }
        // A lone surrogate escape anywhere inside is not JSON we can
        // rewrite: the whole text is masked as text instead (before any
        // inner text was counted).
        let undecodable = inner.nodes().any(|node| {
            matches!(inner.str_value(node), Some(Err(_)))
                || matches!(inner.key_value(node), Some(Err(_)))
        });
        if undecodable {
            return Ok(self.text(text, false));
        }
        let mut result = TextMasking::default();
        let mut splice = InOrderSplice::new(text.as_bytes());
        self.walk(&inner, &[], &mut splice, &mut result, depth)?;
        if !result.incomplete {
            if let Some(bytes) = splice.finish() {
                let masked = String::from_utf8(bytes).map_err(|e| JsonError::NotUtf8 {
                    offset: e.utf8_error().valid_up_to(),
                })?;
                result.masked = Some(MaskedText::Owned(masked));
            }
        }
        crate::sort::sort(&mut result.used);
        result.used.dedup();
        Ok(result)
    }
}

/// The entry of an e-mail value's company domain ([`email_company_domain`]),
/// when the vault holds one. The vault is asked first: most domains are
/// no entry, and the lookup rejects them before the domain is parsed and
/// checked against the provider lists (the company domain is always the
/// text after the value's last `@`).
fn company_domain_entry<'i>(index: &'i SnapshotIndex, value: &str) -> Option<EntryRef<'i>> {
    let (_, after_at) = value.rsplit_once('@')?;
    let entry = index.by_value(after_at)?;
    (email_company_domain(value) == Some(after_at)).then_some(entry)
}

/// A string whose first non-whitespace char opens a JSON object, array or
/// string: it is tried as JSON (escapes inside could hide a value from a
/// text scan), and masked as text when it is not.
fn looks_like_json(text: &str) -> bool {
    matches!(
        text.trim_start().as_bytes().first(),
        Some(b'{' | b'[' | b'"')
    )
}

/// The digits of an integer written as a JSON number with a fraction or an
/// exponent (`4.5e3` → `4500`), when it has at most 19 digits; `None` for
/// a number written plainly or one that is not an integer.
fn integer_form(s: &str) -> Option<String> {
    if !s.contains(['.', 'e', 'E']) {
        return None;
    }
    let (sign, rest) = match s.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", s),
    };
    let (mantissa, exponent) = match rest.find(['e', 'E']) {
        Some(at) => (&rest[..at], rest[at + 1..].parse::<i32>().ok()?),
        None => (rest, 0),
    };
    // Far past any integer of 19 digits: not one (and no overflow below).
    if !(-400..=400).contains(&exponent) || mantissa.len() > 400 {
        return None;
    }
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let mut digits = format!("{int}{frac}");
    let shift = exponent.checked_sub(i32::try_from(frac.len()).ok()?)?;
    if shift >= 0 {
        if shift > 19 {
            return None;
        }
        digits.extend(std::iter::repeat_n('0', shift as usize));
    } else {
        let cut = usize::try_from(shift.checked_neg()?).ok()?;
        if cut > digits.len() || !digits[digits.len() - cut..].bytes().all(|b| b == b'0') {
            return None;
        }
        digits.truncate(digits.len() - cut);
    }
    let digits = digits.trim_start_matches('0');
    (!digits.is_empty() && digits.len() <= 19).then(|| format!("{sign}{digits}"))
}

/// Whether `s` is a JSON number token.
fn is_json_number(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(b.first() == Some(&b'-'));
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    let int_start = i;
    let n = digits(&mut i);
    if n == 0 || (n > 1 && b[int_start] == b'0') {
        return false;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod number_tests {
    use super::{integer_form, is_json_number};

    #[test]
    fn integers_written_with_an_exponent_are_read_as_their_digits() {
        for (written, digits) in [
            ("4.539000015442058e15", Some("4539000015442058")),
            ("4539000015442058.0", Some("4539000015442058")),
            ("45.39E2", Some("4539")),
            ("-1.2e3", Some("-1200")),
            ("4111111111111111", None),
            ("1.5", None),
            ("1e30", None),
            ("0.0", None),
        ] {
            assert_eq!(integer_form(written).as_deref(), digits, "{written}");
        }
    }

    #[test]
    fn json_numbers_are_recognised() {
        for ok in ["0", "-1", "4111111111111111", "1.5", "-0.25e+10", "3E2"] {
            assert!(is_json_number(ok), "{ok}");
        }
        for bad in [
            "",
            "-",
            "01",
            "1.",
            ".5",
            "1e",
            "+1",
            "1 2",
            "4111-1111",
            "NaN",
        ] {
            assert!(!is_json_number(bad), "{bad}");
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod domain_tests {
    use super::{company_domain_entry, email_company_domain};
    use crate::kind::Kind;
    use crate::snapshot::SnapshotIndex;
    use crate::wire::{Entry, EntryId, Snapshot};
    use proptest::prelude::*;

    /// Domains in the vault: company ones, a provider, odd forms.
    const DOMAINS: &[&str] = &[
        "acme.it",
        "gmail.com",
        "x",
        "b.it.",
        "ACME.IT",
        "a@b.it",
        "-bad-.it",
    ];

    fn index() -> SnapshotIndex {
        SnapshotIndex::from_snapshot(Snapshot {
            version: 1,
            generation: 1,
            seq: 1,
            retired_salt: "00".repeat(16),
            retired: vec![],
            entries: DOMAINS
                .iter()
                .enumerate()
                .map(|(i, domain)| Entry {
                    id: EntryId([i as u8 + 1; 16]),
                    value: (*domain).into(),
                    surrogate: format!("d{i}.example"),
                    kind: Kind::Domain,
                    generation: 1,
                })
                .collect(),
        })
        .unwrap()
    }

    proptest! {
        /// The vault is asked first, with the same answer as the domain
        /// check then the lookup.
        #[test]
        fn asks_the_vault_first_with_the_same_answer(
            local in prop::sample::select(vec!["", "mario", "a@b", "\"x@y\"", "mario.rossi"]),
            at in prop::sample::select(vec!["@", "", "@@"]),
            domain in prop::sample::select(
                DOMAINS.iter().copied().chain(["", "other.it", "b.it"]).collect::<Vec<_>>()
            ),
        ) {
            let index = index();
            let value = format!("{local}{at}{domain}");
            let first = email_company_domain(&value)
                .and_then(|d| index.by_value(d))
                .map(|e| e.slot);
            prop_assert_eq!(company_domain_entry(&index, &value).map(|e| e.slot), first);
        }
    }

    #[test]
    fn a_company_domain_in_the_vault_is_found_and_a_provider_is_not() {
        let index = index();
        assert!(company_domain_entry(&index, "mario@acme.it").is_some());
        assert!(company_domain_entry(&index, "mario@gmail.com").is_none());
        assert!(company_domain_entry(&index, "@acme.it").is_none());
        assert!(company_domain_entry(&index, "mario@other.it").is_none());
    }
}
