//! The resumable masking step, redact mode, surrogates left alone, the memo
//! (hit, miss, forget, re-validation against added values, LRU bound), and
//! deep nesting.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "mask_support.rs"]
mod support;

use latet_core::detect::{DetectorConfig, Detectors};
use latet_core::json::Limits;
use latet_core::keyed_hash::retired_hash;
use latet_core::kind::Kind;
use latet_core::mask::{mask_text, MaskOptions, MaskOutcome, Masker, TextOutcome};
use latet_core::provider::{self};
use latet_core::snapshot::SnapshotIndex;
use latet_core::text::lead_bucket;
use latet_core::wire::{Event, EventBody, NewValue, RetiredHash, RetiredSurrogate};
use latet_core::CoreError;
use support::*;

const NEW_MAIL: &str = "new.person@example.org";

fn chat(contents: &[&str]) -> Vec<u8> {
    let messages: Vec<serde_json::Value> = contents
        .iter()
        .map(|c| serde_json::json!({"role": "user", "content": c}))
        .collect();
    serde_json::to_vec(&serde_json::json!({"model": "gpt-4o", "messages": messages})).unwrap()
}

fn forget(index: &mut SnapshotIndex, value: &str) -> Vec<latet_core::wire::EntryId> {
    let id = id_of(index, value);
    let surrogate = index.by_value(value).unwrap().surrogate.to_string();
    let applied = index
        .apply_event(&Event {
            seq: index.seq() + 1,
            body: EventBody::Forgotten {
                ids: vec![id],
                retired: vec![RetiredSurrogate {
                    hash: RetiredHash(retired_hash(&salt(), &surrogate)),
                    lead: lead_bucket(&surrogate),
                }],
                generation: index.generation() + 1,
            },
        })
        .unwrap();
    assert_eq!(applied.forgotten, vec![id]);
    applied.forgotten
}

#[test]
fn new_values_ask_for_entries_then_masking_resumes() {
    let mut index = demo_index();
    let mut masker = masker(1 << 20);
    let body = serde_json::to_vec(&serde_json::json!({
        "model": "gpt-4o",
        "messages": [
            {"role": "user", "content": format!("Mario Rossi wants {NEW_MAIL} and {NEW_MAIL} in copy")},
            {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "send", "arguments": format!("{{\"to\":\"{NEW_MAIL}\",\"cc\":\"other@example.net\"}}")}}]}
        ]
    }))
    .unwrap();
    let outcome = masker
        .mask_request(&index, provider::OPENAI_CHAT, &body, MaskOptions::default())
        .unwrap();
    let MaskOutcome::NeedEntries { values } = outcome else {
        panic!("expected new values, got {outcome:?}");
    };
    assert_eq!(
        values,
        vec![
            NewValue {
                kind: Kind::Email,
                value: NEW_MAIL.into()
            },
            NewValue {
                kind: Kind::Email,
                value: "other@example.net".into()
            },
        ],
        "distinct, in order first seen"
    );
    // Nothing incomplete was memoised.
    assert_eq!(masker.memo_len(), 0);
    let mut counter = 0;
    let entries = entries_for(&index, &values, &mut counter);
    index.add_entries(index.generation(), entries).unwrap();
    let (out, stats) = mask_ok(&mut masker, &index, provider::OPENAI_CHAT, &body);
    let text = String::from_utf8(out).unwrap();
    assert!(
        !text.contains(NEW_MAIL)
            && !text.contains("other@example.net")
            && !text.contains("Mario Rossi")
    );
    assert!(text.contains(&fake_surrogate(1, NEW_MAIL)), "{text}");
    assert_eq!(stats.values_masked, 5);
    // Every key and string is examined (deny by default).
    assert!(stats.texts > 2, "{stats:?}");
}

#[test]
fn redact_mode_puts_placeholders_and_never_memoises_them() {
    let index = demo_index();
    let mut masker = masker(1 << 20);
    let body = chat(&[&format!(
        "Mario Rossi, please write to {NEW_MAIL} today, thanks"
    )]);
    for _ in 0..2 {
        let outcome = masker
            .mask_request(
                &index,
                provider::OPENAI_CHAT,
                &body,
                MaskOptions { redact_new: true },
            )
            .unwrap();
        let MaskOutcome::Masked {
            body: Some(out),
            stats,
            ..
        } = outcome
        else {
            panic!("{outcome:?}");
        };
        assert_eq!(
            string_at(&out, "messages.0.content"),
            "Laura Bianchi, please write to [EMAIL] today, thanks"
        );
        assert_eq!(
            (stats.values_masked, stats.redacted, stats.memo_hits),
            (1, 1, 0)
        );
    }
    assert_eq!(masker.memo_len(), 0);
}

#[test]
fn surrogates_active_or_retired_are_left_alone() {
    let mut index = demo_index();
    let text = "Already masked: laura.bianchi@brightvale.it and nothing else";
    let body = chat(&[text]);
    let outcome = masker(0)
        .mask_request(&index, provider::OPENAI_CHAT, &body, MaskOptions::default())
        .unwrap();
    assert!(
        matches!(outcome, MaskOutcome::Masked { body: None, .. }),
        "{outcome:?}"
    );
    // After a forget the surrogate is retired: still fake, still left alone.
    forget(&mut index, "mario.rossi@acme.it");
    assert!(index.is_retired("laura.bianchi@brightvale.it"));
    let outcome = masker(0)
        .mask_request(&index, provider::OPENAI_CHAT, &body, MaskOptions::default())
        .unwrap();
    assert!(
        matches!(outcome, MaskOutcome::Masked { body: None, .. }),
        "{outcome:?}"
    );
}

#[test]
fn memo_serves_resent_history() {
    let index = demo_index();
    let mut masker = masker(1 << 20);
    let history = [
        "Hello, I am Mario Rossi and I write from mario.rossi@acme.it",
        "José García is my colleague; please keep him in copy",
        "A message long enough to be memoised, with no value at all",
        "short",
    ];
    let body = chat(&history);
    let (first, stats) = mask_ok(&mut masker, &index, provider::OPENAI_CHAT, &body);
    assert_eq!(stats.memo_hits, 0);
    assert_eq!(
        masker.memo_len(),
        3,
        "texts under 32 bytes are not memoised"
    );
    let (second, stats) = mask_ok(&mut masker, &index, provider::OPENAI_CHAT, &body);
    assert_eq!(second, first);
    assert_eq!(stats.memo_hits, 3);
    assert_eq!(stats.values_masked, 3);
    // The next turn resends the history plus a new message.
    let mut next = history.to_vec();
    next.push("And one more thing about Mario Rossi");
    let (out, stats) = mask_ok(&mut masker, &index, provider::OPENAI_CHAT, &chat(&next));
    assert_eq!(stats.memo_hits, 3);
    assert_eq!(
        string_at(&out, "messages.4.content"),
        "And one more thing about Laura Bianchi"
    );
    masker.clear_memo();
    assert_eq!(masker.memo_len(), 0);
}

#[test]
fn forget_drops_memo_entries_and_masking_asks_for_a_new_entry() {
    let mut index = demo_index();
    let mut masker = masker(1 << 20);
    let body = chat(&[
        "Hello, I am Mario Rossi and I write from mario.rossi@acme.it",
        "José García is my colleague; please keep him in copy",
    ]);
    mask_ok(&mut masker, &index, provider::OPENAI_CHAT, &body);
    assert_eq!(masker.memo_len(), 2);
    let ids = forget(&mut index, "mario.rossi@acme.it");
    masker.forget(&ids);
    assert_eq!(masker.memo_len(), 1, "exactly the entry that used it");
    let values = need_entries(&mut masker, &index, provider::OPENAI_CHAT, &body);
    assert_eq!(
        values,
        vec![NewValue {
            kind: Kind::Email,
            value: "mario.rossi@acme.it".into()
        }]
    );
    // The new generation's entry gives a new surrogate; the old one is gone.
    let mut new_entry = entry(
        77,
        "mario.rossi@acme.it",
        "giulia.conti@northwind.it",
        "email",
        index.generation(),
    );
    new_entry.generation = index.generation();
    index
        .add_entries(index.generation(), vec![new_entry])
        .unwrap();
    let (out, _) = mask_ok(&mut masker, &index, provider::OPENAI_CHAT, &body);
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("giulia.conti@northwind.it"));
    assert!(!text.contains("laura.bianchi@brightvale.it"));
}

#[test]
fn a_forget_the_masker_was_not_told_of_is_still_caught_on_the_hit() {
    let mut index = demo_index();
    let mut masker = masker(1 << 20);
    let body = chat(&["Hello, I am Mario Rossi and I write from mario.rossi@acme.it"]);
    mask_ok(&mut masker, &index, provider::OPENAI_CHAT, &body);
    forget(&mut index, "Mario Rossi");
    let (out, stats) = mask_ok(&mut masker, &index, provider::OPENAI_CHAT, &body);
    assert_eq!(
        stats.memo_hits, 0,
        "the stale memo entry must not be served"
    );
    // A forgotten name is plain text again (no detector finds names); the
    // old surrogate never comes back.
    assert_eq!(
        string_at(&out, "messages.0.content"),
        "Hello, I am Mario Rossi and I write from laura.bianchi@brightvale.it"
    );
    assert_eq!(masker.memo_len(), 1, "the stale entry was replaced");
}

#[test]
fn a_value_added_after_memoisation_is_masked() {
    let mut index = demo_index();
    let mut masker = masker(1 << 20);
    let with_name = "Please call Carla Verdi tomorrow about the contract renewal";
    let without = "Please call the office tomorrow about the contract renewal";
    let body = chat(&[with_name, without]);
    let outcome = masker
        .mask_request(&index, provider::OPENAI_CHAT, &body, MaskOptions::default())
        .unwrap();
    assert!(
        matches!(outcome, MaskOutcome::Masked { body: None, .. }),
        "no detector knows names"
    );
    assert_eq!(masker.memo_len(), 2);
    // Another gateway added the name to the vault; the feed brings it here.
    index
        .add_entries(
            index.generation(),
            vec![entry(50, "Carla Verdi", "Marta Neri", "name", 1)],
        )
        .unwrap();
    let (out, stats) = mask_ok(&mut masker, &index, provider::OPENAI_CHAT, &body);
    assert_eq!(
        string_at(&out, "messages.0.content"),
        with_name.replace("Carla Verdi", "Marta Neri")
    );
    assert_eq!(
        stats.memo_hits, 1,
        "the text without the new value is still served"
    );
    // Many additions later (more than the index remembers), every memo
    // entry is a miss rather than a guess.
    let many = (0..5000)
        .map(|i| {
            entry(
                10_000 + i,
                &format!("Person{i} Surname"),
                &format!("Fake{i} Other"),
                "name",
                1,
            )
        })
        .collect();
    index.add_entries(index.generation(), many).unwrap();
    let (_, stats) = mask_ok(&mut masker, &index, provider::OPENAI_CHAT, &body);
    assert_eq!(stats.memo_hits, 0);
    let (_, stats) = mask_ok(&mut masker, &index, provider::OPENAI_CHAT, &body);
    assert_eq!(stats.memo_hits, 2, "re-memoised at the new epoch");
}

#[test]
fn a_replaced_index_does_not_reuse_the_memo() {
    let index = demo_index();
    let mut masker = masker(1 << 20);
    let text = "Please call Carla Verdi tomorrow about the contract renewal";
    let body = chat(&[text]);
    mask_ok(&mut masker, &index, provider::OPENAI_CHAT, &body);
    // A new snapshot (the caller clears the memo, as documented).
    let mut vault = VAULT.to_vec();
    vault.push(("Carla Verdi", "Marta Neri", "name"));
    let replaced = index_with(&vault);
    masker.clear_memo();
    let (out, _) = mask_ok(&mut masker, &replaced, provider::OPENAI_CHAT, &body);
    assert_eq!(
        string_at(&out, "messages.0.content"),
        text.replace("Carla Verdi", "Marta Neri")
    );
}

#[test]
fn memo_is_bounded_by_bytes_and_evicts_the_least_recently_used() {
    let index = demo_index();
    let capacity = 64 * 1024;
    let mut masker = masker(capacity);
    let texts: Vec<String> = (0..2000)
        .map(|i| format!("Message number {i} from Mario Rossi about the quarterly report"))
        .collect();
    for text in &texts {
        mask_ok(&mut masker, &index, provider::OPENAI_CHAT, &chat(&[text]));
    }
    assert!(masker.memo_bytes() <= capacity, "{}", masker.memo_bytes());
    assert!(
        masker.memo_len() > 100 && masker.memo_len() < 2000,
        "{}",
        masker.memo_len()
    );
    let (_, oldest) = mask_ok(
        &mut masker,
        &index,
        provider::OPENAI_CHAT,
        &chat(&[&texts[0]]),
    );
    assert_eq!(oldest.memo_hits, 0);
    let (_, newest) = mask_ok(
        &mut masker,
        &index,
        provider::OPENAI_CHAT,
        &chat(&[&texts[1999]]),
    );
    assert_eq!(newest.memo_hits, 1);
    // A memo of 0 bytes is off.
    let mut off = masker_with_memo(0);
    mask_ok(&mut off, &index, provider::OPENAI_CHAT, &chat(&[&texts[0]]));
    assert_eq!(off.memo_len(), 0);
}

fn masker_with_memo(bytes: usize) -> latet_core::mask::Masker {
    masker(bytes)
}

#[test]
fn arguments_are_memoised_with_the_entries_they_used() {
    let mut index = demo_index();
    let mut masker = masker(1 << 20);
    let body = serde_json::to_vec(&serde_json::json!({"messages": [{"role": "assistant", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "send",
            "arguments": "{\"to\":\"mario.rossi@acme.it\",\"body\":\"Dear José García, here is the report you asked for\"}"}}]}]}))
    .unwrap();
    let (first, _) = mask_ok(&mut masker, &index, provider::OPENAI_CHAT, &body);
    let (second, stats) = mask_ok(&mut masker, &index, provider::OPENAI_CHAT, &body);
    assert_eq!(first, second);
    assert_eq!(stats.memo_hits, 1);
    assert_eq!(stats.values_masked, 2);
    let ids = forget(&mut index, "José García");
    masker.forget(&ids);
    let outcome = masker
        .mask_request(&index, provider::OPENAI_CHAT, &body, MaskOptions::default())
        .unwrap();
    // "José García" is a name the test kit's masker does not detect (names off), so once forgotten it
    // passes as plain text — the old surrogate must not come back.
    let MaskOutcome::Masked {
        body: Some(out), ..
    } = outcome
    else {
        panic!("{outcome:?}")
    };
    let args = string_at(&out, "messages.0.tool_calls.0.function.arguments");
    assert!(!args.contains("Iñigo Pérez"), "{args}");
    assert!(args.contains("laura.bianchi@brightvale.it"));
}

#[test]
fn ten_thousand_levels_are_a_clean_error_or_a_correct_result() {
    let index = demo_index();
    let depth = 10_000;
    let deep = format!("{}\"Mario Rossi\"{}", "[".repeat(depth), "]".repeat(depth));
    for shape in [
        provider::GENERIC_JSON,
        provider::OPENAI_CHAT,
        provider::ANTHROPIC_MESSAGES,
    ] {
        let err = masker(0)
            .mask_request(&index, shape, deep.as_bytes(), MaskOptions::default())
            .unwrap_err();
        assert_eq!(
            err,
            CoreError::BadBody("nesting deeper than 512 levels at byte 512".into())
        );
    }
    // Inside tool-call arguments too.
    let args = format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth));
    let body = serde_json::to_vec(
        &serde_json::json!({"messages": [{"role": "assistant", "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "f", "arguments": args}}]}]}),
    )
    .unwrap();
    let err = masker(0)
        .mask_request(&index, provider::OPENAI_CHAT, &body, MaskOptions::default())
        .unwrap_err();
    assert!(
        matches!(err, CoreError::BadBody(ref m) if m.starts_with("nesting deeper than 512")),
        "{err}"
    );
    // With the limit raised, the same body masks correctly (no recursion).
    let mut big = masker(0).with_limits(Limits { max_depth: depth });
    let (out, stats) = mask_ok(&mut big, &index, provider::GENERIC_JSON, deep.as_bytes());
    assert_eq!(stats.values_masked, 1);
    assert_eq!(
        out,
        deep.replace("Mario Rossi", "Laura Bianchi").into_bytes()
    );
}

#[test]
fn mask_text_for_the_apps_api() {
    let index = demo_index();
    let detectors = latet_core::detect::Detectors::new(&Default::default()).unwrap();
    let outcome = mask_text(
        &detectors,
        &index,
        "Mario Rossi <mario.rossi@acme.it>",
        MaskOptions::default(),
    );
    let TextOutcome::Masked {
        text: Some(text),
        stats,
    } = outcome
    else {
        panic!("{outcome:?}")
    };
    assert_eq!(text, "Laura Bianchi <laura.bianchi@brightvale.it>");
    assert_eq!(stats.values_masked, 2);
    let outcome = mask_text(&detectors, &index, "nothing here", MaskOptions::default());
    assert!(matches!(outcome, TextOutcome::Masked { text: None, .. }));
    let outcome = mask_text(&detectors, &index, NEW_MAIL, MaskOptions::default());
    assert_eq!(
        outcome,
        TextOutcome::NeedEntries {
            values: vec![NewValue {
                kind: Kind::Email,
                value: NEW_MAIL.into()
            }]
        }
    );
    let outcome = mask_text(
        &detectors,
        &index,
        NEW_MAIL,
        MaskOptions { redact_new: true },
    );
    assert!(matches!(outcome, TextOutcome::Masked { text: Some(ref t), .. } if t == "[EMAIL]"));
}

#[test]
fn outcomes_debug_without_values_or_surrogates() {
    let index = demo_index();
    let body = chat(&[&format!("Mario Rossi and {NEW_MAIL}")]);
    let need = masker(0)
        .mask_request(&index, provider::OPENAI_CHAT, &body, MaskOptions::default())
        .unwrap();
    let redacted = masker(0)
        .mask_request(
            &index,
            provider::OPENAI_CHAT,
            &body,
            MaskOptions { redact_new: true },
        )
        .unwrap();
    let detectors = latet_core::detect::Detectors::new(&Default::default()).unwrap();
    let text = mask_text(&detectors, &index, "Mario Rossi", MaskOptions::default());
    for debug in [
        format!("{need:?}"),
        format!("{redacted:?}"),
        format!("{text:?}"),
    ] {
        for secret in ["Mario", "Laura", "new.person", "example.org"] {
            assert!(!debug.contains(secret), "{debug}");
        }
    }
}

/// Finding F8-1: two vault values written overlapping ("Mario Rossi" and
/// "Rossi Ana" in "Mario Rossi Ana") are one value to mask: the union asks
/// for an entry, and once it has one the whole run is replaced; no byte of
/// either value goes out as written.
#[test]
fn overlapping_values_are_masked_as_their_union() {
    let mut index = index_with(&[
        ("Mario Rossi", "Laura Bianchi", "name"),
        ("Rossi Ana", "Neri Eva", "name"),
    ]);
    let mut masker = masker(1 << 20);
    let body = chat(&["Dear Mario Rossi Ana, and Mario Rossi alone"]);
    let outcome = masker
        .mask_request(&index, provider::OPENAI_CHAT, &body, MaskOptions::default())
        .unwrap();
    let MaskOutcome::NeedEntries { values } = outcome else {
        panic!("expected the union as a new value, got {outcome:?}");
    };
    assert_eq!(
        values,
        vec![NewValue {
            kind: Kind::Name,
            value: "Mario Rossi Ana".into()
        }]
    );
    let mut counter = 0;
    let entries = entries_for(&index, &values, &mut counter);
    let generation = index.generation();
    index.add_entries(generation, entries).unwrap();
    let (out, _) = mask_ok(&mut masker, &index, provider::OPENAI_CHAT, &body);
    let content = string_at(&out, "messages.0.content");
    for value in ["Mario", "Rossi", "Ana"] {
        assert!(
            !content.contains(value),
            "a part of a value left (word {value:?} of the fixture)"
        );
    }
    assert!(content.ends_with(", and Laura Bianchi alone"));
}

/// Short texts found clean (keys, roles) are not scanned again in the same
/// index position, but an entry added or a forget applied since makes them
/// examined afresh: a text never passes as clean against an index that
/// could now find something in it.
#[test]
fn a_short_text_found_clean_is_examined_again_once_the_index_moves() {
    let mut index = index_with(&[]);
    let mut masker = masker(1 << 20);
    let body = br#"{"messages":[{"role":"user","content":"Rossi"}]}"#;
    let (out, _) = mask_ok(&mut masker, &index, provider::OPENAI_CHAT, body);
    assert_eq!(out, body.to_vec());
    assert!(masker.clean_texts_len() > 0);
    // The vault learns the word: the next request must mask it.
    let added = vec![entry(9, "Rossi", "Bianchi", "name", index.generation())];
    index.add_entries(index.generation(), added).unwrap();
    let (out, _) = mask_ok(&mut masker, &index, provider::OPENAI_CHAT, body);
    assert_eq!(
        String::from_utf8(out).unwrap(),
        r#"{"messages":[{"role":"user","content":"Bianchi"}]}"#
    );
}

#[test]
fn with_names_on_a_forgotten_name_is_asked_for_again_and_unknown_names_are_new_values() {
    let mut index = demo_index();
    let mut masker = masker_with_names(1 << 20);
    let body = chat(&["José García is my colleague; Lucía Fernández too"]);
    // "Lucía Fernández" is in no vault: the person detector finds it.
    let values = need_entries(&mut masker, &index, provider::OPENAI_CHAT, &body);
    assert_eq!(
        values,
        vec![NewValue {
            kind: Kind::Name,
            value: "Lucía Fernández".into()
        }]
    );
    index
        .add_entries(
            index.generation(),
            vec![entry(
                40,
                "Lucía Fernández",
                "Carmen Ortega",
                "name",
                index.generation(),
            )],
        )
        .unwrap();
    let (out, _) = mask_ok(&mut masker, &index, provider::OPENAI_CHAT, &body);
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("Iñigo Pérez is my colleague; Carmen Ortega too"),
        "{text}"
    );
    // Forgotten, the vault name is a new value again (a new generation's
    // surrogate follows), never its old surrogate.
    let ids = forget(&mut index, "José García");
    masker.forget(&ids);
    let values = need_entries(&mut masker, &index, provider::OPENAI_CHAT, &body);
    assert_eq!(
        values,
        vec![NewValue {
            kind: Kind::Name,
            value: "José García".into()
        }]
    );
}

#[test]
fn a_resent_surrogate_is_not_masked_in_part_by_the_name_detector() {
    // A surrogate whose first word the person detector reads as a name
    // (the bench's synthetic vault writes names so).
    let index = index_with(&[("Mario Rossi7", "Giulia Conti9", "name")]);
    let mut masker = masker_with_names(0);
    let body = chat(&["Please greet Giulia Conti9 today."]);
    let (out, stats) = mask_ok(&mut masker, &index, provider::OPENAI_CHAT, &body);
    assert_eq!(stats.values_masked, 0);
    assert_eq!(out, body, "the surrogate goes as written");
}

#[test]
fn a_resent_retired_surrogate_is_not_masked_in_part_by_the_name_detector() {
    // After the forget the surrogate is retired: still ours, still whole.
    // A part of it masked as a new name would put a needless entry in the
    // vault and break the answer's echo of the retired surrogate (which the
    // restorer then declines whole). Found by envoy/bench.sh's forget cells.
    let mut index = index_with(&[("Mario Rossi7", "Giulia Conti9", "name")]);
    forget(&mut index, "Mario Rossi7");
    assert!(index.is_retired("Giulia Conti9"));
    let mut masker = masker_with_names(0);
    let body = chat(&["Please greet Giulia Conti9 today."]);
    let (out, stats) = mask_ok(&mut masker, &index, provider::OPENAI_CHAT, &body);
    assert_eq!(stats.values_masked, 0);
    assert_eq!(out, body, "the retired surrogate goes as written");
}

#[test]
fn a_resent_surrogate_is_not_masked_in_part_by_a_lone_name_in_the_vault() {
    // A lone given name became a vault value (a text named someone by it);
    // it is also the first word of another person's surrogate. Replacing
    // that word would send a surrogate the restorer no longer knows, and the
    // answer would come back with the surrogate instead of the name. Found
    // by envoy/bench.sh's forget cells (4 of 51 not restored).
    let index = index_with(&[
        ("Jürgen Brown810", "José Faria0", "name"),
        ("José", "Guillermo", "name"),
    ]);
    let mut masker = masker_with_names(0);
    let body = chat(&["Please greet José Faria0 today."]);
    let (out, stats) = mask_ok(&mut masker, &index, provider::OPENAI_CHAT, &body);
    assert_eq!(stats.values_masked, 0);
    assert_eq!(out, body, "the surrogate goes as written");
    // The lone name itself is still masked wherever it stands alone, and
    // where it begins a name that is not one of our surrogates.
    for text in ["José said hi.", "Please greet José Faria1 today."] {
        let body = chat(&[text]);
        let (out, _) = mask_ok(&mut masker, &index, provider::OPENAI_CHAT, &body);
        let out = String::from_utf8(out).unwrap();
        assert!(!out.contains("José"), "{text}: {out}");
        assert!(out.contains("Guillermo"), "{text}: {out}");
    }
}

#[test]
fn a_resent_surrogate_of_any_kind_is_not_masked_in_part_by_a_vault_value() {
    // A vault value can stand inside another entry's surrogate: a domain in
    // an e-mail surrogate, a short phone number in a longer one's, a key's
    // tail in another key's. Where the kind's detector reads the surrogate
    // whole, the surrogate wins the overlap; with that detector off (or a
    // surrogate it does not read whole) the part was replaced and the
    // surrogate broken. Each case: (entries, the surrogate resent, the
    // value written where the person wrote it).
    type Case<'a> = (&'a [(&'a str, &'a str, &'a str)], &'a str, &'a str);
    let cases: &[Case] = &[
        (
            &[
                ("ana.lopez@corp.es", "maria.gomez@example.net", "email"),
                ("example.net", "sample.org", "domain"),
            ],
            "maria.gomez@example.net",
            "example.net",
        ),
        (
            &[
                ("+34 600 111 222", "+34 612 345 678", "phone"),
                ("612 345 678", "699 000 111", "phone"),
            ],
            "+34 612 345 678",
            "612 345 678",
        ),
        (
            &[
                (
                    "sk-live-aaaaaaaaaaaaaaaaaaaaaaaa",
                    "sk-live-bbbbbbbbbbbbbbbbbbbbbbbb",
                    "secret",
                ),
                (
                    "bbbbbbbbbbbbbbbbbbbbbbbb",
                    "cccccccccccccccccccccccc",
                    "secret",
                ),
            ],
            "sk-live-bbbbbbbbbbbbbbbbbbbbbbbb",
            "bbbbbbbbbbbbbbbbbbbbbbbb",
        ),
    ];
    let config = DetectorConfig {
        email: false,
        phone: false,
        secret: false,
        person: false,
        ..DetectorConfig::default()
    };
    for &(entries, surrogate, value) in cases {
        let mut index = index_with(entries);
        let mut masker = Masker::new(Detectors::new(&config).unwrap(), 0);
        let body = chat(&[&format!("use {surrogate} now")]);
        let (out, stats) = mask_ok(&mut masker, &index, provider::OPENAI_CHAT, &body);
        assert_eq!(stats.values_masked, 0, "{surrogate}");
        assert_eq!(out, body, "{surrogate} goes as written");
        // Where the person wrote the value, it is masked.
        let body = chat(&[&format!("use {value} now")]);
        let (out, _) = mask_ok(&mut masker, &index, provider::OPENAI_CHAT, &body);
        let out = String::from_utf8(out).unwrap();
        assert!(!out.contains(value), "{value}: {out}");
        // A retired surrogate resent is kept whole too (its echo is
        // declined whole by the restorer).
        let owner = index.by_surrogate(surrogate).unwrap().value.to_string();
        forget(&mut index, &owner);
        let body = chat(&[&format!("use {surrogate} now")]);
        let (out, _) = mask_ok(&mut masker, &index, provider::OPENAI_CHAT, &body);
        assert_eq!(out, body, "retired {surrogate} goes as written");
    }
}
