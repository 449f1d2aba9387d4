//! Server-sent events framing, incremental: network chunks in, complete
//! events out (their raw bytes, exactly as received, and where each line
//! is). Lines end with `\n`, `\r\n` or `\r`; an event ends at a blank line.
//! A chunk may end anywhere, including between the `\r` and `\n` of one
//! line end: a `\r` at the end of what we have waits for the next byte.

/// One line of an event: bytes `start..end` of the event's raw bytes, its
/// line end excluded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SseLine {
    pub start: usize,
    pub end: usize,
}

/// A complete event as received.
pub(crate) struct SseEvent<'a> {
    /// Every byte of the event, its blank line included.
    pub raw: &'a [u8],
    /// Its lines (not the blank line that ends it).
    pub lines: &'a [SseLine],
    /// False for what was left at the end of the stream without a blank line.
    pub terminated: bool,
}

impl SseEvent<'_> {
    /// The value of every `data:` line, as ranges of `raw`.
    pub(crate) fn data_lines(&self) -> impl Iterator<Item = SseLine> + '_ {
        self.lines.iter().filter_map(|line| {
            let text = &self.raw[line.start..line.end];
            let rest = text.strip_prefix(b"data")?;
            let skip = match rest.first() {
                None => 0,
                Some(b':') if rest.get(1) == Some(&b' ') => 2,
                Some(b':') => 1,
                Some(_) => return None,
            };
            Some(SseLine {
                start: line.start + 4 + skip,
                end: line.end,
            })
        })
    }
}

/// Splits a byte stream into events.
#[derive(Default)]
pub(crate) struct SseFramer {
    /// Bytes of the event being received.
    buf: Vec<u8>,
    /// Where scanning resumes.
    scanned: usize,
    /// Where the current line starts.
    line_start: usize,
    /// Lines of the current event (offsets in `buf`).
    lines: Vec<SseLine>,
}

impl SseFramer {
    /// Bytes held (an event not yet complete).
    pub(crate) fn held_bytes(&self) -> usize {
        self.buf.len()
    }

    /// Adds a chunk; calls `on_event` for every event it completes.
    pub(crate) fn push(&mut self, chunk: &[u8], mut on_event: impl FnMut(SseEvent<'_>)) {
        self.buf.extend_from_slice(chunk);
        let mut event_start = 0;
        let mut i = self.scanned;
        while let Some(rel) = self.buf[i..].iter().position(|&b| b == b'\n' || b == b'\r') {
            let line_end = i + rel;
            let next = match self.buf[line_end] {
                b'\r' => match self.buf.get(line_end + 1) {
                    // Wait: this `\r` may be the first half of a `\r\n`.
                    None => {
                        i = line_end;
                        break;
                    }
                    Some(b'\n') => line_end + 2,
                    Some(_) => line_end + 1,
                },
                _ => line_end + 1,
            };
            if line_end == self.line_start {
                let lines: Vec<SseLine> = self
                    .lines
                    .drain(..)
                    .map(|l| SseLine {
                        start: l.start - event_start,
                        end: l.end - event_start,
                    })
                    .collect();
                on_event(SseEvent {
                    raw: &self.buf[event_start..next],
                    lines: &lines,
                    terminated: true,
                });
                event_start = next;
            } else {
                self.lines.push(SseLine {
                    start: self.line_start,
                    end: line_end,
                });
            }
            self.line_start = next;
            i = next;
        }
        if !self.buf[i..].contains(&b'\r') {
            i = self.buf.len();
        }
        self.scanned = i;
        if event_start > 0 {
            self.buf.drain(..event_start);
            self.scanned -= event_start;
            self.line_start -= event_start;
            for line in &mut self.lines {
                line.start -= event_start;
                line.end -= event_start;
            }
        }
    }

    /// End of stream: hands out what is left as one unterminated event.
    pub(crate) fn finish(&mut self, mut on_event: impl FnMut(SseEvent<'_>)) {
        if self.buf.is_empty() {
            return;
        }
        let mut lines = std::mem::take(&mut self.lines);
        let mut end = self.buf.len();
        // A `\r` that waited for a `\n` is a line end after all.
        let trailing_cr = self.buf[end - 1] == b'\r';
        if trailing_cr {
            end -= 1;
        }
        // That line end after a blank line ends the event properly.
        let terminated = trailing_cr && self.line_start == end;
        if self.line_start < end {
            lines.push(SseLine {
                start: self.line_start,
                end,
            });
        }
        on_event(SseEvent {
            raw: &self.buf,
            lines: &lines,
            terminated,
        });
        self.buf.clear();
        self.scanned = 0;
        self.line_start = 0;
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    /// Events of `stream` fed in the given pieces: (raw, lines as text, terminated).
    fn frame(pieces: &[&[u8]]) -> Vec<(Vec<u8>, Vec<String>, bool)> {
        let mut framer = SseFramer::default();
        let mut events = Vec::new();
        let mut collect = |e: SseEvent<'_>| {
            let lines = e
                .lines
                .iter()
                .map(|l| String::from_utf8_lossy(&e.raw[l.start..l.end]).into_owned())
                .collect();
            events.push((e.raw.to_vec(), lines, e.terminated));
        };
        for piece in pieces {
            framer.push(piece, &mut collect);
        }
        framer.finish(&mut collect);
        events
    }

    #[test]
    fn splits_events_on_every_line_end_style() {
        let cases: [(&[u8], usize); 4] = [
            (b"data: a\n\ndata: b\n\n", 2),
            (b"data: a\r\n\r\ndata: b\r\n\r\n", 2),
            (b"data: a\r\rdata: b\r\r", 2),
            (b"event: x\ndata: a\n\n: comment\n\n", 2),
        ];
        for (stream, count) in cases {
            let events = frame(&[stream]);
            assert_eq!(events.len(), count, "{:?}", String::from_utf8_lossy(stream));
            assert!(events.iter().all(|e| e.2));
            let joined: Vec<u8> = events.iter().flat_map(|e| e.0.clone()).collect();
            assert_eq!(joined, stream);
        }
    }

    #[test]
    fn every_split_gives_the_same_events() {
        let stream: &[u8] =
            b"event: a\r\ndata: {\"x\":1}\r\n\r\n: ping\n\ndata: b\r\rdata: c\n\ndata: tail";
        let whole = frame(&[stream]);
        assert_eq!(whole.len(), 5);
        assert_eq!(whole[0].1, vec!["event: a", "data: {\"x\":1}"]);
        assert!(!whole[4].2);
        for i in 0..=stream.len() {
            for j in i..=stream.len() {
                let split = frame(&[&stream[..i], &stream[i..j], &stream[j..]]);
                assert_eq!(split, whole, "split at {i}, {j}");
            }
        }
    }

    #[test]
    fn finds_data_values() {
        let events = frame(&[b"data:x\ndata: y\ndatum: z\ndata\n: data: c\n\n"]);
        let mut framer_events = Vec::new();
        let raw = &events[0].0;
        let mut framer = SseFramer::default();
        framer.push(raw, |e| {
            framer_events = e
                .data_lines()
                .map(|l| String::from_utf8_lossy(&e.raw[l.start..l.end]).into_owned())
                .collect();
        });
        assert_eq!(framer_events, vec!["x", "y", ""]);
    }

    #[test]
    fn holds_only_the_incomplete_event() {
        let mut framer = SseFramer::default();
        let mut count = 0;
        framer.push(b"data: a\n\ndata: b", |_| count += 1);
        assert_eq!(count, 1);
        assert_eq!(framer.held_bytes(), b"data: b".len());
    }
}
