//! Adversarial review of the deny-by-default walk (2026-12-04): each test
//! is one finding, written while it was open (each failed then) and kept
//! as its regression test now that it is fixed. The values are invented.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "mask_support.rs"]
mod support;

use latet_core::mask::transport::{header_kept, target_pieces};
use latet_core::mask::{MaskOptions, MaskOutcome, TextsOutcome};
use latet_core::provider::{
    is_base64_media, ProviderRef, ANTHROPIC_MESSAGES as ANT, GENERIC_JSON as JSON,
    OPENAI_CHAT as CHAT,
};
use latet_core::snapshot::SnapshotIndex;
use latet_core::CoreError;
use support::*;

/// Masks once against the demo vault, memo off: the outcome.
fn outcome(shape: ProviderRef, body: &str) -> Result<MaskOutcome, CoreError> {
    masker(0).mask_request(
        &demo_index(),
        shape,
        body.as_bytes(),
        MaskOptions::default(),
    )
}

/// Masks once; returns what would be forwarded (the body when nothing
/// changed), or `None` when the masker asked for entries or refused (it
/// found something: not a leak).
fn forwarded(shape: ProviderRef, body: &str) -> Option<String> {
    match outcome(shape, body) {
        Ok(MaskOutcome::Masked { body: Some(b), .. }) => Some(String::from_utf8(b).unwrap()),
        Ok(MaskOutcome::Masked { body: None, .. }) => Some(body.to_string()),
        Ok(MaskOutcome::NeedEntries { .. }) | Err(_) => None,
    }
}

fn assert_not_forwarded_as_written(shape: ProviderRef, body: &str, written: &str) {
    if let Some(out) = forwarded(shape, body) {
        assert!(
            !out.contains(written),
            "{written:?} forwarded as written in {out}"
        );
    }
}

/// F1: one escape that does not decode to UTF-8 (`%ff`, common in binary
/// query parameters or Latin-1 forms) anywhere in a text drops the whole
/// percent-decoded reading: a percent-encoded vault value elsewhere in the
/// same text is not examined.
#[test]
fn f1_percent_reading_dropped_by_one_non_utf8_escape() {
    let body = r#"{"messages":[{"role":"user","content":"fetch https://crm.example/find?x=%ff&owner=mario.rossi%40acme.it"}]}"#;
    // Without the %ff, the reading finds it (the design holds):
    let clean = body.replace("x=%ff&", "");
    assert!(!forwarded(CHAT, &clean)
        .unwrap()
        .contains("mario.rossi%40acme.it"));
    assert_not_forwarded_as_written(CHAT, body, "mario.rossi%40acme.it");
}

/// F1 (transport): a query value whose escapes are not all UTF-8 is
/// examined as written, and its reading is dropped the same way.
#[test]
fn f1_query_component_with_non_utf8_escape() {
    let target = "/v1/chat/completions?owner=mario.rossi%40acme.it%ff";
    let pieces = target_pieces(target);
    let texts: Vec<&str> = pieces.iter().map(|p| p.decoded.as_str()).collect();
    let out = masker(0)
        .mask_texts(&demo_index(), &texts, MaskOptions::default())
        .unwrap();
    let TextsOutcome::Masked { texts: masked, .. } = out else {
        return; // asked for entries: found
    };
    let owner = pieces
        .iter()
        .position(|p| p.decoded.contains("mario"))
        .unwrap();
    assert!(
        masked[owner].is_some(),
        "query value with a vault value percent-encoded left as written"
    );
}

/// F2: a signed field (`thinking`) is examined with the detectors on its
/// text only: not its percent-decoded reading, not JSON inside it. A value
/// percent-encoded (or \u-escaped inside JSON) in a thinking block is
/// forwarded verbatim instead of refusing the request.
#[test]
fn f2_signed_field_skips_readings() {
    let mut leaks = Vec::new();
    for thinking in [
        "Owner is mario.rossi%40acme.it per the CRM link.",
        r#"{\"owner\":\"mario.rossi\\u0040acme.it\"}"#,
    ] {
        let body = format!(
            r#"{{"model":"claude","messages":[{{"role":"assistant","content":[{{"type":"thinking","thinking":"{thinking}","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxDYdVZ"}}]}}]}}"#
        );
        let result = outcome(ANT, &body);
        if !matches!(result, Err(CoreError::ValueInVerbatimField { .. })) {
            leaks.push(format!(
                "thinking {thinking:?} forwarded as written: {result:?}"
            ));
        }
    }
    assert!(leaks.is_empty(), "{leaks:#?}");
}

/// F3: the memo re-validates a hit against values added since by
/// `text.contains(value)` on the raw text; a value reachable only through a
/// reading (percent-decoded) or JSON escapes inside a JSON text is missed,
/// and the stale "nothing to mask" result is served.
#[test]
fn f3_memo_serves_stale_result_for_value_behind_a_reading() {
    let mut stale = Vec::new();
    for content in [
        // A text with a percent-encoded name (read via the percent reading).
        "please look up https://crm.example/p?who=Luca%20Verdi today",
        // A JSON text whose inner string spells the name with an escape.
        r#"{\"who\":\"Luca \\u0056erdi\",\"pad\":\"padding padding\"}"#,
    ] {
        let body = format!(r#"{{"messages":[{{"role":"user","content":"{content}"}}]}}"#);
        let mut index: SnapshotIndex = demo_index();
        let mut m = masker(1 << 20);
        // First turn: the name is not in the vault yet; memoised unchanged.
        let (first, _) = mask_ok(&mut m, &index, CHAT, body.as_bytes());
        assert_eq!(first, body.as_bytes());
        // The operator (or another request) adds the name.
        let added = entry(900, "Luca Verdi", "Paolo Neri", "name", index.generation());
        index.add_entries(index.generation(), vec![added]).unwrap();
        // A fresh masker finds it through the reading...
        let (fresh, _) = mask_ok(&mut masker(0), &index, CHAT, body.as_bytes());
        assert_ne!(fresh, body.as_bytes(), "fresh masker: {content}");
        // ...the memoised one must too.
        let (again, _) = mask_ok(&mut m, &index, CHAT, body.as_bytes());
        if again == body.as_bytes() {
            stale.push(format!("memo served the stale result for {content}"));
        }
    }
    assert!(stale.is_empty(), "{stale:#?}");
}

/// F4: a phone written as a JSON number in exponent form: `integer_form`
/// gives its digits, but `phone_digits` is tried on the number as written
/// (with its `e`), so the +-less phone reading is never made.
#[test]
fn f4_phone_number_in_exponent_form() {
    // Plain digits are caught (the design holds):
    assert!(
        !forwarded(JSON, r#"{"phone":393471234567}"#).is_some_and(|o| o.contains("393471234567"))
    );
    for written in ["3.93471234567e11", "393471234567.0", "39347123456.7e1"] {
        let body = format!(r#"{{"phone":{written}}}"#);
        let out = forwarded(JSON, &body);
        assert!(out.is_none(), "{written} forwarded as written: {out:?}");
    }
}

/// F5: an object key that holds JSON is examined as plain text (strings
/// are parsed as JSON when they look like it, keys are not): an escape in
/// the inner JSON hides a value that the same text as a string value gives
/// up.
#[test]
fn f5_json_inside_a_key_is_not_decoded() {
    let inner = r#"{\"owner\":\"mario.rossi\\u0040acme.it\"}"#;
    // As a string value, the inner JSON is decoded and the value found:
    let as_value = format!(r#"{{"metadata":{{"k":"{inner}"}}}}"#);
    assert!(forwarded(JSON, &as_value).is_none_or(|o| !o.contains("mario.rossi")));
    // As a key it is not:
    let as_key = format!(r#"{{"metadata":{{"{inner}":"x"}}}}"#);
    assert_not_forwarded_as_written(JSON, &as_key, "mario.rossi");
}

/// F6: a `data:` URL whose payload is base64 of text (not a known binary
/// file) is masked as any string, but its reading is the payload as
/// written: the base64 is never decoded, and the provider decodes the file
/// (`file_data` of a text file).
#[test]
fn f6_base64_text_data_url_is_not_decoded() {
    // base64("mail mario.rossi@acme.it\n")
    let payload = "bWFpbCBtYXJpby5yb3NzaUBhY21lLml0Cg==";
    let body = format!(
        r#"{{"messages":[{{"role":"user","content":[{{"type":"file","file":{{"filename":"a.txt","file_data":"data:text/plain;base64,{payload}"}}}}]}}]}}"#
    );
    assert_not_forwarded_as_written(CHAT, &body, payload);
}

/// F7: D-R2 says text inside genuine base64 media "is not word-bounded, so
/// the detectors would not find it anyway". A secret or a card between
/// `/` or `+` of the base64 alphabet is word-bounded: the same string is
/// masked in any other field, and kept in a media field.
#[test]
fn f7_secret_inside_base64_media_is_found_elsewhere_but_kept() {
    let media = "iVBORw0KGgoAAAANSUhEUgAA/AKIAIOSFODNN7EXAMPLE/AAAAAAAA";
    assert!(is_base64_media(media));
    let elsewhere = format!(r#"{{"note":"{media}"}}"#);
    let found = match outcome(JSON, &elsewhere).unwrap() {
        MaskOutcome::NeedEntries { values } => {
            values.iter().any(|v| v.value == "AKIAIOSFODNN7EXAMPLE")
        }
        _ => false,
    };
    let masked_elsewhere = found;
    if masked_elsewhere {
        // The detectors read it: then the media field forwards a value the
        // walk would have masked anywhere else.
        let body = format!(
            r#"{{"model":"claude","messages":[{{"role":"user","content":[{{"type":"image","source":{{"type":"base64","media_type":"image/png","data":"{media}"}}}}]}}]}}"#
        );
        assert_not_forwarded_as_written(ANT, &body, "AKIAIOSFODNN7EXAMPLE");
    }
}

/// F8: an exponent at the edge of i32 overflows in `integer_form`
/// (`exponent - frac.len()`, then `-shift`): a panic in builds with
/// overflow checks (tests, fuzzing with debug assertions), a valid JSON
/// number in any body.
#[test]
fn f8_exponent_overflow_panics() {
    for written in ["1e-2147483648", "1.5e-2147483648"] {
        let body = format!(r#"{{"n":{written}}}"#);
        let result = std::panic::catch_unwind(|| outcome(JSON, &body).is_ok());
        assert!(result.is_ok(), "{written}: the masker panicked");
    }
}

/// F9: a fragment after a query is in no target piece: its text is not
/// examined (without a query, it is part of the last path segment and is).
#[test]
fn f9_fragment_after_query_not_examined() {
    let target = "/v1/chat/completions?x=1#mario.rossi@acme.it";
    let covered = target_pieces(target)
        .iter()
        .any(|p| p.decoded.contains("mario.rossi@acme.it"));
    assert!(covered, "the fragment is not examined");
}

/// F10: the credential form check takes a percent-encoded e-mail (no `@`)
/// and any token-shaped value (an IBAN, an IP address) as a credential.
#[test]
fn f10_credential_header_form_takes_encoded_values() {
    for value in [
        "mario.rossi%40acme.it",
        "Bearer sk-proj-abc mario.rossi%40acme.it",
    ] {
        assert!(
            header_kept("x-api-key", value).is_none(),
            "{value:?} kept as a credential"
        );
    }
}

/// Probes that held (kept as regression checks).
#[test]
fn held_numbers_and_readings() {
    for body in [
        r#"{"n":-4111111111111111}"#,
        r#"{"n":4.111111111111111e15}"#,
        r#"{"n":41111111111111110e-1}"#,
        r#"{"n":"%2B39%20347%20123%204567"}"#,
        r#"{"n":"data:text/plain,mario.rossi%2540acme.it"}"#,
        r#"{"n":"mario.rossi\u002540acme.it"}"#,
        r#"{"{\"mario.rossi@acme.it\":1}":2}"#,
        r#"{"a":"[\"[\\\"mario.rossi\\\\u0040acme.it\\\"]\"]"}"#,
    ] {
        let out = forwarded(JSON, body);
        assert!(
            out.as_deref()
                .is_none_or(|o| !o.contains("4111111111111111")
                    && !o.contains("347")
                    && !o.contains("mario.rossi")
                    && !o.contains("111111111111111e15")),
            "{body} -> {out:?}"
        );
    }
}
