//! Whole answers: a JSON body (every string value, any shape) or plain text.

use super::fragment::restore_whole;
use super::held_text::{held_by_retired, Escaping, HeldText};
use super::policy::{Admit, RestoreView, UrlRule};
use super::url_tracker::UrlTracker;
use super::RestoreStats;
use crate::json::{Document, NodeId, Splice};
use crate::provider::REGISTRY;
use crate::snapshot::VaultMatch;
use std::borrow::Cow;
use std::ops::Range;

/// Restores a whole answer: JSON (every string value, any shape) or, when
/// it is not JSON, UTF-8 text (invalid bytes are kept). `None` when nothing
/// changed. Strings under a key any provider signs
/// ([`crate::provider::Provider::sealed_answer_keys`]) are left as they
/// are, whatever the request's provider: an answer need not match its path.
///
/// `view`: a [`RestoreView`] (what may be restored, and into URLs), or an
/// index for every active surrogate anywhere.
pub fn restore_body<'a>(
    view: impl Into<RestoreView<'a>>,
    body: &[u8],
) -> (Option<Vec<u8>>, RestoreStats) {
    let view = &view.into();
    if looks_like_json(body) {
        if let Ok(doc) = Document::parse(body) {
            return restore_document(view, &doc);
        }
    }
    restore_bytes_as_text(view, body)
}

/// Restores a plain text (`view` as for [`restore_body`]).
pub fn restore_text<'a, 't>(
    view: impl Into<RestoreView<'a>>,
    text: &'t str,
) -> (Cow<'t, str>, RestoreStats) {
    let view = &view.into();
    let mut matches = Vec::new();
    view.find_surrogates(text, &mut matches);
    let mut retired = Vec::new();
    view.find_retired(text, &mut retired);
    let mut stats = RestoreStats {
        declined_retired: retired.len(),
        ..RestoreStats::default()
    };
    if matches.is_empty() {
        return (Cow::Borrowed(text), stats);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut pos = 0;
    let mut urls = WholeTextUrls::new(view);
    for m in &matches {
        if held_by_retired(text, &retired, m.start, m.end) {
            continue;
        }
        let entry = match view.admit(m.slot, urls.verdict_at(text, m.start)) {
            Admit::Restore(entry) => entry,
            other => {
                stats.count_declined(&other);
                continue;
            }
        };
        out.push_str(&text[pos..m.start]);
        out.push_str(entry.value);
        pos = m.end;
        stats.restored += 1;
    }
    if stats.restored == 0 {
        return (Cow::Borrowed(text), stats);
    }
    out.push_str(&text[pos..]);
    (Cow::Owned(out), stats)
}

/// URLs in a whole text, read up to each surrogate in turn (nothing read
/// when the view restores into any URL).
struct WholeTextUrls<'v> {
    rule: Option<&'v UrlRule>,
    tracker: UrlTracker,
    read_to: usize,
}

impl<'v> WholeTextUrls<'v> {
    fn new(view: &'v RestoreView<'_>) -> Self {
        WholeTextUrls {
            rule: view.tracks_urls().then(|| view.urls()),
            tracker: UrlTracker::default(),
            read_to: 0,
        }
    }

    /// The URL verdict at `at` of `text` (positions asked in order).
    fn verdict_at(&mut self, text: &str, at: usize) -> Option<bool> {
        let rule = self.rule?;
        if at > self.read_to {
            self.tracker.advance(&text[self.read_to..at], rule);
            self.read_to = at;
        }
        self.tracker.verdict()
    }
}

fn looks_like_json(body: &[u8]) -> bool {
    matches!(
        body.iter().find(|b| !b.is_ascii_whitespace()),
        Some(b'{' | b'[' | b'"')
    )
}

fn restore_document(view: &RestoreView<'_>, doc: &Document<'_>) -> (Option<Vec<u8>>, RestoreStats) {
    let mut stats = RestoreStats::default();
    let mut splice = Splice::new();
    let mut scratch = StringScratch::default();
    for id in doc.strings() {
        if let Some((span, replacement)) = restore_string(view, doc, id, &mut scratch, &mut stats) {
            splice.replace(span, replacement);
        }
    }
    if splice.is_empty() {
        return (None, stats);
    }
    // Edits are string spans of one document: they cannot overlap.
    (splice.apply(doc.bytes()).ok(), stats)
}

/// Every provider's sealed answer keys, split once and without repeats:
/// `(parent, key)`, `parent` for the `parent/key` form.
fn sealed_keys() -> &'static [(Option<&'static str>, &'static str)] {
    static KEYS: std::sync::OnceLock<Vec<(Option<&'static str>, &'static str)>> =
        std::sync::OnceLock::new();
    KEYS.get_or_init(|| {
        let mut keys = Vec::new();
        for sealed in REGISTRY.iter().flat_map(|p| p.sealed_answer_keys()) {
            let split = match sealed.split_once('/') {
                Some((parent, key)) => (Some(parent), key),
                None => (None, *sealed),
            };
            if !keys.contains(&split) {
                keys.push(split);
            }
        }
        keys
    })
}

/// Whether string `id` sits under a key some provider signs or seals
/// (`parent/key`: the member `key` of an object that is the member
/// `parent`). The key is read once: its raw bytes when it has no escape
/// (most keys then differ from every sealed one by length alone), else
/// decoded once. Runs for every string of an answer.
fn is_sealed(doc: &Document<'_>, id: NodeId) -> bool {
    let Some(raw) = doc.key_raw(id) else {
        return false;
    };
    let decoded;
    let key: &[u8] = if doc.key_is_escaped(id) {
        match doc.key_value(id) {
            Some(Ok(value)) => {
                decoded = value;
                decoded.as_bytes()
            }
            _ => return false,
        }
    } else {
        raw
    };
    sealed_keys().iter().any(|(parent, sealed)| {
        sealed.as_bytes() == key
            && parent.is_none_or(|parent| {
                doc.parent(id)
                    .is_some_and(|holder| doc.key_is(holder, parent))
            })
    })
}

/// Buffers reused from one string to the next.
#[derive(Default)]
pub(crate) struct StringScratch {
    matches: Vec<VaultMatch>,
}

/// Restores one string value of `doc` whole: its new raw body (inside the
/// quotes) when it changed. Sealed reasoning is skipped.
pub(crate) fn restore_string(
    view: &RestoreView<'_>,
    doc: &Document<'_>,
    id: NodeId,
    scratch: &mut StringScratch,
    stats: &mut RestoreStats,
) -> Option<(Range<usize>, Vec<u8>)> {
    if is_sealed(doc, id) {
        return None;
    }
    let raw = doc.raw_str(id)?;
    let text: Cow<'_, str> = if doc.is_escaped(id) {
        doc.str_value(id)?.ok()?
    } else {
        Cow::Borrowed(raw)
    };
    if starts_json_text(&text) {
        // JSON inside a string (tool-call arguments): restored as JSON text,
        // then escaped again as this string's body.
        let mut restored = Vec::new();
        let got = restore_whole(view, &text, &mut restored);
        *stats += got;
        if got.restored == 0 {
            return None;
        }
        let restored = String::from_utf8(restored).ok()?;
        let mut encoded = Vec::with_capacity(restored.len() + 8);
        crate::json::encode_into(&restored, &mut encoded);
        return Some((doc.span(id), encoded));
    }
    // The common case: no surrogate at all, nothing allocated.
    scratch.matches.clear();
    view.find_surrogates(&text, &mut scratch.matches);
    if scratch.matches.is_empty() {
        stats.declined_retired += count_retired(view, &text);
        return None;
    }
    if !doc.is_escaped(id) {
        // No escape: the text is the raw body, so the matches already found
        // place the edits (what the held run would find again after an
        // identity decode).
        let (out, got) = splice_unescaped(view, raw, &scratch.matches);
        *stats += got;
        return out.map(|out| (doc.span(id), out));
    }
    // Rewrite the raw body, keeping its escapes where nothing changes.
    let mut run = HeldText::new(Escaping::JsonString);
    let mut out = Vec::with_capacity(raw.len() + 16);
    let got = run.restore_all(view, raw, &mut out);
    *stats += got;
    (got.restored > 0).then(|| (doc.span(id), out))
}

/// Restores a string body written without escapes whose active surrogates
/// are `matches` (found in `raw` itself): each one not held by a retired
/// surrogate is replaced by its value, JSON-escaped. The same result as
/// [`HeldText::restore_all`] on a [`Escaping::JsonString`] run.
fn splice_unescaped(
    view: &RestoreView<'_>,
    raw: &str,
    matches: &[VaultMatch],
) -> (Option<Vec<u8>>, RestoreStats) {
    let mut retired = Vec::new();
    view.find_retired(raw, &mut retired);
    let mut stats = RestoreStats {
        declined_retired: retired.len(),
        ..RestoreStats::default()
    };
    let mut out = Vec::with_capacity(raw.len() + 16);
    let mut pos = 0;
    let mut urls = WholeTextUrls::new(view);
    for m in matches {
        if held_by_retired(raw, &retired, m.start, m.end) {
            continue;
        }
        let entry = match view.admit(m.slot, urls.verdict_at(raw, m.start)) {
            Admit::Restore(entry) => entry,
            other => {
                stats.count_declined(&other);
                continue;
            }
        };
        out.extend_from_slice(&raw.as_bytes()[pos..m.start]);
        crate::json::encode_into(entry.value, &mut out);
        pos = m.end;
        stats.restored += 1;
    }
    if stats.restored == 0 {
        return (None, stats);
    }
    out.extend_from_slice(&raw.as_bytes()[pos..]);
    (Some(out), stats)
}

/// Whether a text is restored as JSON text (first non-whitespace char `{` or `[`).
pub(crate) fn starts_json_text(text: &str) -> bool {
    matches!(text.trim_start().as_bytes().first(), Some(b'{' | b'['))
}

fn count_retired(view: &RestoreView<'_>, text: &str) -> usize {
    let mut spans = Vec::new();
    view.find_retired(text, &mut spans);
    spans.len()
}

/// Not JSON: each valid UTF-8 run is restored as text; other bytes are kept.
fn restore_bytes_as_text(view: &RestoreView<'_>, body: &[u8]) -> (Option<Vec<u8>>, RestoreStats) {
    let mut stats = RestoreStats::default();
    let mut out: Option<Vec<u8>> = None;
    let mut copied = 0;
    let mut pos = 0;
    for chunk in body.utf8_chunks() {
        let valid = chunk.valid();
        let (restored, got) = restore_text(view, valid);
        stats += got;
        if let Cow::Owned(text) = restored {
            let buf = out.get_or_insert_with(|| Vec::with_capacity(body.len() + 64));
            buf.extend_from_slice(&body[copied..pos]);
            buf.extend_from_slice(text.as_bytes());
            copied = pos + valid.len();
        }
        pos += valid.len() + chunk.invalid().len();
    }
    if let Some(buf) = out.as_mut() {
        buf.extend_from_slice(&body[copied..]);
    }
    (out, stats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keyed_hash::{entry_id, retired_hash};
    use crate::restore::{RequestScope, UrlRule};
    use crate::snapshot::SnapshotIndex;
    use crate::text::lead_bucket;
    use crate::wire::{Entry, EntryId, RetiredHash, RetiredSurrogate, Snapshot};
    use crate::Kind;

    fn index() -> SnapshotIndex {
        let entries = [
            ("person", "José Ruiz", "Ada Lovelace"),
            ("person", "Mario", "Kira"),
            ("email", "m@x.it", "kira.n@example.org"),
            ("person", "Zoë \"Q\"", "Bob Stone"),
            ("person", "Dan", "Ω7"),
        ];
        SnapshotIndex::from_snapshot(Snapshot {
            version: 1,
            generation: 1,
            seq: 0,
            retired_salt: "5a17".to_string(),
            retired: vec![RetiredSurrogate {
                hash: RetiredHash(retired_hash(&[0x5a, 0x17], "Kira Old")),
                lead: lead_bucket("Kira Old"),
            }],
            entries: entries
                .iter()
                .map(|(kind, value, surrogate)| Entry {
                    id: EntryId(entry_id(b"k", value)),
                    value: value.to_string(),
                    surrogate: surrogate.to_string(),
                    kind: Kind::parse(kind).expect("kind"),
                    generation: 1,
                })
                .collect(),
        })
        .expect("index")
    }

    /// The unescaped fast path gives the held run's bytes and counts,
    /// whatever the scope and the URL rule.
    #[test]
    fn unescaped_splice_equals_the_held_run() {
        let index = index();
        let mut scope = RequestScope::default();
        let kira = index.by_value("Mario").expect("entry");
        scope.extend(&[(kira.slot, kira.fingerprint)]);
        let views = [
            RestoreView::vault(&index),
            RestoreView::new(&index, Some(&scope), &UrlRule::Never),
            RestoreView::new(&index, None, &UrlRule::Never),
        ];
        for view in &views {
            splice_equals_held_run(view);
        }
    }

    fn splice_equals_held_run(view: &RestoreView<'_>) {
        let pieces = [
            "",
            " ",
            "Kira",
            "Ada Lovelace",
            "kira.n@example.org",
            "Kira Old",
            "Bob Stone",
            "Ω7",
            "Kiras",
            "xKira",
            "é",
            ",",
            "日本",
            "https://a.example/",
            "](",
        ];
        for a in pieces {
            for b in pieces {
                for pad in 0..9 {
                    let raw = format!("{}{a} {b}{a}", "z ".repeat(pad / 2) + &"y".repeat(pad % 2));
                    let mut matches = Vec::new();
                    view.find_surrogates(&raw, &mut matches);
                    let (fast, fast_stats) = splice_unescaped(view, &raw, &matches);
                    let mut held = Vec::new();
                    let held_stats =
                        HeldText::new(Escaping::JsonString).restore_all(view, &raw, &mut held);
                    assert_eq!(fast_stats, held_stats, "pad {pad}");
                    match fast {
                        Some(fast) => assert_eq!(fast, held, "pad {pad}"),
                        None => assert_eq!(held_stats.restored, 0, "pad {pad}"),
                    }
                }
            }
        }
    }

    #[test]
    fn a_document_restores_the_same_escaped_or_not() {
        let index = index();
        let (plain, stats) = restore_body(
            &index,
            br#"{"a":"Kira and Ada Lovelace","b":"Bob Stone!","c":"Kira Old","d":"Kiras"}"#,
        );
        let parsed: serde_json::Value =
            serde_json::from_slice(plain.as_deref().expect("changed")).expect("json");
        assert_eq!(parsed["a"], "Mario and José Ruiz");
        assert_eq!(parsed["b"], "Zoë \"Q\"!");
        assert_eq!(parsed["c"], "Kira Old");
        assert_eq!(parsed["d"], "Kiras");
        assert_eq!((stats.restored, stats.declined_retired), (3, 1));
        let (escaped, _) = restore_body(
            &index,
            br#"{"a":"Kir\u0061 and Ada Lovelace","b":"Bob Stone!","c":"Kira Old","d":"Kiras"}"#,
        );
        assert_eq!(escaped, plain);
    }
}
