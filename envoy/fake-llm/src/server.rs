//! Routing and the control headers: which API answers, how it is streamed.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::header::{HeaderMap, HeaderValue, CACHE_CONTROL, CONTENT_TYPE};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::Value;

use crate::api::{Api, Output, Route};
use crate::exchange::RequestError;
use crate::paced_body::PacedBody;
use crate::request_log::{RecordedRequest, RequestLog};
use crate::sse;

/// Default maximum characters of text per streamed delta.
pub const DEFAULT_CHUNK_CHARS: usize = 3;

/// Default pause between two writes of a stream. Measured through Envoy 1.40
/// on loopback: with no pause (a yield only) Envoy read all 27 events of a
/// short answer in one read; with 1 ms it saw 24 of 27 apart. Real providers
/// space their events by 10 ms or more.
pub const DEFAULT_CHUNK_DELAY: Duration = Duration::from_millis(1);

/// The fake LLM's state: its request log and its defaults.
pub struct FakeLlm {
    /// Every request answered.
    pub log: RequestLog,
    /// Pause between two writes of a stream when the request does not say
    /// (`x-fake-chunk-delay-ms`).
    pub default_delay: Duration,
}

impl Default for FakeLlm {
    fn default() -> Self {
        Self {
            log: RequestLog::default(),
            default_delay: DEFAULT_CHUNK_DELAY,
        }
    }
}

/// `x-fake-chunk: N`: at most N characters of text (or tool arguments) per
/// streamed delta event.
pub const HEADER_CHUNK: &str = "x-fake-chunk";
/// `x-fake-chunk-delay-ms: N`: pause N ms between two writes of a stream
/// (0: only yield, so each event is still its own write).
pub const HEADER_DELAY: &str = "x-fake-chunk-delay-ms";
/// `x-fake-write-bytes: N`: ignore event boundaries and write the stream in
/// pieces of N bytes (splits events, lines and UTF-8 sequences).
pub const HEADER_WRITE_BYTES: &str = "x-fake-write-bytes";
/// `x-fake-tool-call: NAME`: answer with one call to tool NAME whose
/// arguments are `{"text": <last user text>}`.
pub const HEADER_TOOL_CALL: &str = "x-fake-tool-call";
/// `x-fake-status: N`: answer with status N and the provider's error shape.
pub const HEADER_STATUS: &str = "x-fake-status";

/// How to send a stream, from the control headers.
struct Pacing {
    chunk_chars: usize,
    delay: Duration,
    write_bytes: Option<usize>,
}

fn positive_header(headers: &HeaderMap, name: &'static str) -> Result<Option<usize>, RequestError> {
    match headers.get(name) {
        None => Ok(None),
        Some(value) => value
            .to_str()
            .ok()
            .and_then(|text| text.trim().parse::<usize>().ok())
            .filter(|n| *n > 0)
            .map(Some)
            .ok_or(RequestError::BadHeader(name)),
    }
}

fn pacing(headers: &HeaderMap, default_delay: Duration) -> Result<Pacing, RequestError> {
    let delay = match headers.get(HEADER_DELAY) {
        None => default_delay,
        Some(value) => value
            .to_str()
            .ok()
            .and_then(|text| text.trim().parse::<u64>().ok())
            .map(Duration::from_millis)
            .ok_or(RequestError::BadHeader(HEADER_DELAY))?,
    };
    Ok(Pacing {
        chunk_chars: positive_header(headers, HEADER_CHUNK)?.unwrap_or(DEFAULT_CHUNK_CHARS),
        delay,
        write_bytes: positive_header(headers, HEADER_WRITE_BYTES)?,
    })
}

type Answer = Response<PacedBody>;

fn respond(status: StatusCode, content_type: &'static str, body: impl Into<Bytes>) -> Answer {
    let mut response = Response::new(PacedBody::whole(body));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

fn respond_json(status: StatusCode, body: &impl std::fmt::Display) -> Answer {
    respond(status, "application/json", body.to_string())
}

fn fields(map: &HeaderMap) -> Vec<(String, String)> {
    map.iter()
        .map(|(name, value)| {
            (
                name.as_str().to_owned(),
                String::from_utf8_lossy(value.as_bytes()).into_owned(),
            )
        })
        .collect()
}

/// The request as it arrived, before its body: method, path with query,
/// protocol and headers (an HTTP/2 `:authority` is kept as a header of
/// that name: the provider sees it too).
fn arrived(parts: &hyper::http::request::Parts) -> RecordedRequest {
    let mut headers = Vec::new();
    if let Some(authority) = parts.uri.authority() {
        headers.push((":authority".to_owned(), authority.as_str().to_owned()));
    }
    headers.extend(fields(&parts.headers));
    RecordedRequest::new(
        parts.method.to_string(),
        parts
            .uri
            .path_and_query()
            .map(|pq| pq.as_str().to_owned())
            .unwrap_or_else(|| parts.uri.path().to_owned()),
        format!("{:?}", parts.version),
        headers,
    )
}

/// Answers one request. Never fails: errors become provider-shaped answers.
pub async fn handle(request: Request<Incoming>, fake: Arc<FakeLlm>) -> Result<Answer, Infallible> {
    let log = &fake.log;
    let (parts, mut body) = request.into_parts();
    let path = parts.uri.path();
    if path.starts_with("/_fake/") {
        if body.collect().await.is_err() {
            return Ok(unreadable_body());
        }
        return Ok(control_route(&parts.method, path, log));
    }
    // Logged from the headers on, the body and trailers added as they come.
    let recording = log.start(arrived(&parts));
    let mut whole = BytesMut::new();
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else {
            return Ok(unreadable_body());
        };
        match frame.into_data() {
            Ok(data) => {
                recording.body(&data);
                whole.extend_from_slice(&data);
            }
            Err(frame) => {
                if let Ok(trailers) = frame.into_trailers() {
                    recording.trailers(fields(&trailers));
                }
            }
        }
    }
    recording.complete();
    let seq = recording.seq;
    drop(recording);
    let body = whole.freeze();
    let route = Route::of(path, parts.uri.query()).filter(|_| parts.method == Method::POST);
    let Some(route) = route else {
        return Ok(respond(
            StatusCode::NOT_FOUND,
            "text/plain",
            "no such route\n",
        ));
    };
    Ok(answer_api(
        &route,
        &parts.headers,
        &body,
        seq,
        fake.default_delay,
    ))
}

fn unreadable_body() -> Answer {
    respond(
        StatusCode::BAD_REQUEST,
        "text/plain",
        "could not read the request body\n",
    )
}

/// The fake LLM's own routes under `/_fake/`.
fn control_route(method: &Method, path: &str, log: &RequestLog) -> Answer {
    match (method, path) {
        (&Method::GET, "/_fake/health") => respond(StatusCode::OK, "text/plain", "ok\n"),
        (&Method::GET, "/_fake/requests/last") => match log.last() {
            Some(last) => {
                let content_type = last
                    .headers
                    .iter()
                    .find(|(name, _)| name == "content-type")
                    .and_then(|(_, value)| HeaderValue::from_str(value).ok())
                    .unwrap_or(HeaderValue::from_static("application/octet-stream"));
                let mut answer = respond(StatusCode::OK, "application/json", last.body);
                answer.headers_mut().insert(CONTENT_TYPE, content_type);
                answer
            }
            None => respond(StatusCode::NOT_FOUND, "text/plain", "no request yet\n"),
        },
        (&Method::GET, "/_fake/requests") => respond_json(StatusCode::OK, &log.to_json()),
        (&Method::GET, "/_fake/requests/in-flight") => respond_json(
            StatusCode::OK,
            &serde_json::json!({"in_flight": log.in_flight()}),
        ),
        (&Method::DELETE, "/_fake/requests") => {
            log.clear();
            respond(StatusCode::NO_CONTENT, "text/plain", Bytes::new())
        }
        _ => respond(StatusCode::NOT_FOUND, "text/plain", "no such route\n"),
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn respond_error(api: Api, status: StatusCode, message: &str) -> Answer {
    let error = api.error(status.as_u16(), message);
    let mut answer = respond_json(status, &error.body);
    if let Some((name, value)) = error.header {
        answer
            .headers_mut()
            .insert(name, HeaderValue::from_static(value));
    }
    answer
}

fn answer_api(
    route: &Route,
    headers: &HeaderMap,
    body: &[u8],
    seq: u64,
    default_delay: Duration,
) -> Answer {
    let api = route.api;
    let fail =
        |status: StatusCode, error: &RequestError| respond_error(api, status, &error.to_string());
    let pacing = match pacing(headers, default_delay) {
        Ok(pacing) => pacing,
        Err(error) => return fail(StatusCode::BAD_REQUEST, &error),
    };
    if let Some(forced) = headers.get(HEADER_STATUS) {
        let status = forced
            .to_str()
            .ok()
            .and_then(|text| text.trim().parse::<u16>().ok())
            .and_then(|code| StatusCode::from_u16(code).ok());
        return match status {
            Some(status) => respond_error(api, status, "forced by x-fake-status"),
            None => fail(
                StatusCode::BAD_REQUEST,
                &RequestError::BadHeader(HEADER_STATUS),
            ),
        };
    }
    let parsed: Value = match serde_json::from_slice(body) {
        Ok(value) => value,
        Err(_) => return fail(StatusCode::BAD_REQUEST, &RequestError::InvalidJson),
    };
    let forced_tool = headers.get(HEADER_TOOL_CALL).and_then(|v| v.to_str().ok());
    let output = api.answer(
        route,
        &parsed,
        seq,
        unix_now(),
        forced_tool,
        pacing.chunk_chars,
    );
    let (framing, events) = match output {
        Ok(Output::Whole(json)) => return respond_json(StatusCode::OK, &json),
        Ok(Output::Stream(framing, events)) => (framing, events),
        Err(error) => return fail(StatusCode::BAD_REQUEST, &error),
    };
    let writes = match pacing.write_bytes {
        Some(size) => sse::regroup(&events, size),
        None => events.into_iter().map(Bytes::from).collect(),
    };
    let mut response = Response::new(PacedBody::new(writes, pacing.delay));
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static(framing.content_type()),
    );
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}
