//! The fake LLM's Gemini, Bedrock, legacy completions, embeddings, Azure and
//! Anthropic count_tokens/batches APIs over real sockets (no Envoy): echo,
//! shapes, stream framings, tool calls, control headers. The Bedrock frames
//! are read by `support::frames`, whose CRC-32 is computed bit by bit, apart
//! from the codec that wrote them.

// Tests may unwrap and panic: a failure is the point.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use base64::Engine as _;
use serde_json::{json, Value};
use support::frames::{be_u32, crc32_bitwise, decode_frames};
use support::{post, send, start, RawResponse};

const TEXT: &str = "Hello, my name is Ada Lovelace and my mail is ada@example.org";
const GEMINI: &str = "/v1beta/models/gemini-2.5-flash:generateContent";
const GEMINI_STREAM: &str = "/v1beta/models/gemini-2.5-flash:streamGenerateContent";
const CONVERSE: &str = "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse";
const CONVERSE_STREAM: &str = "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse-stream";

fn gemini_request() -> Value {
    json!({
        "systemInstruction": {"parts": [{"text": "be brief"}]},
        "contents": [
            {"role": "user", "parts": [{"text": "an older question"}]},
            {"role": "model", "parts": [{"text": "an older answer"}]},
            {"role": "user", "parts": [{"text": TEXT}]},
        ],
        "tools": [{"functionDeclarations": [{"name": "send_mail", "parameters": {"type": "OBJECT"}}]}],
    })
}

fn converse_request() -> Value {
    json!({
        "system": [{"text": "be brief"}],
        "messages": [
            {"role": "user", "content": [{"text": "an older question"}]},
            {"role": "assistant", "content": [{"text": "an older answer"}]},
            {"role": "user", "content": [{"text": TEXT}]},
        ],
        "inferenceConfig": {"maxTokens": 64},
    })
}

/// Gemini SSE: `data: {…}\r\n\r\n` events, parsed.
fn gemini_sse_chunks(answer: &RawResponse) -> Vec<Value> {
    let text = answer.text();
    assert!(text.ends_with("\r\n\r\n"), "events end in CRLF CRLF");
    text.trim_end()
        .split("\r\n\r\n")
        .map(|event| {
            let data = event.strip_prefix("data: ").expect("a data line");
            serde_json::from_str(data).unwrap()
        })
        .collect()
}

fn gemini_text(chunks: &[Value]) -> Vec<String> {
    chunks
        .iter()
        .flat_map(|c| c["candidates"][0]["content"]["parts"].as_array().unwrap())
        .filter_map(|p| p["text"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn gemini_whole_answer_echoes_the_last_user_content() {
    let addr = start().await;
    let answer = post(addr, GEMINI, &[("x-goog-api-key", "k")], &gemini_request()).await;
    assert_eq!(answer.status, 200);
    assert_eq!(answer.header("content-type"), Some("application/json"));
    let body = answer.json();
    let candidate = &body["candidates"][0];
    assert_eq!(candidate["content"]["role"], "model");
    assert_eq!(candidate["content"]["parts"], json!([{"text": TEXT}]));
    assert_eq!(candidate["finishReason"], "STOP");
    assert_eq!(body["modelVersion"], "gemini-2.5-flash", "from the path");
    let usage = &body["usageMetadata"];
    assert!(usage["promptTokenCount"].as_u64().unwrap() > 0);
    assert_eq!(
        usage["totalTokenCount"].as_u64(),
        Some(
            usage["promptTokenCount"].as_u64().unwrap()
                + usage["candidatesTokenCount"].as_u64().unwrap()
        )
    );
}

#[tokio::test]
async fn gemini_sse_stream_sends_one_chunk_per_write() {
    let addr = start().await;
    let path = format!("{GEMINI_STREAM}?alt=sse");
    let answer = post(addr, &path, &[], &gemini_request()).await;
    assert_eq!(answer.status, 200);
    assert_eq!(
        answer.header("content-type"),
        Some("text/event-stream; charset=utf-8")
    );
    for chunk in &answer.chunks {
        let chunk = std::str::from_utf8(chunk).unwrap();
        assert!(chunk.starts_with("data: ") && chunk.ends_with("\r\n\r\n"));
        assert_eq!(chunk.matches("\r\n\r\n").count(), 1, "{chunk:?}");
    }
    let chunks = gemini_sse_chunks(&answer);
    let pieces = gemini_text(&chunks);
    assert_eq!(pieces.len(), TEXT.chars().count().div_ceil(3));
    assert!(pieces.iter().all(|p| p.chars().count() <= 3));
    assert_eq!(pieces.concat(), TEXT);
    let finishes: Vec<usize> = chunks
        .iter()
        .enumerate()
        .filter(|(_, c)| c["candidates"][0].get("finishReason").is_some())
        .map(|(i, _)| i)
        .collect();
    assert_eq!(finishes, vec![chunks.len() - 1], "only the last finishes");
    assert!(chunks.iter().all(|c| c["usageMetadata"].is_object()));
}

#[tokio::test]
async fn gemini_stream_without_alt_sse_is_one_json_array() {
    let addr = start().await;
    let answer = post(
        addr,
        &format!("{GEMINI_STREAM}?key=dummy"),
        &[("x-fake-chunk", "5")],
        &gemini_request(),
    )
    .await;
    assert_eq!(answer.status, 200);
    assert_eq!(
        answer.header("content-type"),
        Some("application/json; charset=UTF-8")
    );
    assert_eq!(answer.header("transfer-encoding"), Some("chunked"));
    let writes: Vec<String> = answer
        .chunks
        .iter()
        .map(|c| String::from_utf8(c.clone()).unwrap())
        .collect();
    assert!(writes[0].starts_with("[{\n  \"candidates\": ["));
    assert!(writes[1..writes.len() - 1]
        .iter()
        .all(|w| w.starts_with("\n,\r\n{\n")));
    assert_eq!(writes.last().unwrap(), "\n]");
    let chunks: Vec<Value> = serde_json::from_str(&writes.concat()).unwrap();
    assert_eq!(chunks.len(), writes.len() - 1, "one element per write");
    let pieces = gemini_text(&chunks);
    assert!(pieces.iter().all(|p| p.chars().count() <= 5));
    assert_eq!(pieces.concat(), TEXT);
}

#[tokio::test]
async fn gemini_function_calls_forced_and_echoed() {
    let addr = start().await;
    let header = [("x-fake-tool-call", "send_mail")];
    let whole = post(addr, GEMINI, &header, &gemini_request()).await.json();
    assert_eq!(
        whole["candidates"][0]["content"]["parts"],
        json!([{"functionCall": {"name": "send_mail", "args": {"text": TEXT}}}])
    );
    let streamed = post(
        addr,
        &format!("{GEMINI_STREAM}?alt=sse"),
        &header,
        &gemini_request(),
    )
    .await;
    let chunks = gemini_sse_chunks(&streamed);
    assert_eq!(chunks.len(), 1, "Gemini streams a function call whole");
    assert_eq!(
        chunks[0]["candidates"][0]["content"]["parts"][0]["functionCall"]["args"]["text"],
        TEXT
    );

    // The conversation ends with the model's call: echoed, id and all.
    let mut request = gemini_request();
    request["contents"].as_array_mut().unwrap().push(json!({
        "role": "model",
        "parts": [{"functionCall": {"id": "fc_1", "name": "lookup", "args": {"city": "Zürich"}}}],
    }));
    let echoed = post(addr, GEMINI, &[], &request).await.json();
    assert_eq!(
        echoed["candidates"][0]["content"]["parts"],
        json!([{"functionCall": {"id": "fc_1", "name": "lookup", "args": {"city": "Zürich"}}}])
    );

    // A function response in the last user turn is echoed as its JSON.
    let request = json!({"contents": [{"parts": [
        {"functionResponse": {"name": "lookup", "response": {"mail": "ada@example.org"}}},
        {"text": "and then?"},
    ]}]});
    let answer = post(addr, GEMINI, &[], &request).await.json();
    assert_eq!(
        answer["candidates"][0]["content"]["parts"][0]["text"],
        "{\"mail\":\"ada@example.org\"}\nand then?"
    );
}

#[tokio::test]
async fn gemini_count_tokens_and_errors() {
    let addr = start().await;
    let count = post(
        addr,
        "/v1beta/models/gemini-2.5-flash:countTokens",
        &[],
        &gemini_request(),
    )
    .await
    .json();
    assert_eq!(count["totalTokens"], TEXT.chars().count().div_ceil(4));

    let forced = post(addr, GEMINI, &[("x-fake-status", "429")], &gemini_request()).await;
    assert_eq!(forced.status, 429);
    assert_eq!(
        forced.json()["error"],
        json!({"code": 429, "message": "forced by x-fake-status", "status": "RESOURCE_EXHAUSTED"})
    );
    let missing = post(addr, GEMINI, &[], &json!({})).await;
    assert_eq!(missing.status, 400);
    assert_eq!(missing.json()["error"]["status"], "INVALID_ARGUMENT");
    let unknown = post(addr, "/v1beta/models/g:embedContent", &[], &json!({})).await;
    assert_eq!(unknown.status, 404);
}

#[test]
fn the_tests_crc_matches_the_check_value() {
    assert_eq!(crc32_bitwise(b"123456789"), 0xCBF4_3926);
}

#[tokio::test]
async fn converse_whole_answer_echoes_the_last_user_message() {
    let addr = start().await;
    let answer = post(addr, CONVERSE, &[], &converse_request()).await;
    assert_eq!(answer.status, 200);
    let body = answer.json();
    assert_eq!(body["output"]["message"]["role"], "assistant");
    assert_eq!(
        body["output"]["message"]["content"],
        json!([{"text": TEXT}])
    );
    assert_eq!(body["stopReason"], "end_turn");
    assert!(body["usage"]["totalTokens"].as_u64().unwrap() > 0);
    assert!(body["metrics"]["latencyMs"].is_u64());

    let tool = post(
        addr,
        CONVERSE,
        &[("x-fake-tool-call", "send_mail")],
        &converse_request(),
    )
    .await
    .json();
    assert_eq!(tool["stopReason"], "tool_use");
    let call = &tool["output"]["message"]["content"][0]["toolUse"];
    assert_eq!(call["name"], "send_mail");
    assert_eq!(call["input"], json!({"text": TEXT}));
    assert!(call["toolUseId"].as_str().unwrap().starts_with("tooluse_"));

    // Tool results in the last user message are read; a trailing toolUse
    // is echoed.
    let request = json!({"messages": [
        {"role": "user", "content": [
            {"toolResult": {"toolUseId": "t1", "content": [{"text": "result text"}, {"json": {"k": 1}}]}},
            {"text": "and a question"},
        ]},
        {"role": "assistant", "content": [
            {"toolUse": {"toolUseId": "t2", "name": "lookup", "input": {"city": "Zürich"}}},
        ]},
    ]});
    let echoed = post(addr, CONVERSE, &[], &request).await.json();
    assert_eq!(
        echoed["output"]["message"]["content"],
        json!([{"toolUse": {"toolUseId": "t2", "name": "lookup", "input": {"city": "Zürich"}}}])
    );
    let request = json!({"messages": [request["messages"][0].clone()]});
    let read = post(addr, CONVERSE, &[], &request).await.json();
    assert_eq!(
        read["output"]["message"]["content"][0]["text"],
        "result text\n{\"k\":1}\nand a question"
    );
}

#[tokio::test]
async fn converse_stream_is_event_stream_frames_one_per_write() {
    let addr = start().await;
    let answer = post(addr, CONVERSE_STREAM, &[], &converse_request()).await;
    assert_eq!(answer.status, 200);
    assert_eq!(
        answer.header("content-type"),
        Some("application/vnd.amazon.eventstream")
    );
    // Each HTTP chunk holds exactly one frame.
    for chunk in &answer.chunks {
        assert_eq!(be_u32(&chunk[0..4]) as usize, chunk.len());
    }
    let frames = decode_frames(&answer.body());
    for frame in &frames {
        assert_eq!(frame.header(":message-type"), "event");
        assert_eq!(frame.header(":content-type"), "application/json");
        assert!(!frame.payload["p"].as_str().unwrap().is_empty(), "padding");
    }
    let names: Vec<&str> = frames.iter().map(|f| f.header(":event-type")).collect();
    let mut want = vec!["messageStart"];
    want.extend(std::iter::repeat_n(
        "contentBlockDelta",
        TEXT.chars().count().div_ceil(3),
    ));
    want.extend(["contentBlockStop", "messageStop", "metadata"]);
    assert_eq!(names, want);
    assert_eq!(frames[0].payload["role"], "assistant");
    let pieces: Vec<&str> = frames
        .iter()
        .filter_map(|f| f.payload.pointer("/delta/text").and_then(Value::as_str))
        .collect();
    assert!(pieces.iter().all(|p| p.chars().count() <= 3));
    assert_eq!(pieces.concat(), TEXT);
    assert_eq!(frames[1].payload["contentBlockIndex"], 0);
    assert_eq!(frames[frames.len() - 2].payload["stopReason"], "end_turn");
    assert!(frames.last().unwrap().payload["usage"]["inputTokens"].is_u64());
    let raw = String::from_utf8_lossy(&answer.body()).into_owned();
    assert!(
        raw.contains("{\"contentBlockIndex\":0,\"delta\":{\"text\":\"Hel\"},\"p\":\""),
        "keys in Bedrock's order"
    );
}

#[tokio::test]
async fn converse_stream_tool_use_and_byte_splits() {
    let addr = start().await;
    let header = [("x-fake-tool-call", "send_mail"), ("x-fake-chunk", "4")];
    let answer = post(addr, CONVERSE_STREAM, &header, &converse_request()).await;
    let frames = decode_frames(&answer.body());
    let start = frames
        .iter()
        .find(|f| f.header(":event-type") == "contentBlockStart")
        .unwrap();
    assert_eq!(start.payload["start"]["toolUse"]["name"], "send_mail");
    assert!(start.payload["start"]["toolUse"]["toolUseId"].is_string());
    let input: String = frames
        .iter()
        .filter_map(|f| {
            f.payload
                .pointer("/delta/toolUse/input")
                .and_then(Value::as_str)
        })
        .collect();
    assert_eq!(input, json!({"text": TEXT}).to_string());
    let stop = frames
        .iter()
        .find(|f| f.header(":event-type") == "messageStop")
        .unwrap();
    assert_eq!(stop.payload["stopReason"], "tool_use");

    // x-fake-write-bytes cuts frames anywhere; the bytes are the same frames.
    let split = post(
        addr,
        CONVERSE_STREAM,
        &[("x-fake-write-bytes", "7")],
        &converse_request(),
    )
    .await;
    let sizes: Vec<usize> = split.chunks.iter().map(Vec::len).collect();
    assert!(
        sizes[..sizes.len() - 1].iter().all(|&s| s == 7),
        "{sizes:?}"
    );
    let frames = decode_frames(&split.body());
    let text: String = frames
        .iter()
        .filter_map(|f| f.payload.pointer("/delta/text").and_then(Value::as_str))
        .collect();
    assert_eq!(text, TEXT);
}

#[tokio::test]
async fn converse_errors_name_their_type_in_a_header() {
    let addr = start().await;
    let forced = post(
        addr,
        CONVERSE_STREAM,
        &[("x-fake-status", "429")],
        &converse_request(),
    )
    .await;
    assert_eq!(forced.status, 429);
    assert_eq!(
        forced.header("x-amzn-errortype"),
        Some("ThrottlingException")
    );
    assert_eq!(forced.json(), json!({"message": "forced by x-fake-status"}));
    let missing = post(addr, CONVERSE, &[], &json!({})).await;
    assert_eq!(missing.status, 400);
    assert_eq!(
        missing.header("x-amzn-errortype"),
        Some("ValidationException")
    );
}

#[tokio::test]
async fn completions_echo_each_prompt_whole_and_streamed() {
    let addr = start().await;
    let whole = post(
        addr,
        "/v1/completions",
        &[],
        &json!({"model": "gpt-3.5-turbo-instruct", "prompt": TEXT}),
    )
    .await
    .json();
    assert_eq!(whole["object"], "text_completion");
    assert_eq!(whole["choices"][0]["text"], TEXT);
    assert_eq!(whole["choices"][0]["finish_reason"], "stop");
    let two = post(
        addr,
        "/v1/completions",
        &[],
        &json!({"model": "m", "prompt": ["one", TEXT]}),
    )
    .await
    .json();
    assert_eq!(two["choices"][0]["text"], "one");
    assert_eq!(two["choices"][1]["text"], TEXT);
    assert_eq!(two["choices"][1]["index"], 1);

    let streamed = post(
        addr,
        "/v1/completions",
        &[],
        &json!({"model": "m", "prompt": TEXT, "stream": true, "stream_options": {"include_usage": true}}),
    )
    .await;
    assert_eq!(
        streamed.header("content-type"),
        Some("text/event-stream; charset=utf-8")
    );
    assert_eq!(streamed.events().last().unwrap().1, "[DONE]");
    let data = streamed.event_data();
    assert!(data.iter().all(|d| d["object"] == "text_completion"));
    let pieces: Vec<&str> = data
        .iter()
        .filter_map(|d| d.pointer("/choices/0/text").and_then(Value::as_str))
        .filter(|t| !t.is_empty())
        .collect();
    assert!(pieces.iter().all(|p| p.chars().count() <= 3));
    assert_eq!(pieces.concat(), TEXT);
    assert_eq!(data[data.len() - 2]["choices"][0]["finish_reason"], "stop");
    assert!(data.last().unwrap()["usage"]["total_tokens"].is_u64());

    let missing = post(addr, "/v1/completions", &[], &json!({"model": "m"})).await;
    assert_eq!(missing.status, 400);
    assert_eq!(missing.json()["error"]["type"], "invalid_request_error");
}

#[tokio::test]
async fn embeddings_are_deterministic_floats_or_base64() {
    let addr = start().await;
    let request = json!({"model": "text-embedding-3-small", "input": ["one", TEXT]});
    let first = post(addr, "/v1/embeddings", &[], &request).await.json();
    let again = post(addr, "/v1/embeddings", &[], &request).await.json();
    assert_eq!(first["object"], "list");
    assert_eq!(
        first["data"], again["data"],
        "the same input, the same vector"
    );
    let data = first["data"].as_array().unwrap();
    assert_eq!(data.len(), 2);
    assert_eq!(data[1]["object"], "embedding");
    assert_eq!(data[1]["index"], 1);
    // Compared as f32: serde_json reads the last digit of an f64 loosely.
    let floats: Vec<f32> = data[1]["embedding"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_f64().unwrap() as f32)
        .collect();
    assert_eq!(floats.len(), 8);
    assert_ne!(data[0]["embedding"], data[1]["embedding"]);

    let b64 = post(
        addr,
        "/v1/embeddings",
        &[],
        &json!({"model": "m", "input": TEXT, "encoding_format": "base64"}),
    )
    .await
    .json();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64["data"][0]["embedding"].as_str().unwrap())
        .unwrap();
    let decoded: Vec<f32> = bytes
        .chunks(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
        .collect();
    assert_eq!(decoded, floats, "the same vector as little-endian f32");
}

#[tokio::test]
async fn azure_deployment_paths_answer_as_openai() {
    let addr = start().await;
    let headers = [("api-key", "azure-dummy")];
    let chat = post(
        addr,
        "/openai/deployments/gpt-4o-dep/chat/completions?api-version=2024-10-21",
        &headers,
        &json!({"messages": [{"role": "user", "content": TEXT}]}),
    )
    .await
    .json();
    assert_eq!(chat["choices"][0]["message"]["content"], TEXT);
    assert_eq!(chat["model"], "gpt-4o-dep", "the deployment when no model");
    let embeddings = post(
        addr,
        "/openai/deployments/emb-dep/embeddings?api-version=2024-10-21",
        &headers,
        &json!({"input": TEXT}),
    )
    .await
    .json();
    assert_eq!(
        embeddings["data"][0]["embedding"].as_array().unwrap().len(),
        8
    );
    let log = send(addr, "GET", "/_fake/requests", &[], "").await.json();
    assert_eq!(
        log[0]["path"],
        "/openai/deployments/gpt-4o-dep/chat/completions?api-version=2024-10-21"
    );
    assert_eq!(log[0]["headers"]["api-key"], "azure-dummy");
}

#[tokio::test]
async fn anthropic_count_tokens_and_batches() {
    let addr = start().await;
    let messages = json!([{"role": "user", "content": TEXT}]);
    let count = post(
        addr,
        "/v1/messages/count_tokens",
        &[],
        &json!({"model": "claude-test", "messages": messages}),
    )
    .await
    .json();
    assert_eq!(
        count,
        json!({"input_tokens": TEXT.chars().count().div_ceil(4)})
    );

    let batch = json!({"requests": [
        {"custom_id": "a", "params": {"model": "m", "max_tokens": 9, "messages": messages}},
        {"custom_id": "b", "params": {"model": "m", "max_tokens": 9, "messages": messages}},
    ]});
    let created = post(addr, "/v1/messages/batches", &[], &batch).await.json();
    assert_eq!(created["type"], "message_batch");
    assert_eq!(created["processing_status"], "in_progress");
    assert_eq!(created["request_counts"]["processing"], 2);
    assert!(created["id"].as_str().unwrap().starts_with("msgbatch_"));
    let last = send(addr, "GET", "/_fake/requests/last", &[], "")
        .await
        .json();
    assert_eq!(last, batch, "the log holds what the provider received");
}
