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
    assert_eq!(
        config.shape_for("/v1/chat/completions?x=1"),
        ShapeName::OpenaiChat
    );
    assert_eq!(
        config.shape_for("/v1/messages"),
        ShapeName::AnthropicMessages
    );
    assert_eq!(
        config.shape_for("/v1/responses"),
        ShapeName::OpenaiResponses
    );
    assert_eq!(config.shape_for("/other"), ShapeName::Json);
}

#[test]
fn the_token_can_come_from_the_environment() {
    let config = parse(r#"{"controlCluster": "ctl", "gatewayTokenEnv": "LATET_TOKEN"}"#).unwrap();
    assert_eq!(config.gateway_token.expose(), "env-token");
}

#[test]
fn the_longest_route_prefix_wins() {
    let config = parse(&format!(
        r#"{{{BASE}, "routes": [{{"pathPrefix": "/v1", "shape": "text"}},
            {{"pathPrefix": "/v1/chat", "shape": "openai-chat"}}], "defaultShape": "text"}}"#
    ))
    .unwrap();
    assert_eq!(
        config.shape_for("/v1/chat/completions"),
        ShapeName::OpenaiChat
    );
    assert_eq!(config.shape_for("/v1/other"), ShapeName::Text);
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
            &format!(r#"{{{BASE}, "routes": [{{"pathPrefix": "v1", "shape": "text"}}]}}"#),
            "routes[0].pathPrefix",
        ),
        (
            &format!(r#"{{{BASE}, "routes": [{{"pathPrefix": "/v1", "shape": "xml"}}]}}"#),
            "routes[0].shape",
        ),
        (
            &format!(r#"{{{BASE}, "routes": [{{"pathPrefix": "/v1", "shape": "text", "x": 1}}]}}"#),
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

#[test]
fn unknown_fields_are_named() {
    let err = parse(&format!(r#"{{{BASE}, "bodyLimit": 5}}"#)).unwrap_err();
    assert!(err.reason.contains("bodyLimit"), "{err}");
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
