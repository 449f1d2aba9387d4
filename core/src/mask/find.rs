//! Masking one decoded text: vault values and detector findings → surrogates,
//! or the list of new values that need entries first.

use super::MaskOptions;
use crate::detect::{resolve_overlaps, Detectors, Finding};
use crate::json::needs_escape;
use crate::kind::Kind;
use crate::snapshot::{Slot, SnapshotIndex, VaultMatch};
use crate::wire::{EntryFingerprint, NewValue};
use std::collections::HashSet;
use std::sync::Arc;

/// Buffers reused from text to text (no allocation per text once warm).
#[derive(Default)]
pub(crate) struct Scratch {
    vault: Vec<VaultMatch>,
    /// Active surrogates written in the text (looked for only when a
    /// detector found something).
    surrogates: Vec<VaultMatch>,
    /// Retired surrogates written in the text (same condition).
    retired: Vec<(usize, usize)>,
    /// Spans of the surrogates above that stay whole in the masked text
    /// (sorted).
    intact: Vec<(usize, usize)>,
    /// Spans of the surrogates broken in a round.
    broken: Vec<(usize, usize)>,
    /// The spans that may replace text, the farthest end of each prefix of
    /// `intact`, and the union of the kept spans
    /// ([`Self::drop_broken_surrogates`]).
    spans: Vec<(usize, usize)>,
    reach: Vec<usize>,
    union: Vec<(usize, usize)>,
    pub(crate) findings: Vec<Finding>,
}

impl Scratch {
    /// Drops the detector findings (no vault slot) that lie inside one of
    /// our surrogates, active or retired, written in `text`: the agent
    /// resends a surrogate (`Giulia Conti`) and a detector reads a part of
    /// it (`Giulia`) as a new name; masking that part would break the
    /// surrogate's restore (active) or its echo, which the restorer
    /// declines whole (retired), and file a needless entry.
    ///
    /// Vault values inside one of our surrogates are dropped too: a lone
    /// given name in the vault (`José`, from a text that named someone by
    /// it) is a part of another person's name surrogate (`José Faria`);
    /// replacing that part would break the surrogate's restore.
    ///
    /// Any kind: a domain in the vault inside an e-mail surrogate, a short
    /// phone number inside a longer one's, a key's tail inside another
    /// key's surrogate (a kind whose detector is off, or a surrogate the
    /// detector does not read whole, which would otherwise win the overlap).
    ///
    /// Only findings that no vault value (in `self.vault`) overlaps count
    /// (those lose to the value anyway), and only vault values that may
    /// continue a longer token ([`may_be_part_of_a_longer_token`]), so the
    /// surrogate scans run only for texts with a new value or such a value
    /// in them.
    fn drop_findings_inside_surrogates(&mut self, index: &SnapshotIndex, text: &str) {
        let vault = &self.vault;
        let new = |f: &Finding| {
            f.slot.is_none() && !vault.iter().any(|m| m.start < f.end && f.start < m.end)
        };
        let maybe_a_part = |m: &VaultMatch| {
            let is_name = || index.entry(m.slot).is_some_and(|e| *e.kind == Kind::Name);
            may_be_part_of_a_longer_token(text, m.start, m.end, is_name)
        };
        if !self.findings.iter().any(new) && !vault.iter().any(maybe_a_part) {
            return;
        }
        self.surrogates.clear();
        index.find_surrogates(text, &mut self.surrogates);
        self.retired.clear();
        index.find_retired(text, &mut self.retired);
        if self.surrogates.is_empty() && self.retired.is_empty() {
            return;
        }
        // Strictly inside: a finding that is the whole surrogate is left
        // to the masker, which keeps it as already fake.
        let inside = |(f_start, f_end): (usize, usize), (start, end): (usize, usize)| {
            start <= f_start && f_end <= end && (start, end) != (f_start, f_end)
        };
        self.drop_broken_surrogates();
        let intact = &self.intact;
        let in_a_surrogate = |span: (usize, usize)| intact.iter().any(|&s| inside(span, s));
        self.findings
            .retain(|f| f.slot.is_some() || !in_a_surrogate((f.start, f.end)));
        self.vault.retain(|m| !in_a_surrogate((m.start, m.end)));
    }

    /// Leaves in `self.intact` only the surrogates that stay whole in the
    /// masked text: one that a kept span (a finding or vault value not
    /// inside an intact surrogate) overlaps without lying inside it is
    /// broken by that span's replacement, and the parts inside it must be
    /// masked like any other text. Without this, `+39 348 765 4321…` (an
    /// active surrogate glued to a new e-mail address that starts inside it)
    /// kept the vault value `+39 348 765` as written once the address was
    /// replaced (fuzz finding, `tests/fuzz_findings.rs`). Repeated until no
    /// surrogate breaks (a broken one frees spans that can break another);
    /// after a few rounds every surrogate counts as broken, which masks
    /// more, never less.
    fn drop_broken_surrogates(&mut self) {
        const ROUNDS: usize = 4;
        let Scratch {
            vault,
            surrogates,
            retired,
            intact,
            broken,
            spans,
            reach,
            union,
            findings,
        } = self;
        // Every surrogate written in the text starts intact. Sorted, the
        // list also tells a span that is one of ours (kept as written).
        intact.clear();
        intact.extend(surrogates.iter().map(|s| (s.start, s.end)));
        intact.extend_from_slice(retired);
        crate::sort::sort(intact);
        // The spans that may replace text (neither ours nor empty), by start.
        spans.clear();
        spans.extend(
            findings
                .iter()
                .filter(|f| f.slot.is_none())
                .map(|f| (f.start, f.end))
                .chain(vault.iter().map(|m| (m.start, m.end)))
                .filter(|&span| span.0 < span.1 && intact.binary_search(&span).is_err()),
        );
        crate::sort::sort(spans);
        // Per round: the intact surrogates by start (`retain` keeps them
        // sorted), the farthest end of each prefix of them, and the union
        // of the kept spans. A kept span lies inside no intact surrogate
        // (an intact one is ours, never the span itself), so it breaks
        // every intact surrogate it overlaps. O((spans + surrogates) log) a
        // round: a text with thousands of surrogates and values once took
        // seconds here (review finding).
        for round in 0..=ROUNDS {
            reach.clear();
            let mut farthest = 0;
            reach.extend(intact.iter().map(|s| {
                farthest = farthest.max(s.1);
                farthest
            }));
            union.clear();
            for &span in spans.iter() {
                let before = intact.partition_point(|s| s.0 <= span.0);
                if before > 0 && reach[before - 1] >= span.1 {
                    continue; // inside an intact surrogate
                }
                match union.last_mut() {
                    Some(last) if span.0 <= last.1 => last.1 = last.1.max(span.1),
                    _ => union.push(span),
                }
            }
            broken.clear();
            broken.extend(intact.iter().copied().filter(|s| {
                let j = union.partition_point(|u| u.1 <= s.0);
                union.get(j).is_some_and(|u| u.0 < s.1)
            }));
            if broken.is_empty() {
                return;
            }
            if round == ROUNDS {
                intact.clear();
                return;
            }
            intact.retain(|s| broken.binary_search(s).is_err());
        }
    }
}

/// Bytes that join the parts of one token: an address (`@`, `.`), a key
/// (`-`, `_`), a URL (`/`, `:`), a phone (`+`).
const JOINERS: [char; 7] = ['@', '.', '-', '_', '+', '/', ':'];

/// Whether the span `start..end` of `text` may be a part of a longer token
/// that is one of our surrogates: glued to a letter or digit, directly or
/// across one joiner (`example.net` in `m.gomez@example.net`); a digit
/// group beside another across one space (`612 345 678` in `+34 612 345
/// 678`); or, for a name (`is_name`, asked only then), beside a word of its
/// first letter's case across one space or hyphen (`José` in `José
/// Faria`). Prose around a value (`call 612 345 678 now`, `Gomez said`,
/// `ana@x.es.`) passes none of these.
fn may_be_part_of_a_longer_token(
    text: &str,
    start: usize,
    end: usize,
    is_name: impl Fn() -> bool,
) -> bool {
    let (Some(first), Some(last)) = (
        text[start..end].chars().next(),
        text[..end].chars().next_back(),
    ) else {
        return false;
    };
    let mut after = text[end..].chars();
    let mut before = text[..start].chars().rev();
    let (a1, a2) = (after.next(), after.next());
    let (b1, b2) = (before.next(), before.next());
    let glued = |c1: Option<char>, c2: Option<char>| match c1 {
        Some(c) if c.is_alphanumeric() => true,
        Some(c) if JOINERS.contains(&c) => c2.is_some_and(char::is_alphanumeric),
        _ => false,
    };
    if glued(a1, a2) || glued(b1, b2) {
        return true;
    }
    let digit_group = |edge: char, c1: Option<char>, c2: Option<char>| {
        edge.is_ascii_digit() && c1 == Some(' ') && c2.is_some_and(|c| c.is_ascii_digit())
    };
    if digit_group(last, a1, a2) || digit_group(first, b1, b2) {
        return true;
    }
    // The character test first: the entry is read only beside such a word.
    next_to_a_word_of_its_case(text, start, end) && is_name()
}

/// Whether the span `start..end` of `text` stands next to another word,
/// across one space or hyphen, whose first letter has the case of the
/// span's: the span may be a part of a longer name (`José` in `José
/// Faria`).
fn next_to_a_word_of_its_case(text: &str, start: usize, end: usize) -> bool {
    let Some(first) = text[start..].chars().next() else {
        return false;
    };
    let same_case = |c: char| c.is_alphabetic() && c.is_uppercase() == first.is_uppercase();
    let joiner = |c: char| c == ' ' || c == '-';
    let mut after = text[end..].chars();
    if after.next().is_some_and(joiner) && after.next().is_some_and(same_case) {
        return true;
    }
    let mut before = text[..start].chars().rev();
    if !before.next().is_some_and(joiner) {
        return false;
    }
    // The reversed word's last char is its first.
    before
        .take_while(|c| c.is_alphanumeric())
        .last()
        .is_some_and(same_case)
}

/// New values found in a request, distinct, in the order first seen.
#[derive(Default)]
pub(crate) struct NewValues {
    seen: HashSet<NewValue>,
    list: Vec<NewValue>,
}

impl NewValues {
    fn add(&mut self, value: NewValue) {
        if !self.seen.contains(&value) {
            self.seen.insert(value.clone());
            self.list.push(value);
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub(crate) fn into_list(self) -> Vec<NewValue> {
        self.list
    }
}

/// A masked text: built for this request, or shared with the memo.
#[derive(Clone, PartialEq, Eq)]
pub(crate) enum MaskedText {
    Owned(String),
    Shared(Arc<str>),
}

impl MaskedText {
    pub(crate) fn as_str(&self) -> &str {
        match self {
            MaskedText::Owned(s) => s,
            MaskedText::Shared(s) => s,
        }
    }

    /// The text as the memo keeps it.
    pub(crate) fn to_shared(&self) -> Arc<str> {
        match self {
            MaskedText::Owned(s) => Arc::from(s.as_str()),
            MaskedText::Shared(s) => Arc::clone(s),
        }
    }

    pub(crate) fn into_string(self) -> String {
        match self {
            MaskedText::Owned(s) => s,
            MaskedText::Shared(s) => s.to_string(),
        }
    }
}

/// What masking one text gave (no `Debug`: it holds the masked text).
#[derive(Clone, Default, PartialEq, Eq)]
pub(crate) struct TextMasking {
    /// The masked text; `None` when nothing changed.
    pub masked: Option<MaskedText>,
    /// The masked text is known to hold no byte a JSON string escapes (it
    /// can be spliced as it is). `false` when unknown.
    pub plain: bool,
    /// Entries whose surrogates the masked text holds (slot and id fingerprint), for the
    /// memo's re-validation and forget.
    pub used: Vec<(Slot, EntryFingerprint)>,
    /// Values replaced by a surrogate.
    pub values_masked: usize,
    /// New values replaced by a placeholder (redact mode).
    pub redacted: usize,
    /// New values were found (and added to the request's list): the text is
    /// not fully masked and must not be emitted or memoised.
    pub incomplete: bool,
}

impl TextMasking {
    /// Folds the outcome of an inner text (a string inside a JSON text) into
    /// this one; the masked text is the caller's business.
    pub(crate) fn absorb_counts(&mut self, inner: &TextMasking) {
        self.used.extend_from_slice(&inner.used);
        self.values_masked += inner.values_masked;
        self.redacted += inner.redacted;
        self.incomplete |= inner.incomplete;
    }
}

/// Whether `text` holds a value: a vault value, or a detector finding that
/// is not one of our surrogates (active or retired). Used for fields that
/// cannot be changed: nothing is replaced, nothing is asked for.
pub(crate) fn holds_value(
    detectors: &Detectors,
    index: &SnapshotIndex,
    text: &str,
    scratch: &mut Scratch,
) -> bool {
    scratch.vault.clear();
    index.find_values(text, &mut scratch.vault);
    if !scratch.vault.is_empty() {
        return true;
    }
    scratch.findings.clear();
    detectors.find(text, &mut scratch.findings);
    scratch.drop_findings_inside_surrogates(index, text);
    scratch.findings.iter().any(|f| {
        text.get(f.start..f.end)
            .is_none_or(|found| !index.is_surrogate(found) && !index.is_retired(found))
    })
}

/// Masks `text` whole as one value of `kind`: a number that a detector
/// reads only in another written form (a phone's digits without their
/// `+`). Known values take their surrogate; a new one is asked for (or
/// redacted), as any finding.
pub(crate) fn mask_whole_as(
    index: &SnapshotIndex,
    text: &str,
    kind: Kind,
    options: MaskOptions,
    new_values: &mut NewValues,
) -> TextMasking {
    let mut result = TextMasking::default();
    if index.is_surrogate(text) {
        return result;
    }
    match index.by_value(text) {
        Some(entry) => {
            result.used.push((entry.slot, entry.fingerprint));
            result.values_masked = 1;
            result.plain = !needs_escape(entry.surrogate);
            result.masked = Some(MaskedText::Owned(entry.surrogate.to_string()));
        }
        None if options.redact_new => {
            result.redacted = 1;
            result.masked = Some(MaskedText::Owned(kind.placeholder().to_string()));
        }
        None => {
            result.incomplete = true;
            new_values.add(NewValue {
                kind,
                value: text.to_string(),
            });
        }
    }
    result
}

/// Masks `text` against the vault and the detectors. New values are added to
/// `new_values` (or become placeholders in redact mode). `plain_source`: the
/// caller knows `text` holds no byte a JSON string escapes; the result is
/// then marked [`TextMasking::plain`] when no replacement holds one either.
pub(crate) fn mask_text_once(
    detectors: &Detectors,
    index: &SnapshotIndex,
    text: &str,
    options: MaskOptions,
    scratch: &mut Scratch,
    new_values: &mut NewValues,
    plain_source: bool,
) -> TextMasking {
    let mut plain = plain_source;
    let mut out = String::new();
    let mut copied_to = 0;
    let mut result = replacements(
        detectors,
        index,
        text,
        options,
        scratch,
        new_values,
        |start, end, replacement| {
            if out.capacity() == 0 {
                out.reserve(text.len() + 16);
            }
            out.push_str(&text[copied_to..start]);
            plain = plain && !needs_escape(replacement);
            out.push_str(replacement);
            copied_to = end;
        },
    );
    if !result.incomplete && copied_to > 0 {
        out.push_str(&text[copied_to..]);
        result.masked = Some(MaskedText::Owned(out));
        result.plain = plain;
    }
    result
}

/// Finds what to replace in `text` and calls `emit(start, end, replacement)`
/// for each, in order, without overlap (none once a new value is found:
/// the text will not be emitted). The result holds the counts and the
/// entries used, never the masked text.
pub(crate) fn replacements(
    detectors: &Detectors,
    index: &SnapshotIndex,
    text: &str,
    options: MaskOptions,
    scratch: &mut Scratch,
    new_values: &mut NewValues,
    mut emit: impl FnMut(usize, usize, &str),
) -> TextMasking {
    let mut result = TextMasking::default();
    if text.is_empty() {
        return result;
    }
    scratch.vault.clear();
    scratch.findings.clear();
    index.find_values(text, &mut scratch.vault);
    detectors.find(text, &mut scratch.findings);
    scratch.drop_findings_inside_surrogates(index, text);
    for m in &scratch.vault {
        if let Some(entry) = index.entry(m.slot) {
            scratch.findings.push(Finding {
                kind: entry.kind.clone(),
                start: m.start,
                end: m.end,
                slot: Some(m.slot),
            });
        }
    }
    resolve_overlaps(&mut scratch.findings);

    for finding in &scratch.findings {
        let Some(found) = text.get(finding.start..finding.end) else {
            continue; // not on char boundaries: a detector bug; never slice mid-char
        };
        let known = match finding.slot {
            Some(slot) => index.entry(slot),
            None if index.is_surrogate(found) => continue, // already fake
            None => index.by_value(found),
        };
        let replacement: std::borrow::Cow<'_, str> = match known {
            Some(entry) => {
                result.used.push((entry.slot, entry.fingerprint));
                result.values_masked += 1;
                entry.surrogate.into()
            }
            None if options.redact_new => {
                result.redacted += 1;
                finding.kind.placeholder().into()
            }
            None => {
                result.incomplete = true;
                new_values.add(NewValue {
                    kind: finding.kind.clone(),
                    value: found.to_string(),
                });
                continue;
            }
        };
        if result.incomplete {
            continue; // the text will not be emitted: only collect new values
        }
        emit(finding.start, finding.end, &replacement);
    }
    crate::sort::sort(&mut result.used);
    result.used.dedup();
    result
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod broken_surrogates_tests {
    use super::*;
    use proptest::prelude::*;

    /// The form `drop_broken_surrogates` had on 82d9b85 (surrogates ×
    /// spans × surrogates), the reference the fast form must equal.
    fn reference(scratch: &Scratch) -> Vec<(usize, usize)> {
        let inside = |(f_start, f_end): (usize, usize), (start, end): (usize, usize)| {
            start <= f_start && f_end <= end && (start, end) != (f_start, f_end)
        };
        let spans: Vec<(usize, usize)> = scratch
            .findings
            .iter()
            .filter(|f| f.slot.is_none())
            .map(|f| (f.start, f.end))
            .chain(scratch.vault.iter().map(|m| (m.start, m.end)))
            .collect();
        let is_ours = |span: (usize, usize)| {
            scratch.surrogates.iter().any(|s| (s.start, s.end) == span)
                || scratch.retired.contains(&span)
        };
        let mut intact: Vec<(usize, usize)> = scratch
            .surrogates
            .iter()
            .map(|s| (s.start, s.end))
            .chain(scratch.retired.iter().copied())
            .collect();
        for round in 0..=4 {
            let kept = |span: (usize, usize)| !intact.iter().any(|&s| inside(span, s));
            let breaks = |span: (usize, usize), (start, end): (usize, usize)| {
                span.0 < end
                    && start < span.1
                    && !inside(span, (start, end))
                    && span != (start, end)
            };
            let broken: Vec<(usize, usize)> = intact
                .iter()
                .copied()
                .filter(|&s| {
                    spans
                        .iter()
                        .any(|&span| !is_ours(span) && kept(span) && breaks(span, s))
                })
                .collect();
            if broken.is_empty() {
                break;
            }
            if round == 4 {
                intact.clear();
                break;
            }
            intact.retain(|s| !broken.contains(s));
        }
        crate::sort::sort(&mut intact);
        intact
    }

    fn span() -> impl Strategy<Value = (usize, usize)> {
        (0usize..40, 1usize..12).prop_map(|(s, l)| (s, s + l))
    }

    proptest! {
        #[test]
        fn the_fast_form_equals_the_reference(
            surrogates in proptest::collection::vec(span(), 0..8),
            retired in proptest::collection::vec(span(), 0..4),
            findings in proptest::collection::vec(span(), 0..8),
            vault in proptest::collection::vec(span(), 0..8),
            copy_ours in proptest::collection::vec(0usize..12, 0..3),
        ) {
            let mut scratch = Scratch::default();
            let ours: Vec<(usize, usize)> = surrogates.iter().chain(&retired).copied().collect();
            scratch.surrogates = surrogates
                .iter()
                .map(|&(start, end)| VaultMatch { start, end, slot: 0 })
                .collect();
            scratch.retired = retired.clone();
            scratch.findings = findings
                .iter()
                // Some findings are one of our surrogates exactly.
                .chain(copy_ours.iter().filter_map(|&i| ours.get(i)))
                .map(|&(start, end)| Finding { kind: Kind::Name, start, end, slot: None })
                .collect();
            scratch.vault = vault
                .iter()
                .map(|&(start, end)| VaultMatch { start, end, slot: 0 })
                .collect();
            let expected = reference(&scratch);
            scratch.drop_broken_surrogates();
            let mut got = scratch.intact.clone();
            crate::sort::sort(&mut got);
            prop_assert_eq!(got, expected);
        }
    }
}
