//! The vault snapshot as a gateway holds it: value → entry and surrogate →
//! entry lookups, the retired set, events applied in order, and the matchers
//! that find vault values and active surrogates where they are written.

mod entry_store;
mod index;
mod retired_set;
mod sorted_words;
mod token_matcher;
mod token_starts;

pub use entry_store::{EntryRef, Slot};
pub use index::{AppliedEvent, AppliedEvents, SnapshotIndex};
pub use token_matcher::VaultMatch;

#[cfg(test)]
mod tests;
