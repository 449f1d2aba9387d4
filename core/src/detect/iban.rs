//! IBANs: two-letter country code, two check digits and the BBAN, written
//! contiguous (`ES9121000418450200051332`) or in groups of four separated by
//! single spaces (`ES91 2100 0418 4502 0005 1332`). The length must be the
//! country's (ISO 13616 registry; unknown countries are not IBANs) and the
//! mod-97 check must give 1.
//!
//! Found from the check digits: each digit pair preceded by two capital
//! letters at a word start is a candidate.

use super::digits::next_digit;
use super::Finding;
use crate::kind::Kind;
use crate::text::on_word_boundaries;

/// IBAN length per country (ISO 13616 registry).
#[rustfmt::skip]
const LENGTHS: &[(&[u8; 2], usize)] = &[
    (b"AD", 24), (b"AE", 23), (b"AL", 28), (b"AT", 20), (b"AZ", 28), (b"BA", 20),
    (b"BE", 16), (b"BG", 22), (b"BH", 22), (b"BR", 29), (b"BY", 28), (b"CH", 21),
    (b"CR", 22), (b"CY", 28), (b"CZ", 24), (b"DE", 22), (b"DK", 18), (b"DO", 28),
    (b"EE", 20), (b"EG", 29), (b"ES", 24), (b"FI", 18), (b"FO", 18), (b"FR", 27),
    (b"GB", 22), (b"GE", 22), (b"GI", 23), (b"GL", 18), (b"GR", 27), (b"GT", 28),
    (b"HR", 21), (b"HU", 28), (b"IE", 22), (b"IL", 23), (b"IQ", 23), (b"IS", 26),
    (b"IT", 27), (b"JO", 30), (b"KW", 30), (b"KZ", 20), (b"LB", 28), (b"LC", 32),
    (b"LI", 21), (b"LT", 20), (b"LU", 20), (b"LV", 21), (b"LY", 25), (b"MC", 27),
    (b"MD", 24), (b"ME", 22), (b"MK", 19), (b"MR", 27), (b"MT", 31), (b"MU", 30),
    (b"NL", 18), (b"NO", 15), (b"PK", 24), (b"PL", 28), (b"PS", 29), (b"PT", 25),
    (b"QA", 29), (b"RO", 24), (b"RS", 22), (b"SA", 24), (b"SC", 31), (b"SD", 18),
    (b"SE", 24), (b"SI", 19), (b"SK", 24), (b"SM", 27), (b"ST", 25), (b"SV", 28),
    (b"TL", 23), (b"TN", 24), (b"TR", 26), (b"UA", 29), (b"VA", 22), (b"VG", 24),
    (b"XK", 20),
];

/// The longest IBAN of any country.
const MAX_LEN: usize = 34;

/// Appends the IBANs of `text` to `out`.
///
/// `first_digit` is where the first ASCII digit of `text` is (the caller
/// found it once for every numeric detector).
pub(super) fn find(text: &str, first_digit: usize, out: &mut Vec<Finding>) {
    let bytes = text.as_bytes();
    let mut from = first_digit;
    while let Some(digit) = next_digit(bytes, from) {
        from = digit + 1;
        if digit < 2 {
            continue;
        }
        let start = digit - 2;
        if !(bytes[start].is_ascii_uppercase() && bytes[start + 1].is_ascii_uppercase()) {
            continue;
        }
        let Some(length) = country_length(&bytes[start..digit]) else {
            continue;
        };
        if !bytes.get(digit + 1).is_some_and(u8::is_ascii_digit) {
            continue;
        }
        let mut compact = [0u8; MAX_LEN];
        let Some(end) = collect(bytes, start, length, &mut compact) else {
            continue;
        };
        if mod97(&compact[..length]) == 1 && on_word_boundaries(text, start, end) {
            out.push(Finding::new(Kind::Iban, start, end));
            from = end;
        }
    }
}

/// The IBAN length of the country code `code`, if it is a known one.
fn country_length(code: &[u8]) -> Option<usize> {
    LENGTHS
        .iter()
        .find(|(country, _)| country.as_slice() == code)
        .map(|(_, length)| *length)
}

/// Reads `length` IBAN characters from `start` (contiguous, or a single
/// space after every group of four) into `compact`; returns the end of the
/// written form.
fn collect(
    bytes: &[u8],
    start: usize,
    length: usize,
    compact: &mut [u8; MAX_LEN],
) -> Option<usize> {
    let is_iban_byte = |b: u8| b.is_ascii_uppercase() || b.is_ascii_digit();
    let spaced = bytes.get(start + 4) == Some(&b' ');
    let mut pos = start;
    for (count, slot) in compact.iter_mut().take(length).enumerate() {
        if spaced && count > 0 && count % 4 == 0 {
            if bytes.get(pos) != Some(&b' ') {
                return None;
            }
            pos += 1;
        }
        let b = *bytes.get(pos).filter(|&&b| is_iban_byte(b))?;
        *slot = b;
        pos += 1;
    }
    // A longer run is not this country's IBAN.
    if bytes.get(pos).is_some_and(|&b| is_iban_byte(b)) {
        return None;
    }
    Some(pos)
}

/// The ISO 7064 mod-97 remainder of an IBAN (first four characters moved to
/// the end, letters as 10..=35).
fn mod97(iban: &[u8]) -> u32 {
    let (head, tail) = iban.split_at(4.min(iban.len()));
    tail.iter().chain(head).fold(0u32, |rem, &b| {
        if b.is_ascii_digit() {
            (rem * 10 + u32::from(b - b'0')) % 97
        } else {
            (rem * 100 + u32::from(b.to_ascii_uppercase() - b'A') + 10) % 97
        }
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::super::tests::spans_of;
    use super::*;

    #[test]
    fn iban_table() {
        let cases: &[(&str, &[&str])] = &[
            (
                "IBAN: ES91 2100 0418 4502 0005 1332.",
                &["ES91 2100 0418 4502 0005 1332"],
            ),
            ("ES9121000418450200051332", &["ES9121000418450200051332"]),
            (
                "bonifico su IT60 X054 2811 1010 0000 0123 456, grazie",
                &["IT60 X054 2811 1010 0000 0123 456"],
            ),
            (
                "IT60X0542811101000000123456",
                &["IT60X0542811101000000123456"],
            ),
            (
                "Konto DE89 3704 0044 0532 0130 00 bei der Bank",
                &["DE89 3704 0044 0532 0130 00"],
            ),
            ("DE89370400440532013000", &["DE89370400440532013000"]),
            (
                "FR14 2004 1010 0505 0001 3M02 606",
                &["FR14 2004 1010 0505 0001 3M02 606"],
            ),
            (
                "GB82 WEST 1234 5698 7654 32",
                &["GB82 WEST 1234 5698 7654 32"],
            ),
            ("NL91ABNA0417164300", &["NL91ABNA0417164300"]),
            ("(BE68539007547034)", &["BE68539007547034"]),
            // false positives
            ("ES91 2100 0418 4502 0005 1333", &[]), // check fails
            ("DE89 3704 0044 0532 0130 001", &[]),  // too long
            ("DE89 3704 0044 0532 0130 0", &[]),    // too short
            ("DE89370400440532013000X", &[]),       // glued
            ("XDE89370400440532013000", &[]),       // glued before
            ("ZZ89370400440532013000", &[]),        // unknown country
            ("DE89 37040044 0532 0130 00", &[]),    // irregular grouping
            ("ES 91 2100 0418", &[]),
            ("ISO 9001 certified, A4 paper", &[]),
        ];
        for (text, expected) in cases {
            let mut out = Vec::new();
            find(text, 0, &mut out);
            assert!(out.iter().all(|f| f.kind == Kind::Iban));
            assert_eq!(spans_of(text, &out), *expected, "{text:?}");
        }
    }
}
