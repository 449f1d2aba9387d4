//! AWS event-stream framing (`application/vnd.amazon.eventstream`), the
//! binary stream Amazon Bedrock's `ConverseStream` answers with: frames read
//! from bytes that arrive in any pieces, and frames written back with their
//! lengths and CRCs computed again.
//!
//! A frame is: total length (u32, big-endian), headers length (u32), CRC-32
//! of those 8 bytes; the headers; the payload; CRC-32 of everything before
//! it. A header is a name (u8 length + bytes), a type byte and a value.
//! One codec for the project: the restorer and the fake provider both use it.

use crate::error::CoreError;

/// The prelude: two lengths and their CRC.
pub const PRELUDE_LEN: usize = 12;
/// The smallest frame: prelude and message CRC, no headers, no payload.
pub const MIN_FRAME_LEN: usize = PRELUDE_LEN + 4;
/// The largest frame read (AWS documents 16 MiB for a message).
pub const MAX_FRAME_LEN: usize = 16 * 1024 * 1024;
/// The largest headers section (AWS documents 128 KiB).
pub const MAX_HEADERS_LEN: usize = 128 * 1024;

/// A header's value, by its type byte (0–9).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HeaderValue {
    /// Types 0 and 1: no value bytes.
    Bool(bool),
    /// Type 2.
    Byte(i8),
    /// Type 3.
    Short(i16),
    /// Type 4.
    Int(i32),
    /// Type 5.
    Long(i64),
    /// Type 6: u16 length, bytes.
    Bytes(Vec<u8>),
    /// Type 7: u16 length, UTF-8.
    String(String),
    /// Type 8: milliseconds since the epoch.
    Timestamp(i64),
    /// Type 9: 16 bytes.
    Uuid([u8; 16]),
}

/// One frame: its headers, in order, and its payload.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Frame {
    pub headers: Vec<(String, HeaderValue)>,
    pub payload: Vec<u8>,
}

impl Frame {
    /// The string header `name`, if the frame has one.
    pub fn header_str(&self, name: &str) -> Option<&str> {
        self.headers.iter().find_map(|(n, v)| match v {
            HeaderValue::String(s) if n == name => Some(s.as_str()),
            _ => None,
        })
    }

    /// `:event-type` (`contentBlockDelta`, …).
    pub fn event_type(&self) -> Option<&str> {
        self.header_str(":event-type")
    }

    /// `:message-type`: `event`, `exception` or `error`.
    pub fn message_type(&self) -> Option<&str> {
        self.header_str(":message-type")
    }

    /// The frame's bytes, lengths and CRCs computed.
    pub fn encode(&self) -> Vec<u8> {
        let mut headers = Vec::new();
        for (name, value) in &self.headers {
            encode_header(name, value, &mut headers);
        }
        encode_raw(&headers, &self.payload)
    }
}

/// An event frame as Bedrock writes one: `:event-type`, `:content-type:
/// application/json`, `:message-type: event`, and a JSON payload.
pub fn encode_event(event_type: &str, payload: &[u8]) -> Vec<u8> {
    Frame {
        headers: vec![
            (":event-type".into(), HeaderValue::String(event_type.into())),
            (
                ":content-type".into(),
                HeaderValue::String("application/json".into()),
            ),
            (":message-type".into(), HeaderValue::String("event".into())),
        ],
        payload: payload.to_vec(),
    }
    .encode()
}

/// A frame from its raw headers section and payload.
pub fn encode_raw(headers: &[u8], payload: &[u8]) -> Vec<u8> {
    let total = PRELUDE_LEN + headers.len() + payload.len() + 4;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&(total as u32).to_be_bytes());
    out.extend_from_slice(&(headers.len() as u32).to_be_bytes());
    let prelude_crc = crc32(&out);
    out.extend_from_slice(&prelude_crc.to_be_bytes());
    out.extend_from_slice(headers);
    out.extend_from_slice(payload);
    let message_crc = crc32(&out);
    out.extend_from_slice(&message_crc.to_be_bytes());
    out
}

fn encode_header(name: &str, value: &HeaderValue, out: &mut Vec<u8>) {
    let name = &name.as_bytes()[..name.len().min(255)];
    out.push(name.len() as u8);
    out.extend_from_slice(name);
    match value {
        HeaderValue::Bool(true) => out.push(0),
        HeaderValue::Bool(false) => out.push(1),
        HeaderValue::Byte(v) => {
            out.push(2);
            out.extend_from_slice(&v.to_be_bytes());
        }
        HeaderValue::Short(v) => {
            out.push(3);
            out.extend_from_slice(&v.to_be_bytes());
        }
        HeaderValue::Int(v) => {
            out.push(4);
            out.extend_from_slice(&v.to_be_bytes());
        }
        HeaderValue::Long(v) => {
            out.push(5);
            out.extend_from_slice(&v.to_be_bytes());
        }
        HeaderValue::Bytes(v) => {
            out.push(6);
            let v = &v[..v.len().min(u16::MAX as usize)];
            out.extend_from_slice(&(v.len() as u16).to_be_bytes());
            out.extend_from_slice(v);
        }
        HeaderValue::String(v) => {
            out.push(7);
            let v = &v.as_bytes()[..v.len().min(u16::MAX as usize)];
            out.extend_from_slice(&(v.len() as u16).to_be_bytes());
            out.extend_from_slice(v);
        }
        HeaderValue::Timestamp(v) => {
            out.push(8);
            out.extend_from_slice(&v.to_be_bytes());
        }
        HeaderValue::Uuid(v) => {
            out.push(9);
            out.extend_from_slice(v);
        }
    }
}

/// One complete frame's parts, borrowed from the reader's buffer.
#[derive(Debug)]
pub struct RawFrame<'a> {
    /// The frame's byte offset in the stream.
    pub offset: usize,
    /// The whole frame, prelude to message CRC.
    pub bytes: &'a [u8],
    /// The headers section, raw.
    pub headers: &'a [u8],
    /// The payload.
    pub payload: &'a [u8],
}

impl RawFrame<'_> {
    /// The headers, decoded.
    pub fn decode(&self) -> Result<Frame, CoreError> {
        let headers = decode_headers(self.headers).map_err(|err| match err {
            CoreError::BadFrame { reason, .. } => bad_frame(self.offset, reason),
            other => other,
        })?;
        Ok(Frame {
            headers,
            payload: self.payload.to_vec(),
        })
    }
}

/// Reads frames from bytes that arrive in any pieces. Errors name the
/// frame's byte offset in the stream and what is wrong, never its content.
#[derive(Debug, Default)]
pub struct FrameReader {
    buf: Vec<u8>,
    /// Stream offset of `buf[0]`.
    offset: usize,
    /// Bytes of `buf` already handed out as frames.
    consumed: usize,
}

impl FrameReader {
    /// Appends received bytes.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.consumed > 0 {
            self.buf.drain(..self.consumed);
            self.offset += self.consumed;
            self.consumed = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// The next complete frame, `None` until one has arrived whole.
    pub fn next_frame(&mut self) -> Result<Option<RawFrame<'_>>, CoreError> {
        let rest = &self.buf[self.consumed..];
        let at = self.offset + self.consumed;
        if rest.len() < PRELUDE_LEN {
            return Ok(None);
        }
        let total = be_u32(&rest[0..4]) as usize;
        let headers_len = be_u32(&rest[4..8]) as usize;
        if crc32(&rest[0..8]) != be_u32(&rest[8..12]) {
            return Err(bad_frame(at, "the prelude's CRC does not match"));
        }
        if !(MIN_FRAME_LEN..=MAX_FRAME_LEN).contains(&total) {
            return Err(bad_frame(at, "the frame's length is out of range"));
        }
        if headers_len > MAX_HEADERS_LEN || headers_len > total - MIN_FRAME_LEN {
            return Err(bad_frame(at, "the headers' length is out of range"));
        }
        if rest.len() < total {
            return Ok(None);
        }
        let bytes = &rest[..total];
        if crc32(&bytes[..total - 4]) != be_u32(&bytes[total - 4..]) {
            return Err(bad_frame(at, "the message's CRC does not match"));
        }
        self.consumed += total;
        Ok(Some(RawFrame {
            offset: at,
            bytes,
            headers: &bytes[PRELUDE_LEN..PRELUDE_LEN + headers_len],
            payload: &bytes[PRELUDE_LEN + headers_len..total - 4],
        }))
    }

    /// Bytes received and not yet handed out as a frame.
    pub fn held_bytes(&self) -> usize {
        self.buf.len() - self.consumed
    }

    /// Stream offset of the next frame (for error messages).
    pub fn position(&self) -> usize {
        self.offset + self.consumed
    }
}

/// Decodes a headers section (errors say byte 0: [`RawFrame::decode`]
/// names the frame's offset).
pub fn decode_headers(mut raw: &[u8]) -> Result<Vec<(String, HeaderValue)>, CoreError> {
    let mut headers = Vec::new();
    let bad = |reason| CoreError::BadFrame { offset: 0, reason };
    while let Some((&name_len, rest)) = raw.split_first() {
        let name_len = usize::from(name_len);
        let name = rest
            .get(..name_len)
            .ok_or(bad("a header name is cut short"))?;
        let name = std::str::from_utf8(name)
            .map_err(|_| bad("a header name is not UTF-8"))?
            .to_string();
        let (&kind, rest) = rest[name_len..]
            .split_first()
            .ok_or(bad("a header has no type"))?;
        let fixed = |n: usize| rest.get(..n).ok_or(bad("a header value is cut short"));
        let (value, used) = match kind {
            0 => (HeaderValue::Bool(true), 0),
            1 => (HeaderValue::Bool(false), 0),
            2 => (HeaderValue::Byte(fixed(1)?[0] as i8), 1),
            3 => (HeaderValue::Short(i16::from_be_bytes(array(fixed(2)?))), 2),
            4 => (HeaderValue::Int(i32::from_be_bytes(array(fixed(4)?))), 4),
            5 => (HeaderValue::Long(i64::from_be_bytes(array(fixed(8)?))), 8),
            6 | 7 => {
                let len = usize::from(u16::from_be_bytes(array(fixed(2)?)));
                let bytes = rest
                    .get(2..2 + len)
                    .ok_or(bad("a header value is cut short"))?;
                let value = if kind == 6 {
                    HeaderValue::Bytes(bytes.to_vec())
                } else {
                    HeaderValue::String(
                        std::str::from_utf8(bytes)
                            .map_err(|_| bad("a string header is not UTF-8"))?
                            .to_string(),
                    )
                };
                (value, 2 + len)
            }
            8 => (
                HeaderValue::Timestamp(i64::from_be_bytes(array(fixed(8)?))),
                8,
            ),
            9 => (HeaderValue::Uuid(array(fixed(16)?)), 16),
            _ => return Err(bad("a header has an unknown type")),
        };
        headers.push((name, value));
        raw = &rest[used..];
    }
    Ok(headers)
}

/// CRC-32 (IEEE 802.3, reflected, as zlib). Our own, byte at a time over
/// one 1 KiB table: `crc32fast`'s sixteen tables added 16 KB to the filter's
/// `.wasm`, and frames are small.
pub fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc = CRC_TABLE[((crc ^ u32::from(b)) & 0xff) as usize] ^ (crc >> 8);
    }
    !crc
}

const CRC_TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
            k += 1;
        }
        table[i] = c;
        i += 1;
    }
    table
};

fn array<const N: usize>(bytes: &[u8]) -> [u8; N] {
    let mut out = [0u8; N];
    out.copy_from_slice(&bytes[..N]);
    out
}

fn be_u32(bytes: &[u8]) -> u32 {
    u32::from_be_bytes(array(bytes))
}

fn bad_frame(offset: usize, reason: &'static str) -> CoreError {
    CoreError::BadFrame { offset, reason }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    /// A frame from the AWS event-stream test suite's shape: `:event-type`
    /// etc. and a JSON payload; checked against an independent CRC-32.
    #[test]
    fn encodes_and_reads_back_at_every_split() {
        let a = encode_event(
            "contentBlockDelta",
            br#"{"contentBlockIndex":0,"delta":{"text":"Hel"},"p":"abcd"}"#,
        );
        let b = encode_event("messageStop", br#"{"stopReason":"end_turn"}"#);
        // Lengths: prelude 12 + headers + payload + 4.
        assert_eq!(be_u32(&a[0..4]) as usize, a.len());
        let stream = [a.clone(), b.clone()].concat();
        for split in 0..=stream.len() {
            let mut reader = FrameReader::default();
            let mut got = Vec::new();
            for piece in [&stream[..split], &stream[split..]] {
                reader.push(piece);
                while let Some(frame) = reader.next_frame().unwrap() {
                    got.push(frame.decode().unwrap());
                }
            }
            assert_eq!(got.len(), 2, "split {split}");
            assert_eq!(got[0].event_type(), Some("contentBlockDelta"));
            assert_eq!(got[0].message_type(), Some("event"));
            assert_eq!(got[1].event_type(), Some("messageStop"));
            assert_eq!(got[0].encode(), a);
            assert_eq!(reader.held_bytes(), 0);
        }
    }

    #[test]
    fn every_header_type_round_trips() {
        let frame = Frame {
            headers: vec![
                ("t".into(), HeaderValue::Bool(true)),
                ("f".into(), HeaderValue::Bool(false)),
                ("b".into(), HeaderValue::Byte(-3)),
                ("s".into(), HeaderValue::Short(-300)),
                ("i".into(), HeaderValue::Int(70_000)),
                ("l".into(), HeaderValue::Long(-5_000_000_000)),
                ("y".into(), HeaderValue::Bytes(vec![0, 255, 7])),
                ("u".into(), HeaderValue::String("ü".into())),
                ("d".into(), HeaderValue::Timestamp(1_700_000_000_000)),
                ("g".into(), HeaderValue::Uuid([7; 16])),
            ],
            payload: b"{}".to_vec(),
        };
        let mut reader = FrameReader::default();
        reader.push(&frame.encode());
        assert_eq!(
            reader.next_frame().unwrap().unwrap().decode().unwrap(),
            frame
        );
    }

    #[test]
    fn the_crc_is_the_standard_one() {
        // CRC-32 (IEEE) of "123456789" is 0xCBF43926.
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        // The "empty message" of the AWS event-stream test vectors (as
        // botocore's event-stream tests hold it): no headers, no payload.
        assert_eq!(
            encode_raw(b"", b""),
            b"\x00\x00\x00\x10\x00\x00\x00\x00\x05\xc2H\xeb}\x98\xc8\xff"
        );
    }

    #[test]
    fn broken_frames_are_named_by_offset() {
        let good = encode_event("messageStop", b"{}");
        let mut bad_message = good.clone();
        let last = bad_message.len() - 6;
        bad_message[last] ^= 1;
        let mut bad_prelude = good.clone();
        bad_prelude[3] ^= 1;
        let mut too_long = encode_raw(b"", b"");
        too_long[0..4].copy_from_slice(&(MAX_FRAME_LEN as u32 + 1).to_be_bytes());
        let crc = crc32(&too_long[0..8]);
        too_long[8..12].copy_from_slice(&crc.to_be_bytes());
        for (bytes, reason) in [
            (bad_message, "message's CRC"),
            (bad_prelude, "prelude's CRC"),
            (too_long, "length is out of range"),
        ] {
            let mut reader = FrameReader::default();
            reader.push(&good);
            assert!(reader.next_frame().unwrap().is_some());
            reader.push(&bytes);
            let err = reader.next_frame().unwrap_err().to_string();
            assert!(err.contains(reason), "{err}");
            assert!(err.contains(&format!("byte {}", good.len())), "{err}");
        }
        let err = decode_headers(&[3, b'a']).unwrap_err().to_string();
        assert!(err.contains("cut short"), "{err}");
        let err = decode_headers(&[1, b'a', 42]).unwrap_err().to_string();
        assert!(err.contains("unknown type"), "{err}");
    }
}
