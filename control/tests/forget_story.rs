//! The whole forget story at the API level, against a real server and a real
//! SQLite file: entries → snapshot → forget → events → new generation.
//! Rule labels (V5) are those of docs/product-rules.md.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::json;
use std::collections::HashSet;

#[test]
fn forget_story_new_generation_and_the_old_surrogate_never_returns() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let gateway = server.create_key("Shop");
    let eraser = server.add_token("Shop", "erasure", &["forget"]);

    // Entries: an e-mail with a company domain brings the domain's own entry.
    let first = server.entries(
        &gateway,
        &[
            ("email", "mario.rossi@acme.it"),
            ("phone", "+39 347 123 4567"),
        ],
    );
    assert_eq!(first["generation"], 1);
    let entries = first["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 3, "{first}");
    assert_eq!(entries[0]["value"], "mario.rossi@acme.it");
    assert_eq!(entries[1]["value"], "+39 347 123 4567");
    assert_eq!(entries[2]["value"], "acme.it");
    assert_eq!(entries[2]["kind"], "domain");
    let old_mail = surrogate_of(&first, "mario.rossi@acme.it").unwrap();
    let domain_surrogate = surrogate_of(&first, "acme.it").unwrap();
    assert!(
        old_mail.ends_with(&format!("@{domain_surrogate}")),
        "V5: the domain part is the domain's surrogate"
    );

    // Existing values come back as they are; a provider domain is never stored.
    let again = server.entries(
        &gateway,
        &[("email", "mario.rossi@acme.it"), ("email", "ana@gmail.com")],
    );
    assert_eq!(
        surrogate_of(&again, "mario.rossi@acme.it").unwrap(),
        old_mail
    );
    assert!(surrogate_of(&again, "gmail.com").is_none());
    assert!(surrogate_of(&again, "ana@gmail.com")
        .unwrap()
        .ends_with("@gmail.com"));

    let snapshot = server.snapshot(&gateway);
    assert_eq!(snapshot["version"], 1);
    assert_eq!(snapshot["generation"], 1);
    assert_eq!(
        snapshot["seq"], 2,
        "two calls created entries: two added events"
    );
    assert_eq!(snapshot["entries"].as_array().unwrap().len(), 4);
    let seq_before = snapshot["seq"].as_u64().unwrap();

    // Forget the address (not its domain).
    let (status, counts) = server.post(
        "/_latet/apps/v1/forget",
        Some(&eraser),
        &json!({"values": ["mario.rossi@acme.it"]}),
    );
    assert_eq!(status, 200, "{counts}");
    assert_eq!(counts, json!({"forgotten": 1, "unknown": 0}));

    // The feed: one forgotten event, ids and hashes only, the new generation.
    let (status, feed) = server.get(
        &format!("/_latet/gateway/v1/events?after={seq_before}"),
        Some(&gateway),
    );
    assert_eq!(status, 200);
    assert_eq!(feed["status"], "events");
    let events = feed["events"].as_array().unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["type"], "forgotten");
    assert_eq!(events[0]["seq"], seq_before + 1);
    assert_eq!(events[0]["generation"], 2);
    assert_eq!(events[0]["ids"][0], entries[0]["id"]);
    let text = feed.to_string();
    assert!(
        !text.contains("mario.rossi") && !text.contains(&old_mail),
        "events name values by id only"
    );

    // The added event that carried the value no longer carries it.
    let (_, from_start) = server.get("/_latet/gateway/v1/events?after=0", Some(&gateway));
    assert!(!from_start.to_string().contains("mario.rossi"));

    let snapshot = server.snapshot(&gateway);
    assert_eq!(snapshot["generation"], 2);
    assert!(surrogate_of(&snapshot, "mario.rossi@acme.it").is_none());
    assert_eq!(
        surrogate_of(&snapshot, "acme.it").unwrap(),
        domain_surrogate,
        "the domain stays"
    );
    assert!(is_retired(&snapshot, &old_mail));

    // The value comes back: a new entry under generation 2, a new surrogate.
    let back = server.entries(&gateway, &[("email", "mario.rossi@acme.it")]);
    let new_mail = surrogate_of(&back, "mario.rossi@acme.it").unwrap();
    assert_ne!(new_mail, old_mail);
    assert_eq!(back["entries"][0]["generation"], 2);

    // Forget and return many times: every surrogate is new.
    let mut seen: HashSet<String> = [old_mail.clone(), new_mail.clone()].into();
    for _ in 0..20 {
        let (status, _) = server.post(
            "/_latet/apps/v1/forget",
            Some(&eraser),
            &json!({"values": ["mario.rossi@acme.it"]}),
        );
        assert_eq!(status, 200);
        let again = server.entries(&gateway, &[("email", "mario.rossi@acme.it")]);
        assert!(
            seen.insert(surrogate_of(&again, "mario.rossi@acme.it").unwrap()),
            "a surrogate came back"
        );
    }

    // 10,000 new entries: none takes a retired surrogate.
    for batch in 0..10 {
        let values: Vec<(String, String)> = (0..1000)
            .map(|i| ("name".to_string(), format!("Persona Numero{batch}x{i}")))
            .collect();
        let pairs: Vec<(&str, &str)> = values
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let answer = server.entries(&gateway, &pairs);
        for entry in answer["entries"].as_array().unwrap() {
            let surrogate = entry["surrogate"].as_str().unwrap();
            assert!(
                !seen.contains(surrogate),
                "a retired surrogate was reissued"
            );
        }
    }
    let snapshot = server.snapshot(&gateway);
    let active: HashSet<&str> = snapshot["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["surrogate"].as_str().unwrap())
        .collect();
    assert!(snapshot["entries"].as_array().unwrap().len() >= 10_003);
    for surrogate in &seen {
        let current = surrogate_of(&snapshot, "mario.rossi@acme.it").unwrap();
        if *surrogate != current {
            assert!(!active.contains(surrogate.as_str()));
            assert!(is_retired(&snapshot, surrogate));
        }
    }
}

#[test]
fn a_gateway_behind_the_kept_feed_is_told_to_take_a_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_with(dir.path(), &["--feed-keep", "3"]);
    let gateway = server.create_key("Shop");
    for i in 0..6 {
        server.entries(&gateway, &[("name", &format!("Nombre Apellido{i}"))]);
    }
    let (_, feed) = server.get("/_latet/gateway/v1/events?after=1", Some(&gateway));
    assert_eq!(
        feed,
        json!({"status": "snapshot_required", "version": 1, "oldest": 4, "head": 6})
    );
    let (_, feed) = server.get("/_latet/gateway/v1/events?after=3", Some(&gateway));
    assert_eq!(feed["status"], "events");
    let seqs: Vec<u64> = feed["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, vec![4, 5, 6]);
    // Ahead of the head (a service restored from an older copy): snapshot.
    let (_, feed) = server.get("/_latet/gateway/v1/events?after=99", Some(&gateway));
    assert_eq!(feed["status"], "snapshot_required");
    let (_, feed) = server.get("/_latet/gateway/v1/events?after=6", Some(&gateway));
    assert_eq!(
        feed,
        json!({"status": "events", "version": 1, "head": 6, "events": []})
    );
}

#[test]
fn an_active_surrogate_asked_for_as_a_value_gets_its_own_entry_back() {
    // A gateway whose feed is a moment behind sees a surrogate another
    // worker just got, takes it for a new value and asks for its entry.
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let gateway = server.create_key("Shop");
    let first = server.entries(
        &gateway,
        &[("email", "mario.rossi@acme.it"), ("name", "Mario Rossi")],
    );
    let mail = surrogate_of(&first, "mario.rossi@acme.it").unwrap();
    let name = surrogate_of(&first, "Mario Rossi").unwrap();
    let domain = surrogate_of(&first, "acme.it").unwrap();
    let seq_before = server.snapshot(&gateway)["seq"].clone();

    let asked = server.entries(
        &gateway,
        &[("email", &mail), ("name", &name), ("domain", &domain)],
    );
    let entries = asked["entries"].as_array().unwrap();
    let pairs: Vec<(&str, &str)> = entries
        .iter()
        .map(|e| {
            (
                e["value"].as_str().unwrap(),
                e["surrogate"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        pairs,
        [
            ("mario.rossi@acme.it", mail.as_str()),
            ("Mario Rossi", name.as_str()),
            ("acme.it", domain.as_str()),
        ],
        "each surrogate's own entry, in the order asked"
    );
    // Nothing was created: no surrogate became a value.
    let snapshot = server.snapshot(&gateway);
    assert_eq!(snapshot["seq"], seq_before);
    assert_eq!(snapshot["entries"].as_array().unwrap().len(), 3);
}
