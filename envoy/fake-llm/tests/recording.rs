//! The request log records everything a provider would see: HTTP/1.1 and
//! HTTP/2 (prior knowledge), trailers, bodies that are not UTF-8, and a
//! request whose body never completes.

// Tests may unwrap and panic: a failure is the point.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod attack;
mod support;

use std::time::Duration;

use attack::client;
use attack::corpus::Attack;
use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

async fn log_of(fake: std::net::SocketAddr) -> Vec<Value> {
    let (status, body) = client::fake_call(fake, "GET", "/_fake/requests")
        .await
        .unwrap();
    assert_eq!(status, 200);
    serde_json::from_slice::<Value>(&body)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

async fn in_flight(fake: std::net::SocketAddr) -> u64 {
    let (_, body) = client::fake_call(fake, "GET", "/_fake/requests/in-flight")
        .await
        .unwrap();
    serde_json::from_slice::<Value>(&body).unwrap()["in_flight"]
        .as_u64()
        .unwrap()
}

fn attack(fields: Value) -> Attack {
    let mut line = json!({
        "id": "t", "category": "transport", "description": "d", "method": "POST",
        "path": "/v1/chat/completions?x=1",
        "headers": [["content-type", "application/json"], ["x-probe", "p"]],
        "values": ["v@atk-corp.it"], "transport": "http1",
        "body": {"model": "m", "messages": [{"role": "user", "content": "hello"}]},
    });
    for (key, value) in fields.as_object().unwrap() {
        line[key] = value.clone();
    }
    Attack::parse(&line.to_string()).unwrap()
}

#[tokio::test]
async fn http2_prior_knowledge_with_trailers_is_recorded_whole() {
    let fake = support::start().await;
    let sent =
        attack(json!({"transport": "http2", "chunks": [5], "trailers": [["x-trailer", "t1"]]}));
    let answer = client::send(fake, &sent).await.unwrap();
    assert_eq!(answer.status, 200);
    let log = log_of(fake).await;
    assert_eq!(log.len(), 1);
    let entry = &log[0];
    assert_eq!(entry["version"], "HTTP/2.0");
    assert_eq!(entry["path"], "/v1/chat/completions?x=1");
    assert_eq!(entry["headers"]["x-probe"], "p");
    assert_eq!(entry["headers"][":authority"], fake.to_string());
    assert_eq!(entry["trailers"], json!({"x-trailer": "t1"}));
    assert_eq!(entry["complete"], true);
    assert_eq!(
        serde_json::from_str::<Value>(entry["body"].as_str().unwrap()).unwrap(),
        json!({"model": "m", "messages": [{"role": "user", "content": "hello"}]})
    );
}

#[tokio::test]
async fn chunked_http1_trailers_are_recorded() {
    let fake = support::start().await;
    let sent = attack(
        json!({"transport": "chunked", "chunks": [3, 1], "trailers": [["x-trailer", "t2"]]}),
    );
    assert_eq!(client::send(fake, &sent).await.unwrap().status, 200);
    let log = log_of(fake).await;
    assert_eq!(log[0]["version"], "HTTP/1.1");
    assert_eq!(log[0]["trailers"], json!({"x-trailer": "t2"}));
    assert_eq!(log[0]["complete"], true);
}

#[tokio::test]
async fn a_body_that_is_not_utf8_is_also_given_in_base64() {
    let fake = support::start().await;
    let sent = attack(json!({"body": null, "body_base64": "/w=="}));
    client::send(fake, &sent).await.unwrap();
    let log = log_of(fake).await;
    assert_eq!(log[0]["body_base64"], "/w==");
    assert_eq!(log[0]["body"], "\u{fffd}");
}

#[tokio::test]
async fn a_request_cut_short_is_recorded_from_its_headers_on() {
    let fake = support::start().await;
    let mut stream = TcpStream::connect(fake).await.unwrap();
    stream
        .write_all(b"POST /v1/x HTTP/1.1\r\nhost: h\r\nx-probe: cut\r\ncontent-length: 100\r\n\r\n0123456789")
        .await
        .unwrap();
    // Headers in, body under way: logged, and in flight.
    let mut waited = 0;
    while log_of(fake)
        .await
        .first()
        .map(|e| e["body"] == "0123456789")
        != Some(true)
    {
        tokio::time::sleep(Duration::from_millis(5)).await;
        waited += 1;
        assert!(waited < 400, "the cut request was not logged");
    }
    assert_eq!(in_flight(fake).await, 1);
    let entry = &log_of(fake).await[0];
    assert_eq!(entry["headers"]["x-probe"], "cut");
    assert_eq!(entry["complete"], false);
    // The client goes away: the request ends, still logged, not complete.
    drop(stream);
    let mut waited = 0;
    while in_flight(fake).await != 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
        waited += 1;
        assert!(waited < 400, "the cut request stayed in flight");
    }
    let log = log_of(fake).await;
    assert_eq!(log.len(), 1);
    assert_eq!(log[0]["complete"], false);
    assert_eq!(log[0]["body"], "0123456789");
}
