//! The feed rules shared by the gateway's poller and workers: which events
//! are taken, in what order, what a `forgotten` event erases from the shared
//! copies, and when a copy must be rebuilt from a snapshot instead.
//!
//! One poller per Envoy publishes a snapshot and the events after it
//! ([`publish`]); each worker keeps its copy current by applying the
//! published events after its own position, or rebuilds from the snapshot
//! when the events it needs are not all there ([`catch_up()`]). Publishing a
//! forget rewrites the shared snapshot and earlier `added` events without
//! the forgotten entries ([`scrub`]). Everything here is pure: reading and
//! writing the shared copies, calls to the control service, logs and
//! metrics belong to the caller.

pub mod catch_up;
pub mod publish;
pub mod scrub;

pub use catch_up::{
    apply_in_order, catch_up, is_current, AppliedRun, CatchUp, FeedFollower, RunEnd,
};
pub use publish::{
    append_feed_events, next_call, plan_feed_answer, FeedAnswerPlan, FeedGap, FeedPublication,
    NextCall, PublishedState,
};
pub use scrub::{scrub_events, scrub_snapshot, scrub_snapshot_entries};

#[cfg(test)]
mod tests;
