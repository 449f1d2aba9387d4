use super::*;
use crate::fake_host::FakeHost;
use std::collections::BTreeSet;

#[test]
fn all_lists_the_metrics_in_enum_order() {
    for (i, (metric, _, _)) in ALL.iter().enumerate() {
        assert_eq!(*metric as usize, i);
    }
}

/// Every name as Envoy exports it on `/stats/prometheus`, with its kind.
fn exported() -> Vec<(String, MetricKind)> {
    let mut names: Vec<(String, MetricKind)> = ALL
        .iter()
        .map(|(_, name, kind)| (name.to_string(), *kind))
        .collect();
    names.push((REQUESTS_REFUSED.to_string(), Counter));
    names
}

#[test]
fn names_follow_prometheus_conventions() {
    let mut seen = BTreeSet::new();
    for (name, kind) in exported() {
        assert!(name.starts_with("latet_"), "{name}");
        assert!(
            name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
            "{name}"
        );
        assert!(seen.insert(name.clone()), "{name} twice");
        match kind {
            Counter => assert!(name.ends_with("_total"), "{name}"),
            Gauge => assert!(!name.ends_with("_total"), "{name}"),
            Histogram => assert!(name.ends_with("_duration_microseconds"), "{name}"),
        }
    }
}

/// The variants declared in `reply.rs`'s `enum Refusal`, read from the source.
fn declared_refusals() -> Vec<String> {
    let source = include_str!("../reply.rs");
    let start = source.find("pub enum Refusal {").unwrap();
    let body = &source[start..];
    let body = &body[..body.find("\n}").unwrap()];
    body.lines()
        .skip(1)
        .map(str::trim)
        .filter(|line| !line.starts_with("//") && !line.starts_with('#'))
        .filter_map(|line| line.strip_suffix(','))
        .filter(|name| name.chars().all(|c| c.is_ascii_alphanumeric()))
        .map(str::to_string)
        .collect()
}

#[test]
fn every_refusal_has_its_counter() {
    let listed: Vec<String> = REFUSALS.iter().map(|r| format!("{r:?}")).collect();
    let declared = declared_refusals();
    assert!(declared.len() >= 10, "{declared:?}");
    for name in &declared {
        assert!(
            listed.contains(name),
            "Refusal::{name} is not in metrics::REFUSALS: add it there (one line)"
        );
    }
    assert_eq!(
        listed, declared,
        "metrics::REFUSALS lists the refusals in the enum's order"
    );
    for (i, refusal) in REFUSALS.iter().enumerate() {
        assert_eq!(*refusal as usize, i);
    }
}

#[test]
fn refusal_counters_are_named_for_the_tag_regex() {
    // What the regex needs: `latet_requests_refused_`, a cause of word
    // characters, `_total`; Envoy strips the cause into the `cause` label.
    assert_eq!(
        REFUSED_CAUSE_TAG_REGEX,
        r"^wasmcustom\.latet_requests_refused(_(\w+?))_total$"
    );
    let mut causes = BTreeSet::new();
    for &refusal in REFUSALS {
        assert!(refusal.error_type().starts_with("latet_"), "{refusal:?}");
        let cause = cause(refusal);
        assert!(
            !cause.is_empty() && cause.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
            "{cause}"
        );
        assert!(causes.insert(cause), "{cause} twice");
        assert_eq!(
            refused_name(refusal),
            format!("latet_requests_refused_{cause}_total")
        );
    }
    assert_eq!(cause(Refusal::BodyTooLarge), "body_too_large");
}

#[test]
fn define_gives_every_metric_its_kind_and_counts_refusals_by_cause() {
    let host = FakeHost::alone();
    let metrics = Metrics::define(&host);
    let defined = host.envoy.metrics.borrow().clone();
    assert_eq!(defined.len(), ALL.len() + REFUSALS.len());
    for (_, name, kind) in ALL {
        assert!(defined.contains(&(name.to_string(), kind, 0)), "{name}");
    }
    metrics.refused(&host, Refusal::KeyDeleted);
    metrics.refused(&host, Refusal::KeyDeleted);
    metrics.refused(&host, Refusal::BodyTooLarge);
    assert_eq!(host.metric("latet_requests_refused_key_deleted_total"), 2);
    assert_eq!(
        host.metric("latet_requests_refused_body_too_large_total"),
        1
    );
    assert_eq!(host.metric("latet_requests_refused_bad_body_total"), 0);
    metrics.set(&host, Metric::MaskDuration, 12);
    metrics.set(&host, Metric::MaskDuration, 30);
    assert_eq!(host.samples(MASK_DURATION), vec![12, 30]);
}

/// The rows of the `## Metrics` section's tables in the crate's README:
/// (name, type, unit) of every row whose first cell is a `latet_` name.
fn readme_rows() -> Vec<(String, String, String)> {
    let readme = include_str!("../../README.md");
    let start = readme.find("\n## Metrics\n").unwrap();
    let section = &readme[start + 1..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |i| i + 3)];
    section
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let name = cells.get(1)?.strip_prefix("`latet_")?.strip_suffix('`')?;
            Some((
                format!("latet_{name}"),
                cells.get(2)?.to_string(),
                cells.get(3)?.to_string(),
            ))
        })
        .collect()
}

#[test]
fn the_readme_table_lists_exactly_the_metrics() {
    let rows = readme_rows();
    let documented: Vec<(String, String)> = rows
        .iter()
        .map(|(name, kind, _)| (name.clone(), kind.clone()))
        .collect();
    let mut expected: Vec<(String, String)> = exported()
        .into_iter()
        .map(|(name, kind)| (name, format!("{kind:?}").to_lowercase()))
        .collect();
    expected.sort();
    let mut sorted = documented.clone();
    sorted.sort();
    assert_eq!(sorted, expected, "plugin/README.md#metrics");
    for (name, _, unit) in rows {
        if name.ends_with("_microseconds") {
            assert_eq!(unit, "µs", "{name}");
        }
    }
}

#[test]
fn every_local_reply_type_has_its_refusal_counter() {
    let readme = include_str!("../../README.md");
    let start = readme.find("\n## Local replies\n").unwrap() + 1;
    let section = &readme[start..];
    let section = &section[..section.find("\n## ").unwrap()];
    let documented: BTreeSet<&str> = section
        .lines()
        .filter_map(|line| line.split("| `latet_").nth(1)?.split('`').next())
        .collect();
    let expected: BTreeSet<&str> = REFUSALS.iter().map(|r| cause(*r)).collect();
    assert_eq!(documented, expected, "plugin/README.md#local-replies");
}

/// The duration histograms' buckets (µs: 10 µs to 10 s), as every Envoy
/// config in the repository sets them (`stats_config.histogram_bucket_settings`).
const DURATION_BUCKETS_YAML: &str = "[10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000, 1000000, 2500000, 5000000, 10000000]";

#[test]
fn every_envoy_config_extracts_the_cause_and_sets_the_buckets() {
    let configs = [
        include_str!("../../../envoy/gateway.yaml.in"),
        include_str!("../../../envoy/examples/sidecar-openai-tls.yaml"),
        include_str!("../../../envoy/bench/envoy-bench.yaml.in"),
        include_str!("../../smoke/envoy.yaml.in"),
    ];
    for (i, config) in configs.iter().enumerate() {
        assert!(
            config.contains(&format!("regex: '{REFUSED_CAUSE_TAG_REGEX}'")),
            "config {i}: no cause tag"
        );
        assert!(
            config.contains(&format!("buckets: {DURATION_BUCKETS_YAML}")),
            "config {i}: no duration buckets"
        );
    }
}
