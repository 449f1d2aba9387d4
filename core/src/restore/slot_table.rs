//! The open content slots of one streamed answer, whatever its framing
//! (SSE, a JSON array sent element by element, AWS event-stream frames).
//!
//! Each complete event whose data is JSON is rewritten in place: the text
//! field of each content slot goes through that slot's
//! [`FragmentRestorer`] (so a surrogate split across deltas is restored,
//! and only the tail that could still become one is held), every other
//! string value is restored whole, and every other byte is kept. When a
//! slot ends its held text goes out in a delta event cloned from the
//! slot's last one, just before the event that ends it, framed as the
//! stream frames its events ([`Wrap`]).

use super::body::{restore_string, StringScratch};
use super::fragment::FragmentRestorer;
use super::policy::RestoreView;
use super::sse_frame::SseLine;
use super::RestoreStats;
use crate::eventstream;
use crate::json::{encode_into, Document};
use crate::provider::stream_slots::{EventSlots, SlotEnd, SlotKey};
use crate::provider::{ProviderRef, GENERIC_JSON};
use std::borrow::Cow;
use std::ops::Range;

/// How an event's bytes go out, and how a cloned one is framed.
#[derive(Clone, Debug)]
pub(super) enum Wrap {
    /// As they are (an SSE event).
    AsIs,
    /// An element of a JSON array; its raw bytes start with the separator
    /// before it (`[` or `,` and white space). A cloned one goes out as
    /// `,` and the element: after an element, before the next or the `]`.
    ArrayItem,
    /// The payload of an event-stream frame with these raw headers: goes
    /// out as a frame, lengths and CRCs computed again.
    Frame { headers: Vec<u8> },
    /// An event carried in base64 inside a frame's JSON payload (Bedrock
    /// `InvokeModelWithResponseStream`: `{"bytes":"<base64 of the model's
    /// event>"}`): goes out encoded again between the payload's bytes
    /// `before` and `after`, in a frame with these raw headers.
    FrameBytes {
        headers: Vec<u8>,
        before: Vec<u8>,
        after: Vec<u8>,
    },
}

impl Wrap {
    fn emit(&self, bytes: &[u8], out: &mut Vec<u8>) {
        match self {
            Wrap::AsIs | Wrap::ArrayItem => out.extend_from_slice(bytes),
            Wrap::Frame { headers } => out.extend(eventstream::encode_raw(headers, bytes)),
            Wrap::FrameBytes {
                headers,
                before,
                after,
            } => {
                let mut payload = before.clone();
                payload.extend(crate::mask::base64_encode(bytes).into_bytes());
                payload.extend_from_slice(after);
                out.extend(eventstream::encode_raw(headers, &payload));
            }
        }
    }
}

/// One complete event as the table reads it.
pub(super) struct EventIn<'e> {
    /// Its bytes as received.
    pub raw: &'e [u8],
    /// Where its data lies in `raw` (SSE data lines are joined by `\n`).
    pub lines: &'e [SseLine],
    /// How it goes out.
    pub wrap: &'e Wrap,
    /// False for what was left at the end of the stream, unterminated.
    pub terminated: bool,
}

/// The open content slots of a stream.
pub(super) struct SlotTable {
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
    /// Where the data starts in `event` (what comes before is the
    /// separator of an array element, not cloned).
    data_start: usize,
    fields: Vec<(SlotKey, Range<usize>)>,
    wrap: Wrap,
}

/// One replacement in an event's data: a string body and its new raw bytes,
/// and the slot whose text field it is (if any).
struct Edit {
    span: Range<usize>,
    bytes: Vec<u8>,
    slot: Option<SlotKey>,
}

impl SlotTable {
    pub(super) fn new(provider: ProviderRef) -> Self {
        SlotTable {
            provider,
            slots: Vec::new(),
            scratch: StringScratch::default(),
        }
    }

    pub(super) fn held_bytes(&self) -> usize {
        self.slots.iter().map(|s| s.text.held_len()).sum()
    }

    /// Handles one complete event (or, with `end_all`, the stream's last
    /// one). `is_done` marks data that ends every slot though it is not
    /// JSON (SSE's `[DONE]`).
    pub(super) fn event(
        &mut self,
        view: &RestoreView<'_>,
        event: &EventIn<'_>,
        end_all: bool,
        out: &mut Vec<u8>,
    ) -> RestoreStats {
        // What is left at the end of a stream ends every slot.
        let end_all = end_all || !event.terminated;
        let lines = event.lines;
        let data: Cow<'_, [u8]> = match lines {
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
            event.wrap.emit(event.raw, out);
            return stats;
        };
        self.json_event(view, event, &doc, end_all, out)
    }

    fn json_event(
        &mut self,
        view: &RestoreView<'_>,
        event: &EventIn<'_>,
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
        for (at, (key, node)) in shape.deltas.iter().enumerate() {
            let Some(Ok(text)) = doc.str_value(*node) else {
                continue;
            };
            // A slot with two text fields in one event (two Gemini text
            // parts) ends after the last of them.
            let last_here = !shape.deltas[at + 1..].iter().any(|(k, _)| k == key);
            let ending = last_here && ends.iter().any(|end| end.covers(key));
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
        let (emitted, fields) = rewrite_event(event.raw, event.lines, edits);
        let data_start = match event.wrap {
            Wrap::ArrayItem => event.lines.first().map_or(0, |l| l.start),
            Wrap::AsIs | Wrap::Frame { .. } | Wrap::FrameBytes { .. } => 0,
        };
        for key in &here {
            let ending = ends.iter().any(|end| end.covers(key));
            if ending {
                self.slots.retain(|s| s.key != *key);
            } else if let Some(slot) = self.slots.iter_mut().find(|s| s.key == *key) {
                slot.template = Some(Template {
                    event: emitted.clone(),
                    data_start,
                    fields: fields.clone(),
                    wrap: event.wrap.clone(),
                });
            }
        }
        event.wrap.emit(&emitted, out);
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
    pub(super) fn end(
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
    crate::sort::sort_by_key(&mut edits, |e| e.span.start);
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
/// slot's last text field holds `text`, its other text fields and other
/// slots' are emptied.
fn synthesize(template: &Template, key: &SlotKey, text: &[u8], out: &mut Vec<u8>) {
    let last = template.fields.iter().rposition(|(field, _)| field == key);
    let mut event = Vec::with_capacity(template.event.len() + text.len());
    if matches!(template.wrap, Wrap::ArrayItem) {
        event.push(b',');
    }
    let mut copied = template.data_start;
    for (at, (_, range)) in template.fields.iter().enumerate() {
        if range.start < copied {
            continue;
        }
        event.extend_from_slice(&template.event[copied..range.start]);
        if Some(at) == last {
            encode_into(&String::from_utf8_lossy(text), &mut event);
        }
        copied = range.end;
    }
    event.extend_from_slice(&template.event[copied..]);
    template.wrap.emit(&event, out);
}
