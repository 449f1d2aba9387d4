//! Restart with the same file keeps everything: the process is killed hard
//! in the middle of a load of entries; no committed forget is lost and `seq`
//! continues without a gap.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[test]
fn a_hard_kill_loses_no_committed_forget_and_seq_continues() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let gateway = server.create_key("Shop");
    let eraser = server.add_token("Shop", "erasure", &["forget"]);
    let to_forget: Vec<String> = (0..40).map(|i| format!("Olvido Persona{i}")).collect();
    let pairs: Vec<(&str, &str)> = to_forget.iter().map(|v| ("name", v.as_str())).collect();
    let created = server.entries(&gateway, &pairs);
    let surrogates: Vec<String> = to_forget
        .iter()
        .map(|v| surrogate_of(&created, v).unwrap())
        .collect();

    // A load of entries in the background, until the kill cuts it.
    let stop = Arc::new(AtomicBool::new(false));
    let loader = {
        let (url, token, stop) = (server.url.clone(), gateway.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut batch = 0;
            while !stop.load(Ordering::Relaxed) {
                let values: Vec<Value> = (0..50)
                    .map(|i| json!({"kind": "name", "value": format!("Carga Nombre{batch}x{i}")}))
                    .collect();
                let sent = agent()
                    .post(&format!("{url}/_latet/gateway/v1/entries"))
                    .set("Authorization", &format!("Bearer {token}"))
                    .send_json(json!({"version": 1, "values": values}));
                if sent.is_err() {
                    break; // the server is gone
                }
                batch += 1;
            }
        })
    };

    // Forgets committed (answered 200) while the load runs.
    let mut committed = Vec::new();
    for (i, value) in to_forget.iter().enumerate().take(30) {
        let (status, body) = server.post(
            "/_latet/apps/v1/forget",
            Some(&eraser),
            &json!({"values": [value]}),
        );
        assert_eq!((status, body), (200, json!({"forgotten": 1, "unknown": 0})));
        committed.push(i);
        std::thread::sleep(Duration::from_millis(5));
    }
    let (_, feed) = server.get("/_latet/gateway/v1/events?after=0", Some(&gateway));
    let head_seen = feed["head"].as_u64().unwrap();
    server.kill();
    stop.store(true, Ordering::Relaxed);
    loader.join().unwrap();

    // Same file, new process.
    let server = Server::start(dir.path());
    let snapshot = server.snapshot(&gateway);
    let head = snapshot["seq"].as_u64().unwrap();
    assert!(head >= head_seen, "seq went back: {head} < {head_seen}");
    for i in &committed {
        assert!(
            surrogate_of(&snapshot, &to_forget[*i]).is_none(),
            "a committed forget was lost"
        );
        assert!(is_retired(&snapshot, &surrogates[*i]));
    }
    for i in 30..40 {
        assert_eq!(
            surrogate_of(&snapshot, &to_forget[i]).as_deref(),
            Some(surrogates[i].as_str())
        );
    }
    assert_eq!(snapshot["generation"], 1 + committed.len() as u64);

    // The feed is gapless from 1 to head, and the next event is head + 1.
    let mut seqs = Vec::new();
    let mut after = 0;
    loop {
        let (_, feed) = server.get(
            &format!("/_latet/gateway/v1/events?after={after}"),
            Some(&gateway),
        );
        let events = feed["events"].as_array().unwrap();
        if events.is_empty() {
            break;
        }
        for e in events {
            seqs.push(e["seq"].as_u64().unwrap());
        }
        after = *seqs.last().unwrap();
    }
    assert_eq!(seqs, (1..=head).collect::<Vec<_>>());
    let (status, _) = server.post(
        "/_latet/apps/v1/forget",
        Some(&eraser),
        &json!({"values": [to_forget[35]]}),
    );
    assert_eq!(status, 200);
    let (_, feed) = server.get(
        &format!("/_latet/gateway/v1/events?after={head}"),
        Some(&gateway),
    );
    assert_eq!(feed["events"][0]["seq"], head + 1);
    // The tokens and the admin token survived too.
    assert_eq!(
        server.admin_log("apps.forgotten").len(),
        committed.len() + 1
    );
}

/// SIGTERM ends open long-polls at once (they answer with what there is)
/// and the process exits promptly: before, a poll held the graceful shutdown
/// for its whole `wait_ms` (~25 s with the filter's settings).
#[test]
fn sigterm_answers_open_long_polls_and_exits_promptly() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(dir.path());
    let gateway = server.create_key("Shop");
    let head = server.snapshot(&gateway)["seq"].as_u64().unwrap();
    let url = server.url.clone();
    let poll = std::thread::spawn(move || {
        let started = std::time::Instant::now();
        let answer: Value = agent()
            .get(&format!(
                "{url}/_latet/gateway/v1/events?after={head}&wait_ms=20000"
            ))
            .set("Authorization", &format!("Bearer {gateway}"))
            .call()
            .unwrap()
            .into_json()
            .unwrap();
        (started.elapsed(), answer)
    });
    std::thread::sleep(Duration::from_millis(500));
    let terminated = std::time::Instant::now();
    let status = std::process::Command::new("kill")
        .args(["-TERM", &server.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let (waited, answer) = poll.join().unwrap();
    assert_eq!(answer["events"], json!([]));
    assert!(
        waited < Duration::from_secs(5),
        "the poll answered after {waited:?}"
    );
    loop {
        if server.child.try_wait().unwrap().is_some() {
            break;
        }
        assert!(
            terminated.elapsed() < Duration::from_secs(5),
            "still running 5 s after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
