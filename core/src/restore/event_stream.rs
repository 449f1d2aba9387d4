//! One AWS event-stream answer (Bedrock `ConverseStream`), restored frame
//! by frame: each frame's JSON payload goes through the stream's
//! [`SlotTable`] and goes out as a frame again, its lengths and CRCs
//! computed anew; a slot's held text goes out in a frame cloned from its
//! last delta. Frames whose payload is not JSON pass as they came.
//!
//! A frame whose payload carries the model's own event in base64
//! (`{"bytes":"…"}`: Bedrock `InvokeModelWithResponseStream`, e.g. Claude's
//! Messages events) is read as that event: decoded, restored with the
//! same slots, and encoded again.
//!
//! A malformed frame (a CRC that does not match, a length out of range, a
//! stream cut inside a frame) is never forwarded: what was held is
//! flushed, then an `internalServerException` frame tells the agent what
//! happened (the byte offset, never content) and the rest of the stream is
//! dropped. An agent's SDK raises it as the stream's error.

use super::policy::RestoreView;
use super::slot_table::{EventIn, SlotTable, Wrap};
use super::sse_frame::SseLine;
use super::RestoreStats;
use crate::eventstream::{self, FrameReader};
use crate::json::{Document, NodeKind};
use crate::provider::stream_slots::SlotEnd;
use crate::provider::ProviderRef;
use crate::CoreError;

/// Restores one event-stream answer (one per answer).
pub struct EventStreamRestorer {
    reader: FrameReader,
    slots: SlotTable,
    broken: Option<CoreError>,
}

impl EventStreamRestorer {
    /// A restorer for a new stream of `provider`'s events.
    pub fn for_provider(provider: ProviderRef) -> Self {
        EventStreamRestorer {
            reader: FrameReader::default(),
            slots: SlotTable::new(provider),
            broken: None,
        }
    }

    /// Feeds a network chunk; appends to `out` what can be forwarded now.
    pub fn push<'a>(
        &mut self,
        view: impl Into<RestoreView<'a>>,
        chunk: &[u8],
        out: &mut Vec<u8>,
    ) -> RestoreStats {
        let view = &view.into();
        let mut stats = RestoreStats::default();
        if self.broken.is_some() {
            return stats;
        }
        self.reader.push(chunk);
        loop {
            let frame = match self.reader.next_frame() {
                Ok(Some(frame)) => frame,
                Ok(None) => break,
                Err(err) => {
                    stats += self.break_off(view, err, out);
                    break;
                }
            };
            let (data, wrap) = match carried_event(frame.payload) {
                Some((data, before, after)) => (
                    std::borrow::Cow::Owned(data),
                    Wrap::FrameBytes {
                        headers: frame.headers.to_vec(),
                        before: before.to_vec(),
                        after: after.to_vec(),
                    },
                ),
                None => (
                    std::borrow::Cow::Borrowed(frame.payload),
                    Wrap::Frame {
                        headers: frame.headers.to_vec(),
                    },
                ),
            };
            let lines = [SseLine {
                start: 0,
                end: data.len(),
            }];
            let event = EventIn {
                raw: &data,
                lines: &lines,
                wrap: &wrap,
                terminated: true,
            };
            stats += self.slots.event(view, &event, false, out);
        }
        stats
    }

    /// End of stream: flushes everything held. Bytes left that are not a
    /// whole frame break the stream off (see the module doc).
    pub fn finish<'a>(
        &mut self,
        view: impl Into<RestoreView<'a>>,
        out: &mut Vec<u8>,
    ) -> RestoreStats {
        let view = &view.into();
        if self.broken.is_some() {
            return RestoreStats::default();
        }
        if self.reader.held_bytes() > 0 {
            let err = CoreError::BadFrame {
                offset: self.reader.position(),
                reason: "the stream ends inside a frame",
            };
            return self.break_off(view, err, out);
        }
        self.slots.end(view, &[SlotEnd::All], &[], out)
    }

    /// Bytes held back: a frame not yet complete, and slot tails.
    pub fn held_bytes(&self) -> usize {
        self.reader.held_bytes() + self.slots.held_bytes()
    }

    /// Why the stream was broken off, if it was.
    pub fn error(&self) -> Option<&CoreError> {
        self.broken.as_ref()
    }

    fn break_off(
        &mut self,
        view: &RestoreView<'_>,
        err: CoreError,
        out: &mut Vec<u8>,
    ) -> RestoreStats {
        let stats = self.slots.end(view, &[SlotEnd::All], &[], out);
        out.extend(exception_frame(&err));
        self.broken = Some(err);
        stats
    }
}

/// The model's event a payload carries in base64 (`{"bytes":"…"}`, Bedrock
/// `InvokeModelWithResponseStream`): the event, and the payload's bytes
/// before and after the base64. `None` when the payload is anything else
/// (a Converse event) or its base64 is not a JSON object.
fn carried_event(payload: &[u8]) -> Option<(Vec<u8>, &[u8], &[u8])> {
    // Cheap test first: Converse payloads never start so.
    if !payload.starts_with(b"{\"bytes\":\"") {
        return None;
    }
    let doc = Document::parse(payload).ok()?;
    let node = doc.get(doc.root(), "bytes")?;
    if doc.kind(node) != NodeKind::String || doc.is_escaped(node) {
        return None;
    }
    let event = crate::mask::base64_decode(doc.raw(node))?;
    if event.first() != Some(&b'{') {
        return None;
    }
    let span = doc.span(node);
    Some((event, &payload[..span.start], &payload[span.end..]))
}

/// The frame that tells an agent its stream was broken off.
fn exception_frame(err: &CoreError) -> Vec<u8> {
    /// `:exception-type: internalServerException`, `:content-type:
    /// application/json`, `:message-type: exception` (type 7: string).
    const HEADERS: &[u8] = b"\x0f:exception-type\x07\x00\x17internalServerException\
        \x0d:content-type\x07\x00\x10application/json\
        \x0d:message-type\x07\x00\x09exception";
    let mut payload = b"{\"message\":\"".to_vec();
    crate::json::encode_into(
        &format!("latet gateway: the provider's answer stream was broken off: {err}"),
        &mut payload,
    );
    payload.extend_from_slice(b"\"}");
    eventstream::encode_raw(HEADERS, &payload)
}
