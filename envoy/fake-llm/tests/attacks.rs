//! The attack corpus (`envoy/attacks/corpus.jsonl`) against real Envoy with
//! the filter, this fake LLM as the provider. `envoy/attacks.sh` starts the
//! gateway on free ports and runs the ignored test here with `--ignored`:
//!
//! | variable | what |
//! |---|---|
//! | `LATET_ATTACKS_GATEWAY` | Envoy's listener, `http://127.0.0.1:PORT` |
//! | `LATET_ATTACKS_FAKE` | the fake LLM |
//! | `LATET_ATTACKS_LOGS` | a directory of logs that must hold no value (optional) |
//! | `LATET_ATTACKS_REPORT` | `1`: report only, never fail (for measuring) |
//! | `LATET_ATTACKS_ONLY` | comma-separated ids or id prefixes to run (optional) |
//! | `LATET_ATTACKS_JSON` | a file to write the results to, as JSON (optional) |
//! | `LATET_ATTACKS_KNOWN` | a known-leaks file (`envoy/attacks/known-leaks.txt`): leaks of the ids it lists do not fail the run (optional) |
//!
//! An attack **holds** when none of its values reached the upstream in any
//! form (see `attack/leak.rs` for the forms), a refusal by the gateway
//! included; it **leaks** otherwise. Each leak is printed as one line with
//! the attack's id, category and where the value was seen — never the
//! value — then `N attacks held, M leaked`. The run fails on any leak whose
//! id the known-leaks file does not list (all of them without the file),
//! and on any value in a log, unless `LATET_ATTACKS_REPORT=1`.
//!
//! The other tests here run in a plain `cargo test`: the corpus is sound
//! (every value one the detectors find alone, present in its request as
//! sent, owned by one attack) and the leak rule finds every form.

// Tests may unwrap and panic: a failure is the point.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod attack;

use std::collections::{BTreeMap, HashSet};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use attack::corpus::{self, Attack, Transport, CATEGORIES};
use attack::leak::{self, Needle};
use attack::{client, leak::leaks};
use latet_core::detect::{DetectorConfig, Detectors};
use serde_json::{json, Value};

fn needles(attack: &Attack) -> Vec<Needle> {
    attack.values.iter().map(|v| Needle::new(v)).collect()
}

/// The ids a known-leaks file lists: one per line, `#` starts a comment.
fn known_leaks(text: &str) -> Vec<String> {
    text.lines()
        .map(|line| line.split('#').next().unwrap_or_default().trim())
        .filter(|id| !id.is_empty())
        .map(str::to_owned)
        .collect()
}

fn known_leaks_file() -> std::path::PathBuf {
    corpus::path().with_file_name("known-leaks.txt")
}

// --- the corpus is sound ------------------------------------------------------

#[test]
fn known_leaks_are_corpus_ids() {
    let ids: HashSet<String> = corpus::load().unwrap().into_iter().map(|a| a.id).collect();
    let file = known_leaks_file();
    let Ok(text) = std::fs::read_to_string(&file) else {
        return; // no file: every leak fails the run
    };
    let mut seen = HashSet::new();
    for id in known_leaks(&text) {
        assert!(
            ids.contains(&id),
            "known-leaks.txt lists {id}, not in the corpus"
        );
        assert!(seen.insert(id.clone()), "known-leaks.txt lists {id} twice");
    }
}

#[test]
fn corpus_is_sound() {
    let attacks = corpus::load().unwrap();
    assert!(
        attacks.len() >= 130,
        "the corpus has {} attacks",
        attacks.len()
    );
    let detectors = Detectors::new(&DetectorConfig::default()).unwrap();
    let mut ids = HashSet::new();
    let mut owner: BTreeMap<&str, &str> = BTreeMap::new();
    for attack in &attacks {
        let id = attack.id.as_str();
        assert!(ids.insert(id), "{id}: id used twice");
        assert!(
            id.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
            "{id}: ids are lower case, digits and dashes"
        );
        assert!(
            CATEGORIES.contains(&attack.category.as_str()),
            "{id}: unknown category"
        );
        assert!(!attack.values.is_empty(), "{id}: no values");
        assert!(
            attack.trailers.is_empty() || attack.transport != Transport::Http1,
            "{id}: trailers need chunked or http2"
        );
        assert!(attack.path.starts_with('/'), "{id}: the path starts with /");
        for (index, value) in attack.values.iter().enumerate() {
            assert!(
                owner.insert(value, id).is_none(),
                "{id}: value {index} belongs to another attack too"
            );
            // The detectors know it: found alone, as a whole.
            let mut found = Vec::new();
            detectors.find(value, &mut found);
            assert!(
                found.iter().any(|f| f.start == 0 && f.end == value.len()),
                "{id}: value {index} is not found whole by the detectors ({found:?})"
            );
            // The log check's markers.
            if value.contains('@') {
                assert!(
                    value.contains("atk-corp"),
                    "{id}: value {index}: an e-mail at an atk-corp domain"
                );
            }
        }
        // Each value is in the request as sent, so the leak rule sees it.
        let recorded = attack.as_recorded();
        for (index, needle) in needles(attack).iter().enumerate() {
            assert!(
                !leaks(&recorded, std::slice::from_ref(needle)).is_empty(),
                "{id}: value {index} is not in the request as sent"
            );
        }
    }
    // No value holds another attack's value (a leak names one attack).
    let values: Vec<(&str, &str)> = owner.iter().map(|(v, id)| (*v, *id)).collect();
    for (value, id) in &values {
        for (other, other_id) in &values {
            if id != other_id {
                assert!(
                    !value
                        .to_ascii_lowercase()
                        .contains(&other.to_ascii_lowercase()),
                    "{id}: a value holds a value of {other_id}"
                );
            }
        }
    }
    for category in CATEGORIES {
        assert!(
            attacks.iter().any(|a| a.category == *category),
            "no attack of category {category}"
        );
    }
}

// --- the leak rule ------------------------------------------------------------

fn entry(path: &str, headers: Value, body: &str) -> Value {
    json!({"method": "POST", "path": path, "headers": headers, "body": body, "trailers": {}})
}

fn where_of(entry: &Value, value: &str) -> Vec<String> {
    leaks(entry, &[Needle::new(value)])
}

#[test]
fn leak_rule_reads_json_keys_strings_numbers_and_json_in_strings() {
    let email = "mario.rossi@atk-corp.it";
    let body = json!({
        "a": [{"b": email}],
        "k": {"Mario.Rossi@ATK-corp.it": 1},
        "n": 4539578763621486u64,
        "args": json!({"x": json!({"y": email}).to_string()}).to_string(),
    })
    .to_string();
    let got = where_of(&entry("/v1/x", json!({}), &body), email);
    assert_eq!(
        got,
        vec!["body:/a/0/b", "body:/args#/x#/y", "body:/k/<value> (key)",]
    );
    assert_eq!(
        where_of(&entry("/v1/x", json!({}), &body), "4539 5787 6362 1486"),
        vec!["body:/n"]
    );
    // Escapes: \u0040 and \/ are read as JSON.
    let escaped = r#"{"a":"mario.rossi\u0040atk-corp.it","b":"030\/1234567"}"#;
    let e = entry("/", json!({}), escaped);
    assert_eq!(where_of(&e, email), vec!["body:/a"]);
    assert_eq!(where_of(&e, "030/1234567"), vec!["body:/b"]);
    // Not JSON: the body as a whole, percent-decoded and + as space too.
    let form = "to=mario.rossi%40atk-corp.it&p=%2B39+347+123+4567";
    let e = entry("/", json!({}), form);
    assert_eq!(where_of(&e, email), vec!["body"]);
    assert_eq!(where_of(&e, "+39 347 123 4567"), vec!["body"]);
    assert!(where_of(&e, "+39 347 123 4568").is_empty());
}

#[test]
fn leak_rule_reads_path_query_headers_trailers_and_gzip() {
    let email = "mario.rossi@atk-corp.it";
    let e = json!({
        "method": "GET",
        "path": "/v1/files/mario.rossi%40atk-corp.it?to=mario.rossi%2540atk-corp.it",
        "headers": {"x-user": "MARIO.ROSSI@atk-corp.it", "x-203.0.113.7": "1"},
        "trailers": {"x-t": email},
        "body": "",
    });
    assert_eq!(
        where_of(&e, email),
        vec!["path", "query", "header:x-user", "trailer:x-t"]
    );
    assert_eq!(where_of(&e, "203.0.113.7"), vec!["header-name"]);
    // Digits with other separators, or none.
    let e = entry("/v1/x?c=4539-5787-6362-1486", json!({}), "");
    assert_eq!(where_of(&e, "4539 5787 6362 1486"), vec!["query"]);
    // A gzip body is read inflated.
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut encoder, json!({"user": email}).to_string().as_bytes()).unwrap();
    let gz = encoder.finish().unwrap();
    let e = json!({
        "method": "POST", "path": "/", "headers": {}, "trailers": {}, "body": "",
        "body_base64": base64_of(&gz),
    });
    assert_eq!(where_of(&e, email), vec!["body(gunzipped):/user"]);
    // A surrogate is not the value.
    let e = entry("/", json!({}), r#"{"a":"tommaso.ferrara@brightvale.it"}"#);
    assert!(where_of(&e, email).is_empty());
}

fn base64_of(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

// --- the run on real Envoy ----------------------------------------------------

fn addr_of(variable: &str) -> SocketAddr {
    let url = std::env::var(variable)
        .unwrap_or_else(|_| panic!("{variable} is not set: run envoy/attacks.sh"));
    url.trim_start_matches("http://")
        .trim_end_matches('/')
        .parse()
        .unwrap()
}

/// One attack's outcome.
struct Outcome {
    status: u16,
    /// Requests the upstream saw (their headers at least).
    reached: usize,
    /// Requests the upstream saw whole (body and end of stream).
    complete: usize,
    /// Where a value was seen (printable).
    locations: Vec<String>,
}

async fn in_flight(fake: SocketAddr) -> usize {
    let (_, body) = client::fake_call(fake, "GET", "/_fake/requests/in-flight")
        .await
        .unwrap();
    let value: Value = serde_json::from_slice(&body).unwrap();
    value["in_flight"].as_u64().unwrap_or(0) as usize
}

/// Until the fake has no request half-received (at most 5 s).
async fn settle(fake: SocketAddr) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while in_flight(fake).await > 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

async fn run_one(gateway: SocketAddr, fake: SocketAddr, attack: &Attack) -> Outcome {
    let (status, _) = client::fake_call(fake, "DELETE", "/_fake/requests")
        .await
        .unwrap();
    assert_eq!(status, 204, "the fake LLM's log could not be cleared");
    let status = match client::send(gateway, attack).await {
        Ok(answer) => answer.status,
        Err(step) => {
            println!("{}: not sent whole ({step})", attack.id);
            0
        }
    };
    settle(fake).await;
    if !(200..300).contains(&status) {
        // A refusal may race the headers Envoy had already sent upstream.
        tokio::time::sleep(Duration::from_millis(50)).await;
        settle(fake).await;
    }
    let (_, log) = client::fake_call(fake, "GET", "/_fake/requests")
        .await
        .unwrap();
    let log: Value = serde_json::from_slice(&log).unwrap();
    let entries = log.as_array().cloned().unwrap_or_default();
    let needles = needles(attack);
    let mut locations = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        for location in leaks(entry, &needles) {
            if entries.len() > 1 {
                locations.push(format!("request {}: {location}", index + 1));
            } else {
                locations.push(location);
            }
        }
    }
    Outcome {
        status,
        reached: entries.len(),
        complete: entries
            .iter()
            .filter(|e| e["complete"].as_bool() == Some(true))
            .count(),
        locations,
    }
}

fn selected(attack: &Attack, only: &[String]) -> bool {
    only.is_empty() || only.iter().any(|o| attack.id.starts_with(o.as_str()))
}

/// Every file under `dir` holding one of the corpus's values: (file, ids).
fn values_in_logs(dir: &std::path::Path, attacks: &[Attack]) -> Vec<(String, Vec<String>)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(path) = stack.pop() {
        if path.is_dir() {
            for entry in std::fs::read_dir(&path).unwrap().flatten() {
                stack.push(entry.path());
            }
        } else {
            files.push(path);
        }
    }
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read(&file).unwrap_or_default();
        let ids: Vec<String> = attacks
            .iter()
            .filter(|a| !leak::clean(&String::from_utf8_lossy(&text), &needles(a)))
            .map(|a| a.id.clone())
            .collect();
        if !ids.is_empty() {
            let name = file
                .strip_prefix(dir)
                .unwrap_or(&file)
                .display()
                .to_string();
            out.push((name, ids));
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the gateway: run envoy/attacks.sh"]
async fn attack_corpus_on_real_envoy() {
    let gateway = addr_of("LATET_ATTACKS_GATEWAY");
    let fake = addr_of("LATET_ATTACKS_FAKE");
    let report_only = std::env::var("LATET_ATTACKS_REPORT").is_ok_and(|v| v == "1");
    let only: Vec<String> = std::env::var("LATET_ATTACKS_ONLY")
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    let attacks: Vec<Attack> = corpus::load()
        .unwrap()
        .into_iter()
        .filter(|a| selected(a, &only))
        .collect();
    assert!(!attacks.is_empty(), "no attack selected");
    let all_needles: Vec<Needle> = attacks.iter().flat_map(needles).collect();
    let known: HashSet<String> = match std::env::var("LATET_ATTACKS_KNOWN") {
        Ok(file) if !file.is_empty() => known_leaks(&std::fs::read_to_string(&file).unwrap())
            .into_iter()
            .collect(),
        _ => HashSet::new(),
    };
    let (mut new_leaks, mut now_hold) = (Vec::new(), Vec::new());
    let started = Instant::now();
    println!("attack corpus: {} attacks", attacks.len());

    let mut per_category: BTreeMap<&str, (usize, usize, usize)> = BTreeMap::new();
    let mut results = Vec::new();
    let (mut held, mut leaked) = (0, 0);
    for attack in &attacks {
        let outcome = run_one(gateway, fake, attack).await;
        let counts = per_category.entry(attack.category.as_str()).or_default();
        // Refused: the gateway answered an error and no whole request went
        // upstream (its headers may have: Envoy sends them on before the
        // filter has the body).
        let refused = !(200..400).contains(&outcome.status) && outcome.complete == 0;
        if outcome.locations.is_empty() {
            if known.contains(&attack.id) {
                now_hold.push(attack.id.clone());
            }
            held += 1;
            counts.0 += 1;
            if refused {
                counts.1 += 1;
            }
        } else {
            if !known.contains(&attack.id) {
                new_leaks.push(attack.id.clone());
            }
            leaked += 1;
            counts.2 += 1;
            let mut shown: Vec<String> = outcome.locations.iter().take(8).cloned().collect();
            if outcome.locations.len() > 8 {
                shown.push(format!("+{} more", outcome.locations.len() - 8));
            }
            let line = format!(
                "LEAK {} ({}): {}",
                attack.id,
                attack.category,
                shown.join(", ")
            );
            // Never a value on a printed line.
            if leak::clean(&line, &all_needles) {
                println!("{line}");
            } else {
                println!(
                    "LEAK {} ({}): <location withheld>",
                    attack.id, attack.category
                );
            }
        }
        results.push(json!({
            "id": attack.id,
            "category": attack.category,
            "status": outcome.status,
            "reached_upstream": outcome.reached,
            "complete_upstream": outcome.complete,
            "leaked": !outcome.locations.is_empty(),
            "where": outcome.locations,
        }));
    }
    for (category, (h, refused, l)) in &per_category {
        println!("  {category}: {h} held ({refused} of them refused by the gateway), {l} leaked");
    }
    println!("ran in {:.1} s", started.elapsed().as_secs_f64());
    if let Ok(file) = std::env::var("LATET_ATTACKS_JSON") {
        let text = serde_json::to_string_pretty(&Value::Array(results)).unwrap();
        if leak::clean(&text, &all_needles) {
            std::fs::write(&file, text).unwrap();
        } else {
            println!("results not written: a location would have shown a value");
        }
    }

    // No value in a log (Envoy's, the control service's, the fake's).
    let mut log_hits = 0;
    if let Ok(dir) = std::env::var("LATET_ATTACKS_LOGS") {
        for (file, ids) in values_in_logs(std::path::Path::new(&dir), &attacks) {
            log_hits += 1;
            println!("LOG {file} holds values of: {}", ids.join(", "));
        }
    }
    if !known.is_empty() {
        println!(
            "known leaks (known-leaks.txt): {} listed, {} leaked as listed; not listed: {}",
            known.len(),
            leaked - new_leaks.len(),
            if new_leaks.is_empty() {
                "none".to_owned()
            } else {
                new_leaks.join(", ")
            }
        );
        if !now_hold.is_empty() {
            println!(
                "listed in known-leaks.txt but held now (remove them): {}",
                now_hold.join(", ")
            );
        }
    }
    println!("{held} attacks held, {leaked} leaked");
    if !report_only {
        assert_eq!(log_hits, 0, "values reached the logs (above)");
        assert!(
            new_leaks.is_empty(),
            "{} attacks leaked that known-leaks.txt does not list (above)",
            new_leaks.len()
        );
    }
}
