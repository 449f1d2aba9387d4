//! Properties: mask then restore gives the original back for random JSON
//! with random values (escaped or not, any shape); the masked output never
//! contains a value.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "mask_support.rs"]
mod support;

use latet_core::detect::{DetectorConfig, Detectors};
use latet_core::json::{Document, NodeKind};
use latet_core::mask::Masker;
use latet_core::provider::{self, ProviderRef};
use latet_core::snapshot::SnapshotIndex;
use proptest::prelude::*;
use serde_json::Value;
use std::sync::OnceLock;
use support::*;

fn detectors() -> Detectors {
    static DETECTORS: OnceLock<Detectors> = OnceLock::new();
    DETECTORS
        .get_or_init(|| Detectors::new(&DetectorConfig::default()).unwrap())
        .clone()
}

/// Text pieces: filler (with quotes, backslashes, control chars, non-ASCII),
/// vault values, and e-mail addresses the vault has never seen.
fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(vec![
            "hello", "the", "invoice", "é", "naïve", "ok", "\"quoted\"", "back\\slash",
            "tab\there", "line\nbreak", "😀", "ünïcödé", "\u{1}", "/",
        ])
        .prop_map(str::to_string),
        2 => prop::sample::select(VAULT.iter().map(|v| v.0).collect::<Vec<_>>()).prop_map(str::to_string),
        1 => ("[a-z]{2,6}", "[a-z]{2,6}", prop::sample::select(vec!["example.org", "corp.net", "mail.it"]))
            .prop_map(|(a, b, d)| format!("{a}.{b}@{d}")),
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        (
            piece(),
            prop::sample::select(vec![" ", ", ", "\n", " (", ") ", ": "]),
        ),
        0..8,
    )
    .prop_map(|parts| parts.into_iter().map(|(p, s)| p + s).collect())
}

fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(|n| Value::Number(n.into())),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 40, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,6}", inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Writes every non-ASCII char of a JSON text as `\uXXXX` escapes (they only
/// occur inside strings, so the document means the same).
fn escape_non_ascii(json: &str) -> String {
    let mut out = String::with_capacity(json.len() * 2);
    for c in json.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out
}

/// The decoded string values of a body, with every string that holds a
/// JSON text parsed, so that equal meaning compares equal.
fn meaning(body: &[u8]) -> Value {
    fn normalise(v: Value) -> Value {
        match v {
            Value::String(s) => match serde_json::from_str::<Value>(&s) {
                Ok(inner @ (Value::Object(_) | Value::Array(_))) => normalise(inner),
                _ => Value::String(s),
            },
            Value::Array(items) => Value::Array(items.into_iter().map(normalise).collect()),
            Value::Object(map) => {
                Value::Object(map.into_iter().map(|(k, v)| (k, normalise(v))).collect())
            }
            other => other,
        }
    }
    normalise(serde_json::from_slice(body).unwrap())
}

/// No vault value is written in any string of `body` (nor in any string
/// inside a string holding JSON), and every detector finding is a surrogate.
fn assert_no_value(
    index: &SnapshotIndex,
    detectors: &Detectors,
    body: &[u8],
) -> Result<(), TestCaseError> {
    let doc = Document::parse(body).unwrap();
    let mut texts: Vec<String> = Vec::new();
    for node in doc.strings() {
        let text = doc.str_value(node).unwrap().unwrap().into_owned();
        // A string holding a JSON container (tool-call arguments) is judged
        // by the strings inside it, as the provider's tool will read them.
        match Document::parse(text.as_bytes()) {
            Ok(inner)
                if matches!(
                    inner.kind(inner.root()),
                    NodeKind::Object | NodeKind::Array | NodeKind::String
                ) =>
            {
                for n in inner.strings() {
                    texts.push(inner.str_value(n).unwrap().unwrap().into_owned());
                }
            }
            _ => texts.push(text),
        }
    }
    for text in &texts {
        let mut found = Vec::new();
        index.find_values(text, &mut found);
        prop_assert!(found.is_empty(), "a vault value is left in a masked string");
        let mut findings = Vec::new();
        detectors.find(text, &mut findings);
        for f in &findings {
            prop_assert!(
                index.is_surrogate(&text[f.start..f.end]),
                "a {} finding is left unmasked",
                f.kind
            );
        }
    }
    Ok(())
}

fn chat_body(content: &str, args: &Value) -> Value {
    serde_json::json!({
        "model": "gpt-4o",
        "messages": [
            {"role": "user", "content": content},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": args.to_string()}}
            ]}
        ]
    })
}

fn run(shape: ProviderRef, original: &[u8], memo: bool) -> Result<(), TestCaseError> {
    let mut index = demo_index();
    let detectors = detectors();
    let mut masker = Masker::new(detectors.clone(), if memo { 1 << 20 } else { 0 });
    let mut counter = 0;
    let masked = mask_resuming(&mut masker, &mut index, shape, original, &mut counter);
    assert_no_value(&index, &detectors, &masked)?;
    let restored = restore_json_simple(&index, &masked);
    prop_assert_eq!(meaning(&restored), meaning(original));
    if memo {
        // Masking again (now from the memo) gives the same bytes.
        let again = mask_resuming(&mut masker, &mut index, shape, original, &mut counter);
        prop_assert_eq!(again, masked);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn any_json_masks_and_restores(value in json(), escaped in any::<bool>(), memo in any::<bool>()) {
        let mut body = serde_json::to_string(&value).unwrap();
        if escaped {
            body = escape_non_ascii(&body);
        }
        run(provider::GENERIC_JSON, body.as_bytes(), memo)?;
    }

    #[test]
    fn chat_with_tool_arguments_masks_and_restores(content in text(), args in json(), escaped in any::<bool>()) {
        let mut body = chat_body(&content, &args).to_string();
        if escaped {
            body = escape_non_ascii(&body);
        }
        run(provider::OPENAI_CHAT, body.as_bytes(), true)?;
    }

    #[test]
    fn plain_text_masks_and_restores(content in text()) {
        let mut index = demo_index();
        let mut masker = Masker::new(detectors(), 1 << 20);
        let mut counter = 0;
        let masked = mask_resuming(&mut masker, &mut index, provider::PLAIN_TEXT, content.as_bytes(), &mut counter);
        let masked = String::from_utf8(masked).unwrap();
        let mut found = Vec::new();
        index.find_values(&masked, &mut found);
        prop_assert!(found.is_empty());
        prop_assert_eq!(restore_text_simple(&index, &masked), content);
    }
}
