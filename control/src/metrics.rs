//! Prometheus metrics (`GET /metrics`), all prefixed `latet_`. Labels are
//! key names, routes, statuses and outcomes — never a value.

use crate::error::Result;
use crate::http::{blocking, AppState};
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;

/// Share of the value limit (values + retired surrogates) at which
/// `latet_vault_near_limit` turns to 1.
pub const NEAR_LIMIT_RATIO: f64 = 0.9;

/// Counters kept in memory since start.
#[derive(Default)]
pub struct Metrics {
    requests: Mutex<BTreeMap<(String, u16), u64>>,
    /// (path, outcome) → calls.
    forgets: Mutex<BTreeMap<(&'static str, &'static str), u64>>,
    /// path → values forgotten.
    forgotten_values: Mutex<BTreeMap<&'static str, u64>>,
}

impl Metrics {
    /// Counts one request by route template and status.
    pub fn count_request(&self, route: &str, status: u16) {
        if let Ok(mut requests) = self.requests.lock() {
            *requests.entry((route.to_string(), status)).or_default() += 1;
        }
    }

    /// Counts one forget call by path (`apps`, `admin`) and outcome.
    pub fn count_forget<T>(&self, path: &'static str, result: &Result<T>)
    where
        T: ForgottenCount,
    {
        let outcome = match result {
            Ok(_) => "ok",
            Err(err) if err.status_and_code().0.is_server_error() => "unavailable",
            Err(_) => "refused",
        };
        if let Ok(mut forgets) = self.forgets.lock() {
            *forgets.entry((path, outcome)).or_default() += 1;
        }
        if let Ok(counts) = result {
            if let Ok(mut values) = self.forgotten_values.lock() {
                *values.entry(path).or_default() += counts.forgotten_count();
            }
        }
    }
}

/// Something that says how many values it forgot.
pub trait ForgottenCount {
    fn forgotten_count(&self) -> u64;
}

impl ForgottenCount for crate::vault::ForgetCounts {
    fn forgotten_count(&self) -> u64 {
        self.forgotten
    }
}

fn label(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// `GET /metrics`
pub async fn render(State(state): State<AppState>) -> impl IntoResponse {
    let vaults = state.vaults.clone();
    let keys = blocking(move || vaults.list_keys()).await;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# HELP latet_up 1 when the store answered this scrape."
    );
    let _ = writeln!(out, "# TYPE latet_up gauge");
    let _ = writeln!(out, "latet_up {}", u8::from(keys.is_ok()));
    if let Ok(keys) = keys {
        let gauges: [(&str, &str); 5] = [
            ("latet_vault_values", "Values in the key's vault."),
            (
                "latet_vault_retired_surrogates",
                "Retired surrogates of the key (kept as keyed hashes).",
            ),
            ("latet_vault_value_limit", "The key's limit of values."),
            (
                "latet_vault_fill_ratio",
                "(values + retired surrogates) / value limit.",
            ),
            (
                "latet_vault_near_limit",
                "1 when values + retired surrogates reach 90% of the value limit (V6).",
            ),
        ];
        for (name, help) in gauges {
            let _ = writeln!(out, "# HELP {name} {help}");
            let _ = writeln!(out, "# TYPE {name} gauge");
            for k in &keys {
                let weight = (k.values + k.retired) as f64;
                let limit = k.key.value_limit.max(1) as f64;
                let value = match name {
                    "latet_vault_values" => k.values as f64,
                    "latet_vault_retired_surrogates" => k.retired as f64,
                    "latet_vault_value_limit" => k.key.value_limit as f64,
                    "latet_vault_fill_ratio" => weight / limit,
                    _ => f64::from(u8::from(weight >= NEAR_LIMIT_RATIO * limit)),
                };
                let _ = writeln!(out, "{name}{{key=\"{}\"}} {value}", label(&k.key.name));
            }
        }
    }
    let _ = writeln!(
        out,
        "# HELP latet_http_requests_total Requests by route and status."
    );
    let _ = writeln!(out, "# TYPE latet_http_requests_total counter");
    if let Ok(requests) = state.metrics.requests.lock() {
        for ((route, status), n) in requests.iter() {
            let _ = writeln!(
                out,
                "latet_http_requests_total{{route=\"{}\",status=\"{status}\"}} {n}",
                label(route)
            );
        }
    }
    let _ = writeln!(out, "# HELP latet_forget_calls_total Forget calls by path (apps, admin) and outcome (ok, refused, unavailable).");
    let _ = writeln!(out, "# TYPE latet_forget_calls_total counter");
    if let Ok(forgets) = state.metrics.forgets.lock() {
        for ((path, outcome), n) in forgets.iter() {
            let _ = writeln!(
                out,
                "latet_forget_calls_total{{path=\"{path}\",outcome=\"{outcome}\"}} {n}"
            );
        }
    }
    let _ = writeln!(
        out,
        "# HELP latet_forgotten_values_total Values forgotten, by path."
    );
    let _ = writeln!(out, "# TYPE latet_forgotten_values_total counter");
    if let Ok(values) = state.metrics.forgotten_values.lock() {
        for (path, n) in values.iter() {
            let _ = writeln!(out, "latet_forgotten_values_total{{path=\"{path}\"}} {n}");
        }
    }
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], out)
}
