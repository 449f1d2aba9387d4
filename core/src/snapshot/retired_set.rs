//! Retired surrogates, known only by keyed hash and lead bucket (SPEC V6).

use crate::keyed_hash::{retired_hash, Hash128};
use crate::wire::RetiredSurrogate;
use std::collections::HashSet;

/// The retired set of a vault: never restored, never re-issued.
#[derive(Default)]
pub(crate) struct RetiredSet {
    salt: Vec<u8>,
    hashes: HashSet<Hash128>,
    leads: HashSet<u32>,
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
        self.leads.insert(retired.lead & 0x00ff_ffff);
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }

    pub(crate) fn len(&self) -> usize {
        self.hashes.len()
    }

    pub(crate) fn contains(&self, candidate: &str) -> bool {
        !self.hashes.is_empty() && self.hashes.contains(&retired_hash(&self.salt, candidate))
    }

    pub(crate) fn has_lead(&self, lead: u32) -> bool {
        self.leads.contains(&lead)
    }
}
