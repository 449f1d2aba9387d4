//! Which provider API a request is for (its path and query), and what each
//! API answers: whole, streamed in its own framing, or as an error in its
//! own shape.

use serde_json::Value;

use crate::exchange::{Exchange, RequestError};
use crate::gemini::StreamFraming;
use crate::jobj;
use crate::ordered_json::Json;
use crate::prompt::{decide_reply, rough_tokens, Prompt};
use crate::{anthropic, bedrock, gemini, openai_chat, openai_completions};
use crate::{openai_embeddings, openai_responses};

/// A provider API the fake speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    /// `/v1/chat/completions`, Azure `/openai/deployments/{name}/chat/completions`.
    OpenAiChat,
    /// `/v1/responses`.
    OpenAiResponses,
    /// `/v1/completions`, Azure `/openai/deployments/{name}/completions`.
    OpenAiCompletions,
    /// `/v1/embeddings`, Azure `/openai/deployments/{name}/embeddings`.
    OpenAiEmbeddings,
    /// `/v1/messages`.
    Anthropic,
    /// `/v1/messages/count_tokens`.
    AnthropicCountTokens,
    /// `/v1/messages/batches` (create).
    AnthropicBatches,
    /// `/v1beta/models/{model}:generateContent`.
    GeminiGenerate,
    /// `/v1beta/models/{model}:streamGenerateContent`, SSE with `alt=sse`.
    GeminiStream(StreamFraming),
    /// `/v1beta/models/{model}:countTokens`.
    GeminiCountTokens,
    /// `/model/{modelId}/converse`.
    BedrockConverse,
    /// `/model/{modelId}/converse-stream`.
    BedrockConverseStream,
}

/// A request's API and the model its path names (Azure's deployment,
/// Gemini's and Bedrock's model), percent-decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    pub api: Api,
    pub path_model: Option<String>,
}

impl Route {
    /// The route of `path` (without its query) and `query`, if any API
    /// takes it.
    pub fn of(path: &str, query: Option<&str>) -> Option<Route> {
        let plain = |api| {
            Some(Route {
                api,
                path_model: None,
            })
        };
        let named = |api, model: &str| {
            Some(Route {
                api,
                path_model: Some(percent_decode(model)),
            })
        };
        match path {
            "/v1/chat/completions" | "/openai/v1/chat/completions" => {
                return plain(Api::OpenAiChat)
            }
            "/v1/responses" | "/openai/v1/responses" => return plain(Api::OpenAiResponses),
            "/v1/completions" | "/openai/v1/completions" => return plain(Api::OpenAiCompletions),
            "/v1/embeddings" | "/openai/v1/embeddings" => return plain(Api::OpenAiEmbeddings),
            "/v1/messages" => return plain(Api::Anthropic),
            "/v1/messages/count_tokens" => return plain(Api::AnthropicCountTokens),
            "/v1/messages/batches" => return plain(Api::AnthropicBatches),
            _ => {}
        }
        let segments: Vec<&str> = path.strip_prefix('/')?.split('/').collect();
        match segments.as_slice() {
            ["openai", "deployments", name, rest @ ..] if !name.is_empty() => {
                let api = match rest {
                    ["chat", "completions"] => Api::OpenAiChat,
                    ["completions"] => Api::OpenAiCompletions,
                    ["embeddings"] => Api::OpenAiEmbeddings,
                    _ => return None,
                };
                named(api, name)
            }
            ["v1beta" | "v1", "models" | "tunedModels", model_method] => {
                let (model, method) = model_method.rsplit_once(':')?;
                let api = match method {
                    "generateContent" => Api::GeminiGenerate,
                    "streamGenerateContent" => {
                        let sse = query
                            .unwrap_or_default()
                            .split('&')
                            .any(|pair| pair == "alt=sse");
                        Api::GeminiStream(if sse {
                            StreamFraming::Sse
                        } else {
                            StreamFraming::JsonArray
                        })
                    }
                    "countTokens" => Api::GeminiCountTokens,
                    _ => return None,
                };
                if model.is_empty() {
                    return None;
                }
                named(api, model)
            }
            ["model", id, "converse"] if !id.is_empty() => named(Api::BedrockConverse, id),
            ["model", id, "converse-stream"] if !id.is_empty() => {
                named(Api::BedrockConverseStream, id)
            }
            _ => None,
        }
    }
}

/// `%XX` escapes decoded (Bedrock model ids arrive with `:` as `%3A`); a
/// broken escape is kept as written.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// How an answer is framed.
pub enum Framing {
    /// Server-sent events (`text/event-stream`).
    Sse,
    /// Gemini's JSON array written element by element (`application/json`).
    JsonArray,
    /// AWS event-stream binary frames.
    EventStream,
}

impl Framing {
    /// The stream's `content-type`.
    pub fn content_type(&self) -> &'static str {
        match self {
            Framing::Sse => "text/event-stream; charset=utf-8",
            Framing::JsonArray => "application/json; charset=UTF-8",
            Framing::EventStream => "application/vnd.amazon.eventstream",
        }
    }
}

/// What an API answers.
pub enum Output {
    /// One JSON body with a `content-length`.
    Whole(Json),
    /// A stream: one write per event (frame, array element).
    Stream(Framing, Vec<Vec<u8>>),
}

/// An error in the API's own shape: its body and the extra header it
/// carries (Bedrock's `x-amzn-errortype`).
pub struct ApiError {
    pub body: Json,
    pub header: Option<(&'static str, &'static str)>,
}

fn strings(events: Vec<String>) -> Vec<Vec<u8>> {
    events.into_iter().map(String::into_bytes).collect()
}

impl Api {
    /// Whether the answer is a stream when the body does not say (Gemini
    /// and Bedrock say it in the path).
    fn streams_by_path(self) -> Option<bool> {
        match self {
            Api::GeminiGenerate | Api::BedrockConverse => Some(false),
            Api::GeminiStream(_) | Api::BedrockConverseStream => Some(true),
            _ => None,
        }
    }

    fn read_prompt(self, body: &Value) -> Result<Prompt, RequestError> {
        match self {
            Api::OpenAiChat => openai_chat::read_prompt(body),
            Api::OpenAiResponses => openai_responses::read_prompt(body),
            Api::OpenAiCompletions => openai_completions::read_prompt(body),
            Api::Anthropic => anthropic::read_prompt(body),
            Api::GeminiGenerate | Api::GeminiStream(_) | Api::GeminiCountTokens => {
                gemini::read_prompt(body)
            }
            Api::BedrockConverse | Api::BedrockConverseStream => bedrock::read_prompt(body),
            // Answered without a prompt (see `answer`).
            Api::OpenAiEmbeddings | Api::AnthropicCountTokens | Api::AnthropicBatches => {
                Ok(Prompt::default())
            }
        }
    }

    fn new_call_id(self, ex: &Exchange) -> String {
        match self {
            Api::OpenAiResponses => openai_responses::new_call_id(ex),
            Api::Anthropic => anthropic::new_call_id(ex),
            Api::GeminiGenerate | Api::GeminiStream(_) => gemini::new_call_id(ex),
            Api::BedrockConverse | Api::BedrockConverseStream => bedrock::new_call_id(ex),
            _ => openai_chat::new_call_id(ex),
        }
    }

    /// The answer to `body`. `forced_tool` is `x-fake-tool-call` (ignored
    /// by the APIs without tools).
    pub fn answer(
        self,
        route: &Route,
        body: &Value,
        seq: u64,
        created: u64,
        forced_tool: Option<&str>,
        chunk_chars: usize,
    ) -> Result<Output, RequestError> {
        let mut ex = Exchange {
            seq,
            created,
            model: body
                .get("model")
                .and_then(Value::as_str)
                .or(route.path_model.as_deref())
                .unwrap_or("fake-llm")
                .to_owned(),
            input_tokens: 0,
            include_usage: false,
        };
        match self {
            Api::OpenAiEmbeddings => {
                return openai_embeddings::answer(body, &ex).map(Output::Whole)
            }
            Api::AnthropicCountTokens => return anthropic::count_tokens(body).map(Output::Whole),
            Api::AnthropicBatches => return anthropic::create_batch(body, &ex).map(Output::Whole),
            _ => {}
        }
        let mut prompt = self.read_prompt(body)?;
        if self == Api::GeminiCountTokens {
            return Ok(Output::Whole(gemini::count_tokens(&prompt)));
        }
        if let Some(stream) = self.streams_by_path() {
            prompt.stream = stream;
        }
        ex.input_tokens = rough_tokens(&prompt.last_user_text);
        ex.include_usage = prompt.include_usage;
        if self == Api::OpenAiCompletions {
            return Ok(if prompt.stream {
                Output::Stream(
                    Framing::Sse,
                    strings(openai_completions::stream(&prompt, &ex, chunk_chars)),
                )
            } else {
                Output::Whole(openai_completions::whole(&prompt, &ex))
            });
        }
        let reply = decide_reply(&prompt, forced_tool, self.new_call_id(&ex));
        let output = match (self, prompt.stream) {
            (Api::OpenAiChat, false) => Output::Whole(openai_chat::whole(&reply, &ex)),
            (Api::OpenAiChat, true) => Output::Stream(
                Framing::Sse,
                strings(openai_chat::stream(&reply, &ex, chunk_chars)),
            ),
            (Api::OpenAiResponses, false) => Output::Whole(openai_responses::whole(&reply, &ex)),
            (Api::OpenAiResponses, true) => Output::Stream(
                Framing::Sse,
                strings(openai_responses::stream(&reply, &ex, chunk_chars)),
            ),
            (Api::Anthropic, false) => Output::Whole(anthropic::whole(&reply, &ex)),
            (Api::Anthropic, true) => Output::Stream(
                Framing::Sse,
                strings(anthropic::stream(&reply, &ex, chunk_chars)),
            ),
            (Api::GeminiStream(framing), _) => {
                let chunks = gemini::stream_chunks(&reply, &ex, chunk_chars);
                let framing_out = match framing {
                    StreamFraming::Sse => Framing::Sse,
                    StreamFraming::JsonArray => Framing::JsonArray,
                };
                Output::Stream(framing_out, strings(gemini::frame(&chunks, framing)))
            }
            (Api::BedrockConverseStream, _) => Output::Stream(
                Framing::EventStream,
                bedrock::stream(&reply, &ex, chunk_chars),
            ),
            (Api::BedrockConverse, _) => Output::Whole(bedrock::whole(&reply, &ex)),
            // generateContent, and nothing else reaches here.
            _ => Output::Whole(gemini::whole(&reply, &ex)),
        };
        Ok(output)
    }

    /// The provider's error body for `status`.
    pub fn error(self, status: u16, message: &str) -> ApiError {
        let body = match self {
            Api::Anthropic | Api::AnthropicCountTokens | Api::AnthropicBatches => jobj! {
                "type": "error",
                "error": jobj! {"type": anthropic_error_type(status), "message": message},
            },
            Api::GeminiGenerate | Api::GeminiStream(_) | Api::GeminiCountTokens => {
                gemini::error_body(status, message)
            }
            Api::BedrockConverse | Api::BedrockConverseStream => {
                return ApiError {
                    body: bedrock::error_body(message),
                    header: Some(("x-amzn-errortype", bedrock::error_type(status))),
                }
            }
            Api::OpenAiChat
            | Api::OpenAiResponses
            | Api::OpenAiCompletions
            | Api::OpenAiEmbeddings => jobj! {
                "error": jobj! {
                    "message": message,
                    "type": openai_error_type(status),
                    "param": Json::Null,
                    "code": Json::Null,
                },
            },
        };
        ApiError { body, header: None }
    }
}

fn anthropic_error_type(status: u16) -> &'static str {
    match status {
        400 => "invalid_request_error",
        401 => "authentication_error",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        _ => "api_error",
    }
}

fn openai_error_type(status: u16) -> &'static str {
    match status {
        400 => "invalid_request_error",
        429 => "rate_limit_exceeded",
        _ => "server_error",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Path, query, and the API and path model wanted.
    type RouteCase<'a> = (&'a str, Option<&'a str>, Option<(Api, Option<&'a str>)>);

    #[test]
    fn routes_table() {
        let cases: &[RouteCase] = &[
            ("/v1/chat/completions", None, Some((Api::OpenAiChat, None))),
            (
                "/v1/messages/count_tokens",
                None,
                Some((Api::AnthropicCountTokens, None)),
            ),
            (
                "/v1/messages/batches",
                None,
                Some((Api::AnthropicBatches, None)),
            ),
            (
                "/openai/deployments/gpt-4o-dep/chat/completions",
                Some("api-version=2024-10-21"),
                Some((Api::OpenAiChat, Some("gpt-4o-dep"))),
            ),
            (
                "/openai/deployments/emb/embeddings",
                None,
                Some((Api::OpenAiEmbeddings, Some("emb"))),
            ),
            (
                "/v1beta/models/gemini-2.5-flash:generateContent",
                None,
                Some((Api::GeminiGenerate, Some("gemini-2.5-flash"))),
            ),
            (
                "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
                Some("alt=sse&key=k"),
                Some((
                    Api::GeminiStream(StreamFraming::Sse),
                    Some("gemini-2.5-flash"),
                )),
            ),
            (
                "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
                Some("key=k"),
                Some((
                    Api::GeminiStream(StreamFraming::JsonArray),
                    Some("gemini-2.5-flash"),
                )),
            ),
            (
                "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse",
                None,
                Some((
                    Api::BedrockConverse,
                    Some("anthropic.claude-3-haiku-20240307-v1:0"),
                )),
            ),
            (
                "/model/m/converse-stream",
                None,
                Some((Api::BedrockConverseStream, Some("m"))),
            ),
            ("/v1beta/models/:generateContent", None, None),
            ("/v1beta/models/g:embedContent", None, None),
            ("/model//converse", None, None),
            ("/openai/deployments/d/images", None, None),
            ("/v2/nothing", None, None),
        ];
        for (path, query, want) in cases {
            let got = Route::of(path, *query).map(|r| (r.api, r.path_model));
            let want = want.map(|(api, model)| (api, model.map(str::to_owned)));
            assert_eq!(got, want, "{path}");
        }
    }

    #[test]
    fn percent_decode_table() {
        for (raw, want) in [
            ("a%3Ab", "a:b"),
            ("a%3", "a%3"),
            ("%zz", "%zz"),
            ("%", "%"),
            ("x", "x"),
        ] {
            assert_eq!(percent_decode(raw), want, "{raw}");
        }
    }
}
