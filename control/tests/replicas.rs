//! Two `latet serve` replicas over one PostgreSQL database, as behind one
//! address: either answers for the other's writes, a long-poll on one
//! wakes within 100 ms of a forget through the other, entries made for the
//! same value on both at once end as one entry, and what they must share
//! (master key, admin token) is checked at start. Needs `LATET_TEST_PG_URL`
//! (skipped without it unless PostgreSQL runs are required).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::json;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Replica A in `a`, replica B in `b` (no admin token file of its own),
/// both with A's master key; None when no cluster is given.
fn two_replicas(name: &str, a: &Path, b: &Path) -> Option<(Server, Server)> {
    let cluster = pg_cluster_url()?;
    let db = fresh_pg_database(&cluster, name);
    let first = Server::start_on(a, &db, &[]);
    let key = master_key_file(a);
    let second = Server::start_on(b, &db, &["--master-key-file", key.to_str().unwrap()]);
    Some((first, second))
}

/// `latet serve` on `db` that must refuse to start; returns its stderr.
fn refused_start(db: &str, dir: &Path, master_key: &Path) -> String {
    let mut command = Command::new(BIN);
    clean_env(&mut command)
        .arg("serve")
        .arg("--db")
        .arg(db)
        .args(["--listen", "127.0.0.1:0", "--master-key-file"])
        .arg(master_key)
        .arg("--admin-token-file")
        .arg(dir.join("admin.token"))
        .stdin(Stdio::null());
    let output = command.output().unwrap();
    assert!(!output.status.success(), "started");
    assert!(output.stdout.is_empty(), "it never listened");
    String::from_utf8(output.stderr).unwrap()
}

#[test]
fn either_replica_answers_for_the_other_and_polls_wake_across_them() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let Some((first, second)) = two_replicas("latet_replicas_wake", a.path(), b.path()) else {
        return;
    };
    // One admin token for both: B has no file, it takes the database's.
    assert!(!b.path().join("admin.token").exists());
    let admin = first.admin_token();
    let (status, _) = second.post(
        "/_latet/admin/v1/keys",
        Some(&admin),
        &json!({"name": "Shop"}),
    );
    assert_eq!(status, 200, "the key made through B");
    let gateway = first.add_token("Shop", "gw", &["gateway"]);
    let eraser = first.add_token("Shop", "erasure", &["forget"]);
    let made = second.entries(&gateway, &[("name", "Mario Rossi")]);
    let snapshot = first.snapshot(&gateway);
    assert_eq!(
        surrogate_of(&snapshot, "Mario Rossi"),
        surrogate_of(&made, "Mario Rossi"),
        "A serves what B made"
    );
    let head = snapshot["seq"].as_u64().unwrap();

    // A long-poll on A, a forget through B.
    let poll = poll_events_in_background(&first.url, &gateway, head);
    std::thread::sleep(Duration::from_millis(1500));
    let (status, _) = second.post(
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
        "A woke {late:?} after B's forget answered"
    );
    assert_eq!(answer["events"][0]["type"], "forgotten");
    assert_eq!(answer["events"][0]["seq"], head + 1);
    assert_eq!(first.admin_log("apps.forgotten").len(), 1);
}

#[test]
fn entries_made_at_once_on_two_replicas_end_as_one_entry_each() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let Some((first, second)) = two_replicas("latet_replicas_entries", a.path(), b.path()) else {
        return;
    };
    let gateway = first.create_key("Shop");
    let values: Vec<String> = (0..40).map(|i| format!("Persona Numero{i}")).collect();
    let ask = |server: &Server| {
        let (url, token, values) = (server.url.clone(), gateway.clone(), values.clone());
        std::thread::spawn(move || {
            // One value a call, as gateways ask: many chances to interleave.
            values
                .iter()
                .map(|value| {
                    let body: serde_json::Value = agent()
                        .post(&format!("{url}/_latet/gateway/v1/entries"))
                        .set("Authorization", &format!("Bearer {token}"))
                        .send_json(
                            json!({"version": 1, "values": [{"kind": "name", "value": value}]}),
                        )
                        .unwrap()
                        .into_json()
                        .unwrap();
                    surrogate_of(&body, value).unwrap()
                })
                .collect::<Vec<_>>()
        })
    };
    let (on_a, on_b) = (ask(&first), ask(&second));
    let (on_a, on_b) = (on_a.join().unwrap(), on_b.join().unwrap());
    assert_eq!(on_a, on_b, "both replicas answered the same surrogates");
    let snapshot = second.snapshot(&gateway);
    assert_eq!(snapshot["entries"].as_array().unwrap().len(), values.len());
    // Each value was added once: one `added` event per value, no more.
    let (_, feed) = first.get("/_latet/gateway/v1/events?after=0", Some(&gateway));
    let added: usize = feed["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["entries"].as_array().unwrap().len())
        .sum();
    assert_eq!(added, values.len());
}

#[test]
fn a_replica_with_another_master_key_or_admin_token_refuses_to_start() {
    let Some(cluster) = pg_cluster_url() else {
        return;
    };
    let db = fresh_pg_database(&cluster, "latet_replicas_secrets");
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let first = Server::start_on(a.path(), &db, &[]);
    let key = master_key_file(a.path());

    // Another master key: refused, naming the options, never a key.
    let other = master_key_file(b.path());
    let stderr = refused_start(&db, b.path(), &other);
    assert!(stderr.contains("master key"), "{stderr}");
    let theirs = std::fs::read_to_string(&other).unwrap();
    assert!(!stderr.contains(theirs.trim()), "{stderr}");

    // The same key but an admin token file of another token: refused.
    std::fs::write(b.path().join("admin.token"), "latet_admin_not_this_one\n").unwrap();
    let stderr = refused_start(&db, b.path(), &key);
    assert!(stderr.contains("--admin-token-file"), "{stderr}");
    assert!(!stderr.contains("not_this_one"), "{stderr}");

    // A copy of A's token file: accepted.
    std::fs::copy(a.path().join("admin.token"), b.path().join("admin.token")).unwrap();
    let second = Server::start_on(b.path(), &db, &["--master-key-file", key.to_str().unwrap()]);
    let (status, _) = second.get("/_latet/admin/v1/keys", Some(&first.admin_token()));
    assert_eq!(status, 200);
}

#[test]
fn a_lost_notification_only_delays_the_wake_up() {
    let Some(cluster) = pg_cluster_url() else {
        return;
    };
    let db = fresh_pg_database(&cluster, "latet_replicas_lost_notify");
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_on(dir.path(), &db, &[]);
    let gateway = server.create_key("Shop");
    server.entries(&gateway, &[("name", "Mario Rossi")]);
    let head = server.snapshot(&gateway)["seq"].as_u64().unwrap();

    let poll = poll_events_in_background(&server.url, &gateway, head);
    std::thread::sleep(Duration::from_millis(300));
    // An event appended with no NOTIFY, as if the notification were lost.
    server.exec_sql(&format!(
        "INSERT INTO events (key_id, seq, type, body) SELECT id, {next}, 'added', ''::bytea FROM keys;
         UPDATE keys SET seq = {next};",
        next = head + 1
    ));
    let appended_at = Instant::now();
    let (woke_at, answer) = poll.join().unwrap();
    let late = woke_at.saturating_duration_since(appended_at);
    assert!(
        late < Duration::from_millis(1500),
        "the periodic re-read woke the poll {late:?} after the event"
    );
    assert_eq!(answer["events"][0]["seq"], head + 1);
}

#[test]
fn replicas_started_together_share_one_admin_token() {
    let Some(cluster) = pg_cluster_url() else {
        return;
    };
    let db = fresh_pg_database(&cluster, "latet_replicas_first_start");
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let key = master_key_file(dirs[0].path());
    let starts: Vec<_> = dirs
        .iter()
        .map(|dir| {
            let (dir, db, key) = (dir.path().to_path_buf(), db.clone(), key.clone());
            std::thread::spawn(move || {
                Server::start_on(&dir, &db, &["--master-key-file", key.to_str().unwrap()])
            })
        })
        .collect();
    let servers: Vec<Server> = starts.into_iter().map(|s| s.join().unwrap()).collect();
    // One replica made the token; the other kept no file of its own.
    let files: Vec<_> = dirs
        .iter()
        .map(|dir| dir.path().join("admin.token"))
        .filter(|path| path.exists())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let admin = std::fs::read_to_string(&files[0]).unwrap();
    for server in &servers {
        let (status, _) = server.get("/_latet/admin/v1/keys", Some(admin.trim()));
        assert_eq!(status, 200);
    }
}
