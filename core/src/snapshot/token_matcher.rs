//! Finds keys (vault values, or active surrogates) where they are written in a
//! text, on word boundaries, leftmost-longest.
//!
//! Every key is filed under the hash of its first token (a run of word chars,
//! or one other non-space char). A scan walks the text's tokens once; at each
//! place a key may start it hashes the token, asks a bit filter (almost every
//! word of ordinary text stops there), and only then looks candidates up and
//! compares bytes. Memory is 12 bytes a key plus the filter, against the
//! several times the key bytes an automaton holds; the bench in
//! `core/benches` compares it with `aho-corasick`.

use super::entry_store::Slot;
use crate::text::{first_token_len, is_word_char, on_word_boundaries, token_hash};

/// A key found in a text: bytes `start..end`, the entry in `slot`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VaultMatch {
    pub start: usize,
    pub end: usize,
    pub slot: Slot,
}

const FILTER_BITS: u32 = 20; // 128 KiB: ~1% false positives at 100k keys

/// Keys by first-token hash, sorted for binary search, behind a bit filter.
pub(crate) struct TokenMatcher {
    hashes: Vec<u64>,
    slots: Vec<Slot>,
    filter: Vec<u64>,
    max_key_len: usize,
}

impl Default for TokenMatcher {
    fn default() -> Self {
        TokenMatcher {
            hashes: Vec::new(),
            slots: Vec::new(),
            filter: vec![0; 1 << (FILTER_BITS - 6)],
            max_key_len: 0,
        }
    }
}

#[inline]
fn filter_bit(hash: u64) -> (usize, u64) {
    let bit = (hash >> (64 - FILTER_BITS)) as usize;
    (bit >> 6, 1u64 << (bit & 63))
}

/// The hash a key is filed under, or None for a key that can never be found
/// (empty, or starting with whitespace).
fn key_hash(key: &str) -> Option<u64> {
    let len = first_token_len(key);
    (len > 0).then(|| token_hash(&key.as_bytes()[..len]))
}

impl TokenMatcher {
    /// Builds from many keys at once (one sort instead of many inserts).
    pub(crate) fn build<'a>(keys: impl Iterator<Item = (&'a str, Slot)>) -> Self {
        let mut matcher = TokenMatcher::default();
        let mut pairs: Vec<(u64, Slot)> = Vec::new();
        for (key, slot) in keys {
            if let Some(hash) = key_hash(key) {
                pairs.push((hash, slot));
                matcher.note_key(key, hash);
            }
        }
        pairs.sort_unstable();
        matcher.hashes = pairs.iter().map(|p| p.0).collect();
        matcher.slots = pairs.iter().map(|p| p.1).collect();
        matcher
    }

    fn note_key(&mut self, key: &str, hash: u64) {
        let (word, bit) = filter_bit(hash);
        self.filter[word] |= bit;
        self.max_key_len = self.max_key_len.max(key.len());
    }

    pub(crate) fn insert(&mut self, key: &str, slot: Slot) {
        let Some(hash) = key_hash(key) else { return };
        let at = self.hashes.partition_point(|h| *h < hash);
        self.hashes.insert(at, hash);
        self.slots.insert(at, slot);
        self.note_key(key, hash);
    }

    /// Removes a key. Its filter bit stays (a filter bit is shared; a stale
    /// one only costs a lookup).
    pub(crate) fn remove(&mut self, key: &str, slot: Slot) {
        let Some(hash) = key_hash(key) else { return };
        let mut at = self.hashes.partition_point(|h| *h < hash);
        while at < self.hashes.len() && self.hashes[at] == hash {
            if self.slots[at] == slot {
                self.hashes.remove(at);
                self.slots.remove(at);
                return;
            }
            at += 1;
        }
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.hashes.capacity() * 8 + self.slots.capacity() * 4 + self.filter.len() * 8
    }

    #[inline]
    fn candidates(&self, hash: u64) -> &[Slot] {
        let (word, bit) = filter_bit(hash);
        if self.filter[word] & bit == 0 {
            return &[];
        }
        let from = self.hashes.partition_point(|h| *h < hash);
        let to = from + self.hashes[from..].partition_point(|h| *h == hash);
        &self.slots[from..to]
    }

    /// Appends every key found in `text`: word-bounded, leftmost-longest,
    /// non-overlapping. `key_of` gives the key of a slot (None: gone).
    pub(crate) fn find<'k>(
        &self,
        text: &str,
        key_of: impl Fn(Slot) -> Option<&'k str>,
        out: &mut Vec<VaultMatch>,
    ) {
        if self.hashes.is_empty() {
            return;
        }
        let mut pos = 0;
        for_each_start(text, |start, token_end| {
            if start < pos {
                return;
            }
            let hash = token_hash(&text.as_bytes()[start..token_end]);
            let mut best: Option<VaultMatch> = None;
            for &slot in self.candidates(hash) {
                let Some(key) = key_of(slot) else { continue };
                let end = start + key.len();
                if end <= text.len()
                    && best.is_none_or(|b| end > b.end)
                    && text.as_bytes()[start..].starts_with(key.as_bytes())
                    && text.is_char_boundary(end)
                    && on_word_boundaries(text, start, end)
                {
                    best = Some(VaultMatch { start, end, slot });
                }
            }
            if let Some(found) = best {
                out.push(found);
                pos = found.end;
            }
        });
    }

    /// The byte offset from which a stream must hold `text` back because its
    /// tail could still become a key (or a key whose end is not yet known
    /// to be a word boundary); `text.len()` when nothing needs holding.
    /// A trailing partial word is held whole when it is short enough to
    /// start a key (the filter has no prefix structure: we accept holding a
    /// word that turns out not to be one).
    pub(crate) fn holdback<'k>(
        &self,
        text: &str,
        key_of: impl Fn(Slot) -> Option<&'k str>,
    ) -> usize {
        if self.hashes.is_empty() || text.is_empty() {
            return text.len();
        }
        let window_start = text.len().saturating_sub(self.max_key_len);
        let mut held = text.len();
        for_each_start(text, |start, token_end| {
            if held != text.len() || start < window_start {
                return;
            }
            let tail = &text[start..];
            if token_end == text.len() && is_word_char_at(text, start) {
                // An unfinished word: it may be the start of a key's first token.
                held = start;
                return;
            }
            let hash = token_hash(&text.as_bytes()[start..token_end]);
            for &slot in self.candidates(hash) {
                let Some(key) = key_of(slot) else { continue };
                let extends = key.len() > tail.len() && key.as_bytes().starts_with(tail.as_bytes());
                let open_end = key == tail && key.chars().next_back().is_some_and(is_word_char);
                if extends || open_end {
                    held = start;
                    return;
                }
            }
        });
        held
    }

    /// The longest key length (bounds how far back a stream can be held).
    pub(crate) fn max_key_len(&self) -> usize {
        self.max_key_len
    }
}

fn is_word_char_at(text: &str, pos: usize) -> bool {
    text[pos..].chars().next().is_some_and(is_word_char)
}

/// Calls `visit(start, token_end)` for every place a key may start, left to
/// right: the start of every word, and every char that is neither a word
/// char nor whitespace.
#[inline]
pub(crate) fn for_each_start(text: &str, mut visit: impl FnMut(usize, usize)) {
    let bytes = text.as_bytes();
    let len = bytes.len();
    let mut i = 0;
    while i < len {
        let b = bytes[i];
        if b < 0x80 {
            if is_ascii_word(b) {
                let end = word_end(text, i + 1);
                visit(i, end);
                i = end;
            } else if b.is_ascii_whitespace() {
                i += 1;
            } else {
                visit(i, i + 1);
                i += 1;
            }
        } else {
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

#[inline]
fn is_ascii_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The end of the word that continues at byte `from`.
#[inline]
fn word_end(text: &str, mut from: usize) -> usize {
    let bytes = text.as_bytes();
    while from < bytes.len() {
        let b = bytes[from];
        if b < 0x80 {
            if !is_ascii_word(b) {
                return from;
            }
            from += 1;
        } else {
            let c = text[from..].chars().next().unwrap_or(' ');
            if !is_word_char(c) {
                return from;
            }
            from += c.len_utf8();
        }
    }
    from
}
