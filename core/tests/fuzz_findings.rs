//! Inputs found by the long fuzz runs (`fuzz/`, issue 8), replayed the way
//! the `mask_request` target runs them: the fuzz vault, the default
//! detectors, and a fake entries service that gives each new value an inert
//! surrogate (`Zqv<n>x`) until the request masks. The oracle is the
//! target's: no vault value is left written (word-bounded) in a masked
//! text, except where it shares bytes with one of our own surrogates
//! (SECURITY.md R7).
//!
//! An open finding's test is `#[ignore]`d with its SECURITY.md row; enable it
//! with the fix (`cargo test -p latet-core --test fuzz_findings -- --ignored`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use latet_core::detect::{DetectorConfig, Detectors};
use latet_core::keyed_hash::{entry_id, retired_hash};
use latet_core::mask::{ApiShape, MaskOptions, MaskOutcome, Masker};
use latet_core::snapshot::SnapshotIndex;
use latet_core::text::lead_bucket;
use latet_core::wire::{Entry, EntryId, RetiredHash, RetiredSurrogate, Snapshot};
use latet_core::Kind;

/// The fuzz targets' masker vault (`fuzz/src/lib.rs`, `MASK_VAULT`).
const VAULT: &[(&str, &str, &str)] = &[
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

fn entry(value: &str, surrogate: &str, kind: Kind, generation: u64) -> Entry {
    Entry {
        id: EntryId(entry_id(b"latet-fuzz-id-key", value)),
        value: value.to_string(),
        surrogate: surrogate.to_string(),
        kind,
        generation,
    }
}

fn vault() -> SnapshotIndex {
    let salt = [0u8; 16];
    SnapshotIndex::from_snapshot(Snapshot {
        version: 1,
        generation: 1,
        seq: 1,
        retired_salt: "00".repeat(16),
        retired: vec![RetiredSurrogate {
            hash: RetiredHash(retired_hash(&salt, "Carla Verdi")),
            lead: lead_bucket("Carla Verdi"),
        }],
        entries: VAULT
            .iter()
            .map(|(v, s, k)| entry(v, s, Kind::parse(k).unwrap_or(Kind::Name), 1))
            .collect(),
    })
    .unwrap()
}

/// Masks `body` as the fuzz target does: new values get entries from the
/// fake service, then the request is masked again.
fn mask(index: &mut SnapshotIndex, shape: ApiShape, body: &[u8]) -> Vec<u8> {
    let mut masker = Masker::new(Detectors::new(&DetectorConfig::default()).unwrap(), 0);
    for _ in 0..4 {
        match masker
            .mask_request(index, shape, body, MaskOptions::default())
            .unwrap()
        {
            MaskOutcome::Masked { body: out, .. } => return out.unwrap_or_else(|| body.to_vec()),
            MaskOutcome::NeedEntries { values } => {
                let first = index.len();
                let entries = values
                    .iter()
                    .enumerate()
                    .map(|(i, v)| {
                        let surrogate = format!("Zqv{}x", first + i);
                        entry(&v.value, &surrogate, v.kind.clone(), index.generation())
                    })
                    .collect();
                let generation = index.generation();
                index.add_entries(generation, entries).unwrap();
            }
        }
    }
    panic!("still asking for entries after 4 rounds");
}

/// Spans of vault values left written in `text`, sharing no byte with our surrogates.
fn values_left(index: &SnapshotIndex, text: &str) -> Vec<(usize, usize)> {
    let mut values = Vec::new();
    index.find_values(text, &mut values);
    values
        .iter()
        .filter(|m| !overlaps_a_surrogate(index, text, m.start, m.end))
        .map(|m| (m.start, m.end))
        .collect()
}

/// Whether `start..end` of `text` shares a byte with an active surrogate
/// written there: inside one (word-bounded or not), or spelled by the text
/// beside a replacement with its bytes. Compared as bytes, so a window that
/// starts inside a multi-byte character is still looked at: the fuzz
/// oracle's `latet_fuzz::overlaps_a_surrogate`, in the same form.
fn overlaps_a_surrogate(index: &SnapshotIndex, text: &str, start: usize, end: usize) -> bool {
    let bytes = text.as_bytes();
    index.entries().any(|e| {
        let surrogate = e.surrogate.as_bytes();
        (start.saturating_sub(surrogate.len().saturating_sub(1))..end)
            .any(|at| bytes[at..].starts_with(surrogate))
    })
}

/// A crash input kept under `tests/fixtures/fuzz/` (without the shape byte).
fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/fixtures/fuzz/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(path).unwrap()
}

fn assert_fully_masked(name: &str, body: &[u8]) {
    let mut index = vault();
    let out = mask(&mut index, ApiShape::Text, body);
    let text = String::from_utf8(out).unwrap();
    let left = values_left(&index, &text);
    // Positions only: never print a value.
    assert!(left.is_empty(), "{name}: vault values left at {left:?}");
}

/// The harness itself: a text with values and a new email masks whole.
#[test]
fn the_replay_harness_masks_a_plain_text_whole() {
    assert_fully_masked(
        "plain",
        b"Mario Rossi (mario.rossi@acme.it, new.person@acme.it) works at acme.it.",
    );
}

/// Finding F8-1 (SECURITY.md), minimized: a vault value (`acme.it`)
/// overlaps a detected new email that starts inside it; the overlap is
/// resolved to the vault value and the rest of the email is forwarded as
/// written (with the surrogate's last word it spells the email again).
#[test]
fn overlapping_value_and_new_email_leave_nothing_unmasked() {
    assert_fully_masked("minimized", b"acme.it-ssi@ace.it-i\x00it-ssi@ace.it");
}

/// Finding F8-1 as the `mask_request` long run found it
/// (`fuzz/artifacts/mask_request/crash-6e13557b…`, shape Text): a vault
/// value (`acme.it`) is left verbatim where overlapping new values won.
#[test]
fn overlapping_new_values_leave_no_vault_value_verbatim() {
    assert_fully_masked(
        "found",
        b"Writ \x00\x00\x00\x00\x00\x00\x00@\x17acme\x00\x00\x00\x00\x00.%it o0o Ro\x09montent o0o R\x01\x00\x00`\x09\x05\x09si@acme0o Ro\x09montent o0o R\x01\x00\x00`\x09\x05\x09si@acme.it----ssi@acme.isi@acme.it----ssi@acme.it----------------------.it----ssi@acme.isi@acme.it----ssi@acme.it--------------------------------",
    );
}

/// The second `mask_request` long run (after F8-1's fix, 1.9M executions):
/// a phone written right after another ("…4567+39 348 765 4321") whose
/// start is a newer vault value. Masked where written; the value's text
/// reappears only as the start of the first phone's surrogate, glued to the
/// next replacement (not on a word boundary): the oracle now finds our
/// surrogates wherever they stand (SECURITY.md R7).
#[test]
fn a_surrogate_glued_to_the_next_replacement_is_ours() {
    let body = fixture("mask_request-phone-overlap.txt");
    assert_fully_masked("glued", &body);
}

/// The third `mask_request` long run (after the glued-surrogate fix, 3,438
/// executions): masked correctly; the oracle's window around a value began
/// inside a two-byte character ("…ére\0-+39 348 765 4321"), so it never
/// looked at the surrogate there and called the value left (SECURITY.md R7).
/// The oracle now compares bytes; the masker's output is asserted here.
#[test]
fn a_surrogate_after_a_multibyte_character_is_ours() {
    let body = fixture("mask_request-window-mid-character.txt");
    assert_fully_masked("mid-character", &body);
}

/// The fourth `mask_request` long run (2.4M executions): a new address
/// `i@` + the company domain's surrogate was written, so it became a vault
/// value; elsewhere the text `%i@` stands before the company domain, which
/// no detector takes for an address there and which masks to that same
/// surrogate, so the masked text spells the other entry's value beside a
/// replacement. Not the person's text left as written: the oracle exempts
/// values that share bytes with a surrogate written there (SECURITY.md R7).
#[test]
fn a_value_spelled_beside_a_replacement_is_ours() {
    let body = fixture("mask_request-value-spelled-beside-domain.txt");
    assert_fully_masked("spelled", &body);
    // Where the person wrote the address, it is masked (the exemption is
    // only for the bytes beside a replacement).
    let mut index = vault();
    let text = String::from_utf8(mask(&mut index, ApiShape::Text, &body)).unwrap();
    let written = "Writ \0\0\0i@brightvale.it";
    assert!(String::from_utf8_lossy(&body).contains(written));
    assert!(!text.contains(written), "the address is left where written");
}
