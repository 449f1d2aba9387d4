//! Deny by default: a value written anywhere in a request body leaves
//! masked — fields no provider module names, object keys, numbers, JSON
//! inside JSON strings (twice), new block and item types — and every field a
//! provider keeps verbatim is kept only in its genuine form: a value put
//! there is masked or refuses the request, never forwarded as written.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "mask_support.rs"]
mod support;

use latet_core::json::Document;
use latet_core::mask::{MaskOptions, MaskOutcome};
use latet_core::provider::{self, ProviderRef, Verbatim, REGISTRY};
use latet_core::CoreError;
use support::*;

/// What the vault holds, in every written form a check must rule out.
const VALUES: [&str; 3] = ["Mario Rossi", "mario.rossi@acme.it", "José García"];

/// Fails when a value is in `out` as written, or in any decoded string or
/// key, or in a string inside a string holding JSON (recursively).
fn assert_no_value(out: &[u8], case: &str) {
    let raw = String::from_utf8_lossy(out);
    for value in VALUES {
        assert!(!raw.contains(value), "{case}: a value as written");
    }
    let mut texts = Vec::new();
    collect_texts(out, &mut texts, 0);
    for text in &texts {
        for value in VALUES {
            assert!(!text.contains(value), "{case}: a value once decoded");
        }
    }
}

fn collect_texts(json: &[u8], out: &mut Vec<String>, depth: usize) {
    let Ok(doc) = Document::parse(json) else {
        return;
    };
    for node in doc.nodes() {
        if let Some(Ok(key)) = doc.key_value(node) {
            out.push(key.into_owned());
        }
        if let Some(Ok(text)) = doc.str_value(node) {
            if depth < 6 {
                collect_texts(text.as_bytes(), out, depth + 1);
            }
            out.push(text.into_owned());
        }
    }
}

fn mask(shape: ProviderRef, body: &str) -> Result<Vec<u8>, CoreError> {
    let outcome = masker(0).mask_request(
        &demo_index(),
        shape,
        body.as_bytes(),
        MaskOptions::default(),
    )?;
    match outcome {
        MaskOutcome::Masked { body: Some(b), .. } => Ok(b),
        MaskOutcome::Masked { body: None, .. } => Ok(body.as_bytes().to_vec()),
        MaskOutcome::NeedEntries { .. } => panic!("only vault values here"),
    }
}

#[test]
fn values_anywhere_in_a_body_leave_masked() {
    use provider::{
        ANTHROPIC_MESSAGES as ANT, GENERIC_JSON as JSON, OPENAI_CHAT as CHAT,
        OPENAI_RESPONSES as RESP,
    };
    let cases: &[(&str, ProviderRef, &str)] = &[
        (
            "chat metadata",
            CHAT,
            r#"{"model":"m","messages":[],"metadata":{"customer":"mario.rossi@acme.it"}}"#,
        ),
        (
            "chat user",
            CHAT,
            r#"{"model":"m","messages":[],"user":"mario.rossi@acme.it"}"#,
        ),
        (
            "chat tool description",
            CHAT,
            r#"{"messages":[],"tools":[{"type":"function","function":{"name":"f","description":"Mails Mario Rossi"}}]}"#,
        ),
        (
            "chat schema enum/default/examples",
            CHAT,
            r#"{"messages":[],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"to":{"type":"string","enum":["mario.rossi@acme.it"],"default":"Mario Rossi","examples":["José García"]}}}}}]}"#,
        ),
        (
            "chat prediction",
            CHAT,
            r#"{"messages":[],"prediction":{"type":"content","content":"Dear Mario Rossi"}}"#,
        ),
        (
            "chat participant name",
            CHAT,
            r#"{"messages":[{"role":"user","name":"Mario Rossi","content":"hi"}]}"#,
        ),
        (
            "chat stop",
            CHAT,
            r#"{"messages":[],"stop":["Mario Rossi"]}"#,
        ),
        (
            "chat logit_bias key",
            CHAT,
            r#"{"messages":[],"logit_bias":{"Mario Rossi":1}}"#,
        ),
        (
            "chat image url query",
            CHAT,
            r#"{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://img.example/a.png?who=mario.rossi@acme.it"}}]}]}"#,
        ),
        (
            "chat forged audio",
            CHAT,
            r#"{"messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"Mario Rossi","format":"wav"}}]}]}"#,
        ),
        (
            "chat unknown part type",
            CHAT,
            r#"{"messages":[{"role":"user","content":[{"type":"brand_new","payload":{"who":"Mario Rossi"}}]}]}"#,
        ),
        (
            "responses prompt variables",
            RESP,
            r#"{"prompt":{"id":"pmpt_1","variables":{"customer":"Mario Rossi"}}}"#,
        ),
        (
            "responses function_call_output",
            RESP,
            r#"{"input":[{"type":"function_call_output","call_id":"c","output":"{\"email\":\"mario.rossi@acme.it\"}"}]}"#,
        ),
        (
            "responses mcp_call",
            RESP,
            r#"{"input":[{"type":"mcp_call","id":"m","name":"lookup","arguments":"{\"q\":\"Mario Rossi\"}","output":"José García"}]}"#,
        ),
        (
            "responses shell output",
            RESP,
            r#"{"input":[{"type":"local_shell_call_output","id":"s","output":"mario.rossi@acme.it"}]}"#,
        ),
        (
            "responses code interpreter logs",
            RESP,
            r#"{"input":[{"type":"code_interpreter_call","id":"ci","outputs":[{"type":"logs","logs":"Mario Rossi"}]}]}"#,
        ),
        (
            "responses reasoning content",
            RESP,
            r#"{"input":[{"type":"reasoning","id":"rs","summary":[],"content":[{"type":"reasoning_text","text":"Mario Rossi"}]}]}"#,
        ),
        (
            "responses forged encrypted_content type",
            RESP,
            r#"{"input":[{"type":"message","encrypted_content":"Mario Rossi"}]}"#,
        ),
        (
            "responses web search query",
            RESP,
            r#"{"input":[{"type":"web_search_call","id":"ws","action":{"type":"search","query":"José García"}}]}"#,
        ),
        (
            "responses previous id holding a value",
            RESP,
            r#"{"previous_response_id":"mario.rossi@acme.it","input":"hi"}"#,
        ),
        (
            "anthropic tool_result search result",
            ANT,
            r#"{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"search_result","source":"https://x","title":"Mario Rossi","content":[{"type":"text","text":"José García"}]}]}]}]}"#,
        ),
        (
            "anthropic web_fetch result",
            ANT,
            r#"{"messages":[{"role":"user","content":[{"type":"web_fetch_tool_result","tool_use_id":"t","content":{"type":"web_fetch_result","url":"https://x/mario.rossi@acme.it","content":{"type":"document","source":{"type":"text","media_type":"text/plain","data":"Mario Rossi"}}}}]}]}"#,
        ),
        (
            "anthropic code execution output",
            ANT,
            r#"{"messages":[{"role":"user","content":[{"type":"code_execution_tool_result","tool_use_id":"t","content":{"type":"code_execution_result","stdout":"Mario Rossi","stderr":"","return_code":0}}]}]}"#,
        ),
        (
            "anthropic mcp tool use and result",
            ANT,
            r#"{"messages":[{"role":"assistant","content":[{"type":"mcp_tool_use","id":"m","name":"n","server_name":"s","input":{"who":"Mario Rossi"}}]},{"role":"user","content":[{"type":"mcp_tool_result","tool_use_id":"m","content":[{"type":"text","text":"José García"}]}]}]}"#,
        ),
        (
            "anthropic citations",
            ANT,
            r#"{"messages":[{"role":"assistant","content":[{"type":"text","text":"ok","citations":[{"type":"char_location","cited_text":"Mario Rossi","document_title":"José García"}]}]}]}"#,
        ),
        (
            "anthropic nested tool_use input",
            ANT,
            r#"{"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"n","input":{"a":{"b":[{"c":"Mario Rossi"}]}}}]}]}"#,
        ),
        (
            "anthropic forged base64 image",
            ANT,
            r#"{"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"Mario Rossi"}}]}]}"#,
        ),
        (
            "anthropic metadata",
            ANT,
            r#"{"messages":[],"metadata":{"user_id":"mario.rossi@acme.it"}}"#,
        ),
        (
            "anthropic repeated type text then thinking",
            ANT,
            r#"{"messages":[{"role":"assistant","content":[{"type":"text","thinking":"Mario Rossi","type":"thinking","type":"text"}]}]}"#,
        ),
        (
            "key holding a value",
            JSON,
            r#"{"mario.rossi@acme.it":"ok","deep":[{"José García":{"Mario Rossi":1}}]}"#,
        ),
        (
            "key with escapes",
            JSON,
            r#"{"mario.rossi\u0040acme.it":"ok"}"#,
        ),
        (
            "value with escapes",
            CHAT,
            r#"{"messages":[{"role":"user","content":"Mario\u0020Rossi"}]}"#,
        ),
        (
            "JSON in JSON, twice, with escapes",
            CHAT,
            r#"{"messages":[{"role":"tool","tool_call_id":"c","content":"{\"r\":\"{\\\"email\\\":\\\"mario.rossi\\\\u0040acme.it\\\"}\"}"}]}"#,
        ),
        (
            "a JSON string in a string",
            CHAT,
            r#"{"messages":[{"role":"user","content":"\"Mario\\u0020Rossi\""}]}"#,
        ),
        ("array root", ANT, r#"[{"who":"Mario Rossi"}]"#),
        (
            "percent-encoded in a URL",
            CHAT,
            r#"{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://img.example/p.png?owner=mario.rossi%40acme.it"}}]}]}"#,
        ),
        (
            "double percent-encoded",
            JSON,
            r#"{"u":"https://x/?u=mario.rossi%2540acme.it"}"#,
        ),
        (
            "percent-encoded dots and at",
            JSON,
            r#"{"u":"mario%2Erossi%40acme%2Eit"}"#,
        ),
        (
            "a data: URL that is not media",
            RESP,
            r#"{"input":[{"role":"user","content":[{"type":"input_image","image_url":"data:image/png;base64,Mario Rossi"}]}]}"#,
        ),
        ("string root", JSON, r#""Mario Rossi""#),
    ];
    for (case, shape, body) in cases {
        let out = mask(*shape, body).unwrap_or_else(|e| panic!("{case}: {e}"));
        assert_no_value(&out, case);
    }
}

#[test]
fn a_number_holding_a_value_is_masked_as_a_number_or_a_string() {
    let card = ("4111111111111111", "4000056655665556", "card");
    let phone = ("393471234567", "+39 348 765 4321", "phone");
    let index = index_with(&[card, phone]);
    let body =
        br#"{"card":4111111111111111,"phone":393471234567,"n":3,"exp":4.111111111111111e15}"#;
    let outcome = masker(0)
        .mask_request(&index, provider::GENERIC_JSON, body, MaskOptions::default())
        .unwrap();
    let MaskOutcome::Masked {
        body: Some(out), ..
    } = outcome
    else {
        panic!("{outcome:?}");
    };
    // A surrogate that is a number stays one; one that is not becomes a
    // string (the value must not leave).
    assert_eq!(
        String::from_utf8(out).unwrap(),
        r#"{"card":4000056655665556,"phone":"+39 348 765 4321","n":3,"exp":4000056655665556}"#
    );
}

/// Every verbatim field of every provider: kept in its genuine form (the
/// example), and a value written into it leaves masked or refuses the
/// request — never as written.
#[test]
fn every_verbatim_field_keeps_its_form_and_nothing_else() {
    let index = demo_index();
    for provider in REGISTRY {
        for field in provider.verbatim_fields() {
            let at = format!("{}: {}", provider.name(), field.key);
            let example = field.example.as_bytes();
            let outcome = masker(0)
                .mask_request(&index, *provider, example, MaskOptions::default())
                .unwrap_or_else(|e| panic!("{at}: {e}"));
            assert!(
                matches!(outcome, MaskOutcome::Masked { body: None, .. }),
                "{at}: the genuine form is changed: {outcome:?}"
            );
            // The field's own string, replaced by a value.
            let doc = Document::parse(example).unwrap();
            let node = doc.nodes().find(|&n| field.matches(&doc, n)).unwrap();
            let span = doc.span(node);
            let mut forged = example[..span.start].to_vec();
            forged.extend_from_slice(b"write to mario.rossi@acme.it");
            forged.extend_from_slice(&example[span.end..]);
            let forged = String::from_utf8(forged).unwrap();
            match (mask(*provider, &forged), field.handling) {
                (Ok(out), Verbatim::Base64Media | Verbatim::DataUrlMedia) => {
                    assert_no_value(&out, &at)
                }
                (Err(CoreError::ValueInVerbatimField { field: key, .. }), Verbatim::Signed) => {
                    assert_eq!(key, field.key, "{at}")
                }
                (other, handling) => panic!("{at} ({handling:?}): {other:?}"),
            }
        }
    }
}

#[test]
fn json_nested_in_strings_past_the_limit_is_refused() {
    let mut inner = serde_json::json!("Mario Rossi");
    for _ in 0..=latet_core::mask::MAX_JSON_IN_STRING_DEPTH + 1 {
        inner = serde_json::Value::String(serde_json::json!({ "x": inner }).to_string());
    }
    let body = serde_json::json!({ "messages": [{"role": "user", "content": inner}] }).to_string();
    match mask(provider::OPENAI_CHAT, &body) {
        Err(CoreError::BadBody(message)) => {
            assert!(message.contains("nested deeper"), "{message}")
        }
        other => panic!("{other:?}"),
    }
}

/// Found while building this: an inner JSON text masked while another
/// text of the request still lacked entries was memoised as unchanged, so
/// the resumed request forwarded the inner value as written.
#[test]
fn an_inner_json_text_masked_beside_a_new_value_is_not_memoised_unchanged() {
    let mut index = demo_index();
    let mut masker = masker(1 << 20);
    let body = br#"{"messages":[{"role":"user","content":"new.person@example.org"},{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"[[\"Mario Rossi, back\\\\slash, \"]]"}}]}]}"#;
    let mut counter = 0;
    let out = mask_resuming(
        &mut masker,
        &mut index,
        provider::OPENAI_CHAT,
        body,
        &mut counter,
    );
    assert_no_value(&out, "resumed");
}

/// A value found in a percent-decoded reading is replaced where it was
/// written, percent-encoded, and the rest of the URL is kept byte for byte.
#[test]
fn a_percent_encoded_value_is_replaced_in_place_percent_encoded() {
    let body = r#"{"u":"https://x/p?owner=mario.rossi%40acme.it&n=1"}"#;
    let out = String::from_utf8(mask(provider::GENERIC_JSON, body).unwrap()).unwrap();
    assert_eq!(
        out,
        r#"{"u":"https://x/p?owner=laura.bianchi%40brightvale.it&n=1"}"#
    );
}

/// A phone written as a JSON number without its `+` is a phone: it asks
/// for an entry of kind phone, and its surrogate (digits, as the value)
/// stays a number. A millisecond timestamp is not taken for one.
#[test]
fn a_phone_written_as_a_json_number_is_masked() {
    use latet_core::kind::Kind;
    let body = br#"{"callback":393480493047,"created":1755000000000,"seed":12345678901234567}"#;
    let outcome = masker(0)
        .mask_request(
            &demo_index(),
            provider::GENERIC_JSON,
            body,
            MaskOptions::default(),
        )
        .unwrap();
    let MaskOutcome::NeedEntries { values } = outcome else {
        panic!("{outcome:?}");
    };
    assert_eq!(values.len(), 1, "{values:?}");
    assert_eq!(values[0].kind, Kind::Phone);
    assert_eq!(values[0].value, "393480493047");
    let index = index_with(&[("393480493047", "393471112233", "phone")]);
    let outcome = masker(0)
        .mask_request(&index, provider::GENERIC_JSON, body, MaskOptions::default())
        .unwrap();
    let MaskOutcome::Masked {
        body: Some(out), ..
    } = outcome
    else {
        panic!("{outcome:?}");
    };
    assert_eq!(
        String::from_utf8(out).unwrap(),
        r#"{"callback":393471112233,"created":1755000000000,"seed":12345678901234567}"#
    );
}

/// A `data:` URL of base64 that is not media a provider takes as a file is
/// decoded, masked as the text it is, and encoded again; one of a binary
/// file the gateway does not know is kept when it holds no value and
/// refuses the request when it does.
#[test]
fn a_base64_data_url_is_masked_inside_or_refused() {
    // base64 of `owner mario.rossi@acme.it, see {"cc":"Mario Rossi"}`
    let text = r#"{"f":"data:text/plain;charset=utf-8;base64,b3duZXIgbWFyaW8ucm9zc2lAYWNtZS5pdCwgc2VlIHsiY2MiOiJNYXJpbyBSb3NzaSJ9"}"#;
    let out = String::from_utf8(mask(provider::GENERIC_JSON, text).unwrap()).unwrap();
    // base64 of the same text with both surrogates
    assert_eq!(
        out,
        r#"{"f":"data:text/plain;charset=utf-8;base64,b3duZXIgbGF1cmEuYmlhbmNoaUBicmlnaHR2YWxlLml0LCBzZWUgeyJjYyI6IkxhdXJhIEJpYW5jaGkifQ=="}"#
    );
    // Bytes that are not UTF-8 (00 01 fe ff), then text.
    let clean =
        r#"{"f":"data:application/octet-stream;base64,AAH+/yB6aXAgb2Ygbm90aGluZyBwZXJzb25hbA=="}"#;
    assert_eq!(
        mask(provider::GENERIC_JSON, clean).unwrap(),
        clean.as_bytes()
    );
    let holding =
        r#"{"f":"data:application/octet-stream;base64,AAH+/yB6aXAgbWFyaW8ucm9zc2lAYWNtZS5pdA=="}"#;
    match mask(provider::GENERIC_JSON, holding) {
        Err(CoreError::ValueInVerbatimField { offset, .. }) => assert_eq!(offset, 6), // the string's first byte
        other => panic!("{other:?}"),
    }
}

/// A file upload (OpenAI batch input): values in the filename, in a text
/// part, and in every line of the JSON-lines file (escaped, in a key, in a
/// tool call's arguments) leave masked; each line keeps what its API keeps
/// (an inline image of a chat line); a PNG part is kept byte for byte; a
/// part that is neither text nor a known file, and a value as the
/// boundary, refuse the request.
#[test]
fn a_multipart_upload_is_examined_part_by_part() {
    // A PNG's first bytes, then bytes that are not UTF-8.
    let png: &[u8] = b"\x89PNG\r\n\x1a\n\x00\xff\xfe";
    let image =
        "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk";
    let lines = [
        format!(
            r#"{{"custom_id":"r1","method":"POST","url":"/v1/chat/completions","body":{{"model":"m","messages":[{{"role":"user","content":[{{"type":"text","text":"Write to Jos\u00e9 Garc\u00eda"}},{{"type":"image_url","image_url":{{"url":"{image}"}}}}]}}]}}}}"#
        ),
        r#"{"custom_id":"r2","method":"POST","url":"/v1/embeddings","body":{"input":["mario.rossi@acme.it"],"model":"e"}}"#.to_string(),
        r#"{"custom_id":"r3","url":"/v1/responses","body":{"input":[{"type":"function_call","arguments":"{\"who\":\"Mario Rossi\"}"}],"Mario Rossi":1}}"#.to_string(),
    ];
    let body = |boundary: &str, extra: &str| {
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch for Mario Rossi\r\n\
             --{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"Mario Rossi batch.jsonl\"\r\n\
             Content-Type: application/jsonl\r\n\r\n{}\n\r\n{extra}--{boundary}--\r\n",
            lines.join("\n")
        )
    };
    let png_part = "--b0undary\r\nContent-Disposition: form-data; name=\"img\"; filename=\"x.png\"\r\n\r\n@PNG@\r\n";
    let text = body("b0undary", png_part);
    let (head, tail) = text.split_once("@PNG@").unwrap();
    let upload = [head.as_bytes(), png, tail.as_bytes()].concat();
    let outcome = masker(0)
        .mask_request(
            &demo_index(),
            provider::FILES,
            &upload,
            MaskOptions::default(),
        )
        .unwrap();
    let MaskOutcome::Masked {
        body: Some(out), ..
    } = outcome
    else {
        panic!("{outcome:?}");
    };
    assert!(
        out.windows(png.len()).any(|w| w == png),
        "the PNG part is kept"
    );
    assert_no_value(&out, "upload");
    let out = String::from_utf8_lossy(&out);
    // Every line is still one JSON document, its image kept.
    let file = out.split("\r\n\r\n").nth(2).unwrap();
    let file = file.split("\n\r\n").next().unwrap();
    for line in file.lines() {
        let doc: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(doc["custom_id"].is_string(), "{line}");
    }
    assert!(out.contains(image), "the chat line's inline image is kept");
    assert!(out.starts_with("--b0undary\r\n") && out.ends_with("--b0undary--\r\n"));

    // A part of bytes that are not UTF-8 and of no known file type.
    let raw = b"--b0undary\r\nX: y\r\n\r\n\xff\xfe\x00\r\n--b0undary--\r\n";
    let err = masker(0)
        .mask_request(&demo_index(), provider::FILES, raw, MaskOptions::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("neither text nor a known file type"), "{err}");
    let err = mask(provider::FILES, &body("Mario Rossi", ""))
        .unwrap_err()
        .to_string();
    assert!(err.contains("boundary") && !err.contains("Mario"), "{err}");
    // Not multipart at all: refused, never forwarded.
    assert!(mask(provider::FILES, "{\"a\":\"Mario Rossi\"}").is_err());
}
