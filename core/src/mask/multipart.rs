//! `multipart/form-data` request bodies (file uploads: OpenAI batch input
//! files, Anthropic and OpenAI `/v1/files`), split so that every byte is
//! examined in the reading that fits it.
//!
//! The boundary is read from the body's first line (`--boundary`), not
//! from the `content-type` header (which is examined as any header): a
//! body is split by what it holds. Then:
//! - the boundary itself is examined: a value written as the boundary
//!   refuses the request (it repeats between every part and cannot be
//!   replaced consistently with the header);
//! - each part's headers (`content-disposition` with its `filename`,
//!   `content-type`) are examined as text;
//! - a part's body that is JSON lines (every non-empty line a JSON
//!   document: a batch input file, one request per line) is masked line by
//!   line as JSON, each line with the provider its `url` names (the API
//!   the batch will call) or generic JSON; any other UTF-8 body as text;
//!   a binary body is kept only when it starts with the signature of a
//!   known binary file type (an image, a PDF, audio), and refuses the
//!   request otherwise;
//! - the preamble and the epilogue are examined as text.

use crate::error::CoreError;
use crate::provider::{ProviderRef, RouteTable, GENERIC_JSON};
use std::ops::Range;

/// One piece of a multipart body, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Piece {
    /// Delimiter bytes (`--boundary` and its line ends), kept.
    Delimiter(Range<usize>),
    /// Text outside the parts (preamble, epilogue) or a part's headers:
    /// examined as text.
    Text(Range<usize>),
    /// A part's body: examined by what it holds.
    Body(Range<usize>),
}

/// The body split into pieces, and its boundary (a range of the body).
#[derive(Debug)]
pub(crate) struct Split {
    pub boundary: Range<usize>,
    pub pieces: Vec<Piece>,
}

/// RFC 2046 boundary characters (a space is allowed but not last).
fn boundary_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"'()+_,-./:=? ".contains(&b)
}

/// Splits a multipart body; errors name the byte offset.
pub(crate) fn split(body: &[u8]) -> Result<Split, CoreError> {
    let bad = |at: usize, why: &str| CoreError::BadBody(format!("multipart: {why} at byte {at}"));
    if !body.starts_with(b"--") {
        return Err(bad(0, "the body does not start with a boundary line"));
    }
    let line_end = memchr::memchr(b'\n', body).ok_or_else(|| bad(0, "no boundary line"))?;
    let boundary_end = if line_end > 0 && body[line_end - 1] == b'\r' {
        line_end - 1
    } else {
        line_end
    };
    let boundary = 2..boundary_end;
    let name = &body[boundary.clone()];
    if name.is_empty()
        || name.len() > 70
        || !name.iter().all(|&b| boundary_char(b))
        || name.ends_with(b" ")
    {
        return Err(bad(2, "the boundary is not an RFC 2046 boundary"));
    }
    let newline: &[u8] = if boundary_end < line_end {
        b"\r\n"
    } else {
        b"\n"
    };
    let mut delimiter = newline.to_vec();
    delimiter.extend_from_slice(b"--");
    delimiter.extend_from_slice(name);
    let finder = memchr::memmem::Finder::new(&delimiter);

    let mut pieces = vec![Piece::Delimiter(0..line_end + 1)];
    let mut at = line_end + 1;
    loop {
        // A part: headers up to a blank line, then the body up to the next
        // delimiter.
        let blank: Vec<u8> = [newline, newline].concat();
        let headers_end = memchr::memmem::find(&body[at..], &blank)
            .map(|i| at + i)
            .ok_or_else(|| bad(at, "a part's headers do not end"))?;
        pieces.push(Piece::Text(at..headers_end));
        pieces.push(Piece::Delimiter(headers_end..headers_end + blank.len()));
        let body_start = headers_end + blank.len();
        let next = finder
            .find(&body[body_start..])
            .map(|i| body_start + i)
            .ok_or_else(|| bad(body_start, "a part does not end with a boundary"))?;
        pieces.push(Piece::Body(body_start..next));
        let after = next + delimiter.len();
        if body[after..].starts_with(b"--") {
            pieces.push(Piece::Delimiter(next..after + 2));
            if after + 2 < body.len() {
                pieces.push(Piece::Text(after + 2..body.len()));
            }
            break;
        }
        if !body[after..].starts_with(newline) {
            return Err(bad(after, "a boundary is not followed by a line end"));
        }
        pieces.push(Piece::Delimiter(next..after + newline.len()));
        at = after + newline.len();
    }
    Ok(Split { boundary, pieces })
}

/// What a part's body holds.
#[derive(Debug, PartialEq)]
pub(crate) enum BodyReading<'a> {
    /// JSON lines: each line's range (relative to the part's body) and the
    /// provider it is masked as.
    JsonLines(Vec<(Range<usize>, ProviderRef)>),
    /// UTF-8 text.
    Text(&'a str),
    /// A known binary file type, kept as it is.
    Media,
}

/// How a part's body is read (module doc). `part_at` names its offset in
/// errors.
pub(crate) fn reading(bytes: &[u8], part_at: usize) -> Result<BodyReading<'_>, CoreError> {
    if crate::provider::is_media_bytes(bytes) {
        return Ok(BodyReading::Media);
    }
    let text = std::str::from_utf8(bytes).map_err(|e| {
        CoreError::BadBody(format!(
            "multipart: the part at byte {part_at} is neither text nor a known file type (not UTF-8 at byte {})",
            part_at + e.valid_up_to()
        ))
    })?;
    let mut lines = Vec::new();
    let mut routes: Option<RouteTable> = None;
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        let end = start + line.len();
        let trimmed = line.trim_end_matches(['\n', '\r']);
        let range = start..start + trimmed.len();
        start = end;
        if trimmed.trim().is_empty() {
            continue;
        }
        let Ok(doc) = crate::json::Document::parse(trimmed.as_bytes()) else {
            return Ok(BodyReading::Text(text));
        };
        // A batch line names the API it will call: `{"url": "/v1/…"}`.
        let url = (doc.kind(doc.root()) == crate::json::NodeKind::Object)
            .then(|| doc.get(doc.root(), "url"))
            .flatten()
            .and_then(|u| doc.str_value(u)?.ok());
        let provider = match url {
            Some(url) => routes
                .get_or_insert_with(|| RouteTable::new(Vec::new(), true, GENERIC_JSON))
                .provider_for(&url),
            None => GENERIC_JSON,
        };
        lines.push((range, provider));
    }
    if lines.is_empty() {
        return Ok(BodyReading::Text(text));
    }
    Ok(BodyReading::JsonLines(lines))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    const BODY: &str = "--XyZ123\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n--XyZ123\r\nContent-Disposition: form-data; name=\"file\"; filename=\"b.jsonl\"\r\nContent-Type: application/jsonl\r\n\r\n{\"custom_id\":\"1\",\"url\":\"/v1/chat/completions\",\"body\":{}}\n{\"custom_id\":\"2\"}\n\r\n--XyZ123--\r\n";

    #[test]
    fn splits_parts_and_keeps_every_byte() {
        let body = BODY.as_bytes();
        let split = split(body).unwrap();
        assert_eq!(&body[split.boundary.clone()], b"XyZ123");
        let mut covered = 0;
        let mut bodies = Vec::new();
        for piece in &split.pieces {
            let (Piece::Delimiter(r) | Piece::Text(r) | Piece::Body(r)) = piece;
            assert_eq!(r.start, covered, "pieces are contiguous");
            covered = r.end;
            if let Piece::Body(r) = piece {
                bodies.push(std::str::from_utf8(&body[r.clone()]).unwrap());
            }
        }
        assert_eq!(covered, body.len());
        assert_eq!(bodies[0], "batch");
        match reading(bodies[1].as_bytes(), 0).unwrap() {
            BodyReading::JsonLines(lines) => {
                assert_eq!(lines.len(), 2);
                assert_eq!(lines[0].1.name(), "openai-chat");
                assert_eq!(lines[1].1.name(), "json");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(reading(b"batch", 0).unwrap(), BodyReading::Text("batch"));
        assert_eq!(
            reading(b"\x89PNG\r\n\x1a\n\x00\x00", 0).unwrap(),
            BodyReading::Media
        );
        let err = reading(b"\x00\xff\xfe", 40).unwrap_err().to_string();
        assert!(err.contains("byte 40"), "{err}");
    }

    #[test]
    fn malformed_bodies_are_named_by_offset() {
        for (body, why) in [
            ("{\"a\":1}", "does not start with a boundary"),
            ("--a b \r\n\r\n", "not an RFC 2046 boundary"),
            ("--a@b\r\n\r\n", "not an RFC 2046 boundary"),
            ("--ab\r\nX: y\r\n\r\nbody", "does not end with a boundary"),
            ("--ab\r\nX: y", "headers do not end"),
        ] {
            let err = split(body.as_bytes()).unwrap_err().to_string();
            assert!(err.contains(why), "{body}: {err}");
        }
    }
}
