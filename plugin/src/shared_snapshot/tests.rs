use super::*;
use crate::fake_host::FakeHost;
use crate::test_support::*;
use latet_core::kind::Kind;
use latet_core::wire::Entry;
use std::rc::Rc;

/// `n` entries `Person Number <i>` → `Alias Number <i>`.
fn people(n: u8) -> Vec<Entry> {
    (1..=n)
        .map(|i| {
            entry(
                i,
                &format!("Person Number {i:03}"),
                &format!("Alias Number {i:03}"),
                Kind::Name,
                1,
            )
        })
        .collect()
}

fn parts_held(host: &FakeHost) -> usize {
    snapshot_values(host)
        .iter()
        .filter(|(key, value)| key != SNAPSHOT_KEY && !value.is_empty())
        .count()
}

fn holds(host: &FakeHost, needle: &str) -> bool {
    snapshot_values(host)
        .iter()
        .any(|(_, v)| v.windows(needle.len()).any(|w| w == needle.as_bytes()))
}

#[test]
fn a_snapshot_written_in_parts_reads_back_whole_and_a_shorter_one_empties_the_rest() {
    let host = FakeHost::alone();
    let long = snapshot_compact(5, 1, people(40));
    write_snapshot(&host, &long, 200).unwrap();
    assert!(parts_held(&host) >= 8, "{} parts", parts_held(&host));
    assert_eq!(read_snapshot(&host).unwrap(), long);
    // No single value holds the snapshot: each is about a part.
    for (_, value) in snapshot_values(&host) {
        assert!(value.len() < 400, "{} bytes", value.len());
    }
    let short = snapshot_compact(9, 2, people(3));
    write_snapshot(&host, &short, 200).unwrap();
    assert_eq!(read_snapshot(&host).unwrap(), short);
    assert_eq!(parts_held(&host), 1);
    assert!(
        !holds(&host, "Person Number 040"),
        "a stale part kept a value"
    );
    // A deleted key: manifest and every part emptied.
    clear_snapshot(&host).unwrap();
    assert!(read_snapshot(&host).is_none());
    assert_eq!(parts_held(&host), 0);
    assert!(!holds(&host, "Person Number 001"));
}

#[test]
fn parts_of_two_publications_are_never_joined() {
    let host = FakeHost::alone();
    let old = snapshot_compact(5, 1, people(40));
    write_snapshot(&host, &old, 200).unwrap();
    let manifest_old = host.shared_value(SNAPSHOT_KEY).unwrap();
    // A writer half-way through a new publication: its first parts
    // written, the manifest still the old one.
    let new = snapshot_compact(6, 1, people(39));
    let writer = FakeHost::new(Rc::clone(&host.envoy));
    write_snapshot(&writer, &new, 200).unwrap();
    host.put_shared(SNAPSHOT_KEY, &manifest_old);
    assert!(read_snapshot(&host).is_none(), "a mixed snapshot was read");
    // A reader that took the old manifest while the new parts land
    // between its part reads never joins them either.
    let host = FakeHost::alone();
    write_snapshot(&host, &old, 200).unwrap();
    let writer = FakeHost::new(Rc::clone(&host.envoy));
    let new_parts: Vec<(usize, Vec<u8>)> = {
        // Another publication of this Envoy: a later tag.
        let other = FakeHost::alone();
        other.put_shared(PUBLICATION_KEY, b"100");
        write_snapshot(&other, &new, 200).unwrap();
        (0..40)
            .filter_map(|i| Some((i, other.shared_value(&part_key(i))?)))
            .collect()
    };
    *host.before_shared_get.borrow_mut() = Some(Box::new(move |key| {
        if key == part_key(2) {
            for (i, part) in &new_parts {
                writer.put_shared(&part_key(*i), part);
            }
        }
    }));
    assert!(read_snapshot(&host).is_none());
}

#[test]
fn a_read_torn_by_a_writer_is_tried_again_and_gets_one_publication() {
    let host = FakeHost::alone();
    let old = snapshot_compact(5, 1, people(40));
    write_snapshot(&host, &old, 200).unwrap();
    let new = snapshot_compact(6, 1, people(30));
    let writer = FakeHost::new(Rc::clone(&host.envoy));
    let mut written = false;
    *host.before_shared_get.borrow_mut() = Some(Box::new(move |key| {
        // A whole new publication lands after the reader's third part.
        if key == part_key(3) && !written {
            written = true;
            write_snapshot(&writer, &new, 200).unwrap();
        }
    }));
    assert_eq!(
        read_snapshot(&host).unwrap(),
        snapshot_compact(6, 1, people(30))
    );
}

#[test]
fn a_scrub_rewrites_only_the_parts_holding_the_forgotten_entries() {
    let host = FakeHost::alone();
    let all = people(40);
    write_snapshot(&host, &snapshot_compact(5, 1, all.clone()), 200).unwrap();
    let manifest_before = read_manifest(&host).unwrap();
    let forgotten: HashSet<EntryId> = [id(7), id(31)].into();
    assert!(scrub_snapshot(&host, &forgotten).unwrap());
    let manifest = read_manifest(&host).unwrap();
    let changed = manifest
        .parts
        .iter()
        .zip(&manifest_before.parts)
        .filter(|(a, b)| a != b)
        .count();
    assert_eq!(changed, 2);
    let kept: Vec<Entry> = all
        .into_iter()
        .filter(|e| !forgotten.contains(&e.id))
        .collect();
    assert_eq!(read_snapshot(&host).unwrap(), snapshot_compact(5, 1, kept));
    for gone in [
        "Person Number 007",
        "Alias Number 007",
        "Person Number 031",
        "Alias Number 031",
    ] {
        assert!(!holds(&host, gone), "a part still holds a forgotten entry");
    }
    // Nothing to drop: nothing rewritten.
    assert!(!scrub_snapshot(&host, &forgotten).unwrap());
}

#[test]
fn a_scrub_that_cannot_read_a_part_still_scrubs_the_others_and_says_so() {
    let host = FakeHost::alone();
    write_snapshot(&host, &snapshot_compact(5, 1, people(40)), 200).unwrap();
    let mut damaged = host.shared_value(&part_key(0)).unwrap();
    damaged.truncate(damaged.len() - 1);
    host.put_shared(&part_key(0), &damaged);
    let forgotten: HashSet<EntryId> = [id(30)].into();
    assert!(scrub_snapshot(&host, &forgotten).is_err());
    assert!(!holds(&host, "Person Number 030"));
    // A manifest that cannot be read: refused (the poller then takes a
    // new snapshot).
    host.put_shared(SNAPSHOT_KEY, b"{\"json\": true}");
    assert!(scrub_snapshot(&host, &forgotten).is_err());
}

/// Review finding: a part the scrub cannot read (damaged) kept the
/// forgotten entry it holds in shared data until a new snapshot lands
/// (which may be never while the control service is unreachable); so
/// did every part when the manifest could not be read. An unreadable copy
/// serves no reader: it is emptied.
#[test]
fn a_scrub_empties_a_part_it_cannot_read_and_every_part_of_an_unreadable_manifest() {
    let host = FakeHost::alone();
    write_snapshot(&host, &snapshot_compact(5, 1, people(40)), 200).unwrap();
    let mut damaged = host.shared_value(&part_key(0)).unwrap();
    damaged.truncate(damaged.len() - 1);
    host.put_shared(&part_key(0), &damaged);
    let forgotten: HashSet<EntryId> = [id(1)].into();
    assert!(scrub_snapshot(&host, &forgotten).is_err());
    assert!(
        !holds(&host, "Person Number 001"),
        "a damaged part kept a forgotten value"
    );
    let host = FakeHost::alone();
    write_snapshot(&host, &snapshot_compact(5, 1, people(40)), 200).unwrap();
    host.put_shared(SNAPSHOT_KEY, b"{\"json\": true}");
    let forgotten: HashSet<EntryId> = [id(5)].into();
    assert!(scrub_snapshot(&host, &forgotten).is_err());
    assert!(
        !holds(&host, "Person Number 005"),
        "a part behind an unreadable manifest kept a forgotten value"
    );
    // The whole compact snapshot of an earlier build under the manifest's
    // key (shared data outlives a plugin reload in one Envoy).
    let host = FakeHost::alone();
    host.put_shared(SNAPSHOT_KEY, &snapshot_compact(5, 1, people(3)));
    let forgotten: HashSet<EntryId> = [id(2)].into();
    assert!(scrub_snapshot(&host, &forgotten).is_err());
    assert!(
        !holds(&host, "Person Number 002"),
        "a snapshot of an earlier form kept a forgotten value"
    );
}
