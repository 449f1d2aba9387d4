//! Scenario 5: a streamed (SSE) answer restored by the filter in its VM,
//! with the stream cut at every byte position, equals the restore of the
//! whole stream — for the recorded OpenAI and Anthropic streams of
//! latet-core's fixtures (`core/tests/fixtures/streams/`). The vault is the
//! fixtures' own (`answers/vault.json`), served as a scripted snapshot: its
//! surrogates are the ones the streams carry.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use host_tests::gateway::{chat_body, config, contains, CallKind, Gateway, Route};
use host_tests::{Host, Vm};
use latet_core::keyed_hash::{entry_id, retired_hash};
use latet_core::restore::{RestoreView, SseRestorer, UrlRule};
use latet_core::snapshot::SnapshotIndex;
use latet_core::text::lead_bucket;
use latet_core::wire::{Entry, EntryId, RetiredHash, RetiredSurrogate, Snapshot};
use latet_core::Kind;
use std::net::SocketAddr;

const STREAMS: [&str; 4] = [
    "streams/openai_chat.sse",
    "streams/openai_chat_tool_calls.sse",
    "streams/openai_responses.sse",
    "streams/anthropic_messages.sse",
];
const SALT: [u8; 2] = [0x5a, 0x17];

fn fixture(path: &str) -> Vec<u8> {
    let full = format!(
        "{}/../core/tests/fixtures/{path}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&full).unwrap_or_else(|e| panic!("{full}: {e}"))
}

/// The fixtures' vault as a wire snapshot, and its values and surrogates.
fn vault_snapshot() -> (Snapshot, Vec<(String, String)>) {
    let json: serde_json::Value = serde_json::from_slice(&fixture("answers/vault.json")).unwrap();
    let mut pairs = Vec::new();
    let entries = json["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let value = e["value"].as_str().unwrap().to_string();
            let surrogate = e["surrogate"].as_str().unwrap().to_string();
            pairs.push((value.clone(), surrogate.clone()));
            Entry {
                id: EntryId(entry_id(b"scenario-5", &value)),
                value,
                surrogate,
                kind: Kind::parse(e["kind"].as_str().unwrap()).unwrap(),
                generation: 1,
            }
        })
        .collect();
    let retired = json["retired"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let surrogate = r.as_str().unwrap();
            RetiredSurrogate {
                hash: RetiredHash(retired_hash(&SALT, surrogate)),
                lead: lead_bucket(surrogate),
            }
        })
        .collect();
    let snapshot = Snapshot {
        version: 1,
        generation: 1,
        seq: 0,
        retired_salt: "5a17".into(),
        retired,
        entries,
    };
    (snapshot, pairs)
}

/// One exchange on `vm` whose answer is `pieces` (the last with end of
/// stream); returns what went downstream.
/// `sent`: the request's user text (its values are the answer's restore
/// scope).
fn streamed(host: &Host, vm: &Vm, sent: &str, pieces: &[&[u8]]) -> Vec<u8> {
    let s = vm.new_http_stream().unwrap();
    s.request_headers(
        &[(":method", "POST"), (":path", "/v1/chat/completions")],
        false,
    )
    .unwrap();
    s.request_body(&chat_body(&[("user", sent)]), true).unwrap();
    assert!(s.request_complete(), "{}", host.dump());
    s.response_headers(
        &[(":status", "200"), ("content-type", "text/event-stream")],
        false,
    )
    .unwrap();
    for (i, piece) in pieces.iter().enumerate() {
        s.response_body(piece, i + 1 == pieces.len()).unwrap();
    }
    assert!(s.response_complete(), "{}", host.dump());
    let out = s.downstream_body();
    s.finish().unwrap();
    out
}

#[test]
fn every_cut_of_recorded_streams_restores_like_the_whole() {
    let (snapshot, pairs) = vault_snapshot();
    let snapshot_json = serde_json::to_vec(&snapshot).unwrap();
    let nowhere = SocketAddr::from(([127, 0, 0, 1], 9));
    let gw = Gateway::start(&config("tok-scenario-5", ""), 1, nowhere).unwrap();
    gw.route(CallKind::Snapshot, Route::Scripted(snapshot_json));
    let host = &gw.host;
    host.advance(1000).unwrap();
    assert_eq!(gw.published_seq(), Some(0), "{}", host.dump());
    let vm = gw.worker(1);
    let native_index = SnapshotIndex::from_snapshot(snapshot).unwrap();
    // The agent sent every value of the vault: all are in scope, so the
    // filter restores as latet-core does with the whole vault (and no
    // value into a URL, the default).
    let sent = pairs
        .iter()
        .map(|(value, _)| value.as_str())
        .collect::<Vec<_>>()
        .join(" / ");
    let native_view = RestoreView::new(&native_index, None, &UrlRule::Never);

    for name in STREAMS {
        let stream = fixture(name);
        // The whole stream in one chunk, then Envoy's empty last call.
        let whole = streamed(host, vm, &sent, &[&stream, b""]);
        assert_ne!(whole, stream, "{name}: something is restored");
        assert!(
            pairs
                .iter()
                .any(|(value, _)| contains(&whole, value.as_bytes())),
            "{name}: a value is back"
        );
        // The filter's whole restore is latet-core's.
        let mut native = Vec::new();
        let mut restorer = SseRestorer::new();
        restorer.push(native_view, &stream, &mut native);
        restorer.finish(native_view, &mut native);
        assert_eq!(
            String::from_utf8_lossy(&whole),
            String::from_utf8_lossy(&native),
            "{name}"
        );
        for cut in 1..stream.len() {
            host.clear_records();
            let (head, tail) = stream.split_at(cut);
            let out = streamed(host, vm, &sent, &[head, tail, b""]);
            if out != whole {
                panic!(
                    "{name} cut at byte {cut}: differs from the whole restore\n\
                     whole: {}\ncut:   {}\n{}",
                    String::from_utf8_lossy(&whole),
                    String::from_utf8_lossy(&out),
                    host.dump()
                );
            }
        }
    }
    assert_eq!(vm.crashed(), None, "{}", host.dump());
}
