//! Where a key may start in a text: the start of every word (a word char
//! after a char that is not one) and every char that is neither a word char
//! nor whitespace, each with the end of its first token. Two walks give the
//! same starts: [`for_each_start`] visits them all; [`for_each_start_where`]
//! classes 16 bytes at a step (`simd128` in the filter's `.wasm`, `u64`
//! arithmetic elsewhere) and computes a token's end only for the starts a cheap
//! test keeps (the matchers' pair filter keeps about one in fifteen).

use crate::simd_block::BLOCK;
use crate::text::is_word_char;

/// Calls `visit(start, token_end)` for every place a key may start, left to
/// right: the start of every word, and every char that is neither a word
/// char nor whitespace.
#[inline]
pub(crate) fn for_each_start(text: &str, mut visit: impl FnMut(usize, usize)) {
    let bytes = text.as_bytes();
    let len = bytes.len();
    let mut i = 0;
    while i < len {
        // One table load per ASCII byte instead of a chain of range tests.
        match BYTE_CLASS[bytes[i] as usize] {
            WORD => {
                let end = word_end(text, i + 1);
                visit(i, end);
                i = end;
            }
            SPACE => i += 1,
            OTHER => {
                visit(i, i + 1);
                i += 1;
            }
            _ => {
                let c = text[i..].chars().next().unwrap_or(' ');
                let width = c.len_utf8();
                if is_word_char(c) {
                    let end = word_end(text, i + width);
                    visit(i, end);
                    i = end;
                } else if c.is_whitespace() {
                    i += width;
                } else {
                    visit(i, i + width);
                    i += width;
                }
            }
        }
    }
}

/// An ASCII word byte (`[A-Za-z0-9_]`).
const WORD: u8 = 0;
/// ASCII whitespace as `u8::is_ascii_whitespace` says (not `\x0B`).
const SPACE: u8 = 1;
/// Any other ASCII byte.
const OTHER: u8 = 2;
/// A byte of a multi-byte char.
const NON_ASCII: u8 = 3;

/// The class of every byte value.
const BYTE_CLASS: [u8; 256] = {
    let mut table = [NON_ASCII; 256];
    let mut b = 0;
    while b < 0x80 {
        let byte = b as u8;
        table[b] = if byte.is_ascii_alphanumeric() || byte == b'_' {
            WORD
        } else if byte.is_ascii_whitespace() {
            SPACE
        } else {
            OTHER
        };
        b += 1;
    }
    table
};

/// The end of the word that continues at byte `from`.
#[inline]
fn word_end(text: &str, mut from: usize) -> usize {
    let bytes = text.as_bytes();
    while from < bytes.len() {
        match BYTE_CLASS[bytes[from] as usize] {
            WORD => from += 1,
            NON_ASCII => {
                let c = text[from..].chars().next().unwrap_or(' ');
                if !is_word_char(c) {
                    return from;
                }
                from += c.len_utf8();
            }
            _ => return from,
        }
    }
    from
}

/// The ASCII bytes a key may start with, as a table by low nibble of
/// bits by high nibble: a block's starts on other ASCII bytes are dropped
/// sixteen at once (with `simd128`) before `keep` is asked about each.
#[derive(Clone, Default)]
pub(crate) struct FirstBytes([u8; 16]);

impl FirstBytes {
    /// Lets keys start with `byte` (a non-ASCII byte is always let).
    pub(crate) fn set(&mut self, byte: u8) {
        if byte < 0x80 {
            self.0[usize::from(byte & 15)] |= 1 << (byte >> 4);
        }
    }

    /// Lanes of `block` whose byte is a let ASCII byte (with `simd128`);
    /// every lane elsewhere (`keep` then tests every start).
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    #[inline]
    fn lanes(&self, block: &[u8; BLOCK]) -> u16 {
        use core::arch::wasm32::{
            u8x16, u8x16_bitmask, u8x16_eq, u8x16_shr, u8x16_splat, u8x16_swizzle, v128_and,
            v128_not,
        };
        let v = crate::simd_block::load(block);
        let table = crate::simd_block::load(&self.0);
        // Bit `h` for high nibble `h` below 8; a lane index of 16 or more
        // (high nibble 8 and up: non-ASCII) swizzles to 0.
        let bits = u8x16(1, 2, 4, 8, 16, 32, 64, 128, 0, 0, 0, 0, 0, 0, 0, 0);
        let by_low = u8x16_swizzle(table, v128_and(v, u8x16_splat(15)));
        let by_high = u8x16_swizzle(bits, u8x16_shr(v, 4));
        u8x16_bitmask(v128_not(u8x16_eq(
            v128_and(by_low, by_high),
            u8x16_splat(0),
        )))
    }

    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    #[inline]
    fn lanes(&self, _block: &[u8; BLOCK]) -> u16 {
        u16::MAX
    }
}

/// Calls `visit(start, token_end)`, left to right, for every start
/// [`for_each_start`] visits whose `keep(start)` is true; `keep` sees every
/// start and should be cheap (the token's end is found only for kept ones).
/// `firsts` holds every ASCII byte a kept start may begin with (`keep` is
/// not asked about starts on any other ASCII byte).
#[inline]
pub(crate) fn for_each_start_where(
    text: &str,
    firsts: &FirstBytes,
    keep: impl Fn(usize) -> bool,
    mut visit: impl FnMut(usize, usize),
) {
    let bytes = text.as_bytes();
    let mut i = 0;
    // Whether the char before `i` is a word char (a word char at `i` then
    // continues a word and is no start).
    let mut after_word = false;
    while let Some(block) = bytes.get(i..i + BLOCK) {
        let Ok(block) = <&[u8; BLOCK]>::try_from(block) else {
            break;
        };
        let classes = classify(block);
        // Lanes before the first byte of a multi-byte char are whole ASCII
        // chars; that char and any after it go through the char walk below.
        let ascii = classes.non_ascii.trailing_zeros() as usize;
        let lanes = if ascii == BLOCK {
            u16::MAX
        } else {
            (1u16 << ascii) - 1
        };
        let word = classes.word;
        let continued = (word << 1) | u16::from(after_word);
        let mut starts = ((word & !continued) | classes.other) & lanes & firsts.lanes(block);
        while starts != 0 {
            let lane = starts.trailing_zeros() as usize;
            starts &= starts - 1;
            let start = i + lane;
            if keep(start) {
                let end = if word & (1 << lane) != 0 {
                    word_end(text, start + 1)
                } else {
                    start + 1
                };
                visit(start, end);
            }
        }
        if ascii > 0 {
            after_word = word & (1 << (ascii - 1)) != 0;
            i += ascii;
        }
        while i < bytes.len() && bytes[i] >= 0x80 {
            (i, after_word) = char_step(text, i, after_word, &keep, &mut visit);
        }
    }
    while i < bytes.len() {
        (i, after_word) = char_step(text, i, after_word, &keep, &mut visit);
    }
}

/// The walk one char at a time: visits the char at `i` if it is a kept
/// start; returns where the next char starts and whether this one is a
/// word char.
#[inline]
fn char_step(
    text: &str,
    i: usize,
    after_word: bool,
    keep: &impl Fn(usize) -> bool,
    visit: &mut impl FnMut(usize, usize),
) -> (usize, bool) {
    let (width, class) = match BYTE_CLASS[text.as_bytes()[i] as usize] {
        NON_ASCII => {
            let c = text[i..].chars().next().unwrap_or(' ');
            let class = if is_word_char(c) {
                WORD
            } else if c.is_whitespace() {
                SPACE
            } else {
                OTHER
            };
            (c.len_utf8(), class)
        }
        class => (1, class),
    };
    let next = i + width;
    let start = match class {
        WORD => !after_word,
        SPACE => false,
        _ => true,
    };
    if start && keep(i) {
        let end = if class == WORD {
            word_end(text, next)
        } else {
            next
        };
        visit(i, end);
    }
    (next, class == WORD)
}

/// One bit per byte of a block (bit `n` for byte `n`).
struct BlockClasses {
    /// ASCII word bytes (`[A-Za-z0-9_]`).
    word: u16,
    /// ASCII bytes that are neither word bytes nor whitespace.
    other: u16,
    /// Bytes of multi-byte chars.
    non_ascii: u16,
}

/// The classes of a block's bytes, sixteen at once.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline]
fn classify(block: &[u8; BLOCK]) -> BlockClasses {
    use core::arch::wasm32::{
        u8x16_bitmask, u8x16_eq, u8x16_lt, u8x16_ne, u8x16_splat, u8x16_sub, v128_and, v128_or,
    };
    let v = crate::simd_block::load(block);
    let below = |from: u8, count: u8| u8x16_lt(u8x16_sub(v, u8x16_splat(from)), u8x16_splat(count));
    let digit = below(b'0', 10);
    // `| 0x20` folds upper case onto lower case (and no other ASCII byte
    // into `a..=z`).
    let folded = v128_or(v, u8x16_splat(0x20));
    let letter = u8x16_lt(u8x16_sub(folded, u8x16_splat(b'a')), u8x16_splat(26));
    let word = v128_or(v128_or(digit, letter), u8x16_eq(v, u8x16_splat(b'_')));
    // `\t \n \x0C \r` and the space, as `u8::is_ascii_whitespace` (not `\x0B`).
    let controls = v128_and(below(b'\t', 5), u8x16_ne(v, u8x16_splat(0x0B)));
    let space = v128_or(controls, u8x16_eq(v, u8x16_splat(b' ')));
    let non_ascii = u8x16_bitmask(v);
    let word = u8x16_bitmask(word);
    let space = u8x16_bitmask(space);
    BlockClasses {
        word,
        other: !(word | space | non_ascii),
        non_ascii,
    }
}

/// The classes of a block's bytes, eight at a step in a `u64` (SWAR).
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
#[inline]
fn classify(block: &[u8; BLOCK]) -> BlockClasses {
    let half = |from: usize| {
        let mut word = [0u8; 8];
        word.copy_from_slice(&block[from..from + 8]);
        classify_word(u64::from_le_bytes(word))
    };
    let (low, high) = (half(0), half(8));
    BlockClasses {
        word: low.word | high.word << 8,
        other: low.other | high.other << 8,
        non_ascii: low.non_ascii | high.non_ascii << 8,
    }
}

/// The classes of eight bytes (bits 0..8 of each mask).
///
/// Every test is on the low seven bits of each byte, where adding a constant
/// of at most 0x80 never carries into the next byte: `b + (0x80 - lo)` has
/// its high bit set exactly when `b >= lo`.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
#[inline]
fn classify_word(word: u64) -> BlockClasses {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = ONES * 0x80;
    let low7 = word & !HIGHS;
    // High bit of each byte whose low seven bits are in `lo..hi`.
    let within = |bits: u64, lo: u8, hi: u8| {
        (bits + ONES * u64::from(0x80 - lo)) & !(bits + ONES * u64::from(0x80 - hi)) & HIGHS
    };
    let digit = within(low7, b'0', b'9' + 1);
    // `| 0x20` folds upper case onto lower case (and no other ASCII byte
    // into `a..=z`).
    let letter = within(low7 | (ONES * 0x20), b'a', b'z' + 1);
    let underscore = within(low7, b'_', b'_' + 1);
    // `\t \n \x0C \r` and the space, as `u8::is_ascii_whitespace` (not `\x0B`).
    let controls = within(low7, b'\t', b'\r' + 1) & !within(low7, 0x0B, 0x0C);
    let space = controls | within(low7, b' ', b' ' + 1);
    let non_ascii = word & HIGHS;
    let word_bytes = (digit | letter | underscore) & !non_ascii;
    let space = space & !non_ascii;
    let other = HIGHS & !(word_bytes | space | non_ascii);
    // The high bit of byte `n` to bit `n`.
    let gather = |bits: u64| ((bits >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56) as u16;
    BlockClasses {
        word: gather(word_bytes),
        other: gather(other),
        non_ascii: gather(non_ascii),
    }
}

#[cfg(test)]
pub(super) mod scan_tests {
    use super::{for_each_start, for_each_start_where, FirstBytes};
    use crate::text::is_word_char;

    /// The walk as it was written before the byte-class table: the reference.
    fn reference_starts(text: &str) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let mut chars = text.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if is_word_char(c) {
                let mut end = i + c.len_utf8();
                while let Some(&(j, d)) = chars.peek() {
                    if !is_word_char(d) {
                        break;
                    }
                    end = j + d.len_utf8();
                    chars.next();
                }
                out.push((i, end));
            } else if !(if c.is_ascii() {
                (c as u8).is_ascii_whitespace()
            } else {
                c.is_whitespace()
            }) {
                out.push((i, i + c.len_utf8()));
            }
        }
        out
    }

    fn starts(text: &str) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for_each_start(text, |s, e| out.push((s, e)));
        out
    }

    #[test]
    fn matches_the_char_walk_on_edge_texts() {
        let pieces = [
            "",
            "a",
            "Mario",
            "_x9",
            "+39",
            " ",
            "\t",
            "\x0B",
            "\r\n",
            "José",
            "é",
            "日本語",
            "\u{3000}",
            "\u{a0}",
            "@",
            "-",
            "\"",
            "\\",
            "ß_ß",
            "x\u{0301}",
            "😀",
            "Ω7",
        ];
        for a in pieces {
            for b in pieces {
                for pad in 0..9 {
                    let text = format!("{}{a}{b}{a}", "z".repeat(pad));
                    assert_eq!(starts(&text), reference_starts(&text), "pad {pad}");
                    let text = format!("{}{a} {b}", " ".repeat(pad));
                    assert_eq!(starts(&text), reference_starts(&text), "pad {pad}");
                }
            }
        }
    }

    #[test]
    fn every_ascii_byte_is_classed_as_before() {
        for b in 0u8..0x80 {
            let text = format!("ab{}cd", b as char);
            assert_eq!(starts(&text), reference_starts(&text), "byte {b}");
        }
    }

    /// A small deterministic generator (xorshift64*): the same texts on
    /// every target, wasm32 included.
    pub(crate) struct Xorshift(pub(crate) u64);

    impl Xorshift {
        pub(crate) fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n.max(1)
        }
    }

    /// Pieces that random texts are made of: ASCII words and punctuation,
    /// every ASCII whitespace and `\x0B`, multi-byte letters, marks,
    /// digits, spaces and symbols.
    pub(crate) const PIECES: &[&str] = &[
        "a", "Mario", "x9_", "_", "0", "Z", " ", "  ", "\t", "\n", "\r", "\x0C", "\x0B", "+", "@",
        ".", "-", "\"", "\\", "{", "}", "é", "José", "ß", "日本", "\u{3000}", "\u{a0}", "\u{0301}",
        "😀", "Ω", "٣", "\u{2028}", "\u{7f}", "\u{0}", "`", "[", "~",
    ];

    pub(crate) fn random_text(rng: &mut Xorshift, pieces: usize) -> String {
        (0..pieces)
            .map(|_| PIECES[rng.below(PIECES.len())])
            .collect()
    }

    fn kept_starts(text: &str, keep: impl Fn(usize) -> bool) -> Vec<(usize, usize)> {
        let mut every = FirstBytes::default();
        (0..=u8::MAX).for_each(|b| every.set(b));
        kept_starts_of(text, &every, keep)
    }

    fn kept_starts_of(
        text: &str,
        firsts: &FirstBytes,
        keep: impl Fn(usize) -> bool,
    ) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for_each_start_where(text, firsts, keep, |s, e| out.push((s, e)));
        out
    }

    #[test]
    fn starts_on_bytes_no_key_begins_with_are_left() {
        // Some ASCII bytes of every class let, and every non-ASCII byte:
        // a keep that holds for exactly those (as the pair filter does).
        let mut firsts = FirstBytes::default();
        let let_byte = |b: u8| b >= 0x80 || b.is_multiple_of(3) || b == b'M' || b == b'.';
        (0..=u8::MAX)
            .filter(|b| let_byte(*b))
            .for_each(|b| firsts.set(b));
        let mut rng = Xorshift(0x0dd_ba11_cafe_f00d);
        let mut kept_total = 0;
        for round in 0..4000 {
            let text = random_text(&mut rng, round % 90);
            let bytes = text.as_bytes();
            let keep = |s: usize| let_byte(bytes[s]);
            let kept: Vec<_> = starts(&text)
                .into_iter()
                .filter(|(s, _)| keep(*s))
                .collect();
            kept_total += kept.len();
            assert_eq!(kept_starts_of(&text, &firsts, keep), kept, "round {round}");
        }
        assert!(kept_total > 10_000, "{kept_total}");
    }

    #[test]
    fn the_block_walk_visits_what_the_char_walk_visits() {
        let mut rng = Xorshift(0x9e37_79b9_7f4a_7c15);
        for round in 0..4000 {
            let text = random_text(&mut rng, round % 90);
            let all = starts(&text);
            assert_eq!(kept_starts(&text, |_| true), all, "round {round}");
            // A keep that depends on the bytes, as the pair filter does.
            let bytes = text.as_bytes();
            let keep =
                |s: usize| (bytes[s] ^ bytes.get(s + 1).copied().unwrap_or(0)).is_multiple_of(3);
            let kept: Vec<_> = all.iter().copied().filter(|(s, _)| keep(*s)).collect();
            assert_eq!(kept_starts(&text, keep), kept, "round {round}");
        }
    }

    #[test]
    fn the_block_walk_agrees_at_every_offset_of_a_block() {
        let pieces = ["Mario", "é", "日本", " ", "+", "x\u{0301}", "\x0B", "😀"];
        for a in pieces {
            for b in pieces {
                for pad in 0..40 {
                    for filler in ["z", " ", ".", "é"] {
                        let text = format!("{}{a}{b}", filler.repeat(pad));
                        assert_eq!(kept_starts(&text, |_| true), starts(&text), "pad {pad}");
                        let text = format!("{a}{}{b}{a}", filler.repeat(pad));
                        assert_eq!(kept_starts(&text, |_| true), starts(&text), "pad {pad}");
                    }
                }
            }
        }
    }

    #[test]
    fn the_block_walk_classes_every_byte_as_the_table() {
        for b in 0u8..0x80 {
            for at in 0..20 {
                let text = format!("{}{}{}", "ab".repeat(at), b as char, "cd ".repeat(8));
                assert_eq!(
                    kept_starts(&text, |_| true),
                    starts(&text),
                    "byte {b} at {at}"
                );
            }
        }
    }
}
