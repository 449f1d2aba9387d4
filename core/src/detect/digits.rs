//! A word-at-a-time search for ASCII digits: the prefilter of the numeric
//! detectors (phone, card, IBAN, IPv4), which only look where a digit is.

const LANES: usize = 8;
const ONES: u64 = u64::from_ne_bytes([0x01; LANES]);
const HIGHS: u64 = u64::from_ne_bytes([0x80; LANES]);
const ZEROS: u64 = u64::from_ne_bytes([b'0'; LANES]);

/// The position of the first ASCII digit in `bytes` at or after `from`.
#[inline]
pub(super) fn next_digit(bytes: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while i + LANES <= bytes.len() {
        let mut word = [0u8; LANES];
        word.copy_from_slice(&bytes[i..i + LANES]);
        if may_hold_digit(u64::from_ne_bytes(word)) {
            break;
        }
        i += LANES;
    }
    while i < bytes.len() {
        if bytes[i].is_ascii_digit() {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// True when some byte of `word` may be an ASCII digit (never false for a
/// word that holds one: the byte-wise check after it decides).
#[inline]
fn may_hold_digit(word: u64) -> bool {
    // Digits become 0..=9 after the xor; "has a byte below 10" (exact as a
    // whole-word test, the classic has-less trick).
    let x = word ^ ZEROS;
    x.wrapping_sub(ONES.wrapping_mul(10)) & !x & HIGHS != 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn finds_the_first_digit(bytes in proptest::collection::vec(any::<u8>(), 0..64), from in 0usize..70) {
            let expected = bytes.iter().enumerate().skip(from).find(|(_, b)| b.is_ascii_digit()).map(|(i, _)| i);
            prop_assert_eq!(next_digit(&bytes, from), expected);
        }
    }
}
