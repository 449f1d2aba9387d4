//! Request masking, deny by default, resumable when new values need entries,
//! with a memo of masked texts.
//!
//! [`Masker::mask_request`] examines every string value, object key and
//! number of a JSON body at any depth (JSON inside strings included), but
//! the few fields its [`crate::provider::Provider`] keeps verbatim, each
//! with its reason; a text body is examined whole. It decodes each text,
//! finds values in it (vault values anywhere, plus detector findings), and
//! either
//! - answers [`MaskOutcome::Masked`]: every value replaced by its surrogate,
//!   only the changed strings rewritten (re-encoded), every other byte as it
//!   came; or
//! - answers [`MaskOutcome::NeedEntries`] with the distinct new values: the
//!   caller gets entries for them (the filter: one callout), adds them to the
//!   index and calls again. Nothing is emitted half-masked.
//!
//! In redact mode ([`MaskOptions::redact_new`]) new values become their
//! kind's placeholder (`[EMAIL]`) instead.

mod clean_texts;
mod find;
mod masker;
mod memo;
mod multipart;
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests;
mod text;
pub mod transport;
mod views;
pub(crate) use views::{base64_decode, base64_encode};

pub use masker::{MaskOutcome, MaskStats, Masker, TextsOutcome, MAX_JSON_IN_STRING_DEPTH};
pub use text::{mask_text, TextOutcome};

/// How a request is masked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MaskOptions {
    /// Redact mode: a value with no entry becomes its kind's placeholder
    /// (`[EMAIL]`, never restorable) instead of asking for an entry.
    pub redact_new: bool,
}
