//! Token and key lifecycle through the HTTP API: tokens listed (never their
//! text), revoked (refused on every endpoint from the next request, open
//! long-polls included), a token revoking itself, and a key deleted with
//! its whole vault (410 `key_deleted` for its tokens forever; a key created
//! again under the name is a new, empty vault that restores nothing old).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// Every endpoint a key's token can call: (method, path, body).
fn token_endpoints() -> Vec<(&'static str, &'static str, Option<Value>)> {
    vec![
        ("GET", "/_latet/gateway/v1/snapshot", None),
        ("GET", "/_latet/gateway/v1/events?after=0", None),
        (
            "POST",
            "/_latet/gateway/v1/entries",
            Some(json!({"version": 1, "values": [{"kind": "name", "value": "Anna Verdi"}]})),
        ),
        (
            "POST",
            "/_latet/apps/v1/forget",
            Some(json!({"values": ["mario.rossi@acme.it"]})),
        ),
        ("POST", "/_latet/apps/v1/mask", Some(json!({"text": "hi"}))),
        (
            "POST",
            "/_latet/apps/v1/restore",
            Some(json!({"text": "hi"})),
        ),
        ("GET", "/_latet/apps/v1/token", None),
    ]
}

/// Calls every endpoint with `token`; the (path, status, error code) of each.
fn call_all(server: &Server, token: &str) -> Vec<(String, u16, Value)> {
    token_endpoints()
        .into_iter()
        .map(|(method, path, body)| {
            let (status, answer) = match (method, body) {
                ("GET", _) => server.get(path, Some(token)),
                (_, Some(body)) => server.post(path, Some(token), &body),
                _ => unreachable!(),
            };
            (path.to_string(), status, answer["error"].clone())
        })
        .collect()
}

fn delete(server: &Server, path: &str, token: &str) -> (u16, Value) {
    let result = agent()
        .delete(&format!("{}{path}", server.url))
        .set("Authorization", &format!("Bearer {token}"))
        .call();
    match result {
        Ok(r) => (r.status(), r.into_json().unwrap()),
        Err(ureq::Error::Status(status, r)) => (status, r.into_json().unwrap()),
        Err(err) => panic!("transport error: {err}"),
    }
}

/// A long-poll of the feed with `token` started in a thread (a 30 s wait):
/// its status, error code and how long it took.
fn long_poll(server: &Server, token: &str) -> std::thread::JoinHandle<(u16, Value, Duration)> {
    let url = format!(
        "{}/_latet/gateway/v1/events?after=1000000&wait_ms=30000",
        server.url
    );
    let url = url.replace("after=1000000", "after=SEQ");
    let (status, snapshot) = server.get("/_latet/gateway/v1/snapshot", Some(token));
    assert_eq!(status, 200);
    let url = url.replace("SEQ", &snapshot["seq"].to_string());
    let token = token.to_string();
    std::thread::spawn(move || {
        let started = Instant::now();
        let result = agent()
            .get(&url)
            .set("Authorization", &format!("Bearer {token}"))
            .call();
        let (status, body): (u16, Value) = match result {
            Ok(r) => (r.status(), r.into_json().unwrap()),
            Err(ureq::Error::Status(status, r)) => (status, r.into_json().unwrap()),
            Err(err) => panic!("transport error: {err}"),
        };
        (status, body["error"].clone(), started.elapsed())
    })
}

#[test]
fn tokens_are_listed_by_name_and_permissions_never_by_secret() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let first = server.create_key("Shop");
    let eraser = server.add_token("Shop", "erasure", &["forget"]);
    let admin = server.admin_token();

    let (status, body) = server.get("/_latet/admin/v1/keys/Shop/tokens", Some(&admin));
    assert_eq!(status, 200, "{body}");
    let listed: Vec<(String, Value)> = body["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_string(),
                t["permissions"].clone(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        vec![
            (
                "default".to_string(),
                json!(["gateway", "analyze", "mask", "restore"])
            ),
            ("erasure".to_string(), json!(["forget"])),
        ]
    );
    let text = body.to_string();
    for secret in [&first, &eraser] {
        assert!(!text.contains(secret.as_str()), "a token was listed");
        assert!(!text.contains(&secret[3..10]), "part of a token was listed");
    }
    // Only the admin token lists; an unknown key is named.
    assert_eq!(
        server
            .get("/_latet/admin/v1/keys/Shop/tokens", Some(&first))
            .0,
        401
    );
    let (status, body) = server.get("/_latet/admin/v1/keys/Nope/tokens", Some(&admin));
    assert_eq!((status, body["error"].as_str()), (404, Some("not_found")));
}

#[test]
fn a_revoked_token_fails_at_once_on_every_endpoint_and_others_keep_working() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let gateway = server.create_key("Shop");
    let all = server.add_token(
        "Shop",
        "everything",
        &["gateway", "analyze", "mask", "restore", "forget"],
    );
    server.entries(&gateway, &[("email", "mario.rossi@acme.it")]);
    for (path, status, error) in call_all(&server, &all) {
        assert_eq!(status, 200, "{path}: {error}");
    }
    let poll = long_poll(&server, &all);
    std::thread::sleep(Duration::from_millis(300));

    let admin = server.admin_token();
    let (status, body) = delete(
        &server,
        "/_latet/admin/v1/keys/Shop/tokens/everything",
        &admin,
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body,
        json!({"key": "Shop", "token": "everything", "revoked": true})
    );

    for (path, status, error) in call_all(&server, &all) {
        assert_eq!(
            (status, error.as_str()),
            (401, Some("unauthorized")),
            "{path}"
        );
    }
    // The poll that was waiting is woken and refused, not left to run out
    // its 30 s (nor answered with events after the revocation).
    let (status, error, took) = poll.join().unwrap();
    assert_eq!((status, error.as_str()), (401, Some("unauthorized")));
    assert!(took < Duration::from_secs(10), "took {took:?}");

    // The key's other token is untouched.
    assert_eq!(
        server.snapshot(&gateway)["entries"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    // Revoking again, or an unknown key: 404 naming what is missing.
    let (status, body) = delete(
        &server,
        "/_latet/admin/v1/keys/Shop/tokens/everything",
        &admin,
    );
    assert_eq!(
        (status, body["message"].as_str()),
        (404, Some("token not found"))
    );
    let (status, body) = delete(&server, "/_latet/admin/v1/keys/Nope/tokens/default", &admin);
    assert_eq!(
        (status, body["message"].as_str()),
        (404, Some("key not found"))
    );
    // Only the admin token revokes.
    assert_eq!(
        delete(
            &server,
            "/_latet/admin/v1/keys/Shop/tokens/default",
            &gateway
        )
        .0,
        401
    );

    let log = server.admin_log("token.revoked");
    assert_eq!(log.len(), 1);
    assert_eq!(
        (log[0]["key"].as_str(), log[0]["token"].as_str()),
        (Some("Shop"), Some("everything"))
    );
}

#[test]
fn a_token_revokes_itself() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let gateway = server.create_key("Shop");
    let leaked = server.add_token("Shop", "ci", &["mask"]);
    let (status, body) = server.get("/_latet/apps/v1/token", Some(&leaked));
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body,
        json!({"key": "Shop", "token": "ci", "permissions": ["mask"], "enabled": true})
    );
    let (status, body) = delete(&server, "/_latet/apps/v1/token", &leaked);
    assert_eq!(status, 200, "{body}");
    assert_eq!(body, json!({"key": "Shop", "token": "ci", "revoked": true}));
    assert_eq!(
        server
            .post("/_latet/apps/v1/mask", Some(&leaked), &json!({"text": "x"}))
            .0,
        401
    );
    assert_eq!(delete(&server, "/_latet/apps/v1/token", &leaked).0, 401);
    assert_eq!(
        server.get("/_latet/gateway/v1/snapshot", Some(&gateway)).0,
        200
    );
    let log = server.admin_log("apps.token_revoked");
    assert_eq!(log.len(), 1);
    assert_eq!(log[0]["token"], "ci");
}

#[test]
fn a_deleted_key_erases_its_vault_and_its_tokens_answer_key_deleted_forever() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    // Shop last: its id is the highest, the one SQLite would give again.
    let other = server.create_key("Other");
    let gateway = server.create_key("Shop");
    let eraser = server.add_token("Shop", "erasure", &["forget"]);
    let added = server.entries(
        &gateway,
        &[
            ("email", "mario.rossi@acme.it"),
            ("phone", "+39 347 123 4567"),
            ("name", "Anna Verdi"),
        ],
    );
    server.entries(&other, &[("name", "Anna Verdi")]);
    let old_surrogates: Vec<String> = ["mario.rossi@acme.it", "+39 347 123 4567", "Anna Verdi"]
        .iter()
        .map(|v| surrogate_of(&added, v).unwrap())
        .collect();
    let (status, _) = server.post(
        "/_latet/apps/v1/forget",
        Some(&eraser),
        &json!({"values": ["Anna Verdi"]}),
    );
    assert_eq!(status, 200);
    let old_salt = server.snapshot(&gateway)["retired_salt"].clone();
    let poll = long_poll(&server, &gateway);
    std::thread::sleep(Duration::from_millis(300));

    let admin = server.admin_token();
    let (status, body) = delete(&server, "/_latet/admin/v1/keys/Shop", &admin);
    assert_eq!(status, 200, "{body}");
    // An e-mail, its company domain, a phone; one retired; two tokens; two events.
    assert_eq!(
        body,
        json!({"key": "Shop", "deleted": true, "values": 3, "retired": 1, "tokens": 2, "events": 2})
    );

    // The open long-poll is told at once; every endpoint refuses every token.
    let (status, error, took) = poll.join().unwrap();
    assert_eq!((status, error.as_str()), (410, Some("key_deleted")));
    assert!(took < Duration::from_secs(10), "took {took:?}");
    for token in [&gateway, &eraser] {
        for (path, status, error) in call_all(&server, token) {
            assert_eq!(
                (status, error.as_str()),
                (410, Some("key_deleted")),
                "{path}"
            );
        }
    }
    let log = server.admin_log("key.deleted");
    assert_eq!(log.len(), 1);
    assert_eq!(
        (
            log[0]["key"].as_str(),
            log[0]["forgotten"].as_u64(),
            log[0]["retired"].as_u64(),
            log[0]["tokens"].as_u64()
        ),
        (Some("Shop"), Some(3), Some(1), Some(2))
    );
    let (_, keys) = server.get("/_latet/admin/v1/keys", Some(&admin));
    let names: Vec<&str> = keys["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Other"]);
    let (status, _) = delete(&server, "/_latet/admin/v1/keys/Shop", &admin);
    assert_eq!(status, 404, "deleting twice");
    // The other key's vault is untouched.
    assert_eq!(
        server.snapshot(&other)["entries"].as_array().unwrap().len(),
        1
    );

    // The name again: a new, empty vault with new secrets; the old tokens
    // still answer key_deleted, and nothing of the old vault comes back.
    let fresh = server.create_key("Shop");
    for (path, status, error) in call_all(&server, &gateway) {
        assert_eq!(
            (status, error.as_str()),
            (410, Some("key_deleted")),
            "{path}"
        );
    }
    let snapshot = server.snapshot(&fresh);
    assert_eq!(
        (snapshot["seq"].as_u64(), snapshot["generation"].as_u64()),
        (Some(0), Some(1))
    );
    assert_eq!(snapshot["entries"], json!([]));
    assert_eq!(snapshot["retired"], json!([]));
    assert_ne!(snapshot["retired_salt"], old_salt);
    let text = old_surrogates.join(" | ");
    let (status, body) = server.post(
        "/_latet/apps/v1/restore",
        Some(&fresh),
        &json!({ "text": text }),
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["text"], text.as_str(), "an old surrogate was restored");
    let again = server.entries(&fresh, &[("email", "mario.rossi@acme.it")]);
    assert_ne!(
        surrogate_of(&again, "mario.rossi@acme.it").unwrap(),
        old_surrogates[0]
    );
    // The old tokens were not carried over to the new key.
    let (_, tokens) = server.get("/_latet/admin/v1/keys/Shop/tokens", Some(&admin));
    assert_eq!(tokens["tokens"].as_array().unwrap().len(), 1);
}

#[test]
fn a_deleted_key_stays_deleted_across_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let gateway = server.create_key("Shop");
    server.entries(&gateway, &[("name", "Mario Rossi")]);
    let admin = server.admin_token();
    assert_eq!(delete(&server, "/_latet/admin/v1/keys/Shop", &admin).0, 200);
    server.kill();
    let server = Server::start(dir.path());
    let fresh = server.create_key("Shop");
    assert_eq!(
        server.get("/_latet/gateway/v1/snapshot", Some(&gateway)).0,
        410
    );
    assert_eq!(server.snapshot(&fresh)["entries"], json!([]));
}
