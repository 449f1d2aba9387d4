//! Inputs found by the long fuzz runs (`fuzz/`), each kept as a test (rule
//! H2, docs/product-rules.md#h2), replayed the way the `mask_request`
//! target runs them: the fuzz vault, the default detectors, and a fake
//! entries service that gives each new value an inert surrogate
//! (`Zqv<n>x`) until the request masks. The oracle is the
//! target's: no vault value is left written (word-bounded) in a masked
//! text, except where it shares bytes with one of our own surrogates
//! (SECURITY.md R7).
//!
//! An open finding's test is `#[ignore]`d with its SECURITY.md row; enable it
//! with the fix (`cargo test -p latet-core --test fuzz_findings -- --ignored`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use latet_core::provider::{self};

/// The fuzz targets' own vault, fake entries service and oracle (the fuzz
/// crate is a separate workspace; its library is plain latet-core code), so
/// the replay is the target's run, not a copy of it. Not every helper is
/// used here, and its per-execution `Vault` is an enum with the index inline.
#[allow(dead_code, clippy::large_enum_variant)]
#[path = "../../fuzz/src/lib.rs"]
mod latet_fuzz;

/// A crash input kept under `tests/fixtures/fuzz/` (without the shape byte).
fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/fixtures/fuzz/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(path).unwrap()
}

/// Masks `body` as a Text-shape request the way the `mask_request` target
/// does, asserts no vault value is left, and returns the masked text.
/// Positions only in the message: never a value.
fn assert_fully_masked(name: &str, body: &[u8]) -> String {
    let mut vault = latet_fuzz::Vault::fresh();
    let mut masker = latet_fuzz::masker(0);
    let masked = latet_fuzz::mask_resolving(&mut masker, &mut vault, provider::PLAIN_TEXT, body)
        .unwrap()
        .expect("still asking for entries after 4 rounds");
    let text = String::from_utf8(masked.unwrap_or_else(|| body.to_vec())).unwrap();
    let left = latet_fuzz::values_in(vault.get(), &text);
    assert!(left.is_empty(), "{name}: vault values left at {left:?}");
    text
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
    let text = assert_fully_masked("spelled", &body);
    // Where the person wrote the address, it is masked (the exemption is
    // only for the bytes beside a replacement).
    let written = "Writ \0\0\0i@brightvale.it";
    assert!(String::from_utf8_lossy(&body).contains(written));
    assert!(!text.contains(written), "the address is left where written");
}

/// Found by CI's fuzz smoke (stop 32), minimized: the phone's active
/// surrogate (`+39 348 765 4321`) written glued to a new e-mail address
/// that starts inside it (`4321---.isi@…`; `re` glued before the `+` so
/// that no phone detector reads the surrogate whole), and a shorter phone in the vault
/// (`+39 348 765`, learnt from the same text) inside the surrogate. The
/// shorter phone was dropped as a part of our surrogate, then the address's
/// replacement broke the surrogate and the phone went out as written.
#[test]
fn a_value_inside_a_surrogate_that_a_replacement_breaks_is_masked() {
    let text = assert_fully_masked(
        "broken surrogate",
        b"call +39 348 765 or re+39 348 765 4321---.isi@example.it",
    );
    assert!(!text.contains("4321---.isi"), "the address kept");
}
