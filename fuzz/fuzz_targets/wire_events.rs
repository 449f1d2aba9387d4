//! The wire types: snapshot, feed answer and entries answer parsed from
//! random bytes, and parsed events applied to an index. Asserts: never
//! panics; an applied `forgotten` event leaves none of its entries active; an
//! error never quotes a value of the vault.
#![no_main]

use latet_core::restore::restore_body;
use latet_core::snapshot::SnapshotIndex;
use latet_core::wire::{
    parse_entries_response, parse_feed_answer, parse_snapshot, Event, EventBody, FeedAnswer,
};
use latet_fuzz::{Vault, MASK_VAULT};
use libfuzzer_sys::fuzz_target;

fn apply_all(index: &mut SnapshotIndex, events: &[Event]) {
    for event in events {
        if index.apply_event(event).is_err() {
            continue;
        }
        if let EventBody::Forgotten { ids, .. } = &event.body {
            // The index keeps fingerprints of ids: an entry under a
            // forgotten id's fingerprint may stay only when the event does
            // not retire its surrogate (another id's entry).
            assert!(
                index.entries().all(|e| {
                    !ids.iter().any(|id| id.fingerprint() == e.fingerprint)
                        || !index.is_retired(e.surrogate)
                }),
                "a forgotten entry is still active"
            );
        }
    }
}

fuzz_target!(|data: &[u8]| {
    match parse_snapshot(data) {
        Ok(snapshot) => {
            if let Ok(mut built) = SnapshotIndex::from_snapshot(snapshot) {
                let _ = restore_body(&built, b"{\"a\":\"Laura Bianchi Carla Verdi\"}");
                apply_all(&mut built, &[]);
            }
        }
        Err(err) => {
            let message = err.to_string();
            for (value, surrogate, _) in MASK_VAULT {
                assert!(!message.contains(value) && !message.contains(surrogate));
            }
        }
    }
    // The vault built once per process; copied only when an event or an
    // entries answer parses (what would change it).
    let mut vault = Vault::fresh();
    if let Ok(FeedAnswer::Events { events, .. }) = parse_feed_answer(data) {
        apply_all(vault.own(), &events);
    }
    // The shared-data form of the events (a JSON array).
    if let Ok(events) = serde_json::from_slice::<Vec<Event>>(data) {
        apply_all(vault.own(), &events);
    }
    if let Ok(answer) = parse_entries_response(data) {
        let _ = vault.own().add_entries(answer.generation, answer.entries);
    }
    let vault = vault.get();
    let text = String::from_utf8_lossy(data);
    let _ = restore_body(vault, text.as_bytes());
    let mut found = Vec::new();
    vault.find_values(&text, &mut found);
    vault.find_surrogates(&text, &mut found);
    let _ = vault.surrogate_holdback(&text);
});
