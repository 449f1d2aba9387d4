//! What the engine knows of each API it speaks, one file per provider.
//!
//! A [`Provider`] says, for both directions:
//! - **requests**: the paths it serves by default, whether its bodies are
//!   JSON or text, and the few request fields kept verbatim
//!   ([`VerbatimField`], each with its reason). Everything else — every
//!   string value and object key at any depth, JSON inside strings, numbers
//!   — is examined and masked: deny by default;
//! - **answers**: which streamed-event fields carry a content slot's text
//!   ([`Provider::stream_slots`]) and which answer strings are signed or
//!   sealed and never altered ([`Provider::sealed_answer_keys`]).
//!
//! Adding a provider: one file here implementing [`Provider`] (the
//! compiler asks for both directions: no method has a default), one line in
//! [`REGISTRY`], and its fixtures (`core/README.md` says how, step by step).

mod anthropic_batches;
mod anthropic_messages;
mod bedrock_converse;
mod bedrock_invoke;
mod files;
mod gemini;
mod generic_json;
mod openai_chat;
mod openai_completions;
mod openai_embeddings;
mod openai_responses;
mod plain_text;
pub mod route;
pub mod stream_slots;
pub(crate) mod verbatim;

pub use route::{normalize_path, PathPattern, RouteTable};
pub use verbatim::{
    is_base64_media, is_data_url_media, is_media_bytes, Verbatim, VerbatimField, Within,
};

use crate::json::Document;
use stream_slots::EventSlots;

/// How a provider's request bodies are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyFormat {
    /// A JSON document: every string value and key is examined.
    Json,
    /// UTF-8 text, examined whole.
    Text,
    /// `multipart/form-data` (file uploads): each part examined by what it
    /// holds (`mask/multipart.rs`).
    Multipart,
}

/// One API the gateway speaks. Implementations are unit structs, listed
/// once in [`REGISTRY`].
pub trait Provider: Sync {
    /// The name in the filter's configuration (`openai-chat`).
    fn name(&self) -> &'static str;

    /// Default request paths, as [`PathPattern`]s (`*` stands for one
    /// segment). Empty for a provider chosen only as a fallback.
    fn default_paths(&self) -> &'static [&'static str];

    /// How request bodies are read.
    fn body_format(&self) -> BodyFormat;

    /// Request fields kept verbatim, each with its reason. Everything not
    /// listed is examined and masked.
    fn verbatim_fields(&self) -> &'static [VerbatimField];

    /// The content-slot deltas and slot ends of one streamed event (JSON
    /// `data`). Fields not reported are still restored, whole, per string.
    fn stream_slots(&self, doc: &Document<'_>, slots: &mut EventSlots);

    /// Keys whose strings in answers are signed or sealed (never altered):
    /// the provider checks them when an agent sends them back. `parent/key`
    /// names the member `key` of an object that is the member `parent`. The
    /// restorer leaves the keys of *every* provider alone, whatever the
    /// request's provider (an answer need not match its path).
    fn sealed_answer_keys(&self) -> &'static [&'static str];
}

/// A provider, as the rest of the engine holds one.
pub type ProviderRef = &'static dyn Provider;

/// OpenAI Chat Completions.
pub static OPENAI_CHAT: ProviderRef = &openai_chat::OpenAiChat;
/// OpenAI Responses.
pub static OPENAI_RESPONSES: ProviderRef = &openai_responses::OpenAiResponses;
/// Anthropic Messages.
pub static ANTHROPIC_MESSAGES: ProviderRef = &anthropic_messages::AnthropicMessages;
/// OpenAI legacy completions.
pub static OPENAI_COMPLETIONS: ProviderRef = &openai_completions::OpenAiCompletions;
/// OpenAI embeddings.
pub static OPENAI_EMBEDDINGS: ProviderRef = &openai_embeddings::OpenAiEmbeddings;
/// Anthropic message batches.
pub static ANTHROPIC_BATCHES: ProviderRef = &anthropic_batches::AnthropicBatches;
/// Google Gemini generateContent (Gemini API and Vertex AI).
pub static GEMINI: ProviderRef = &gemini::Gemini;
/// Amazon Bedrock Converse and ConverseStream.
pub static BEDROCK_CONVERSE: ProviderRef = &bedrock_converse::BedrockConverse;
/// Amazon Bedrock InvokeModel (the model's own body; Claude's Messages).
pub static BEDROCK_INVOKE: ProviderRef = &bedrock_invoke::BedrockInvoke;
/// File uploads (multipart: batch input files).
pub static FILES: ProviderRef = &files::Files;
/// Any other JSON: every string and key, nothing kept.
pub static GENERIC_JSON: ProviderRef = &generic_json::GenericJson;
/// A body that is not JSON: the whole body as text.
pub static PLAIN_TEXT: ProviderRef = &plain_text::PlainText;

/// Every provider, by configuration name. One line per provider.
pub static REGISTRY: &[ProviderRef] = &[
    OPENAI_CHAT,
    OPENAI_RESPONSES,
    ANTHROPIC_MESSAGES,
    OPENAI_COMPLETIONS,
    OPENAI_EMBEDDINGS,
    ANTHROPIC_BATCHES,
    GEMINI,
    BEDROCK_CONVERSE,
    BEDROCK_INVOKE,
    FILES,
    GENERIC_JSON,
    PLAIN_TEXT,
];

/// The provider named `name` in the configuration.
pub fn by_name(name: &str) -> Option<ProviderRef> {
    REGISTRY.iter().copied().find(|p| p.name() == name)
}

/// Every provider's name, for error messages (`expected one of …`).
pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|p| p.name()).collect()
}

impl std::fmt::Debug for dyn Provider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl PartialEq for dyn Provider {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests;
