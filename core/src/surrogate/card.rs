//! Payment-card surrogates: the same length, separators and brand digits,
//! a valid Luhn check digit.

use super::rng::SeedRng;

/// Leading digits kept: the brand (4 Visa, 5x Mastercard, 34/37 Amex, 6x…),
/// never the issuer's full IIN.
const BRAND_DIGITS: usize = 2;

/// The surrogate of a card number; None when it holds fewer than 8 digits.
pub fn derive(rng: &mut SeedRng, value: &str) -> Option<String> {
    let digits: Vec<u32> = value.chars().filter_map(|c| c.to_digit(10)).collect();
    if digits.len() < 8 {
        return None;
    }
    let mut new: Vec<u32> = Vec::with_capacity(digits.len());
    new.extend(digits.iter().take(BRAND_DIGITS));
    while new.len() < digits.len() - 1 {
        new.push(rng.below(10) as u32);
    }
    new.push(luhn_check_digit(&new));
    let mut next = new.into_iter();
    Some(
        value
            .chars()
            .map(|c| {
                if c.is_ascii_digit() {
                    next.next()
                        .and_then(|d| char::from_digit(d, 10))
                        .unwrap_or(c)
                } else {
                    c
                }
            })
            .collect(),
    )
}

/// The digit that makes `payload` followed by it pass the Luhn check.
fn luhn_check_digit(payload: &[u32]) -> u32 {
    // Walking from the right, the payload's last digit is doubled.
    let sum: u32 = payload
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| if i % 2 == 0 { double(d) } else { d })
        .sum();
    (10 - sum % 10) % 10
}

fn double(d: u32) -> u32 {
    let x = d * 2;
    if x > 9 {
        x - 9
    } else {
        x
    }
}

/// True when the digits of `number` pass the Luhn check.
#[cfg(test)]
pub fn is_luhn_valid(number: &str) -> bool {
    let digits: Vec<u32> = number.chars().filter_map(|c| c.to_digit(10)).collect();
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| if i % 2 == 1 { double(d) } else { d })
        .sum();
    !digits.is_empty() && sum.is_multiple_of(10)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_numbers_pass_luhn() {
        for number in [
            "4111 1111 1111 1111",
            "5555-5555-5555-4444",
            "378282246310005",
            "6011111111111117",
        ] {
            assert!(is_luhn_valid(number), "{number}");
        }
        assert!(!is_luhn_valid("4111 1111 1111 1112"));
    }

    #[test]
    fn surrogates_keep_length_separators_brand_and_pass_luhn() {
        let cases = [
            "4111 1111 1111 1111",
            "5555-5555-5555-4444",
            "378282246310005",
            "3782 822463 10005",
            "6011111111111117",
            "4000 0000 0000 0002 123",
        ];
        for value in cases {
            for seed in 0..50u8 {
                let out = derive(&mut SeedRng::from_seed([seed; 32]), value).unwrap_or_default();
                assert!(is_luhn_valid(&out), "{value}");
                assert_eq!(out.len(), value.len());
                assert_eq!(&out[..2], &value[..2]);
                for (a, b) in value.chars().zip(out.chars()) {
                    assert_eq!(a.is_ascii_digit(), b.is_ascii_digit());
                    if !a.is_ascii_digit() {
                        assert_eq!(a, b);
                    }
                }
            }
        }
        assert_eq!(derive(&mut SeedRng::from_seed([1; 32]), "1234"), None);
    }
}
