//! The fake LLM over real sockets: each API whole and streamed, chunking,
//! echo, tool-call echo, the request log.

// Tests may unwrap and panic: a failure is the point.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use serde_json::{json, Value};
use support::{post, send, start};

const TEXT: &str = "Hello, my name is Ada Lovelace and my mail is ada@example.org";

fn chat_request(stream: bool) -> Value {
    json!({
        "model": "gpt-test",
        "stream": stream,
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "an older question"},
            {"role": "assistant", "content": "an older answer"},
            {"role": "user", "content": TEXT},
        ],
    })
}

fn responses_request(stream: bool) -> Value {
    json!({
        "model": "gpt-test",
        "stream": stream,
        "input": [
            {"role": "user", "content": "an older question"},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": TEXT}]},
        ],
    })
}

fn anthropic_request(stream: bool) -> Value {
    json!({
        "model": "claude-test",
        "max_tokens": 64,
        "stream": stream,
        "messages": [
            {"role": "user", "content": "an older question"},
            {"role": "assistant", "content": [{"type": "text", "text": "an older answer"}]},
            {"role": "user", "content": [{"type": "text", "text": TEXT}]},
        ],
    })
}

/// Every text delta of a stream, in order.
fn deltas(api: &str, data: &[Value]) -> Vec<String> {
    data.iter()
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
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn whole_answers_echo_the_last_user_message() {
    let addr = start().await;
    let cases: [(&str, Value, &str); 3] = [
        (
            "/v1/chat/completions",
            chat_request(false),
            "/choices/0/message/content",
        ),
        (
            "/v1/responses",
            responses_request(false),
            "/output/0/content/0/text",
        ),
        ("/v1/messages", anthropic_request(false), "/content/0/text"),
    ];
    for (path, request, text_at) in cases {
        let answer = post(addr, path, &[], &request).await;
        assert_eq!(answer.status, 200, "{path}");
        assert_eq!(
            answer.header("content-type"),
            Some("application/json"),
            "{path}"
        );
        assert!(
            answer.header("content-length").is_some(),
            "{path}: whole answers have a length"
        );
        let body = answer.json();
        assert_eq!(body.pointer(text_at), Some(&json!(TEXT)), "{path}");
    }
}

#[tokio::test]
async fn whole_answer_shapes() {
    let addr = start().await;
    let chat = post(addr, "/v1/chat/completions", &[], &chat_request(false))
        .await
        .json();
    assert_eq!(chat["object"], "chat.completion");
    assert_eq!(chat["model"], "gpt-test");
    assert_eq!(chat["choices"][0]["finish_reason"], "stop");
    assert_eq!(chat["choices"][0]["message"]["role"], "assistant");
    assert!(chat["usage"]["total_tokens"].as_u64().unwrap() > 0);

    let responses = post(addr, "/v1/responses", &[], &responses_request(false))
        .await
        .json();
    assert_eq!(responses["object"], "response");
    assert_eq!(responses["status"], "completed");
    assert_eq!(responses["output"][0]["type"], "message");
    assert_eq!(responses["output"][0]["content"][0]["type"], "output_text");

    let message = post(addr, "/v1/messages", &[], &anthropic_request(false))
        .await
        .json();
    assert_eq!(message["type"], "message");
    assert_eq!(message["role"], "assistant");
    assert_eq!(message["model"], "claude-test");
    assert_eq!(message["stop_reason"], "end_turn");
    assert_eq!(message["content"][0]["type"], "text");
}

#[tokio::test]
async fn streams_send_one_event_per_write_in_pieces_of_at_most_three_chars() {
    let addr = start().await;
    let cases = [
        ("chat", "/v1/chat/completions", chat_request(true)),
        ("responses", "/v1/responses", responses_request(true)),
        ("anthropic", "/v1/messages", anthropic_request(true)),
    ];
    for (api, path, request) in cases {
        let answer = post(addr, path, &[], &request).await;
        assert_eq!(answer.status, 200, "{api}");
        assert_eq!(
            answer.header("content-type"),
            Some("text/event-stream; charset=utf-8"),
            "{api}"
        );
        assert_eq!(answer.header("transfer-encoding"), Some("chunked"), "{api}");
        // Each HTTP chunk holds exactly one whole event.
        for chunk in &answer.chunks {
            let chunk = std::str::from_utf8(chunk).unwrap();
            assert!(
                chunk.ends_with("\n\n") && chunk.matches("\n\n").count() == 1,
                "{api}: {chunk:?}"
            );
        }
        let pieces = deltas(api, &answer.event_data());
        assert!(
            pieces.iter().all(|p| p.chars().count() <= 3),
            "{api}: {pieces:?}"
        );
        assert_eq!(pieces.len(), TEXT.chars().count().div_ceil(3), "{api}");
        assert_eq!(pieces.concat(), TEXT, "{api}");
    }
}

#[tokio::test]
async fn chunk_header_changes_the_piece_size() {
    let addr = start().await;
    let answer = post(
        addr,
        "/v1/messages",
        &[("x-fake-chunk", "7")],
        &anthropic_request(true),
    )
    .await;
    let pieces = deltas("anthropic", &answer.event_data());
    assert_eq!(pieces[0].chars().count(), 7);
    assert!(pieces.iter().all(|p| p.chars().count() <= 7));
    assert_eq!(pieces.concat(), TEXT);

    let bad = post(
        addr,
        "/v1/messages",
        &[("x-fake-chunk", "0")],
        &anthropic_request(true),
    )
    .await;
    assert_eq!(bad.status, 400);
    assert_eq!(bad.json()["error"]["type"], "invalid_request_error");
}

#[tokio::test]
async fn chat_stream_shape() {
    let addr = start().await;
    let mut request = chat_request(true);
    request["stream_options"] = json!({"include_usage": true});
    let answer = post(addr, "/v1/chat/completions", &[], &request).await;
    let events = answer.events();
    assert!(
        events.iter().all(|(name, _)| name.is_empty()),
        "chat events are bare data lines"
    );
    assert_eq!(events.last().unwrap().1, "[DONE]");
    let data = answer.event_data();
    assert!(data.iter().all(|d| d["object"] == "chat.completion.chunk"));
    assert_eq!(data[0]["choices"][0]["delta"]["role"], "assistant");
    let finish = &data[data.len() - 2];
    assert_eq!(finish["choices"][0]["finish_reason"], "stop");
    let usage = data.last().unwrap();
    assert_eq!(usage["choices"], json!([]));
    assert!(usage["usage"]["completion_tokens"].as_u64().unwrap() > 0);
}

#[tokio::test]
async fn responses_stream_shape() {
    let addr = start().await;
    let answer = post(addr, "/v1/responses", &[], &responses_request(true)).await;
    let events = answer.events();
    let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
    let mut want = vec![
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
    ];
    want.extend(std::iter::repeat_n(
        "response.output_text.delta",
        TEXT.chars().count().div_ceil(3),
    ));
    want.extend([
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]);
    assert_eq!(names, want);
    let data = answer.event_data();
    for (index, (event, (name, _))) in data.iter().zip(&events).enumerate() {
        assert_eq!(event["type"], json!(name), "the data names its event");
        assert_eq!(event["sequence_number"], json!(index));
    }
    let done = data
        .iter()
        .find(|d| d["type"] == "response.output_text.done")
        .unwrap();
    assert_eq!(done["text"], TEXT);
    let completed = data.last().unwrap();
    assert_eq!(completed["response"]["status"], "completed");
    assert_eq!(
        completed["response"]["output"][0]["content"][0]["text"],
        TEXT
    );
}

#[tokio::test]
async fn anthropic_stream_shape() {
    let addr = start().await;
    let answer = post(addr, "/v1/messages", &[], &anthropic_request(true)).await;
    let events = answer.events();
    let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
    let mut want = vec!["message_start", "content_block_start", "ping"];
    want.extend(std::iter::repeat_n(
        "content_block_delta",
        TEXT.chars().count().div_ceil(3),
    ));
    want.extend(["content_block_stop", "message_delta", "message_stop"]);
    assert_eq!(names, want);
    let data = answer.event_data();
    for (event, (name, _)) in data.iter().zip(&events) {
        assert_eq!(event["type"], json!(name), "the data names its event");
    }
    assert_eq!(data[0]["message"]["role"], "assistant");
    assert_eq!(
        data[1]["content_block"],
        json!({"type": "text", "text": ""})
    );
    assert_eq!(data[3]["delta"]["type"], "text_delta");
    let message_delta = &data[data.len() - 2];
    assert_eq!(message_delta["delta"]["stop_reason"], "end_turn");
}

/// Arguments carrying a value with characters JSON escapes.
const ARGS: &str = r#"{"city":"Zürich","note":"say \"hi\" to Ada"}"#;

#[tokio::test]
async fn trailing_tool_calls_are_echoed_whole() {
    let addr = start().await;
    let chat = json!({"model": "m", "messages": [
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_A", "type": "function", "function": {"name": "weather", "arguments": ARGS}}
        ]},
    ]});
    let answer = post(addr, "/v1/chat/completions", &[], &chat).await.json();
    let choice = &answer["choices"][0];
    assert_eq!(choice["finish_reason"], "tool_calls");
    assert_eq!(
        choice["message"]["tool_calls"],
        json!([{"id": "call_A", "type": "function", "function": {"name": "weather", "arguments": ARGS}}])
    );

    let responses = json!({"model": "m", "input": [
        {"role": "user", "content": "weather?"},
        {"type": "function_call", "call_id": "call_B", "name": "weather", "arguments": ARGS},
    ]});
    let answer = post(addr, "/v1/responses", &[], &responses).await.json();
    let item = &answer["output"][0];
    assert_eq!(item["type"], "function_call");
    assert_eq!(item["call_id"], "call_B");
    assert_eq!(item["name"], "weather");
    assert_eq!(item["arguments"], ARGS);

    let anthropic = json!({"model": "m", "max_tokens": 9, "messages": [
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": [
            {"type": "text", "text": "let me look"},
            {"type": "tool_use", "id": "toolu_C", "name": "weather", "input": {"city": "Zürich"}}
        ]},
    ]});
    let answer = post(addr, "/v1/messages", &[], &anthropic).await.json();
    assert_eq!(answer["stop_reason"], "tool_use");
    assert_eq!(
        answer["content"],
        json!([{"type": "tool_use", "id": "toolu_C", "name": "weather", "input": {"city": "Zürich"}}])
    );
}

#[tokio::test]
async fn forced_tool_call_carries_the_text_streamed() {
    let addr = start().await;
    let want_args = json!({"text": TEXT}).to_string();
    let header = [("x-fake-tool-call", "remember")];

    let chat = post(addr, "/v1/chat/completions", &header, &chat_request(true)).await;
    let data = chat.event_data();
    let opening = &data[0]["choices"][0]["delta"]["tool_calls"][0];
    assert_eq!(opening["function"]["name"], "remember");
    assert!(opening["id"].as_str().unwrap().starts_with("call_"));
    let args: String = data
        .iter()
        .filter_map(|d| d.pointer("/choices/0/delta/tool_calls/0/function/arguments"))
        .map(|a| a.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(args, want_args);
    let finish = data
        .iter()
        .find_map(|d| d["choices"][0]["finish_reason"].as_str());
    assert_eq!(finish, Some("tool_calls"));

    let responses = post(addr, "/v1/responses", &header, &responses_request(true)).await;
    let data = responses.event_data();
    let args: String = data
        .iter()
        .filter(|d| d["type"] == "response.function_call_arguments.delta")
        .map(|d| d["delta"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(args, want_args);
    let done = data
        .iter()
        .find(|d| d["type"] == "response.function_call_arguments.done")
        .unwrap();
    assert_eq!(done["arguments"], json!(want_args));
    assert_eq!(
        data.last().unwrap()["response"]["output"][0]["name"],
        "remember"
    );

    let anthropic = post(addr, "/v1/messages", &header, &anthropic_request(true)).await;
    let data = anthropic.event_data();
    let start = data
        .iter()
        .find(|d| d["type"] == "content_block_start")
        .unwrap();
    assert_eq!(start["content_block"]["type"], "tool_use");
    assert_eq!(start["content_block"]["name"], "remember");
    let pieces: Vec<&str> = data
        .iter()
        .filter(|d| d["type"] == "content_block_delta")
        .map(|d| {
            assert_eq!(d["delta"]["type"], "input_json_delta");
            d["delta"]["partial_json"].as_str().unwrap()
        })
        .collect();
    assert_eq!(pieces[0], "", "Anthropic opens with an empty partial_json");
    assert!(pieces.iter().all(|p| p.chars().count() <= 3));
    assert_eq!(pieces.concat(), want_args);
    let message_delta = data.iter().find(|d| d["type"] == "message_delta").unwrap();
    assert_eq!(message_delta["delta"]["stop_reason"], "tool_use");
}

#[tokio::test]
async fn echo_reads_text_parts_and_tool_results() {
    let addr = start().await;
    let chat = json!({"model": "m", "messages": [{"role": "user", "content": [
        {"type": "text", "text": "first part"},
        {"type": "image_url", "image_url": {"url": "data:,"}},
        {"type": "text", "text": "second part"},
    ]}]});
    let answer = post(addr, "/v1/chat/completions", &[], &chat).await.json();
    assert_eq!(
        answer["choices"][0]["message"]["content"],
        "first part\nsecond part"
    );

    let responses = json!({"model": "m", "input": "plain string input"});
    let answer = post(addr, "/v1/responses", &[], &responses).await.json();
    assert_eq!(
        answer["output"][0]["content"][0]["text"],
        "plain string input"
    );

    let anthropic = json!({"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "result text"},
        {"type": "text", "text": "and a question"},
    ]}]});
    let answer = post(addr, "/v1/messages", &[], &anthropic).await.json();
    assert_eq!(answer["content"][0]["text"], "result text\nand a question");
}

#[tokio::test]
async fn request_log_keeps_raw_bodies() {
    let addr = start().await;
    let none = send(addr, "GET", "/_fake/requests/last", &[], "").await;
    assert_eq!(none.status, 404);

    // Odd spacing and key order must come back byte for byte.
    let first = "{ \"messages\" : [ {\"content\":\"one\",\"role\":\"user\"} ] ,\"model\":\"m\" }";
    let second = r#"{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"two"}]}"#;
    send(
        addr,
        "POST",
        "/v1/chat/completions",
        &[("authorization", "Bearer sk-test")],
        first,
    )
    .await;
    send(addr, "POST", "/v1/messages", &[], second).await;

    let last = send(addr, "GET", "/_fake/requests/last", &[], "").await;
    assert_eq!(last.status, 200);
    assert_eq!(last.text(), second);

    let all = send(addr, "GET", "/_fake/requests", &[], "").await.json();
    let all = all.as_array().unwrap();
    assert_eq!(all.len(), 2, "the log's own routes are not logged");
    assert_eq!(all[0]["method"], "POST");
    assert_eq!(all[0]["path"], "/v1/chat/completions");
    assert_eq!(all[0]["body"], first);
    assert_eq!(all[0]["headers"]["authorization"], "Bearer sk-test");
    assert_eq!(all[1]["body"], second);

    let cleared = send(addr, "DELETE", "/_fake/requests", &[], "").await;
    assert_eq!(cleared.status, 204);
    let all = send(addr, "GET", "/_fake/requests", &[], "").await.json();
    assert_eq!(all, json!([]));
}

#[tokio::test]
async fn write_bytes_header_splits_the_stream_anywhere() {
    let addr = start().await;
    let plain = post(addr, "/v1/messages", &[], &anthropic_request(true)).await;
    let split = post(
        addr,
        "/v1/messages",
        &[("x-fake-write-bytes", "5")],
        &anthropic_request(true),
    )
    .await;
    let sizes: Vec<usize> = split.chunks.iter().map(Vec::len).collect();
    assert!(
        sizes[..sizes.len() - 1].iter().all(|&s| s == 5),
        "{sizes:?}"
    );
    // Same events apart from ids and times; same text.
    assert_eq!(split.events().len(), plain.events().len());
    assert_eq!(deltas("anthropic", &split.event_data()).concat(), TEXT);
}

#[tokio::test]
async fn errors_take_the_providers_shapes() {
    let addr = start().await;
    let bad = send(addr, "POST", "/v1/chat/completions", &[], "{not json").await;
    assert_eq!(bad.status, 400);
    assert_eq!(bad.json()["error"]["type"], "invalid_request_error");

    let missing = send(addr, "POST", "/v1/messages", &[], "{}").await;
    assert_eq!(missing.status, 400);
    assert_eq!(missing.json()["type"], "error");
    assert_eq!(missing.json()["error"]["type"], "invalid_request_error");

    let forced = post(
        addr,
        "/v1/messages",
        &[("x-fake-status", "529")],
        &anthropic_request(false),
    )
    .await;
    assert_eq!(forced.status, 529);
    assert_eq!(forced.json()["error"]["type"], "overloaded_error");

    let unknown = send(addr, "POST", "/v2/nothing", &[], "{}").await;
    assert_eq!(unknown.status, 404);
}

#[tokio::test]
async fn delay_header_spaces_the_writes() {
    let addr = start().await;
    let began = std::time::Instant::now();
    let answer = post(
        addr,
        "/v1/messages",
        &[("x-fake-chunk-delay-ms", "20"), ("x-fake-chunk", "100")],
        &anthropic_request(true),
    )
    .await;
    // 7 events (one delta with chunk 100) → 6 pauses of 20 ms.
    assert_eq!(answer.chunks.len(), 7);
    assert!(began.elapsed() >= std::time::Duration::from_millis(120));
}

#[tokio::test]
async fn keys_come_in_the_providers_order() {
    let addr = start().await;
    let anthropic = post(addr, "/v1/messages", &[], &anthropic_request(true))
        .await
        .text();
    assert!(anthropic.starts_with(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":"
    ));
    assert!(anthropic.contains("data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hel\"}}\n\n"));
    let responses = post(addr, "/v1/responses", &[], &responses_request(true))
        .await
        .text();
    assert!(responses.starts_with("event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":"));
    let chat = post(addr, "/v1/chat/completions", &[], &chat_request(true))
        .await
        .text();
    assert!(chat.starts_with("data: {\"id\":\"chatcmpl-"));
    assert!(chat.contains("\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n"));
    let whole = post(addr, "/v1/messages", &[], &anthropic_request(false))
        .await
        .text();
    assert!(whole.starts_with("{\"id\":\"msg_fake_"));
}
