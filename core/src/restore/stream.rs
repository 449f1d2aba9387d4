//! How an answer is restored, from its content type and the request's
//! path: whole, or streamed in the framing it comes in.

use super::event_stream::EventStreamRestorer;
use super::json_array::JsonArrayRestorer;
use super::policy::RestoreView;
use super::sse::SseRestorer;
use super::RestoreStats;
use crate::provider::ProviderRef;
use crate::CoreError;

/// How an answer is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnswerFormat {
    /// Buffered and restored whole (JSON or text).
    Whole,
    /// Server-sent events (`text/event-stream`).
    Sse,
    /// AWS event-stream frames (`application/vnd.amazon.eventstream`).
    EventStream,
    /// A JSON array streamed element by element (Gemini's
    /// `:streamGenerateContent` without `alt=sse`).
    JsonArray,
    /// Anything else (images, audio, archives): passed as it comes. A
    /// surrogate is not a value, so nothing leaks; it stays a surrogate.
    Other,
}

impl AnswerFormat {
    /// The format of an answer with `content_type` to a request for
    /// `path` (as sent: query and all).
    pub fn of(content_type: &str, path: &str) -> AnswerFormat {
        let media = content_type.split(';').next().unwrap_or_default().trim();
        let is = |name: &str| media.eq_ignore_ascii_case(name);
        if is("text/event-stream") {
            AnswerFormat::Sse
        } else if is("application/vnd.amazon.eventstream") {
            AnswerFormat::EventStream
        } else if contains_ignore_case(media, "json") {
            if streams_json_array(path) {
                AnswerFormat::JsonArray
            } else {
                AnswerFormat::Whole
            }
        } else if media.is_empty() || starts_text(media) {
            AnswerFormat::Whole
        } else {
            AnswerFormat::Other
        }
    }
}

fn contains_ignore_case(haystack: &str, needle: &str) -> bool {
    haystack
        .as_bytes()
        .windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

fn starts_text(media: &str) -> bool {
    media
        .get(..5)
        .is_some_and(|head| head.eq_ignore_ascii_case("text/"))
}

/// Whether the path (query dropped) ends in Gemini's streaming method,
/// which answers a JSON array when `alt=sse` is not asked for.
fn streams_json_array(path: &str) -> bool {
    const METHOD: &str = ":streamgeneratecontent";
    let path = &path[..path.find(['?', '#']).unwrap_or(path.len())];
    path.len() >= METHOD.len()
        && path.as_bytes()[path.len() - METHOD.len()..].eq_ignore_ascii_case(METHOD.as_bytes())
}

/// One streamed answer's restorer, in its framing.
pub enum StreamRestorer {
    Sse(SseRestorer),
    EventStream(EventStreamRestorer),
    JsonArray(JsonArrayRestorer),
}

impl StreamRestorer {
    /// A restorer for `format` (`None` when the format is not streamed).
    pub fn new(format: AnswerFormat, provider: ProviderRef) -> Option<Self> {
        match format {
            AnswerFormat::Sse => Some(Self::Sse(SseRestorer::for_provider(provider))),
            AnswerFormat::EventStream => Some(Self::EventStream(
                EventStreamRestorer::for_provider(provider),
            )),
            AnswerFormat::JsonArray => {
                Some(Self::JsonArray(JsonArrayRestorer::for_provider(provider)))
            }
            AnswerFormat::Whole | AnswerFormat::Other => None,
        }
    }

    /// Feeds a network chunk; appends to `out` what can be forwarded now.
    pub fn push<'a>(
        &mut self,
        view: impl Into<RestoreView<'a>>,
        chunk: &[u8],
        out: &mut Vec<u8>,
    ) -> RestoreStats {
        match self {
            Self::Sse(r) => r.push(view, chunk, out),
            Self::EventStream(r) => r.push(view, chunk, out),
            Self::JsonArray(r) => r.push(view, chunk, out),
        }
    }

    /// End of stream: flushes everything held.
    pub fn finish<'a>(
        &mut self,
        view: impl Into<RestoreView<'a>>,
        out: &mut Vec<u8>,
    ) -> RestoreStats {
        match self {
            Self::Sse(r) => r.finish(view, out),
            Self::EventStream(r) => r.finish(view, out),
            Self::JsonArray(r) => r.finish(view, out),
        }
    }

    /// Bytes held back.
    pub fn held_bytes(&self) -> usize {
        match self {
            Self::Sse(r) => r.held_bytes(),
            Self::EventStream(r) => r.held_bytes(),
            Self::JsonArray(r) => r.held_bytes(),
        }
    }

    /// Why the stream was broken off (a malformed event-stream frame).
    pub fn error(&self) -> Option<&CoreError> {
        match self {
            Self::EventStream(r) => r.error(),
            Self::Sse(_) | Self::JsonArray(_) => None,
        }
    }
}
