//! IBANs: two-letter country code, two check digits and the BBAN, as people
//! write them: contiguous (`ES9121000418450200051332`), in capitals or in
//! lower case (`it60x0542811101000000123456`; the country code in one case),
//! or in groups of any size joined by one kind of single separator — space,
//! `-` or `.` (`ES91 2100 0418 4502 0005 1332`, `DE89-3704-0044-0532-0130-00`,
//! `DE89 37040044 0532013000`, `DE 89 37 04 …` with a capital code). Unicode
//! spaces inside read as spaces through the folded reading
//! (`super::fold`). The length must be the country's (ISO 13616 registry;
//! unknown countries are not IBANs) and the mod-97 check must give 1.
//!
//! Against prose read as an account (`no12 with some text`): a country whose
//! BBAN is digits only takes no letter after its check digits, and a group
//! of letters only (`GB82 WEST 1234 …`) is taken in capitals only.
//!
//! Found from the check digits: each digit pair preceded by two letters is a
//! candidate. `_` separates (`iban_DE89370400440532013000`).

use super::digits::next_digit;
use super::Finding;
use crate::kind::Kind;
use crate::text::on_value_boundaries;

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

/// Countries whose BBAN is digits only (ISO 13616 registry).
#[rustfmt::skip]
const DIGITS_ONLY: &[&[u8; 2]] = &[
    b"AE", b"AT", b"BA", b"BE", b"CR", b"CZ", b"DE", b"DK", b"EE", b"EG", b"ES",
    b"FI", b"FO", b"GL", b"HR", b"HU", b"IL", b"IS", b"LT", b"LY", b"ME", b"MR",
    b"NO", b"PL", b"PT", b"RS", b"SD", b"SE", b"SI", b"SK", b"ST", b"TL", b"TN",
    b"VA", b"XK",
];

/// The separators between groups (one kind per IBAN).
const SEPARATORS: &[u8] = b" -.";

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
        if !bytes.get(digit + 1).is_some_and(u8::is_ascii_digit) {
            continue;
        }
        // The country code: glued to the check digits in one case
        // (`DE89`, `de89`), or in capitals one separator before (`DE 89`).
        let one_case = |a: u8, b: u8| {
            (a.is_ascii_uppercase() && b.is_ascii_uppercase())
                || (a.is_ascii_lowercase() && b.is_ascii_lowercase())
        };
        let start = if digit >= 2 && one_case(bytes[digit - 2], bytes[digit - 1]) {
            digit - 2
        } else if digit >= 3
            && SEPARATORS.contains(&bytes[digit - 1])
            && bytes[digit - 3].is_ascii_uppercase()
            && bytes[digit - 2].is_ascii_uppercase()
        {
            digit - 3
        } else {
            continue;
        };
        let code = [
            bytes[start].to_ascii_uppercase(),
            bytes[start + 1].to_ascii_uppercase(),
        ];
        let Some(length) = country_length(&code) else {
            continue;
        };
        let mut compact = [0u8; MAX_LEN];
        let Some(end) = collect(bytes, start, length, &mut compact) else {
            continue;
        };
        let iban = &compact[..length];
        let letters_ok = !DIGITS_ONLY.contains(&&code) || iban[4..].iter().all(u8::is_ascii_digit);
        if letters_ok && mod97(iban) == 1 && on_value_boundaries(text, start, end, true) {
            out.push(Finding::new(Kind::Iban, start, end));
            from = end;
        }
    }
}

/// The IBAN length of the country code `code` (capitals), if it is a known
/// one.
fn country_length(code: &[u8; 2]) -> Option<usize> {
    LENGTHS
        .iter()
        .find(|(country, _)| *country == code)
        .map(|(_, length)| *length)
}

/// Reads `length` IBAN characters from `start` into `compact`: groups of
/// letters and digits, joined by one kind of single separator, the last
/// group ending where the IBAN does; returns the end of the written form.
fn collect(
    bytes: &[u8],
    start: usize,
    length: usize,
    compact: &mut [u8; MAX_LEN],
) -> Option<usize> {
    let is_iban_byte = |b: &u8| b.is_ascii_alphanumeric();
    let mut pos = start;
    let mut count = 0;
    let mut separator = None;
    loop {
        let group_start = pos;
        while count < length {
            match bytes.get(pos) {
                Some(&b) if is_iban_byte(&b) => {
                    *compact.get_mut(count)? = b;
                    count += 1;
                    pos += 1;
                }
                _ => break,
            }
        }
        // A group of letters only is taken in capitals only (prose such as
        // `it12 with some text` is no account). The first group holds the
        // country code.
        let group = &bytes[group_start..pos];
        if separator.is_some()
            && !group.iter().any(u8::is_ascii_digit)
            && !group.iter().all(u8::is_ascii_uppercase)
        {
            return None;
        }
        if count == length {
            break;
        }
        let b = *bytes.get(pos)?;
        if !SEPARATORS.contains(&b)
            || separator.is_some_and(|s| s != b)
            || !bytes.get(pos + 1).is_some_and(is_iban_byte)
        {
            return None;
        }
        separator = Some(b);
        pos += 1;
    }
    // A longer run is not this country's IBAN (nor one that goes on after
    // a dash or a dot: `DE89-…-00-1`).
    let goes_on = matches!(separator, Some(b'-' | b'.'))
        && bytes.get(pos) == separator.as_ref()
        && bytes.get(pos + 1).is_some_and(is_iban_byte);
    if goes_on || bytes.get(pos).is_some_and(is_iban_byte) {
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
    fn iban_spellings_lower_case_groups_and_separators() {
        let cases: &[(&str, &str)] = &[
            (
                "bonifico su it60x0542811101000000123456 grazie",
                "it60x0542811101000000123456",
            ),
            (
                "Konto de89 3704 0044 0532 0130 00.",
                "de89 3704 0044 0532 0130 00",
            ),
            ("DE89-3704-0044-0532-0130-00", "DE89-3704-0044-0532-0130-00"),
            ("de89-3704-0044-0532-0130-00", "de89-3704-0044-0532-0130-00"),
            (
                "DE89.3704.0044.0532.0130.00.",
                "DE89.3704.0044.0532.0130.00",
            ),
            (
                "DE 89 37 04 00 44 05 32 01 30 00",
                "DE 89 37 04 00 44 05 32 01 30 00",
            ),
            (
                "DE89 37 04 00 44 05 32 01 30 00",
                "DE89 37 04 00 44 05 32 01 30 00",
            ),
            (
                "DE89 370 400 440 532 013 000",
                "DE89 370 400 440 532 013 000",
            ),
            (
                "IT60 X0542 81110 10000 00123 456",
                "IT60 X0542 81110 10000 00123 456",
            ),
            ("DE89 370400 440532 013000", "DE89 370400 440532 013000"),
            ("DE89 37040044 0532013000", "DE89 37040044 0532013000"),
            (
                "ES91 2100 0418 45 0200 051332",
                "ES91 2100 0418 45 0200 051332",
            ),
        ];
        for (text, expected) in cases {
            let mut out = Vec::new();
            find(text, 0, &mut out);
            assert_eq!(spans_of(text, &out), [*expected], "{text:?}");
        }
    }

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
            // irregular grouping: any group sizes, one kind of separator
            (
                "DE89 37040044 0532 0130 00",
                &["DE89 37040044 0532 0130 00"],
            ),
            // the task's spellings
            (
                "IT60X0542811101000000123456",
                &["IT60X0542811101000000123456"],
            ),
            ("iban_DE89370400440532013000", &["DE89370400440532013000"]),
            ("DE89370400440532013000_x", &["DE89370400440532013000"]),
            ("nl91abna0417164300", &["nl91abna0417164300"]),
            ("gb82west12345698765432", &["gb82west12345698765432"]),
            (
                "GB82 WEST 1234 5698 7654 32",
                &["GB82 WEST 1234 5698 7654 32"],
            ),
            (
                "fr14 2004 1010 0505 0001 3m02 606",
                &["fr14 2004 1010 0505 0001 3m02 606"],
            ),
            // false positives
            ("ES91 2100 0418 4502 0005 1333", &[]), // check fails
            ("DE89 3704 0044 0532 0130 001", &[]),  // too long
            ("DE89 3704 0044 0532 0130 0", &[]),    // too short
            ("DE89370400440532013000X", &[]),       // glued
            ("XDE89370400440532013000", &[]),       // glued before
            ("ZZ89370400440532013000", &[]),        // unknown country
            ("DE89 3704-0044 0532 0130 00", &[]),   // mixed separators
            ("DE89  3704 0044 0532 0130 00", &[]),  // double space
            ("DE89-3704-0044-0532-0130-00-1", &[]), // continues
            ("DE89.3704.0044.0532.0130.00.12", &[]),
            ("Es91 2100 0418 4502 0005 1332", &[]), // code in mixed case
            ("de 89 3704 0044 0532 0130 00", &[]),  // spaced code in lower case
            ("it89 with some more text here and", &[]), // prose, check holds
            ("DE06ABCDEFGHIJKLMNOPQR", &[]),        // letters in a digits-only BBAN
            ("gb82 west 1234 5698 7654 32", &[]),   // letter group in lower case
            ("in2024 we met at 20 12 30 45 67 89 12 34 56", &[]),
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
