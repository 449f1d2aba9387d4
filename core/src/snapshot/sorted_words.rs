//! A sorted list of 64-bit words whose top bits are a hash, with where each
//! bucket of top bits starts: the matchers' key tables
//! ([`super::token_matcher`]) look a run of words up by its top bits.
//!
//! A binary search over the whole list (100k keys: 17 steps, the lower ones
//! missing the cache) was the restore's main cost and a large part of the
//! vault scan's. The bucket starts narrow a lookup to about eight words (one
//! or two cache lines) for half a byte a word; the run's end is then found by
//! walking it (runs are a word or two, and every caller reads them whole).

use std::ops::Range;

/// Words per bucket, on average, at build time.
const WORDS_PER_BUCKET: usize = 8;

/// The most bits a bucket is named by (a run's shared bits are at least
/// this many, so a run never spans two buckets).
const MAX_BUCKET_BITS: u32 = 24;

/// Sorted words and, for each value of their top `bits` bits, where the
/// words that have it start.
pub(super) struct SortedWords {
    words: Vec<u64>,
    /// `starts[b]..starts[b + 1]`: the words whose top bits are `b`.
    starts: Vec<u32>,
    bits: u32,
}

impl Default for SortedWords {
    fn default() -> Self {
        SortedWords::from_sorted(Vec::new())
    }
}

impl SortedWords {
    /// Takes words already sorted ascending; buckets sized to their number
    /// (a list grown later by [`Self::insert`] keeps its bucket count:
    /// lookups stay right, their buckets grow longer).
    pub(super) fn from_sorted(words: Vec<u64>) -> Self {
        let bits = (words.len() / WORDS_PER_BUCKET)
            .max(2)
            .ilog2()
            .min(MAX_BUCKET_BITS);
        let buckets = 1usize << bits;
        let mut starts = Vec::with_capacity(buckets + 1);
        let mut at = 0;
        for bucket in 0..buckets {
            while at < words.len() && bucket_of(words[at], bits) < bucket {
                at += 1;
            }
            starts.push(at as u32);
        }
        starts.push(words.len() as u32);
        SortedWords {
            words,
            starts,
            bits,
        }
    }

    fn bucket(&self, word: u64) -> Range<usize> {
        let bucket = bucket_of(word, self.bits);
        self.starts[bucket] as usize..self.starts[bucket + 1] as usize
    }

    /// Adds `word` (once).
    pub(super) fn insert(&mut self, word: u64) {
        let range = self.bucket(word);
        if let Err(at) = self.words[range.clone()].binary_search(&word) {
            self.words.insert(range.start + at, word);
            let bucket = bucket_of(word, self.bits);
            for start in &mut self.starts[bucket + 1..] {
                *start += 1;
            }
        }
    }

    /// Removes `word` if present.
    pub(super) fn remove(&mut self, word: u64) {
        let range = self.bucket(word);
        if let Ok(at) = self.words[range.clone()].binary_search(&word) {
            self.words.remove(range.start + at);
            let bucket = bucket_of(word, self.bits);
            for start in &mut self.starts[bucket + 1..] {
                *start -= 1;
            }
        }
    }

    /// The words whose top `shared` bits are `hash`'s, ascending.
    /// `shared` must be at least [`MAX_BUCKET_BITS`] and below 64.
    #[inline]
    pub(super) fn run(&self, hash: u64, shared: u32) -> &[u64] {
        debug_assert!((MAX_BUCKET_BITS..64).contains(&shared));
        let low = 64 - shared;
        let first = (hash >> low) << low;
        let bucket = &self.words[self.bucket(first)];
        let from = bucket.partition_point(|w| *w < first);
        let run = &bucket[from..];
        let len = run.iter().take_while(|w| (*w ^ hash) >> low == 0).count();
        &run[..len]
    }

    pub(super) fn len(&self) -> usize {
        self.words.len()
    }

    pub(super) fn heap_bytes(&self) -> usize {
        self.words.capacity() * 8 + self.starts.capacity() * 4
    }
}

/// The bucket of `word`: its top `bits` bits (`bits` is 1 to 24).
#[inline]
fn bucket_of(word: u64, bits: u32) -> usize {
    (word >> (64 - bits)) as usize
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The run as a search over the whole list finds it (the form this
    /// replaced).
    fn reference_run(words: &[u64], hash: u64, shared: u32) -> &[u64] {
        let low = 64 - shared;
        let first = (hash >> low) << low;
        let from = words.partition_point(|w| *w < first);
        let run = &words[from..];
        let to = run.partition_point(|w| (w ^ hash) >> low == 0);
        &run[..to]
    }

    /// Words whose top bits repeat often (few distinct high parts), so
    /// that runs of several words and empty buckets both occur.
    fn words() -> impl Strategy<Value = Vec<u64>> {
        proptest::collection::vec((0u64..64, any::<u16>(), any::<bool>()), 0..300).prop_map(
            |parts| {
                parts
                    .into_iter()
                    .map(|(high, low, spread)| {
                        let high = if spread {
                            high.wrapping_mul(0x9e37_79b9_7f4a_7c15)
                        } else {
                            high << 58
                        };
                        (high & !0xffff_ffff) | u64::from(low)
                    })
                    .collect()
            },
        )
    }

    proptest! {
        #[test]
        fn runs_equal_a_search_of_the_whole_list(
            built in words(),
            inserted in words(),
            removed in proptest::collection::vec(any::<prop::sample::Index>(), 0..40),
            probes in proptest::collection::vec(any::<u64>(), 0..40),
        ) {
            let mut sorted = built.clone();
            sorted.sort_unstable();
            sorted.dedup();
            let mut list = SortedWords::from_sorted(sorted.clone());
            let mut reference = sorted;
            for word in inserted {
                list.insert(word);
                if let Err(at) = reference.binary_search(&word) {
                    reference.insert(at, word);
                }
            }
            for index in removed {
                if reference.is_empty() {
                    break;
                }
                let word = reference[index.index(reference.len())];
                list.remove(word);
                reference.retain(|w| *w != word);
                list.remove(word); // gone: no change
            }
            prop_assert_eq!(&list.words, &reference);
            let hashes = reference.iter().copied().chain(probes);
            for hash in hashes {
                for shared in [32, 48] {
                    prop_assert_eq!(
                        list.run(hash, shared),
                        reference_run(&reference, hash, shared)
                    );
                }
            }
        }
    }

    #[test]
    fn an_empty_list_has_empty_runs() {
        let list = SortedWords::default();
        assert!(list.run(u64::MAX, 32).is_empty());
        assert!(list.run(0, 48).is_empty());
        assert_eq!(list.len(), 0);
    }
}
