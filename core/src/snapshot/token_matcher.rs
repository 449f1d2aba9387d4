//! Finds keys (vault values, or active surrogates) where they are written in a
//! text, on word boundaries, leftmost-longest.
//!
//! A key is found through its *lead*: the hash of its first `ANCHOR` bytes,
//! or, when it is shorter, of its first token (a run of word chars, or one
//! other non-space char). A lead maps to the distinct lengths of the keys
//! that share it, and a whole key's hash to its slots. A scan walks the
//! text's tokens once; at each place a key may start it checks a pair
//! filter (the first two bytes of every key), hashes the lead, asks a bit
//! filter, and only then hashes the text for each length the lead knows
//! and looks the whole key up. The walk classes sixteen bytes at a step and
//! finds a word's end only where the pair filter lets a key start
//! ([`super::token_starts`]). Keys that share a long prefix (thousands of
//! `mario.rossi1…@` addresses) cost one hash per distinct length, never one
//! comparison per key. Memory is 8 bytes a key (`hash << 32 | slot`) and
//! half a byte a key of bucket starts ([`super::sorted_words`]) plus the
//! lead lists and filters sized to the vault; `core/benches` compares
//! it with an `aho-corasick` automaton over the same keys.

use super::entry_store::Slot;
use super::sorted_words::SortedWords;
use super::token_starts::{for_each_start, for_each_start_where, FirstBytes};
use crate::text::{first_token_len, is_word_char, on_word_boundaries, token_hash};

/// A key found in a text: bytes `start..end`, the entry in `slot`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VaultMatch {
    pub start: usize,
    pub end: usize,
    pub slot: Slot,
}

/// Keys of at least this many bytes lead with the hash of their first
/// `ANCHOR` bytes; shorter ones with the hash of their first token. A first
/// token alone is too common a lead in a large vault (every Italian mobile
/// number starts with `+`, thousands of names with `Mario`).
const ANCHOR: usize = 12;

/// A one-hash bit filter over 64-bit hashes, sized to the keys it was built
/// for (bits are never cleared: a stale bit only costs a lookup).
pub(crate) struct BitFilter {
    words: Vec<u64>,
    bits: u32,
}

impl BitFilter {
    /// About 16 bits a key (~6% false positives), between 8 KiB and 512 KiB.
    pub(crate) fn for_keys(keys: usize) -> Self {
        let wanted = (keys.max(1) * 16).next_power_of_two();
        let bits = wanted.trailing_zeros().clamp(16, 22);
        BitFilter {
            words: vec![0; 1 << (bits - 6)],
            bits,
        }
    }

    #[inline]
    fn place(&self, hash: u64) -> (usize, u64) {
        let bit = (hash >> (64 - self.bits)) as usize;
        (bit >> 6, 1u64 << (bit & 63))
    }

    pub(crate) fn set(&mut self, hash: u64) {
        let (word, bit) = self.place(hash);
        self.words[word] |= bit;
    }

    #[inline]
    pub(crate) fn may_contain(&self, hash: u64) -> bool {
        let (word, bit) = self.place(hash);
        self.words[word] & bit != 0
    }

    pub(crate) fn heap_bytes(&self) -> usize {
        self.words.len() * 8
    }
}

/// Key lengths filed under the top 48 bits of their lead's hash, as
/// sorted, deduplicated `hash48 << 16 | length` words: 8 bytes a distinct
/// (lead, length). Keys shorter than `ANCHOR` are filed under their first
/// token's hash, longer ones under their anchor's: the length tells which,
/// so one list holds both and a run splits at `ANCHOR`. Built in one
/// buffer of one word a key, sorted and deduplicated in place (a buffer
/// grown by doubling, or a second copy for the lookup form, stayed in the
/// worker VM's memory: wasm memory keeps its peak). A run may hold lengths
/// of other leads sharing those bits; each is only a candidate, checked by
/// whole hash and bytes.
#[derive(Default)]
struct LensByLead(SortedWords);

impl LensByLead {
    fn word(hash: u64, len: u16) -> u64 {
        (hash & !0xffff) | u64::from(len)
    }

    /// Sorts and deduplicates words gathered with [`Self::word`], in place.
    fn build(mut words: Vec<u64>) -> Self {
        sort_words(&mut words);
        words.dedup();
        words.shrink_to_fit();
        LensByLead(SortedWords::from_sorted(words))
    }

    /// Files a length (once).
    fn insert(&mut self, hash: u64, len: u16) {
        self.0.insert(Self::word(hash, len));
    }

    /// The words filed under `hash`'s top 48 bits, lengths ascending.
    #[inline]
    fn run(&self, hash: u64) -> &[u64] {
        self.0.run(hash, 48)
    }

    /// Lengths of keys shorter than `ANCHOR` whose first token hashes to
    /// `hash`, ascending.
    #[inline]
    fn short(&self, hash: u64) -> &[u64] {
        let run = self.run(hash);
        &run[..run.partition_point(|w| len_of(*w) < ANCHOR)]
    }

    /// Lengths of keys of at least `ANCHOR` bytes whose anchor hashes to
    /// `hash`, ascending.
    #[inline]
    fn long(&self, hash: u64) -> &[u64] {
        let run = self.run(hash);
        &run[run.partition_point(|w| len_of(*w) < ANCHOR)..]
    }

    fn heap_bytes(&self) -> usize {
        self.0.heap_bytes()
    }
}

/// The length in a [`LensByLead`] word.
#[inline]
fn len_of(word: u64) -> usize {
    (word & 0xffff) as usize
}

/// Slots filed under the top 32 bits of their key's hash, as sorted
/// `hash << 32 | slot` words: 8 bytes a key (and half a byte of bucket
/// starts, [`SortedWords`]). A run may hold slots of
/// other keys whose hash shares those bits; every caller compares the
/// key's bytes, and a run keeps its slots in ascending order, so the first
/// slot whose key matches is the one a full 64-bit hash would give.
#[derive(Default)]
struct SlotsByHash(SortedWords);

impl SlotsByHash {
    fn word(hash: u64, slot: Slot) -> u64 {
        (hash & !0xffff_ffff) | u64::from(slot)
    }

    /// Sorts words gathered with [`Self::word`], in place.
    fn build(mut words: Vec<u64>) -> Self {
        sort_words(&mut words);
        words.shrink_to_fit();
        SlotsByHash(SortedWords::from_sorted(words))
    }

    fn insert(&mut self, hash: u64, slot: Slot) {
        self.0.insert(Self::word(hash, slot));
    }

    fn remove(&mut self, hash: u64, slot: Slot) {
        self.0.remove(Self::word(hash, slot));
    }

    /// The slots filed under `hash`'s top 32 bits, ascending.
    #[inline]
    fn get(&self, hash: u64) -> impl Iterator<Item = Slot> + '_ {
        self.0.run(hash, 32).iter().map(|w| *w as Slot)
    }

    fn len(&self) -> usize {
        self.0.len()
    }

    fn heap_bytes(&self) -> usize {
        self.0.heap_bytes()
    }
}

/// Sorts in place with no scratch memory: a quicksort (median of three,
/// the smaller side first) that falls back to a heapsort past
/// `2 log2 n` levels, so no input is quadratic. Written here rather than
/// `sort_unstable`: the std sort of an 8-byte type brings its own sorting
/// networks into the `.wasm` (about 2.5 KB); this is a few hundred bytes.
fn sort_words(v: &mut [u64]) {
    let depth = 2 * (usize::BITS - v.len().leading_zeros());
    quicksort(v, depth);
}

fn quicksort(mut v: &mut [u64], mut depth: u32) {
    while v.len() > 16 {
        if depth == 0 {
            heapsort(v);
            return;
        }
        depth -= 1;
        let (mid, last) = (v.len() / 2, v.len() - 1);
        // Median of first, middle and last, moved to the end.
        if v[mid] < v[0] {
            v.swap(mid, 0);
        }
        if v[last] < v[0] {
            v.swap(last, 0);
        }
        if v[mid] < v[last] {
            v.swap(mid, last);
        }
        let pivot = v[last];
        let mut store = 0;
        for i in 0..last {
            if v[i] < pivot {
                v.swap(i, store);
                store += 1;
            }
        }
        v.swap(store, last);
        let (left, right) = v.split_at_mut(store);
        let right = &mut right[1..];
        if left.len() < right.len() {
            quicksort(left, depth);
            v = right;
        } else {
            quicksort(right, depth);
            v = left;
        }
    }
    // Insertion sort for the short runs.
    for i in 1..v.len() {
        let mut j = i;
        while j > 0 && v[j] < v[j - 1] {
            v.swap(j, j - 1);
            j -= 1;
        }
    }
}

fn heapsort(v: &mut [u64]) {
    fn sift_down(v: &mut [u64], mut node: usize) {
        loop {
            let mut child = 2 * node + 1;
            if child >= v.len() {
                return;
            }
            if child + 1 < v.len() && v[child] < v[child + 1] {
                child += 1;
            }
            if v[node] >= v[child] {
                return;
            }
            v.swap(node, child);
            node = child;
        }
    }
    for node in (0..v.len() / 2).rev() {
        sift_down(v, node);
    }
    for end in (1..v.len()).rev() {
        v.swap(0, end);
        sift_down(&mut v[..end], 0);
    }
}

/// How a key is looked up.
struct KeyHashes {
    /// The first token's hash (every key: stream hold-back).
    token: u64,
    /// The lead: anchor hash for long keys, the token's for short ones
    /// (the key's length tells which).
    lead: u64,
    /// The whole key's hash.
    whole: u64,
}

/// A key's hashes, or None for a key that can never be found (empty, starting
/// with whitespace, or longer than a length list can say).
fn hashes_of(key: &str) -> Option<KeyHashes> {
    let token = first_token_len(key);
    if token == 0 || key.len() > u16::MAX as usize {
        return None;
    }
    let bytes = key.as_bytes();
    let token = token_hash(&bytes[..token]);
    let long = key.len() >= ANCHOR;
    Some(KeyHashes {
        token,
        lead: if long {
            token_hash(&bytes[..ANCHOR])
        } else {
            token
        },
        whole: token_hash(bytes),
    })
}

/// Keys by lead (their distinct lengths) and by whole hash (their slots).
pub(crate) struct TokenMatcher {
    /// First-token hash → lengths of keys shorter than `ANCHOR`; anchor
    /// hash → lengths of keys of at least `ANCHOR` bytes.
    lens: LensByLead,
    /// In front of the length list.
    lead_filter: BitFilter,
    /// Whole-key hash → slots.
    whole: SlotsByHash,
    /// First-token hashes of every key: a stream tail shorter than the
    /// anchor is held when its first token may start a key. Only a matcher
    /// built for hold-back has it (values are never held back: their
    /// matcher would carry an unread filter).
    tokens: Option<BitFilter>,
    /// The first two bytes of every key.
    pairs: PairFilter,
    max_key_len: usize,
    /// The shortest key's length (a removed key may leave it lower than
    /// the shortest key left: a text shorter than it holds no key).
    min_key_len: usize,
}

impl Default for TokenMatcher {
    fn default() -> Self {
        TokenMatcher::build(std::iter::empty(), 0, true)
    }
}

/// One bit per pair of leading bytes (a key of one byte sets its whole
/// row): 8 KiB that let most places in a text go without a hash.
pub(crate) struct PairFilter(Vec<u64>, FirstBytes);

impl Default for PairFilter {
    fn default() -> Self {
        PairFilter(vec![0; 65536 / 64], FirstBytes::default())
    }
}

impl PairFilter {
    fn set_key(&mut self, key: &[u8]) {
        if let Some(first) = key.first() {
            self.1.set(*first);
        }
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
    /// Builds from many keys at once (sorts instead of many inserts);
    /// `count` is how many keys come (the filters and the slot table are
    /// sized to it up front: wasm memory keeps its peak, so nothing is
    /// gathered twice or grown by doubling). `holds_back`: the matcher
    /// answers [`Self::holdback`] (the surrogates'); without it, every
    /// short tail would be held.
    pub(crate) fn build<'a>(
        keys: impl Iterator<Item = (&'a str, Slot)>,
        count: usize,
        holds_back: bool,
    ) -> Self {
        let mut lens = Vec::with_capacity(count);
        let mut whole = Vec::with_capacity(count);
        let mut pairs = PairFilter::default();
        let mut max_key_len = 0;
        let mut min_key_len = usize::MAX;
        let mut lead_filter = BitFilter::for_keys(count);
        let mut token_filter = holds_back.then(|| BitFilter::for_keys(count));
        for (key, slot) in keys {
            let Some(h) = hashes_of(key) else { continue };
            lens.push(LensByLead::word(h.lead, key.len() as u16));
            lead_filter.set(h.lead);
            whole.push(SlotsByHash::word(h.whole, slot));
            if let Some(filter) = &mut token_filter {
                filter.set(h.token);
            }
            pairs.set_key(key.as_bytes());
            max_key_len = max_key_len.max(key.len());
            min_key_len = min_key_len.min(key.len());
        }
        TokenMatcher {
            lens: LensByLead::build(lens),
            lead_filter,
            whole: SlotsByHash::build(whole),
            tokens: token_filter,
            pairs,
            max_key_len,
            min_key_len,
        }
    }

    fn is_empty(&self) -> bool {
        self.whole.len() == 0
    }

    pub(crate) fn insert(&mut self, key: &str, slot: Slot) {
        let Some(h) = hashes_of(key) else { return };
        self.lens.insert(h.lead, key.len() as u16);
        self.lead_filter.set(h.lead);
        self.whole.insert(h.whole, slot);
        if let Some(filter) = &mut self.tokens {
            filter.set(h.token);
        }
        self.pairs.set_key(key.as_bytes());
        self.max_key_len = self.max_key_len.max(key.len());
        self.min_key_len = self.min_key_len.min(key.len());
    }

    /// Removes a key. Its length stays listed under its lead (another key
    /// may share it; a stale one costs a hash).
    pub(crate) fn remove(&mut self, key: &str, slot: Slot) {
        if let Some(h) = hashes_of(key) {
            self.whole.remove(h.whole, slot);
        }
    }

    /// Heap bytes held, by part (`of` names the keys).
    pub(crate) fn heap_parts(&self, of: &'static str) -> [(&'static str, usize); 3] {
        let [lens, whole, filters] = match of {
            "values" => [
                "values: lead lengths",
                "values: whole hashes",
                "values: filters",
            ],
            _ => [
                "surrogates: lead lengths",
                "surrogates: whole hashes",
                "surrogates: filters",
            ],
        };
        [
            (lens, self.lens.heap_bytes()),
            (whole, self.whole.heap_bytes()),
            (
                filters,
                self.lead_filter.heap_bytes()
                    + self.tokens.as_ref().map_or(0, BitFilter::heap_bytes)
                    + self.pairs.0.len() * 8,
            ),
        ]
    }

    /// The longest key that starts at `start` (its first token ends at
    /// `token_end`) and stands on word boundaries.
    #[inline]
    fn longest_at<'k>(
        &self,
        text: &str,
        start: usize,
        token_end: usize,
        key_of: &impl Fn(Slot) -> Option<&'k [u8]>,
    ) -> Option<VaultMatch> {
        let bytes = text.as_bytes();
        let long = if start + ANCHOR <= bytes.len() {
            let anchor = token_hash(&bytes[start..start + ANCHOR]);
            if self.lead_filter.may_contain(anchor) {
                self.lens.long(anchor)
            } else {
                &[]
            }
        } else {
            &[]
        };
        let token = token_hash(&bytes[start..token_end]);
        let short = if self.lead_filter.may_contain(token) {
            self.lens.short(token)
        } else {
            &[]
        };
        // Long keys are longer than short ones; each list ascends.
        for &word in long.iter().rev().chain(short.iter().rev()) {
            let end = start + len_of(word);
            if end > bytes.len() || !text.is_char_boundary(end) {
                continue;
            }
            if !on_word_boundaries(text, start, end) {
                continue;
            }
            let candidate = &bytes[start..end];
            for slot in self.whole.get(token_hash(candidate)) {
                if key_of(slot).is_some_and(|key| key == candidate) {
                    return Some(VaultMatch { start, end, slot });
                }
            }
        }
        None
    }

    /// The slot of a key that is exactly `text`: what [`TokenMatcher::find`]
    /// reports as a match of the whole text, without the walk (and its
    /// buffer). A key is filed under the hash of all its bytes, and the
    /// walk's longest match at the text's first byte is the whole text
    /// whenever the whole text is a key (an indexed key never starts with
    /// a space, so its first byte is a start; the text's ends are word
    /// boundaries); the first matching slot of that hash is the one the
    /// walk takes. The entry lookups (`by_value`, `by_surrogate`) run for
    /// every detector finding and every e-mail a request sends.
    pub(crate) fn exact<'k>(
        &self,
        text: &str,
        key_of: impl Fn(Slot) -> Option<&'k [u8]>,
    ) -> Option<Slot> {
        let bytes = text.as_bytes();
        // The pair filter holds the first two bytes of every key: most
        // texts that are no key (a domain looked up for every e-mail
        // sent) end here, before the binary search of the hashes.
        if text.is_empty() || text.len() > u16::MAX as usize || !self.pairs.may_start(bytes, 0) {
            return None;
        }
        self.whole
            .get(token_hash(bytes))
            .find(|&slot| key_of(slot).is_some_and(|key| key == bytes))
    }

    /// Appends every key found in `text`: word-bounded, leftmost-longest,
    /// non-overlapping. `key_of` gives the key of a slot (None: gone).
    pub(crate) fn find<'k>(
        &self,
        text: &str,
        key_of: impl Fn(Slot) -> Option<&'k [u8]>,
        out: &mut Vec<VaultMatch>,
    ) {
        self.walk(text, &key_of, false, out);
    }

    /// Appends, in start order, the longest key at each start that reaches
    /// past every key appended before it: keys may overlap (the masker
    /// resolves them), a key wholly inside an earlier one is left out. A
    /// key that starts inside another and ends after it is reported, so no
    /// byte of a written key goes unseen (finding F8-1).
    pub(crate) fn find_overlapping<'k>(
        &self,
        text: &str,
        key_of: impl Fn(Slot) -> Option<&'k [u8]>,
        out: &mut Vec<VaultMatch>,
    ) {
        self.walk(text, &key_of, true, out);
    }

    /// The one walk behind [`Self::find`] and [`Self::find_overlapping`]:
    /// the longest key at each start that reaches past the last one
    /// appended; starts inside that one are tried only when `overlapping`.
    fn walk<'k>(
        &self,
        text: &str,
        key_of: &impl Fn(Slot) -> Option<&'k [u8]>,
        overlapping: bool,
        out: &mut Vec<VaultMatch>,
    ) {
        // Most strings of an answer that are no key's length or more (roles,
        // ids, short fields) are left before the walk.
        if self.is_empty() || text.len() < self.min_key_len {
            return;
        }
        let mut reached = 0;
        let bytes = text.as_bytes();
        let may_start = |start| self.pairs.may_start(bytes, start);
        for_each_start_where(text, &self.pairs.1, may_start, |start, token_end| {
            if start < reached && !overlapping {
                return;
            }
            if let Some(found) = self.longest_at(text, start, token_end, key_of) {
                if found.end > reached {
                    out.push(found);
                    reached = found.end;
                }
            }
        });
    }

    /// The byte offset from which a stream must hold `text` back because its
    /// tail could still become a key (or a key whose end is not yet known
    /// to be a word boundary); `text.len()` when nothing needs holding.
    /// A tail of at least `ANCHOR` bytes is held when a key of its anchor is
    /// at least as long (exactly so when as long); a shorter tail when its
    /// first token may start a key or is an unfinished word. There is no
    /// prefix structure: we accept holding a few bytes that turn out not to
    /// be a key, never releasing one that could be.
    pub(crate) fn holdback<'k>(
        &self,
        text: &str,
        key_of: impl Fn(Slot) -> Option<&'k [u8]>,
    ) -> usize {
        if self.is_empty() || text.is_empty() {
            return text.len();
        }
        let bytes = text.as_bytes();
        let window_start = text.len().saturating_sub(self.max_key_len);
        let mut held = text.len();
        for_each_start(text, |start, token_end| {
            if held != text.len() || start < window_start {
                return;
            }
            let tail = &bytes[start..];
            if tail.len() < ANCHOR {
                let unfinished_word = token_end == text.len() && is_word_char_at(text, start);
                let token = token_hash(&bytes[start..token_end]);
                if unfinished_word || self.tokens.as_ref().is_none_or(|f| f.may_contain(token)) {
                    held = start;
                }
                return;
            }
            let anchor = token_hash(&tail[..ANCHOR]);
            if !self.lead_filter.may_contain(anchor) {
                return;
            }
            for &word in self.lens.long(anchor) {
                let len = len_of(word);
                if len > tail.len() {
                    held = start; // a key of this anchor could still grow here
                    return;
                }
                if len == tail.len() {
                    let open_end = self.whole.get(token_hash(tail)).any(|slot| {
                        key_of(slot).is_some_and(|key| key == tail)
                            && text.chars().next_back().is_some_and(is_word_char)
                    });
                    if open_end {
                        held = start;
                        return;
                    }
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

#[cfg(test)]
mod walk_tests {
    use super::super::token_starts::for_each_start;
    use super::super::token_starts::scan_tests::{random_text, Xorshift};
    use super::{Slot, TokenMatcher, VaultMatch};

    /// Keys of every shape the walk meets: words, names, addresses sharing
    /// long prefixes, phones, one-char and multi-byte keys.
    const KEYS: &[&str] = &[
        "Mario",
        "Mario Rossi",
        "mario.rossi@acme.it",
        "mario.rossi1@acme.it",
        "mario.rossi12@acme.it",
        "+39 347 123 4567",
        "José",
        "José Ruiz",
        "日本",
        "é",
        "Ana",
        "x9_",
        "@",
        "Ω",
        "😀 ok",
        "\u{0B}",
        "Iñigo",
        "a",
    ];

    /// The walk as it was before the block walk: every start, then the pair
    /// filter (the reference the block walk must equal).
    fn reference_walk<'k>(
        matcher: &TokenMatcher,
        text: &str,
        key_of: &impl Fn(Slot) -> Option<&'k [u8]>,
        overlapping: bool,
    ) -> Vec<VaultMatch> {
        let mut out = Vec::new();
        let mut reached = 0;
        for_each_start(text, |start, token_end| {
            if (start < reached && !overlapping) || !matcher.pairs.may_start(text.as_bytes(), start)
            {
                return;
            }
            if let Some(found) = matcher.longest_at(text, start, token_end, key_of) {
                if found.end > reached {
                    out.push(found);
                    reached = found.end;
                }
            }
        });
        out
    }

    /// What the entry lookups answered before [`TokenMatcher::exact`]:
    /// the walk's first match, when it is the whole text.
    fn whole_by_walk<'k>(
        matcher: &TokenMatcher,
        text: &str,
        key_of: &impl Fn(Slot) -> Option<&'k [u8]>,
    ) -> Option<Slot> {
        let mut found = Vec::new();
        matcher.find(text, key_of, &mut found);
        found
            .first()
            .filter(|m| m.start == 0 && m.end == text.len())
            .map(|m| m.slot)
            .filter(|slot| key_of(*slot) == Some(text.as_bytes()))
    }

    #[test]
    fn the_exact_lookup_answers_as_the_walk_for_whole_texts() {
        // Every key twice (two slots, one key: the walk's slot is kept).
        let key_of = |slot: Slot| KEYS.get(slot as usize % KEYS.len()).map(|k| k.as_bytes());
        let matcher = TokenMatcher::build(
            KEYS.iter()
                .chain(KEYS.iter())
                .zip(0..)
                .map(|(k, s)| (*k, s)),
            KEYS.len() * 2,
            true,
        );
        let mut rng = Xorshift(0x9e37_79b9_7f4a_7c15);
        let mut texts: Vec<String> = Vec::new();
        for key in KEYS {
            texts.push(key.to_string());
            texts.push(format!(" {key}"));
            texts.push(format!("{key} "));
            texts.push(format!("{key}x"));
            texts.push(format!("x{key}"));
            texts.push(format!("{key}{key}"));
            texts.push(key.chars().skip(1).collect());
        }
        for round in 0..400 {
            texts.push(random_text(&mut rng, round % 20));
        }
        texts.push(String::new());
        let mut hits = 0;
        for text in &texts {
            let exact = matcher.exact(text, key_of);
            assert_eq!(exact, whole_by_walk(&matcher, text, &key_of), "{text:?}");
            hits += usize::from(exact.is_some());
        }
        assert!(hits >= KEYS.len() - 2, "{hits}");
    }

    #[test]
    fn the_slot_table_sorts_sort_as_the_std_sort() {
        let mut rng = Xorshift(0x1234_5678_9abc_def1);
        for len in [0usize, 1, 2, 3, 7, 16, 17, 64, 1000, 5000] {
            for dups in [false, true] {
                let mut v: Vec<u64> = (0..len)
                    .map(|_| {
                        let x = rng.below(1 << 30) as u64;
                        if dups {
                            x % 5
                        } else {
                            x << 20 | x
                        }
                    })
                    .collect();
                let mut expected = v.clone();
                expected.sort_unstable();
                let mut heap = v.clone();
                super::heapsort(&mut heap);
                assert_eq!(heap, expected, "heapsort: len {len} dups {dups}");
                super::sort_words(&mut v);
                assert_eq!(v, expected, "len {len} dups {dups}");
                // Sorted, reversed and all-equal inputs (the quicksort's
                // bad cases go to the heapsort).
                for mut shaped in [
                    expected.clone(),
                    expected.iter().rev().copied().collect(),
                    vec![7; len],
                ] {
                    let mut want = shaped.clone();
                    want.sort_unstable();
                    super::sort_words(&mut shaped);
                    assert_eq!(shaped, want, "shaped: len {len}");
                }
            }
        }
    }

    #[test]
    fn the_walk_finds_what_the_reference_walk_finds() {
        let key_of = |slot: Slot| KEYS.get(slot as usize).map(|k| k.as_bytes());
        let mut rng = Xorshift(0x2545_f491_4f6c_dd1d);
        let mut matches = 0;
        for keys in [1, 4, KEYS.len()] {
            let matcher = TokenMatcher::build(
                KEYS.iter().take(keys).zip(0..).map(|(k, s)| (*k, s)),
                keys,
                true,
            );
            for round in 0..600 {
                let mut text = random_text(&mut rng, round % 50);
                // A key at every offset 0..40 and near the end.
                let key = KEYS[rng.below(keys)];
                let at = (0..=text.len().min(40))
                    .filter(|i| text.is_char_boundary(*i))
                    .nth(round % 41);
                text.insert_str(at.unwrap_or(text.len()), key);
                if round % 2 == 0 {
                    text.push_str(KEYS[rng.below(keys)]);
                    text.push_str(&random_text(&mut rng, round % 3));
                }
                for overlapping in [false, true] {
                    let mut found = Vec::new();
                    if overlapping {
                        matcher.find_overlapping(&text, key_of, &mut found);
                    } else {
                        matcher.find(&text, key_of, &mut found);
                    }
                    let expected = reference_walk(&matcher, &text, &key_of, overlapping);
                    matches += expected.len();
                    assert_eq!(
                        found, expected,
                        "keys {keys} round {round} overlapping {overlapping}"
                    );
                }
            }
        }
        assert!(
            matches > 2000,
            "only {matches} matches: the texts test little"
        );
    }

    #[test]
    fn texts_shorter_than_every_key_are_left_as_the_walk_leaves_them() {
        let key_of = |slot: Slot| KEYS.get(slot as usize).map(|k| k.as_bytes());
        // Keys of five bytes or more, then a short key inserted later, then
        // that one removed again (the shortest length may stay lower).
        let long = || KEYS.iter().zip(0..).filter(|(k, _)| k.len() >= 5);
        let mut matcher = TokenMatcher::build(long().map(|(k, s)| (*k, s)), long().count(), true);
        let short: Slot = 10; // "Ana"
        let mut rng = Xorshift(0x51f1_5eed_0bad_cafe);
        let mut matches = 0;
        for phase in 0..3 {
            match phase {
                1 => matcher.insert(KEYS[short as usize], short),
                2 => matcher.remove(KEYS[short as usize], short),
                _ => {}
            }
            for round in 0..300 {
                let mut text = random_text(&mut rng, round % 4);
                if round % 3 == 0 {
                    let key = KEYS[rng.below(KEYS.len())];
                    text.push_str(key);
                }
                if round % 5 == 0 {
                    // Every prefix of a key (no key ends inside it).
                    let key = KEYS[rng.below(KEYS.len())];
                    let cut = (0..=key.len()).filter(|i| key.is_char_boundary(*i)).count();
                    let end = (0..=key.len())
                        .filter(|i| key.is_char_boundary(*i))
                        .nth(round % cut)
                        .unwrap_or(0);
                    text = key[..end].to_string();
                }
                let mut found = Vec::new();
                matcher.find(&text, key_of, &mut found);
                let expected = reference_walk(&matcher, &text, &key_of, false);
                matches += expected.len();
                assert_eq!(found, expected, "phase {phase} round {round}");
            }
        }
        assert!(matches > 50, "only {matches} matches");
    }
}
