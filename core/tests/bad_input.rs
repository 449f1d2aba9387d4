//! Bad input at engine level: every case ends in a clear error or a correct
//! result — never a panic, never a vault value left in what goes out, never
//! a retired surrogate restored.
//!
//! Request side (the masker): malformed and truncated JSON, non-UTF-8
//! bytes, 10,000 levels of nesting (body and tool-call arguments), a 10 MB
//! body, duplicate keys, values written with escapes. Answer side (the
//! restorers): every split of SSE streams (LF, CRLF, CR), `data:` lines cut
//! anywhere, garbage, streams cut mid-event, deep JSON answers.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use latet_core::detect::{DetectorConfig, Detectors};
use latet_core::keyed_hash::{entry_id, retired_hash};
use latet_core::mask::{MaskOptions, MaskOutcome, Masker};
use latet_core::provider::{self, ProviderRef};
use latet_core::restore::{restore_body, SseRestorer};
use latet_core::snapshot::SnapshotIndex;
use latet_core::text::lead_bucket;
use latet_core::wire::{Entry, EntryId, RetiredHash, RetiredSurrogate, Snapshot};
use latet_core::{CoreError, Kind};

const SALT: [u8; 2] = [0x5a, 0x17];

/// (value, surrogate, kind): no surrogate shares a word with a value.
const VAULT: &[(&str, &str, &str)] = &[
    ("Mario Rossi", "Laura Bianchi", "name"),
    ("José García", "Iñigo Pérez", "name"),
    (
        "mario.rossi@acme.it",
        "laura.bianchi@brightvale.it",
        "email",
    ),
    ("+39 347 123 4567", "+39 348 765 4321", "phone"),
    ("Project \"Blue\" Fox", "Orchid Nine", "codename"),
    ("Ugo", "Luca", "name"),
];

/// A retired surrogate that starts with an active one (`Luca`).
const RETIRED: &[&str] = &["Luca Verdi"];

fn index() -> SnapshotIndex {
    SnapshotIndex::from_snapshot(Snapshot {
        version: 1,
        generation: 1,
        seq: 1,
        retired_salt: "5a17".into(),
        retired: RETIRED
            .iter()
            .map(|s| RetiredSurrogate {
                hash: RetiredHash(retired_hash(&SALT, s)),
                lead: lead_bucket(s),
            })
            .collect(),
        entries: VAULT
            .iter()
            .map(|(v, s, k)| Entry {
                id: EntryId(entry_id(b"bad-input", v)),
                value: v.to_string(),
                surrogate: s.to_string(),
                kind: Kind::parse(k).unwrap(),
                generation: 1,
            })
            .collect(),
    })
    .unwrap()
}

fn masker() -> Masker {
    Masker::new(Detectors::new(&DetectorConfig::default()).unwrap(), 1 << 20)
}

/// Masks with redact mode on (new values become placeholders), so every
/// outcome is final.
fn mask(shape: ProviderRef, body: &[u8]) -> Result<Vec<u8>, CoreError> {
    match masker().mask_request(&index(), shape, body, MaskOptions { redact_new: true })? {
        MaskOutcome::Masked { body: out, .. } => Ok(out.unwrap_or_else(|| body.to_vec())),
        MaskOutcome::NeedEntries { .. } => panic!("redact mode asked for entries"),
    }
}

/// No vault value (as written, or JSON-decoded in any string) in `out`.
fn assert_no_value(out: &[u8], case: &str) {
    let text = String::from_utf8_lossy(out);
    for (value, _, _) in VAULT {
        if *value == "Ugo" {
            continue; // a short word; checked where a case uses it
        }
        assert!(!text.contains(value), "{case}: value left in the output");
    }
    if let Ok(doc) = serde_json::from_slice::<serde_json::Value>(out) {
        let index = index();
        let mut strings = Vec::new();
        collect_strings(&doc, &mut strings);
        for s in strings {
            let mut found = Vec::new();
            index.find_values(&s, &mut found);
            assert!(found.is_empty(), "{case}: value left in a decoded string");
        }
    }
}

fn collect_strings(value: &serde_json::Value, out: &mut Vec<String>) {
    match value {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Array(items) => items.iter().for_each(|v| collect_strings(v, out)),
        serde_json::Value::Object(map) => map.values().for_each(|v| collect_strings(v, out)),
        _ => {}
    }
}

const CHAT: &str = r#"{"model":"gpt-4o","messages":[{"role":"user","content":"Mail Mario Rossi at mario.rossi@acme.it"},{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"send","arguments":"{\"to\":\"Mario Rossi\",\"phone\":\"+39 347 123 4567\"}"}}]}]}"#;

#[test]
fn truncated_json_is_refused_or_masked_at_every_length() {
    for shape in [
        provider::OPENAI_CHAT,
        provider::GENERIC_JSON,
        provider::ANTHROPIC_MESSAGES,
    ] {
        for end in 0..CHAT.len() {
            let body = &CHAT.as_bytes()[..end];
            match mask(shape, body) {
                Err(CoreError::BadBody(reason)) => {
                    assert!(!reason.contains("Mario"), "an error quotes the body");
                }
                Err(other) => panic!("prefix {end}: unexpected error kind {other:?}"),
                Ok(out) => assert_no_value(&out, &format!("prefix {end}")),
            }
        }
    }
}

#[test]
fn malformed_json_is_a_clear_error() {
    let cases: &[(&str, &[u8])] = &[
        (
            "trailing comma",
            br#"{"messages":[{"content":"Mario Rossi"},]}"#,
        ),
        ("single quotes", br#"{'messages':[]}"#),
        ("bare word", b"Mario Rossi"),
        ("two documents", br#"{"a":"Mario Rossi"}{"b":1}"#),
        ("bad escape", br#"{"a":"Mario \q Rossi"}"#),
        (
            "lone surrogate escape",
            br#"{"messages":[{"content":"\ud800 Mario Rossi"}]}"#,
        ),
        ("control char in string", b"{\"a\":\"Mario\x01 Rossi\"}"),
        ("unterminated string", br#"{"a":"Mario Rossi"#),
        ("nan", br#"{"a":NaN,"b":"Mario Rossi"}"#),
        ("empty", b""),
        ("only whitespace", b" \n\t "),
        ("nul", b"\0"),
    ];
    for (case, body) in cases {
        for shape in [provider::OPENAI_CHAT, provider::GENERIC_JSON] {
            match mask(shape, body) {
                Err(CoreError::BadBody(reason)) => {
                    assert!(
                        !reason.contains("Mario"),
                        "{case}: the error quotes the body"
                    )
                }
                Err(other) => panic!("{case}: unexpected error {other:?}"),
                Ok(out) => panic!("{case}: accepted ({} bytes out)", out.len()),
            }
        }
    }
}

#[test]
fn non_utf8_bytes_are_refused_in_every_shape() {
    let mut json = br#"{"messages":[{"role":"user","content":"Mario Rossi "#.to_vec();
    json.extend_from_slice(&[0xff, 0xfe, 0xc3]);
    json.extend_from_slice(br#""}]}"#);
    let mut text = b"Mario Rossi ".to_vec();
    text.extend_from_slice(&[0xc3, 0x28, 0xa0, 0xa1]);
    for (shape, body) in [
        (provider::OPENAI_CHAT, &json),
        (provider::OPENAI_RESPONSES, &json),
        (provider::ANTHROPIC_MESSAGES, &json),
        (provider::GENERIC_JSON, &json),
        (provider::PLAIN_TEXT, &text),
    ] {
        let err = mask(shape, body).expect_err("non-UTF-8 accepted");
        assert!(matches!(err, CoreError::BadBody(_)), "{shape:?}: {err:?}");
        assert!(!err.to_string().contains("Mario"));
    }
}

fn nested(levels: usize, inner: &str) -> String {
    format!("{}{inner}{}", "[".repeat(levels), "]".repeat(levels))
}

#[test]
fn ten_thousand_levels_of_nesting_are_refused_without_a_crash() {
    let deep = nested(10_000, r#""Mario Rossi""#);
    let chat = format!(r#"{{"messages":[{{"role":"user","content":{deep}}}]}}"#);
    for shape in [
        provider::OPENAI_CHAT,
        provider::GENERIC_JSON,
        provider::ANTHROPIC_MESSAGES,
    ] {
        let err = mask(shape, chat.as_bytes()).expect_err("deep JSON accepted");
        assert!(matches!(err, CoreError::BadBody(_)), "{err:?}");
    }
    // The same depth inside tool-call arguments (JSON in a string).
    let args = serde_json::to_string(&deep).unwrap();
    let body = format!(
        r#"{{"messages":[{{"role":"assistant","tool_calls":[{{"type":"function","function":{{"name":"f","arguments":{args}}}}}]}}]}}"#
    );
    let err = mask(provider::OPENAI_CHAT, body.as_bytes()).expect_err("deep arguments accepted");
    assert!(matches!(err, CoreError::BadBody(_)), "{err:?}");
    // Objects too.
    let objects = format!("{}1{}", r#"{"a":"#.repeat(10_000), "}".repeat(10_000));
    assert!(mask(provider::GENERIC_JSON, objects.as_bytes()).is_err());
    // A deep answer is not JSON the restorer walks: restored as text, no crash.
    let answer = nested(10_000, r#""Laura Bianchi""#);
    let (restored, stats) = restore_body(&index(), answer.as_bytes());
    assert_eq!(stats.restored, 1);
    assert!(String::from_utf8(restored.unwrap())
        .unwrap()
        .contains("Mario Rossi"));
}

#[test]
fn a_ten_megabyte_body_is_masked_whole() {
    let message = r#"{"role":"user","content":"Write to Mario Rossi (mario.rossi@acme.it, +39 347 123 4567) about Project \"Blue\" Fox and José García."}"#;
    let count = 10 * 1024 * 1024 / message.len() + 1;
    let body = format!(
        r#"{{"model":"m","messages":[{}]}}"#,
        vec![message; count].join(",")
    );
    assert!(body.len() >= 10 * 1024 * 1024);
    let start = std::time::Instant::now();
    let out = mask(provider::OPENAI_CHAT, body.as_bytes()).unwrap();
    let took = start.elapsed();
    assert_no_value(&out, "10 MB body");
    let out = String::from_utf8(out).unwrap();
    assert_eq!(out.matches("Laura Bianchi").count(), count);
    assert_eq!(out.matches("Orchid Nine").count(), count);
    eprintln!("10 MB chat body masked in {took:?}");
}

#[test]
fn duplicate_keys_mask_every_occurrence() {
    let cases: &[(&str, ProviderRef, &str)] = &[
        (
            "messages twice",
            provider::OPENAI_CHAT,
            r#"{"messages":[{"role":"user","content":"hi"}],"messages":[{"role":"user","content":"Mario Rossi"}]}"#,
        ),
        (
            "content twice",
            provider::OPENAI_CHAT,
            r#"{"messages":[{"role":"user","content":"Mario Rossi","content":"José García"}]}"#,
        ),
        (
            "type twice (first text, last image)",
            provider::OPENAI_CHAT,
            r#"{"messages":[{"role":"user","content":[{"type":"text","type":"text","text":"Mario Rossi","text":"José García"}]}]}"#,
        ),
        (
            "arguments twice",
            provider::OPENAI_CHAT,
            r#"{"messages":[{"role":"assistant","tool_calls":[{"type":"function","function":{"arguments":"{}","arguments":"{\"a\":\"Mario Rossi\"}"}}]}]}"#,
        ),
        (
            "anthropic system twice",
            provider::ANTHROPIC_MESSAGES,
            r#"{"system":"x","system":"Mario Rossi","messages":[{"role":"user","content":"José García","content":"Mario Rossi"}]}"#,
        ),
        (
            "responses input twice",
            provider::OPENAI_RESPONSES,
            r#"{"input":"hello","input":"Mario Rossi","instructions":"José García","instructions":"x"}"#,
        ),
        (
            "json keys twice",
            provider::GENERIC_JSON,
            r#"{"a":"Mario Rossi","a":"José García","a":{"a":"mario.rossi@acme.it"}}"#,
        ),
    ];
    for (case, shape, body) in cases {
        let out = mask(*shape, body.as_bytes()).unwrap_or_else(|e| panic!("{case}: {e}"));
        assert_no_value(&out, case);
    }
}

/// Finding B1 (fixed): a duplicate `type` whose last occurrence is not
/// `text` (as a provider reads it, the part is an image; a person's text
/// under `text` still goes out), a text under a part of another type, and a
/// block whose types disagree and include `thinking` (not a valid signed
/// block: its strings are masked, never a way around the masker).
#[test]
fn duplicate_type_ending_non_text_still_masks_text() {
    let cases: &[(&str, ProviderRef, &str)] = &[
        (
            "chat: type text then image_url",
            provider::OPENAI_CHAT,
            r#"{"messages":[{"role":"user","content":[{"type":"text","text":"Mario Rossi","type":"image_url"}]}]}"#,
        ),
        (
            "chat: text under an image part",
            provider::OPENAI_CHAT,
            r#"{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"},"text":"Mario Rossi"}]}]}"#,
        ),
        (
            "chat: refusal under a text part",
            provider::OPENAI_CHAT,
            r#"{"messages":[{"role":"assistant","content":[{"type":"text","text":"ok","refusal":"Mario Rossi"}]}]}"#,
        ),
        (
            "responses: part type input_text then input_image",
            provider::OPENAI_RESPONSES,
            r#"{"input":[{"role":"user","content":[{"type":"input_text","text":"Mario Rossi","type":"input_image"}]}]}"#,
        ),
        (
            "responses: item type message then unknown",
            provider::OPENAI_RESPONSES,
            r#"{"input":[{"type":"message","role":"user","content":"Mario Rossi","type":"item_reference"}]}"#,
        ),
        (
            "anthropic: type text then image",
            provider::ANTHROPIC_MESSAGES,
            r#"{"messages":[{"role":"user","content":[{"type":"text","text":"Mario Rossi","type":"image"}]}]}"#,
        ),
        (
            "anthropic: type text then thinking",
            provider::ANTHROPIC_MESSAGES,
            r#"{"messages":[{"role":"assistant","content":[{"type":"text","text":"Mario Rossi","type":"thinking","signature":"s"}]}]}"#,
        ),
        (
            "anthropic: type thinking then text",
            provider::ANTHROPIC_MESSAGES,
            r#"{"messages":[{"role":"assistant","content":[{"type":"thinking","thinking":"Mario Rossi","signature":"s","type":"text"}]}]}"#,
        ),
        (
            "anthropic: type redacted_thinking then text",
            provider::ANTHROPIC_MESSAGES,
            r#"{"messages":[{"role":"assistant","content":[{"type":"redacted_thinking","data":"Mario Rossi","type":"text","text":"ok"}]}]}"#,
        ),
        (
            "anthropic: system block type text then image",
            provider::ANTHROPIC_MESSAGES,
            r#"{"system":[{"type":"text","text":"Mario Rossi","type":"image"}],"messages":[]}"#,
        ),
    ];
    for (case, shape, body) in cases {
        let out = mask(*shape, body.as_bytes()).unwrap_or_else(|e| panic!("{case}: {e}"));
        assert_no_value(&out, case);
    }
}

/// The exception B1 keeps: a signed block, even with its `type` repeated
/// identically, goes out byte for byte when it holds no value; one that
/// holds a value cannot be masked (its signature would break) and is
/// refused, naming the field and the offset, never the value.
#[test]
fn a_signed_thinking_block_with_its_type_repeated_identically_stays_whole() {
    let block =
        r#"{"type":"thinking","thinking":"Look the order up","signature":"s","type":"thinking"}"#;
    let body = format!(
        r#"{{"messages":[{{"role":"assistant","content":[{block},{{"type":"text","text":"ok"}}]}}]}}"#
    );
    let out = mask(provider::ANTHROPIC_MESSAGES, body.as_bytes()).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains(block), "the signed block was altered");

    let forged = body.replace("Look the order up", "Mario Rossi");
    let err = mask(provider::ANTHROPIC_MESSAGES, forged.as_bytes()).unwrap_err();
    assert!(
        matches!(
            err,
            CoreError::ValueInVerbatimField {
                field: "thinking",
                ..
            }
        ),
        "{err:?}"
    );
    assert!(!err.to_string().contains("Mario"), "{err}");
    let forged = body.replace(r#""signature":"s""#, r#""signature":"mario.rossi@acme.it""#);
    let err = mask(provider::ANTHROPIC_MESSAGES, forged.as_bytes()).unwrap_err();
    assert!(
        matches!(
            err,
            CoreError::ValueInVerbatimField {
                field: "signature",
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn values_written_with_escapes_are_masked() {
    let cases: &[(&str, ProviderRef, &str)] = &[
        (
            "escaped space",
            provider::OPENAI_CHAT,
            r#"{"messages":[{"content":"Mario\u0020Rossi"}]}"#,
        ),
        (
            "escaped first letter",
            provider::OPENAI_CHAT,
            r#"{"messages":[{"content":"\u004dario Rossi"}]}"#,
        ),
        (
            "escaped at sign",
            provider::GENERIC_JSON,
            r#"{"a":"mario.rossi\u0040acme.it"}"#,
        ),
        (
            "escaped accents",
            provider::GENERIC_JSON,
            r#"{"a":"Jos\u00e9 Garc\u00eda"}"#,
        ),
        (
            "upper-case hex",
            provider::GENERIC_JSON,
            r#"{"a":"Jos\u00E9 Garc\u00EDa"}"#,
        ),
        (
            "escaped quotes in a value",
            provider::GENERIC_JSON,
            r#"{"a":"Project \"Blue\" Fox"}"#,
        ),
        (
            "quotes as unicode escapes",
            provider::GENERIC_JSON,
            r#"{"a":"Project \u0022Blue\u0022 Fox"}"#,
        ),
        (
            "escaped slash around",
            provider::GENERIC_JSON,
            r#"{"a":"\/Mario Rossi\/"}"#,
        ),
        (
            "newline escapes around",
            provider::GENERIC_JSON,
            r#"{"a":"\nMario Rossi\r\n"}"#,
        ),
        (
            "double-escaped in arguments",
            provider::OPENAI_CHAT,
            r#"{"messages":[{"role":"assistant","tool_calls":[{"type":"function","function":{"name":"f","arguments":"{\"to\":\"Mario\\u0020Rossi\",\"q\":\"Project \\\"Blue\\\" Fox\"}"}}]}]}"#,
        ),
        (
            "anthropic tool input escaped",
            provider::ANTHROPIC_MESSAGES,
            r#"{"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{"to":"\u004d\u0061rio Rossi"}}]}]}"#,
        ),
    ];
    for (case, shape, body) in cases {
        let out = mask(*shape, body.as_bytes()).unwrap_or_else(|e| panic!("{case}: {e}"));
        assert_no_value(&out, case);
        // Arguments hold JSON inside a string: decode twice and look again.
        if let Ok(doc) = serde_json::from_slice::<serde_json::Value>(&out) {
            let mut strings = Vec::new();
            collect_strings(&doc, &mut strings);
            for s in strings {
                if let Ok(inner) = serde_json::from_str::<serde_json::Value>(&s) {
                    assert_no_value(inner.to_string().as_bytes(), case);
                }
            }
        }
    }
}

// ---- answers ---------------------------------------------------------

fn chat_event(content: &str) -> String {
    let data = serde_json::json!({
        "id": "c", "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": null}]
    });
    format!("data: {data}\n\n")
}

fn chat_stream(deltas: &[&str]) -> String {
    let mut stream: String = deltas.iter().map(|d| chat_event(d)).collect();
    stream.push_str(
        "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
    );
    stream.push_str("data: [DONE]\n\n");
    stream
}

fn restore_in_pieces(stream: &[u8], cuts: &[usize]) -> Vec<u8> {
    let index = index();
    let mut restorer = SseRestorer::new();
    let mut out = Vec::new();
    let mut at = 0;
    for &cut in cuts {
        restorer.push(&index, &stream[at..cut], &mut out);
        at = cut;
    }
    restorer.push(&index, &stream[at..], &mut out);
    restorer.finish(&index, &mut out);
    out
}

/// The text of every chat delta in a restored stream, joined.
fn delta_text(stream: &[u8]) -> String {
    let text = String::from_utf8(stream.to_vec()).unwrap();
    let mut joined = String::new();
    for line in text.split(['\n', '\r']) {
        let Some(data) = line.strip_prefix("data: ") else {
            continue;
        };
        if let Ok(doc) = serde_json::from_str::<serde_json::Value>(data) {
            if let Some(content) = doc["choices"][0]["delta"]["content"].as_str() {
                joined.push_str(content);
            }
        }
    }
    joined
}

fn with_line_ends(stream: &str, end: &str) -> String {
    stream.replace('\n', end)
}

#[test]
fn every_split_of_a_stream_restores_the_same_with_lf_crlf_and_cr() {
    let deltas = [
        "Ask Lau",
        "ra Bian",
        "chi (laura.bianchi@bright",
        "vale.it) about Orchid",
        " Nine; Luca",
        " Verdi stays, Luca goes.",
    ];
    let expected = "Ask Mario Rossi (mario.rossi@acme.it) about Project \"Blue\" Fox; Luca Verdi stays, Ugo goes.";
    for end in ["\n", "\r\n", "\r"] {
        let stream = with_line_ends(&chat_stream(&deltas), end);
        let bytes = stream.as_bytes();
        let whole = restore_in_pieces(bytes, &[]);
        assert_eq!(delta_text(&whole), expected, "line end {end:?}");
        for cut in 1..bytes.len() {
            assert_eq!(
                restore_in_pieces(bytes, &[cut]),
                whole,
                "line end {end:?}, cut at {cut}"
            );
        }
        // Two cuts inside the `data:` prefix and the JSON of each event.
        for (i, _) in stream.match_indices("data:") {
            for a in i..(i + 8).min(bytes.len()) {
                for b in (a + 1)..(a + 40).min(bytes.len()) {
                    assert_eq!(restore_in_pieces(bytes, &[a, b]), whole, "cuts {a},{b}");
                }
            }
        }
    }
}

#[test]
fn a_retired_surrogate_is_never_restored_in_any_split() {
    // `Luca` alone is active (Ugo); `Luca Verdi` is retired: whatever the
    // cuts, it must come out as written, never as `Ugo Verdi`.
    let stream = chat_stream(&["Luca", " Ve", "rdi and Luca", " Verdi"]);
    let bytes = stream.as_bytes();
    for a in 0..bytes.len() {
        let out = restore_in_pieces(bytes, &[a]);
        let text = delta_text(&out);
        assert_eq!(text, "Luca Verdi and Luca Verdi", "cut at {a}");
    }
}

#[test]
fn garbage_and_cut_streams_never_panic_and_never_restore_retired() {
    let good = chat_stream(&["Laura Bianchi and Luca Verdi"]);
    let cases: Vec<(String, Vec<u8>)> = vec![
        ("binary".into(), (0..=255u8).cycle().take(4096).collect()),
        ("no blank line".into(), b"data: {\"choices\":[{\"delta\":{\"content\":\"Laura Bianchi".to_vec()),
        ("data without space".into(), b"data:{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Laura Bianchi\"}}]}\n\n".to_vec()),
        ("comment and fields".into(), b": ping\nevent: x\nid: 1\nretry: 5\ndata: Laura Bianchi\n\n".to_vec()),
        ("invalid UTF-8 in data".into(), b"data: {\"choices\":[{\"delta\":{\"content\":\"Laura \xff Bianchi\"}}]}\n\n".to_vec()),
        ("multi-line data".into(), b"data: {\"choices\":[{\"index\":0,\n data: \"delta\":{\"content\":\"Laura Bianchi\"}}]}\n\n".to_vec()),
        ("huge line".into(), format!("data: {}\n\n", "x".repeat(1 << 20)).into_bytes()),
    ];
    let mut all = cases;
    for cut in [1, 7, 20, good.len() / 2, good.len() - 3] {
        all.push((
            format!("good stream cut at {cut}"),
            good.as_bytes()[..cut].to_vec(),
        ));
    }
    for (case, bytes) in &all {
        let whole = restore_in_pieces(bytes, &[]);
        let halves = restore_in_pieces(bytes, &[bytes.len() / 2]);
        assert_eq!(whole, halves, "{case}: chunking changed the output");
        let text = String::from_utf8_lossy(&whole);
        assert!(
            !text.contains("Ugo Verdi"),
            "{case}: a retired surrogate was restored"
        );
        let _ = restore_body(&index(), bytes);
    }
}

/// Found by the `mask_request` fuzz target (long run): a person's value can
/// be a word-bounded part of another value's surrogate (`+39 348 765` is
/// the start of the surrogate `+39 348 765 4321`). Where the person wrote it,
/// it is masked; inside the other surrogate it is that surrogate, written
/// by us — SECURITY.md R7.
#[test]
fn a_value_that_is_part_of_another_surrogate_is_masked_where_written() {
    let index = SnapshotIndex::from_snapshot(Snapshot {
        version: 1,
        generation: 1,
        seq: 0,
        retired_salt: "00".repeat(16),
        retired: vec![],
        entries: vec![
            Entry {
                id: EntryId(entry_id(b"k", "+39 347 123 4567")),
                value: "+39 347 123 4567".into(),
                surrogate: "+39 348 765 4321".into(),
                kind: Kind::Phone,
                generation: 1,
            },
            Entry {
                id: EntryId(entry_id(b"k", "+39 348 765")),
                value: "+39 348 765".into(),
                surrogate: "+39 351 002".into(),
                kind: Kind::Phone,
                generation: 1,
            },
        ],
    })
    .unwrap();
    let mut masker = masker();
    let out = match masker
        .mask_request(
            &index,
            provider::PLAIN_TEXT,
            b"call +39 347 123 4567 or +39 348 765.",
            MaskOptions::default(),
        )
        .unwrap()
    {
        MaskOutcome::Masked { body, .. } => String::from_utf8(body.unwrap()).unwrap(),
        other => panic!("{other:?}"),
    };
    assert_eq!(out, "call +39 348 765 4321 or +39 351 002.");
    let mut values = Vec::new();
    index.find_values(&out, &mut values);
    let mut surrogates = Vec::new();
    index.find_surrogates(&out, &mut surrogates);
    assert!(values.iter().all(|v| surrogates
        .iter()
        .any(|s| s.start <= v.start && v.end <= s.end)));
}
