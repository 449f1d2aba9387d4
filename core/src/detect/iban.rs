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

/// The BBAN of each country (ISO 13616 registry), as runs of a count and a
/// class: `n` digits, `a` letters, `c` letters or digits. The IBAN's length
/// is 4 + the runs' sum; unknown countries are not IBANs. Checking the
/// classes, not the length alone, keeps hex identifiers out: a UUID's tail
/// `ad43-4641-a0f2-2fff5351e79e` has Andorra's length and passes mod-97 one
/// time in 97, but Andorra's first eight BBAN characters are digits.
#[rustfmt::skip]
const BBAN: &[(&[u8; 2], &str)] = &[
    (b"AD", "8n12c"), (b"AE", "19n"), (b"AL", "8n16c"), (b"AT", "16n"),
    (b"AZ", "4a20c"), (b"BA", "16n"), (b"BE", "12n"), (b"BG", "4a6n8c"),
    (b"BH", "4a14c"), (b"BR", "23n1a1c"), (b"BY", "4c4n16c"), (b"CH", "5n12c"),
    (b"CR", "18n"), (b"CY", "8n16c"), (b"CZ", "20n"), (b"DE", "18n"),
    (b"DK", "14n"), (b"DO", "4c20n"), (b"EE", "16n"), (b"EG", "25n"),
    (b"ES", "20n"), (b"FI", "14n"), (b"FO", "14n"), (b"FR", "10n11c2n"),
    (b"GB", "4a14n"), (b"GE", "2a16n"), (b"GI", "4a15c"), (b"GL", "14n"),
    (b"GR", "7n16c"), (b"GT", "24c"), (b"HR", "17n"), (b"HU", "24n"),
    (b"IE", "4a14n"), (b"IL", "19n"), (b"IQ", "4a15n"), (b"IS", "22n"),
    (b"IT", "1a10n12c"), (b"JO", "4a4n18c"), (b"KW", "4a22c"), (b"KZ", "3n13c"),
    (b"LB", "4n20c"), (b"LC", "4a24c"), (b"LI", "5n12c"), (b"LT", "16n"),
    (b"LU", "3n13c"), (b"LV", "4a13c"), (b"LY", "21n"), (b"MC", "10n11c2n"),
    (b"MD", "20c"), (b"ME", "18n"), (b"MK", "3n10c2n"), (b"MR", "23n"),
    (b"MT", "4a5n18c"), (b"MU", "4a19n3a"), (b"NL", "4a10n"), (b"NO", "11n"),
    (b"PK", "4a16c"), (b"PL", "24n"), (b"PS", "4a21c"), (b"PT", "21n"),
    (b"QA", "4a21c"), (b"RO", "4a16c"), (b"RS", "18n"), (b"SA", "2n18c"),
    (b"SC", "4a20n3a"), (b"SD", "14n"), (b"SE", "20n"), (b"SI", "15n"),
    (b"SK", "20n"), (b"SM", "1a10n12c"), (b"ST", "21n"), (b"SV", "4a20n"),
    (b"TL", "19n"), (b"TN", "20n"), (b"TR", "6n16c"), (b"UA", "6n19c"),
    (b"VA", "18n"), (b"VG", "4a16n"), (b"XK", "16n"),
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
        let Some(bban) = country_bban(&code) else {
            continue;
        };
        let length = 4 + bban_runs(bban).map(|(count, _)| count).sum::<usize>();
        let mut compact = [0u8; MAX_LEN];
        let Some(end) = collect(bytes, start, length, &mut compact) else {
            continue;
        };
        let iban = &compact[..length];
        if has_structure(&iban[4..], bban)
            && mod97(iban) == 1
            && on_value_boundaries(text, start, end, true)
        {
            out.push(Finding::new(Kind::Iban, start, end));
            from = end;
        }
    }
}

/// The BBAN structure of the country code `code` (capitals), if it is a
/// known one.
fn country_bban(code: &[u8; 2]) -> Option<&'static str> {
    // Sorted by code (a test holds it so): every digit pair after two
    // letters asks.
    BBAN.binary_search_by(|(country, _)| (*country).cmp(code))
        .ok()
        .map(|at| BBAN[at].1)
}

/// The runs of a BBAN structure (`8n12c` → (8, `n`), (12, `c`)).
fn bban_runs(bban: &str) -> impl Iterator<Item = (usize, u8)> + '_ {
    let mut count = 0;
    bban.bytes().filter_map(move |b| {
        if b.is_ascii_digit() {
            count = count * 10 + usize::from(b - b'0');
            None
        } else {
            Some((std::mem::take(&mut count), b))
        }
    })
}

/// `bban` (as written, either case) has the classes of `structure`.
fn has_structure(bban: &[u8], structure: &str) -> bool {
    let mut rest = bban;
    for (count, class) in bban_runs(structure) {
        let Some((run, after)) = rest.split_at_checked(count) else {
            return false;
        };
        let fits = |b: &u8| match class {
            b'n' => b.is_ascii_digit(),
            b'a' => b.is_ascii_alphabetic(),
            _ => b.is_ascii_alphanumeric(),
        };
        if !run.iter().all(fits) {
            return false;
        }
        rest = after;
    }
    rest.is_empty()
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
    // a dash or a dot, `DE89-…-00-1`, or that a chain joined by the same
    // separator leads into, `…4d2e-ad43-4641-…`: an identifier's groups).
    let joined = |at: Option<usize>, next: Option<usize>| {
        matches!(separator, Some(b'-' | b'.'))
            && at.and_then(|at| bytes.get(at)) == separator.as_ref()
            && next
                .and_then(|next| bytes.get(next))
                .is_some_and(is_iban_byte)
    };
    let goes_on = joined(Some(pos), Some(pos + 1));
    let comes_after = joined(start.checked_sub(1), start.checked_sub(2));
    if goes_on || comes_after || bytes.get(pos).is_some_and(is_iban_byte) {
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
    fn the_bban_table_is_sorted_by_code_and_sums_to_known_lengths() {
        assert!(BBAN.windows(2).all(|w| w[0].0 < w[1].0));
        for (code, bban) in BBAN {
            let length = 4 + bban_runs(bban).map(|(count, _)| count).sum::<usize>();
            assert!((15..=MAX_LEN).contains(&length), "{code:?}");
            assert_eq!(country_bban(code), Some(*bban));
        }
        assert_eq!(country_bban(b"ZZ"), None);
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
            ("1-DE89-3704-0044-0532-0130-00", &[]), // the chain begins before
            (
                "file-DE89370400440532013000.pdf",
                &["DE89370400440532013000"],
            ),
            // a UUID's tail: Andorra's length and mod-97, digits where
            // Andorra's BBAN has digits only
            ("id 5f0c2b9e-ad43-4641-a0f2-2fff5351e79e", &[]),
            ("ad43 4641 a0f2 2fff 5351 e79e", &[]),
            (
                "AD12 0001 2030 2003 5910 0100",
                &["AD12 0001 2030 2003 5910 0100"],
            ),
            (
                "BR18 0036 0305 0000 1000 9795 493C 1",
                &["BR18 0036 0305 0000 1000 9795 493C 1"],
            ),
            (
                "MU17 BOMM 0101 1010 3030 0200 000M UR",
                &["MU17 BOMM 0101 1010 3030 0200 000M UR"],
            ),
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
