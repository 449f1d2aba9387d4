//! What the text between a word and the one before it says (a sentence's
//! or a line's end, a colon, a comma, an `&`): read once, a byte at a step
//! when it is ASCII (nearly always: a space or two), with the general
//! reading, over chars, kept for the rest and for the tests.

/// What `between` (the text from the word before, or its dot, to a word)
/// holds; the fields of [`super::Word`] read from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Between {
    /// A `.`, `!`, `?`, `:`, line break, `•`, `¿` or `¡`: a sentence starts.
    pub(super) stop: bool,
    /// Its last char but spaces is a `:`.
    pub(super) after_colon: bool,
    /// Its last char but spaces is a `,`.
    pub(super) after_comma: bool,
    /// Not empty, and only spaces, commas and dashes.
    pub(super) soft: bool,
    /// Holds a `\n`.
    pub(super) newline: bool,
    /// Holds an `&`.
    pub(super) amp: bool,
}

impl Between {
    pub(super) fn of(between: &str) -> Self {
        if between.is_ascii() {
            Self::of_ascii(between.as_bytes())
        } else {
            Self::of_chars(between)
        }
    }

    /// [`Self::of`] over chars (any text).
    pub(super) fn of_chars(between: &str) -> Self {
        let trimmed = between.trim_end();
        Between {
            stop: between
                .bytes()
                .any(|b| matches!(b, b'.' | b'!' | b'?' | b':' | b'\n'))
                || (!between.is_ascii() && between.contains(['•', '¿', '¡'])),
            after_colon: trimmed.ends_with(':'),
            after_comma: trimmed.ends_with(','),
            soft: !between.is_empty()
                && between
                    .chars()
                    .all(|c| c.is_whitespace() || matches!(c, ',' | '-' | '–' | '—')),
            newline: between.contains('\n'),
            amp: between.contains('&'),
        }
    }

    /// [`Self::of`] over ASCII bytes in one pass.
    fn of_ascii(between: &[u8]) -> Self {
        let mut facts = Between {
            stop: false,
            after_colon: false,
            after_comma: false,
            soft: !between.is_empty(),
            newline: false,
            amp: false,
        };
        // The last byte that is not a space (as `char::is_whitespace`
        // reads ASCII: 0x09–0x0d and the space).
        let mut last = None;
        for &b in between {
            let space = matches!(b, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ');
            facts.stop |= matches!(b, b'.' | b'!' | b'?' | b':' | b'\n');
            facts.soft &= space || matches!(b, b',' | b'-');
            facts.newline |= b == b'\n';
            facts.amp |= b == b'&';
            if !space {
                last = Some(b);
            }
        }
        facts.after_colon = last == Some(b':');
        facts.after_comma = last == Some(b',');
        facts
    }
}

/// The length of `text[..at]` without the chars that are no letters at
/// its end (`text[..at].trim_end_matches(|c| !c.is_alphabetic())`), a
/// byte at a step over ASCII.
pub(super) fn head_len(text: &str, at: usize) -> usize {
    let bytes = text.as_bytes();
    let mut i = at;
    while i > 0 {
        let b = bytes[i - 1];
        if !b.is_ascii() {
            return head_len_chars(&text[..i]);
        }
        if b.is_ascii_alphabetic() {
            return i;
        }
        i -= 1;
    }
    0
}

/// [`head_len`] over chars.
pub(super) fn head_len_chars(text: &str) -> usize {
    text.trim_end_matches(|c: char| !c.is_alphabetic()).len()
}
