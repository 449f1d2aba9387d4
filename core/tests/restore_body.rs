//! Whole-answer restore: provider answers, plain text, and mask-then-restore
//! round trips on random text and JSON.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "restore_support.rs"]
mod support;

use latet_core::restore::{restore_body, restore_text, RestoreStats};
use proptest::prelude::*;
use serde_json::{json, Value};
use support::*;

fn stats(restored: usize, declined_retired: usize) -> RestoreStats {
    RestoreStats {
        restored,
        declined_retired,
        ..RestoreStats::default()
    }
}

/// Checks a restored answer: the listed pointers hold the expected values
/// (JSON text compared as parsed), everything else is as it was, and only
/// lines holding a changed string differ.
fn check_answer(path: &str, expected: &[(&str, Value)], want_stats: RestoreStats) {
    let index = vault_index();
    let body = fixture(path);
    let (restored, got_stats) = restore_body(&index, &body);
    let restored = restored.unwrap_or_else(|| panic!("{path}: nothing restored"));
    assert_eq!(got_stats, want_stats, "{path}");
    let mut want: Value = serde_json::from_slice(&body).unwrap();
    let got: Value = serde_json::from_slice(&restored).unwrap();
    for (pointer, value) in expected {
        let at = got
            .pointer(pointer)
            .unwrap_or_else(|| panic!("{path}: no {pointer}"));
        match (at.as_str(), value) {
            (Some(text), Value::Object(_)) => {
                let parsed: Value = serde_json::from_str(text).unwrap();
                assert_eq!(&parsed, value, "{path} {pointer}");
                *want.pointer_mut(pointer).unwrap() = at.clone();
            }
            _ => {
                assert_eq!(at, value, "{path} {pointer}");
                *want.pointer_mut(pointer).unwrap() = value.clone();
            }
        }
    }
    assert_eq!(got, want, "{path}: only the listed strings change");
    // Bytes: the pretty-printed fixture keeps every line without a surrogate.
    let (before, after) = (
        String::from_utf8(body).unwrap(),
        String::from_utf8(restored).unwrap(),
    );
    assert_eq!(before.lines().count(), after.lines().count());
    let changed = before
        .lines()
        .zip(after.lines())
        .filter(|(a, b)| a != b)
        .count();
    assert!(changed <= expected.len(), "{path}: {changed} lines changed");
}

#[test]
fn openai_chat_answer() {
    check_answer(
        "answers/openai_chat.json",
        &[
            (
                "/choices/0/message/content",
                json!("I wrote to Mario Rossi at mario.rossi@acme.it and called +39 347 123 4567. José Núñez confirmed; Carla Verdi did not. Code: Project \"Blue\" Fox."),
            ),
            (
                "/choices/0/message/tool_calls/0/function/arguments",
                json!({"to": "mario.rossi@acme.it", "name": "José Núñez", "subject": "Project \"Blue\" Fox", "iban": "DE89370400440532013000"}),
            ),
        ],
        stats(9, 1),
    );
}

#[test]
fn openai_responses_answer() {
    check_answer(
        "answers/openai_responses.json",
        &[
            (
                "/output/0/content/0/text",
                // A retired address stays as written but for its domain:
                // forgetting an address leaves the domain (rule V5,
                // docs/product-rules.md#v5).
                json!("Mario Rossi (mario.rossi@acme.it) owns key sk-proj-AbC123realKEY456; ana.lopez@acme.it left."),
            ),
            ("/output/1/arguments", json!({"name": "Mario Rossi", "phone": "+39 347 123 4567"})),
        ],
        stats(6, 1),
    );
}

#[test]
fn anthropic_messages_answer_leaves_signed_thinking_alone() {
    check_answer(
        "answers/anthropic_messages.json",
        &[
            (
                "/content/1/text",
                json!(
                    "Sure: I will write to Mario Rossi (Project \"Blue\" Fox) and copy José Núñez."
                ),
            ),
            ("/content/2/input/to", json!("mario.rossi@acme.it")),
            ("/content/2/input/cc/0", json!("José Núñez")),
            ("/content/2/input/note", json!("Ugo")),
        ],
        stats(6, 1),
    );
}

#[test]
fn restores_text_by_the_rules() {
    let index = vault_index();
    // (text, restored, restored count, retired count)
    let cases = [
        ("Hi Luca Bianchi.", "Hi Mario Rossi.", 1, 0),
        ("Hi Luca, and Luca Bianchi", "Hi Ugo, and Mario Rossi", 2, 0),
        ("xLuca Lucas Luca_b", "xLuca Lucas Luca_b", 0, 0),
        (
            "mail laura.bianchi@qzv-corp.it now",
            "mail mario.rossi@acme.it now",
            1,
            0,
        ),
        ("site qzv-corp.it", "site acme.it", 1, 0),
        // A retired address: its local part stays, its company domain's
        // surrogate restores (forgetting an address leaves the domain).
        ("old ana.lopez@qzv-corp.it", "old ana.lopez@acme.it", 1, 1),
        (
            "Carla Verdi and Andrés Peña",
            "Carla Verdi and José Núñez",
            1,
            1,
        ),
        ("code Orchid Nine", "code Project \"Blue\" Fox", 1, 0),
        ("+39 348 765 4321", "+39 347 123 4567", 1, 0),
        ("nothing here", "nothing here", 0, 0),
    ];
    for (text, want, restored, retired) in cases {
        let (got, got_stats) = restore_text(&index, text);
        assert_eq!(got, want, "{text}");
        assert_eq!(got_stats, stats(restored, retired), "{text}");
    }
}

#[test]
fn json_bodies_escape_restored_values() {
    let index = vault_index();
    let cases: [(&str, Option<&str>); 10] = [
        (
            r#"{"a":"Orchid Nine"}"#,
            Some(r#"{"a":"Project \"Blue\" Fox"}"#),
        ),
        // An escaped surrogate is found; the rest of the string keeps its escapes.
        (
            r#"{"a":"\u0041ndr\u00e9s Pe\u00f1a \u00e9"}"#,
            Some(r#"{"a":"José Núñez \u00e9"}"#),
        ),
        // JSON text inside a string: escaped twice.
        (
            r#"["{\"k\":\"Orchid Nine\"}"]"#,
            Some(r#"["{\"k\":\"Project \\\"Blue\\\" Fox\"}"]"#),
        ),
        (r#""Luca Bianchi""#, Some(r#""Mario Rossi""#)),
        (r#"{"Luca Bianchi": 1, "n": [1, true, null]}"#, None),
        (r#"{"signature":"Luca Bianchi","thinking":"Luca"}"#, None),
        // Sealed keys are read as decoded keys; a key as long as a sealed
        // one is not sealed.
        (r#"{"sign\u0061ture":"Luca Bianchi"}"#, None),
        (r#"{"encrypted_content":"Luca Bianchi"}"#, None),
        (
            r#"{"signaturX":"Luca Bianchi"}"#,
            Some(r#"{"signaturX":"Mario Rossi"}"#),
        ),
        (
            r#"{"th\u0069nk":"Luca Bianchi"}"#,
            Some(r#"{"th\u0069nk":"Mario Rossi"}"#),
        ),
    ];
    for (body, want) in cases {
        let (got, _) = restore_body(&index, body.as_bytes());
        assert_eq!(
            got.as_deref().map(|b| std::str::from_utf8(b).unwrap()),
            want,
            "{body}"
        );
    }
}

#[test]
fn other_bodies_are_text() {
    let index = vault_index();
    let (got, got_stats) = restore_body(&index, b"Dear Luca Bianchi,\n{not json Luca}");
    assert_eq!(got.unwrap(), b"Dear Mario Rossi,\n{not json Ugo}");
    assert_eq!(got_stats, stats(2, 0));
    // Bytes that are not UTF-8 are kept around restored text.
    let (got, _) = restore_body(&index, b"\xff Luca Bianchi \xfe");
    assert_eq!(got.unwrap(), b"\xff Mario Rossi \xfe");
    assert_eq!(restore_body(&index, b"plain").0, None);
}

// ---- mask then restore ----

/// A text built from filler words and vault values, with separators that
/// keep every value on word boundaries: (original, masked, values used).
fn text_strategy() -> impl Strategy<Value = (String, String, usize)> {
    let (entries, _) = vault();
    let piece = prop_oneof![
        "[a-z]{1,8}".prop_map(|w| (w.clone(), w, false)),
        (0..entries.len()).prop_map(move |i| (entries[i].1.clone(), entries[i].2.clone(), true)),
    ];
    let sep = prop_oneof![
        Just(" "),
        Just(", "),
        Just(". "),
        Just("\n"),
        Just(" ("),
        Just(") "),
        Just(": "),
        Just("\t")
    ];
    proptest::collection::vec((piece, sep), 0..24).prop_map(|pieces| {
        let mut original = String::new();
        let mut masked = String::new();
        let mut values = 0;
        for ((plain, fake, is_value), sep) in pieces {
            original.push_str(&plain);
            masked.push_str(&fake);
            original.push_str(sep);
            masked.push_str(sep);
            values += usize::from(is_value);
        }
        (original, masked, values)
    })
}

/// Random JSON with such texts as strings (some holding JSON text, as
/// tool-call arguments do): (original, masked, values used).
fn json_strategy() -> impl Strategy<Value = (Value, Value, usize)> {
    let leaf = prop_oneof![
        text_strategy().prop_map(|(o, m, n)| (json!(o), json!(m), n)),
        any::<i32>().prop_map(|n| (json!(n), json!(n), 0)),
        Just((Value::Null, Value::Null, 0)),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(|items| {
                let n = items.iter().map(|i| i.2).sum();
                let (o, m): (Vec<_>, Vec<_>) = items.into_iter().map(|(o, m, _)| (o, m)).unzip();
                (Value::Array(o), Value::Array(m), n)
            }),
            proptest::collection::vec(("[a-z_]{1,6}", inner.clone()), 0..6).prop_map(|members| {
                let mut o = serde_json::Map::new();
                let mut m = serde_json::Map::new();
                for (key, (ov, mv, _)) in members {
                    o.insert(key.clone(), ov);
                    m.insert(key, mv);
                }
                let (ov, mv) = (Value::Object(o), Value::Object(m));
                let n = count_values(&ov, &mv);
                (ov, mv, n)
            }),
            // JSON text inside a string (one level, as tool-call arguments).
            proptest::collection::vec(text_strategy(), 0..4).prop_map(|texts| {
                let n = texts.iter().map(|t| t.2).sum();
                let (o, m): (Vec<_>, Vec<_>) = texts.into_iter().map(|(o, m, _)| (o, m)).unzip();
                let wrap =
                    |v: Vec<String>| json!(serde_json::to_string(&json!({ "args": v })).unwrap());
                (wrap(o), wrap(m), n)
            }),
        ]
    })
}

/// How many strings differ between original and masked (an object may have
/// dropped a repeated key, so values are counted from what is left).
fn count_values(o: &Value, m: &Value) -> usize {
    match (o, m) {
        (Value::String(a), Value::String(b)) if a != b => {
            let index = vault_index();
            restore_text(&index, b).1.restored.max(1)
        }
        (Value::Array(a), Value::Array(b)) => {
            a.iter().zip(b).map(|(x, y)| count_values(x, y)).sum()
        }
        (Value::Object(a), Value::Object(b)) => a
            .values()
            .zip(b.values())
            .map(|(x, y)| count_values(x, y))
            .sum(),
        _ => 0,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn mask_then_restore_gives_the_text_back((original, masked, values) in text_strategy()) {
        let index = vault_index();
        let (restored, got) = restore_text(&index, &masked);
        prop_assert_eq!(restored.as_ref(), original.as_str());
        prop_assert_eq!(got, stats(values, 0));
        // The same text as a non-JSON body.
        let (body, _) = restore_body(&index, masked.as_bytes());
        prop_assert_eq!(body.unwrap_or_else(|| masked.clone().into_bytes()), original.into_bytes());
    }

    #[test]
    fn mask_then_restore_gives_the_json_back((original, masked, _) in json_strategy(), pretty in any::<bool>()) {
        let index = vault_index();
        let body = if pretty { serde_json::to_vec_pretty(&masked) } else { serde_json::to_vec(&masked) }.unwrap();
        let (restored, _) = restore_body(&index, &body);
        let restored: Value = serde_json::from_slice(&restored.unwrap_or(body)).unwrap();
        prop_assert_eq!(restored, original);
    }
}

/// Throughput of the whole-body restore (run with `--release -- --ignored`).
#[test]
#[ignore]
fn whole_body_throughput() {
    let index = vault_index();
    let answer = String::from_utf8(fixture("answers/openai_chat.json")).unwrap();
    let filler = "The quarterly report covers sales, costs and the plan for next year. ".repeat(40);
    let mut items = Vec::new();
    for i in 0..100 {
        items.push(json!({"role": "assistant", "content": format!("{filler} item {i}")}));
    }
    items.push(serde_json::from_str(&answer).unwrap());
    let body = serde_json::to_vec(&json!({ "messages": items })).unwrap();
    let rounds = 200;
    let start = std::time::Instant::now();
    for _ in 0..rounds {
        std::hint::black_box(restore_body(&index, &body));
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "whole body: {} KB, {:.0} MB/s",
        body.len() / 1024,
        (body.len() * rounds) as f64 / secs / 1e6
    );
}

/// Rule V5 (docs/product-rules.md#v5): forgetting an address leaves its
/// company domain, so the domain part of the address's old surrogate still
/// restores; nothing before the retired surrogate's last `@` does, not even
/// an active surrogate written there. Plain text, JSON with and without
/// escapes.
#[test]
fn a_retired_address_restores_only_its_company_domain() {
    let index = retired_address_index();
    let (got, got_stats) = restore_text(&index, "to Luca.acme.it@qzv-corp.it, Luca");
    assert_eq!(got, "to Luca.acme.it@acme.it, Ugo");
    assert_eq!(got_stats, stats(2, 1));
    for body in [
        r#"{"t":"to Luca.acme.it@qzv-corp.it, Luca"}"#,
        r#"{"t":"to\tLuca.acme.it\u0040qzv-corp.it, Luca"}"#,
    ] {
        let (out, got_stats) = restore_body(&index, body.as_bytes());
        let out: serde_json::Value = serde_json::from_slice(&out.unwrap()).unwrap();
        assert!(
            out["t"]
                .as_str()
                .unwrap()
                .ends_with("Luca.acme.it@acme.it, Ugo"),
            "{body}"
        );
        assert_eq!(got_stats, stats(2, 1), "{body}");
    }
}
