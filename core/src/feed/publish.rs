//! The poller's rules: the published position, which call comes next, what
//! a feed answer adds to the published event list, and when a new snapshot
//! must replace that list.
//!
//! The published list holds every event after the snapshot's position,
//! contiguous: an event is taken only when it is the one right after the
//! published position. Older events (already published) are skipped; an
//! event further on is a gap, and the poller takes a new snapshot instead.
//! The list is never trimmed in place: once it holds more events than the
//! configured maximum the poller takes a new snapshot, which publishes an
//! empty list at the snapshot's position.

use super::scrub::scrub_events;
use crate::wire::{EntryId, Event, EventBody, FeedAnswer};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// What the poller has published: the record it writes last, after the
/// snapshot and the events, and every worker reads first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PublishedState {
    /// Feed position published: the last published event's, or the
    /// snapshot's when there are none.
    pub seq: u64,
    /// The feed position of the published snapshot; the published events
    /// are those after it.
    pub snapshot_seq: u64,
    /// When the feed (or the snapshot) last answered, ms since the epoch
    /// (`0`: never).
    pub feed_answered_at_ms: u64,
    /// The control service answered that the key was deleted
    /// ([`crate::wire::is_key_deleted`]): nothing is published, every
    /// worker drops its copy and refuses requests until a snapshot of a
    /// key is published again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub key_deleted: bool,
}

impl PublishedState {
    /// The record of a snapshot at `seq` just published (no events after
    /// it yet), answered at `now_ms`.
    pub fn at_snapshot(seq: u64, now_ms: u64) -> Self {
        PublishedState {
            seq,
            snapshot_seq: seq,
            feed_answered_at_ms: now_ms,
            key_deleted: false,
        }
    }

    /// The record of a deleted key, answered at `now_ms`: the position of
    /// `before` kept (positions never move back), nothing after it.
    pub fn key_deleted(before: Option<&PublishedState>, now_ms: u64) -> Self {
        let seq = before.map_or(0, |b| b.seq);
        PublishedState {
            seq,
            snapshot_seq: seq,
            feed_answered_at_ms: now_ms,
            key_deleted: true,
        }
    }
}

/// The poller's next call to the control service.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NextCall {
    /// Fetch a whole snapshot.
    Snapshot,
    /// Long-poll the events after this position.
    EventsAfter(u64),
}

/// The next call: the events after the published position, or a snapshot
/// when nothing is published yet or one is wanted (a gap, the feed asked for
/// it, too many events, a shared copy that could not be rewritten), or the
/// key was deleted (nothing to continue from).
pub fn next_call(published: Option<&PublishedState>, snapshot_wanted: bool) -> NextCall {
    match published {
        Some(state) if !snapshot_wanted && !state.key_deleted => NextCall::EventsAfter(state.seq),
        _ => NextCall::Snapshot,
    }
}

/// What the poller does with a feed answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FeedAnswerPlan {
    /// Nothing is published to continue from: take a snapshot.
    NothingPublished,
    /// The feed no longer holds the events after the published position:
    /// take a snapshot.
    SnapshotRequired,
    /// Append these events (see [`append_feed_events`]) to what is
    /// published at `published`.
    Append {
        published: PublishedState,
        events: Vec<Event>,
    },
}

/// Decides what a feed answer leads to, given what is published.
pub fn plan_feed_answer(published: Option<PublishedState>, answer: FeedAnswer) -> FeedAnswerPlan {
    let Some(published) = published.filter(|p| !p.key_deleted) else {
        return FeedAnswerPlan::NothingPublished;
    };
    match answer {
        FeedAnswer::SnapshotRequired { .. } => FeedAnswerPlan::SnapshotRequired,
        FeedAnswer::Events { events, .. } => FeedAnswerPlan::Append { published, events },
    }
}

/// An event of a feed answer that is not the one after the published
/// position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FeedGap {
    /// The published position.
    pub after: u64,
    /// The position of the event that came instead of `after + 1`.
    pub found: u64,
}

/// The new publication a feed answer makes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FeedPublication {
    /// The new state record (its `seq` moved over the events taken; the
    /// answer time set).
    pub state: PublishedState,
    /// The new published list: contiguous after the snapshot's position up
    /// to `state.seq`, scrubbed when a forget arrived.
    pub events: Vec<Event>,
    /// True when the answer brought new events (the list must be written
    /// and the workers woken).
    pub advanced: bool,
    /// The first event that broke the sequence (the events from it on were
    /// not taken): take a snapshot.
    pub gap: Option<FeedGap>,
    /// Set when a `forgotten` event was taken: every id the published list
    /// forgets, to be erased from the shared snapshot too.
    pub forgotten: Option<HashSet<EntryId>>,
}

impl FeedPublication {
    /// True when the published list holds more than `max_shared_events`:
    /// take a snapshot, which starts a new, empty list.
    pub fn too_many_events(&self, max_shared_events: usize) -> bool {
        self.events.len() > max_shared_events
    }
}

/// Appends a feed answer's events to the published list `shared` (as read
/// from the shared copy) at `published`, answered at `now_ms`.
///
/// The list is first cut to the events after the snapshot's position up to
/// the published one (anything else is a leftover). Then each answered
/// event already published is skipped, the one right after the position is
/// taken, and the first one further on stops the append (a gap). When a
/// `forgotten` event was taken, the `added` events before it lose the
/// entries it names ([`scrub_events`]).
pub fn append_feed_events(
    published: PublishedState,
    mut shared: Vec<Event>,
    answer: Vec<Event>,
    now_ms: u64,
) -> FeedPublication {
    let mut state = published;
    shared.retain(|e| e.seq > state.snapshot_seq && e.seq <= state.seq);
    let before = state.seq;
    let mut gap = None;
    let mut forget_arrived = false;
    for event in answer {
        if event.seq <= state.seq {
            continue;
        }
        if event.seq != state.seq.saturating_add(1) {
            gap = Some(FeedGap {
                after: state.seq,
                found: event.seq,
            });
            break;
        }
        state.seq = event.seq;
        forget_arrived |= matches!(event.body, EventBody::Forgotten { .. });
        shared.push(event);
    }
    state.feed_answered_at_ms = now_ms;
    let forgotten = forget_arrived.then(|| scrub_events(&mut shared));
    FeedPublication {
        advanced: state.seq != before,
        state,
        events: shared,
        gap,
        forgotten,
    }
}
