//! Word boundaries: a value is found only where it stands as written, not
//! inside a longer word (`Ana` is not in `Banana`).

/// A word character: Unicode alphanumeric or `_`.
#[inline]
pub fn is_word_char(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// The char that ends just before byte `pos` of `text`.
#[inline]
pub fn char_before(text: &str, pos: usize) -> Option<char> {
    text.get(..pos).and_then(|head| head.chars().next_back())
}

/// The char that starts at byte `pos` of `text`.
#[inline]
pub fn char_at(text: &str, pos: usize) -> Option<char> {
    text.get(pos..).and_then(|tail| tail.chars().next())
}

/// True when `text[start..end]` does not cut a word: if it starts with a
/// word char, the char before is not one; if it ends with a word char, the
/// char after is not one. `start..end` must be on char boundaries.
pub fn on_word_boundaries(text: &str, start: usize, end: usize) -> bool {
    if start >= end || end > text.len() {
        return false;
    }
    let first = char_at(text, start);
    let last = char_before(text, end);
    let (Some(first), Some(last)) = (first, last) else {
        return false;
    };
    if is_word_char(first) && char_before(text, start).is_some_and(is_word_char) {
        return false;
    }
    if is_word_char(last) && char_at(text, end).is_some_and(is_word_char) {
        return false;
    }
    true
}

/// A char of a script written without spaces between words (CJK
/// ideographs, kana, Hangul, Thai, Lao, Khmer, Myanmar). Such chars are word
/// chars, but a value glued to one still stands apart: `联系mario@example.org谢谢`
/// holds an address. Only the detectors' boundary ([`on_value_boundaries`])
/// uses this; [`on_word_boundaries`] and the tokens of the vault matchers
/// are unchanged (their hashes are shared with the control service).
#[inline]
pub fn is_unspaced_script_char(c: char) -> bool {
    matches!(c as u32,
        0x0E00..=0x0EFF            // Thai, Lao
        | 0x1000..=0x109F          // Myanmar
        | 0x1780..=0x17FF          // Khmer
        | 0x1100..=0x11FF          // Hangul jamo
        | 0x2E80..=0x2FDF          // CJK radicals, Kangxi radicals
        | 0x3005..=0x3007          // 々 〆 〇
        | 0x3021..=0x3029          // Hangzhou numerals
        | 0x3031..=0x303C          // kana repeat marks
        | 0x3040..=0x31FF          // Hiragana, Katakana, Bopomofo, Hangul compatibility jamo
        | 0x3400..=0x4DBF          // CJK extension A
        | 0x4E00..=0x9FFF          // CJK unified ideographs
        | 0xA960..=0xA97F          // Hangul jamo extended-A
        | 0xAC00..=0xD7FF          // Hangul syllables, jamo extended-B
        | 0xF900..=0xFAFF          // CJK compatibility ideographs
        | 0xFF66..=0xFFDC          // half-width Katakana and Hangul
        | 0x20000..=0x3FFFF        // CJK extensions B and later
    )
}

/// True when `a` followed by `b` is one word to a detector: both are word
/// chars, neither or both are of a script written without spaces
/// ([`is_unspaced_script_char`]), and, when `underscore_separates`, neither
/// is `_`.
#[inline]
pub fn joins(a: char, b: char, underscore_separates: bool) -> bool {
    is_word_char(a)
        && is_word_char(b)
        && is_unspaced_script_char(a) == is_unspaced_script_char(b)
        && !(underscore_separates && (a == '_' || b == '_'))
}

/// True when the char before byte `pos` of `text` would glue a number
/// starting at `pos` to a word: it is a word char of a spaced script, and
/// not `_` (`tel_+393471234567`, `card_4111111111111111` hold values). The
/// numeric detectors refuse even `x+39…`, which [`on_word_boundaries`]
/// allows.
#[inline]
pub fn glued_before_number(text: &str, pos: usize) -> bool {
    char_before(text, pos)
        .is_some_and(|c| c != '_' && is_word_char(c) && !is_unspaced_script_char(c))
}

/// The detectors' boundary: [`on_word_boundaries`] where a word char of a
/// script written without spaces (CJK, kana, Hangul, Thai, …) next to one
/// of another script is a boundary, and, when `underscore_separates` (the
/// numeric kinds: phone, card, IBAN), so is `_` (`card_4111111111111111`).
/// An e-mail's local part may hold `_`, so e-mails and secrets pass
/// `false`: `user_mario@example.org` is one address. Every built-in
/// finding stands on these boundaries; they are never stricter than
/// [`on_word_boundaries`].
pub fn on_value_boundaries(
    text: &str,
    start: usize,
    end: usize,
    underscore_separates: bool,
) -> bool {
    if start >= end || end > text.len() {
        return false;
    }
    let (Some(first), Some(last)) = (char_at(text, start), char_before(text, end)) else {
        return false;
    };
    if char_before(text, start).is_some_and(|c| joins(c, first, underscore_separates)) {
        return false;
    }
    if char_at(text, end).is_some_and(|c| joins(last, c, underscore_separates)) {
        return false;
    }
    true
}

/// Where a token starts and how it is hashed: the vault matchers look values
/// and surrogates up by the hash of their first token. A token is a maximal
/// run of word chars, or one single other char that is not whitespace.
/// Returns the byte length of the first token of `s` (0 when `s` is empty or
/// starts with whitespace).
pub fn first_token_len(s: &str) -> usize {
    let mut chars = s.char_indices();
    let Some((_, first)) = chars.next() else {
        return 0;
    };
    if first.is_whitespace() {
        return 0;
    }
    if !is_word_char(first) {
        return first.len_utf8();
    }
    for (i, c) in chars {
        if !is_word_char(c) {
            return i;
        }
    }
    s.len()
}

/// A fast, non-cryptographic 64-bit hash of a token's bytes (FxHash-style).
/// Stable across builds and targets: the control service computes
/// [`lead_bucket`]s with it.
#[inline]
pub fn token_hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h: u64 = bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(K);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut word = [0u8; 8];
        word[..rest.len()].copy_from_slice(rest);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(K);
    }
    // Final avalanche so that the high bits depend on every byte.
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h
}

/// The 24-bit bucket of a retired surrogate's first token: sent beside the
/// retired hash so a gateway can find retired-surrogate candidates in a text
/// without a keyed hash at every position. 24 bits of a fake value's first
/// word reveal nothing of a person.
pub fn lead_bucket(surrogate: &str) -> u32 {
    let len = first_token_len(surrogate);
    (token_hash(&surrogate.as_bytes()[..len]) >> 40) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_tokens() {
        assert_eq!(first_token_len("Mario Rossi"), 5);
        assert_eq!(first_token_len("mario.rossi@acme.it"), 5);
        assert_eq!(first_token_len("+39 347"), 1);
        assert_eq!(first_token_len("José"), 5);
        assert_eq!(first_token_len(" x"), 0);
        assert_eq!(first_token_len(""), 0);
        assert_ne!(token_hash(b"Mario"), token_hash(b"Mari"));
        assert!(lead_bucket("laura.bianchi@x.it") < (1 << 24));
    }

    #[test]
    fn value_boundaries_table() {
        // (text, start, end, underscore separates, expected)
        let cases = [
            ("联系mario@example.org谢谢", 6, 23, false, true), // glued to CJK
            ("联系mario@example.org谢谢", 3, 23, false, false), // cuts 联系
            ("電話+81 3 1234 5678です", 6, 21, true, true),
            ("메일mario@x.kr로", 6, 16, false, true), // Hangul particle
            ("card_4111111111111111", 5, 21, true, true),
            ("card_4111111111111111", 5, 21, false, false),
            ("4111111111111111_x", 0, 16, true, true),
            ("user_mario@x.org", 5, 16, false, false), // one address
            ("Banana", 3, 6, true, false),
            ("Josés", 0, 5, true, false),
            ("éAna", 2, 5, true, false),
            ("x Ana_b", 2, 5, false, false),
        ];
        for (text, start, end, underscore, expected) in cases {
            assert_eq!(
                on_value_boundaries(text, start, end, underscore),
                expected,
                "{text:?} {start}..{end}"
            );
            // Never stricter than the word boundaries.
            if on_word_boundaries(text, start, end) {
                assert!(on_value_boundaries(text, start, end, underscore));
            }
        }
        assert!(glued_before_number("x+39", 1));
        assert!(!glued_before_number("tel_+39", 4));
        assert!(!glued_before_number("电话+86", 6));
        assert!(!glued_before_number("+86", 0));
    }

    #[test]
    fn boundaries_table() {
        let cases = [
            ("Banana", 3, 6, false),      // "ana" inside a word
            ("Ana Banana", 0, 3, true),   // "Ana" at the start
            ("x Ana.", 2, 5, true),       // before a full stop
            ("x Ana_b", 2, 5, false),     // '_' is a word char
            ("tel +39 347", 4, 11, true), // starts with '+'
            ("a+39 347", 1, 8, true),     // '+' needs no boundary before it
            ("José Ruiz", 0, 5, true),    // non-ASCII last char
            ("Josés", 0, 5, false),       // followed by a letter
            ("éAna", 2, 5, false),        // preceded by a non-ASCII letter
        ];
        for (text, start, end, expected) in cases {
            assert_eq!(
                on_word_boundaries(text, start, end),
                expected,
                "{text:?} {start}..{end}"
            );
        }
    }
}
