//! AWS event-stream frames read by hand for the tests, with a CRC-32
//! computed bit by bit: an oracle apart from `latet_core::eventstream`,
//! which wrote them (fake LLM) or rewrote them (the gateway).

use serde_json::Value;

/// CRC-32 (IEEE, reflected), bit by bit: not the codec's table.
pub fn crc32_bitwise(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// One event-stream frame, decoded by hand: its string headers and payload.
pub struct Frame {
    pub headers: Vec<(String, String)>,
    pub payload: Value,
}

impl Frame {
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .unwrap_or_else(|| panic!("no header {name}"))
    }
}

pub fn be_u32(bytes: &[u8]) -> u32 {
    u32::from_be_bytes(bytes.try_into().unwrap())
}

/// Decodes frames back to back, checking both CRCs of each; every byte
/// must belong to a frame.
pub fn decode_frames(mut bytes: &[u8]) -> Vec<Frame> {
    let mut frames = Vec::new();
    while !bytes.is_empty() {
        let total = be_u32(&bytes[0..4]) as usize;
        let headers_len = be_u32(&bytes[4..8]) as usize;
        assert_eq!(
            crc32_bitwise(&bytes[0..8]),
            be_u32(&bytes[8..12]),
            "prelude CRC"
        );
        let frame = &bytes[..total];
        assert_eq!(
            crc32_bitwise(&frame[..total - 4]),
            be_u32(&frame[total - 4..]),
            "message CRC"
        );
        let mut raw = &frame[12..12 + headers_len];
        let mut headers = Vec::new();
        while !raw.is_empty() {
            let name_len = raw[0] as usize;
            let name = std::str::from_utf8(&raw[1..1 + name_len])
                .unwrap()
                .to_owned();
            assert_eq!(raw[1 + name_len], 7, "string headers only");
            let at = 2 + name_len;
            let value_len = u16::from_be_bytes([raw[at], raw[at + 1]]) as usize;
            let value = std::str::from_utf8(&raw[at + 2..at + 2 + value_len])
                .unwrap()
                .to_owned();
            headers.push((name, value));
            raw = &raw[at + 2 + value_len..];
        }
        let payload = serde_json::from_slice(&frame[12 + headers_len..total - 4]).unwrap();
        frames.push(Frame { headers, payload });
        bytes = &bytes[total..];
    }
    frames
}
