//! The playground's run against the engine called directly: the masked
//! body is the one `Masker::mask_request` gives with the same entries, a
//! configuration error names the field, and an answer restores whole and
//! chunk by chunk.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use latet_core::config::FilterConfig;
use latet_core::detect::Detectors;
use latet_core::mask::{MaskOptions, MaskOutcome, Masker};
use latet_playground::demo_vault;
use latet_playground::session::{run, Call, Outcome};

const CONFIG: &str =
    r#"{"controlCluster": "latet_control", "gatewayTokenEnv": "LATET_GATEWAY_TOKEN"}"#;
const PATH: &str = "/v1/chat/completions";
/// The README's tour request.
const TOUR: &str = r#"{"model":"gpt-4o","messages":[{"role":"user","content":"Write to mario.rossi@acme.it or call +39 347 123 4567"}]}"#;

fn call(config: &str, vault: &str, body: &str) -> Call {
    Call {
        config: config.into(),
        vault: vault.into(),
        path: PATH.into(),
        body: body.into(),
        answer: None,
        content_type: None,
        chunk_bytes: None,
    }
}

fn masked(outcome: &Outcome) -> &str {
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    outcome.masked.as_deref().unwrap()
}

/// What the engine gives, called as the filter calls it.
fn engine_masked(body: &str, vault: &str) -> String {
    let config = FilterConfig::parse(CONFIG.as_bytes(), |_| Some("t".into())).unwrap();
    let (mut index, _) = demo_vault::index_of(vault).unwrap();
    let mut masker = Masker::new(Detectors::new(&config.detectors).unwrap(), 1 << 20);
    let provider = config.provider_for(PATH);
    loop {
        match masker
            .mask_request(&index, provider, body.as_bytes(), MaskOptions::default())
            .unwrap()
        {
            MaskOutcome::Masked { body: out, .. } => {
                return String::from_utf8(out.unwrap_or_else(|| body.as_bytes().to_vec())).unwrap()
            }
            MaskOutcome::NeedEntries { values } => {
                let created = demo_vault::create_entries(&index, &values).unwrap();
                demo_vault::add(&mut index, created).unwrap();
            }
        }
    }
}

#[test]
fn the_tour_request_is_masked_as_the_engine_masks_it() {
    let outcome = run(&call(CONFIG, "", TOUR));
    let body = masked(&outcome);
    assert_eq!(body, engine_masked(TOUR, ""));
    assert!(outcome.changed);
    assert_eq!(outcome.provider.as_deref(), Some("openai-chat"));
    assert!(!body.contains("mario.rossi@acme.it"));
    assert!(!body.contains("347 123 4567"));
    // The e-mail, its company domain and the phone are new, all demo.
    let mut kinds: Vec<&str> = outcome
        .new_entries
        .iter()
        .map(|e| e.kind.as_str())
        .collect();
    kinds.sort_unstable();
    assert_eq!(kinds, ["domain", "email", "phone"]);
    assert!(outcome.new_entries.iter().all(|e| e.demo));
    // One span per value, each holding its entry's surrogate.
    let kinds: Vec<&str> = outcome.spans.iter().map(|s| s.kind.as_str()).collect();
    assert_eq!(kinds, ["email", "phone"]);
    for span in &outcome.spans {
        let text = &body[span.byte_start..span.byte_end];
        assert!(outcome
            .new_entries
            .iter()
            .any(|e| e.surrogate == text && e.kind == span.kind));
        assert!(span.new);
    }
}

#[test]
fn a_pasted_surrogate_is_used_as_given() {
    let vault = r#"[{"kind": "email", "value": "mario.rossi@acme.it", "surrogate": "laura.bianchi@brightvale.it"}]"#;
    let outcome = run(&call(CONFIG, vault, TOUR));
    let body = masked(&outcome);
    assert_eq!(body, engine_masked(TOUR, vault));
    assert!(body.contains("Write to laura.bianchi@brightvale.it or call"));
    let email = outcome.spans.iter().find(|s| s.kind == "email").unwrap();
    assert!(!email.new);
    // Only the phone is new: the e-mail's entry exists.
    let kinds: Vec<&str> = outcome
        .new_entries
        .iter()
        .map(|e| e.kind.as_str())
        .collect();
    assert_eq!(kinds, ["phone"]);
}

#[test]
fn span_offsets_count_utf16_units() {
    let body = r#"{"messages":[{"role":"user","content":"日本 😀 mario.rossi@acme.it"}]}"#;
    let outcome = run(&call(CONFIG, "", body));
    let text = masked(&outcome);
    let span = &outcome.spans[0];
    let utf16: Vec<u16> = text.encode_utf16().collect();
    let shown = String::from_utf16(&utf16[span.start..span.end]).unwrap();
    assert_eq!(shown, &text[span.byte_start..span.byte_end]);
}

#[test]
fn a_bad_configuration_names_the_field_and_no_value() {
    for (config, field) in [
        (
            r#"{"controlCluster": "c", "gatewayToken": "t", "routes": [{"path": "/x", "provider": "sk-secret-provider"}]}"#,
            "routes[0].provider",
        ),
        (
            r#"{"controlCluster": "c", "gatewayToken": "t", "bodyLimitBytes": 0}"#,
            "bodyLimitBytes",
        ),
        (r#"{"gatewayToken": "t"}"#, "controlCluster"),
        (
            r#"{"controlCluster": "c", "gatewayToken": "t", "failureMode": "sk-leak"}"#,
            "failureMode",
        ),
    ] {
        let outcome = run(&call(config, "", TOUR));
        let error = outcome.error.expect(field);
        assert_eq!(error.stage, "config");
        assert_eq!(error.field.as_deref(), Some(field));
        assert!(error.message.contains(field), "{}", error.message);
        assert!(!error.message.contains("sk-"), "{}", error.message);
        assert!(outcome.masked.is_none());
    }
}

#[test]
fn a_bad_vault_names_the_position_and_no_value() {
    let vault = r#"[{"kind": "email", "value": "a@b.it", "surrogate": "a@b.it"}]"#;
    let error = run(&call(CONFIG, vault, TOUR)).error.unwrap();
    assert_eq!(error.stage, "vault");
    assert_eq!(error.field.as_deref(), Some("vault[0].surrogate"));
    assert!(!error.message.contains("a@b.it"));
}

#[test]
fn a_body_the_filter_refuses_is_refused_here() {
    let error = run(&call(CONFIG, "", "{not json")).error.unwrap();
    assert_eq!(error.stage, "request");
    assert!(
        error.message.starts_with("refused with 400"),
        "{}",
        error.message
    );
}

fn echo_answer(masked: &str) -> String {
    // The fake LLM's shape: the last user message as the assistant's.
    let doc: serde_json::Value = serde_json::from_str(masked).unwrap();
    let content = doc["messages"][0]["content"].as_str().unwrap();
    serde_json::json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]})
        .to_string()
}

#[test]
fn an_echoed_answer_restores_whole_and_chunk_by_chunk() {
    let first = run(&call(CONFIG, "", TOUR));
    let answer = echo_answer(masked(&first));
    let mut whole = call(CONFIG, "", TOUR);
    whole.answer = Some(answer.clone());
    let restored = run(&whole).restore.unwrap();
    assert_eq!(restored.format, "whole");
    assert_eq!(restored.restored_count, 2);
    assert_eq!(
        restored.restored,
        r#"{"choices":[{"index":0,"message":{"content":"Write to mario.rossi@acme.it or call +39 347 123 4567","role":"assistant"}}]}"#
    );

    // The same text streamed as SSE deltas, fed 7 bytes at a time.
    let content = serde_json::from_str::<serde_json::Value>(&answer).unwrap()["choices"][0]
        ["message"]["content"]
        .as_str()
        .unwrap()
        .to_string();
    let (a, b) = content.split_at(content.len() / 2);
    let sse: String = [a, b]
        .iter()
        .map(|part| {
            format!(
                "data: {}\n\n",
                serde_json::json!({"choices": [{"index": 0, "delta": {"content": part}}]})
            )
        })
        .chain(["data: [DONE]\n\n".to_string()])
        .collect();
    let mut stream = call(CONFIG, "", TOUR);
    stream.answer = Some(sse);
    stream.content_type = Some("text/event-stream".into());
    stream.chunk_bytes = Some(7);
    let restored = run(&stream).restore.unwrap();
    assert_eq!(restored.format, "sse");
    assert!(restored.chunks.len() > 10);
    let joined: String = restored
        .restored
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter(|l| *l != "[DONE]")
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["choices"][0]["delta"]["content"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        joined,
        "Write to mario.rossi@acme.it or call +39 347 123 4567"
    );
    assert!(restored.restored.ends_with("data: [DONE]\n\n"));
}

#[test]
fn restore_scope_request_leaves_surrogates_the_request_did_not_use() {
    let vault =
        r#"[{"kind": "email", "value": "anna@other.it", "surrogate": "bruno@elsewhere.it"}]"#;
    let mut c = call(CONFIG, vault, TOUR);
    c.answer = Some(r#"{"text": "mail bruno@elsewhere.it"}"#.into());
    let restored = run(&c).restore.unwrap();
    assert_eq!(restored.restored, r#"{"text": "mail bruno@elsewhere.it"}"#);
    assert_eq!(restored.declined_out_of_scope, 1);

    let vault_scope = r#"{"controlCluster": "c", "gatewayToken": "t", "restoreScope": "vault"}"#;
    let mut c = call(vault_scope, vault, TOUR);
    c.answer = Some(r#"{"text": "mail bruno@elsewhere.it"}"#.into());
    assert_eq!(
        run(&c).restore.unwrap().restored,
        r#"{"text": "mail anna@other.it"}"#
    );
}
