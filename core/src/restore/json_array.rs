//! One answer streamed as a JSON array whose elements arrive one by one
//! (Gemini's `streamGenerateContent` without `alt=sse`: `[{…}\n,\r\n{…}]`),
//! restored element by element: each element goes through the stream's
//! [`SlotTable`] as one event, carrying the separator before it; a slot's
//! held text goes out as an element cloned from its last delta, written
//! `,{…}` after the element before it; the closing `]` waits for the end.
//!
//! An answer that is not an array (an error object) is held whole and
//! restored whole at its end.

use super::body::restore_body;
use super::policy::RestoreView;
use super::slot_table::{EventIn, SlotTable, Wrap};
use super::sse_frame::SseLine;
use super::RestoreStats;
use crate::provider::stream_slots::SlotEnd;
use crate::provider::ProviderRef;

/// Restores one JSON-array answer (one per answer).
pub struct JsonArrayRestorer {
    /// Bytes since the last element went out: the separator, then the
    /// element being received.
    buf: Vec<u8>,
    /// Where scanning resumes in `buf`.
    scanned: usize,
    state: Scan,
    slots: SlotTable,
}

/// Where the scanner is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scan {
    /// Before the array's `[`.
    Start,
    /// Between elements.
    Between,
    /// Inside an element that starts at this offset of `buf`.
    Element {
        start: usize,
        depth: u32,
        in_string: bool,
        escaped: bool,
    },
    /// After the array's `]`, or not an array: held to the end.
    Rest,
}

impl JsonArrayRestorer {
    /// A restorer for a new stream of `provider`'s elements.
    pub fn for_provider(provider: ProviderRef) -> Self {
        JsonArrayRestorer {
            buf: Vec::new(),
            scanned: 0,
            state: Scan::Start,
            slots: SlotTable::new(provider),
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
        self.buf.extend_from_slice(chunk);
        let mut i = self.scanned;
        while i < self.buf.len() {
            let b = self.buf[i];
            match &mut self.state {
                Scan::Start => match b {
                    b'[' => self.state = Scan::Between,
                    b' ' | b'\t' | b'\r' | b'\n' => {}
                    _ => self.state = Scan::Rest,
                },
                Scan::Between => match b {
                    b' ' | b'\t' | b'\r' | b'\n' | b',' => {}
                    b']' => self.state = Scan::Rest,
                    _ => {
                        self.state = Scan::Element {
                            start: i,
                            depth: 0,
                            in_string: false,
                            escaped: false,
                        };
                        continue;
                    }
                },
                Scan::Element {
                    start,
                    depth,
                    in_string,
                    escaped,
                } => {
                    let mut done = false;
                    if *in_string {
                        if *escaped {
                            *escaped = false;
                        } else if b == b'\\' {
                            *escaped = true;
                        } else if b == b'"' {
                            *in_string = false;
                            done = *depth == 0;
                        }
                    } else {
                        match b {
                            b'"' => *in_string = true,
                            b'{' | b'[' => *depth += 1,
                            b'}' | b']' if *depth > 0 => {
                                *depth -= 1;
                                done = *depth == 0;
                            }
                            // A bare scalar ends before a delimiter.
                            b',' | b']' | b' ' | b'\t' | b'\r' | b'\n' if *depth == 0 => {
                                let start = *start;
                                stats += self.element(view, start, i, out);
                                i = 0;
                                continue;
                            }
                            _ => {}
                        }
                    }
                    if done {
                        let start = *start;
                        stats += self.element(view, start, i + 1, out);
                        i = 0;
                        continue;
                    }
                }
                Scan::Rest => {
                    i = self.buf.len();
                    break;
                }
            }
            i += 1;
        }
        self.scanned = i;
        stats
    }

    /// End of stream: flushes everything held.
    pub fn finish<'a>(
        &mut self,
        view: impl Into<RestoreView<'a>>,
        out: &mut Vec<u8>,
    ) -> RestoreStats {
        let view = &view.into();
        let mut stats = self.slots.end(view, &[SlotEnd::All], &[], out);
        // What is held: the `]` and what follows it, an unfinished
        // element (the stream was cut), or a whole answer that is not an
        // array; restored whole.
        let rest = std::mem::take(&mut self.buf);
        self.scanned = 0;
        let (restored, got) = restore_body(*view, &rest);
        stats += got;
        out.extend(restored.unwrap_or(rest));
        stats
    }

    /// Bytes held back: the element being received, and slot tails.
    pub fn held_bytes(&self) -> usize {
        self.buf.len() + self.slots.held_bytes()
    }

    /// The element `buf[start..end]` (with the separator before it) is
    /// complete: through the slot table and out.
    fn element(
        &mut self,
        view: &RestoreView<'_>,
        start: usize,
        end: usize,
        out: &mut Vec<u8>,
    ) -> RestoreStats {
        let lines = [SseLine { start, end }];
        let event = EventIn {
            raw: &self.buf[..end],
            lines: &lines,
            wrap: &Wrap::ArrayItem,
            terminated: true,
        };
        let stats = self.slots.event(view, &event, false, out);
        self.buf.drain(..end);
        self.scanned = 0;
        self.state = Scan::Between;
        stats
    }
}
