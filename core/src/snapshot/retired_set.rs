//! Retired surrogates, known only by keyed hash and lead bucket (rule V6,
//! docs/product-rules.md#v6).

use super::token_matcher::BitFilter;
use crate::keyed_hash::{retired_hash, Hash128};
use crate::wire::RetiredSurrogate;
use std::collections::HashSet;

/// The retired set of a vault: never restored, never re-issued.
#[derive(Default)]
pub(crate) struct RetiredSet {
    salt: Vec<u8>,
    hashes: HashSet<Hash128>,
    leads: HashSet<u32>,
    /// A bit filter in front of `leads`: most tokens of a text stop here.
    lead_filter: Option<BitFilter>,
}

impl RetiredSet {
    pub(crate) fn new(salt: Vec<u8>) -> Self {
        RetiredSet {
            salt,
            ..Default::default()
        }
    }

    pub(crate) fn insert(&mut self, retired: &RetiredSurrogate) {
        self.hashes.insert(retired.hash.0);
        let lead = retired.lead & 0x00ff_ffff;
        self.leads.insert(lead);
        self.lead_filter
            .get_or_insert_with(|| BitFilter::for_keys(1 << 16))
            .set(lead_as_hash(lead));
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }

    pub(crate) fn len(&self) -> usize {
        self.hashes.len()
    }

    /// Approximate heap bytes held (a hash set slot is its item and a
    /// control byte).
    pub(crate) fn heap_bytes(&self) -> usize {
        self.salt.capacity()
            + self.hashes.capacity() * 17
            + self.leads.capacity() * 5
            + self.lead_filter.as_ref().map_or(0, BitFilter::heap_bytes)
    }

    /// The keyed hash `candidate` would be retired under (this vault's
    /// salt).
    pub(crate) fn hash_of(&self, candidate: &str) -> Hash128 {
        retired_hash(&self.salt, candidate)
    }

    pub(crate) fn contains(&self, candidate: &str) -> bool {
        !self.hashes.is_empty() && self.hashes.contains(&retired_hash(&self.salt, candidate))
    }

    /// True when a retired surrogate may start with a token of this hash
    /// (see [`crate::text::lead_bucket`]).
    #[inline]
    pub(crate) fn has_lead_of(&self, token_hash: u64) -> bool {
        let lead = (token_hash >> 40) as u32;
        self.lead_filter
            .as_ref()
            .is_some_and(|f| f.may_contain(lead_as_hash(lead)))
            && self.leads.contains(&lead)
    }
}

/// Places a 24-bit lead where the bit filter reads its bits (the top ones).
fn lead_as_hash(lead: u32) -> u64 {
    (lead as u64) << 40
}
