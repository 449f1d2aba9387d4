//! Other readings of one text that a value can hide behind: its
//! percent-decoded form (URLs, form fields, header values:
//! `mario.rossi%40acme.it`, decoded up to three times against double
//! encoding) and the payload of a `data:` URL. Each reading keeps a map back
//! to the text's bytes, so a value found in it is replaced where it was
//! written, encoded as it was.

use std::ops::Range;

/// How a reading was taken from its text (and so how a replacement is
/// written back).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reading {
    /// Percent-escapes decoded: a replacement is percent-encoded.
    PercentDecoded,
    /// A `data:` URL's payload, as written.
    DataPayload,
}

/// One reading of a text.
pub(crate) struct View {
    pub(crate) text: String,
    /// `map[i]`: the text's byte offset of the reading's byte `i`; one past
    /// the end maps to the end.
    map: Vec<usize>,
    pub(crate) reading: Reading,
}

/// Percent-decoding rounds at most (`%2540` is two).
const MAX_ROUNDS: usize = 3;

impl View {
    /// The text's byte range a range of the reading came from.
    pub(crate) fn original(&self, range: Range<usize>) -> Range<usize> {
        self.map[range.start]..self.map[range.end]
    }

    /// `replacement` as it must be written in the text.
    pub(crate) fn encode(&self, replacement: &str) -> String {
        match self.reading {
            Reading::DataPayload => replacement.to_string(),
            Reading::PercentDecoded => percent_encode(replacement),
        }
    }
}

/// Whether `text` may hide a value behind a reading (cheap: one scan).
pub(crate) fn may_hide(text: &str) -> bool {
    memchr::memchr(b'%', text.as_bytes()).is_some() || is_data_url(text)
}

fn is_data_url(text: &str) -> bool {
    text.get(..5)
        .is_some_and(|p| p.eq_ignore_ascii_case("data:"))
        && text.contains(',')
}

/// A `data:` URL with a base64 payload that is not media a provider takes
/// as a file ([`crate::provider::is_data_url_media`]): where its payload
/// starts, and the payload decoded. `None` for anything else (a payload
/// that is not strict base64 is read as written by
/// [`Reading::DataPayload`]).
pub(crate) fn base64_data_url(text: &str) -> Option<(usize, Vec<u8>)> {
    use base64::Engine as _;
    if !is_data_url(text) || crate::provider::is_data_url_media(text) {
        return None;
    }
    let comma = text.find(',')?;
    let header = &text[..comma];
    let is_base64 = header
        .rsplit(';')
        .next()
        .is_some_and(|p| p.eq_ignore_ascii_case("base64"));
    if !is_base64 {
        return None;
    }
    let payload = BASE64.decode(&text[comma + 1..]).ok()?;
    Some((comma + 1, payload))
}

/// Standard base64 decoded (padding optional); `None` when it is not.
pub(crate) fn base64_decode(text: &[u8]) -> Option<Vec<u8>> {
    use base64::Engine as _;
    BASE64.decode(text).ok()
}

/// `bytes` in standard base64, padded.
pub(crate) fn base64_encode(bytes: &[u8]) -> String {
    use base64::Engine as _;
    BASE64.encode(bytes)
}

/// Standard alphabet; padding written, and accepted or not when read.
const BASE64: base64::engine::GeneralPurpose = base64::engine::GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    base64::engine::GeneralPurposeConfig::new()
        .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
);

/// The reading of `text` of this kind, when it differs from the text.
pub(crate) fn view(text: &str, reading: Reading) -> Option<View> {
    match reading {
        Reading::DataPayload => {
            if !is_data_url(text) {
                return None;
            }
            let at = text.find(',')? + 1;
            Some(View {
                text: text[at..].to_string(),
                map: (at..=text.len()).collect(),
                reading,
            })
        }
        Reading::PercentDecoded => {
            let mut current: Option<View> = None;
            for _ in 0..MAX_ROUNDS {
                let source = current.as_ref().map_or(text, |v| v.text.as_str());
                let Some((decoded, local)) = percent_decode_mapped(source, false) else {
                    break;
                };
                let map = match &current {
                    Some(prev) => local.iter().map(|&i| prev.map[i]).collect(),
                    None => local,
                };
                current = Some(View {
                    text: decoded,
                    map,
                    reading,
                });
            }
            current
        }
    }
}

/// `%XX` escapes decoded, with each decoded byte's offset in `s`; `None`
/// when no escape decodes (`+` is an escape of a space when
/// `plus_is_space`: a query component). An escape whose byte does not take part in a
/// UTF-8 character (`%ff`, a Latin-1 form) is left as written, so one such
/// escape does not hide the rest of the text's escapes.
pub(crate) fn percent_decode_mapped(s: &str, plus_is_space: bool) -> Option<(String, Vec<usize>)> {
    let bytes = s.as_bytes();
    // Most texts hold no escape: nothing to decode, no buffers built.
    if !bytes
        .iter()
        .any(|&b| b == b'%' || (plus_is_space && b == b'+'))
    {
        return None;
    }
    let mut raw = Vec::with_capacity(bytes.len());
    let mut raw_map = Vec::with_capacity(bytes.len());
    let mut escaped = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = |b: u8| (b as char).to_digit(16);
            if let (Some(h), Some(l)) = (
                bytes.get(i + 1).and_then(|&b| hex(b)),
                bytes.get(i + 2).and_then(|&b| hex(b)),
            ) {
                raw.push((h * 16 + l) as u8);
                raw_map.push(i);
                escaped.push(true);
                i += 3;
                continue;
            }
        }
        let space = plus_is_space && bytes[i] == b'+';
        raw.push(if space { b' ' } else { bytes[i] });
        raw_map.push(i);
        escaped.push(space);
        i += 1;
    }
    if !escaped.contains(&true) {
        return None; // nothing to decode
    }
    // Keep the bytes that form UTF-8; write the others back as escaped.
    let mut out = String::with_capacity(raw.len());
    let mut map = Vec::with_capacity(raw.len() + 1);
    let mut any = false;
    let mut at = 0;
    for chunk in raw.utf8_chunks() {
        let valid = chunk.valid();
        any |= escaped[at..at + valid.len()].contains(&true);
        map.extend_from_slice(&raw_map[at..at + valid.len()]);
        out.push_str(valid);
        at += valid.len();
        for _ in chunk.invalid() {
            let from = raw_map[at];
            // Only an escape can give a byte outside UTF-8 (`s` is UTF-8).
            if bytes[from] != b'%' {
                return None;
            }
            out.push_str(&s[from..from + 3]);
            map.extend(from..from + 3);
            at += 1;
        }
    }
    map.push(bytes.len());
    any.then_some((out, map))
}

fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 3);
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push('%');
            out.push(char::from(b"0123456789ABCDEF"[usize::from(b >> 4)]));
            out.push(char::from(b"0123456789ABCDEF"[usize::from(b & 15)]));
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn readings_map_back_to_where_they_were_written() {
        let text = "https://x/p?owner=mario.rossi%40acme.it&n=%C3%A9";
        let v = view(text, Reading::PercentDecoded).unwrap();
        assert_eq!(v.text, "https://x/p?owner=mario.rossi@acme.it&n=é");
        let at = v.text.find("mario").unwrap();
        let range = v.original(at..at + "mario.rossi@acme.it".len());
        assert_eq!(&text[range], "mario.rossi%40acme.it");
        let e = v.text.find('é').unwrap();
        assert_eq!(&text[v.original(e..e + 2)], "%C3%A9");
        assert_eq!(v.encode("a b@c"), "a%20b%40c");
        // Double encoding: decoded twice, mapped back through both.
        let text = "u=luca%2540x.it";
        let v = view(text, Reading::PercentDecoded).unwrap();
        assert_eq!(v.text, "u=luca@x.it");
        assert_eq!(&text[v.original(2..v.text.len())], "luca%2540x.it");
        // No escape, a stray %, bytes that are not UTF-8: no reading.
        assert!(view("plain text", Reading::PercentDecoded).is_none());
        assert!(view("100%", Reading::PercentDecoded).is_none());
        assert!(view("%ff%fe", Reading::PercentDecoded).is_none());
        // An escape outside UTF-8 stays as written; the others decode.
        let text = "x=%ff&u=a%40b.it%e2%82";
        let v = view(text, Reading::PercentDecoded).unwrap();
        assert_eq!(v.text, "x=%ff&u=a@b.it%e2%82");
        let at = v.text.find("a@b").unwrap();
        assert_eq!(&text[v.original(at..at + 6)], "a%40b.it");
        let ff = v.text.find("%ff").unwrap();
        assert_eq!(&text[v.original(ff..ff + 3)], "%ff");
        // A data: URL's payload.
        let text = "data:image/png;base64,+39 347 037 2603";
        let v = view(text, Reading::DataPayload).unwrap();
        assert_eq!(v.text, "+39 347 037 2603");
        assert_eq!(&text[v.original(0..v.text.len())], "+39 347 037 2603");
        assert!(view("no data here", Reading::DataPayload).is_none());
        assert!(may_hide("DATA:text/plain,x") && may_hide("a%40b") && !may_hide("plain"));
    }
}
