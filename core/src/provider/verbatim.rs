//! Request fields a provider needs byte for byte, and the form checks that
//! keep a forged one from carrying text past the masker.
//!
//! Deny by default: a field is kept verbatim only when it is listed here by
//! a provider, with its reason, and — for media — only when its bytes have
//! the form the field promises. A signed field cannot be changed at all,
//! so it is examined instead: a value found in it refuses the request.

use crate::json::{Document, NodeId, NodeKind};

/// Where a verbatim field sits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Within {
    /// In an object whose every `type` (a repeated key counts as each of
    /// its values) is this one.
    TypeOnly(&'static str),
    /// In an object that is the member of this name of its parent object.
    MemberOf(&'static str),
    /// In an object that is an item of the array that is the member of
    /// this name of its parent object (Gemini's `parts[]`).
    ItemOf(&'static str),
}

/// How a verbatim field is handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verbatim {
    /// Signed or sealed by the provider: changing it makes the provider
    /// refuse the request. Examined all the same: forwarded as written when
    /// it holds no value, the request refused when it does.
    Signed,
    /// Binary media in base64: kept when it is strict base64 that decodes
    /// to the file signature of a known binary format ([`is_base64_media`]);
    /// anything else is masked as any string.
    Base64Media,
    /// A `data:` URL of base64 media: the same rule on its payload
    /// ([`is_data_url_media`]); any other URL is masked as any string.
    DataUrlMedia,
}

/// One request field a provider keeps verbatim.
#[derive(Clone, Copy, Debug)]
pub struct VerbatimField {
    /// The member's key.
    pub key: &'static str,
    /// The object it must sit in.
    pub within: Within,
    /// How it is handled.
    pub handling: Verbatim,
    /// Why the provider needs its exact bytes, and what a forged one can
    /// carry. Required: a test fails on a field without one.
    pub reason: &'static str,
    /// A request body holding the field in its genuine form (the tests
    /// check the field is kept there, and that a value put in it does not
    /// leave as written).
    pub example: &'static str,
}

impl VerbatimField {
    /// Whether string `node` of `doc` is this field.
    pub fn matches(&self, doc: &Document<'_>, node: NodeId) -> bool {
        if !doc.key_is(node, self.key) {
            return false;
        }
        let Some(holder) = doc.parent(node) else {
            return false;
        };
        match self.within {
            Within::TypeOnly(name) => type_is_only(doc, holder, name),
            Within::MemberOf(key) => doc.parent(holder).is_some_and(|grand| {
                doc.kind(grand) == NodeKind::Object && doc.key_is(holder, key)
            }),
            Within::ItemOf(key) => {
                doc.kind(holder) == NodeKind::Object
                    && doc.parent(holder).is_some_and(|array| {
                        doc.kind(array) == NodeKind::Array
                            && doc.key_is(array, key)
                            && doc
                                .parent(array)
                                .is_some_and(|grand| doc.kind(grand) == NodeKind::Object)
                    })
            }
        }
    }
}

/// The verbatim field of `fields` that string `node` is, if any.
pub(crate) fn field_for(
    fields: &'static [VerbatimField],
    doc: &Document<'_>,
    node: NodeId,
) -> Option<&'static VerbatimField> {
    if fields.is_empty() {
        return None;
    }
    fields.iter().find(|f| f.matches(doc, node))
}

/// True when `obj` has a `type` and every one it has is `name`.
fn type_is_only(doc: &Document<'_>, obj: NodeId, name: &str) -> bool {
    let mut any = false;
    for t in doc.get_all(obj, "type") {
        if !doc.string_is(t, name) {
            return false;
        }
        any = true;
    }
    any
}

/// File signatures of the binary formats providers take inline: (offset,
/// magic bytes).
const SIGNATURES: &[(usize, &[u8])] = &[
    (0, b"\x89PNG\r\n\x1a\n"),
    (0, b"\xff\xd8\xff"),
    (0, b"GIF87a"),
    (0, b"GIF89a"),
    (0, b"RIFF"), // WebP, WAV (RIFF containers)
    (0, b"%PDF-"),
    (0, b"ID3"),      // MP3 with a tag
    (0, b"\xff\xfb"), // MP3 frame
    (0, b"\xff\xf3"),
    (0, b"\xff\xf2"),
    (0, b"OggS"),
    (0, b"fLaC"),
    (4, b"ftyp"),             // MP4, M4A, HEIC
    (0, b"\x1a\x45\xdf\xa3"), // WebM, Matroska
];

/// Base64 is read this far to check the file signature.
const SIGNATURE_CHARS: usize = 16;

/// True when `s` is strict base64 (the standard alphabet, padding only at
/// the end, no spaces) whose bytes start with the signature of a known
/// binary format. A person's words do not have that form: text written
/// into a media field fails the check and is masked.
pub fn is_base64_media(s: &str) -> bool {
    let bytes = s.as_bytes();
    let body_end = bytes.len() - bytes.iter().rev().take_while(|&&b| b == b'=').count();
    if bytes.len() - body_end > 2 || body_end < SIGNATURE_CHARS {
        return false;
    }
    let alphabet_ok = bytes[..body_end]
        .iter()
        .all(|&b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/');
    let padded = body_end != bytes.len();
    if !alphabet_ok
        || (padded && !bytes.len().is_multiple_of(4))
        || (!padded && bytes.len() % 4 == 1)
    {
        return false;
    }
    let head = decode_head(&bytes[..SIGNATURE_CHARS]);
    SIGNATURES
        .iter()
        .any(|(at, magic)| head.get(*at..*at + magic.len()) == Some(magic))
}

/// True when raw `bytes` start with the signature of a known binary file
/// type (an upload's file part).
pub fn is_media_bytes(bytes: &[u8]) -> bool {
    SIGNATURES
        .iter()
        .any(|(at, magic)| bytes.get(*at..*at + magic.len()) == Some(magic))
}

/// True when `s` is `data:<media type>[;params];base64,<payload>` with a
/// payload [`is_base64_media`] accepts.
pub fn is_data_url_media(s: &str) -> bool {
    let Some(rest) = s.strip_prefix("data:") else {
        return false;
    };
    let Some((meta, payload)) = rest.split_once(',') else {
        return false;
    };
    let Some(media) = meta.strip_suffix(";base64") else {
        return false;
    };
    let media_ok = !media.is_empty()
        && media.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'/' | b'+' | b'.' | b'-' | b';' | b'=')
        });
    media_ok && is_base64_media(payload)
}

/// Decodes base64 characters already checked against the alphabet.
fn decode_head(chars: &[u8]) -> Vec<u8> {
    let value = |b: u8| -> u32 {
        match b {
            b'A'..=b'Z' => u32::from(b - b'A'),
            b'a'..=b'z' => u32::from(b - b'a') + 26,
            b'0'..=b'9' => u32::from(b - b'0') + 52,
            b'+' => 62,
            _ => 63,
        }
    };
    let mut out = Vec::with_capacity(chars.len() / 4 * 3);
    for quad in chars.chunks_exact(4) {
        let n = quad.iter().fold(0u32, |n, &b| (n << 6) | value(b));
        out.extend_from_slice(&[(n >> 16) as u8, (n >> 8) as u8, n as u8]);
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn media_form_is_checked() {
        let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk";
        assert!(is_base64_media(png));
        assert!(is_base64_media(
            "JVBERi0xLjQKJcOkw7zDtsOfCjIgMCBvYmoKPDwvTGVu"
        ));
        assert!(is_data_url_media(&format!("data:image/png;base64,{png}")));
        for forged in [
            "mario.rossi@example.org",
            "4111111111111111",
            "4111111111111111AAAAAAAAAAAAAAAA", // base64, but no file signature
            "iVBORw0KGgo AAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJ", // a space
            "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJ===", // too much padding
            "",
        ] {
            assert!(!is_base64_media(forged), "{forged}");
            assert!(!is_data_url_media(&format!(
                "data:image/png;base64,{forged}"
            )));
        }
        for url in [
            format!("https://img.example/a.png?u={png}"),
            format!("data:image/png,{png}"),
            format!("data:text/plain mario;base64,{png}"),
        ] {
            assert!(!is_data_url_media(&url), "{url}");
        }
    }
}
