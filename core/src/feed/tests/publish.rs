use super::*;
use crate::feed::{
    append_feed_events, next_call, plan_feed_answer, FeedAnswerPlan, FeedGap, NextCall,
    PublishedState,
};
use crate::wire::FeedAnswer;
use std::collections::HashSet;

fn state(seq: u64, snapshot_seq: u64) -> PublishedState {
    PublishedState {
        seq,
        snapshot_seq,
        feed_answered_at_ms: 1,
        key_deleted: false,
    }
}

#[test]
fn the_next_call_is_the_feed_after_the_published_position_unless_a_snapshot_is_wanted() {
    let published = state(5, 3);
    // A deleted key: nothing to continue from, whatever the position.
    let deleted = PublishedState::key_deleted(Some(&published), 9);
    assert_eq!((deleted.seq, deleted.snapshot_seq), (5, 5));
    let cases = [
        (None, false, NextCall::Snapshot),
        (None, true, NextCall::Snapshot),
        (Some(&published), false, NextCall::EventsAfter(5)),
        (Some(&published), true, NextCall::Snapshot),
        (Some(&deleted), false, NextCall::Snapshot),
    ];
    for (published, wanted, call) in cases {
        assert_eq!(next_call(published, wanted), call, "{published:?} {wanted}");
    }
}

#[test]
fn a_feed_answer_needs_something_published_and_may_ask_for_a_snapshot() {
    let events = FeedAnswer::Events {
        version: 1,
        head: 4,
        events: empty_events(&[4]),
    };
    let required = FeedAnswer::SnapshotRequired {
        version: 1,
        oldest: 50,
        head: 60,
    };
    let deleted = PublishedState::key_deleted(Some(&state(3, 3)), 9);
    let cases = [
        (None, events.clone(), FeedAnswerPlan::NothingPublished),
        (
            Some(deleted),
            events.clone(),
            FeedAnswerPlan::NothingPublished,
        ),
        (None, required.clone(), FeedAnswerPlan::NothingPublished),
        (
            Some(state(3, 3)),
            required,
            FeedAnswerPlan::SnapshotRequired,
        ),
        (
            Some(state(3, 3)),
            events,
            FeedAnswerPlan::Append {
                published: state(3, 3),
                events: empty_events(&[4]),
            },
        ),
    ];
    for (published, answer, plan) in cases {
        assert_eq!(plan_feed_answer(published, answer), plan);
    }
}

#[test]
fn feed_events_are_taken_in_order_after_the_published_position() {
    struct Case {
        name: &'static str,
        published: PublishedState,
        shared: &'static [u64],
        answer: &'static [u64],
        events: &'static [u64],
        seq: u64,
        gap: Option<FeedGap>,
    }
    let cases = [
        Case {
            name: "new events in order",
            published: state(3, 3),
            shared: &[],
            answer: &[4, 5],
            events: &[4, 5],
            seq: 5,
            gap: None,
        },
        Case {
            name: "events already published are skipped",
            published: state(5, 3),
            shared: &[4, 5],
            answer: &[4, 5, 5, 6],
            events: &[4, 5, 6],
            seq: 6,
            gap: None,
        },
        Case {
            name: "an empty answer changes no position",
            published: state(5, 3),
            shared: &[4, 5],
            answer: &[],
            events: &[4, 5],
            seq: 5,
            gap: None,
        },
        Case {
            name: "an answer starting past the position is a gap",
            published: state(3, 3),
            shared: &[],
            answer: &[9],
            events: &[],
            seq: 3,
            gap: Some(FeedGap { after: 3, found: 9 }),
        },
        Case {
            name: "events before a gap are taken, none after it",
            published: state(3, 3),
            shared: &[],
            answer: &[4, 6, 7],
            events: &[4],
            seq: 4,
            gap: Some(FeedGap { after: 4, found: 6 }),
        },
        Case {
            name: "leftovers outside the snapshot-to-position range are cut",
            published: state(5, 3),
            shared: &[2, 3, 4, 5, 6],
            answer: &[],
            events: &[4, 5],
            seq: 5,
            gap: None,
        },
    ];
    for case in cases {
        let publication = append_feed_events(
            case.published,
            empty_events(case.shared),
            empty_events(case.answer),
            99,
        );
        assert_eq!(seqs(&publication.events), case.events, "{}", case.name);
        assert_eq!(publication.state.seq, case.seq, "{}", case.name);
        assert_eq!(
            publication.state.snapshot_seq, case.published.snapshot_seq,
            "{}: the snapshot does not move",
            case.name
        );
        assert_eq!(publication.state.feed_answered_at_ms, 99, "{}", case.name);
        assert_eq!(
            publication.advanced,
            case.seq != case.published.seq,
            "{}",
            case.name
        );
        assert_eq!(publication.gap, case.gap, "{}", case.name);
        assert_eq!(publication.forgotten, None, "{}", case.name);
    }
}

#[test]
fn a_forget_taken_scrubs_the_earlier_added_events_and_names_what_to_scrub() {
    let shared = vec![added(4, vec![entry(1, "Mario"), entry(2, "Giulia")])];
    let answer = vec![forgotten(5, &[1]), added(6, vec![entry(1, "Mario")])];
    let publication = append_feed_events(state(4, 3), shared, answer, 7);
    assert_eq!(
        values(&publication.events),
        vec![
            vec!["Giulia".to_string()],
            vec!["<forgotten>".into()],
            vec!["Mario".into()],
        ]
    );
    let ids: HashSet<EntryId> = [id(1)].into();
    assert_eq!(publication.forgotten, Some(ids));
    assert_eq!(publication.state.seq, 6);

    // A forget already published is not taken again: nothing to scrub.
    let shared = publication.events;
    let again = append_feed_events(publication.state, shared, vec![forgotten(5, &[1])], 8);
    assert_eq!(again.forgotten, None);
    assert!(!again.advanced);
}

#[test]
fn more_events_than_the_maximum_want_a_new_snapshot() {
    let cases = [
        (&[4, 5][..], 2, false),
        (&[4, 5, 6][..], 2, true),
        (&[], 0, false),
    ];
    for (answer, max, too_many) in cases {
        let publication = append_feed_events(state(3, 3), vec![], empty_events(answer), 1);
        assert_eq!(
            publication.too_many_events(max),
            too_many,
            "{answer:?} max {max}"
        );
    }
}

#[test]
fn a_snapshot_publishes_an_empty_list_at_its_own_position() {
    assert_eq!(
        PublishedState::at_snapshot(7, 42),
        PublishedState {
            seq: 7,
            snapshot_seq: 7,
            feed_answered_at_ms: 42,
            key_deleted: false
        }
    );
}

#[test]
fn the_state_record_keeps_its_shared_layout() {
    let json = serde_json::to_string(&state(5, 3)).unwrap();
    assert_eq!(json, r#"{"seq":5,"snapshotSeq":3,"feedAnsweredAtMs":1}"#);
    assert_eq!(
        serde_json::from_str::<PublishedState>(&json).unwrap(),
        state(5, 3)
    );
}
