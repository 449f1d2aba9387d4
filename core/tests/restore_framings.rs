//! Streamed restore in the framings besides SSE over recorded provider
//! streams: Gemini (SSE and the JSON array), legacy completions (SSE), and
//! Bedrock ConverseStream (AWS event-stream frames). What each slot
//! restores to, that every split of the stream restores the same, that
//! nothing changes with nothing to restore, that sealed reasoning is left
//! alone, and that a broken frame is never forwarded.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "restore_support.rs"]
mod support;

use latet_core::eventstream::{self, FrameReader};
use latet_core::provider::{
    ProviderRef, BEDROCK_CONVERSE, BEDROCK_INVOKE, GEMINI, GENERIC_JSON, OPENAI_COMPLETIONS,
};
use latet_core::restore::{AnswerFormat, RestoreStats, StreamRestorer};
use latet_core::snapshot::SnapshotIndex;
use support::*;

/// The Bedrock fixture's events as frames (the codec writes what the
/// fixture lists: event type and JSON payload).
fn bedrock_stream() -> Vec<u8> {
    let lines = String::from_utf8(fixture("streams/bedrock_converse.events.jsonl")).unwrap();
    let mut out = Vec::new();
    for line in lines.lines() {
        let event: serde_json::Value = serde_json::from_str(line).unwrap();
        let payload = serde_json::to_vec(&event["payload"]).unwrap();
        out.extend(eventstream::encode_event(
            event["event"].as_str().unwrap(),
            &payload,
        ));
    }
    out
}

/// Claude on Bedrock (`InvokeModelWithResponseStream`): the Anthropic
/// Messages fixture's events, each carried in base64 in a `chunk` frame.
fn bedrock_invoke_stream() -> Vec<u8> {
    use base64::Engine as _;
    let mut out = Vec::new();
    for event in json_events(&fixture("streams/anthropic_messages.sse")) {
        let b64 =
            base64::engine::general_purpose::STANDARD.encode(serde_json::to_vec(&event).unwrap());
        let payload = format!(r#"{{"bytes":"{b64}"}}"#);
        out.extend(eventstream::encode_event("chunk", payload.as_bytes()));
    }
    out
}

struct Case {
    name: &'static str,
    format: AnswerFormat,
    provider: ProviderRef,
    stream: Vec<u8>,
    slots: Vec<(&'static str, &'static str)>,
    stats: RestoreStats,
}

const TEXT: &str = "I wrote to Mario Rossi at mario.rossi@acme.it and called +39 347 123 4567. \
    José Núñez confirmed; Carla Verdi did not. Code: Project \"Blue\" Fox";

fn cases() -> Vec<Case> {
    let gemini_stats = RestoreStats {
        // Text 5, the thought 1, the function call's strings 2; the
        // retired "Carla Verdi" declined.
        restored: 8,
        declined_retired: 1,
        ..RestoreStats::default()
    };
    vec![
        Case {
            name: "gemini sse",
            format: AnswerFormat::Sse,
            provider: GEMINI,
            stream: fixture("streams/gemini.sse"),
            slots: vec![
                ("gemini/0", TEXT),
                ("gemini/0/thought", "Write to Mario Rossi first."),
            ],
            stats: gemini_stats,
        },
        Case {
            name: "gemini json array",
            format: AnswerFormat::JsonArray,
            provider: GEMINI,
            stream: fixture("streams/gemini_array.json"),
            slots: vec![
                ("gemini/0", TEXT),
                ("gemini/0/thought", "Write to Mario Rossi first."),
            ],
            stats: gemini_stats,
        },
        Case {
            name: "openai completions",
            format: AnswerFormat::Sse,
            provider: OPENAI_COMPLETIONS,
            stream: fixture("streams/openai_completions.sse"),
            slots: vec![(
                "completion/0",
                "I wrote to Mario Rossi at mario.rossi@acme.it. Code: Project \"Blue\" Fox",
            )],
            stats: RestoreStats {
                restored: 3,
                ..RestoreStats::default()
            },
        },
        Case {
            name: "bedrock converse-stream",
            format: AnswerFormat::EventStream,
            provider: BEDROCK_CONVERSE,
            stream: bedrock_stream(),
            slots: vec![
                ("bedrock/1", TEXT),
                (
                    "bedrock/2",
                    r#"{"to": "mario.rossi@acme.it", "name": "José Núñez", "iban": "DE89370400440532013000"}"#,
                ),
            ],
            // Text 5, tool input 3; the signed reasoning is not restored.
            stats: RestoreStats {
                restored: 8,
                declined_retired: 1,
                ..RestoreStats::default()
            },
        },
        Case {
            name: "bedrock invoke-with-response-stream (Claude)",
            format: AnswerFormat::EventStream,
            provider: BEDROCK_INVOKE,
            stream: bedrock_invoke_stream(),
            slots: vec![
                (
                    "anthropic/1",
                    "Sure: I will write to Mario Rossi (Project \"Blue\" Fox) and copy José Núñez. Ugo? Ask Ugo",
                ),
                (
                    "anthropic/2",
                    r#"{"to": "mario.rossi@acme.it", "cc": ["José Núñez", "Carla Verdi"], "subject": "Project \"Blue\" Fox"}"#,
                ),
            ],
            // As the SSE form of the same events (restore_stream.rs).
            stats: RestoreStats {
                restored: 7,
                declined_retired: 1,
                ..RestoreStats::default()
            },
        },
    ]
}

fn restore(case: &Case, index: &SnapshotIndex, cuts: &[usize]) -> (Vec<u8>, RestoreStats) {
    restore_in_pieces_as(case.format, case.provider, index, &case.stream, cuts)
}

#[test]
fn each_stream_restores_its_slots() {
    let index = vault_index();
    for case in cases() {
        let (out, stats) = restore(&case, &index, &[]);
        let texts = slot_texts(&out);
        for (slot, want) in &case.slots {
            let got = texts
                .get(*slot)
                .unwrap_or_else(|| panic!("{}: no slot {slot} in {texts:?}", case.name));
            if want.starts_with('{') {
                assert!(same_json(got, want), "{} {slot}: {got}", case.name);
            } else {
                assert_eq!(got, want, "{} {slot}", case.name);
            }
        }
        assert_eq!(stats, case.stats, "{}", case.name);
        // The generic reader (an answer need not match its path) restores
        // the same.
        let generic = restore_in_pieces_as(case.format, GENERIC_JSON, &index, &case.stream, &[]);
        assert_eq!(slot_texts(&generic.0), texts, "{} (generic)", case.name);
    }
}

#[test]
fn every_split_position_restores_the_same() {
    let index = vault_index();
    for case in cases() {
        let whole = restore(&case, &index, &[]);
        for cut in 0..=case.stream.len() {
            assert!(
                restore(&case, &index, &[cut]) == whole,
                "{}: split at byte {cut} differs",
                case.name
            );
        }
        let cuts: Vec<usize> = (1..case.stream.len()).collect();
        assert!(
            restore(&case, &index, &cuts) == whole,
            "{}: byte by byte",
            case.name
        );
    }
}

#[test]
fn with_nothing_to_restore_not_a_byte_changes() {
    let empty = SnapshotIndex::empty();
    for case in cases() {
        let (out, stats) = restore(&case, &empty, &[]);
        assert!(out == case.stream, "{}", case.name);
        assert_eq!(stats, RestoreStats::default(), "{}", case.name);
    }
}

#[test]
fn the_restored_stream_keeps_its_framing() {
    let index = vault_index();
    for case in cases() {
        let (out, _) = restore(&case, &index, &[]);
        // json_events parses every frame (CRCs checked), the whole array,
        // or every SSE data line.
        let before = json_events(&case.stream).len();
        let after = json_events(&out).len();
        // A held tail may go out in one cloned event more.
        assert!(after == before || after == before + 1, "{}", case.name);
    }
    // The array is still one JSON array, whatever the split.
    let case = &cases()[1];
    let (out, _) = restore(case, &index, &[7, 300, 301, 2000]);
    let array: Vec<serde_json::Value> = serde_json::from_slice(&out).unwrap();
    assert!(array.len() >= 10);
}

#[test]
fn sealed_reasoning_and_signatures_are_left_alone() {
    let index = vault_index();
    let cases = cases();
    let (out, _) = restore(&cases[3], &index, &[]);
    let events = json_events(&out);
    // Bedrock's signed reasoning, streamed: neither text nor signature.
    assert_eq!(
        events[1]["delta"]["reasoningContent"]["text"],
        "Write to Luca Bianchi first."
    );
    assert!(events[2]["delta"]["reasoningContent"]["signature"]
        .as_str()
        .unwrap()
        .starts_with("EqQBCgIY"));
    // Gemini's thought signature: as it came.
    let (out, _) = restore(&cases[0], &index, &[]);
    assert!(String::from_utf8(out)
        .unwrap()
        .contains(r#""thoughtSignature":"CiQB0e2Kb7pU6C5fxNQ3vpXn0OQe9n9AhPZ7bTkhGZ3eOZxR2ZAKXwHR7Yo2Lx1Cc0JpZm1sWm9n""#));
}

#[test]
fn a_held_tail_goes_out_in_a_cloned_frame_before_the_block_stops() {
    let index = vault_index();
    let case = &cases()[3];
    let (out, _) = restore(case, &index, &[]);
    let mut reader = FrameReader::default();
    reader.push(&out);
    let mut kinds = Vec::new();
    while let Some(frame) = reader.next_frame().unwrap() {
        let frame = frame.decode().unwrap();
        let payload: serde_json::Value = serde_json::from_slice(&frame.payload).unwrap();
        kinds.push((frame.event_type().unwrap().to_string(), payload));
    }
    let stop = kinds
        .iter()
        .position(|(kind, p)| kind == "contentBlockStop" && p["contentBlockIndex"] == 1)
        .unwrap();
    let (kind, payload) = &kinds[stop - 1];
    assert_eq!(kind, "contentBlockDelta");
    assert_eq!(payload["delta"]["text"], "Project \"Blue\" Fox");
}

#[test]
fn a_broken_frame_is_never_forwarded() {
    let index = vault_index();
    let good = eventstream::encode_event(
        "contentBlockDelta",
        br#"{"contentBlockIndex":0,"delta":{"text":"Hi Luca Bianchi"}}"#,
    );
    let mut bad = eventstream::encode_event(
        "contentBlockDelta",
        br#"{"contentBlockIndex":0,"delta":{"text":"laura.bianchi@qzv-corp.it"}}"#,
    );
    let at = bad.len() - 10;
    bad[at] ^= 0x20;
    let after = eventstream::encode_event("messageStop", br#"{"stopReason":"end_turn"}"#);
    let truncated = &good[..good.len() - 3];
    for (name, stream) in [
        ("bad CRC", [good.clone(), bad, after.clone()].concat()),
        ("cut short", [good.clone(), truncated.to_vec()].concat()),
    ] {
        let mut restorer =
            StreamRestorer::new(AnswerFormat::EventStream, BEDROCK_CONVERSE).unwrap();
        let mut out = Vec::new();
        restorer.push(&index, &stream, &mut out);
        restorer.push(&index, &after, &mut out);
        restorer.finish(&index, &mut out);
        let err = restorer.error().unwrap().to_string();
        assert!(
            err.contains(&format!("byte {}", good.len())),
            "{name}: {err}"
        );
        let mut reader = FrameReader::default();
        reader.push(&out);
        let mut frames = Vec::new();
        while let Some(frame) = reader.next_frame().unwrap() {
            frames.push(frame.decode().unwrap());
        }
        assert_eq!(reader.held_bytes(), 0, "{name}: only whole frames go out");
        let text = String::from_utf8_lossy(&out);
        assert!(text.contains("Mario Rossi"), "{name}: the good frame");
        assert!(!text.contains("qzv-corp"), "{name}: the broken frame");
        assert!(!text.contains("stopReason"), "{name}: nothing after it");
        let last = frames.last().unwrap();
        assert_eq!(last.message_type(), Some("exception"), "{name}");
        assert_eq!(
            last.header_str(":exception-type"),
            Some("internalServerException")
        );
        let message: serde_json::Value = serde_json::from_slice(&last.payload).unwrap();
        assert!(
            message["message"].as_str().unwrap().contains("broken off"),
            "{name}"
        );
    }
}

#[test]
fn the_answer_format_comes_from_content_type_and_path() {
    for (content_type, path, format) in [
        (
            "text/event-stream",
            "/v1/chat/completions",
            AnswerFormat::Sse,
        ),
        ("text/event-stream; charset=utf-8", "/x", AnswerFormat::Sse),
        (
            "application/vnd.amazon.eventstream",
            "/model/m/converse-stream",
            AnswerFormat::EventStream,
        ),
        (
            "application/json; charset=UTF-8",
            "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
            AnswerFormat::JsonArray,
        ),
        (
            "application/json",
            "/v1beta/models/gemini-2.5-flash:generateContent",
            AnswerFormat::Whole,
        ),
        ("application/json", "/v1/messages", AnswerFormat::Whole),
        ("", "/v1/messages", AnswerFormat::Whole),
        ("text/plain", "/v1/messages", AnswerFormat::Whole),
        ("image/png", "/v1/images", AnswerFormat::Other),
    ] {
        assert_eq!(
            AnswerFormat::of(content_type, path),
            format,
            "{content_type} {path}"
        );
    }
}
