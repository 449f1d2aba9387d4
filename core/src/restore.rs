//! Restoring surrogates in answers, whole and streamed.
//!
//! Only active surrogates are restored (to their values); a retired one is
//! left as written and counted in [`RestoreStats::declined_retired`].
//! Nothing but surrogates changes: bytes that need no change are kept as
//! they came, and a restored value landing in JSON is JSON-escaped.
//!
//! - [`restore_body`]: a whole answer, JSON (every string value, any shape)
//!   or plain text.
//! - [`SseRestorer`]: one server-sent-events answer, chunk by chunk, per
//!   content slot (choice, block, tool call), holding back only the tail
//!   that could still become a surrogate; [`EventStreamRestorer`] the same
//!   for AWS event-stream frames (Bedrock), [`JsonArrayRestorer`] for a
//!   JSON array streamed element by element (Gemini); [`StreamRestorer`]
//!   picks one by [`AnswerFormat`].
//!
//! A text (a string value, or a slot's text) whose first non-whitespace
//! char is `{` or `[` is restored as JSON text: tool-call arguments are JSON
//! inside a JSON string, where a surrogate may be written with escapes and a
//! value must be escaped once more (see `fragment`).
//!
//! Signed or sealed reasoning is never altered: strings under a key any
//! provider names ([`crate::provider::Provider::sealed_answer_keys`]:
//! Anthropic `thinking` and `signature`, OpenAI `encrypted_content`) are
//! passed as they came, whatever provider the request went to, as the masker leaves them: the provider checks
//! them when an agent sends them back. Which events carry a content slot
//! is the provider's too ([`crate::provider::Provider::stream_slots`]).

mod body;
mod event_stream;
mod fragment;
mod held_text;
mod json_array;
mod policy;
mod slot_table;
mod sse;
mod sse_frame;
mod stream;
mod url_tracker;

pub use body::{restore_body, restore_text};
pub use event_stream::EventStreamRestorer;
pub use json_array::JsonArrayRestorer;
pub use policy::{HostPattern, RequestScope, RestoreView, UrlRule};
pub use sse::SseRestorer;
pub use stream::{AnswerFormat, StreamRestorer};

/// What a restore did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RestoreStats {
    /// Active surrogates replaced by their values.
    pub restored: usize,
    /// Retired surrogates found and left as written.
    pub declined_retired: usize,
    /// Active surrogates left as written: not of an entry this request's
    /// masking used ([`RequestScope`]).
    pub declined_out_of_scope: usize,
    /// Active surrogates left as written: inside a URL whose host may not
    /// receive values ([`UrlRule`]).
    pub declined_url: usize,
}

impl RestoreStats {
    fn count_declined(&mut self, admit: &policy::Admit<'_>) {
        match admit {
            policy::Admit::OutOfScope => self.declined_out_of_scope += 1,
            policy::Admit::InUrl => self.declined_url += 1,
            policy::Admit::Gone | policy::Admit::Restore(_) => {}
        }
    }
}

impl std::ops::AddAssign for RestoreStats {
    fn add_assign(&mut self, other: RestoreStats) {
        self.restored += other.restored;
        self.declined_retired += other.declined_retired;
        self.declined_out_of_scope += other.declined_out_of_scope;
        self.declined_url += other.declined_url;
    }
}

impl std::ops::Add for RestoreStats {
    type Output = RestoreStats;

    fn add(mut self, other: RestoreStats) -> RestoreStats {
        self += other;
        self
    }
}
