//! JSON escapes both ways: values sent escaped are found, replacements are
//! re-encoded correctly, untouched bytes stay as they came; bad input is a
//! clear error naming the position.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "mask_support.rs"]
mod support;

use latet_core::mask::MaskOptions;
use latet_core::provider::{self, ProviderRef};
use latet_core::CoreError;
use support::*;

#[test]
fn escaped_values_are_found_and_replacements_are_encoded() {
    let index = index_with(&[
        ("José García", "Iñigo Pérez", "name"),
        (r#"Mario "Super" Rossi"#, r#"Ana "Q" Back\slash"#, "name"),
        ("Tab\tName", "Line\nName", "name"),
    ]);
    // (input content raw, expected output content raw)
    let cases: &[(&str, &str)] = &[
        (r"Jos\u00e9 Garc\u00eda", "Iñigo Pérez"),
        (r"Jos\u00E9 Garc\u00EDa!", "Iñigo Pérez!"),
        ("José García", "Iñigo Pérez"),
        (r#"hi Mario \"Super\" Rossi"#, r#"hi Ana \"Q\" Back\\slash"#),
        (
            r#"hi Mario \u0022Super\u0022 Rossi"#,
            r#"hi Ana \"Q\" Back\\slash"#,
        ),
        (r"x Tab\tName y", r"x Line\nName y"),
        // The rest of a rewritten string is re-encoded minimally.
        (
            r"Jos\u00e9 Garc\u00eda \/ \u00e0 \ud83d\ude00",
            "Iñigo Pérez / à 😀",
        ),
    ];
    for (input, expected) in cases {
        let body = format!(r#"{{"model":"m","messages":[{{"role":"user","content":"{input}"}}]}}"#);
        let (out, stats) = mask_ok(
            &mut masker(0),
            &index,
            provider::OPENAI_CHAT,
            body.as_bytes(),
        );
        let want =
            format!(r#"{{"model":"m","messages":[{{"role":"user","content":"{expected}"}}]}}"#);
        assert_eq!(String::from_utf8(out.clone()).unwrap(), want, "{input}");
        assert_eq!(stats.values_masked, 1, "{input}");
        // The output is valid JSON and restores to the input's value.
        let original: serde_json::Value = serde_json::from_str(&body).unwrap();
        let back: serde_json::Value =
            serde_json::from_slice(&restore_json_simple(&index, &out)).unwrap();
        assert_eq!(back, original, "{input}");
    }
}

#[test]
fn arguments_escaped_twice_are_decoded_twice_and_encoded_back() {
    let index = index_with(&[("José García", r#"Iñigo "P" Pérez"#, "name")]);
    // The arguments string holds JSON whose string holds \u00e9 escapes.
    let body = r#"{"messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{\"who\": \"Jos\\u00e9 Garc\\u00eda\", \"n\": 1}"}}]}]}"#;
    let (out, _) = mask_ok(
        &mut masker(0),
        &index,
        provider::OPENAI_CHAT,
        body.as_bytes(),
    );
    let args = string_at(&out, "messages.0.tool_calls.0.function.arguments");
    assert_eq!(args, r#"{"who": "Iñigo \"P\" Pérez", "n": 1}"#);
    let inner: serde_json::Value = serde_json::from_str(&args).unwrap();
    assert_eq!(inner["who"], r#"Iñigo "P" Pérez"#);
    let out = String::from_utf8(out).unwrap();
    assert!(
        out.contains(r#""arguments":"{\"who\": \"Iñigo \\\"P\\\" Pérez\", \"n\": 1}""#),
        "{out}"
    );
}

#[test]
fn bytes_that_need_no_change_are_kept_exactly() {
    let index = demo_index();
    let body = "{ \"model\" :\"gpt\\u002d4\" ,\n\t\"messages\":[ {\"role\":\"user\",\"content\":\"Mario Rossi\"} ,{\"role\":\"user\",\"content\":\"caf\\u00e9 \\/ 1.50e+3\"}],\"x\":-0.0E-1 }";
    let (out, _) = mask_ok(
        &mut masker(0),
        &index,
        provider::OPENAI_CHAT,
        body.as_bytes(),
    );
    assert_eq!(
        String::from_utf8(out).unwrap(),
        body.replace("Mario Rossi", "Laura Bianchi")
    );
}

#[test]
fn bad_bodies_are_clear_errors_naming_the_position() {
    let index = demo_index();
    let cases: &[(ProviderRef, &[u8], &str)] = &[
        (
            provider::OPENAI_CHAT,
            br#"{"messages": [}"#,
            "expected a value at byte 14",
        ),
        (
            provider::GENERIC_JSON,
            b"",
            "unexpected end of input at byte 0",
        ),
        (
            provider::GENERIC_JSON,
            b"{\"a\":\"\xff\"}",
            "not UTF-8 at byte 6",
        ),
        (provider::PLAIN_TEXT, b"ok \xc3\x28", "not UTF-8 at byte 3"),
        // A lone surrogate in a string that is masked.
        (
            provider::OPENAI_CHAT,
            br#"{"messages":[{"role":"user","content":"x\ud800y"}]}"#,
            "unpaired surrogate escape at byte 40",
        ),
    ];
    for (shape, body, message) in cases {
        let err = masker(0)
            .mask_request(&index, *shape, body, MaskOptions::default())
            .unwrap_err();
        match &err {
            CoreError::BadBody(m) => assert_eq!(m, message, "{body:?}"),
            other => panic!("{body:?}: {other:?}"),
        }
    }
    // Deny by default: every string is examined, so a lone surrogate
    // anywhere (here in `model`) is a clear error too, and a key as well.
    for (body, at) in [
        (&br#"{"model":"\ud800","messages":[]}"#[..], 10),
        (&br#"{"messages":[],"\ud800":1}"#[..], 16),
    ] {
        let err = masker(0)
            .mask_request(&index, provider::OPENAI_CHAT, body, MaskOptions::default())
            .unwrap_err();
        assert_eq!(
            err,
            CoreError::BadBody(format!("unpaired surrogate escape at byte {at}"))
        );
    }
}

#[test]
fn error_messages_never_carry_a_value() {
    let index = demo_index();
    let body = br#"{"messages":[{"role":"user","content":"Mario Rossi \q"}]}"#;
    let err = masker(0)
        .mask_request(&index, provider::OPENAI_CHAT, body, MaskOptions::default())
        .unwrap_err()
        .to_string();
    assert!(!err.contains("Mario"), "{err}");
    assert!(err.contains("byte"), "{err}");
}
