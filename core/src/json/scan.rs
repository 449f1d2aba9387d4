//! Finding the next byte of a JSON string body that needs attention — a
//! quote, a backslash or a control character (< 0x20) — sixteen bytes per
//! step with `simd128` (the filter's `.wasm`), else eight (SWAR: plain `u64`
//! arithmetic, fast in wasm without SIMD too).
//!
//! Parsing, decoding and encoding strings all stop at exactly these bytes;
//! everything else (ASCII text and UTF-8 multi-byte sequences, whose bytes
//! are all ≥ 0x80) is skipped in bulk.

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// A word with the high bit set in (at least) the lowest byte of `word`
/// that is a quote, a backslash or below 0x20; zero when there is none.
///
/// Each test is the classic "has a zero byte" trick: it can flag a byte
/// above a true hit (the borrow of the subtraction runs upward), never one
/// below it, so the lowest flagged byte of the union is always a true hit.
#[inline(always)]
fn special_mask(word: u64) -> u64 {
    let quote = word ^ (ONES * u64::from(b'"'));
    let backslash = word ^ (ONES * u64::from(b'\\'));
    let has_zero = |x: u64| x.wrapping_sub(ONES) & !x;
    // Bytes below 0x20: subtracting 0x20 borrows into the high bit.
    let control = word.wrapping_sub(ONES * 0x20) & !word;
    (has_zero(quote) | has_zero(backslash) | control) & HIGHS
}

/// Whether `b` is a byte [`find_special`] stops at.
#[inline(always)]
pub(crate) fn is_special(b: u8) -> bool {
    b == b'"' || b == b'\\' || b < 0x20
}

/// The offset of the first quote, backslash or control byte in
/// `bytes[from..]`, or `bytes.len()` when there is none.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
#[inline]
pub(crate) fn find_special(bytes: &[u8], from: usize) -> usize {
    find_special_by_words(bytes, from)
}

/// [`find_special`] sixteen bytes at a step with `simd128` (the filter's
/// `.wasm`), then eight at a step for the tail.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline]
pub(crate) fn find_special(bytes: &[u8], from: usize) -> usize {
    use crate::simd_block::{load, BLOCK};
    use core::arch::wasm32::{u8x16_bitmask, u8x16_eq, u8x16_lt, u8x16_splat, v128_or};
    let mut pos = from;
    while let Some(block) = bytes.get(pos..pos + BLOCK) {
        let Ok(block) = <&[u8; BLOCK]>::try_from(block) else {
            break;
        };
        let v = load(block);
        let quote = u8x16_eq(v, u8x16_splat(b'"'));
        let backslash = u8x16_eq(v, u8x16_splat(b'\\'));
        let control = u8x16_lt(v, u8x16_splat(0x20));
        let mask = u8x16_bitmask(v128_or(v128_or(quote, backslash), control));
        if mask != 0 {
            return pos + mask.trailing_zeros() as usize;
        }
        pos += BLOCK;
    }
    find_special_by_words(bytes, pos)
}

/// [`find_special`] eight bytes at a step (SWAR).
#[inline]
fn find_special_by_words(bytes: &[u8], from: usize) -> usize {
    let mut pos = from;
    while let Some(chunk) = bytes.get(pos..pos + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let mask = special_mask(u64::from_le_bytes(word));
        if mask != 0 {
            return pos + (mask.trailing_zeros() / 8) as usize;
        }
        pos += 8;
    }
    while let Some(&b) = bytes.get(pos) {
        if is_special(b) {
            return pos;
        }
        pos += 1;
    }
    bytes.len()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn find_slow(bytes: &[u8], from: usize) -> usize {
        (from..bytes.len())
            .find(|&i| is_special(bytes[i]))
            .unwrap_or(bytes.len())
    }

    #[test]
    fn every_byte_value_at_every_offset_of_a_block() {
        // Each byte value, placed at every offset of a 40-byte plain run
        // (so across 8- and 16-byte edges), searched from every start before it.
        for b in 0..=255u8 {
            for at in 0..40 {
                let mut bytes = vec![b'a'; 40];
                bytes[at] = b;
                for from in 0..=at {
                    let expected = if is_special(b) { at } else { 40 };
                    assert_eq!(
                        find_special(&bytes, from),
                        expected,
                        "byte {b} at {at} from {from}"
                    );
                }
            }
        }
    }

    #[test]
    fn first_of_several_specials_wins() {
        // A true hit followed by bytes that the borrow could flag falsely.
        let cases: &[&[u8]] = &[
            b"ab\x00\x01\"\\cdefgh",
            b"abcdefg\x1f ! #[]",
            b"\"\"\"\"\"\"\"\"\"",
            "é😀\u{7f}ü\"".as_bytes(),
            b"\x20\x21\x5b\x5d\x5c\x22",
            b"\x80\xff\xfe\xc3\xa9\x1f",
        ];
        for bytes in cases {
            for from in 0..=bytes.len() {
                assert_eq!(
                    find_special(bytes, from),
                    find_slow(bytes, from),
                    "{bytes:?} from {from}"
                );
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn agrees_with_a_byte_loop(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..80), from in 0usize..80) {
            let from = from.min(bytes.len());
            proptest::prop_assert_eq!(find_special(&bytes, from), find_slow(&bytes, from));
        }

        #[test]
        fn agrees_on_mostly_plain_text(s in "[a-z é😀\"\\\\\\x00-\\x1f]{0,64}") {
            let bytes = s.as_bytes();
            for from in 0..=bytes.len() {
                proptest::prop_assert_eq!(find_special(bytes, from), find_slow(bytes, from));
            }
        }
    }
}
