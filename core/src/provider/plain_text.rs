//! A body that is not JSON: examined whole as UTF-8 text (a body that is
//! not UTF-8 is refused). Answers are restored as text.

use super::stream_slots::EventSlots;
use super::{BodyFormat, Provider, VerbatimField};
use crate::json::Document;

/// Plain text.
pub(super) struct PlainText;

impl Provider for PlainText {
    fn name(&self) -> &'static str {
        "text"
    }

    fn default_paths(&self) -> &'static [&'static str] {
        &[]
    }

    fn body_format(&self) -> BodyFormat {
        BodyFormat::Text
    }

    fn verbatim_fields(&self) -> &'static [VerbatimField] {
        &[]
    }

    fn stream_slots(&self, _doc: &Document<'_>, _slots: &mut EventSlots) {
        // No JSON events: nothing is a slot.
    }

    fn sealed_answer_keys(&self) -> &'static [&'static str] {
        &[]
    }
}
