//! Masking real provider request shapes: what is masked, and what stays
//! byte-identical (model, ids, tool names, keys, thinking blocks).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "mask_support.rs"]
mod support;

use latet_core::mask::{MaskOptions, MaskOutcome};
use latet_core::provider::{self, ProviderRef};
use support::*;

struct Case {
    fixture: &'static str,
    shape: ProviderRef,
    /// Paths of the strings that must change.
    masked: &'static [&'static str],
    /// Raw substrings of the fixture that must survive exactly.
    kept: &'static [&'static str],
    /// A signed field names surrogates: a restore that ignores signed
    /// fields would turn them into values, so only the restore module
    /// (which leaves them) is compared with the original.
    signed_surrogates: bool,
}

const CASES: &[Case] = &[
    Case {
        fixture: "openai_chat.json",
        shape: provider::OPENAI_CHAT,
        masked: &[
            "messages.1.content.0.text",
            "messages.2.tool_calls.0.function.arguments",
            "messages.3.content",
            "messages.4.content",
            "messages.4.function_call.arguments",
            "messages.5.content",
        ],
        kept: &[
            r#""model": "gpt-4o-2024-08-06""#,
            r#""name": "support_desk""#,
            r#""id": "call_9Qy8ZpXk3mR2""#,
            r#""name": "lookup_customer""#,
            r#""tool_call_id": "call_9Qy8ZpXk3mR2""#,
            r#""url": "https://example.com/invoice-4711.png""#,
            r#""description": "Look a customer up by e-mail""#,
        ],
        signed_surrogates: false,
    },
    Case {
        fixture: "openai_responses.json",
        shape: provider::OPENAI_RESPONSES,
        masked: &[
            "instructions",
            "input.0.content.0.text",
            "input.1.summary.0.text",
            "input.2.arguments",
            "input.3.output",
            "input.4.content.0.text",
            "input.5.content",
        ],
        kept: &[
            r#""model": "o4-mini""#,
            r#""id": "rs_68a1b2c3d4e5f6""#,
            r#""encrypted_content": "gAAAAABoZ3JhbmRvbV9lbmNyeXB0ZWRfYmxvYg==""#,
            r#""call_id": "call_Xy12Ab34", "name": "find_invoice""#,
            r#""id": "msg_68a1b2c3""#,
        ],
        signed_surrogates: false,
    },
    Case {
        fixture: "anthropic_messages.json",
        shape: provider::ANTHROPIC_MESSAGES,
        masked: &[
            "system.0.text",
            "messages.0.content",
            "messages.1.content.2.text",
            "messages.1.content.3.input.email",
            "messages.1.content.3.input.customer.name",
            "messages.1.content.3.input.customer.tags.1",
            "messages.2.content.0.content.0.text",
            "messages.2.content.1.content",
            "messages.2.content.2.text",
        ],
        kept: &[
            r#""model": "claude-sonnet-4-20250514""#,
            // The signed thinking block, whole: it names surrogates only
            // (what the model saw), never a value.
            r#"{"type": "thinking", "thinking": "The user asks about Laura Bianchi, laura.bianchi@brightvale.it. I should look the order up.", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxDYdVZv6v5fAn8QkQiMIm1hzR9lMK1Wv4ZmHh4k6Qbbh0i3f2rGh3N8aJkq3x8vCqB9mVnS0EoJ5jS8w=="}"#,
            r#"{"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"}"#,
            r#""id": "toolu_01A09q90qw90lq917835lq9", "name": "get_order""#,
            r#""tool_use_id": "toolu_01A09q90qw90lq917835lq9""#,
            r#""tags": ["vip", "#,
            r#""cache_control": {"type": "ephemeral"}"#,
        ],
        signed_surrogates: true,
    },
    Case {
        fixture: "gemini.json",
        shape: provider::GEMINI,
        masked: &[
            "systemInstruction.parts.0.text",
            "contents.0.parts.0.text",
            "contents.1.parts.1.functionCall.args.email",
            "contents.1.parts.1.functionCall.args.customer.name",
            "contents.2.parts.0.functionResponse.response.result",
            "contents.2.parts.1.text",
        ],
        kept: &[
            r#""inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"}"#,
            r#""thoughtSignature": "CiQB0e2Kb7pU6C5fxNQ3vpXn0OQe9n9AhPZ7bTkhGZ3eOZxR2ZAKXwHR7Yo2Lx1Cc0JpZm1sWm9n""#,
            r#"{"text": "The user asks about an order; look it up.", "thought": true}"#,
            r#""name": "get_order""#,
            r#""thinkingConfig": {"includeThoughts": true}"#,
        ],
        signed_surrogates: false,
    },
    Case {
        fixture: "bedrock_converse.json",
        shape: provider::BEDROCK_CONVERSE,
        masked: &[
            "system.0.text",
            "messages.0.content.0.text",
            "messages.1.content.1.text",
            "messages.1.content.2.toolUse.input.email",
            "messages.1.content.2.toolUse.input.customer.name",
            "messages.2.content.0.toolResult.content.0.text",
            "messages.2.content.1.text",
        ],
        kept: &[
            r#""source": {"bytes": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"}"#,
            // Signed reasoning, whole: it names surrogates only.
            r#"{"reasoningText": {"text": "The user asks about Laura Bianchi. I should look the order up.", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxDYdVZv6v5fAn8QkQiMIm1hzR9lMK1Wv4ZmHh4k6Qbbh0i3f2rGh3N8aJkq3x8vCqB9mVnS0EoJ5jS8w=="}}"#,
            r#""toolUseId": "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "name": "get_order""#,
        ],
        signed_surrogates: true,
    },
];

#[test]
fn each_shape_masks_what_a_person_wrote_and_keeps_the_rest() {
    let index = demo_index();
    for case in CASES {
        let body = fixture(case.fixture);
        let mut masker = masker(0);
        let (out, stats) = mask_ok(&mut masker, &index, case.shape, &body);
        assert_eq!(
            changed_strings(&body, &out),
            case.masked,
            "{}: changed strings",
            case.fixture
        );
        let out_text = String::from_utf8(out.clone()).unwrap();
        for kept in case.kept {
            assert!(out_text.contains(kept), "{}: lost {kept}", case.fixture);
        }
        assert!(
            stats.values_masked >= case.masked.len(),
            "{}: {stats:?}",
            case.fixture
        );
        // No value is left in any masked string.
        for path in case.masked {
            let text = string_at(&out, path);
            for (value, _, _) in VAULT {
                assert!(
                    !text.contains(value),
                    "{}: {path} still holds a value",
                    case.fixture
                );
            }
        }
        // Restoring gives the original JSON back (as a value: the escapes of
        // a rewritten string are re-encoded minimally).
        let original: serde_json::Value = serde_json::from_slice(&body).unwrap();
        if !case.signed_surrogates {
            let restored = restore_json_simple(&index, &out);
            let back: serde_json::Value = serde_json::from_slice(&restored).unwrap();
            assert_eq!(back, original, "{}", case.fixture);
        }
        // And the restore module agrees.
        let (restored, _) = latet_core::restore::restore_body(&index, &out);
        let back: serde_json::Value = serde_json::from_slice(&restored.unwrap()).unwrap();
        assert_eq!(back, original, "{} (restore module)", case.fixture);
    }
}

#[test]
fn tool_call_arguments_are_masked_as_json_keeping_their_layout() {
    let index = demo_index();
    let body = fixture("openai_chat.json");
    let (out, _) = mask_ok(&mut masker(0), &index, provider::OPENAI_CHAT, &body);
    assert_eq!(
        string_at(&out, "messages.2.tool_calls.0.function.arguments"),
        r#"{"email":"laura.bianchi@brightvale.it","fields":["name","plan"],"limit":5}"#
    );
    assert_eq!(
        string_at(&out, "messages.4.function_call.arguments"),
        r#"{"to": "laura.bianchi@brightvale.it"}"#
    );
    // A tool result is text even when it looks like JSON.
    assert_eq!(
        string_at(&out, "messages.3.content"),
        r#"{"name":"Laura Bianchi","plan":"pro","contact":"laura.bianchi@brightvale.it"}"#
    );
    let body = fixture("openai_responses.json");
    let (out, _) = mask_ok(&mut masker(0), &index, provider::OPENAI_RESPONSES, &body);
    assert_eq!(
        string_at(&out, "input.2.arguments"),
        r#"{"customer":"Laura Bianchi","email":"laura.bianchi@brightvale.it"}"#
    );
}

#[test]
fn arguments_that_are_not_json_are_masked_as_text() {
    let index = demo_index();
    let body = br#"{"messages":[{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"to\": \"Mario Rossi\""}}]}]}"#;
    let (out, _) = mask_ok(&mut masker(0), &index, provider::OPENAI_CHAT, body);
    assert_eq!(
        string_at(&out, "messages.0.tool_calls.0.function.arguments"),
        r#"{"to": "Laura Bianchi""#
    );
}

#[test]
fn json_shape_masks_every_string_value_and_every_key() {
    let index = demo_index();
    let body = r#"{"Mario Rossi": "Mario Rossi", "list": [1, "mario.rossi@acme.it", {"k": "José García"}], "n": null}"#.as_bytes();
    let (out, stats) = mask_ok(&mut masker(0), &index, provider::GENERIC_JSON, body);
    assert_eq!(
        out,
        r#"{"Laura Bianchi": "Laura Bianchi", "list": [1, "laura.bianchi@brightvale.it", {"k": "Iñigo Pérez"}], "n": null}"#.as_bytes()
    );
    // Keys (4), strings (3) and numbers (1) are all examined.
    assert_eq!(stats.texts, 8);
    assert_eq!(stats.values_masked, 4);
    // A provider shape whose root is not an object: every string.
    let body = br#"["Mario Rossi"]"#;
    let (out, _) = mask_ok(&mut masker(0), &index, provider::ANTHROPIC_MESSAGES, body);
    assert_eq!(out, br#"["Laura Bianchi"]"#);
}

#[test]
fn text_shape_masks_the_whole_body() {
    let index = demo_index();
    let body = "Write to mario.rossi@acme.it, signed Mario Rossi.".as_bytes();
    let (out, stats) = mask_ok(&mut masker(0), &index, provider::PLAIN_TEXT, body);
    assert_eq!(
        out,
        b"Write to laura.bianchi@brightvale.it, signed Laura Bianchi."
    );
    assert_eq!(stats.values_masked, 2);
    // A JSON body sent as Text is text: its escapes are not decoded.
    let (out, _) = mask_ok(
        &mut masker(0),
        &index,
        provider::PLAIN_TEXT,
        br#"{"a":"Mario Rossi"}"#,
    );
    assert_eq!(out, br#"{"a":"Laura Bianchi"}"#);
}

#[test]
fn repeated_keys_are_all_masked() {
    let index = demo_index();
    let body = r#"{"messages":[{"role":"user","content":"Mario Rossi","content":"José García"}],"messages":[{"role":"user","content":"mario.rossi@acme.it"}]}"#.as_bytes();
    let (out, _) = mask_ok(&mut masker(0), &index, provider::OPENAI_CHAT, body);
    assert_eq!(
        out,
        r#"{"messages":[{"role":"user","content":"Laura Bianchi","content":"Iñigo Pérez"}],"messages":[{"role":"user","content":"laura.bianchi@brightvale.it"}]}"#.as_bytes()
    );
}

#[test]
fn a_thinking_block_naming_a_new_value_is_refused_and_asks_for_nothing() {
    // A signed block cannot be masked: one naming a value the vault has
    // never seen is refused (never forwarded, and no entry is asked for).
    let index = demo_index();
    let body = br#"{"model":"claude","messages":[{"role":"assistant","content":[{"type":"thinking","thinking":"write to new.person@example.org","signature":"sig"},{"type":"text","text":"ok"}]}]}"#;
    let err = masker(0)
        .mask_request(
            &index,
            provider::ANTHROPIC_MESSAGES,
            body,
            MaskOptions::default(),
        )
        .unwrap_err();
    assert_eq!(
        err,
        latet_core::CoreError::ValueInVerbatimField {
            field: "thinking",
            offset: 92
        }
    );
    // Naming surrogates only (what the model saw), it goes out whole.
    let body = br#"{"model":"claude","messages":[{"role":"assistant","content":[{"type":"thinking","thinking":"write to laura.bianchi@brightvale.it","signature":"sig"},{"type":"text","text":"ok"}]}]}"#;
    let outcome = masker(0)
        .mask_request(
            &index,
            provider::ANTHROPIC_MESSAGES,
            body,
            MaskOptions::default(),
        )
        .unwrap();
    assert!(
        matches!(outcome, MaskOutcome::Masked { body: None, .. }),
        "{outcome:?}"
    );
}

#[test]
fn nothing_to_mask_forwards_the_original_bytes() {
    for (shape, name) in [
        (provider::OPENAI_CHAT, "openai_chat.json"),
        (provider::OPENAI_RESPONSES, "openai_responses.json"),
        (provider::ANTHROPIC_MESSAGES, "anthropic_messages.json"),
    ] {
        // Against an empty vault with detectors that find nothing here but
        // the e-mail, remove the e-mails first.
        let body = String::from_utf8(fixture(name))
            .unwrap()
            .replace("mario.rossi@acme.it", "the customer")
            .replace("laura.bianchi@brightvale.it", "the customer");
        let empty = index_with(&[]);
        let outcome = masker(0)
            .mask_request(&empty, shape, body.as_bytes(), MaskOptions::default())
            .unwrap();
        assert!(
            matches!(outcome, MaskOutcome::Masked { body: None, .. }),
            "{name}: {outcome:?}"
        );
    }
}
