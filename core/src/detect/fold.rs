//! The folded reading of a text: what the e-mail and numeric detectors read
//! besides the text as written, so that values written with Unicode spaces
//! or in full-width forms are found.
//!
//! - Unicode spaces people (and word processors) put inside numbers read as
//!   an ASCII space: U+00A0 no-break, U+2000–U+200A (U+2007 figure, U+2009
//!   thin, …), U+202F narrow no-break, U+205F, U+3000 ideographic
//!   (`+39\u{a0}347\u{a0}123\u{a0}4567`, `4111\u{202f}1111…`).
//! - U+2010–U+2012 (hyphen, non-breaking hyphen, figure dash) read as `-`.
//! - Full-width ASCII forms U+FF01–U+FF5E read as their ASCII char
//!   (`＋３９ ３４７ １２３ ４５６７`, `ｍａｒｉｏ＠ｅｘａｍｐｌｅ．ｏｒｇ`,
//!   `mario＠example.org`).
//!
//! A finding in the reading is mapped back to the text's bytes, so it spans
//! the value as written. Folding keeps the boundaries: a folded char is a
//! word char exactly when its original is (full-width letters and digits
//! are alphanumeric, the spaces and punctuation are not), except `＿`,
//! which reads as the word char `_` (stricter, never looser). The reading is
//! built only when the text holds a char it folds: ASCII text costs one
//! `is_ascii` pass, other text one `memchr3` pass and one `memmem` pass.

use super::Finding;

/// A text's folded reading and the map back to the text's bytes.
pub(super) struct Folded {
    /// The folded text.
    pub(super) text: String,
    /// `map[i]`: the text's byte offset of the folded byte `i`; one past
    /// the end maps to the text's end.
    map: Vec<usize>,
}

/// The ASCII char that `c` reads as, when it is one the reading folds.
#[inline]
pub(crate) fn fold_char(c: char) -> Option<u8> {
    match c {
        '\u{a0}' | '\u{2000}'..='\u{200a}' | '\u{202f}' | '\u{205f}' | '\u{3000}' => Some(b' '),
        '\u{2010}'..='\u{2012}' => Some(b'-'),
        // Full-width forms: U+FF01..=U+FF5E are ASCII 0x21..=0x7E.
        '\u{ff01}'..='\u{ff5e}' => u8::try_from(c as u32 - 0xff01 + 0x21).ok(),
        _ => None,
    }
}

/// True when `text` holds a char [`fold_char`] folds.
fn holds_foldable(text: &str) -> bool {
    if text.is_ascii() {
        return false;
    }
    let bytes = text.as_bytes();
    // Lead bytes: C2 (U+00A0), E2 (U+2000..U+205F), EF (U+FF01..U+FF5E);
    // U+3000 (E3 80 80) is looked for on its own (E3 leads most kana).
    let lead = memchr::memchr3_iter(0xc2, 0xe2, 0xef, bytes).any(|at| {
        text.get(at..)
            .and_then(|tail| tail.chars().next())
            .is_some_and(|c| fold_char(c).is_some())
    });
    lead || memchr::memmem::find(bytes, "\u{3000}".as_bytes()).is_some()
}

impl Folded {
    /// The folded reading of `text`; `None` when folding changes nothing
    /// (the common case).
    pub(super) fn of(text: &str) -> Option<Folded> {
        if !holds_foldable(text) {
            return None;
        }
        let mut folded = String::with_capacity(text.len());
        let mut map = Vec::with_capacity(text.len() + 1);
        for (at, c) in text.char_indices() {
            match fold_char(c) {
                Some(ascii) => {
                    folded.push(char::from(ascii));
                    map.push(at);
                }
                None => {
                    folded.push(c);
                    map.extend(at..at + c.len_utf8());
                }
            }
        }
        map.push(text.len());
        Some(Folded { text: folded, map })
    }

    /// Moves the spans of `findings` (found in the reading) onto the text.
    pub(super) fn map_back(&self, findings: &mut [Finding]) {
        for finding in findings {
            let start = self.map.get(finding.start).copied();
            let end = self.map.get(finding.end).copied();
            match (start, end) {
                (Some(start), Some(end)) => {
                    finding.start = start;
                    finding.end = end;
                }
                // Out of the reading: a detector bug; drop the span (an
                // empty one is dropped by the overlap resolution).
                _ => finding.end = finding.start,
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::kind::Kind;

    #[test]
    fn folds_spaces_dashes_and_full_width_forms_only() {
        let cases = [
            ("+39\u{a0}347\u{a0}123\u{a0}4567", "+39 347 123 4567"),
            (
                "4111\u{202f}1111\u{2009}1111\u{2007}1111",
                "4111 1111 1111 1111",
            ),
            ("ｍａｒｉｏ＠ｅｘａｍｐｌｅ．ｏｒｇ", "mario@example.org"),
            ("＋３９　３４７", "+39 347"),
            ("347\u{2011}123", "347-123"),
            ("café “x” — 電話", "café “x” — 電話"),
        ];
        for (text, expected) in cases {
            let folded = Folded::of(text).map(|f| f.text);
            if text == expected {
                assert!(folded.is_none(), "{text:?}");
            } else {
                assert_eq!(folded.as_deref(), Some(expected), "{text:?}");
            }
        }
        assert!(Folded::of("plain ascii 4111 1111").is_none());
    }

    #[test]
    fn spans_map_back_onto_the_text_as_written() {
        let text = "tel ＋３９ ３４７!";
        let folded = Folded::of(text).unwrap();
        assert_eq!(folded.text, "tel +39 347!");
        let mut findings = [Finding::new(Kind::Phone, 4, 11)];
        folded.map_back(&mut findings);
        assert_eq!(&text[findings[0].start..findings[0].end], "＋３９ ３４７");
    }
}
