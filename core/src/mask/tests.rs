//! The fast paths of masking give the same bytes as the plain ones: strings
//! sent with and without escapes, memo hits (plain splice) against fresh
//! masking (re-encoding), surrogates that need escaping, texts of every
//! length around the 8-byte scan words, and the memo's recency queue.

use super::{MaskOptions, MaskOutcome, Masker};
use crate::detect::{DetectorConfig, Detectors};
use crate::json::{decode, encode, Document};
use crate::kind::Kind;
use crate::provider::{self};
use crate::snapshot::SnapshotIndex;
use crate::wire::{Entry, EntryId, Snapshot};

fn index(entries: &[(&str, &str, &str)]) -> SnapshotIndex {
    SnapshotIndex::from_snapshot(Snapshot {
        version: 1,
        generation: 1,
        seq: 1,
        retired_salt: "00112233445566778899aabbccddeeff".into(),
        retired: vec![],
        entries: entries
            .iter()
            .enumerate()
            .map(|(i, (value, surrogate, kind))| {
                let mut id = [0u8; 16];
                id[..4].copy_from_slice(&(i as u32 + 1).to_be_bytes());
                Entry {
                    id: EntryId(id),
                    value: (*value).into(),
                    surrogate: (*surrogate).into(),
                    kind: Kind::parse(kind).unwrap(),
                    generation: 1,
                }
            })
            .collect(),
    })
    .unwrap()
}

const VAULT: &[(&str, &str, &str)] = &[
    ("Mario Rossi", "Laura Bianchi", "name"),
    ("José García", "Iñigo Pérez", "name"),
    (
        "mario.rossi@acme.it",
        "laura.bianchi@brightvale.it",
        "email",
    ),
    // A surrogate a JSON string must escape (a vault may hold anything).
    ("Anna Verdi", "Quote \"Q\" Back\\slash", "name"),
];

fn masker(memo_bytes: usize) -> Masker {
    Masker::new(
        Detectors::new(&DetectorConfig::default()).unwrap(),
        memo_bytes,
    )
}

fn masked(masker: &mut Masker, index: &SnapshotIndex, body: &str) -> Vec<u8> {
    match masker
        .mask_request(
            index,
            provider::OPENAI_CHAT,
            body.as_bytes(),
            MaskOptions::default(),
        )
        .unwrap()
    {
        MaskOutcome::Masked {
            body: Some(out), ..
        } => out,
        MaskOutcome::Masked { body: None, .. } => body.as_bytes().to_vec(),
        MaskOutcome::NeedEntries { .. } => panic!("unexpected new values"),
    }
}

/// The decoded `content` of every message of a chat body.
fn contents(body: &[u8]) -> Vec<String> {
    let doc = Document::parse(body).unwrap();
    let messages = doc.get(doc.root(), "messages").unwrap();
    doc.children(messages)
        .map(|m| {
            let content = doc.get(m, "content").unwrap();
            doc.str_value(content).unwrap().unwrap().into_owned()
        })
        .collect()
}

/// `text` as a JSON string body with every ASCII letter `a` written as the
/// escape `\u0061`: the same string, sent escaped.
fn escaped_form(text: &str) -> String {
    encode(text).replace('a', "\\u0061")
}

fn chat(bodies: &[String]) -> String {
    let messages: Vec<String> = bodies
        .iter()
        .map(|b| format!(r#"{{"role":"user","content":"{b}"}}"#))
        .collect();
    format!(r#"{{"model":"m","messages":[{}]}}"#, messages.join(","))
}

/// Texts around values, of every length mod 8 before and after them, with
/// non-ASCII and characters that need escaping.
fn texts() -> Vec<String> {
    let mut out = Vec::new();
    let values = [
        "Mario Rossi",
        "José García",
        "mario.rossi@acme.it",
        "Anna Verdi",
    ];
    for (v, value) in values.iter().enumerate() {
        for pad in 0..17 {
            let before = "é x".repeat(pad / 3) + &"b".repeat(pad % 3);
            let after = match (pad + v) % 4 {
                0 => String::new(),
                1 => " line\nnext \"quoted\" tab\t".into(),
                2 => " ü😀 ".repeat(pad % 5),
                _ => " back\\slash /".into(),
            };
            out.push(format!("{before} {value} {after}x{}", "y".repeat(pad)));
        }
    }
    out.push(String::new());
    out.push("no value here, long enough to reach the memo threshold".into());
    out.push("short".into());
    out
}

#[test]
fn escaped_and_plain_strings_mask_alike_cold_and_warm() {
    let index = index(VAULT);
    let texts = texts();
    let plain_body = chat(&texts.iter().map(|t| encode(t)).collect::<Vec<_>>());
    let escaped_body = chat(&texts.iter().map(|t| escaped_form(t)).collect::<Vec<_>>());
    assert_eq!(contents(plain_body.as_bytes()), texts);
    assert_eq!(contents(escaped_body.as_bytes()), texts);

    let mut cold = masker(0);
    let expected_plain = masked(&mut cold, &index, &plain_body);
    let expected_texts = contents(&expected_plain);
    // Every value became its surrogate, every other byte stayed.
    for (text, out) in texts.iter().zip(&expected_texts) {
        let mut want = text.clone();
        for (value, surrogate, _) in VAULT {
            want = want.replace(value, surrogate);
        }
        assert_eq!(out, &want);
    }
    // The plain body's output is the minimal re-encoding of those texts.
    assert_eq!(
        expected_plain,
        chat(&expected_texts.iter().map(|t| encode(t)).collect::<Vec<_>>()).into_bytes()
    );

    let mut warm = masker(1 << 20);
    for round in 0..3 {
        // Memo cold (round 0) then warm: byte-identical to no memo.
        assert_eq!(
            masked(&mut warm, &index, &plain_body),
            expected_plain,
            "round {round}"
        );
        let out = masked(&mut warm, &index, &escaped_body);
        assert_eq!(contents(&out), expected_texts, "round {round}");
        assert_eq!(
            out,
            masked(&mut cold, &index, &escaped_body),
            "round {round}"
        );
    }
    // The escaped body first, then the plain one, through a fresh memo.
    let mut warm = masker(1 << 20);
    masked(&mut warm, &index, &escaped_body);
    assert_eq!(masked(&mut warm, &index, &plain_body), expected_plain);
    assert!(warm.memo_len() > 0);
}

#[test]
fn tool_arguments_mask_alike_cold_and_warm() {
    let index = index(VAULT);
    let arguments = [
        r#"{"to":"mario.rossi@acme.it","note":"for Anna Verdi and José García, all of them"}"#,
        r#"{"to":"Mario Rossi","list":["Anna Verdi","x\ny","ü😀 Mario Rossi"]}"#,
        "not json but Mario Rossi is here, long enough for the memo",
    ];
    let body = format!(
        r#"{{"model":"m","messages":[{}]}}"#,
        arguments
            .iter()
            .map(|a| format!(
                r#"{{"role":"assistant","tool_calls":[{{"id":"c","type":"function","function":{{"name":"f","arguments":"{}"}}}}]}}"#,
                encode(a)
            ))
            .collect::<Vec<_>>()
            .join(",")
    );
    let expected = masked(&mut masker(0), &index, &body);
    let text = String::from_utf8(expected.clone()).unwrap();
    for (value, _, _) in VAULT {
        assert!(!text.contains(value));
    }
    let mut warm = masker(1 << 20);
    for round in 0..3 {
        assert_eq!(masked(&mut warm, &index, &body), expected, "round {round}");
    }
}

#[test]
fn every_length_around_scan_words_round_trips() {
    // Strings of 0..40 bytes holding a special byte at each offset: the
    // masked body decodes to the same strings (no value: nothing changes).
    let index = index(VAULT);
    let mut cold = masker(0);
    for len in 0..40 {
        for at in 0..len {
            for special in ['"', '\\', '\n', '\u{1}', 'é'] {
                let mut text: String = "k".repeat(len);
                text.replace_range(at..at + 1, &special.to_string());
                let body = chat(&[encode(&text)]);
                let out = masked(&mut cold, &index, &body);
                assert_eq!(out, body.as_bytes());
                assert_eq!(decode(encode(&text).as_bytes()).unwrap(), text);
            }
        }
    }
}

/// Whether masking `body` was served from the memo.
fn memo_hit(masker: &mut Masker, index: &SnapshotIndex, body: &str) -> bool {
    match masker
        .mask_request(
            index,
            provider::OPENAI_CHAT,
            body.as_bytes(),
            MaskOptions::default(),
        )
        .unwrap()
    {
        MaskOutcome::Masked { stats, .. } => stats.memo_hits > 0,
        MaskOutcome::NeedEntries { .. } => panic!("unexpected new values"),
    }
}

#[test]
fn memo_recency_survives_many_hits_and_evicts_the_oldest() {
    let index = index(VAULT);
    // Room for a handful of texts only.
    let mut warm = masker(2_000);
    let text = |i: usize| format!("message {i:04} for Mario Rossi, long enough to memoise");
    let body = |i: usize| chat(&[encode(&text(i))]);
    let mut cold = masker(0);
    for i in 0..30 {
        masked(&mut warm, &index, &body(i));
    }
    let held = warm.memo_len();
    assert!((2..30).contains(&held), "memo holds {held}");
    // The newest `held` texts are there, the older ones went.
    assert!(memo_hit(&mut warm, &index, &body(29)));
    assert!(memo_hit(&mut warm, &index, &body(30 - held)));
    // Many hits on one text pile up recency pairs: the memo stays bounded
    // and keeps serving the right text.
    for _ in 0..1_000 {
        assert_eq!(
            masked(&mut warm, &index, &body(30 - held)),
            masked(&mut cold, &index, &body(30 - held))
        );
    }
    assert!(warm.memo_bytes() <= 2_000);
    assert_eq!(warm.memo_len(), held);
    // New texts evict the least recently used first: the text just used
    // survives `held - 1` inserts, the others went before it.
    for i in 0..held - 1 {
        masked(&mut warm, &index, &body(100 + i));
        assert_eq!(warm.memo_len(), held);
    }
    assert!(memo_hit(&mut warm, &index, &body(30 - held)));
    assert!(!memo_hit(&mut warm, &index, &body(29)));
    for i in 0..200 {
        let out = masked(&mut warm, &index, &body(i % 7));
        assert_eq!(out, masked(&mut cold, &index, &body(i % 7)));
        assert!(warm.memo_bytes() <= 2_000);
        assert!(warm.memo_len() <= held);
    }
}

// Our surrogates are looked for over the whole text: a walk started
// inside a surrogate the whole walk took sees other ones (found by review
// of a windowed walk, taken out again).

fn masker_without_names() -> Masker {
    let config = DetectorConfig {
        person: false,
        ..DetectorConfig::default()
    };
    Masker::new(Detectors::new(&config).unwrap(), 0)
}

fn mask_one(index: &SnapshotIndex, text: &str) -> String {
    let body = chat(&[encode(text)]);
    let out = masked(&mut masker_without_names(), index, &body);
    contents(&out).remove(0)
}

/// `Julie Martin` (a resent surrogate) then `Dubois`, a vault value: the
/// whole walk takes `Julie Martin` and never sees `Martin Dubois` (it starts
/// inside it), so `Dubois` is masked. The window walk starts at `Martin`
/// (the longest surrogate is 13 bytes) and finds `Martin Dubois`, which
/// holds `Dubois`: the value was dropped and sent as written.
#[test]
fn a_value_after_a_resent_surrogate_is_masked_whatever_the_longest_surrogate() {
    let short = index(&[
        ("Mario Rossi", "Julie Martin", "name"),
        ("Paolo Neri", "Martin Dubois", "name"),
        ("Dubois", "Lefort", "name"),
    ]);
    let long = index(&[
        ("Mario Rossi", "Julie Martin", "name"),
        ("Paolo Neri", "Martin Dubois", "name"),
        ("Dubois", "Lefort", "name"),
        ("a@b.it", "someone.long@example.org", "email"),
    ]);
    let text = "Julie Martin Dubois";
    assert_eq!(mask_one(&long, text), "Julie Martin Lefort");
    assert_eq!(
        mask_one(&short, text),
        "Julie Martin Lefort",
        "value leaked"
    );
}

/// The other way: the window walk takes `Martin Dubois` and so misses the
/// resent surrogate `Dubois Laurent` the whole walk finds; the vault value
/// `Laurent` inside it is then masked and the surrogate broken.
#[test]
fn a_resent_surrogate_after_another_is_kept_whole() {
    let short = index(&[
        ("Mario Rossi", "Julie Martin", "name"),
        ("Paolo Neri", "Martin Dubois", "name"),
        ("Carla Bruni", "Dubois Laurent", "name"),
        ("Laurent", "Girard", "name"),
        ("a@b.it", "abc.def@ghi.com", "email"),
    ]);
    let text = "Julie Martin Dubois Laurent";
    // Control: with a surrogate long enough for the window to be the whole
    // text, the whole walk's answer.
    let whole = index(&[
        ("Mario Rossi", "Julie Martin", "name"),
        ("Paolo Neri", "Martin Dubois", "name"),
        ("Carla Bruni", "Dubois Laurent", "name"),
        ("Laurent", "Girard", "name"),
        ("a@b.it", "someone.much.longer@example.org", "email"),
    ]);
    assert_eq!(mask_one(&whole, text), text, "control");
    assert_eq!(mask_one(&short, text), text, "resent surrogate broken");
}

// A memo hit re-reads the entries it used only when the index removed
// something since they were last found active (a slot changes hands only
// through a removal): the index's removal epoch. These hold with the
// masker never told of the forget (its own `forget` drops the entries
// first): the memo's re-validation alone must refuse the stale text.

/// A forget of the `n`-th entries of `VAULT` (1-based), with the retired
/// surrogate the event lists for each (the index confirms a forget by it).
fn forget_event(seq: u64, ns: &[u32]) -> crate::wire::Event {
    let salt: Vec<u8> = (0..16).map(|i| (i * 0x11) as u8).collect();
    crate::wire::Event {
        seq,
        body: crate::wire::EventBody::Forgotten {
            ids: ns.iter().map(|n| vault_id(*n)).collect(),
            retired: ns
                .iter()
                .map(|n| {
                    let surrogate = VAULT[*n as usize - 1].1;
                    crate::wire::RetiredSurrogate {
                        hash: crate::wire::RetiredHash(crate::keyed_hash::retired_hash(
                            &salt, surrogate,
                        )),
                        lead: crate::text::lead_bucket(surrogate),
                    }
                })
                .collect(),
            generation: 1,
        },
    }
}

/// The id `index` gives the `n`-th entry of the vault (1-based).
fn vault_id(n: u32) -> EntryId {
    let mut id = [0u8; 16];
    id[..4].copy_from_slice(&n.to_be_bytes());
    EntryId(id)
}

#[test]
fn a_memo_hit_is_refused_once_an_entry_it_used_is_removed() {
    let mut index = index(VAULT);
    let mut warm = masker(1 << 20);
    let body = chat(&[encode("Please write to Mario Rossi about the order today.")]);
    masked(&mut warm, &index, &body);
    assert!(memo_hit(&mut warm, &index, &body));
    // Mario Rossi's entry goes from the index only.
    let epoch = index.removal_epoch();
    index.apply_event(&forget_event(2, &[1])).unwrap();
    assert_ne!(index.removal_epoch(), epoch);
    let outcome = warm
        .mask_request(
            &index,
            provider::OPENAI_CHAT,
            body.as_bytes(),
            MaskOptions::default(),
        )
        .unwrap();
    assert!(
        matches!(outcome, MaskOutcome::NeedEntries { .. }),
        "the forgotten value asks for a new entry, never the memoised surrogate"
    );
}

#[test]
fn a_slot_reused_by_a_new_entry_is_not_taken_for_the_old_one() {
    let mut index = index(VAULT);
    let mut warm = masker(1 << 20);
    let body = chat(&[encode("Please write to Mario Rossi about the order today.")]);
    let before = masked(&mut warm, &index, &body);
    assert!(contents(&before)[0].contains("Laura Bianchi"));
    index.apply_event(&forget_event(2, &[1])).unwrap();
    assert!(index.by_value("Mario Rossi").is_none());
    // The same value comes back under a new id and surrogate (into the
    // freed slot, or another: either way the memo must not serve the old).
    let mut id = [9u8; 16];
    id[0] = 0xee;
    index
        .add_entries(
            1,
            vec![Entry {
                id: EntryId(id),
                value: "Mario Rossi".into(),
                surrogate: "Paolo Neri".into(),
                kind: Kind::Name,
                generation: 1,
            }],
        )
        .unwrap();
    let after = masked(&mut warm, &index, &body);
    let text = &contents(&after)[0];
    assert!(text.contains("Paolo Neri") && !text.contains("Laura Bianchi"));
}

#[test]
fn a_memo_hit_survives_the_removal_of_an_entry_it_did_not_use() {
    let mut index = index(VAULT);
    let mut warm = masker(1 << 20);
    let mut cold = masker(0);
    let body = chat(&[encode("Please write to Mario Rossi about the order today.")]);
    masked(&mut warm, &index, &body);
    // José García's entry goes: the text's entries are read again, found
    // active, and the hit is served (then without reading them again).
    index.apply_event(&forget_event(2, &[2])).unwrap();
    assert!(index.by_value("José García").is_none());
    for _ in 0..3 {
        assert!(memo_hit(&mut warm, &index, &body));
        assert_eq!(
            masked(&mut warm, &index, &body),
            masked(&mut cold, &index, &body)
        );
    }
}
