use super::*;

fn parse(json: &str) -> Result<FilterConfig, ConfigError> {
    FilterConfig::parse(json.as_bytes(), |name| {
        (name == "LATET_TOKEN").then(|| "env-token".to_string())
    })
}

const BASE: &str = r#""controlCluster": "ctl", "gatewayToken": "tok""#;

#[test]
fn a_minimal_configuration_takes_the_defaults() {
    let config = parse(&format!("{{{BASE}}}")).unwrap();
    assert_eq!(config.control_authority, "ctl");
    assert_eq!(config.gateway_token.expose(), "tok");
    assert_eq!(config.body_limit_bytes, 1 << 20);
    assert_eq!(config.failure_mode, FailureMode::Reject);
    assert_eq!(config.feed_wait, Duration::from_millis(25_000));
    for (path, provider) in [
        ("/v1/chat/completions?x=1", "openai-chat"),
        ("/v1/messages", "anthropic-messages"),
        ("/v1/responses", "openai-responses"),
        ("/v1/messages/batches", "anthropic-batches"),
        ("/v1/messages/batches/b1/results", "json"),
        ("/v1beta/models/g:streamGenerateContent?alt=sse", "gemini"),
        ("/v1//x/../messages", "anthropic-messages"),
        ("/other", "json"),
    ] {
        assert_eq!(config.provider_for(path).name(), provider, "{path}");
    }
}

#[test]
fn the_token_can_come_from_the_environment() {
    let config = parse(r#"{"controlCluster": "ctl", "gatewayTokenEnv": "LATET_TOKEN"}"#).unwrap();
    assert_eq!(config.gateway_token.expose(), "env-token");
}

#[test]
fn operator_routes_match_whole_paths_before_the_defaults() {
    let config = parse(&format!(
        r#"{{{BASE}, "routes": [{{"path": "/v1/messages", "provider": "text"}},
            {{"path": "/openai/deployments/*/chat/completions", "provider": "openai-chat"}}],
            "defaultProvider": "text"}}"#
    ))
    .unwrap();
    for (path, provider) in [
        ("/v1/messages", "text"),
        (
            "/openai/deployments/gpt/chat/completions?api-version=1",
            "openai-chat",
        ),
        ("/v1/chat/completions", "openai-chat"),
        ("/v1/other", "text"),
    ] {
        assert_eq!(config.provider_for(path).name(), provider, "{path}");
    }
    // Without the defaults, only the operator's routes.
    let config = parse(&format!(
        r#"{{{BASE}, "routes": [{{"path": "/v1/messages", "provider": "anthropic-messages"}}],
            "defaultRoutes": false}}"#
    ))
    .unwrap();
    assert_eq!(config.provider_for("/v1/chat/completions").name(), "json");
}

#[test]
fn every_error_names_its_field() {
    // (configuration, the field the error must name)
    let cases: &[(&str, &str)] = &[
        (r#"{"gatewayToken": "tok"}"#, "controlCluster"),
        (
            r#"{"controlCluster": "", "gatewayToken": "tok"}"#,
            "controlCluster",
        ),
        (r#"{"controlCluster": "ctl"}"#, "gatewayToken"),
        (
            r#"{"controlCluster": "ctl", "gatewayToken": "a", "gatewayTokenEnv": "LATET_TOKEN"}"#,
            "gatewayToken",
        ),
        (
            r#"{"controlCluster": "ctl", "gatewayToken": "has space"}"#,
            "gatewayToken",
        ),
        (
            r#"{"controlCluster": "ctl", "gatewayTokenEnv": "UNSET_VAR"}"#,
            "gatewayTokenEnv",
        ),
        (
            &format!(r#"{{{BASE}, "controlAuthority": " "}}"#),
            "controlAuthority",
        ),
        (
            &format!(r#"{{{BASE}, "feedWaitMs": 600000}}"#),
            "feedWaitMs",
        ),
        (
            &format!(r#"{{{BASE}, "restoreScope": "everything"}}"#),
            "restoreScope",
        ),
        (
            &format!(r#"{{{BASE}, "restoreIntoUrls": "yes"}}"#),
            "restoreIntoUrls",
        ),
        (
            &format!(
                r#"{{{BASE}, "restoreIntoUrls": ["docs.example.com", "https://x.example/p"]}}"#
            ),
            "restoreIntoUrls[1]",
        ),
        (
            &format!(r#"{{{BASE}, "restoreIntoUrls": [7]}}"#),
            "restoreIntoUrls[0]",
        ),
        (
            &format!(r#"{{{BASE}, "feedWaitMs": "soon"}}"#),
            "feedWaitMs",
        ),
        (
            &format!(r#"{{{BASE}, "calloutTimeoutMs": 1}}"#),
            "calloutTimeoutMs",
        ),
        (
            &format!(r#"{{{BASE}, "bodyLimitBytes": 0}}"#),
            "bodyLimitBytes",
        ),
        (
            &format!(r#"{{{BASE}, "bodyLimitBytes": -5}}"#),
            "bodyLimitBytes",
        ),
        (
            &format!(r#"{{{BASE}, "routes": [{{"path": "v1", "provider": "text"}}]}}"#),
            "routes[0].path",
        ),
        (
            &format!(r#"{{{BASE}, "routes": [{{"path": "/v1", "provider": "xml"}}]}}"#),
            "routes[0].provider",
        ),
        (
            &format!(r#"{{{BASE}, "routes": [{{"provider": "text"}}]}}"#),
            "routes[0].path",
        ),
        (
            &format!(r#"{{{BASE}, "routes": [{{"pathPrefix": "/v1", "shape": "text"}}]}}"#),
            "routes[0].pathPrefix",
        ),
        (
            &format!(r#"{{{BASE}, "routes": [{{"path": "/v1", "shape": "text"}}]}}"#),
            "routes[0].shape",
        ),
        (
            &format!(r#"{{{BASE}, "defaultShape": "json"}}"#),
            "defaultShape",
        ),
        (
            &format!(r#"{{{BASE}, "defaultProvider": "xml"}}"#),
            "defaultProvider",
        ),
        (
            &format!(r#"{{{BASE}, "routes": [{{"path": "/v1", "provider": "text", "x": 1}}]}}"#),
            "routes[0].x",
        ),
        (
            &format!(r#"{{{BASE}, "defaultShape": "yaml"}}"#),
            "defaultShape",
        ),
        (
            &format!(r#"{{{BASE}, "failureMode": "ignore"}}"#),
            "failureMode",
        ),
        (
            &format!(r#"{{{BASE}, "restoreMaxStalenessMs": 0}}"#),
            "restoreMaxStalenessMs",
        ),
        (
            &format!(r#"{{{BASE}, "memoCapacityBytes": true}}"#),
            "memoCapacityBytes",
        ),
        (&format!(r#"{{{BASE}, "tickMs": 1}}"#), "tickMs"),
        (&format!(r#"{{{BASE}, "leaseMs": 1500}}"#), "leaseMs"),
        (
            &format!(r#"{{{BASE}, "maxSharedEvents": 0}}"#),
            "maxSharedEvents",
        ),
        (
            &format!(r#"{{{BASE}, "detectors": {{"email": "yes"}}}}"#),
            "detectors.email",
        ),
        (
            &format!(r#"{{{BASE}, "detectors": {{"fax": true}}}}"#),
            "detectors.fax",
        ),
        (
            &format!(r#"{{{BASE}, "detectors": {{"rules": [{{"kind": "name", "regex": "("}}]}}}}"#),
            "detectors.rules[0]",
        ),
        (&format!(r#"{{{BASE}, "unknownField": 1}}"#), "unknownField"),
    ];
    for (json, field) in cases {
        let err = parse(json).expect_err(json);
        assert_eq!(err.field, *field, "{json}: {err}");
        assert!(err.to_string().contains(&format!("'{field}'")), "{err}");
    }
}

/// serde_json reports a line and a column; the field is found from them
/// in a configuration written over many lines as in one.
#[test]
fn errors_in_a_pretty_printed_configuration_name_their_field() {
    let cases = [
        (
            "{\n  \"controlCluster\": \"ctl\",\n  \"gatewayToken\": \"tok\",\n  \"routes\": [\n    {\"path\": \"/a\", \"provider\": \"text\"},\n    {\"path\": \"/b\",\n     \"provider\": 7}\n  ]\n}",
            "routes[1].provider",
        ),
        (
            "{\n  \"controlCluster\": \"ctl\",\n  \"gatewayToken\": \"tok\",\n  \"detectors\": {\n    \"email\": true,\n    \"fax\": true\n  }\n}",
            "detectors.fax",
        ),
        (
            "{\n  \"controlCluster\": \"ctl\",\n  \"gatewayToken\": \"tok\",\n  \"routes\": [\n    {\"provider\": \"text\"}\n  ]\n}",
            "routes[0].path",
        ),
    ];
    for (json, field) in cases {
        let err = parse(json).expect_err(json);
        assert_eq!(err.field, field, "{json}: {err}");
    }
}

#[test]
fn unknown_fields_are_named() {
    let err = parse(&format!(r#"{{{BASE}, "bodyLimit": 5}}"#)).unwrap_err();
    assert!(err.reason.contains("bodyLimit"), "{err}");
    // With the fields expected (ours), and nested.
    assert!(err.reason.contains("bodyLimitBytes"), "{err}");
    let err = parse(&format!(
        r#"{{{BASE}, "routes": [{{"path": "/v1", "shapee": "json"}}]}}"#
    ))
    .unwrap_err();
    assert!(err.to_string().contains("unknown field `shapee`"), "{err}");
    assert!(err.field.starts_with("routes[0]"), "{err}");
    // A key not shaped like a field name is not quoted.
    let err = parse(&format!(r#"{{{BASE}, "lt_0123abcd": 5}}"#)).unwrap_err();
    assert!(err.to_string().contains("unknown field `<key>`"), "{err}");
    assert!(!err.to_string().contains("0123abcd"), "{err}");
}

#[test]
fn errors_never_quote_the_token_or_a_dictionary_entry() {
    let cases = [
        r#"{"controlCluster": "ctl", "gatewayToken": ["secret-token-value"]}"#,
        r#"{"controlCluster": "ctl", "gatewayToken": "secret-token-value", "detectors": {"rules": [{"kind": "name", "dictionary": "secret-token-value"}]}}"#,
        r#"{"controlCluster": "ctl", "gatewayToken": "secret-token-value extra"}"#,
    ];
    for json in cases {
        let err = parse(json).unwrap_err();
        assert!(!err.to_string().contains("secret-token-value"), "{err}");
    }
    let config =
        parse(r#"{"controlCluster": "ctl", "gatewayToken": "secret-token-value"}"#).unwrap();
    assert!(!format!("{config:?}").contains("secret-token-value"));
}

/// A missing colon: the string after a key is its value, never a field
/// name to print (found by review: the path walker named it).
#[test]
fn a_missing_colon_never_names_the_token_or_an_entry() {
    let cases = [
        r#"{"controlCluster": "ctl", "gatewayToken" "sk-live-SECRET123"}"#,
        // An unclosed key runs into the token (found by the fuzz smoke).
        "{\"oocrn,tl*luu\u{0}\u{0} SECRET}",
        r#"{"controlCluster": "ctl", "gatewayToken": "tok", "detectors": {"rules": [{"kind": "name", "dictionary" "SECRET Rossi"}]}}"#,
        // A closed key that holds the token, then a comma where the colon
        // goes: the path named the key (found by the fuzz smoke in CI).
        r#"{"controlCluster": "ctl", "routes": [{"pathPrefix": {"controlCluster":"c6l","gateyTokentok-SECRET-1", "feedWaitMs": 1}}]}"#,
        r#"{"controlCluster": "ctl", "routes": [{"pathPrefix": {"gateyTokenSECRET with space", "feedWaitMs": 1}}]}"#,
        r#"{"controlCluster": "ctl", "lt_SECRET0123456789abcdef" 5}"#,
        r#"{"controlCluster": "ctl", "lt_SECRET0123456789abcdef": 5}"#,
        // A key that writes serde's own message around the token.
        r#"{"controlCluster": "ctl", "x`, expected one of `y`, hello SECRET-1 `z": 5}"#,
    ];
    for json in cases {
        let err = parse(json).unwrap_err();
        assert!(!err.to_string().contains("SECRET"), "{err}");
    }
}

#[test]
fn restore_is_scoped_to_the_request_and_kept_out_of_urls_by_default() {
    use crate::config::RestoreScopeMode;
    use crate::restore::{HostPattern, UrlRule};
    let config = parse(&format!("{{{BASE}}}")).unwrap();
    assert_eq!(config.restore_scope, RestoreScopeMode::Request);
    assert_eq!(config.restore_into_urls, UrlRule::Never);
    let config = parse(&format!(
        r#"{{{BASE}, "restoreScope": "vault", "restoreIntoUrls": ["Docs.Example.com", "*.cdn.example"]}}"#
    ))
    .unwrap();
    assert_eq!(config.restore_scope, RestoreScopeMode::Vault);
    assert_eq!(
        config.restore_into_urls,
        UrlRule::Hosts(vec![
            HostPattern::parse("docs.example.com").unwrap(),
            HostPattern::parse("*.cdn.example").unwrap(),
        ])
    );
    let config = parse(&format!(r#"{{{BASE}, "restoreIntoUrls": true}}"#)).unwrap();
    assert_eq!(config.restore_into_urls, UrlRule::Any);
}
