use super::*;
use crate::feed::{
    apply_in_order, catch_up, is_current, AppliedRun, CatchUp, FeedFollower, PublishedState, RunEnd,
};
use crate::snapshot::SnapshotIndex;
use std::cell::Cell;

/// A copy that records what it applied and refuses one position.
#[derive(Clone, Debug, PartialEq, Eq)]
struct FakeCopy {
    at: Option<u64>,
    applied: Vec<u64>,
    refuses: Option<u64>,
    from_snapshot: bool,
}

impl FakeCopy {
    fn at(at: Option<u64>) -> Self {
        FakeCopy {
            at,
            applied: vec![],
            refuses: None,
            from_snapshot: false,
        }
    }
}

impl FeedFollower for FakeCopy {
    fn position(&self) -> Option<u64> {
        self.at
    }

    fn apply(&mut self, event: &Event) -> bool {
        if self.refuses == Some(event.seq) {
            return false;
        }
        self.at = Some(event.seq);
        self.applied.push(event.seq);
        true
    }
}

fn published(seq: u64, snapshot_seq: u64) -> PublishedState {
    PublishedState {
        seq,
        snapshot_seq,
        feed_answered_at_ms: 1,
        key_deleted: false,
    }
}

#[test]
fn events_are_applied_in_order_from_the_position() {
    struct Case {
        name: &'static str,
        at: Option<u64>,
        refuses: Option<u64>,
        events: Vec<Event>,
        applied: &'static [u64],
        end: RunEnd,
    }
    let cases = [
        Case {
            name: "in order",
            at: Some(3),
            refuses: None,
            events: empty_events(&[4, 5, 6]),
            applied: &[4, 5, 6],
            end: RunEnd::Done,
        },
        Case {
            name: "events at or before the position are ignored",
            at: Some(5),
            refuses: None,
            events: empty_events(&[3, 4, 5, 6]),
            applied: &[6],
            end: RunEnd::Done,
        },
        Case {
            name: "a duplicate is ignored",
            at: Some(3),
            refuses: None,
            events: empty_events(&[4, 4, 5]),
            applied: &[4, 5],
            end: RunEnd::Done,
        },
        Case {
            name: "a gap stops the run",
            at: Some(3),
            refuses: None,
            events: empty_events(&[4, 6, 7]),
            applied: &[4],
            end: RunEnd::Gap {
                expected: 5,
                found: 6,
            },
        },
        Case {
            name: "a list that starts after the position applies nothing",
            at: Some(3),
            refuses: None,
            events: empty_events(&[7, 8]),
            applied: &[],
            end: RunEnd::Gap {
                expected: 4,
                found: 7,
            },
        },
        Case {
            name: "a refusal stops the run",
            at: Some(3),
            refuses: Some(5),
            events: empty_events(&[4, 5, 6]),
            applied: &[4],
            end: RunEnd::Refused { seq: 5 },
        },
        Case {
            name: "no snapshot: nothing applies",
            at: None,
            refuses: None,
            events: empty_events(&[1]),
            applied: &[],
            end: RunEnd::NotLoaded,
        },
        Case {
            name: "no events",
            at: Some(3),
            refuses: None,
            events: vec![],
            applied: &[],
            end: RunEnd::Done,
        },
    ];
    for case in cases {
        let mut copy = FakeCopy::at(case.at);
        copy.refuses = case.refuses;
        let run = apply_in_order(&mut copy, &case.events);
        assert_eq!(copy.applied, case.applied, "{}", case.name);
        assert_eq!(
            run,
            AppliedRun {
                events_applied: case.applied.len(),
                forgets_applied: 0,
                end: case.end
            },
            "{}",
            case.name
        );
    }
}

#[test]
fn forgets_are_counted_among_the_events_applied() {
    let mut copy = FakeCopy::at(Some(1));
    let events = vec![added(2, vec![]), forgotten(3, &[1]), forgotten(4, &[2])];
    let run = apply_in_order(&mut copy, &events);
    assert_eq!((run.events_applied, run.forgets_applied), (3, 2));
}

#[test]
fn a_copy_catches_up_by_events_or_rebuilds_from_the_snapshot() {
    struct Case {
        name: &'static str,
        at: Option<u64>,
        refuses: Option<u64>,
        published: PublishedState,
        events: Vec<Event>,
        /// The position of the copy a rebuild makes (`None`: no snapshot to read).
        snapshot: Option<u64>,
        done: CatchUp,
        /// The copy's position afterwards, and whether it is the rebuilt one.
        after: (Option<u64>, bool),
    }
    let done = |events_applied, snapshot_loaded, current| CatchUp {
        events_applied,
        forgets_applied: 0,
        snapshot_loaded,
        current,
    };
    let cases = [
        Case {
            name: "at the published position",
            at: Some(6),
            refuses: None,
            published: published(6, 5),
            events: empty_events(&[6]),
            snapshot: Some(5),
            done: done(0, false, true),
            after: (Some(6), false),
        },
        Case {
            name: "past the published position",
            at: Some(7),
            refuses: None,
            published: published(6, 5),
            events: empty_events(&[6]),
            snapshot: Some(5),
            done: done(0, false, true),
            after: (Some(7), false),
        },
        Case {
            name: "behind, the events cover it",
            at: Some(4),
            refuses: None,
            published: published(6, 3),
            events: empty_events(&[4, 5, 6]),
            snapshot: Some(3),
            done: done(2, false, true),
            after: (Some(6), false),
        },
        Case {
            name: "a gap: the list starts after the position, rebuild",
            at: Some(1),
            refuses: None,
            published: published(11, 10),
            events: empty_events(&[11]),
            snapshot: Some(10),
            done: done(1, true, true),
            after: (Some(11), true),
        },
        Case {
            name: "the snapshot replaced with no events after it, rebuild",
            at: Some(1),
            refuses: None,
            published: published(10, 10),
            events: vec![],
            snapshot: Some(10),
            done: done(0, true, true),
            after: (Some(10), true),
        },
        Case {
            name: "no snapshot yet: build one, then the events",
            at: None,
            refuses: None,
            published: published(6, 5),
            events: empty_events(&[6]),
            snapshot: Some(5),
            done: done(1, true, true),
            after: (Some(6), true),
        },
        Case {
            name: "a refusal: rebuild and apply again",
            at: Some(3),
            refuses: Some(4),
            published: published(5, 3),
            events: empty_events(&[4, 5]),
            snapshot: Some(3),
            done: done(2, true, true),
            after: (Some(5), true),
        },
        Case {
            name: "no snapshot to read: keep what was applied",
            at: Some(3),
            refuses: None,
            published: published(6, 3),
            events: empty_events(&[4, 6]),
            snapshot: None,
            done: done(1, false, false),
            after: (Some(4), false),
        },
        Case {
            name: "a rebuild older than the copy is thrown away",
            at: Some(2),
            refuses: None,
            published: published(5, 1),
            events: empty_events(&[5]),
            snapshot: Some(1),
            done: done(0, false, false),
            after: (Some(2), false),
        },
    ];
    for case in cases {
        let mut copy = FakeCopy::at(case.at);
        copy.refuses = case.refuses;
        let read = Cell::new(false);
        let done = catch_up(
            &mut copy,
            &case.published,
            || {
                read.set(true);
                case.events.clone()
            },
            |_| {
                case.snapshot.map(|seq| FakeCopy {
                    from_snapshot: true,
                    ..FakeCopy::at(Some(seq))
                })
            },
        );
        assert_eq!(done, case.done, "{}", case.name);
        assert_eq!((copy.at, copy.from_snapshot), case.after, "{}", case.name);
        assert_eq!(
            read.get(),
            !is_current(case.at, &case.published),
            "{}: events are read only when behind",
            case.name
        );
    }
}

#[test]
fn a_forget_applied_by_catch_up_leaves_the_index() {
    let index = SnapshotIndex::from_snapshot(snapshot(1, vec![entry(1, "Mario Rossi")]));
    let mut index = index.unwrap();
    let events = vec![
        added(2, vec![entry(2, "Giulia Neri")]),
        forgotten(3, &[1]),
        // The same forget again: ignored.
        forgotten(3, &[1]),
    ];
    let done = catch_up(&mut index, &published(3, 1), || events.clone(), |_| None);
    assert_eq!(
        done,
        CatchUp {
            events_applied: 2,
            forgets_applied: 1,
            snapshot_loaded: false,
            current: true
        }
    );
    assert!(index.by_value("Mario Rossi").is_none());
    assert!(index.by_value("Giulia Neri").is_some());
}

#[test]
fn a_rebuild_applies_the_events_after_the_snapshot() {
    let mut index =
        SnapshotIndex::from_snapshot(snapshot(1, vec![entry(1, "Mario Rossi")])).unwrap();
    // The list was replaced: a snapshot at 10 without Mario, one event after it.
    let fresh = snapshot(10, vec![entry(2, "Giulia Neri")]);
    let done = catch_up(
        &mut index,
        &published(11, 10),
        || vec![added(11, vec![entry(3, "Ugo Bassi")])],
        |_| SnapshotIndex::from_snapshot(fresh.clone()).ok(),
    );
    assert!(done.snapshot_loaded && done.current, "{done:?}");
    assert_eq!(index.seq(), 11);
    assert!(index.by_value("Mario Rossi").is_none());
    assert!(index.by_value("Giulia Neri").is_some());
    assert!(index.by_value("Ugo Bassi").is_some());
}

#[test]
fn a_rebuild_that_empties_the_copy_first_replaces_it_or_leaves_it_empty() {
    // Emptied, then built: the new copy replaces it (an emptied copy has no
    // position, so nothing counts as moving back).
    let mut copy = FakeCopy::at(Some(3));
    let done = catch_up(
        &mut copy,
        &published(9, 8),
        || empty_events(&[9]),
        |copy| {
            *copy = FakeCopy::at(None);
            Some(FakeCopy {
                from_snapshot: true,
                ..FakeCopy::at(Some(8))
            })
        },
    );
    assert!(done.snapshot_loaded && done.current, "{done:?}");
    assert_eq!((copy.at, copy.from_snapshot), (Some(9), true));

    // Emptied, then nothing built: it stays empty and is not current (its
    // requests are refused until a snapshot builds), never the old copy.
    let mut copy = FakeCopy::at(Some(3));
    let done = catch_up(
        &mut copy,
        &published(9, 8),
        || empty_events(&[9]),
        |copy| {
            *copy = FakeCopy::at(None);
            None
        },
    );
    assert!(!done.snapshot_loaded && !done.current, "{done:?}");
    assert_eq!(copy.at, None);
}

/// A copy that records the runs it is handed, and refuses one position.
struct RunCopy {
    inner: FakeCopy,
    runs: Vec<Vec<u64>>,
}

impl FeedFollower for RunCopy {
    fn position(&self) -> Option<u64> {
        self.inner.position()
    }

    fn apply(&mut self, event: &Event) -> bool {
        self.inner.apply(event)
    }

    fn apply_all(&mut self, events: &[Event]) -> usize {
        self.runs.push(seqs(events));
        events.iter().take_while(|e| self.inner.apply(e)).count()
    }
}

#[test]
fn each_run_of_consecutive_events_is_handed_over_at_once() {
    let mut copy = RunCopy {
        inner: FakeCopy::at(Some(2)),
        runs: vec![],
    };
    // 2 is old wherever it stands; 3-5 and 6-7 are two runs around it.
    let events = [
        forgotten(3, &[1]),
        forgotten(4, &[2]),
        added(5, vec![]),
        added(2, vec![]),
        forgotten(6, &[3]),
        forgotten(7, &[4]),
    ];
    let run = apply_in_order(&mut copy, &events);
    assert_eq!(copy.runs, vec![vec![3, 4, 5], vec![6, 7]]);
    assert_eq!(copy.inner.applied, [3, 4, 5, 6, 7]);
    assert_eq!((run.events_applied, run.forgets_applied), (5, 4));
    assert_eq!(run.end, RunEnd::Done);

    // A refusal inside a run: those before it count, the run stops there.
    let mut copy = RunCopy {
        inner: FakeCopy::at(Some(2)),
        runs: vec![],
    };
    copy.inner.refuses = Some(4);
    let run = apply_in_order(&mut copy, &events);
    assert_eq!(copy.runs, vec![vec![3, 4, 5]]);
    assert_eq!(
        run,
        AppliedRun {
            events_applied: 1,
            forgets_applied: 1,
            end: RunEnd::Refused { seq: 4 }
        }
    );
}
