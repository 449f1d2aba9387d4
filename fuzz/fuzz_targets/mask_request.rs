//! The request masker on random bodies × shapes. Asserts: never panics;
//! when the body is valid JSON the output is valid JSON; with and without
//! the memo (and on a memo hit) the output is the same; and for the shapes
//! where every string is what a person wrote (`Json`, `Text`), no vault
//! value is left written in the output.
#![no_main]

use latet_core::provider;
use latet_fuzz::{json_strings, mask_resolving, masker, shape_of, values_in, Vault};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, body)) = data.split_first() else {
        return;
    };
    let shape = shape_of(selector);
    // The vault built once per process; copied only if new values change it.
    let mut vault = Vault::fresh();
    let mut with_memo = masker(1 << 20);
    let first = mask_resolving(&mut with_memo, &mut vault, shape, body);
    let again = mask_resolving(&mut with_memo, &mut vault, shape, body);
    let mut without_memo = masker(0);
    let plain = mask_resolving(&mut without_memo, &mut vault, shape, body);
    assert_eq!(first, again, "a memo hit changed the output");
    assert_eq!(first, plain, "the memo changed the output");

    let Ok(Some(masked)) = first else {
        return;
    };
    let out: &[u8] = masked.as_deref().unwrap_or(body);
    if shape == provider::PLAIN_TEXT {
        let text = std::str::from_utf8(out).expect("a masked text is UTF-8");
        assert!(
            values_in(vault.get(), text).is_empty(),
            "a vault value left in a masked text"
        );
        return;
    }
    let input_ok = serde_json::from_slice::<serde_json::Value>(body).is_ok();
    let output = serde_json::from_slice::<serde_json::Value>(out);
    if input_ok {
        assert!(output.is_ok(), "valid JSON in, invalid JSON out");
    }
    if shape == provider::GENERIC_JSON {
        if let Ok(doc) = output {
            let mut strings = Vec::new();
            json_strings(&doc, &mut strings);
            for s in &strings {
                assert!(
                    values_in(vault.get(), s).is_empty(),
                    "a vault value left in a masked string"
                );
            }
        }
    }
});
