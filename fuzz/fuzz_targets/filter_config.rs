//! The filter's configuration parser. Asserts: never panics, and an error
//! never quotes the gateway token. The input is JSON text in which `@T`
//! stands for a token (a marker the input itself may not contain), so the
//! fuzzer can put the token anywhere: in `gatewayToken`, in a broken
//! document, in the environment variable `gatewayTokenEnv` names.
#![no_main]

use latet_filter::config::FilterConfig;
use libfuzzer_sys::fuzz_target;

const MARK: &str = "QqTOKENqQ";

fuzz_target!(|data: &[u8]| {
    // Raw bytes: never panics.
    let _ = FilterConfig::parse(data, |_| None);

    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if text.contains(MARK) {
        return;
    }
    for token in [
        format!("tok-{MARK}-1"),
        format!("{MARK} with space"),
        format!("\"{MARK}\\"),
    ] {
        let config = text.replace("@T", &token);
        let env = |name: &str| (name == "LATET_TOKEN").then(|| token.clone());
        if let Err(err) = FilterConfig::parse(config.as_bytes(), env) {
            let message = format!("{err} {err:?}");
            // An unknown field's *name* is quoted on purpose (a name, not a
            // value: SECURITY.md C1); an unknown variant's value no longer is.
            if message.contains("unknown field") {
                continue;
            }
            assert!(
                !message.contains(MARK),
                "a configuration error quotes the token"
            );
        }
    }
});
