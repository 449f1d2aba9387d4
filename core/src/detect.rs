//! Detectors: each finds values of one kind in a text and reports a kind and
//! a byte span per finding — never the value itself.
//!
//! The built-in detectors are hand-written scanners with cheap prefilters
//! (`memchr` for `@` and `:`, a word-at-a-time digit search, one
//! Aho-Corasick automaton for secret prefixes) so that the masker can run all
//! of them over every text a person wrote. Operator rules (regex or
//! dictionary) come from configuration.
//!
//! The e-mail and numeric detectors also read the text folded
//! (`fold`: Unicode spaces and full-width forms as ASCII), their findings
//! mapped back onto the text as written.
//!
//! Every built-in finding stands on value boundaries
//! ([`crate::text::on_value_boundaries`]: word boundaries, where a script
//! written without spaces beside another is a boundary, and `_` one for
//! the numeric kinds), every rule finding on word boundaries, and every
//! span is on char boundaries. Overlaps resolve deterministically
//! ([`resolve_overlaps`]): longest span first, then a vault match, then a
//! fixed kind priority ([`kind_priority`]), then the earlier start; when
//! the winners leave a loser's byte uncovered, the union of the cluster is
//! one finding (no byte of a found value goes out as written).

mod card;
mod digits;
mod email;
pub(crate) mod fold;
mod iban;
mod ip;
mod person;
mod phone;
mod prefix_blocks;
mod rules;
mod secret;
mod start_bits;
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests;

use crate::error::CoreError;
use crate::kind::Kind;
use serde::Deserialize;
use std::collections::BTreeMap;

/// One thing found in a text: its kind and where it is. Holds no value, so
/// its `Debug` output is safe to log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// What was found.
    pub kind: Kind,
    /// Byte offset of the first byte (on a char boundary).
    pub start: usize,
    /// Byte offset just past the last byte (on a char boundary).
    pub end: usize,
    /// The vault slot of a known value. Set by the masker for vault matches;
    /// detectors always leave it `None`.
    pub slot: Option<u32>,
}

impl Finding {
    /// A detector finding (no vault slot).
    pub fn new(kind: Kind, start: usize, end: usize) -> Self {
        Finding {
            kind,
            start,
            end,
            slot: None,
        }
    }

    /// Length of the span in bytes.
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    /// True for an empty span (never produced by a detector).
    pub fn is_empty(&self) -> bool {
        self.end <= self.start
    }
}

/// Which built-in detectors run, and the operator's own rules.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default, rename_all = "camelCase")]
pub struct DetectorConfig {
    /// E-mail addresses (`local@domain.tld`, internationalised ones too).
    pub email: bool,
    /// Phone numbers, international (`+39 347 123 4567`) and national.
    pub phone: bool,
    /// IBANs (mod-97 checked, length per country; any case and grouping).
    pub iban: bool,
    /// Payment card numbers (Luhn checked, known leading digits).
    pub card: bool,
    /// IPv4 and IPv6 addresses.
    pub ip: bool,
    /// API keys and tokens with known prefixes, JWTs, PEM private keys,
    /// cloud keys after their labels, webhook URL secrets.
    pub secret: bool,
    /// Person names in English, Spanish, Italian, German, French and
    /// Portuguese (word lists and rules, `core/data/person/`).
    pub person: bool,
    /// Words never masked as a name (a company, product or place called
    /// like a person: `Marco Polo`, `Ferrari`); each word of an entry is
    /// kept out of names, in any case and with or without diacritics.
    pub never_mask: Vec<String>,
    /// Operator rules: each a regex or a dictionary, with the kind it finds.
    pub rules: Vec<RuleConfig>,
}

impl Default for DetectorConfig {
    fn default() -> Self {
        DetectorConfig {
            email: true,
            phone: true,
            iban: true,
            card: true,
            ip: true,
            secret: true,
            person: true,
            never_mask: Vec::new(),
            rules: Vec::new(),
        }
    }
}

/// One operator rule: exactly one of `regex` or `dictionary`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RuleConfig {
    /// The kind of what the rule finds: a built-in kind name (`email`, …) or
    /// a custom name (`[a-z][a-z0-9_-]{0,31}`).
    pub kind: String,
    /// A regular expression (`regex-lite` syntax: Rust `regex` syntax with
    /// ASCII-only `\d`, `\w`, `\s`, `\b` and case folding). Matches that
    /// cut a word are dropped; use `\b` or explicit context as needed.
    pub regex: Option<String>,
    /// Exact, case-sensitive words or phrases, found where they stand as
    /// whole words.
    pub dictionary: Option<Vec<String>>,
}

/// The detectors of one configuration, ready to run. Building them compiles
/// the operator rules once; [`Detectors::find`] is then cheap to call.
#[derive(Clone, Debug)]
pub struct Detectors {
    email: bool,
    phone: bool,
    iban: bool,
    card: bool,
    ip: bool,
    secret: Option<secret::SecretScanner>,
    /// The person detector, with the words it never takes.
    person: Option<person::NeverMask>,
    rules: rules::RuleSet,
}

impl Detectors {
    /// Builds the detectors of `config`. A bad rule is refused with
    /// [`CoreError::BadRule`], naming the rule index and field (never the
    /// pattern or a dictionary entry).
    pub fn new(config: &DetectorConfig) -> Result<Self, CoreError> {
        let secret = if config.secret {
            Some(secret::SecretScanner::new()?)
        } else {
            None
        };
        check_never_mask(&config.never_mask)?;
        Ok(Detectors {
            email: config.email,
            phone: config.phone,
            iban: config.iban,
            card: config.card,
            ip: config.ip,
            secret,
            person: config
                .person
                .then(|| person::NeverMask::new(&config.never_mask)),
            rules: rules::RuleSet::new(&config.rules)?,
        })
    }

    /// Builds what the detectors build on first use (the name lists), so
    /// that the first request does not pay for it.
    pub fn warm_up(&self) {
        if self.person.is_some() {
            person::warm_up();
        }
    }

    /// Appends every finding in `text` to `out`, overlaps among the appended
    /// findings resolved, sorted by start. Findings already in `out` are left
    /// as they are.
    pub fn find(&self, text: &str, out: &mut Vec<Finding>) {
        let first = out.len();
        if let Some(secret) = &self.secret {
            secret.find(text, out);
        }
        self.find_spellable(text, out);
        // Unicode spaces and full-width forms: the same detectors read the
        // folded text too, their findings mapped back onto the text.
        if let Some(folded) = fold::Folded::of(text) {
            let mark = out.len();
            self.find_spellable(&folded.text, out);
            if let Some(found) = out.get_mut(mark..) {
                folded.map_back(found);
            }
        }
        if let Some(never) = &self.person {
            person::find(text, never, out);
        }
        self.rules.find(text, out);
        resolve_overlaps_from(out, first);
    }

    /// The detectors that also read the folded text ([`fold`]): e-mail and
    /// the numeric ones.
    fn find_spellable(&self, text: &str, out: &mut Vec<Finding>) {
        if self.email {
            email::find(text, out);
        }
        // The numeric detectors only look where a digit is: the first one
        // is found once for all of them (none: they have nothing to do).
        let first_digit = digits::next_digit(text.as_bytes(), 0);
        if let Some(first_digit) = first_digit {
            if self.iban {
                iban::find(text, first_digit, out);
            }
            if self.card {
                card::find(text, first_digit, out);
            }
            if self.phone {
                phone::find(text, first_digit, out);
            }
        }
        if self.ip {
            ip::find(text, first_digit, out);
        }
    }
}

/// The most `neverMask` entries, and the longest one (in bytes).
const MAX_NEVER_MASK_ENTRIES: usize = 10_000;
const MAX_NEVER_MASK_ENTRY_BYTES: usize = 200;

fn check_never_mask(entries: &[String]) -> Result<(), CoreError> {
    let bad = |index, reason: &str| CoreError::BadNeverMask {
        index,
        reason: reason.to_string(),
    };
    if entries.len() > MAX_NEVER_MASK_ENTRIES {
        return Err(bad(
            MAX_NEVER_MASK_ENTRIES,
            "too many entries (at most 10000)",
        ));
    }
    for (index, entry) in entries.iter().enumerate() {
        if entry.trim().is_empty() {
            return Err(bad(index, "is empty"));
        }
        if entry.len() > MAX_NEVER_MASK_ENTRY_BYTES {
            return Err(bad(index, "is longer than 200 bytes"));
        }
        if !entry.chars().any(char::is_alphabetic) {
            return Err(bad(index, "has no letter: it names no word"));
        }
    }
    Ok(())
}

/// The fixed priority of a kind when two findings of the same length
/// overlap: lower wins. secret < email < iban < card < phone < ip < domain <
/// name < custom.
pub fn kind_priority(kind: &Kind) -> u8 {
    match kind {
        Kind::Secret => 0,
        Kind::Email => 1,
        Kind::Iban => 2,
        Kind::Card => 3,
        Kind::Phone => 4,
        Kind::Ip => 5,
        Kind::Domain => 6,
        Kind::Name => 7,
        Kind::Custom(_) => 8,
    }
}

/// Sorts `findings` by start and resolves overlaps in place: the longest
/// span wins, then (same length) a vault match (`slot` is `Some`), then the
/// lower [`kind_priority`], then the earlier start, then the custom kind name
/// and the lower slot (so the result never depends on the input order).
/// Identical findings collapse into one; empty spans are dropped.
pub fn resolve_overlaps(findings: &mut Vec<Finding>) {
    resolve_overlaps_from(findings, 0);
}

/// [`resolve_overlaps`] over `findings[first..]`, leaving the ones before
/// `first` untouched.
fn resolve_overlaps_from(findings: &mut Vec<Finding>, first: usize) {
    let Some(tail) = findings.get_mut(first..) else {
        return;
    };
    if is_sorted_disjoint(tail) {
        return; // the common case: nothing to do
    }
    // Per-detector outputs are sorted runs: the stable sort merges them.
    crate::sort::sort_by(tail, |a, b| (a.start, b.end) < (b.start, a.end));
    // Findings that overlap nothing stay; each cluster of overlapping ones
    // is resolved on its own (clusters never touch each other).
    let mut i = 0;
    while i < tail.len() {
        let mut j = i + 1;
        let mut cluster_end = tail[i].end;
        while j < tail.len() && tail[j].start < cluster_end {
            cluster_end = cluster_end.max(tail[j].end);
            j += 1;
        }
        if j - i > 1 {
            resolve_cluster(&mut tail[i..j]);
        }
        i = j;
    }
    // Drop the losers (emptied by `resolve_cluster`) and empty inputs.
    let mut kept = first;
    for read in first..findings.len() {
        if !findings[read].is_empty() {
            findings.swap(kept, read);
            kept += 1;
        }
    }
    findings.truncate(kept);
}

/// Resolves one cluster of overlapping findings: winners by rank, each
/// loser emptied (its `end` set to its `start`). When the winners leave a
/// byte of a loser uncovered, the whole cluster becomes one finding of the
/// best-ranked kind without a slot (a new value, or the vault value written
/// exactly so): a loser's bytes never go out as written (finding F8-1).
fn resolve_cluster(cluster: &mut [Finding]) {
    let mut order: Vec<usize> = (0..cluster.len()).collect();
    crate::sort::sort_by(&mut order, |&a, &b| {
        let (a, b) = (&cluster[a], &cluster[b]);
        b.len()
            .cmp(&a.len())
            .then_with(|| b.slot.is_some().cmp(&a.slot.is_some()))
            .then_with(|| kind_priority(&a.kind).cmp(&kind_priority(&b.kind)))
            .then_with(|| a.start.cmp(&b.start))
            .then_with(|| a.kind.cmp(&b.kind))
            .then_with(|| a.slot.cmp(&b.slot))
            .is_lt()
    });
    let Some(&best) = order.first() else {
        return;
    };
    // The cluster's findings chain into one run of bytes (each starts
    // before the run so far ends).
    let live = || cluster.iter().filter(|f| !f.is_empty());
    let run_start = live().map(|f| f.start).min().unwrap_or(0);
    let run_end = live().map(|f| f.end).max().unwrap_or(0);
    // Accepted spans by start; they never overlap, so the one with the
    // largest start before a candidate's end is the only one that can touch it.
    let mut accepted: BTreeMap<usize, usize> = BTreeMap::new();
    for index in order {
        let finding = &mut cluster[index];
        let overlaps = finding.is_empty()
            || accepted
                .range(..finding.end)
                .next_back()
                .is_some_and(|(_, &end)| end > finding.start);
        if overlaps {
            finding.end = finding.start;
        } else {
            accepted.insert(finding.start, finding.end);
        }
    }
    // The winners must tile the whole run.
    let mut covered_to = run_start;
    for (&start, &end) in &accepted {
        if start > covered_to {
            break;
        }
        covered_to = end;
    }
    if covered_to < run_end {
        let kind = cluster[best].kind.clone();
        for finding in cluster.iter_mut() {
            finding.end = finding.start;
        }
        cluster[0] = Finding::new(kind, run_start, run_end);
    }
}

/// True when the findings are non-empty, sorted by start and disjoint.
fn is_sorted_disjoint(findings: &[Finding]) -> bool {
    findings.iter().all(|f| !f.is_empty()) && findings.windows(2).all(|w| w[0].end <= w[1].start)
}
