//! The apps API and the gateway's access rules: F3 counts, 401/403/400, the
//! 503 rollback, a disabled key (F4), and the long-poll waking on a forget.
//! Rule labels (F3, F4, F7, V3) are those of docs/product-rules.md.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::json;
use std::time::{Duration, Instant};

#[test]
fn forget_counts_each_distinct_value_once_and_logs_counts_only() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let gateway = server.create_key("Shop");
    let eraser = server.add_token("Shop", "erasure", &["forget"]);
    server.entries(
        &gateway,
        &[
            ("email", "mario.rossi@acme.it"),
            ("phone", "+39 347 123 4567"),
        ],
    );

    let cases = [
        // (values, forgotten, unknown)
        (
            json!([
                "mario.rossi@acme.it",
                "mario.rossi@acme.it",
                "+39 347 123 4567",
                "nadie@example.org"
            ]),
            2,
            1,
        ),
        // Rerunning is safe: what was forgotten now counts as unknown.
        (json!(["mario.rossi@acme.it", "+39 347 123 4567"]), 0, 2),
        // Values are exact (V3): other case is another value.
        (json!(["ACME.IT", "acme.it"]), 1, 1),
        (json!([]), 0, 0),
    ];
    for (values, forgotten, unknown) in cases {
        let (status, body) = server.post(
            "/_latet/apps/v1/forget",
            Some(&eraser),
            &json!({ "values": values }),
        );
        assert_eq!(status, 200, "{body}");
        assert_eq!(
            body,
            json!({"forgotten": forgotten, "unknown": unknown}),
            "{values}"
        );
    }
    let log = server.admin_log("apps.forgotten");
    assert_eq!(log.len(), 4);
    assert_eq!(log[0]["key"], "Shop");
    assert_eq!(log[0]["token"], "erasure");
    assert_eq!(
        (
            log[0]["requested"].as_u64(),
            log[0]["forgotten"].as_u64(),
            log[0]["unknown"].as_u64()
        ),
        (Some(4), Some(2), Some(1))
    );
    let text = serde_json::to_string(&log).unwrap();
    assert!(
        !text.contains("mario") && !text.contains("347") && !text.contains("acme"),
        "the log holds no value"
    );
}

#[test]
fn tokens_and_permissions_401_403_400() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let first = server.create_key("Shop");
    let eraser = server.add_token("Shop", "erasure", &["forget"]);
    let forget = |token: Option<&str>, body: &serde_json::Value| {
        server.post("/_latet/apps/v1/forget", token, body)
    };
    let one = json!({"values": ["x"]});
    let too_many = json!({"values": (0..1001).map(|i| format!("v{i}")).collect::<Vec<_>>()});
    let cases: Vec<(&str, u16, &str)> = vec![
        (
            "first token cannot forget",
            forget(Some(&first), &one).0,
            "403",
        ),
        ("unknown token", forget(Some("lt_0000"), &one).0, "401"),
        ("no token", forget(None, &one).0, "401"),
        ("1,001 values", forget(Some(&eraser), &too_many).0, "400"),
        (
            "not JSON",
            server
                .post_raw("/_latet/apps/v1/forget", Some(&eraser), "{values")
                .0,
            "400",
        ),
        (
            "values not strings",
            forget(Some(&eraser), &json!({"values": [1]})).0,
            "400",
        ),
        (
            "forget token on the gateway",
            server.get("/_latet/gateway/v1/snapshot", Some(&eraser)).0,
            "403",
        ),
        (
            "forget token cannot mask",
            server
                .post("/_latet/apps/v1/mask", Some(&eraser), &json!({"text": "a"}))
                .0,
            "403",
        ),
        (
            "admin API with a key token",
            server.get("/_latet/admin/v1/keys", Some(&first)).0,
            "401",
        ),
        (
            "bad feed query",
            server
                .get("/_latet/gateway/v1/events?after=x", Some(&first))
                .0,
            "400",
        ),
        (
            "wrong wire version",
            server
                .post(
                    "/_latet/gateway/v1/entries",
                    Some(&first),
                    &json!({"version": 9, "values": []}),
                )
                .0,
            "400",
        ),
        (
            "exactly 1,000 values",
            forget(
                Some(&eraser),
                &json!({"values": (0..1000).map(|i| format!("v{i}")).collect::<Vec<_>>()}),
            )
            .0,
            "200",
        ),
    ];
    for (what, status, expected) in cases {
        assert_eq!(status.to_string(), expected, "{what}");
    }
    // A 400 never quotes the body.
    let (_, body) = server.post_raw(
        "/_latet/apps/v1/forget",
        Some(&eraser),
        r#"{"values": "mario.rossi@acme.it"}"#,
    );
    assert!(!body.to_string().contains("mario"), "{body}");
}

#[test]
fn a_failing_admin_log_forgets_nothing_and_answers_503() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let gateway = server.create_key("Shop");
    let eraser = server.add_token("Shop", "erasure", &["forget"]);
    server.entries(&gateway, &[("email", "mario.rossi@acme.it")]);
    let before = server.snapshot(&gateway);

    // The fault: the admin log refuses every row (a trigger in the real store).
    let (refuse, allow) = server.refuse_inserts("admin_log");
    server.exec_sql(&refuse);
    let values = json!({"values": ["mario.rossi@acme.it"]});
    let (status, body) = server.post("/_latet/apps/v1/forget", Some(&eraser), &values);
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["error"], "unavailable");
    let (status, _) = server.post(
        "/_latet/admin/v1/keys/Shop/forget",
        Some(&server.admin_token()),
        &values,
    );
    assert_eq!(status, 503);

    let after = server.snapshot(&gateway);
    assert_eq!(
        after, before,
        "nothing forgotten: same entries, generation, seq, retired"
    );
    let (_, feed) = server.get(
        &format!("/_latet/gateway/v1/events?after={}", before["seq"]),
        Some(&gateway),
    );
    assert_eq!(feed["events"], json!([]));

    // The fault gone, the same call forgets.
    server.exec_sql(&allow);
    let (status, body) = server.post("/_latet/apps/v1/forget", Some(&eraser), &values);
    assert_eq!((status, body), (200, json!({"forgotten": 1, "unknown": 0})));
    assert_eq!(server.admin_log("apps.forgotten").len(), 1);

    let (_, metrics) = server.get("/metrics", None);
    let metrics = metrics.as_str().unwrap().to_string();
    assert!(
        metrics.contains(r#"latet_forget_calls_total{path="apps",outcome="unavailable"} 1"#),
        "{metrics}"
    );
    assert!(metrics.contains(r#"latet_forget_calls_total{path="apps",outcome="ok"} 1"#));
}

#[test]
fn a_disabled_key_refuses_all_but_forget() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let gateway = server.create_key("Shop");
    let eraser = server.add_token("Shop", "erasure", &["forget"]);
    server.entries(
        &gateway,
        &[("phone", "+39 347 123 4567"), ("name", "Mario Rossi")],
    );
    let admin = server.admin_token();
    let (status, _) = server.post(
        "/_latet/admin/v1/keys/Shop/disable",
        Some(&admin),
        &json!({}),
    );
    assert_eq!(status, 200);

    let (status, body) = server.get("/_latet/gateway/v1/snapshot", Some(&gateway));
    assert_eq!(
        (status, body["error"].as_str()),
        (403, Some("key_disabled"))
    );
    let (status, _) = server.post(
        "/_latet/apps/v1/mask",
        Some(&gateway),
        &json!({"text": "x"}),
    );
    assert_eq!(status, 403);

    // F4: forget works with the key disabled, both ways.
    let (status, body) = server.post(
        "/_latet/apps/v1/forget",
        Some(&eraser),
        &json!({"values": ["Mario Rossi"]}),
    );
    assert_eq!((status, body), (200, json!({"forgotten": 1, "unknown": 0})));
    let (status, body) = server.post(
        "/_latet/admin/v1/keys/Shop/forget",
        Some(&admin),
        &json!({"values": ["+39 347 123 4567"]}),
    );
    assert_eq!((status, body), (200, json!({"forgotten": 1, "unknown": 0})));

    let (status, _) = server.post(
        "/_latet/admin/v1/keys/Shop/enable",
        Some(&admin),
        &json!({}),
    );
    assert_eq!(status, 200);
    let snapshot = server.snapshot(&gateway);
    assert_eq!(snapshot["entries"], json!([]));
    assert_eq!(snapshot["generation"], 3);
}

#[test]
fn the_long_poll_wakes_within_100_ms_of_a_forget() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let gateway = server.create_key("Shop");
    let eraser = server.add_token("Shop", "erasure", &["forget"]);
    server.entries(&gateway, &[("name", "Mario Rossi")]);
    let head = server.snapshot(&gateway)["seq"].as_u64().unwrap();

    // Without events, the poll waits out its wait_ms.
    let started = Instant::now();
    let (_, empty) = server.get(
        &format!("/_latet/gateway/v1/events?after={head}&wait_ms=300"),
        Some(&gateway),
    );
    assert_eq!(empty["events"], json!([]));
    assert!(started.elapsed() >= Duration::from_millis(290));

    let poll = poll_events_in_background(&server.url, &gateway, head);
    std::thread::sleep(Duration::from_millis(500));
    let (status, _) = server.post(
        "/_latet/apps/v1/forget",
        Some(&eraser),
        &json!({"values": ["Mario Rossi"]}),
    );
    let forgotten_at = Instant::now();
    assert_eq!(status, 200);
    let (woke_at, answer) = poll.join().unwrap();
    let late = woke_at.saturating_duration_since(forgotten_at);
    assert!(
        late < Duration::from_millis(100),
        "woke {late:?} after the forget answered"
    );
    assert_eq!(answer["events"][0]["type"], "forgotten");
    assert_eq!(answer["events"][0]["seq"], head + 1);
}

#[test]
fn mask_and_restore_plain_text_for_apps() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let token = server.create_key("Shop");
    let eraser = server.add_token("Shop", "erasure", &["forget"]);
    let line = "2024-05-01 order 17 by mario.rossi@acme.it";
    let (status, masked) = server.post(
        "/_latet/apps/v1/mask",
        Some(&token),
        &json!({ "text": line }),
    );
    assert_eq!(status, 200, "{masked}");
    let masked = masked["text"].as_str().unwrap().to_string();
    assert!(
        !masked.contains("mario.rossi") && masked.starts_with("2024-05-01 order 17 by "),
        "{masked}"
    );
    let (_, restored) = server.post(
        "/_latet/apps/v1/restore",
        Some(&token),
        &json!({ "texts": [masked.clone(), "nothing here"] }),
    );
    assert_eq!(restored, json!({ "texts": [line, "nothing here"] }));

    // After a forget the old surrogate restores nothing (F7).
    server.post(
        "/_latet/apps/v1/forget",
        Some(&eraser),
        &json!({"values": ["mario.rossi@acme.it"]}),
    );
    let (_, restored) = server.post(
        "/_latet/apps/v1/restore",
        Some(&token),
        &json!({ "text": masked.clone() }),
    );
    let restored = restored["text"].as_str().unwrap();
    assert!(!restored.contains("mario.rossi"), "{restored}");
}

#[test]
fn openapi_and_metrics_are_served() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let token = server.create_key("Shop \"quoted\"");
    server.entries(&token, &[("email", "mario.rossi@acme.it")]);
    let (status, doc) = server.get("/openapi.json", None);
    assert_eq!(status, 200);
    assert_eq!(doc["openapi"], "3.0.3");
    for path in [
        "/_latet/gateway/v1/snapshot",
        "/_latet/gateway/v1/events",
        "/_latet/gateway/v1/entries",
        "/_latet/apps/v1/forget",
        "/_latet/apps/v1/mask",
        "/_latet/apps/v1/restore",
        "/_latet/admin/v1/keys",
        "/_latet/admin/v1/keys/{name}/enable",
        "/_latet/admin/v1/keys/{name}/disable",
        "/_latet/admin/v1/keys/{name}/tokens",
        "/_latet/admin/v1/keys/{name}/forget",
        "/_latet/admin/v1/log",
        "/metrics",
    ] {
        assert!(doc["paths"].get(path).is_some(), "{path} undocumented");
    }
    let (_, metrics) = server.get("/metrics", None);
    let metrics = metrics.as_str().unwrap();
    assert!(
        metrics.contains(r#"latet_vault_values{key="Shop \"quoted\""} 2"#),
        "{metrics}"
    );
    assert!(metrics.contains(r#"latet_vault_near_limit{key="Shop \"quoted\""} 0"#));
    assert!(metrics.contains(
        r#"latet_http_requests_total{route="/_latet/gateway/v1/entries",status="200"} 1"#
    ));
    assert!(
        !metrics.contains("mario") && !metrics.contains("acme"),
        "no value in metrics"
    );
}

#[test]
fn near_limit_weighs_retired_surrogates_with_values_and_a_full_vault_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let (status, body) = server.post(
        "/_latet/admin/v1/keys",
        Some(&server.admin_token()),
        &json!({"name": "Tiny", "value_limit": 10}),
    );
    assert_eq!(status, 200);
    let token = body["token"].as_str().unwrap().to_string();
    let eraser = server.add_token("Tiny", "erasure", &["forget"]);
    // Mask and forget in a loop: the vault stays empty, its retired set grows.
    for i in 0..9 {
        let value = format!("Bucle Persona{i}");
        server.entries(&token, &[("name", &value)]);
        server.post(
            "/_latet/apps/v1/forget",
            Some(&eraser),
            &json!({ "values": [value] }),
        );
    }
    let (_, metrics) = server.get("/metrics", None);
    let metrics = metrics.as_str().unwrap();
    assert!(
        metrics.contains(r#"latet_vault_values{key="Tiny"} 0"#),
        "{metrics}"
    );
    assert!(metrics.contains(r#"latet_vault_retired_surrogates{key="Tiny"} 9"#));
    assert!(metrics.contains(r#"latet_vault_near_limit{key="Tiny"} 1"#));

    // The limit counts values only; past it, nothing is created.
    let values: Vec<(String, String)> = (0..11)
        .map(|i| ("name".into(), format!("Lleno Nombre{i}")))
        .collect();
    let pairs: Vec<serde_json::Value> = values
        .iter()
        .map(|(k, v)| json!({"kind": k, "value": v}))
        .collect();
    let (status, body) = server.post(
        "/_latet/gateway/v1/entries",
        Some(&token),
        &json!({"version": 1, "values": pairs[..10]}),
    );
    assert_eq!(status, 200, "{body}");
    let (status, body) = server.post(
        "/_latet/gateway/v1/entries",
        Some(&token),
        &json!({"version": 1, "values": pairs[10..]}),
    );
    assert_eq!((status, body["error"].as_str()), (409, Some("vault_full")));
    assert_eq!(
        server.snapshot(&token)["entries"].as_array().unwrap().len(),
        10
    );
}

#[test]
fn the_apps_api_masks_person_names_but_not_the_never_mask_list() {
    let dir = tempfile::tempdir().unwrap();
    let detectors = dir.path().join("detectors.json");
    std::fs::write(&detectors, r#"{"neverMask": ["Ferrari", "Marco Polo"]}"#).unwrap();
    let server = Server::start_with(dir.path(), &["--detectors", detectors.to_str().unwrap()]);
    let token = server.create_key("Shop");
    let line = "Lucía Fernández flies Marco Polo to meet the Ferrari team.";
    let (status, masked) = server.post(
        "/_latet/apps/v1/mask",
        Some(&token),
        &json!({ "text": line }),
    );
    assert_eq!(status, 200, "{masked}");
    let masked = masked["text"].as_str().unwrap().to_string();
    assert!(
        !masked.contains("Lucía") && !masked.contains("Fernández"),
        "{masked}"
    );
    assert!(
        masked.ends_with(" flies Marco Polo to meet the Ferrari team."),
        "{masked}"
    );
    let (_, restored) = server.post(
        "/_latet/apps/v1/restore",
        Some(&token),
        &json!({ "text": masked }),
    );
    assert_eq!(restored["text"], line);
}

/// `latet serve --detectors FILE` with `content`: its stderr (it must fail).
fn serve_refuses_detectors(content: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let detectors = dir.path().join("detectors.json");
    std::fs::write(&detectors, content).unwrap();
    let out = clean_env(&mut std::process::Command::new(BIN))
        .args(["serve", "--listen", "127.0.0.1:0", "--db"])
        .arg(dir.path().join("latet.db"))
        .arg("--admin-token-file")
        .arg(dir.path().join("admin.token"))
        .arg("--detectors")
        .arg(&detectors)
        .output()
        .unwrap();
    assert!(!out.status.success(), "{content}: started");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_bad_detectors_file_is_refused_at_start_naming_the_field() {
    let err = serve_refuses_detectors(r#"{"neverMask": ["Ferrari", "  "]}"#);
    assert!(err.contains("neverMask[1]: is empty"), "{err}");
    assert!(!err.contains("Ferrari"), "the error shows no entry");
    // A wrong type: serde's own message would quote the string.
    let err = serve_refuses_detectors(r#"{"neverMask": "Mario Rossi"}"#);
    assert!(err.contains("error at line 1 column"), "{err}");
    assert!(!err.contains("Mario"), "the error shows no entry: {err}");
}
