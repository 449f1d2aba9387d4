//! IBAN surrogates: the same country and length, the same spacing and case,
//! letters and digits of the account part where they were, valid mod-97
//! check digits.

use super::rng::{SeedRng, DIGITS, LOWER, UPPER};

/// Separators an IBAN is written with (Unicode spaces come folded).
fn is_separator(c: char) -> bool {
    matches!(c, ' ' | '-' | '.')
}

/// The surrogate of an IBAN; None when `value` is not IBAN-shaped (two
/// letters, two digits, 11–30 letters or digits, spaces, dashes or dots
/// between).
pub fn derive(rng: &mut SeedRng, value: &str) -> Option<String> {
    let compact: Vec<char> = value.chars().filter(|c| !is_separator(*c)).collect();
    let shaped = (15..=34).contains(&compact.len())
        && compact.iter().take(2).all(char::is_ascii_alphabetic)
        && compact.iter().skip(2).take(2).all(char::is_ascii_digit)
        && compact.iter().all(char::is_ascii_alphanumeric);
    if !shaped
        || value
            .chars()
            .any(|c| !c.is_ascii_alphanumeric() && !is_separator(c))
    {
        return None;
    }
    let mut new: Vec<char> = compact.clone();
    for slot in new.iter_mut().skip(4) {
        *slot = match *slot {
            '0'..='9' => rng.pick_char(DIGITS),
            'a'..='z' => rng.pick_char(LOWER),
            _ => rng.pick_char(UPPER),
        };
    }
    let check = check_digits(&new);
    let mut check_chars = check.chars();
    for slot in new.iter_mut().skip(2).take(2) {
        *slot = check_chars.next().unwrap_or('0');
    }
    let mut next = new.into_iter();
    Some(
        value
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    next.next().unwrap_or(c)
                } else {
                    c
                }
            })
            .collect(),
    )
}

/// Remainder mod 97 of an IBAN's rearranged form (account part, country,
/// check digits), letters counted as 10–35, case ignored.
fn mod97(rearranged: impl Iterator<Item = char>) -> u32 {
    let mut remainder = 0u32;
    for c in rearranged {
        if let Some(d) = c.to_digit(10) {
            remainder = (remainder * 10 + d) % 97;
        } else if let Some(v) = c.to_digit(36) {
            remainder = (remainder * 100 + v) % 97;
        }
    }
    remainder
}

/// The two check digits for an IBAN whose chars are `compact` (its own
/// check digits are ignored).
fn check_digits(compact: &[char]) -> String {
    let body = compact.iter().skip(4).copied();
    let country = compact.iter().take(2).copied();
    let remainder = mod97(body.chain(country).chain(['0', '0']));
    format!("{:02}", 98 - remainder)
}

/// True when `iban` (spaces allowed) passes the mod-97 check.
#[cfg(test)]
pub fn is_valid(iban: &str) -> bool {
    let compact: Vec<char> = iban.chars().filter(|c| !is_separator(*c)).collect();
    compact.len() >= 5
        && mod97(
            compact
                .iter()
                .skip(4)
                .chain(compact.iter().take(4))
                .copied(),
        ) == 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_ibans_are_valid() {
        for iban in [
            "IT60 X054 2811 1010 0000 0123 456",
            "DE89370400440532013000",
            "GB82 WEST 1234 5698 7654 32",
            "fr1420041010050500013m02606",
        ] {
            assert!(is_valid(iban), "{iban}");
        }
        assert!(!is_valid("IT61 X054 2811 1010 0000 0123 456"));
    }

    #[test]
    fn surrogates_are_valid_and_keep_country_length_spacing_and_classes() {
        let cases = [
            "IT60 X054 2811 1010 0000 0123 456",
            "IT60X0542811101000000123456",
            "DE89 3704 0044 0532 0130 00",
            "GB82 WEST 1234 5698 7654 32",
            "fr14-2004-1010-0505-0001-3m02-606",
            "NL91ABNA0417164300",
            "it60x0542811101000000123456",
            "DE89.3704.0044.0532.0130.00",
        ];
        for value in cases {
            for seed in 0..50u8 {
                let out = derive(&mut SeedRng::from_seed([seed; 32]), value).unwrap_or_default();
                assert!(is_valid(&out), "{value}");
                assert_eq!(out.len(), value.len(), "{value}");
                assert_eq!(&out[..2], &value[..2], "{value}");
                assert_ne!(out, value);
                for (i, (a, b)) in value.chars().zip(out.chars()).enumerate() {
                    if i >= 2 {
                        assert_eq!(a.is_ascii_digit(), b.is_ascii_digit(), "{value} at {i}");
                        assert_eq!(
                            a.is_ascii_uppercase(),
                            b.is_ascii_uppercase(),
                            "{value} at {i}"
                        );
                        assert_eq!(
                            a.is_ascii_lowercase(),
                            b.is_ascii_lowercase(),
                            "{value} at {i}"
                        );
                    }
                    if !a.is_ascii_alphanumeric() {
                        assert_eq!(a, b, "{value} at {i}");
                    }
                }
            }
        }
    }

    #[test]
    fn non_ibans_are_refused() {
        for value in [
            "IT60",
            "1234 5678 9012 3456",
            "ITXX X054 2811 1010 0000 0123 456",
            "IT60_X054_2811_1010_0000_0123_456",
        ] {
            assert_eq!(
                derive(&mut SeedRng::from_seed([1; 32]), value),
                None,
                "{value}"
            );
        }
    }
}
