//! Review probe (not a timed test: it asserts nothing on time, it prints
//! figures): the cost of masking one text that holds `n` copies of a
//! retired surrogate and `n` vault values, for doubling `n`. Quadratic
//! work doubles ×4 per step, cubic ×8.
//! `cargo test --release -p latet-core --test review_broken_surrogates_cost -- --ignored --nocapture`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use latet_core::mask::{MaskOptions, MaskOutcome};
use latet_core::provider;

#[allow(dead_code, clippy::large_enum_variant)]
#[path = "../../fuzz/src/lib.rs"]
mod latet_fuzz;

#[test]
#[ignore]
fn masking_cost_grows_with_surrogates_times_values() {
    let vault = latet_fuzz::Vault::fresh();
    let mut last = None;
    for n in [250usize, 500, 1000, 2000] {
        let mut text = String::new();
        for i in 0..n {
            text.push_str("Carla Verdi wrote to Mario Rossi; ");
            if i == 0 {
                text.push_str("new.person@example.org ");
            }
        }
        let mut masker = latet_fuzz::masker(0);
        let start = std::time::Instant::now();
        let outcome = masker
            .mask_request(
                vault.get(),
                provider::PLAIN_TEXT,
                text.as_bytes(),
                MaskOptions::default(),
            )
            .unwrap();
        let took = start.elapsed().as_secs_f64();
        let asked = matches!(outcome, MaskOutcome::NeedEntries { .. });
        let ratio = last.map(|l: f64| took / l).unwrap_or(f64::NAN);
        println!("n {n:5}: {took:8.3} s (x{ratio:.1} the previous; asks entries: {asked})");
        last = Some(took);
    }
}
