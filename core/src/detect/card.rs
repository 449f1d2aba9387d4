//! Payment card numbers: 13–19 digits, contiguous or in groups separated by
//! single spaces, dashes or dots (one kind per number; Unicode spaces read
//! as spaces through the folded reading, `super::fold`), in a card layout
//! (`4-4-4-4`, `4-4-4-4-3`, Amex `4-6-5`, Diners `4-6-4`), with a known
//! network's leading digits and length, and a valid Luhn check. `_`
//! separates (`card_4111111111111111`), and so does a change of script
//! (`卡号4111111111111111`).

use super::digits::{
    continues_number_after, continues_number_before, digits_end, next_digit,
    shorter_reading_allowed, GroupRun, MAX_GROUPS,
};
use super::Finding;
use crate::kind::Kind;
use crate::text::{glued_before_number, on_value_boundaries};

const MIN_DIGITS: usize = 13;
const MAX_DIGITS: usize = 19;

/// Appends the card numbers of `text` to `out`.
///
/// `first_digit` is where the first ASCII digit of `text` is (the caller
/// found it once for every numeric detector).
pub(super) fn find(text: &str, first_digit: usize, out: &mut Vec<Finding>) {
    let bytes = text.as_bytes();
    let mut from = first_digit;
    let mut run = GroupRun::default();
    while let Some(start) = next_digit(bytes, from) {
        // Fast path: a lone short number (`2024`) is no card.
        let first_end = digits_end(bytes, start);
        if first_end - start < MIN_DIGITS
            && !matches!(bytes.get(first_end), Some(b' ' | b'-' | b'.'))
        {
            from = first_end;
            continue;
        }
        // One kind of separator per number: the one after the first group
        // (`4111111111111111 10.0.0.1` is a card and an address).
        let separator = match bytes.get(first_end) {
            Some(b'-') => b"-",
            Some(b'.') => b".",
            _ => b" ",
        };
        run.read_into(bytes, start, separator, false);
        from = run.written_end().max(start + 1);
        if glued_before_number(text, start) {
            // Glued to a word (`ES91 …`): the groups after it may still be
            // a number of their own.
            from = run.get(0).map_or(from, |g| g.written_end());
            continue;
        }
        if bytes.get(start.wrapping_sub(1)) == Some(&b'+') || continues_number_before(bytes, start)
        {
            continue;
        }
        if let Some(end) = longest_card(bytes, &run) {
            if on_value_boundaries(text, start, end, true) {
                out.push(Finding::new(Kind::Card, start, end));
                from = end;
            }
        }
    }
}

/// The end of the longest card number made of the first groups of `run`.
/// A shorter reading must end where a space starts another word.
fn longest_card(bytes: &[u8], run: &GroupRun) -> Option<usize> {
    if run.groups().map(|g| g.len()).sum::<usize>() < MIN_DIGITS {
        return None; // the common case: a short number
    }
    (0..run.len()).rev().find_map(|last| {
        if !shorter_reading_allowed(run, last) {
            return None;
        }
        let end = run.get(last)?.end;
        (is_card(bytes, run, last) && !continues_number_after(bytes, end)).then_some(end)
    })
}

/// True when groups `0..=last` of `run` are a card number.
fn is_card(bytes: &[u8], run: &GroupRun, last: usize) -> bool {
    let groups = || run.groups().take(last + 1);
    let mut sizes = [0usize; MAX_GROUPS];
    for (size, group) in sizes.iter_mut().zip(groups()) {
        *size = group.len();
    }
    let sizes = &sizes[..(last + 1).min(MAX_GROUPS)];
    let count: usize = sizes.iter().sum();
    if !(MIN_DIGITS..=MAX_DIGITS).contains(&count) || !is_card_layout(sizes) {
        return false;
    }
    let first_sep = run.get(1).map(|g| g.sep);
    if groups().skip(1).any(|g| Some(g.sep) != first_sep) {
        return false;
    }
    let mut digits = [0u8; MAX_DIGITS];
    for (slot, b) in digits
        .iter_mut()
        .zip(groups().flat_map(|g| &bytes[g.start..g.end]))
    {
        *slot = b - b'0';
    }
    let digits = &digits[..count];
    network_accepts(digits) && luhn_valid(digits)
}

/// Contiguous, groups of four (the last one 1–4 digits), or the Amex and
/// Diners `4-6-5` / `4-6-4` layouts.
fn is_card_layout(sizes: &[usize]) -> bool {
    match sizes {
        [_] => true,
        [4, 6, 5] | [4, 6, 4] => true,
        [init @ .., last] if init.len() >= 2 => {
            init.iter().all(|&s| s == 4) && (1..=4).contains(last)
        }
        _ => false,
    }
}

/// True when the leading digits name a card network issuing this length.
fn network_accepts(digits: &[u8]) -> bool {
    let len = digits.len();
    let prefix = |n: usize| {
        digits
            .iter()
            .take(n)
            .fold(0u32, |acc, &d| acc * 10 + u32::from(d))
    };
    match digits.first() {
        Some(4) => matches!(len, 13 | 16 | 19), // Visa
        Some(5) if (51..=55).contains(&prefix(2)) => len == 16, // Mastercard
        Some(5) => len >= 13,                   // Maestro
        Some(2) => (2221..=2720).contains(&prefix(4)) && len == 16, // Mastercard 2-series
        Some(3) if matches!(prefix(2), 34 | 37) => len == 15, // Amex
        Some(3) if matches!(prefix(2), 30 | 36 | 38 | 39) => len >= 14, // Diners
        Some(3) if (3528..=3589).contains(&prefix(4)) => len >= 16, // JCB
        Some(6) => true,                        // Discover, UnionPay, Maestro, RuPay
        _ => false,
    }
}

/// The Luhn check over `digits` (values 0..=9).
fn luhn_valid(digits: &[u8]) -> bool {
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| {
            let d = u32::from(d);
            if i % 2 == 1 {
                let doubled = d * 2;
                if doubled > 9 {
                    doubled - 9
                } else {
                    doubled
                }
            } else {
                d
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::super::tests::spans_of;
    use super::*;

    #[test]
    fn card_table() {
        let cases: &[(&str, &[&str])] = &[
            ("Visa 4111 1111 1111 1111.", &["4111 1111 1111 1111"]),
            (
                "tarjeta 4111-1111-1111-1111, caduca 12/27",
                &["4111-1111-1111-1111"],
            ),
            ("4111111111111111", &["4111111111111111"]),
            ("Mastercard 5555 5555 5555 4444", &["5555 5555 5555 4444"]),
            ("carta 2223 0031 2200 3222 scade", &["2223 0031 2200 3222"]),
            ("Amex 3782 822463 10005", &["3782 822463 10005"]),
            ("Amex 378282246310005", &["378282246310005"]),
            ("Diners 3056 930902 5904", &["3056 930902 5904"]),
            ("Karte: 6011 1111 1111 1117 bitte", &["6011 1111 1111 1117"]),
            ("JCB 3530111333300000", &["3530111333300000"]),
            ("4111 1111 1111 1111 2024", &["4111 1111 1111 1111"]),
            // false positives
            ("4111 1111 1111 1112", &[]),     // Luhn fails
            ("1234 5678 9012 3452", &[]),     // unknown network
            ("4111 1111-1111 1111", &[]),     // mixed separators
            ("4111  1111 1111 1111", &[]),    // double space
            ("41 11 11 11 11 11 11 11", &[]), // not a card layout
            ("ref4111111111111111", &[]),     // glued
            ("ES91 4111111111111111", &["4111111111111111"]), // after a glued group
            ("4111111111111111.5", &[]),      // a decimal
            ("+4111111111111111", &[]),       // a phone-like number
            ("4111-1111-1111-1111-2", &[]),   // longer dashed run
            ("Pedido 12345678901234 enviado", &[]),
            ("Bestellnummer 4000 0566 5566 5557", &[]), // Luhn fails
            // dots, `_` and scripts without spaces
            ("4111.1111.1111.1111", &["4111.1111.1111.1111"]),
            ("Amex 3782.822463.10005.", &["3782.822463.10005"]),
            ("card_4111111111111111", &["4111111111111111"]),
            ("4111111111111111_exp", &["4111111111111111"]),
            ("卡号4111111111111111谢谢", &["4111111111111111"]),
            ("4111.1111.1111.1112", &[]),   // Luhn fails
            ("4111.1111-1111.1111", &[]),   // mixed separators
            ("4.111.111.111.111.111", &[]), // thousands, not a layout
            ("4111.1111.1111.1111.5", &[]), // a longer dotted run
            ("v4111.1111.1111.1111", &[]),  // glued to a word
        ];
        for (text, expected) in cases {
            let mut out = Vec::new();
            find(text, 0, &mut out);
            assert!(out.iter().all(|f| f.kind == Kind::Card));
            assert_eq!(spans_of(text, &out), *expected, "{text:?}");
        }
    }

    #[test]
    fn luhn() {
        assert!(luhn_valid(&[7, 9, 9, 2, 7, 3, 9, 8, 7, 1, 3]));
        assert!(!luhn_valid(&[7, 9, 9, 2, 7, 3, 9, 8, 7, 1, 4]));
    }
}
