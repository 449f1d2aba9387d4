//! The SSE restorer under random chunking: a stream fed in random pieces
//! gives exactly the bytes it gives fed whole. Also: the whole-body
//! restorer never panics on the same bytes.
#![no_main]

use arbitrary::Unstructured;
use latet_core::restore::{restore_body, SseRestorer};
use latet_core::snapshot::SnapshotIndex;
use latet_fuzz::index;
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

/// The restore fixtures' vault (core/tests/fixtures/answers/vault.json).
fn vault() -> &'static SnapshotIndex {
    static VAULT: OnceLock<SnapshotIndex> = OnceLock::new();
    VAULT.get_or_init(|| {
        index(
            &[
                ("Mario Rossi", "Luca Bianchi", "name"),
                ("Ugo", "Luca", "name"),
                ("mario.rossi@acme.it", "laura.bianchi@qzv-corp.it", "email"),
                ("acme.it", "qzv-corp.it", "domain"),
                ("+39 347 123 4567", "+39 348 765 4321", "phone"),
                ("José Núñez", "Andrés Peña", "name"),
                ("DE89370400440532013000", "DE75512108001245126199", "iban"),
                ("Project \"Blue\" Fox", "Orchid Nine", "codename"),
                (
                    "sk-proj-AbC123realKEY456",
                    "sk-proj-XyZ789fakeKEY012",
                    "secret",
                ),
            ],
            &["Carla Verdi", "ana.lopez@qzv-corp.it"],
        )
    })
}

fn restore(stream: &[u8], cuts: &[usize]) -> Vec<u8> {
    let index = vault();
    let mut restorer = SseRestorer::new();
    let mut out = Vec::new();
    let mut at = 0;
    for &cut in cuts {
        restorer.push(index, &stream[at..cut], &mut out);
        at = cut;
    }
    restorer.push(index, &stream[at..], &mut out);
    restorer.finish(index, &mut out);
    out
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(count) = u.int_in_range(0u8..=32) else {
        return;
    };
    let mut picks = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let Ok(pick) = u.arbitrary::<u16>() else {
            break;
        };
        picks.push(pick);
    }
    let stream = u.take_rest();
    let mut cuts: Vec<usize> = picks
        .iter()
        .map(|&p| {
            if stream.is_empty() {
                0
            } else {
                p as usize % (stream.len() + 1)
            }
        })
        .collect();
    cuts.sort_unstable();
    let whole = restore(stream, &[]);
    let pieces = restore(stream, &cuts);
    assert!(
        whole == pieces,
        "chunking changed the restored stream (cuts {cuts:?})"
    );
    let every_byte: Vec<usize> = (1..stream.len().min(256)).collect();
    if stream.len() < 256 {
        assert!(
            whole == restore(stream, &every_byte),
            "byte-by-byte changed the restored stream"
        );
    }
    let _ = restore_body(vault(), stream);
});
