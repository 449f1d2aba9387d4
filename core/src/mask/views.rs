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
                let Some((decoded, local)) = percent_decode_mapped(source) else {
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
/// when `s` has no escape or the decoded bytes are not UTF-8.
fn percent_decode_mapped(s: &str) -> Option<(String, Vec<usize>)> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut map = Vec::with_capacity(bytes.len() + 1);
    let mut any = false;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = |b: u8| (b as char).to_digit(16);
            if let (Some(h), Some(l)) = (
                bytes.get(i + 1).and_then(|&b| hex(b)),
                bytes.get(i + 2).and_then(|&b| hex(b)),
            ) {
                out.push((h * 16 + l) as u8);
                map.push(i);
                i += 3;
                any = true;
                continue;
            }
        }
        out.push(bytes[i]);
        map.push(i);
        i += 1;
    }
    map.push(bytes.len());
    if !any {
        return None;
    }
    String::from_utf8(out).ok().map(|text| (text, map))
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
        // A data: URL's payload.
        let text = "data:image/png;base64,+39 347 037 2603";
        let v = view(text, Reading::DataPayload).unwrap();
        assert_eq!(v.text, "+39 347 037 2603");
        assert_eq!(&text[v.original(0..v.text.len())], "+39 347 037 2603");
        assert!(view("no data here", Reading::DataPayload).is_none());
        assert!(may_hide("DATA:text/plain,x") && may_hide("a%40b") && !may_hide("plain"));
    }
}
