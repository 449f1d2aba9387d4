//! Finds keys (vault values, or active surrogates) where they are written in a
//! text, on word boundaries, leftmost-longest.
//!
//! A key is filed under the hash of its first `ANCHOR` bytes, or, when it is
//! shorter, of its first token (a run of word chars, or one other non-space
//! char). A scan walks the text's tokens once; at each place a key may start
//! it hashes the token and the anchor, asks a bit filter (almost every word
//! of ordinary text stops there), and only then looks candidates up and
//! compares bytes. Memory is 12 bytes a key plus fixed filters, against the
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

/// Keys of at least this many bytes are filed under the hash of their first
/// `ANCHOR` bytes; shorter ones under the hash of their first token. A first
/// token alone is too common a lead in a large vault (every Italian mobile
/// number starts with `+`, thousands of names with `Mario`): the anchor
/// keeps buckets small.
const ANCHOR: usize = 12;
const FILTER_BITS: u32 = 20; // 128 KiB each: ~10% false positives at 100k keys

/// Hashes sorted for binary search, with the slots filed under them, behind
/// a bit filter that answers "surely not here" for most lookups.
struct Buckets {
    hashes: Vec<u64>,
    slots: Vec<Slot>,
    filter: BitFilter,
}

impl Default for Buckets {
    fn default() -> Self {
        Buckets {
            hashes: Vec::new(),
            slots: Vec::new(),
            filter: BitFilter::new(),
        }
    }
}

impl Buckets {
    fn build(mut pairs: Vec<(u64, Slot)>) -> Self {
        pairs.sort_unstable();
        let mut filter = BitFilter::new();
        for (hash, _) in &pairs {
            filter.set(*hash);
        }
        Buckets {
            hashes: pairs.iter().map(|p| p.0).collect(),
            slots: pairs.iter().map(|p| p.1).collect(),
            filter,
        }
    }

    fn insert(&mut self, hash: u64, slot: Slot) {
        let at = self.hashes.partition_point(|h| *h < hash);
        self.hashes.insert(at, hash);
        self.slots.insert(at, slot);
        self.filter.set(hash);
    }

    fn remove(&mut self, hash: u64, slot: Slot) {
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

    #[inline]
    fn get(&self, hash: u64) -> &[Slot] {
        if self.hashes.is_empty() || !self.filter.may_contain(hash) {
            return &[];
        }
        let from = self.hashes.partition_point(|h| *h < hash);
        let to = from + self.hashes[from..].partition_point(|h| *h == hash);
        &self.slots[from..to]
    }

    fn heap_bytes(&self) -> usize {
        self.hashes.capacity() * 8 + self.slots.capacity() * 4 + self.filter.heap_bytes()
    }
}

/// A one-hash bit filter over 64-bit hashes (bits are never cleared: a
/// stale bit only costs a lookup).
pub(crate) struct BitFilter(Vec<u64>);

impl BitFilter {
    pub(crate) fn new() -> Self {
        BitFilter(vec![0; 1 << (FILTER_BITS - 6)])
    }

    #[inline]
    fn place(hash: u64) -> (usize, u64) {
        let bit = (hash >> (64 - FILTER_BITS)) as usize;
        (bit >> 6, 1u64 << (bit & 63))
    }

    pub(crate) fn set(&mut self, hash: u64) {
        let (word, bit) = Self::place(hash);
        self.0[word] |= bit;
    }

    #[inline]
    pub(crate) fn may_contain(&self, hash: u64) -> bool {
        let (word, bit) = Self::place(hash);
        self.0[word] & bit != 0
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.0.len() * 8
    }
}

/// Where a key is filed.
enum Filed {
    /// Shorter than `ANCHOR`: under its first token's hash.
    Short(u64),
    /// Under the hash of its first `ANCHOR` bytes.
    Long(u64),
}

/// Where a key is filed, or None for a key that can never be found (empty,
/// or starting with whitespace).
fn file_of(key: &str) -> Option<(Filed, u64)> {
    let token = first_token_len(key);
    if token == 0 {
        return None;
    }
    let lead = token_hash(&key.as_bytes()[..token]);
    if key.len() >= ANCHOR {
        Some((Filed::Long(token_hash(&key.as_bytes()[..ANCHOR])), lead))
    } else {
        Some((Filed::Short(lead), lead))
    }
}

/// Keys by first-token hash (short keys) or anchor hash (long keys).
#[derive(Default)]
pub(crate) struct TokenMatcher {
    short: Buckets,
    long: Buckets,
    /// First-token hashes of every key: a stream tail shorter than the
    /// anchor is held when its first token may lead a key.
    leads: Option<BitFilter>,
    /// The first two bytes of every key (a key of one byte sets its whole
    /// row): 8 KiB that let most places in a text go without a hash.
    pairs: PairFilter,
    max_key_len: usize,
}

/// One bit per pair of leading bytes.
pub(crate) struct PairFilter(Vec<u64>);

impl Default for PairFilter {
    fn default() -> Self {
        PairFilter(vec![0; 65536 / 64])
    }
}

impl PairFilter {
    fn set_key(&mut self, key: &[u8]) {
        match key {
            [] => {}
            [first] => {
                let row = (*first as usize) << 8;
                for word in &mut self.0[row / 64..(row + 256) / 64] {
                    *word = u64::MAX;
                }
            }
            [first, second, ..] => {
                let bit = ((*first as usize) << 8) | *second as usize;
                self.0[bit / 64] |= 1 << (bit % 64);
            }
        }
    }

    /// May a key start at `start` of `bytes`?
    #[inline]
    fn may_start(&self, bytes: &[u8], start: usize) -> bool {
        let second = bytes.get(start + 1).copied().unwrap_or(0);
        let bit = ((bytes[start] as usize) << 8) | second as usize;
        self.0[bit / 64] & (1 << (bit % 64)) != 0
    }
}

impl TokenMatcher {
    /// Builds from many keys at once (one sort instead of many inserts).
    pub(crate) fn build<'a>(keys: impl Iterator<Item = (&'a str, Slot)>) -> Self {
        let mut short = Vec::new();
        let mut long = Vec::new();
        let mut leads = BitFilter::new();
        let mut pairs = PairFilter::default();
        let mut max_key_len = 0;
        for (key, slot) in keys {
            let Some((filed, lead)) = file_of(key) else {
                continue;
            };
            leads.set(lead);
            pairs.set_key(key.as_bytes());
            max_key_len = max_key_len.max(key.len());
            match filed {
                Filed::Short(h) => short.push((h, slot)),
                Filed::Long(h) => long.push((h, slot)),
            }
        }
        TokenMatcher {
            short: Buckets::build(short),
            long: Buckets::build(long),
            leads: Some(leads),
            pairs,
            max_key_len,
        }
    }

    fn is_empty(&self) -> bool {
        self.short.hashes.is_empty() && self.long.hashes.is_empty()
    }

    pub(crate) fn insert(&mut self, key: &str, slot: Slot) {
        let Some((filed, lead)) = file_of(key) else {
            return;
        };
        self.leads.get_or_insert_with(BitFilter::new).set(lead);
        self.pairs.set_key(key.as_bytes());
        self.max_key_len = self.max_key_len.max(key.len());
        match filed {
            Filed::Short(h) => self.short.insert(h, slot),
            Filed::Long(h) => self.long.insert(h, slot),
        }
    }

    pub(crate) fn remove(&mut self, key: &str, slot: Slot) {
        match file_of(key) {
            Some((Filed::Short(h), _)) => self.short.remove(h, slot),
            Some((Filed::Long(h), _)) => self.long.remove(h, slot),
            None => {}
        }
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.short.heap_bytes()
            + self.long.heap_bytes()
            + self.leads.as_ref().map_or(0, BitFilter::heap_bytes)
            + self.pairs.0.len() * 8
    }

    /// The slots whose key may start at `start` (token ends at `token_end`).
    #[inline]
    fn candidates<'s>(&'s self, text: &str, start: usize, token_end: usize) -> [&'s [Slot]; 2] {
        let bytes = text.as_bytes();
        let short = if self.short.hashes.is_empty() {
            &[][..]
        } else {
            self.short.get(token_hash(&bytes[start..token_end]))
        };
        let long = if self.long.hashes.is_empty() || start + ANCHOR > bytes.len() {
            &[][..]
        } else {
            self.long.get(token_hash(&bytes[start..start + ANCHOR]))
        };
        [short, long]
    }

    /// Appends every key found in `text`: word-bounded, leftmost-longest,
    /// non-overlapping. `key_of` gives the key of a slot (None: gone).
    pub(crate) fn find<'k>(
        &self,
        text: &str,
        key_of: impl Fn(Slot) -> Option<&'k str>,
        out: &mut Vec<VaultMatch>,
    ) {
        if self.is_empty() {
            return;
        }
        let mut pos = 0;
        let bytes = text.as_bytes();
        for_each_start(text, |start, token_end| {
            if start < pos || !self.pairs.may_start(bytes, start) {
                return;
            }
            let mut best: Option<VaultMatch> = None;
            for bucket in self.candidates(text, start, token_end) {
                for &slot in bucket {
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
    /// Exact for tails of at least `ANCHOR` bytes; a shorter tail is held
    /// when its first token may lead a key, or is an unfinished word (there
    /// is no prefix structure: we accept holding a few bytes that turn out
    /// not to be a key).
    pub(crate) fn holdback<'k>(
        &self,
        text: &str,
        key_of: impl Fn(Slot) -> Option<&'k str>,
    ) -> usize {
        if self.is_empty() || text.is_empty() {
            return text.len();
        }
        let window_start = text.len().saturating_sub(self.max_key_len);
        let mut held = text.len();
        for_each_start(text, |start, token_end| {
            if held != text.len() || start < window_start {
                return;
            }
            let tail = &text[start..];
            if tail.len() < ANCHOR {
                let unfinished_word = token_end == text.len() && is_word_char_at(text, start);
                let may_lead = self.leads.as_ref().is_some_and(|leads| {
                    leads.may_contain(token_hash(&text.as_bytes()[start..token_end]))
                });
                if unfinished_word || may_lead {
                    held = start;
                }
                return;
            }
            for &slot in self.long.get(token_hash(&tail.as_bytes()[..ANCHOR])) {
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
