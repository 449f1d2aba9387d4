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

/// One group of digits in a written number (`612`, `(415)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Group {
    /// Byte offset of the first digit.
    pub start: usize,
    /// Byte offset just past the last digit.
    pub end: usize,
    /// The separator before the group: 0 for the first group, `)` for a
    /// group glued to a closing parenthesis (`(0)30`).
    pub sep: u8,
    /// True when the group is written in parentheses (`(415)`).
    pub paren: bool,
}

impl Group {
    /// Number of digits in the group.
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    /// Where the written group ends (past a closing parenthesis).
    pub fn written_end(&self) -> usize {
        self.end + usize::from(self.paren)
    }
}

/// The most groups a written number is read into; longer runs are cut
/// (and then fail every layout).
pub(super) const MAX_GROUPS: usize = 8;

/// A run of digit groups joined by single separators, read from a digit
/// (or an opening parenthesis before one).
#[derive(Debug, Default)]
pub(super) struct GroupRun {
    groups: [Option<Group>; MAX_GROUPS],
    count: usize,
}

impl GroupRun {
    /// Reads into `self` (reusing its room) the groups starting at `start`
    /// (a digit, or `(` when `parens`). `seps` are the separators allowed
    /// between groups; each must be followed by a digit (or a `(` and a
    /// digit, when `parens`).
    pub(super) fn read_into(&mut self, bytes: &[u8], start: usize, seps: &[u8], parens: bool) {
        let run = self;
        run.count = 0;
        let mut pos = start;
        let mut sep = 0u8;
        while run.count < MAX_GROUPS {
            let paren = parens && bytes.get(pos) == Some(&b'(');
            let digits_start = pos + usize::from(paren);
            let mut end = digits_start;
            while bytes.get(end).is_some_and(u8::is_ascii_digit) {
                end += 1;
            }
            if end == digits_start || (paren && bytes.get(end) != Some(&b')')) {
                break;
            }
            run.groups[run.count] = Some(Group {
                start: digits_start,
                end,
                sep,
                paren,
            });
            run.count += 1;
            let after = end + usize::from(paren);
            let starts_group = |at: usize| {
                bytes.get(at).is_some_and(u8::is_ascii_digit)
                    || (parens
                        && bytes.get(at) == Some(&b'(')
                        && bytes.get(at + 1).is_some_and(u8::is_ascii_digit))
            };
            match bytes.get(after) {
                Some(&b) if seps.contains(&b) && starts_group(after + 1) => {
                    sep = b;
                    pos = after + 1;
                }
                Some(b) if paren && b.is_ascii_digit() => {
                    sep = b')';
                    pos = after;
                }
                _ => break,
            }
        }
    }

    /// The groups read.
    pub(super) fn groups(&self) -> impl Iterator<Item = Group> + '_ {
        self.groups[..self.count].iter().flatten().copied()
    }

    /// Number of groups read.
    pub(super) fn len(&self) -> usize {
        self.count
    }

    /// The group at `index`.
    pub(super) fn get(&self, index: usize) -> Option<Group> {
        self.groups.get(index).copied().flatten()
    }

    /// Where the run ends as written.
    pub(super) fn written_end(&self) -> usize {
        self.count
            .checked_sub(1)
            .and_then(|last| self.get(last))
            .map_or(0, |g| g.written_end())
    }
}

/// The end of the run of digits starting at `from`.
#[inline]
pub(super) fn digits_end(bytes: &[u8], from: usize) -> usize {
    from + bytes.get(from..).map_or(0, |tail| {
        tail.iter().take_while(|b| b.is_ascii_digit()).count()
    })
}

/// True when groups `0..=last` of `run` may be read as a number of their
/// own: they are the whole run, or one short group (at most 4 digits) after
/// a space follows them (`612 345 678 2 veces`). A longer tail means the
/// groups are part of some longer number (`0049 1500 05 1234567890`).
pub(super) fn shorter_reading_allowed(run: &GroupRun, last: usize) -> bool {
    match run.len().checked_sub(last + 1) {
        Some(0) => true,
        Some(1) => run
            .get(last + 1)
            .is_some_and(|tail| tail.sep == b' ' && !tail.paren && tail.len() <= 4),
        _ => false,
    }
}

/// True when a number starting at `start` continues a number before it
/// (`1.612…`, `5-612…`): the byte before is a number punctuation mark and
/// the one before that a digit.
pub(super) fn continues_number_before(bytes: &[u8], start: usize) -> bool {
    start >= 2
        && matches!(bytes[start - 1], b'.' | b',' | b'-' | b'/' | b'+' | b':')
        && bytes[start - 2].is_ascii_digit()
}

/// True when a number ending at `end` continues into a number after it
/// (`…678.5`, `…678,90`).
pub(super) fn continues_number_after(bytes: &[u8], end: usize) -> bool {
    matches!(bytes.get(end), Some(b'.' | b',' | b'-' | b'/' | b':'))
        && bytes.get(end + 1).is_some_and(u8::is_ascii_digit)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
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
