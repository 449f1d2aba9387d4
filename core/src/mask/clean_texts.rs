//! Short texts found clean: the keys, roles, types and model names every
//! message of a resent history repeats. Too short for the memo (hashing and
//! re-validating there costs about as much as scanning), but scanned once
//! per request each, they were most of the cost of deny by default on a
//! resent history. A text is held only when it was examined and nothing
//! was found in it, and only for the index position it was examined at:
//! any forget or added entry (the feed position or the add epoch moves)
//! empties the set, so a text is never called clean against an index that
//! could now find something in it. Bounded by count.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Texts shorter than this are held (the memo takes the longer ones).
pub(crate) const MAX_CLEAN_LEN: usize = super::memo::MIN_MEMO_LEN;

/// At most this many texts are held; past it, nothing more is added until
/// the set is emptied.
const MAX_CLEAN_TEXTS: usize = 4096;

/// The keys are already uniform hashes.
#[derive(Default)]
struct IdentityHasher(u64);

impl Hasher for IdentityHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, key: u64) {
        self.0 = key;
    }
}

/// Short texts examined and found clean at one index position.
#[derive(Default)]
pub(crate) struct CleanTexts {
    texts: HashMap<u64, Box<str>, BuildHasherDefault<IdentityHasher>>,
    /// The index position (feed seq, add epoch) they were examined at.
    at: (u64, u64),
}

impl CleanTexts {
    /// Whether `text` was found clean at position `at` (a new position
    /// empties the set first).
    pub(crate) fn contains(&mut self, at: (u64, u64), text: &str) -> bool {
        if at != self.at {
            self.clear();
            self.at = at;
            return false;
        }
        self.texts
            .get(&key(text))
            .is_some_and(|held| held.as_ref() == text)
    }

    /// Holds `text`, found clean at position `at`.
    pub(crate) fn insert(&mut self, at: (u64, u64), text: &str) {
        if at != self.at {
            self.clear();
            self.at = at;
        }
        if self.texts.len() < MAX_CLEAN_TEXTS && text.len() < MAX_CLEAN_LEN {
            self.texts.insert(key(text), text.into());
        }
    }

    /// Empties the set.
    pub(crate) fn clear(&mut self) {
        self.texts.clear();
    }

    /// Texts held.
    pub(crate) fn len(&self) -> usize {
        self.texts.len()
    }
}

fn key(text: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(text.as_bytes())
}
