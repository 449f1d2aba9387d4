//! A worker's catch-up: from its copy's position to the published one, by
//! the published events in order, or by a rebuild from the shared snapshot
//! when the events it needs are not all there.
//!
//! A copy applies only the event right after its position: older ones
//! (already applied) are skipped, and the first one further on (a gap: the
//! list was replaced by a new snapshot, or starts after the copy's
//! position) or refused stops the run. A copy still behind the published
//! position after its run is rebuilt from the shared snapshot and the same
//! events; a rebuilt copy that would be older than the one it replaces is
//! thrown away: a copy never moves back (it could bring back a forgotten
//! entry).

use super::publish::PublishedState;
use crate::snapshot::SnapshotIndex;
use crate::wire::{Event, EventBody};

/// A copy of the vault that follows the feed (a worker's index and the
/// caches built on it).
pub trait FeedFollower {
    /// The feed position of the copy: the last event it applied, or its
    /// snapshot's; `None` until it holds a snapshot.
    fn position(&self) -> Option<u64>;
    /// Applies the event right after [`position`](Self::position); false
    /// when the copy refuses it (and stays where it was).
    fn apply(&mut self, event: &Event) -> bool;

    /// Applies `events`, each the one after the one before (the first
    /// right after the position), as [`apply`](Self::apply) one by one
    /// would; returns how many were applied before the first refused (all
    /// when none was). A copy may apply them together (a run of forgets in
    /// one pass).
    fn apply_all(&mut self, events: &[Event]) -> usize {
        events.iter().take_while(|event| self.apply(event)).count()
    }
}

impl FeedFollower for SnapshotIndex {
    fn position(&self) -> Option<u64> {
        Some(self.seq())
    }

    fn apply(&mut self, event: &Event) -> bool {
        self.apply_event(event).is_ok()
    }

    fn apply_all(&mut self, events: &[Event]) -> usize {
        self.apply_events(events).events
    }
}

/// Why a run of events stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunEnd {
    /// Every event after the position was applied (there may have been none).
    Done,
    /// The follower holds no snapshot: nothing can be applied to it.
    NotLoaded,
    /// The next event in the list is not the one after the position.
    Gap { expected: u64, found: u64 },
    /// The follower refused the event at this position.
    Refused { seq: u64 },
}

/// What [`apply_in_order`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AppliedRun {
    /// Events applied (all kinds).
    pub events_applied: usize,
    /// `forgotten` events among them.
    pub forgets_applied: usize,
    /// Why the run stopped.
    pub end: RunEnd,
}

/// Applies to `follower`, in order, every event of `events` after its
/// position; skips those at or before it, stops at the first gap or
/// refusal. Each run of consecutive events goes to the follower at once
/// ([`FeedFollower::apply_all`]).
pub fn apply_in_order<F: FeedFollower>(follower: &mut F, events: &[Event]) -> AppliedRun {
    let mut run = AppliedRun {
        events_applied: 0,
        forgets_applied: 0,
        end: RunEnd::Done,
    };
    let mut rest = events;
    loop {
        let Some(at) = follower.position() else {
            run.end = RunEnd::NotLoaded;
            return run;
        };
        // Already applied: skipped wherever they stand in the list.
        let old = rest.iter().take_while(|event| event.seq <= at).count();
        rest = &rest[old..];
        let Some(first) = rest.first() else {
            return run;
        };
        let expected = at.saturating_add(1);
        if first.seq != expected {
            run.end = RunEnd::Gap {
                expected,
                found: first.seq,
            };
            return run;
        }
        let consecutive = 1 + rest
            .windows(2)
            .take_while(|pair| pair[1].seq == pair[0].seq.saturating_add(1))
            .count();
        let batch = &rest[..consecutive];
        let applied = follower.apply_all(batch).min(batch.len());
        run.events_applied += applied;
        run.forgets_applied += batch[..applied]
            .iter()
            .filter(|event| matches!(event.body, EventBody::Forgotten { .. }))
            .count();
        if applied < batch.len() {
            run.end = RunEnd::Refused {
                seq: batch[applied].seq,
            };
            return run;
        }
        rest = &rest[consecutive..];
    }
}

/// What one catch-up did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CatchUp {
    /// Events applied (all kinds).
    pub events_applied: usize,
    /// `forgotten` events among them.
    pub forgets_applied: usize,
    /// The copy was rebuilt from the shared snapshot.
    pub snapshot_loaded: bool,
    /// After this catch-up the copy is at (or past) the published position.
    pub current: bool,
}

impl CatchUp {
    fn count(&mut self, run: &AppliedRun) {
        self.events_applied += run.events_applied;
        self.forgets_applied += run.forgets_applied;
    }
}

/// True when a copy at `position` is at or past the published position.
pub fn is_current(position: Option<u64>, published: &PublishedState) -> bool {
    position.is_some_and(|seq| seq >= published.seq)
}

/// Brings `follower` to the published position.
///
/// A copy already there does nothing (and `read_events` is not called).
/// Otherwise the published events are read once; a copy holding a snapshot
/// applies those after its position ([`apply_in_order`]). If it is still
/// behind (a gap, a refusal, or no snapshot yet), `rebuild` makes a new
/// copy from the shared snapshot (`None`: none could be read), the same
/// events are applied to it, and it replaces `follower` unless it would be
/// older than `follower` is. `rebuild` may empty `follower` first (to free
/// its memory before the new copy is built): an emptied follower has no
/// position, so whatever it builds replaces it, and when it builds nothing
/// the follower stays empty and not current.
pub fn catch_up<F: FeedFollower>(
    follower: &mut F,
    published: &PublishedState,
    read_events: impl FnOnce() -> Vec<Event>,
    rebuild: impl FnOnce(&mut F) -> Option<F>,
) -> CatchUp {
    let mut done = CatchUp::default();
    if is_current(follower.position(), published) {
        done.current = true;
        return done;
    }
    let events = read_events();
    if follower.position().is_some() {
        done.count(&apply_in_order(follower, &events));
        if is_current(follower.position(), published) {
            done.current = true;
            return done;
        }
    }
    let Some(mut rebuilt) = rebuild(follower) else {
        return done;
    };
    let run = apply_in_order(&mut rebuilt, &events);
    let moves_back = match (follower.position(), rebuilt.position()) {
        (Some(before), Some(after)) => after < before,
        (Some(_), None) => true,
        (None, _) => false,
    };
    if moves_back {
        return done;
    }
    *follower = rebuilt;
    done.snapshot_loaded = true;
    done.count(&run);
    done.current = is_current(follower.position(), published);
    done
}
