//! The playground's vault: the entries the user pasted, and the entries the
//! control service would create for new values, derived here under a fixed
//! demo key (the real service derives under each vault's own secret key, so
//! its surrogates differ; every one derived here is marked `demo`).
//!
//! Entries are created as the control service creates them
//! (`control/src/vault.rs`, `Vaults::entries`): an e-mail with a company
//! domain first gets the domain's own entry and uses its surrogate, and a
//! candidate that is an active value or surrogate is drawn again with the
//! next counter.

use latet_core::keyed_hash::entry_id;
use latet_core::snapshot::SnapshotIndex;
use latet_core::surrogate::{self, email_company_domain};
use latet_core::wire::{Entry, EntryId, NewValue, Snapshot, WIRE_VERSION};
use latet_core::{CoreError, Kind};
use serde::{Deserialize, Serialize};

/// The demo vault's generation.
pub const DEMO_GENERATION: u64 = 1;
/// The key demo surrogates are derived under (public: nothing is secret here).
const DEMO_DERIVE_KEY: &[u8] = b"latet-playground/demo-derive-key";
/// The key demo entry ids are hashed under.
const DEMO_ID_KEY: &[u8] = b"latet-playground/demo-id-key";
/// Draws before giving up on a free surrogate (the control service's bound).
const MAX_DERIVE_COUNTER: u32 = 10_000;

/// One vault entry as pasted: a value, its kind, and optionally its
/// surrogate (derived under the demo key when absent).
#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PastedEntry {
    pub kind: Kind,
    pub value: String,
    #[serde(default)]
    pub surrogate: Option<String>,
}

/// An entry as the page shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ShownEntry {
    pub kind: String,
    pub value: String,
    pub surrogate: String,
    /// Derived here under the demo key (not what a real vault would give).
    pub demo: bool,
}

impl ShownEntry {
    /// `entry` as shown; `demo` when it was derived here.
    pub fn of(entry: &Entry, demo: bool) -> Self {
        ShownEntry {
            kind: entry.kind.as_str().to_string(),
            value: entry.value.clone(),
            surrogate: entry.surrogate.clone(),
            demo,
        }
    }
}

/// Why a pasted vault was refused (position and reason, never a value).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VaultError {
    /// `vault[2].surrogate`, or `vault` for the whole document.
    pub field: String,
    pub reason: String,
}

/// The index of the pasted vault (empty text or `[]`: an empty vault), and
/// the entries it derived for pasted values without a surrogate.
pub fn index_of(pasted: &str) -> Result<(SnapshotIndex, Vec<ShownEntry>), VaultError> {
    let entries: Vec<PastedEntry> = if pasted.trim().is_empty() {
        Vec::new()
    } else {
        serde_json::from_str(pasted).map_err(|err| VaultError {
            field: "vault".into(),
            reason: format!(
                "expected a list of {{\"kind\", \"value\", \"surrogate\" (optional)}} at line {} column {} ({:?} error)",
                err.line(),
                err.column(),
                err.classify()
            ),
        })?
    };
    let mut index = empty_index();
    let mut derived = Vec::new();
    for (i, pasted) in entries.into_iter().enumerate() {
        let bad = |field: &str, reason: &str| VaultError {
            field: format!("vault[{i}]{field}"),
            reason: reason.into(),
        };
        if pasted.value.is_empty() {
            return Err(bad(".value", "must not be empty"));
        }
        if index.by_value(&pasted.value).is_some() {
            return Err(bad(".value", "the same value is listed twice"));
        }
        let entry = match pasted.surrogate {
            Some(surrogate) => {
                if surrogate.is_empty() || surrogate == pasted.value {
                    return Err(bad(
                        ".surrogate",
                        "must not be empty nor equal to the value",
                    ));
                }
                if index.by_surrogate(&surrogate).is_some() || index.by_value(&surrogate).is_some()
                {
                    return Err(bad(
                        ".surrogate",
                        "already a value or a surrogate of another entry",
                    ));
                }
                Entry {
                    id: demo_id(&pasted.value),
                    value: pasted.value,
                    surrogate,
                    kind: pasted.kind,
                    generation: DEMO_GENERATION,
                }
            }
            None => {
                let values = [NewValue {
                    kind: pasted.kind,
                    value: pasted.value,
                }];
                let created = create_entries(&index, &values)
                    .map_err(|_| bad("", "no free surrogate could be derived"))?;
                derived.extend(created.iter().map(|e| ShownEntry::of(e, true)));
                add(&mut index, created).map_err(|e| bad("", &e.to_string()))?;
                continue;
            }
        };
        add(&mut index, vec![entry]).map_err(|e| bad("", &e.to_string()))?;
    }
    Ok((index, derived))
}

/// Creates the entries for `values` the control service would create
/// (requested ones in order, then company domains made alongside).
pub fn create_entries(index: &SnapshotIndex, values: &[NewValue]) -> Result<Vec<Entry>, CoreError> {
    let mut planner = Planner {
        index,
        created: Vec::new(),
    };
    let mut alongside: Vec<Entry> = Vec::new();
    let mut answer = Vec::with_capacity(values.len());
    for v in values {
        let entry = match (&v.kind, email_company_domain(&v.value)) {
            (Kind::Email, Some(domain)) if planner.lookup(&v.value).is_none() => {
                let domain_entry = planner.get_or_create(&Kind::Domain, domain, None)?;
                let entry =
                    planner.get_or_create(&v.kind, &v.value, Some(&domain_entry.surrogate))?;
                if !alongside.iter().any(|e| e.id == domain_entry.id) {
                    alongside.push(domain_entry);
                }
                entry
            }
            _ => planner.get_or_create(&v.kind, &v.value, None)?,
        };
        answer.push(entry);
    }
    for extra in alongside {
        if !answer.iter().any(|e| e.id == extra.id) {
            answer.push(extra);
        }
    }
    // Only the ones the index does not hold yet are new.
    answer.retain(|e| index.by_value(&e.value).is_none());
    Ok(answer)
}

/// Adds entries of the demo generation to the index.
pub fn add(index: &mut SnapshotIndex, entries: Vec<Entry>) -> Result<usize, CoreError> {
    index.add_entries(DEMO_GENERATION, entries)
}

fn empty_index() -> SnapshotIndex {
    let snapshot = Snapshot {
        version: WIRE_VERSION,
        generation: DEMO_GENERATION,
        seq: 0,
        retired_salt: "00".into(),
        retired: Vec::new(),
        entries: Vec::new(),
    };
    // An empty snapshot of the supported version always builds.
    SnapshotIndex::from_snapshot(snapshot).unwrap_or_else(|_| SnapshotIndex::empty())
}

fn demo_id(value: &str) -> EntryId {
    EntryId(entry_id(DEMO_ID_KEY, value))
}

/// Gets or creates entries for one entries call.
struct Planner<'a> {
    index: &'a SnapshotIndex,
    created: Vec<Entry>,
}

impl Planner<'_> {
    fn lookup(&self, value: &str) -> Option<Entry> {
        if let Some(found) = self.index.by_value(value) {
            // The index keeps a fingerprint of the id, not the id: the
            // demo vault's ids are its values' demo ids.
            return Some(Entry {
                id: demo_id(found.value),
                value: found.value.to_string(),
                surrogate: found.surrogate.to_string(),
                kind: found.kind.clone(),
                generation: found.generation,
            });
        }
        self.created.iter().find(|e| e.value == value).cloned()
    }

    fn taken(&self, candidate: &str) -> bool {
        self.index.by_value(candidate).is_some()
            || self.index.by_surrogate(candidate).is_some()
            || self
                .created
                .iter()
                .any(|e| e.value == candidate || e.surrogate == candidate)
    }

    fn get_or_create(
        &mut self,
        kind: &Kind,
        value: &str,
        domain_surrogate: Option<&str>,
    ) -> Result<Entry, CoreError> {
        if let Some(found) = self.lookup(value) {
            return Ok(found);
        }
        for counter in 0..MAX_DERIVE_COUNTER {
            let candidate = surrogate::derive(
                DEMO_DERIVE_KEY,
                DEMO_GENERATION,
                kind,
                value,
                counter,
                domain_surrogate,
            );
            if self.taken(&candidate) {
                continue;
            }
            let entry = Entry {
                id: demo_id(value),
                value: value.to_string(),
                surrogate: candidate,
                kind: kind.clone(),
                generation: DEMO_GENERATION,
            };
            self.created.push(entry.clone());
            return Ok(entry);
        }
        Err(CoreError::BadEntry {
            position: 0,
            reason: format!("no free surrogate of kind {kind}"),
        })
    }
}
