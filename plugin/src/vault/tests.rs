use super::*;
use crate::fake_host::FakeHost;
use crate::shared::SNAPSHOT_KEY;
use crate::shared_snapshot::part_key;
use crate::test_support::*;
use latet_core::mask::MaskStats;

fn vault() -> WorkerVault {
    WorkerVault::new(Detectors::new(&config().detectors).unwrap(), 1 << 20)
}

fn masked(vault: &mut WorkerVault, text: &str) -> (String, MaskStats) {
    let body = serde_json::json!({"messages": [{"role": "user", "content": text}]}).to_string();
    match vault
        .mask(
            latet_core::provider::OPENAI_CHAT,
            body.as_bytes(),
            MaskOptions::default(),
        )
        .unwrap()
    {
        MaskOutcome::Masked {
            body: out, stats, ..
        } => (
            String::from_utf8(out.unwrap_or_else(|| body.into_bytes())).unwrap(),
            stats,
        ),
        MaskOutcome::NeedEntries { values } => panic!("needs {} entries", values.len()),
    }
}

#[test]
fn nothing_published_means_not_ready() {
    let host = FakeHost::alone();
    let mut v = vault();
    let done = v.catch_up(&host);
    assert!(!v.is_ready());
    assert!(!done.current);
}

#[test]
fn catch_up_loads_the_snapshot_then_applies_events() {
    let host = FakeHost::alone();
    publish(&host, 5, 1, vec![mario()], &[added(6, vec![giulia()])]);
    let mut v = vault();
    let done = v.catch_up(&host);
    assert!(done.snapshot_loaded && done.current);
    assert_eq!(done.events_applied, 1);
    assert_eq!(v.index().seq(), 6);
    assert_eq!(v.index().len(), 2);
    // Up to date: the next catch-up reads only the state.
    assert_eq!(
        v.catch_up(&host),
        CatchUp {
            current: true,
            ..CatchUp::default()
        }
    );
}

#[test]
fn a_run_of_forgets_in_one_catch_up_drops_each_value_and_its_memo() {
    let host = FakeHost::alone();
    publish(&host, 1, 1, vec![mario(), giulia()], &[]);
    let mut v = vault();
    v.catch_up(&host);
    let texts = [
        "Please write to Mario Rossi about the contract renewal for next year.",
        "Please write to Giulia Neri about the contract renewal for next year.",
    ];
    for text in texts {
        masked(&mut v, text);
        let (_, stats) = masked(&mut v, text);
        assert!(stats.memo_hits > 0, "{stats:?}");
    }
    // Two forgets in a row: applied together, in one pass.
    publish_events(
        &host,
        1,
        &[forgotten(2, &mario(), 2), forgotten(3, &giulia(), 3)],
    );
    let done = v.catch_up(&host);
    assert_eq!((done.forgets_applied, done.events_applied), (2, 2));
    assert!(done.current && v.index().is_empty());
    assert_eq!(v.index().generation(), 3);
    for (text, surrogate) in texts.iter().zip(["Laura Bianchi", "Paola Conti"]) {
        let body = serde_json::json!({"messages": [{"role": "user", "content": text}]}).to_string();
        let outcome = v
            .mask(
                latet_core::provider::OPENAI_CHAT,
                body.as_bytes(),
                MaskOptions::default(),
            )
            .unwrap();
        assert!(
            matches!(outcome, MaskOutcome::NeedEntries { .. }),
            "a forgotten value is asked for again, never served from the memo"
        );
        assert!(v.index().is_retired(surrogate));
    }
}

#[test]
fn a_forget_drops_the_value_and_the_memo_before_the_next_mask() {
    let host = FakeHost::alone();
    publish(&host, 1, 1, vec![mario()], &[]);
    let mut v = vault();
    v.catch_up(&host);
    let text = "Please write to Mario Rossi about the contract renewal for next year.";
    let (first, _) = masked(&mut v, text);
    assert!(first.contains("Laura Bianchi") && !first.contains("Mario Rossi"));
    // Resent: served from the memo.
    let (again, stats) = masked(&mut v, text);
    assert_eq!(again, first);
    assert!(stats.memo_hits > 0, "{stats:?}");

    // The forget, then the value returns with a new-generation entry.
    let new_mario = entry(
        9,
        "Mario Rossi",
        "Sara Galli",
        latet_core::kind::Kind::Name,
        2,
    );
    publish_events(
        &host,
        1,
        &[forgotten(2, &mario(), 2), added(3, vec![new_mario])],
    );
    let done = v.catch_up(&host);
    assert_eq!((done.forgets_applied, done.events_applied), (1, 2));
    let (after, stats) = masked(&mut v, text);
    assert!(after.contains("Sara Galli"), "{after}");
    assert!(!after.contains("Laura Bianchi") && !after.contains("Mario Rossi"));
    assert_eq!(
        stats.memo_hits, 0,
        "the memo must not serve a forgotten entry"
    );
    // The old surrogate restores nothing.
    let (restored, stats) = latet_core::restore::restore_body(v.index(), b"Laura Bianchi said hi");
    assert!(restored.is_none());
    assert_eq!(stats.declined_retired, 1);
}

#[test]
fn a_gap_in_the_events_reloads_the_snapshot() {
    let host = FakeHost::alone();
    publish(&host, 1, 1, vec![mario()], &[]);
    let mut v = vault();
    v.catch_up(&host);
    // The poller took a new snapshot at seq 10 (events 2..10 are gone from
    // shared data); the worker at 1 cannot apply event 11 directly.
    publish(&host, 10, 2, vec![giulia()], &[added(11, vec![])]);
    let done = v.catch_up(&host);
    assert!(done.snapshot_loaded && done.current, "{done:?}");
    assert_eq!(v.index().seq(), 11);
    assert!(v.index().by_value("Mario Rossi").is_none());
    assert!(v.index().by_value("Giulia Neri").is_some());
}

#[test]
fn a_snapshot_reload_never_moves_the_index_back() {
    let host = FakeHost::alone();
    publish(&host, 1, 1, vec![mario()], &[forgotten(2, &mario(), 2)]);
    let mut v = vault();
    v.catch_up(&host);
    assert_eq!(v.index().seq(), 2);
    // A half-written publication: an older snapshot and state ahead with
    // events missing. Reloading would bring Mario back: refused.
    put_snapshot(&host, &snapshot_compact(1, 1, vec![mario()]));
    publish_events(&host, 1, &[added(5, vec![])]);
    let done = v.catch_up(&host);
    assert!(!done.current && !done.snapshot_loaded, "{done:?}");
    assert_eq!(v.index().seq(), 2);
    assert!(v.index().by_value("Mario Rossi").is_none());
}

#[test]
fn a_reload_drops_the_old_index_first_and_a_damaged_snapshot_leaves_it_empty() {
    let host = FakeHost::alone();
    publish(&host, 1, 1, vec![mario()], &[]);
    let mut v = vault();
    v.catch_up(&host);
    assert!(v.index().by_value("Mario Rossi").is_some());
    // A gap, and the shared snapshot at 10 readable up to its last entry:
    // the old index was dropped before the build, which fails. The vault
    // is empty and not ready (requests refused), never the old index.
    put_snapshot(&host, &snapshot_compact(10, 2, vec![giulia()]));
    let mut damaged = host.shared_value(&part_key(0)).unwrap();
    damaged.pop();
    host.put_shared(&part_key(0), &damaged);
    publish_events(&host, 10, &[added(11, vec![])]);
    let done = v.catch_up(&host);
    assert!(!done.current && !done.snapshot_loaded, "{done:?}");
    assert!(!v.is_ready());
    assert!(v.index().is_empty());
    assert!(v.index().by_value("Mario Rossi").is_none());
    // The next readable snapshot builds.
    publish(&host, 10, 2, vec![giulia()], &[added(11, vec![])]);
    let done = v.catch_up(&host);
    assert!(done.snapshot_loaded && done.current, "{done:?}");
    assert!(v.is_ready());
    assert!(v.index().by_value("Giulia Neri").is_some());
}

#[test]
fn stale_entries_from_a_callout_are_refused() {
    let host = FakeHost::alone();
    publish(&host, 1, 1, vec![mario()], &[forgotten(2, &mario(), 2)]);
    let mut v = vault();
    v.catch_up(&host);
    let answer = latet_core::wire::EntriesResponse {
        version: 1,
        generation: 1,
        entries: vec![giulia()],
    };
    assert!(matches!(
        v.add_entries(answer),
        Err(CoreError::StaleGeneration { .. })
    ));
}

#[test]
fn a_reload_to_a_published_snapshot_drops_the_old_index_before_reading_it() {
    let host = FakeHost::alone();
    publish(&host, 1, 1, vec![mario()], &[]);
    let mut v = vault();
    v.catch_up(&host);
    assert!(v.index().by_value("Mario Rossi").is_some());
    // The state names a snapshot at 10 (a gap for this worker at 1), but
    // the shared copy is gone: the old index was dropped before the read.
    publish_events(&host, 10, &[added(11, vec![])]);
    host.put_shared(SNAPSHOT_KEY, b"");
    let done = v.catch_up(&host);
    assert!(!done.current && !done.snapshot_loaded, "{done:?}");
    assert!(!v.is_ready());
    assert!(v.index().by_value("Mario Rossi").is_none());
}

#[test]
fn a_state_naming_an_older_snapshot_keeps_the_index_when_the_copy_is_unreadable() {
    let host = FakeHost::alone();
    publish(&host, 1, 1, vec![mario()], &[added(2, vec![giulia()])]);
    let mut v = vault();
    v.catch_up(&host);
    assert_eq!(v.index().seq(), 2);
    // State at snapshot 1 with event 3 missing (a gap), the copy damaged:
    // the state does not promise a snapshot past this vault, so the index
    // stays until a copy is read.
    host.put_shared(SNAPSHOT_KEY, b"damaged");
    publish_events(&host, 1, &[added(4, vec![])]);
    let done = v.catch_up(&host);
    assert!(!done.current && !done.snapshot_loaded, "{done:?}");
    assert!(v.is_ready());
    assert!(v.index().by_value("Mario Rossi").is_some());
}

/// The state names a snapshot past this vault but the shared copy is an
/// older one (two pollers racing at a lease handover): the old index is
/// gone and the older copy is not built either (found by review: the early
/// drop had lifted `catch_up`'s never-move-back guard).
#[test]
fn a_reload_never_builds_a_copy_older_than_the_dropped_index() {
    let host = FakeHost::alone();
    publish(&host, 1, 1, vec![mario()], &[added(2, vec![giulia()])]);
    let mut v = vault();
    v.catch_up(&host);
    assert_eq!(v.index().seq(), 2);
    publish(&host, 1, 1, vec![mario()], &[]);
    publish_events(&host, 10, &[added(11, vec![])]);
    let done = v.catch_up(&host);
    assert!(!done.snapshot_loaded, "{done:?}");
    assert!(!v.is_ready());
    assert!(v.index().by_value("Mario Rossi").is_none());
}
