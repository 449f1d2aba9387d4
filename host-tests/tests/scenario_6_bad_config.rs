//! Scenario 6: bad configurations. For each field, its typical mistake makes
//! the filter refuse to start (both roots: `latet` and `latet-sync`), with an
//! error log line that names the field — and never quotes the token or a
//! dictionary entry.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use host_tests::gateway::{filter_wasm, FILTER_ROOT, SYNC_ROOT, VM_ID};
use host_tests::{Host, HostError, VmSpec};

/// Secrets that must never be logged.
const TOKEN: &str = "lt_s3cret-token-value";
const DICTIONARY_ENTRY: &str = "Zebedeo Quintavalle";

/// A configuration with the two required fields and `extra` added.
fn with(extra: &str) -> String {
    format!("{{\"controlCluster\": \"latet_control\", \"gatewayToken\": \"{TOKEN}\", {extra}}}")
}

/// (what is wrong, configuration, field the message must name)
fn cases() -> Vec<(&'static str, String, &'static str)> {
    vec![
        ("no configuration at all", String::new(), "."),
        ("YAML instead of JSON", "controlCluster: latet_control".into(), "."),
        ("a list instead of an object", "[]".into(), "."),
        ("controlCluster missing", format!("{{\"gatewayToken\": \"{TOKEN}\"}}"), "controlCluster"),
        (
            "controlCluster empty",
            format!("{{\"controlCluster\": \" \", \"gatewayToken\": \"{TOKEN}\"}}"),
            "controlCluster",
        ),
        (
            "controlCluster a number",
            format!("{{\"controlCluster\": 8787, \"gatewayToken\": \"{TOKEN}\"}}"),
            "controlCluster",
        ),
        ("controlAuthority empty", with("\"controlAuthority\": \"\""), "controlAuthority"),
        ("no token", "{\"controlCluster\": \"latet_control\"}".into(), "gatewayToken"),
        ("token and token env both", with("\"gatewayTokenEnv\": \"LATET_TOKEN\""), "gatewayToken"),
        (
            "token empty",
            "{\"controlCluster\": \"latet_control\", \"gatewayToken\": \"\"}".into(),
            "gatewayToken",
        ),
        (
            "token pasted with its Bearer prefix",
            format!("{{\"controlCluster\": \"latet_control\", \"gatewayToken\": \"Bearer {TOKEN}\"}}"),
            "gatewayToken",
        ),
        (
            "token env variable not passed to the VM",
            "{\"controlCluster\": \"latet_control\", \"gatewayTokenEnv\": \"LATET_NOT_SET\"}".into(),
            "gatewayTokenEnv",
        ),
        ("feedWaitMs over the service's cap", with("\"feedWaitMs\": 120000"), "feedWaitMs"),
        ("feedWaitMs as a string", with("\"feedWaitMs\": \"25000\""), "feedWaitMs"),
        ("calloutTimeoutMs zero", with("\"calloutTimeoutMs\": 0"), "calloutTimeoutMs"),
        ("calloutTimeoutMs in seconds", with("\"calloutTimeoutMs\": 5"), "calloutTimeoutMs"),
        ("bodyLimitBytes negative", with("\"bodyLimitBytes\": -1"), "bodyLimitBytes"),
        ("bodyLimitBytes zero", with("\"bodyLimitBytes\": 0"), "bodyLimitBytes"),
        ("bodyLimitBytes with a unit", with("\"bodyLimitBytes\": \"1MiB\""), "bodyLimitBytes"),
        (
            "routes an object, not a list",
            with("\"routes\": {\"path\": \"/v1/chat/completions\", \"provider\": \"openai-chat\"}"),
            "routes",
        ),
        (
            "route path without its slash",
            with("\"routes\": [{\"path\": \"v1/chat/completions\", \"provider\": \"openai-chat\"}]"),
            "routes[0].path",
        ),
        (
            "route provider misspelt",
            with("\"routes\": [{\"path\": \"/v1/messages\", \"provider\": \"anthropic\"}]"),
            "routes[0].provider",
        ),
        (
            "route written the old way (a prefix)",
            with("\"routes\": [{\"pathPrefix\": \"/v1/messages\", \"shape\": \"anthropic-messages\"}]"),
            "routes[0].pathPrefix",
        ),
        ("defaultProvider unknown", with("\"defaultProvider\": \"xml\""), "defaultProvider"),
        ("detector switch as a string", with("\"detectors\": {\"email\": \"yes\"}"), "detectors.email"),
        ("detector misspelt", with("\"detectors\": {\"emails\": true}"), "detectors.emails"),
        (
            "rule regex that does not compile",
            with("\"detectors\": {\"rules\": [{\"kind\": \"employee\", \"regex\": \"([A-Z\"}]}"),
            "detectors.rules[0]",
        ),
        (
            "rule with neither regex nor dictionary",
            with("\"detectors\": {\"rules\": [{\"kind\": \"employee\"}]}"),
            "detectors.rules[0]",
        ),
        (
            "rule kind with a space",
            with(&format!(
                "\"detectors\": {{\"rules\": [{{\"kind\": \"staff name\", \"dictionary\": [\"{DICTIONARY_ENTRY}\"]}}]}}"
            )),
            "detectors.rules[0]",
        ),
        ("failureMode unknown", with("\"failureMode\": \"open\""), "failureMode"),
        ("failureMode capitalised", with("\"failureMode\": \"Reject\""), "failureMode"),
        ("restoreMaxStalenessMs zero", with("\"restoreMaxStalenessMs\": 0"), "restoreMaxStalenessMs"),
        ("memoCapacityBytes with a unit", with("\"memoCapacityBytes\": \"8MB\""), "memoCapacityBytes"),
        ("memoCapacityBytes over 1 GiB", with("\"memoCapacityBytes\": 2147483648"), "memoCapacityBytes"),
        ("tickMs too short", with("\"tickMs\": 5"), "tickMs"),
        ("leaseMs shorter than two ticks", with("\"tickMs\": 1000, \"leaseMs\": 1500"), "leaseMs"),
        ("maxSharedEvents zero", with("\"maxSharedEvents\": 0"), "maxSharedEvents"),
        ("a field misspelt", with("\"gatewayTokn\": \"x\""), "gatewayTokn"),
    ]
}

#[test]
fn each_fields_typical_mistake_refuses_to_start_naming_the_field() {
    let host = Host::new(&filter_wasm().unwrap()).unwrap();
    let mut failures = Vec::new();
    for (n, (mistake, config, field)) in cases().into_iter().enumerate() {
        for root in [FILTER_ROOT, SYNC_ROOT] {
            host.clear_records();
            let name = format!("case-{n}-{root}");
            let result = host.start_vm(VmSpec::new(&name, VM_ID).root(root, config.as_str()));
            let refused = matches!(result, Err(HostError::ConfigureRefused { .. }));
            let wanted = format!("configuration field '{field}'");
            let errors: Vec<String> = host
                .logs()
                .into_iter()
                .filter(|(vm, level, _)| *vm == name && *level >= 4)
                .map(|(_, _, message)| message)
                .collect();
            let named = errors.iter().any(|line| line.contains(&wanted));
            let leaked = host
                .emitted_strings()
                .iter()
                .any(|line| line.contains(TOKEN) || line.contains(DICTIONARY_ENTRY));
            if !refused || !named || leaked {
                failures.push(format!(
                    "{mistake} ({root}): refused {refused}, names '{field}' {named}, \
                     leaks a secret {leaked}; error lines {errors:?}\n{}",
                    host.dump()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));

    // The same host starts a good configuration (the refusals above are
    // about the fields, not the harness).
    let good = with("\"failureMode\": \"redact\"");
    for root in [FILTER_ROOT, SYNC_ROOT] {
        host.start_vm(VmSpec::new(&format!("good-{root}"), VM_ID).root(root, good.as_str()))
            .unwrap_or_else(|e| panic!("{e}\n{}", host.dump()));
    }
}
