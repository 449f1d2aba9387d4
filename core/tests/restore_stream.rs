//! Streamed restore (SSE) over recorded provider streams: what each slot
//! restores to, that every split of the stream restores the same, that the
//! streamed restore equals the whole restore, and that nothing but
//! surrogates changes.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "restore_support.rs"]
mod support;

use latet_core::restore::{restore_body, RestoreStats, SseRestorer};
use latet_core::snapshot::SnapshotIndex;
use proptest::prelude::*;
use support::*;

const STREAMS: [&str; 4] = [
    "streams/openai_chat.sse",
    "streams/openai_chat_tool_calls.sse",
    "streams/openai_responses.sse",
    "streams/anthropic_messages.sse",
];

fn restore_whole_stream(index: &SnapshotIndex, stream: &[u8]) -> (Vec<u8>, RestoreStats) {
    restore_in_pieces(index, stream, &[])
}

/// A slot's text restored as a whole text (the whole-body rules).
fn restore_slot_text(index: &SnapshotIndex, text: &str) -> String {
    let body = serde_json::to_vec(text).unwrap();
    let (restored, _) = restore_body(index, &body);
    serde_json::from_slice(&restored.unwrap_or(body)).unwrap()
}

#[test]
fn each_stream_restores_its_slots() {
    let index = vault_index();
    let chat_text = "I wrote to Mario Rossi at mario.rossi@acme.it and called +39 347 123 4567. \
        José Núñez confirmed; Carla Verdi did not. Ugo? No: Ugo. Code: Project \"Blue\" Fox";
    let responses_text = "Mario Rossi (mario.rossi@acme.it) owns key sk-proj-AbC123realKEY456; \
        ana.lopez@acme.it left. Call +39 347 123 4567";
    let anthropic_text =
        "Sure: I will write to Mario Rossi (Project \"Blue\" Fox) and copy José Núñez. Ugo? Ask Ugo";
    /// (stream, expected text of each slot, stats)
    type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, RestoreStats);
    let cases: Vec<Case> = vec![
        (
            STREAMS[0],
            vec![("chat/0/content", chat_text)],
            RestoreStats {
                restored: 6,
                declined_retired: 1,
                ..RestoreStats::default()
            },
        ),
        (
            STREAMS[1],
            vec![
                (
                    "chat/0/tool/0",
                    r#"{"to":"mario.rossi@acme.it","name":"José Núñez","subject":"Project \"Blue\" Fox","iban":"DE89370400440532013000"}"#,
                ),
                (
                    "chat/0/tool/1",
                    r#"{"query":"Mario Rossi","phone":"+39 347 123 4567","old":"Carla Verdi"}"#,
                ),
            ],
            RestoreStats {
                restored: 6,
                declined_retired: 1,
                ..RestoreStats::default()
            },
        ),
        (
            STREAMS[2],
            vec![
                ("responses/0/0", responses_text),
                (
                    "responses/args/1",
                    r#"{"name":"Mario Rossi","note":"Project for Project \"Blue\" Fox"}"#,
                ),
            ],
            // Deltas (text 4, arguments 2), then whole texts: output_text.done,
            // content_part.done and output_item.done (4 each),
            // function_call_arguments.done and output_item.done (2 each),
            // response.completed (4 + 2). Retired: ana.lopez@… in 5 texts,
            // its company domain restored in each (rule V5,
            // docs/product-rules.md#v5).
            RestoreStats {
                restored: 33,
                declined_retired: 5,
                ..RestoreStats::default()
            },
        ),
        (
            STREAMS[3],
            vec![
                ("anthropic/1", anthropic_text),
                (
                    "anthropic/2",
                    r#"{"to": "mario.rossi@acme.it", "cc": ["José Núñez", "Carla Verdi"], "subject": "Project \"Blue\" Fox"}"#,
                ),
            ],
            RestoreStats {
                restored: 7,
                declined_retired: 1,
                ..RestoreStats::default()
            },
        ),
    ];
    for (path, expected, expected_stats) in cases {
        let (out, stats) = restore_whole_stream(&index, &fixture(path));
        let texts = slot_texts(&out);
        for (slot, want) in expected {
            let got = texts
                .get(slot)
                .unwrap_or_else(|| panic!("{path}: no slot {slot}"));
            if want.starts_with('{') {
                assert!(same_json(got, want), "{path} {slot}: {got}");
            } else {
                assert_eq!(got, want, "{path} {slot}");
            }
        }
        assert_eq!(stats, expected_stats, "{path}");
    }
}

#[test]
fn streamed_slots_equal_the_whole_restore_of_their_text() {
    let index = vault_index();
    let empty = SnapshotIndex::empty();
    for path in STREAMS {
        let stream = fixture(path);
        let original = slot_texts(&stream);
        let (out, _) = restore_whole_stream(&index, &stream);
        let restored = slot_texts(&out);
        assert_eq!(
            original.keys().collect::<Vec<_>>(),
            restored.keys().collect::<Vec<_>>()
        );
        for (slot, text) in &original {
            let whole = restore_slot_text(&index, text);
            let got = &restored[slot];
            if text.starts_with('{') {
                assert!(same_json(got, &whole), "{path} {slot}: {got} vs {whole}");
            } else {
                assert_eq!(got, &whole, "{path} {slot}");
            }
        }
        // With nothing to restore, not a byte changes.
        let (same, stats) = restore_whole_stream(&empty, &stream);
        assert_eq!(
            String::from_utf8_lossy(&same),
            String::from_utf8_lossy(&stream),
            "{path}"
        );
        assert_eq!(stats, RestoreStats::default());
    }
}

#[test]
fn every_split_position_restores_the_same() {
    let index = vault_index();
    for path in STREAMS {
        for stream in [fixture(path), with_crlf(&fixture(path))] {
            let whole = restore_whole_stream(&index, &stream);
            for cut in 0..=stream.len() {
                let split = restore_in_pieces(&index, &stream, &[cut]);
                assert!(split == whole, "{path}: split at byte {cut} differs");
            }
            // Byte by byte.
            let cuts: Vec<usize> = (1..stream.len()).collect();
            assert!(
                restore_in_pieces(&index, &stream, &cuts) == whole,
                "{path}: byte by byte"
            );
        }
    }
}

#[test]
fn passes_everything_but_text_fields_through() {
    let index = vault_index();
    let (out, _) = restore_whole_stream(&index, &fixture("streams/anthropic_messages.sse"));
    let out = String::from_utf8(out).unwrap();
    for kept in [
        "event: ping\ndata: {\"type\":\"ping\"}\n\n",
        r#"{"type":"thinking_delta","thinking":"Write to Luca Bianchi."}"#,
        r#""signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds0LuVm0fIs0HJahA""#,
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
    ] {
        assert!(out.contains(kept), "{kept}");
    }
    let (out, _) = restore_whole_stream(&index, &fixture("streams/openai_chat.sse"));
    assert!(String::from_utf8(out)
        .unwrap()
        .ends_with("data: [DONE]\n\n"));
}

#[test]
fn a_held_tail_goes_out_in_a_cloned_delta_before_the_slot_ends() {
    let index = vault_index();
    let (out, _) = restore_whole_stream(&index, &fixture("streams/openai_chat.sse"));
    let out = String::from_utf8(out).unwrap();
    let events: Vec<&str> = out.split("\n\n").filter(|e| !e.is_empty()).collect();
    // "Orchid Nine" at the very end is held until the finish_reason chunk,
    // then sent in a delta cloned from the last one, right before it.
    let flush = events
        .iter()
        .position(|e| e.contains("Project \\\"Blue\\\" Fox"))
        .unwrap();
    assert!(events[flush + 1].contains(r#""finish_reason":"stop""#));
    assert!(events[flush].contains(r#""finish_reason":null"#));
    assert!(
        events[flush].contains(r#""delta":{"content":"Project \"Blue\" Fox"}"#),
        "{}",
        events[flush]
    );
}

#[test]
fn holds_only_what_could_still_become_a_surrogate() {
    let index = vault_index();
    let event = |text: &str| {
        format!(
            "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":{}}},\"finish_reason\":null}}]}}\n\n",
            serde_json::to_string(text).unwrap()
        )
    };
    let mut restorer = SseRestorer::new();
    let mut out = Vec::new();
    restorer.push(&index, event("Hello there, ").as_bytes(), &mut out);
    assert_eq!(restorer.held_bytes(), 0);
    assert_eq!(slot_texts(&out)["chat/0/content"], "Hello there, ");
    out.clear();
    restorer.push(&index, event("Luca Bi").as_bytes(), &mut out);
    assert_eq!(restorer.held_bytes(), "Luca Bi".len());
    assert_eq!(slot_texts(&out)["chat/0/content"], "");
    out.clear();
    restorer.push(&index, event("anchi, hi").as_bytes(), &mut out);
    // "hi" is an unfinished word: it could still start a surrogate.
    assert_eq!(slot_texts(&out)["chat/0/content"], "Mario Rossi, ");
    out.clear();
    let stats = restorer.finish(&index, &mut out);
    assert_eq!(slot_texts(&out)["chat/0/content"], "hi");
    assert_eq!(stats, RestoreStats::default());
    assert_eq!(restorer.held_bytes(), 0);
}

#[test]
fn a_forget_mid_stream_declines_the_held_surrogate() {
    use latet_core::wire::{EntryId, Event, EventBody};
    let mut index = vault_index();
    let stream = fixture("streams/openai_chat.sse");
    // Cut right after the delta that leaves "Luca" + " Bi" held.
    let cut = find(&stream, b"anchi at laura") - 1;
    let mut restorer = SseRestorer::new();
    let mut out = Vec::new();
    restorer.push(&index, &stream[..cut], &mut out);
    assert!(restorer.held_bytes() > 0);
    index
        .apply_event(&Event {
            seq: 1,
            body: EventBody::Forgotten {
                ids: vec![EntryId(latet_core::keyed_hash::entry_id(
                    ID_KEY,
                    "Mario Rossi",
                ))],
                retired: vec![retired("Luca Bianchi")],
                generation: 2,
            },
        })
        .unwrap();
    let mut stats = restorer.push(&index, &stream[cut..], &mut out);
    stats += restorer.finish(&index, &mut out);
    let text = &slot_texts(&out)["chat/0/content"];
    assert!(
        text.starts_with("I wrote to Luca Bianchi at mario.rossi@acme.it"),
        "{text}"
    );
    assert!(!text.contains("Mario Rossi"));
    assert_eq!(stats.declined_retired, 2, "Luca Bianchi and Carla Verdi");
}

fn find(haystack: &[u8], needle: &[u8]) -> usize {
    haystack
        .windows(needle.len())
        .position(|w| w == needle)
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Random multi-splits (CRLF or LF) restore exactly as one piece.
    #[test]
    fn random_splits_restore_the_same(
        which in 0usize..4,
        crlf in any::<bool>(),
        mut cuts in proptest::collection::vec(any::<proptest::sample::Index>(), 0..12),
    ) {
        let index = vault_index();
        let stream = fixture(STREAMS[which]);
        let stream = if crlf { with_crlf(&stream) } else { stream };
        let whole = restore_whole_stream(&index, &stream);
        let mut positions: Vec<usize> = cuts.drain(..).map(|i| i.index(stream.len() + 1)).collect();
        positions.sort_unstable();
        prop_assert!(restore_in_pieces(&index, &stream, &positions) == whole);
    }
}

/// Filler words and surrogates of the vault, on word boundaries.
fn masked_text() -> impl Strategy<Value = String> {
    let (entries, retired) = vault();
    let mut words: Vec<String> = entries.into_iter().map(|e| e.2).collect();
    words.extend(retired);
    let piece = prop_oneof![
        "[a-z]{1,6}",
        (0..words.len()).prop_map(move |i| words[i].clone()),
    ];
    let sep = prop_oneof![Just(" "), Just(", "), Just(". "), Just("\n"), Just("\"")];
    proptest::collection::vec((piece, sep), 1..16)
        .prop_map(|pieces| pieces.into_iter().map(|(p, s)| p + s).collect())
}

/// `text` cut at the given char positions.
fn cut_text(text: &str, cuts: &[proptest::sample::Index]) -> Vec<String> {
    let bounds: Vec<usize> = (0..=text.len())
        .filter(|&i| text.is_char_boundary(i))
        .collect();
    let mut at: Vec<usize> = cuts.iter().map(|c| bounds[c.index(bounds.len())]).collect();
    at.sort_unstable();
    at.push(text.len());
    let mut from = 0;
    at.into_iter()
        .map(|to| {
            let piece = text[from..to].to_string();
            from = to;
            piece
        })
        .collect()
}

/// JSON text with non-ASCII written as `\uXXXX` (as OpenAI writes arguments).
fn ascii_json(value: &serde_json::Value) -> String {
    serde_json::to_string(value)
        .unwrap()
        .chars()
        .map(|c| {
            if c.is_ascii() {
                c.to_string()
            } else {
                format!("\\u{:04x}", c as u32)
            }
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Random texts cut into random deltas (content, and tool-call arguments
    /// cut anywhere, escapes included) restore exactly as the whole text.
    #[test]
    fn random_deltas_restore_as_the_whole_text(
        text in masked_text(),
        content_cuts in proptest::collection::vec(any::<proptest::sample::Index>(), 0..8),
        argument_cuts in proptest::collection::vec(any::<proptest::sample::Index>(), 0..8),
    ) {
        let index = vault_index();
        let arguments = ascii_json(&serde_json::json!({ "q": text, "n": 1 }));
        let chunk = |delta: serde_json::Value| {
            format!("data: {}\n\n", serde_json::json!({"object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": delta, "finish_reason": null}]}))
        };
        let mut stream = String::new();
        for piece in cut_text(&text, &content_cuts) {
            stream += &chunk(serde_json::json!({ "content": piece }));
        }
        for piece in cut_text(&arguments, &argument_cuts) {
            stream += &chunk(serde_json::json!({ "tool_calls": [{"index": 0, "function": {"arguments": piece}}] }));
        }
        stream += "data: [DONE]\n\n";
        let (out, _) = restore_whole_stream(&index, stream.as_bytes());
        let texts = slot_texts(&out);
        prop_assert_eq!(&texts["chat/0/content"], &restore_slot_text(&index, &text));
        let got: serde_json::Value = serde_json::from_str(&texts["chat/0/tool/0"]).unwrap();
        let want: serde_json::Value = serde_json::from_str(&restore_slot_text(&index, &arguments)).unwrap();
        prop_assert_eq!(got, want);
    }
}

/// Rule V5 (docs/product-rules.md#v5): in a stream cut anywhere, a retired
/// address keeps its local part and restores its company domain's
/// surrogate, as the whole body does.
#[test]
fn a_retired_address_restores_its_domain_at_every_split() {
    let index = retired_address_index();
    let stream = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"to Luca.acme.it@qzv-corp.it, Luca\"}}]}\n\ndata: [DONE]\n\n";
    for cut in 0..=stream.len() {
        let (out, got) = restore_in_pieces(&index, stream, &[cut]);
        let texts = slot_texts(&out);
        assert_eq!(
            texts["chat/0/content"], "to Luca.acme.it@acme.it, Ugo",
            "cut at {cut}"
        );
        assert_eq!((got.restored, got.declined_retired), (2, 1), "cut at {cut}");
    }
}

/// Each stream restores the same whatever provider its request's path
/// chose: events a provider does not read are read as any known one's
/// (an OpenAI-compatible server behind another path, a proxy), so a
/// surrogate split across deltas is still restored. Split at every byte.
#[test]
fn a_stream_restores_the_same_under_any_provider() {
    use latet_core::provider::REGISTRY;
    let index = vault_index();
    for path in STREAMS {
        let stream = fixture(path);
        let (whole, _) = restore_whole_stream(&index, &stream);
        for provider in REGISTRY {
            for cut in 0..=stream.len() {
                let mut restorer = SseRestorer::for_provider(*provider);
                let mut out = Vec::new();
                restorer.push(&index, &stream[..cut], &mut out);
                restorer.push(&index, &stream[cut..], &mut out);
                restorer.finish(&index, &mut out);
                assert!(
                    out == whole,
                    "{path} under {}: split at byte {cut} differs",
                    provider.name()
                );
            }
        }
    }
}
