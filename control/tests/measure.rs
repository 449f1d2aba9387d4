//! Measurements, run by hand:
//! `cargo test --release -p latet --test measure -- --ignored --nocapture`.
//! Figures go to the README; nothing is asserted but that calls succeed.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::json;
use std::time::Instant;

fn fill(server: &Server, token: &str, prefix: &str, count: usize) -> Vec<String> {
    let values: Vec<String> = (0..count)
        .map(|i| format!("{prefix}{i}@example-corp{}.com", i % 97))
        .collect();
    let started = Instant::now();
    for chunk in values.chunks(1000) {
        let pairs: Vec<(&str, &str)> = chunk.iter().map(|v| ("email", v.as_str())).collect();
        server.entries(token, &pairs);
    }
    println!(
        "entries: {count} values in {:?} ({:.0} values/s)",
        started.elapsed(),
        count as f64 / started.elapsed().as_secs_f64()
    );
    values
}

#[test]
#[ignore = "measurement, run by hand"]
fn measure_forget_of_1000_values() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let token = server.create_key("Shop");
    let eraser = server.add_token("Shop", "erasure", &["forget"]);
    fill(&server, &token, "background", 20_000);
    for round in 0..3 {
        let values = fill(&server, &token, &format!("round{round}x"), 1000);
        let started = Instant::now();
        let (status, body) = server.post(
            "/_latet/apps/v1/forget",
            Some(&eraser),
            &json!({ "values": values }),
        );
        let took = started.elapsed();
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["forgotten"], 1000);
        println!("forget of 1,000 values (vault of ~21k): {took:?}");
    }
}

#[test]
#[ignore = "measurement, run by hand"]
fn measure_snapshot_of_100k_entries() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let token = server.create_key("Shop");
    fill(&server, &token, "person", 100_000);
    for _ in 0..3 {
        let started = Instant::now();
        let response = agent()
            .get(&format!("{}/_latet/gateway/v1/snapshot", server.url))
            .set("Authorization", &format!("Bearer {token}"))
            .call()
            .unwrap();
        let mut body = String::new();
        std::io::Read::read_to_string(&mut response.into_reader(), &mut body).unwrap();
        let took = started.elapsed();
        let snapshot: serde_json::Value = serde_json::from_str(&body).unwrap();
        println!(
            "snapshot: {} entries, {} bytes ({:.1} MiB), {took:?}",
            snapshot["entries"].as_array().unwrap().len(),
            body.len(),
            body.len() as f64 / (1024.0 * 1024.0)
        );
    }
    if let Some(file) = server.sqlite_file() {
        let db = std::fs::metadata(file).unwrap().len();
        println!(
            "database file: {:.1} MiB (WAL aside)",
            db as f64 / (1024.0 * 1024.0)
        );
    }
}

#[test]
#[ignore = "measurement, run by hand"]
fn measure_entries_creation() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let token = server.create_key("Shop");
    // New values (1,000 a call), then the same values again (all found).
    for round in 0..3 {
        let values = fill(&server, &token, &format!("round{round}x"), 5_000);
        let started = Instant::now();
        for chunk in values.chunks(1000) {
            let pairs: Vec<(&str, &str)> = chunk.iter().map(|v| ("email", v.as_str())).collect();
            server.entries(&token, &pairs);
        }
        println!(
            "entries again (all found): 5000 values in {:?}",
            started.elapsed()
        );
    }
}
