//! Mask and restore of plain text for the apps API — an adapter kept in this
//! one file so it can be swapped for latet-core's vault matchers.
//!
//! Mask: latet-core's detectors plus every vault value written in the text
//! (on word boundaries); new values get entries through [`Vaults::entries`];
//! overlaps resolved by latet-core's rule (longest, then vault match).
//! Restore: every active surrogate written in the text goes back to its
//! value; a retired surrogate is not in the vault and stays as written (rule
//! F7, docs/product-rules.md#f7).
//!
//! It opens the whole vault per call and scans it value by value: fine for
//! the apps' batches of log lines, not for a 100k-entry vault on a hot path.

use crate::error::Result;
use crate::store::KeyRecord;
use crate::vault::Vaults;
use latet_core::detect::{resolve_overlaps, Detectors, Finding};
use latet_core::text::on_word_boundaries;
use latet_core::wire::{Entry, NewValue};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// `{"text": "..."}` or `{"texts": ["...", ...]}`, in and out.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(untagged, deny_unknown_fields)]
pub enum TextBody {
    One { text: String },
    Many { texts: Vec<String> },
}

impl TextBody {
    fn into_texts(self) -> (Vec<String>, bool) {
        match self {
            TextBody::One { text } => (vec![text], false),
            TextBody::Many { texts } => (texts, true),
        }
    }

    fn from_texts(mut texts: Vec<String>, many: bool) -> Self {
        if many {
            TextBody::Many { texts }
        } else {
            TextBody::One {
                text: texts.pop().unwrap_or_default(),
            }
        }
    }
}

/// Every place `needle` is written in `text` on word boundaries.
fn occurrences<'a>(text: &'a str, needle: &'a str) -> impl Iterator<Item = (usize, usize)> + 'a {
    text.match_indices(needle)
        .map(move |(start, _)| (start, start + needle.len()))
        .filter(move |(start, end)| on_word_boundaries(text, *start, *end))
}

/// Replaces `spans` (sorted, disjoint) of `text` with `with[i]`.
fn splice(text: &str, spans: &[(usize, usize, &str)]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end, replacement) in spans {
        out.push_str(&text[at..*start]);
        out.push_str(replacement);
        at = *end;
    }
    out.push_str(&text[at..]);
    out
}

/// Masks each text with the key's vault (new values get entries).
pub fn mask(
    vaults: &Vaults,
    detectors: &Detectors,
    key: &KeyRecord,
    body: TextBody,
) -> Result<TextBody> {
    let (texts, many) = body.into_texts();
    let snapshot = vaults.snapshot(key)?;
    let mut findings_per_text = Vec::with_capacity(texts.len());
    let mut new_values: Vec<NewValue> = Vec::new();
    for text in &texts {
        let mut findings = Vec::new();
        for (slot, entry) in snapshot.entries.iter().enumerate() {
            for (start, end) in occurrences(text, &entry.value) {
                let mut finding = Finding::new(entry.kind.clone(), start, end);
                finding.slot = u32::try_from(slot).ok();
                findings.push(finding);
            }
        }
        detectors.find(text, &mut findings);
        resolve_overlaps(&mut findings);
        for f in findings.iter().filter(|f| f.slot.is_none()) {
            let value = text[f.start..f.end].to_string();
            if !new_values.iter().any(|v| v.value == value) {
                new_values.push(NewValue {
                    kind: f.kind.clone(),
                    value,
                });
            }
        }
        findings_per_text.push(findings);
    }
    let mut created: HashMap<String, String> = HashMap::new();
    for batch in new_values.chunks(crate::vault::MAX_VALUES_PER_CALL) {
        for entry in vaults.entries(key, batch)?.entries {
            created.insert(entry.value, entry.surrogate);
        }
    }
    let surrogate_of = |text: &str, f: &Finding| -> Option<String> {
        match f.slot {
            Some(slot) => snapshot
                .entries
                .get(slot as usize)
                .map(|e| e.surrogate.clone()),
            None => created.get(&text[f.start..f.end]).cloned(),
        }
    };
    let mut out = Vec::with_capacity(texts.len());
    for (text, findings) in texts.iter().zip(&findings_per_text) {
        let replacements: Vec<(usize, usize, String)> = findings
            .iter()
            .filter_map(|f| surrogate_of(text, f).map(|s| (f.start, f.end, s)))
            .collect();
        let spans: Vec<(usize, usize, &str)> = replacements
            .iter()
            .map(|(s, e, r)| (*s, *e, r.as_str()))
            .collect();
        out.push(splice(text, &spans));
    }
    Ok(TextBody::from_texts(out, many))
}

/// Restores each text: active surrogates back to their values.
pub fn restore(vaults: &Vaults, key: &KeyRecord, body: TextBody) -> Result<TextBody> {
    let (texts, many) = body.into_texts();
    let snapshot = vaults.snapshot(key)?;
    let out = texts
        .iter()
        .map(|text| restore_one(text, &snapshot.entries))
        .collect();
    Ok(TextBody::from_texts(out, many))
}

fn restore_one(text: &str, entries: &[Entry]) -> String {
    let mut spans: Vec<(usize, usize, &str)> = Vec::new();
    for entry in entries {
        for (start, end) in occurrences(text, &entry.surrogate) {
            spans.push((start, end, entry.value.as_str()));
        }
    }
    // Longest first, then earliest; keep the spans that do not overlap a kept one.
    spans.sort_by(|a, b| (b.1 - b.0).cmp(&(a.1 - a.0)).then(a.0.cmp(&b.0)));
    let mut kept: Vec<(usize, usize, &str)> = Vec::new();
    for span in spans {
        if kept.iter().all(|k| span.1 <= k.0 || span.0 >= k.1) {
            kept.push(span);
        }
    }
    kept.sort_by_key(|k| k.0);
    splice(text, &kept)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use latet_core::wire::EntryId;
    use latet_core::Kind;

    fn entry(value: &str, surrogate: &str) -> Entry {
        Entry {
            id: EntryId([0; 16]),
            value: value.into(),
            surrogate: surrogate.into(),
            kind: Kind::Name,
            generation: 1,
        }
    }

    #[test]
    fn restore_takes_the_longest_surrogate_on_word_boundaries() {
        let entries = [
            entry("acme.it", "qzv.it"),
            entry("mario@acme.it", "laura@qzv.it"),
            entry("Ana", "Eva"),
        ];
        assert_eq!(
            restore_one("to laura@qzv.it and qzv.it", &entries),
            "to mario@acme.it and acme.it"
        );
        assert_eq!(restore_one("Evangelist Eva.", &entries), "Evangelist Ana.");
    }

    #[test]
    fn text_bodies_keep_their_form() {
        let one: TextBody = serde_json::from_str(r#"{"text":"a"}"#).unwrap();
        assert_eq!(one, TextBody::One { text: "a".into() });
        let many: TextBody = serde_json::from_str(r#"{"texts":["a","b"]}"#).unwrap();
        assert_eq!(
            many.into_texts(),
            (vec!["a".to_string(), "b".to_string()], true)
        );
    }
}
