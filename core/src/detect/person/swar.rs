//! Eight bytes at a step: the tests that let most of a text go unread.

/// The eight bytes at `at` as a little-endian word, zeros past the end.
pub(super) fn load_block(bytes: &[u8], at: usize) -> u64 {
    match bytes.get(at..at + 8) {
        Some(&[a, b, c, d, e, f, g, h]) => u64::from_le_bytes([a, b, c, d, e, f, g, h]),
        _ => load_short(bytes.get(at..).unwrap_or_default()),
    }
}

/// The first bytes of `bytes` (up to eight) as a little-endian word, zeros
/// after them: [`load_block`] of a short slice, from two overlapping
/// loads instead of a copy (a `memcpy` call, per word read, in a profile).
pub(super) fn load_short(bytes: &[u8]) -> u64 {
    let n = bytes.len().min(8);
    match (
        bytes.get(..4),
        n.checked_sub(4).and_then(|k| bytes.get(k..n)),
    ) {
        (Some(&[a, b, c, d]), Some(&[e, f, g, h])) => {
            // Bytes 0..4 and n-4..n: where they overlap they agree.
            let low = u64::from(u32::from_le_bytes([a, b, c, d]));
            let high = u64::from(u32::from_le_bytes([e, f, g, h]));
            low | (high << (8 * (n - 4)))
        }
        _ => {
            // One to three bytes (none: zero): first, middle and last.
            let at = |k: usize| bytes.get(k).map_or(0, |&b| u64::from(b));
            if n == 0 {
                return 0;
            }
            at(0) | (at(n / 2) << (8 * (n / 2))) | (at(n - 1) << (8 * (n - 1)))
        }
    }
}

/// The high bit of every zero byte of `x` (and maybe of a byte above one:
/// the caller checks each hit).
pub(super) fn zero_bytes(x: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    x.wrapping_sub(ONES) & !x & HIGH
}

/// Whether one of the eight bytes of `x` is an ASCII capital or not ASCII
/// (a char with a diacritic may be a capital). SWAR: for bytes below 0x80,
/// `b + (0x80 - 'A')` sets the high bit when `b >= 'A'` and
/// `b + (0x80 - 'Z' - 1)` when `b > 'Z'`.
pub(super) fn may_hold_capital(x: u64) -> bool {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const ONES: u64 = 0x0101_0101_0101_0101;
    let low = x & LOW7;
    let at_least_a = low.wrapping_add(ONES * u64::from(0x80 - b'A'));
    let above_z = low.wrapping_add(ONES * u64::from(0x80 - b'Z' - 1));
    let capital = at_least_a & !above_z & HIGH;
    (capital | x) & HIGH != 0
}

/// The bytes of `x` in ASCII lower case (`A`–`Z` + 0x20), when all are
/// ASCII: the same SWAR test as [`may_hold_capital`], its high bits
/// shifted onto each capital's 0x20 bit.
pub(super) fn ascii_lowercase(x: u64) -> u64 {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const ONES: u64 = 0x0101_0101_0101_0101;
    let at_least_a = x.wrapping_add(ONES * u64::from(0x80 - b'A'));
    let above_z = x.wrapping_add(ONES * u64::from(0x80 - b'Z' - 1));
    x | (at_least_a & !above_z & HIGH) >> 2
}

/// The end of the run of ASCII letters that starts at `at` (`at` itself
/// when none does): eight bytes at a step, the words a window reads.
pub(super) fn ascii_letters_end(bytes: &[u8], mut at: usize) -> usize {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    while let Some(&[a, b, c, d, e, f, g, h]) = bytes.get(at..at.saturating_add(8)) {
        let x = u64::from_le_bytes([a, b, c, d, e, f, g, h]);
        let not_letters = !ascii_letters(x) & HIGH;
        if not_letters != 0 {
            return at + (not_letters.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    while bytes.get(at).is_some_and(u8::is_ascii_alphabetic) {
        at += 1;
    }
    at
}

/// The high bit of every byte of `x` that is an ASCII letter: with the
/// 0x20 bit set (lower case) it lies in `a`..=`z`, tested as in
/// [`may_hold_capital`]; a byte of 0x80 or more is none.
fn ascii_letters(x: u64) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const ONES: u64 = 0x0101_0101_0101_0101;
    let low = (x | (ONES * 0x20)) & LOW7;
    let at_least_a = low.wrapping_add(ONES * u64::from(0x80 - b'a'));
    let above_z = low.wrapping_add(ONES * u64::from(0x80 - b'z' - 1));
    at_least_a & !above_z & !x & HIGH
}
