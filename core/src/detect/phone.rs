//! Phone numbers, international and national, as people write them.
//!
//! The rule (chosen to keep false positives low; a plain run of digits is a
//! phone only with a leading `+`, `00` or trunk `0`):
//!
//! - A number is read as digit groups joined by single separators (space,
//!   `-`, `.`, `/`), with groups in parentheses (`(415)`, `(0)30`).
//! - **International**: a leading `+` (or `00`) and 8–15 digits after it,
//!   any grouping (`+39 347 123 4567`, `+49 (0)30 1234567`, `0034612345678`;
//!   a `(0)` trunk group is not counted).
//! - **National with trunk 0** (DE, IT, FR, GB, …): 9–13 digits, one kind
//!   of separator (a first `/` or a parenthesised area code may differ):
//!   `030 1234567`, `0151 23456789`, `02 1234 5678`, `06 12 34 56 78`.
//! - **National without prefix**, only in these layouts with one kind of
//!   separator: Spanish `612 345 678`, `612 34 56 78` (first digit 6–9),
//!   `91 123 45 67` (8 or 9); Italian mobile / North American `347 123 4567`,
//!   `(415) 555-0123` (first digit 2–9); Italian mobile `347 1234567`;
//!   `1-800-555-0123`; with a space then a dash, Brazilian `(11) 98234-5567`,
//!   `(51) 3322-1890`, `21 97654-3210` and North American `418 555-0147`.
//!   Dotted groups of three (`612.345.678`) read as a thousands-separated
//!   amount, not a phone.
//! - Never glued to a word or to a number around it (`ID612 345 678`,
//!   `1.612 345 678`, `…678,50`); `_` and a change of script separate
//!   (`tel_+393471234567`, `电话+8613812345678`). Unicode spaces and
//!   full-width digits read as ASCII through the folded reading
//!   (`super::fold`): `+39\u{a0}347\u{a0}123\u{a0}4567`, `＋３９ ３４７ …`.
//!   When a longer run is not a phone, a shorter reading ending
//!   where a space starts another word is tried (`612 345 678 2 veces`).
//!
//! Dates (`01.02.2024`, `2024-01-15`), years, prices, versions, IPv4
//! addresses, card numbers and order numbers fail these rules.

use super::digits::{
    continues_number_after, continues_number_before, digits_end, next_digit,
    shorter_reading_allowed, Group, GroupRun,
};
use super::Finding;
use crate::kind::Kind;
use crate::text::{glued_before_number, on_value_boundaries};

/// No phone reading has fewer digits (international: 8 after the `+`).
const MIN_DIGITS: usize = 8;

/// Separators people write between digit groups of a phone number.
const SEPARATORS: &[u8] = b" -./";

/// Appends the phone numbers of `text` to `out`.
///
/// `first_digit` is where the first ASCII digit of `text` is (the caller
/// found it once for every numeric detector).
pub(super) fn find(text: &str, first_digit: usize, out: &mut Vec<Finding>) {
    let bytes = text.as_bytes();
    let mut from = first_digit;
    let mut run = GroupRun::default();
    while let Some(digit) = next_digit(bytes, from) {
        let before = digit.checked_sub(1).map(|i| bytes[i]);
        let plus = before == Some(b'+');
        let run_start = if before == Some(b'(') {
            digit - 1
        } else {
            digit
        };
        let start = if plus { digit - 1 } else { run_start };
        // Fast path: a lone short number (`2024`) is no phone.
        let first_end = digits_end(bytes, digit);
        if first_end - digit < MIN_DIGITS
            && !bytes
                .get(first_end)
                .is_some_and(|b| SEPARATORS.contains(b) || *b == b')' || *b == b'(')
        {
            from = first_end;
            continue;
        }
        run.read_into(bytes, run_start, SEPARATORS, true);
        from = run.written_end().max(digit + 1);
        if glued_before_number(text, start) {
            // Glued to a word (`ES91 …`): the groups after it may still be
            // a number of their own.
            if start == digit {
                from = run.get(0).map_or(from, |g| g.written_end());
            }
            continue;
        }
        if continues_number_before(bytes, start) {
            continue;
        }
        if let Some(end) = longest_phone(bytes, &run, plus) {
            if on_value_boundaries(text, start, end, true) {
                out.push(Finding::new(Kind::Phone, start, end));
                from = end;
            }
        }
    }
}

/// The end of the longest phone number made of the first groups of `run`.
fn longest_phone(bytes: &[u8], run: &GroupRun, plus: bool) -> Option<usize> {
    if run.groups().map(|g| g.len()).sum::<usize>() < MIN_DIGITS {
        return None; // the common case: a short number
    }
    (0..run.len()).rev().find_map(|last| {
        if !shorter_reading_allowed(run, last) {
            return None;
        }
        let end = run.get(last)?.written_end();
        (is_phone(bytes, run, last, plus) && !continues_number_after(bytes, end)).then_some(end)
    })
}

/// True when groups `0..=last` of `run` are a phone number.
fn is_phone(bytes: &[u8], run: &GroupRun, last: usize, plus: bool) -> bool {
    let groups = || run.groups().take(last + 1);
    let Some(first) = run.get(0) else {
        return false;
    };
    let digit_at = |i: usize| bytes.get(i).map_or(0, |b| b.wrapping_sub(b'0'));
    let digits: usize = groups().map(|g| g.len()).sum();
    if plus || (first.len() >= 2 && bytes[first.start] == b'0' && bytes[first.start + 1] == b'0') {
        // International: digits after `+` or `00`, a `(0)` trunk not counted.
        let trunk = groups()
            .filter(|g| g.paren && g.len() == 1 && bytes[g.start] == b'0')
            .count();
        let prefix = if plus { 0 } else { 2 };
        let counted = digits - trunk - prefix;
        let country_start = first.start + prefix;
        let country_ok = if first.len() > prefix {
            digit_at(country_start) != 0
        } else {
            run.get(1).is_some_and(|g| digit_at(g.start) != 0)
        };
        return !first.paren && country_ok && (8..=15).contains(&counted);
    }
    if mixed_layout(run, last, digit_at) {
        return true;
    }
    if !one_separator_kind(groups()) {
        return false;
    }
    let lead = digit_at(first.start);
    if lead == 0 {
        return (9..=13).contains(&digits);
    }
    let mut sizes = [0usize; 5];
    if last >= sizes.len() {
        return false;
    }
    for (size, group) in sizes.iter_mut().zip(groups()) {
        *size = group.len();
    }
    let seps_all_dots = groups().skip(1).all(|g| g.sep == b'.');
    match &sizes[..=last] {
        [3, 3, 3] => (6..=9).contains(&lead) && !seps_all_dots,
        [3, 2, 2, 2] => (6..=9).contains(&lead),
        [2, 3, 2, 2] => (8..=9).contains(&lead),
        [3, 3, 4] => (2..=9).contains(&lead),
        [3, 7] => lead == 3 && !first.paren,
        [1, 3, 3, 4] => lead == 1 && !first.paren,
        _ => false,
    }
}

/// National layouts written with a space and then a dash: Brazilian
/// `(11) 98234-5567` (mobile: nine digits from 9, the area code in
/// parentheses or followed by a space), `(51) 3322-1890` (landline: eight
/// digits from 2–5, the area code in parentheses), and North American
/// `418 555-0147` (first digit 2–9).
fn mixed_layout(run: &GroupRun, last: usize, digit_at: impl Fn(usize) -> u8) -> bool {
    let (Some(a), Some(b), Some(c)) = (run.get(0), run.get(1), run.get(2)) else {
        return false;
    };
    if last != 2 || c.sep != b'-' || b.sep != b' ' {
        return false;
    }
    let (lead_a, lead_b) = (digit_at(a.start), digit_at(b.start));
    match (a.len(), b.len(), c.len()) {
        (2, 5, 4) => lead_a != 0 && lead_b == 9,
        (2, 4, 4) => a.paren && lead_a != 0 && (2..=5).contains(&lead_b),
        (3, 3, 4) => !a.paren && (2..=9).contains(&lead_a),
        _ => false,
    }
}

/// True when the separators between groups are of one kind, not counting
/// the one after a parenthesised group (`(415) 555-0123`) nor a first `/`
/// (`030/123 4567`).
fn one_separator_kind(groups: impl Iterator<Item = Group>) -> bool {
    let mut kind = None;
    let mut after_paren = false;
    for (index, group) in groups.enumerate() {
        let exempt = index == 0 || after_paren || (index == 1 && group.sep == b'/');
        after_paren = group.paren;
        if exempt {
            continue;
        }
        match kind {
            None => kind = Some(group.sep),
            Some(k) if k != group.sep => return false,
            Some(_) => {}
        }
    }
    true
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::super::tests::spans_of;
    use super::*;

    #[test]
    fn phone_table() {
        let cases: &[(&str, &[&str])] = &[
            // Italian
            ("chiamami al +39 347 123 4567 domani", &["+39 347 123 4567"]),
            ("cell. 347 123 4567", &["347 123 4567"]),
            ("cell. 347 1234567", &["347 1234567"]),
            ("ufficio 02 1234 5678", &["02 1234 5678"]),
            ("tel. 06-12345678.", &["06-12345678"]),
            ("+393471234567", &["+393471234567"]),
            ("0039 347 123 4567", &["0039 347 123 4567"]),
            // Spanish
            (
                "llámame al 612 345 678 o al 91 123 45 67",
                &["612 345 678", "91 123 45 67"],
            ),
            ("móvil: 612 34 56 78", &["612 34 56 78"]),
            ("+34 612 345 678", &["+34 612 345 678"]),
            ("+34-612-345-678", &["+34-612-345-678"]),
            ("612 345 678 2 veces", &["612 345 678"]),
            ("0034612345678", &["0034612345678"]),
            // German
            ("Tel.: 030 1234567", &["030 1234567"]),
            ("Handy 0151 23456789", &["0151 23456789"]),
            ("030/1234567", &["030/1234567"]),
            ("(030) 1234567", &["(030) 1234567"]),
            ("+49 (0)30 1234567", &["+49 (0)30 1234567"]),
            ("+49 151 23456789", &["+49 151 23456789"]),
            // Others
            ("call (415) 555-0123 now", &["(415) 555-0123"]),
            ("+1 (415) 555-0123", &["+1 (415) 555-0123"]),
            ("415.555.0123", &["415.555.0123"]),
            ("1-800-555-0123", &["1-800-555-0123"]),
            ("+44 20 7946 0958", &["+44 20 7946 0958"]),
            ("+33 1 23 45 67 89", &["+33 1 23 45 67 89"]),
            ("06 12 34 56 78", &["06 12 34 56 78"]),
            // Brazil, North America with a space and a dash
            ("ligue (11) 98234-5567 hoje", &["(11) 98234-5567"]),
            ("fixo: (51) 3322-1890.", &["(51) 3322-1890"]),
            ("zap 21 97654-3210", &["21 97654-3210"]),
            ("tel. 418 555-0147", &["418 555-0147"]),
            ("(11) 1234-5678", &[]), // no landline starts with 1
            ("CEP 01310-100", &[]),  // a postcode
            ("11 88234-5567", &[]),  // a mobile starts with 9
            ("018 555-0147", &[]),   // trunk 0: one kind of separator only
            // false positives
            ("612345678", &[]), // plain run
            ("Pedido 123456789", &[]),
            ("el año 2024 y 1999", &[]),
            ("Preis: 1.234.567 EUR", &[]),
            ("612.345.678 euros", &[]), // thousands
            ("am 01.02.2024 um 10:30", &[]),
            ("fecha 15/03/2024", &[]),
            ("2024-03-15", &[]),
            ("version 1.2.3.4", &[]),
            ("192.168.100.200", &[]),
            ("4111 1111 1111 1111", &[]), // a card
            ("01.02.2024 12", &[]),       // date and time
            ("1.612 345 678", &[]),       // glued to a number
            ("612 345 678,50", &[]),
            ("ID612 345 678", &[]),                 // glued to a word
            ("ES12 612 345 678", &["612 345 678"]), // after a glued group
            ("612 345 678x", &[]),
            ("+12 345", &[]),           // too short
            ("+1234567890123456", &[]), // too long
            ("0800 12", &[]),
            ("Banco 0049 1500 05 1234567890", &[]), // too long for a phone
            ("100 000 000 personas", &[]),
            ("3+39 347 123 4567", &[]),
            ("+0 347 123 4567", &[]), // no country code 0
            // `_` and scripts without spaces
            ("tel_+393471234567", &["+393471234567"]),
            ("tel_347 123 4567", &["347 123 4567"]),
            ("+393471234567_casa", &["+393471234567"]),
            ("电话+8613812345678谢谢", &["+8613812345678"]),
            ("電話番号：03-1234-5678です", &["03-1234-5678"]),
            ("tel+393471234567", &[]), // glued to a word
            ("v_1.612 345 678", &[]),  // still glued to a number
        ];
        for (text, expected) in cases {
            let mut out = Vec::new();
            find(text, 0, &mut out);
            assert!(out.iter().all(|f| f.kind == Kind::Phone));
            assert_eq!(spans_of(text, &out), *expected, "{text:?}");
        }
    }
}
