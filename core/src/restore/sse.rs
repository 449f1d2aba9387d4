//! One server-sent-events answer, restored chunk by chunk.
//!
//! Events are framed as they arrive ([`super::sse_frame`]); each complete
//! one goes through the stream's [`SlotTable`] (content slots restored
//! across deltas, every other string whole, every other byte kept). When a
//! slot ends (`content_block_stop`, a `finish_reason`, a Responses
//! `.done`, `[DONE]`, `message_stop`, the end of the stream) its held text
//! goes out in a delta event cloned from the slot's last one, just before
//! the event that ends it.
//!
//! Events whose data is not JSON (`[DONE]`, anything else) pass through
//! untouched: providers send JSON, and rewriting unknown text inside SSE
//! framing could break it (a value holding a line break).

use super::policy::RestoreView;
use super::slot_table::{EventIn, SlotTable, Wrap};
use super::sse_frame::{SseEvent, SseFramer, SseLine};
use super::RestoreStats;
use crate::provider::stream_slots::SlotEnd;
use crate::provider::{ProviderRef, GENERIC_JSON};

/// Restores one SSE stream (one per answer). The index may change between
/// calls (a forget applied mid-stream): each call uses the one it is given.
pub struct SseRestorer {
    framer: SseFramer,
    slots: SlotTable,
}

impl Default for SseRestorer {
    fn default() -> Self {
        SseRestorer::new()
    }
}

impl SseRestorer {
    /// A restorer for a new stream whose events may be any known
    /// provider's ([`GENERIC_JSON`] reads them all).
    pub fn new() -> Self {
        SseRestorer::for_provider(GENERIC_JSON)
    }

    /// A restorer for a new stream of `provider`'s events.
    pub fn for_provider(provider: ProviderRef) -> Self {
        SseRestorer {
            framer: SseFramer::default(),
            slots: SlotTable::new(provider),
        }
    }

    /// Feeds a network chunk; appends to `out` what can be forwarded now.
    /// `view` as for [`super::restore_body`]; give every call of one answer
    /// the same scope and URL rule.
    pub fn push<'a>(
        &mut self,
        view: impl Into<RestoreView<'a>>,
        chunk: &[u8],
        out: &mut Vec<u8>,
    ) -> RestoreStats {
        let view = &view.into();
        let mut stats = RestoreStats::default();
        let SseRestorer { framer, slots } = self;
        framer.push(chunk, |event| {
            stats += sse_event(slots, view, &event, false, out)
        });
        stats
    }

    /// End of stream: flushes everything held.
    pub fn finish<'a>(
        &mut self,
        view: impl Into<RestoreView<'a>>,
        out: &mut Vec<u8>,
    ) -> RestoreStats {
        let view = &view.into();
        let mut stats = RestoreStats::default();
        let SseRestorer { framer, slots } = self;
        framer.finish(|event| stats += sse_event(slots, view, &event, true, out));
        stats += slots.end(view, &[SlotEnd::All], &[], out);
        stats
    }

    /// Bytes held back: an event not yet complete, and slot tails that may
    /// still become surrogates.
    pub fn held_bytes(&self) -> usize {
        self.framer.held_bytes() + self.slots.held_bytes()
    }
}

/// One SSE event through the slot table: its data is its `data:` lines.
fn sse_event(
    slots: &mut SlotTable,
    view: &RestoreView<'_>,
    event: &SseEvent<'_>,
    end_all: bool,
    out: &mut Vec<u8>,
) -> RestoreStats {
    let lines: Vec<SseLine> = event.data_lines().collect();
    let event = EventIn {
        raw: event.raw,
        lines: &lines,
        wrap: &Wrap::AsIs,
        terminated: event.terminated,
    };
    slots.event(view, &event, end_all, out)
}
