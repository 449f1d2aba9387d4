//! One server-sent-events answer, restored chunk by chunk.
//!
//! Events are framed as they arrive ([`super::sse_frame`]); each complete
//! event whose data is JSON is rewritten in place: the text field of each
//! content slot goes through that slot's [`FragmentRestorer`] (so a
//! surrogate split across deltas is restored, and only the tail that could
//! still become one is held), every other string value is restored whole,
//! and every other byte is kept. When a slot ends (`content_block_stop`, a
//! `finish_reason`, a Responses `.done`, `[DONE]`, `message_stop`, the end
//! of the stream) its held text goes out in a delta event cloned from the
//! slot's last one, just before the event that ends it.
//!
//! Events whose data is not JSON (`[DONE]`, anything else) pass through
//! untouched: providers send JSON, and rewriting unknown text inside SSE
//! framing could break it (a value holding a line break).

use super::body::{restore_string, StringScratch};
use super::fragment::FragmentRestorer;
use super::policy::RestoreView;
use super::sse_frame::{SseEvent, SseFramer, SseLine};
use super::RestoreStats;
use crate::json::{encode_into, Document};
use crate::provider::stream_slots::{EventSlots, SlotEnd, SlotKey};
use crate::provider::{ProviderRef, GENERIC_JSON};
use std::borrow::Cow;
use std::ops::Range;

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
            slots: SlotTable {
                provider,
                slots: Vec::new(),
                scratch: StringScratch::default(),
            },
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
            stats += slots.event(view, &event, false, out)
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
        framer.finish(|event| stats += slots.event(view, &event, true, out));
        stats += slots.end(view, &[SlotEnd::All], &[], out);
        stats
    }

    /// Bytes held back: an event not yet complete, and slot tails that may
    /// still become surrogates.
    pub fn held_bytes(&self) -> usize {
        self.framer.held_bytes() + self.slots.held_bytes()
    }
}

/// The open content slots of a stream.
struct SlotTable {
    provider: ProviderRef,
    slots: Vec<SlotState>,
    scratch: StringScratch,
}

struct SlotState {
    key: SlotKey,
    text: FragmentRestorer,
    /// The slot's last delta event as emitted, to clone for a flush.
    template: Option<Template>,
}

/// An emitted event and where each slot's text field (raw string body) is in it.
struct Template {
    event: Vec<u8>,
    fields: Vec<(SlotKey, Range<usize>)>,
}

/// One replacement in an event's data: a string body and its new raw bytes,
/// and the slot whose text field it is (if any).
struct Edit {
    span: Range<usize>,
    bytes: Vec<u8>,
    slot: Option<SlotKey>,
}

impl SlotTable {
    fn held_bytes(&self) -> usize {
        self.slots.iter().map(|s| s.text.held_len()).sum()
    }

    /// Handles one complete event (or, with `end_all`, the stream's last one).
    fn event(
        &mut self,
        view: &RestoreView<'_>,
        event: &SseEvent<'_>,
        end_all: bool,
        out: &mut Vec<u8>,
    ) -> RestoreStats {
        // What is left at the end of a stream ends every slot.
        let end_all = end_all || !event.terminated;
        let lines: Vec<SseLine> = event.data_lines().collect();
        let data: Cow<'_, [u8]> = match lines.as_slice() {
            [] => Cow::Borrowed(&[]),
            [one] => Cow::Borrowed(&event.raw[one.start..one.end]),
            many => Cow::Owned(join_lines(event.raw, many)),
        };
        let doc = if lines.is_empty() {
            None
        } else {
            Document::parse(&data).ok()
        };
        let Some(doc) = doc else {
            let mut stats = RestoreStats::default();
            if end_all || data.as_ref() == b"[DONE]" {
                stats += self.end(view, &[SlotEnd::All], &[], out);
            }
            out.extend_from_slice(event.raw);
            return stats;
        };
        self.json_event(view, event, &lines, &doc, end_all, out)
    }

    fn json_event(
        &mut self,
        view: &RestoreView<'_>,
        event: &SseEvent<'_>,
        lines: &[SseLine],
        doc: &Document<'_>,
        end_all: bool,
        out: &mut Vec<u8>,
    ) -> RestoreStats {
        let mut shape = EventSlots::default();
        self.provider.stream_slots(doc, &mut shape);
        if shape.deltas.is_empty() && shape.ends.is_empty() {
            // An answer need not match its request's path (a compatible
            // server, a proxy): events the provider does not read are read
            // as any known provider's, so a split surrogate is still held.
            GENERIC_JSON.stream_slots(doc, &mut shape);
        }
        let mut ends = shape.ends;
        if end_all {
            ends.push(SlotEnd::All);
        }
        let here: Vec<SlotKey> = shape.deltas.iter().map(|(k, _)| k.clone()).collect();
        // Slots that end here without a delta in this event flush first.
        let mut stats = self.end(view, &ends, &here, out);

        let mut edits = Vec::new();
        for (key, node) in &shape.deltas {
            let Some(Ok(text)) = doc.str_value(*node) else {
                continue;
            };
            let ending = ends.iter().any(|end| end.covers(key));
            let slot = self.slot(key);
            let mut restored = Vec::with_capacity(text.len());
            stats += slot.text.push(view, &text, &mut restored);
            if ending {
                stats += slot.text.finish(view, &mut restored);
            }
            let bytes = if restored == text.as_bytes() {
                doc.raw(*node).to_vec()
            } else {
                let mut encoded = Vec::with_capacity(restored.len() + 8);
                encode_into(&String::from_utf8_lossy(&restored), &mut encoded);
                encoded
            };
            edits.push(Edit {
                span: doc.span(*node),
                bytes,
                slot: Some(key.clone()),
            });
        }
        for id in doc.strings() {
            if shape.deltas.iter().any(|(_, node)| *node == id) {
                continue;
            }
            if let Some((span, bytes)) =
                restore_string(view, doc, id, &mut self.scratch, &mut stats)
            {
                edits.push(Edit {
                    span,
                    bytes,
                    slot: None,
                });
            }
        }
        let (emitted, fields) = rewrite_event(event.raw, lines, edits);
        for key in &here {
            let ending = ends.iter().any(|end| end.covers(key));
            if ending {
                self.slots.retain(|s| s.key != *key);
            } else if let Some(slot) = self.slots.iter_mut().find(|s| s.key == *key) {
                slot.template = Some(Template {
                    event: emitted.clone(),
                    fields: fields.clone(),
                });
            }
        }
        out.extend_from_slice(&emitted);
        stats
    }

    fn slot(&mut self, key: &SlotKey) -> &mut SlotState {
        let at = match self.slots.iter().position(|s| s.key == *key) {
            Some(at) => at,
            None => {
                self.slots.push(SlotState {
                    key: key.clone(),
                    text: FragmentRestorer::default(),
                    template: None,
                });
                self.slots.len() - 1
            }
        };
        &mut self.slots[at]
    }

    /// Ends the slots covered by `ends` (except those in `except`, which a
    /// delta of the current event flushes in place): their held text goes
    /// out as a delta event cloned from their last one.
    fn end(
        &mut self,
        view: &RestoreView<'_>,
        ends: &[SlotEnd],
        except: &[SlotKey],
        out: &mut Vec<u8>,
    ) -> RestoreStats {
        let mut stats = RestoreStats::default();
        let mut kept = Vec::with_capacity(self.slots.len());
        for mut slot in self.slots.drain(..) {
            if except.contains(&slot.key) || !ends.iter().any(|end| end.covers(&slot.key)) {
                kept.push(slot);
                continue;
            }
            let mut rest = Vec::new();
            stats += slot.text.finish(view, &mut rest);
            if let (false, Some(template)) = (rest.is_empty(), &slot.template) {
                synthesize(template, &slot.key, &rest, out);
            }
        }
        self.slots = kept;
        stats
    }
}

/// The data lines joined by `\n` (an event's data, per the SSE rules).
fn join_lines(raw: &[u8], lines: &[SseLine]) -> Vec<u8> {
    let mut data = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            data.push(b'\n');
        }
        data.extend_from_slice(&raw[line.start..line.end]);
    }
    data
}

/// Maps an offset in the joined data to the raw event. A JSON string never
/// holds a raw line break, so an edited span lies within one line.
fn raw_offset(lines: &[SseLine], mut at: usize) -> usize {
    for line in lines {
        let len = line.end - line.start;
        if at <= len {
            return line.start + at;
        }
        at -= len + 1;
    }
    lines.last().map_or(0, |l| l.end)
}

/// Applies `edits` (data offsets) to the raw event; returns the new event
/// and where each slot's text field lies in it.
fn rewrite_event(
    raw: &[u8],
    lines: &[SseLine],
    mut edits: Vec<Edit>,
) -> (Vec<u8>, Vec<(SlotKey, Range<usize>)>) {
    edits.sort_by_key(|e| e.span.start);
    let mut emitted = Vec::with_capacity(raw.len() + 16);
    let mut fields = Vec::new();
    let mut copied = 0;
    for edit in edits {
        let start = raw_offset(lines, edit.span.start);
        let end = raw_offset(lines, edit.span.end);
        if start < copied || end < start {
            continue;
        }
        emitted.extend_from_slice(&raw[copied..start]);
        let field_start = emitted.len();
        emitted.extend_from_slice(&edit.bytes);
        if let Some(key) = edit.slot {
            fields.push((key, field_start..emitted.len()));
        }
        copied = end;
    }
    emitted.extend_from_slice(&raw[copied..]);
    (emitted, fields)
}

/// A delta event for `key` carrying `text`, cloned from its template: the
/// slot's text field holds `text`, other slots' text fields are emptied.
fn synthesize(template: &Template, key: &SlotKey, text: &[u8], out: &mut Vec<u8>) {
    let mut copied = 0;
    for (field, range) in &template.fields {
        out.extend_from_slice(&template.event[copied..range.start]);
        if field == key {
            encode_into(&String::from_utf8_lossy(text), out);
        }
        copied = range.end;
    }
    out.extend_from_slice(&template.event[copied..]);
}
