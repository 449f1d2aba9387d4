//! Shared pieces of the fuzz targets: test vaults, a fake entries service
//! (what the control service answers for new values), and the checks the
//! targets assert.

use latet_core::detect::{DetectorConfig, Detectors};
use latet_core::keyed_hash::{entry_id, retired_hash};
use latet_core::kind::Kind;
use latet_core::mask::{MaskOptions, MaskOutcome, Masker};
use latet_core::provider::{self, ProviderRef};
use latet_core::snapshot::SnapshotIndex;
use latet_core::text::lead_bucket;
use latet_core::wire::{Entry, EntryId, NewValue, RetiredHash, RetiredSurrogate, Snapshot};

/// Salt of the test vaults' retired hashes.
pub const SALT_HEX: &str = "00112233445566778899aabbccddeeff";

/// Key of the fake service's entry ids.
const ID_KEY: &[u8] = b"latet-fuzz-id-key";

/// The masker's vault: (value, surrogate, kind). No surrogate shares a word
/// with a value here; values the fuzzer adds can (see [`values_in`]).
pub const MASK_VAULT: &[(&str, &str, &str)] = &[
    ("Mario Rossi", "Laura Bianchi", "name"),
    ("José García", "Iñigo Pérez", "name"),
    (
        "mario.rossi@acme.it",
        "laura.bianchi@brightvale.it",
        "email",
    ),
    ("acme.it", "brightvale.it", "domain"),
    ("+39 347 123 4567", "+39 348 765 4321", "phone"),
    ("Project \"Blue\" Fox", "Orchid Nine", "codename"),
    ("DE89370400440532013000", "DE75512108001245126199", "iban"),
];

/// Retired surrogates of the masker's vault.
pub const MASK_RETIRED: &[&str] = &["Carla Verdi"];

fn salt() -> Vec<u8> {
    (0..SALT_HEX.len())
        .step_by(2)
        .filter_map(|i| u8::from_str_radix(&SALT_HEX[i..i + 2], 16).ok())
        .collect()
}

/// A retired surrogate as the wire carries it.
pub fn retired(surrogate: &str) -> RetiredSurrogate {
    RetiredSurrogate {
        hash: RetiredHash(retired_hash(&salt(), surrogate)),
        lead: lead_bucket(surrogate),
    }
}

/// An entry with the keyed id of its value.
pub fn entry(value: &str, surrogate: &str, kind: Kind, generation: u64) -> Entry {
    Entry {
        id: EntryId(entry_id(ID_KEY, value)),
        value: value.to_string(),
        surrogate: surrogate.to_string(),
        kind,
        generation,
    }
}

/// The snapshot of a vault given as (value, surrogate, kind name).
pub fn snapshot(entries: &[(&str, &str, &str)], retired_list: &[&str]) -> Snapshot {
    Snapshot {
        version: 1,
        generation: 1,
        seq: 1,
        retired_salt: SALT_HEX.to_string(),
        retired: retired_list.iter().map(|s| retired(s)).collect(),
        entries: entries
            .iter()
            .map(|(v, s, k)| entry(v, s, Kind::parse(k).unwrap_or(Kind::Name), 1))
            .collect(),
    }
}

/// An index over [`snapshot`].
pub fn index(entries: &[(&str, &str, &str)], retired_list: &[&str]) -> SnapshotIndex {
    match SnapshotIndex::from_snapshot(snapshot(entries, retired_list)) {
        Ok(index) => index,
        Err(err) => panic!("test vault refused: {err}"),
    }
}

/// A masker with the default detectors (compiled once per process).
pub fn masker(memo_bytes: usize) -> Masker {
    static DETECTORS: std::sync::OnceLock<Detectors> = std::sync::OnceLock::new();
    let detectors = DETECTORS.get_or_init(|| match Detectors::new(&DetectorConfig::default()) {
        Ok(detectors) => detectors,
        Err(err) => panic!("default detectors refused: {err}"),
    });
    Masker::new(detectors.clone(), memo_bytes)
}

/// The fake entries service: an inert surrogate for each new value
/// (`Zqv<n>x`, found by no detector and sharing no word with a value).
pub fn entries_for(index: &SnapshotIndex, values: &[NewValue]) -> Vec<Entry> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let n = index.len() + i;
            entry(
                &v.value,
                &format!("Zqv{n}x"),
                v.kind.clone(),
                index.generation(),
            )
        })
        .collect()
}

/// The masker's vault, built once per process (read-only; see [`Vault`]).
pub fn mask_vault() -> &'static SnapshotIndex {
    static VAULT: std::sync::OnceLock<SnapshotIndex> = std::sync::OnceLock::new();
    VAULT.get_or_init(|| index(MASK_VAULT, MASK_RETIRED))
}

/// One execution's view of the masker's vault: the shared index built once,
/// until the execution changes it (entries for new values, applied events);
/// then its own copy, built from the same snapshot so it starts identical.
/// Building the index on every execution was most of the targets' own time.
pub enum Vault {
    /// The process-wide index, untouched.
    Shared(&'static SnapshotIndex),
    /// This execution's own index, changed by it.
    Own(SnapshotIndex),
}

impl Vault {
    /// The masker's vault as built from its snapshot.
    pub fn fresh() -> Self {
        Vault::Shared(mask_vault())
    }

    /// The index to read.
    pub fn get(&self) -> &SnapshotIndex {
        match self {
            Vault::Shared(index) => index,
            Vault::Own(index) => index,
        }
    }

    /// The index to change: this execution's own copy.
    pub fn own(&mut self) -> &mut SnapshotIndex {
        if let Vault::Shared(_) = self {
            *self = Vault::Own(index(MASK_VAULT, MASK_RETIRED));
        }
        match self {
            Vault::Own(index) => index,
            Vault::Shared(_) => unreachable!("replaced just above"),
        }
    }
}

/// Masks as the filter does: new values get entries from the fake service
/// and the request is masked again (a few rounds at most). `Ok(None)` when
/// the masker still asks for entries after those rounds.
pub fn mask_resolving(
    masker: &mut Masker,
    vault: &mut Vault,
    shape: ProviderRef,
    body: &[u8],
) -> Result<Option<Option<Vec<u8>>>, latet_core::CoreError> {
    for _ in 0..4 {
        match masker.mask_request(vault.get(), shape, body, MaskOptions::default())? {
            MaskOutcome::Masked { body, .. } => return Ok(Some(body)),
            MaskOutcome::NeedEntries { values } => {
                let index = vault.own();
                let entries = entries_for(index, &values);
                let generation = index.generation();
                if let Err(err) = index.add_entries(generation, entries) {
                    panic!("fake entries refused: {err}");
                }
            }
        }
    }
    Ok(None)
}

/// Every vault value written (word-bounded) in `text`, as (start, end).
pub fn values_in(index: &SnapshotIndex, text: &str) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    index.find_values(text, &mut found);
    // A value sharing bytes with an active surrogate written there is not
    // the person's text left as written: a short phone number can be the
    // start of another number's surrogate, a replacement can be glued to
    // the next one, and another entry's value can contain a surrogate that
    // the text beside it completes (found by this target; SECURITY.md R7).
    // Nor is a value inside a retired surrogate written there: the masker
    // keeps our own retired surrogates as written, on purpose (a lone
    // given name the detectors learnt elsewhere in the text can be the
    // first word of one).
    let mut retired = Vec::new();
    index.find_retired(text, &mut retired);
    found
        .iter()
        .filter(|m| !overlaps_a_surrogate(index, text, m.start, m.end))
        .filter(|m| !retired.iter().any(|&(s, e)| s <= m.start && m.end <= e))
        .map(|m| (m.start, m.end))
        .collect()
}

/// Whether `start..end` of `text` shares a byte with an active surrogate
/// written there (anywhere, word-bounded or not). Such a value is not what
/// a person wrote left as written: either it lies inside one of our
/// surrogates, or the person's text beside a replacement spells it with the
/// replacement's bytes (`…i@` + a domain's surrogate, when another entry's
/// value is that address; SECURITY.md R7). Compared as bytes: a window
/// that starts inside a multi-byte character must still be looked at.
pub fn overlaps_a_surrogate(index: &SnapshotIndex, text: &str, start: usize, end: usize) -> bool {
    let bytes = text.as_bytes();
    index.entries().any(|e| {
        let surrogate = e.surrogate.as_bytes();
        (start.saturating_sub(surrogate.len().saturating_sub(1))..end)
            .any(|at| bytes[at..].starts_with(surrogate))
    })
}

/// Every string value of a JSON document (not keys), decoded.
pub fn json_strings(value: &serde_json::Value, out: &mut Vec<String>) {
    match value {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Array(items) => items.iter().for_each(|v| json_strings(v, out)),
        serde_json::Value::Object(map) => map.values().for_each(|v| json_strings(v, out)),
        _ => {}
    }
}

/// The API shape a selector byte names.
pub fn shape_of(selector: u8) -> ProviderRef {
    match selector % 5 {
        0 => provider::GENERIC_JSON,
        1 => provider::PLAIN_TEXT,
        2 => provider::OPENAI_CHAT,
        3 => provider::OPENAI_RESPONSES,
        _ => provider::ANTHROPIC_MESSAGES,
    }
}
