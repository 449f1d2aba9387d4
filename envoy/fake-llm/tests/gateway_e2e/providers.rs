//! The gateway on the newer APIs: Gemini (whole, SSE, JSON array),
//! Bedrock Converse and ConverseStream (event-stream frames), OpenAI legacy
//! completions and embeddings, Azure OpenAI paths, Anthropic count_tokens
//! and batches. Each: masked on the way up, restored for the agent (whole
//! and streamed in small chunks, and with the stream cut at any byte), tool
//! calls restored where the API has them, a forgotten value never restored.

use serde_json::{json, Value};

use super::support::frames::decode_frames;
use super::support::{post, send, RawResponse};
use super::{fake, fresh_email, gateway, sentence, surrogate_in};

/// One API and mode the gateway must handle.
#[derive(Clone, Copy)]
struct Case {
    name: &'static str,
    path: &'static str,
    /// `"stream": true` in the body (the OpenAI APIs); Gemini and Bedrock
    /// say it in the path.
    stream_flag: bool,
}

impl Case {
    fn streamed(&self) -> bool {
        self.stream_flag || self.path.contains("stream")
    }
}

const AZURE_CHAT: &str = "/openai/deployments/gpt-4o-e2e/chat/completions?api-version=2024-10-21";
const AZURE_EMBEDDINGS: &str = "/openai/deployments/emb-e2e/embeddings?api-version=2024-10-21";

/// The answering APIs, whole and streamed.
const CASES: [Case; 9] = [
    Case {
        name: "gemini",
        path: "/v1beta/models/gemini-2.5-flash:generateContent",
        stream_flag: false,
    },
    Case {
        name: "gemini-sse",
        path: "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
        stream_flag: false,
    },
    Case {
        name: "gemini-array",
        path: "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
        stream_flag: false,
    },
    Case {
        name: "bedrock",
        path: "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse",
        stream_flag: false,
    },
    Case {
        name: "bedrock-stream",
        path: "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse-stream",
        stream_flag: false,
    },
    Case {
        name: "completions",
        path: "/v1/completions",
        stream_flag: false,
    },
    Case {
        name: "completions-stream",
        path: "/v1/completions",
        stream_flag: true,
    },
    Case {
        name: "azure",
        path: AZURE_CHAT,
        stream_flag: false,
    },
    Case {
        name: "azure-stream",
        path: AZURE_CHAT,
        stream_flag: true,
    },
];

/// The request: `text` as the last user turn, after `history` (a user
/// turn) and an assistant answer when given.
fn request(case: Case, history: Option<&str>, text: &str) -> Value {
    let family = case.name.split('-').next().unwrap();
    match family {
        "gemini" => {
            let mut contents = Vec::new();
            if let Some(history) = history {
                contents.push(json!({"role": "user", "parts": [{"text": history}]}));
                contents.push(json!({"role": "model", "parts": [{"text": "Noted."}]}));
            }
            contents.push(json!({"role": "user", "parts": [{"text": text}]}));
            json!({"contents": contents, "generationConfig": {"maxOutputTokens": 64}})
        }
        "bedrock" => {
            let mut messages = Vec::new();
            if let Some(history) = history {
                messages.push(json!({"role": "user", "content": [{"text": history}]}));
                messages.push(json!({"role": "assistant", "content": [{"text": "Noted."}]}));
            }
            messages.push(json!({"role": "user", "content": [{"text": text}]}));
            json!({"messages": messages, "inferenceConfig": {"maxTokens": 64}})
        }
        "completions" => {
            let prompt = match history {
                Some(history) => json!([history, text]),
                None => json!(text),
            };
            json!({"model": "gpt-3.5-turbo-instruct", "prompt": prompt, "stream": case.stream_flag})
        }
        _ => {
            let mut messages = Vec::new();
            if let Some(history) = history {
                messages.push(json!({"role": "user", "content": history}));
                messages.push(json!({"role": "assistant", "content": "Noted."}));
            }
            messages.push(json!({"role": "user", "content": text}));
            json!({"messages": messages, "stream": case.stream_flag})
        }
    }
}

async fn ask(
    case: Case,
    history: Option<&str>,
    text: &str,
    headers: &[(&str, &str)],
) -> RawResponse {
    let mut all = vec![("x-fake-chunk", "2")];
    if case.name.starts_with("azure") {
        all.push(("api-key", "azure-e2e-dummy"));
    }
    all.extend_from_slice(headers);
    post(gateway(), case.path, &all, &request(case, history, text)).await
}

/// The last user text the provider received.
async fn provider_saw(case: Case) -> String {
    let last = send(fake(), "GET", "/_fake/requests/last", &[], "").await;
    assert_eq!(last.status, 200);
    let body = last.json();
    let family = case.name.split('-').next().unwrap();
    let text = match family {
        "gemini" => {
            body["contents"].as_array().unwrap().last().unwrap()["parts"][0]["text"].clone()
        }
        "bedrock" => {
            body["messages"].as_array().unwrap().last().unwrap()["content"][0]["text"].clone()
        }
        "completions" => match &body["prompt"] {
            Value::Array(items) => items.last().unwrap().clone(),
            other => other.clone(),
        },
        _ => body["messages"].as_array().unwrap().last().unwrap()["content"].clone(),
    };
    text.as_str().unwrap().to_owned()
}

/// Gemini's SSE events' data, as JSON (events end in CRLF CRLF).
fn gemini_sse(answer: &RawResponse) -> Vec<Value> {
    answer
        .text()
        .split("\r\n\r\n")
        .filter(|event| !event.trim().is_empty())
        .map(|event| serde_json::from_str(event.trim().strip_prefix("data: ").unwrap()).unwrap())
        .collect()
}

fn gemini_parts_text(chunks: &[Value]) -> String {
    chunks
        .iter()
        .flat_map(|c| {
            c["candidates"][0]["content"]["parts"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|p| p["text"].as_str().map(str::to_owned))
        .collect()
}

/// The answer's text (the last choice's, for completions), whole or
/// streamed, after checking the framing is intact.
fn answer_text(case: Case, answer: &RawResponse) -> String {
    assert_eq!(
        answer.status,
        200,
        "{}: {}",
        case.name,
        String::from_utf8_lossy(&answer.body())
    );
    match case.name {
        "gemini" => gemini_parts_text(&[answer.json()]),
        "gemini-sse" => gemini_parts_text(&gemini_sse(answer)),
        "gemini-array" => {
            let chunks: Vec<Value> = serde_json::from_slice(&answer.body()).unwrap();
            gemini_parts_text(&chunks)
        }
        "bedrock" => answer.json()["output"]["message"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned(),
        "bedrock-stream" => decode_frames(&answer.body())
            .iter()
            .filter_map(|f| f.payload.pointer("/delta/text").and_then(Value::as_str))
            .collect(),
        "completions" => {
            let body = answer.json();
            let last = body["choices"].as_array().unwrap().last().unwrap().clone();
            last["text"].as_str().unwrap().to_owned()
        }
        "completions-stream" => {
            let data = answer.event_data();
            let last_index = data
                .iter()
                .filter_map(|d| d.pointer("/choices/0/index").and_then(Value::as_u64))
                .max()
                .unwrap_or(0);
            data.iter()
                .filter(|d| {
                    d.pointer("/choices/0/index").and_then(Value::as_u64) == Some(last_index)
                })
                .filter_map(|d| d.pointer("/choices/0/text").and_then(Value::as_str))
                .collect()
        }
        "azure" => answer.json()["choices"][0]["message"]["content"]
            .as_str()
            .unwrap()
            .to_owned(),
        _ => answer
            .event_data()
            .iter()
            .filter_map(|d| {
                d.pointer("/choices/0/delta/content")
                    .and_then(Value::as_str)
            })
            .collect(),
    }
}

/// Header sets each stream is tried with: small chunks, and the same cut
/// every 5 bytes regardless of events (preludes and UTF-8 split).
fn pacings(case: Case) -> Vec<Vec<(&'static str, &'static str)>> {
    if case.streamed() {
        vec![vec![], vec![("x-fake-write-bytes", "5")]]
    } else {
        vec![vec![]]
    }
}

#[tokio::test]
#[ignore = "needs the gateway: envoy/e2e.sh"]
async fn masked_up_and_restored_down() {
    for case in CASES {
        for headers in pacings(case) {
            let value = fresh_email(&format!("p16.{}", case.name));
            let text = sentence(&value);
            let answer = ask(case, None, &text, &headers).await;
            let seen = provider_saw(case).await;
            assert!(
                !seen.contains(&value),
                "{} {headers:?}: the provider saw the value",
                case.name
            );
            let surrogate = surrogate_in(&seen);
            assert!(surrogate.contains('@') && surrogate != value);
            assert_eq!(
                answer_text(case, &answer),
                text,
                "{} {headers:?}: restored",
                case.name
            );
        }
    }
}

#[tokio::test]
#[ignore = "needs the gateway: envoy/e2e.sh"]
async fn tool_call_arguments_are_restored() {
    let header = [("x-fake-tool-call", "send_mail")];
    for case in CASES {
        if case.name.starts_with("completions") {
            continue; // no tools in legacy completions
        }
        let value = fresh_email(&format!("p16tool.{}", case.name));
        let answer = ask(case, None, &sentence(&value), &header).await;
        assert_eq!(answer.status, 200, "{}", case.name);
        assert!(!provider_saw(case).await.contains(&value), "{}", case.name);
        let arguments = match case.name {
            "bedrock-stream" => decode_frames(&answer.body())
                .iter()
                .filter_map(|f| {
                    f.payload
                        .pointer("/delta/toolUse/input")
                        .and_then(Value::as_str)
                })
                .collect::<String>(),
            "azure-stream" => answer
                .event_data()
                .iter()
                .filter_map(|d| {
                    d.pointer("/choices/0/delta/tool_calls/0/function/arguments")
                        .and_then(Value::as_str)
                })
                .collect(),
            _ => String::from_utf8(answer.body()).unwrap(),
        };
        assert!(
            arguments.contains(&value),
            "{}: arguments restored",
            case.name
        );
    }
}

#[tokio::test]
#[ignore = "needs the gateway: envoy/e2e.sh"]
async fn embeddings_count_tokens_and_batches_are_masked() {
    let value = fresh_email("p16.embed");
    let text = sentence(&value);
    let bodies: [(&str, Value); 5] = [
        (
            "/v1/embeddings",
            json!({"model": "text-embedding-3-small", "input": [text, "plain"]}),
        ),
        (
            AZURE_EMBEDDINGS,
            json!({"input": text, "encoding_format": "base64"}),
        ),
        (
            "/v1/messages/count_tokens",
            json!({"model": "claude-test", "messages": [{"role": "user", "content": text}]}),
        ),
        (
            "/v1/messages/batches",
            json!({"requests": [{"custom_id": "r1", "params": {
                "model": "claude-test", "max_tokens": 64,
                "messages": [{"role": "user", "content": text}],
            }}]}),
        ),
        (
            "/v1beta/models/gemini-2.5-flash:countTokens",
            json!({"contents": [{"role": "user", "parts": [{"text": text}]}]}),
        ),
    ];
    for (path, body) in bodies {
        let answer = post(gateway(), path, &[("api-key", "azure-e2e-dummy")], &body).await;
        assert_eq!(
            answer.status,
            200,
            "{path}: {}",
            String::from_utf8_lossy(&answer.body())
        );
        let last = send(fake(), "GET", "/_fake/requests/last", &[], "")
            .await
            .text();
        assert!(!last.contains(&value), "{path}: the provider saw the value");
        assert!(
            last.contains("Please write to "),
            "{path}: the text went up"
        );
    }
}

#[tokio::test]
#[ignore = "needs the gateway: envoy/e2e.sh"]
async fn a_forgotten_value_is_not_restored() {
    let value = fresh_email("p16.forget");
    let text = sentence(&value);
    let probe = CASES[0];
    ask(probe, None, &text, &[]).await;
    let old = surrogate_in(&provider_saw(probe).await);
    assert_eq!(super::forget(&[&value]).await["forgotten"], 1);

    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    let new = loop {
        ask(probe, None, &text, &[]).await;
        let surrogate = surrogate_in(&provider_saw(probe).await);
        if surrogate != old {
            break surrogate;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the forget did not reach the gateway in 15 s"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    // As in forget_gives_a_new_surrogate_and_retires_the_old: the old
    // surrogate stays but for its company domain; the new one restores.
    let old_local = old.rsplit_once('@').map_or(old.as_str(), |(l, _)| l);
    let company = value.rsplit_once('@').map_or("", |(_, d)| d);
    let old_restored = sentence(&format!("{old_local}@{company}"));
    for case in CASES {
        let answer = ask(case, Some(&text), &sentence(&old), &[]).await;
        let got = answer_text(case, &answer);
        assert!(
            !got.contains(&value),
            "{}: the forgotten value came back",
            case.name
        );
        assert_eq!(
            got, old_restored,
            "{}: old stays, its domain restored",
            case.name
        );
        let answer = ask(case, Some(&text), &sentence(&new), &[]).await;
        assert_eq!(
            answer_text(case, &answer),
            text,
            "{}: new restores",
            case.name
        );
    }
}

/// What else in these requests can carry a value: system instructions,
/// tool declarations, earlier tool calls and results, Bedrock's
/// `requestMetadata` and `additionalModelRequestFields`. Wherever it is,
/// the provider must not see it (masked, or the request refused).
#[tokio::test]
#[ignore = "needs the gateway: envoy/e2e.sh"]
async fn values_in_other_fields_never_reach_the_provider() {
    let value = fresh_email("p16.fields");
    let gemini = json!({
        "systemInstruction": {"parts": [{"text": format!("The user is {value}.")}]},
        "contents": [
            {"role": "user", "parts": [{"text": "Mail them."}]},
            {"role": "model", "parts": [{"functionCall": {"name": "send_mail", "args": {"to": value}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "send_mail", "response": {"sent_to": value}}}]},
        ],
        "tools": [{"functionDeclarations": [{"name": "send_mail", "description": format!("Mails {value}"),
            "parameters": {"type": "OBJECT", "properties": {"to": {"type": "STRING", "description": value}}}}]}],
        "cachedContent": format!("cachedContents/{value}"),
    });
    let bedrock = json!({
        "system": [{"text": format!("The user is {value}.")}],
        "messages": [
            {"role": "user", "content": [{"text": "Mail them."}]},
            {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "send_mail", "input": {"to": value}}}]},
            {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "content": [{"json": {"sent_to": value}}, {"text": value}]}}]},
        ],
        "toolConfig": {"tools": [{"toolSpec": {"name": "send_mail", "description": format!("Mails {value}"),
            "inputSchema": {"json": {"type": "object", "properties": {"to": {"type": "string", "description": value}}}}}}]},
        "requestMetadata": {"customer": value},
        "additionalModelRequestFields": {"metadata": {"user_id": value}},
    });
    for (path, body) in [
        (
            "/v1beta/models/gemini-2.5-flash:generateContent",
            gemini.clone(),
        ),
        (
            "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
            gemini,
        ),
        ("/model/m/converse", bedrock.clone()),
        ("/model/m/converse-stream", bedrock),
    ] {
        send(fake(), "DELETE", "/_fake/requests", &[], "").await;
        let answer = post(gateway(), path, &[], &body).await;
        let log = send(fake(), "GET", "/_fake/requests", &[], "").await.text();
        assert!(
            !log.contains(&value),
            "{path} (status {}): the provider saw the value",
            answer.status
        );
    }
}
