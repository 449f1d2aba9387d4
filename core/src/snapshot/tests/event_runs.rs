//! A run of events applied together (`SnapshotIndex::apply_events`, a run
//! of forgets in one pass over the slots) leaves the index as applying
//! them one by one does: the same entries, the same retired surrogates,
//! the same position, the same ids reported forgotten, and the same
//! refusal at the same event.

use super::*;
use proptest::prelude::*;
use std::collections::BTreeSet;

const ENTRIES: u32 = 24;

fn numbered_entry(n: u32) -> Entry {
    let mut e = numbered(n, Kind::Name);
    e.generation = 1;
    e
}

/// What one step of the generated feed does.
#[derive(Clone, Debug)]
enum Step {
    /// Forget these entries (by number; some may be gone already).
    Forget(Vec<u32>),
    /// Forget an id no entry has (its retired surrogate one never given).
    ForgetAbsent,
    /// Add this entry again (a re-creation: a new surrogate).
    Add(u32),
    /// A forget with one retired surrogate too few: refused.
    BadCount,
    /// A forget of an older generation: refused.
    OldGeneration,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => proptest::collection::vec(0..ENTRIES, 1..4).prop_map(Step::Forget),
        1 => Just(Step::ForgetAbsent),
        2 => (0..ENTRIES).prop_map(Step::Add),
        1 => Just(Step::BadCount),
        1 => Just(Step::OldGeneration),
    ]
}

/// The events the steps make, numbered from `seq + 1`, generations rising
/// with each forget; surrogates as the index holds them at that point.
fn events(steps: &[Step], seq: u64) -> Vec<Event> {
    let mut surrogates: Vec<String> = (0..ENTRIES).map(|n| numbered_entry(n).surrogate).collect();
    let mut generation = 1;
    let mut out = Vec::new();
    for (k, step) in steps.iter().enumerate() {
        let seq = seq + 1 + k as u64;
        let forget = |ids: Vec<EntryId>, retired: Vec<RetiredSurrogate>, generation| Event {
            seq,
            body: EventBody::Forgotten {
                ids,
                retired,
                generation,
            },
        };
        out.push(match step {
            Step::Forget(ns) => {
                generation += 1;
                forget(
                    ns.iter().map(|n| numbered_entry(*n).id).collect(),
                    ns.iter()
                        .map(|n| retired_of(&surrogates[*n as usize]))
                        .collect(),
                    generation,
                )
            }
            Step::ForgetAbsent => {
                generation += 1;
                forget(
                    vec![EntryId([0xee; 16])],
                    vec![retired_of("Nobody Here")],
                    generation,
                )
            }
            Step::Add(n) => {
                let mut e = numbered_entry(*n);
                e.surrogate = format!("Nuovo{n} Step{k}");
                e.generation = generation;
                surrogates[*n as usize] = e.surrogate.clone();
                Event {
                    seq,
                    body: EventBody::Added { entries: vec![e] },
                }
            }
            Step::BadCount => forget(vec![numbered_entry(0).id], vec![], generation + 1),
            Step::OldGeneration => forget(
                vec![numbered_entry(1).id],
                vec![retired_of(&surrogates[1])],
                0,
            ),
        });
    }
    out
}

/// Everything a lookup can tell of the index.
fn state(index: &SnapshotIndex) -> (u64, u64, Vec<Option<String>>, Vec<bool>) {
    let mut by_value = Vec::new();
    let mut retired = Vec::new();
    for n in 0..ENTRIES {
        let e = numbered_entry(n);
        by_value.push(index.by_value(&e.value).map(|f| f.surrogate.to_string()));
        retired.push(index.is_retired(&e.surrogate));
        for k in 0..12 {
            retired.push(index.is_retired(&format!("Nuovo{n} Step{k}")));
        }
    }
    (index.seq(), index.generation(), by_value, retired)
}

fn start() -> SnapshotIndex {
    SnapshotIndex::from_snapshot(snapshot((0..ENTRIES).map(numbered_entry).collect())).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn a_run_applied_together_leaves_what_one_by_one_leaves(
        steps in proptest::collection::vec(step(), 0..12),
    ) {
        let mut one_by_one = start();
        let events = events(&steps, one_by_one.seq());
        let mut forgotten_one_by_one = BTreeSet::new();
        let mut applied = 0;
        let mut refusal = None;
        for event in &events {
            match one_by_one.apply_event(event) {
                Ok(a) => {
                    forgotten_one_by_one.extend(a.forgotten);
                    applied += 1;
                }
                Err(e) => {
                    refusal = Some(e.to_string());
                    break;
                }
            }
        }
        let mut together = start();
        let run = together.apply_events(&events);
        prop_assert_eq!(run.events, applied);
        prop_assert_eq!(run.refused.map(|e| e.to_string()), refusal);
        let forgotten: BTreeSet<EntryId> = run.total.forgotten.into_iter().collect();
        prop_assert_eq!(forgotten, forgotten_one_by_one);
        prop_assert_eq!(state(&together), state(&one_by_one));
    }
}

#[test]
fn a_run_of_forgets_is_one_pass_and_drops_each_forgotten_entry() {
    let mut index = start();
    let steps: Vec<Step> = (0..ENTRIES)
        .step_by(2)
        .map(|n| Step::Forget(vec![n]))
        .collect();
    let events = events(&steps, index.seq());
    let run = index.apply_events(&events);
    assert_eq!(run.events, events.len());
    assert!(run.refused.is_none());
    assert_eq!(run.total.forgotten.len(), events.len());
    for n in 0..ENTRIES {
        let e = numbered_entry(n);
        assert_eq!(index.by_value(&e.value).is_some(), n % 2 == 1, "entry {n}");
        assert_eq!(index.is_retired(&e.surrogate), n % 2 == 0, "entry {n}");
    }
    assert_eq!(index.generation(), 1 + events.len() as u64);
}
