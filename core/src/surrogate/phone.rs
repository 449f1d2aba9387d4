//! Phone surrogates: the same country code, separators and grouping, the
//! same leading digit of the national number (mobile or landline), random
//! other digits.

use super::rng::SeedRng;

/// Two-digit country calling codes (everything else starting with 2–9 that
/// is not here has three digits; 1 and 7 have one).
const TWO_DIGIT_CODES: &[&str] = &[
    "20", "27", "30", "31", "32", "33", "34", "36", "39", "40", "41", "43", "44", "45", "46", "47",
    "48", "49", "51", "52", "53", "54", "55", "56", "57", "58", "60", "61", "62", "63", "64", "65",
    "66", "81", "82", "84", "86", "90", "91", "92", "93", "94", "95", "98",
];

/// Length of the country code at the start of `digits` (international form).
fn country_code_len(digits: &str) -> usize {
    match digits.as_bytes().first() {
        Some(b'1') | Some(b'7') => 1,
        Some(_)
            if digits
                .get(..2)
                .is_some_and(|p| TWO_DIGIT_CODES.contains(&p)) =>
        {
            2
        }
        Some(_) => 3.min(digits.len()),
        None => 0,
    }
}

/// The surrogate of a phone number; None when it holds fewer than 4 digits.
pub fn derive(rng: &mut SeedRng, value: &str) -> Option<String> {
    let digits: String = value.chars().filter(char::is_ascii_digit).collect();
    if digits.len() < 4 {
        return None;
    }
    let trimmed = value.trim_start();
    // Digits kept as written: the international prefix and country code.
    let (kept_prefix, country) = if let Some(rest) = trimmed.strip_prefix('+') {
        let cc = written_country_code(rest).unwrap_or_else(|| country_code_len(&digits));
        (cc, digits.get(..cc).unwrap_or(""))
    } else if trimmed.starts_with("00") && digits.len() >= 10 {
        let after = &digits[2..];
        let cc = written_country_code(&trimmed[2..]).unwrap_or_else(|| country_code_len(after));
        (2 + cc, after.get(..cc).unwrap_or(""))
    } else {
        (0, "")
    };
    // The national number keeps its first digit (mobile vs landline), and a
    // trunk `0` keeps the digit after it too (`02` Milan, `07` UK mobiles).
    let national = digits.get(kept_prefix..).unwrap_or("");
    let kept_national = if national.starts_with('0') { 2 } else { 1 };
    let keep = (kept_prefix + kept_national).min(digits.len().saturating_sub(2));
    let nanp =
        country == "1" || (kept_prefix == 0 && digits.len() == 10 && !digits.starts_with('0'));

    let mut new_digits: Vec<char> = digits.chars().collect();
    for (i, slot) in new_digits.iter_mut().enumerate().skip(keep) {
        // North American exchange codes start with 2–9.
        *slot = if nanp && i.checked_sub(kept_prefix) == Some(3) {
            rng.pick_char(b"23456789")
        } else {
            rng.digit()
        };
    }
    // A run of equal digits looks fake: break it at the end.
    let random_part = &new_digits[keep..];
    if random_part.len() > 1 && random_part.iter().all(|d| Some(d) == random_part.first()) {
        let first = random_part.first().copied().unwrap_or('0');
        if let Some(last) = new_digits.last_mut() {
            *last = rng.pick_char_except(super::rng::DIGITS, first);
        }
    }
    let mut next = new_digits.into_iter();
    Some(
        value
            .chars()
            .map(|c| {
                if c.is_ascii_digit() {
                    next.next().unwrap_or(c)
                } else {
                    c
                }
            })
            .collect(),
    )
}

/// The country code as written after `+`/`00` when a separator ends it
/// (`+39 347…`, `+1-415…`, `+44(0)…`): its length if 1–3 digits.
fn written_country_code(after_prefix: &str) -> Option<usize> {
    let run = after_prefix
        .chars()
        .take_while(char::is_ascii_digit)
        .count();
    let next = after_prefix.chars().nth(run)?;
    ((1..=3).contains(&run) && !next.is_ascii_digit()).then_some(run)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skeleton(s: &str) -> String {
        s.chars()
            .map(|c| if c.is_ascii_digit() { '9' } else { c })
            .collect()
    }

    #[test]
    fn phones_keep_country_code_grouping_and_first_digit() {
        // (value, digits kept as written at the start)
        let cases = [
            ("+39 347 123 4567", "+39 3"),
            ("+393471234567", "+393"),
            ("+1 (415) 555-0132", "+1 (4"),
            ("+14155550132", "+14"),
            ("+44 7700 900123", "+44 7"),
            ("+44 (0)20 7946 0958", "+44 (0)"),
            ("0039 347 1234567", "0039 3"),
            ("347-123-4567", "3"),
            ("02 1234 5678", "02"),
            ("(02) 1234-5678", "(02"),
            ("+351 912 345 678", "+351 9"),
            ("+49 30 901820", "+49 3"),
        ];
        for (value, kept) in cases {
            for seed in 0..30u8 {
                let out = derive(&mut SeedRng::from_seed([seed; 32]), value).unwrap_or_default();
                assert_eq!(skeleton(&out), skeleton(value), "{value}");
                assert!(out.starts_with(kept), "{value} → kept {kept}");
                let national: Vec<char> = out.chars().filter(char::is_ascii_digit).collect();
                assert!(
                    national.iter().any(|d| Some(d) != national.last()),
                    "{value}"
                );
            }
        }
    }

    #[test]
    fn nanp_exchange_never_starts_with_0_or_1() {
        for seed in 0..100u8 {
            let out =
                derive(&mut SeedRng::from_seed([seed; 32]), "+1 415 555 0132").unwrap_or_default();
            let digits: Vec<char> = out.chars().filter(char::is_ascii_digit).collect();
            assert!(
                !matches!(digits.get(4), Some('0') | Some('1')),
                "seed {seed}"
            );
        }
    }

    #[test]
    fn too_few_digits_is_not_a_phone() {
        assert_eq!(derive(&mut SeedRng::from_seed([1; 32]), "112"), None);
        assert_eq!(derive(&mut SeedRng::from_seed([1; 32]), "phone"), None);
    }
}
