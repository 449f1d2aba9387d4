//! The filter's configuration: parsed and validated here, so that the
//! filter (at `on_configure`, through `plugin/src/config.rs`) and the
//! playground (`playground/`) apply the same rules with the same messages.
//! Every error names the field; none quotes the token or a dictionary entry.

use crate::detect::{DetectorConfig, Detectors};
use crate::provider::{self, PathPattern, ProviderRef, RouteTable};
use crate::restore::{HostPattern, UrlRule};
use serde::Deserialize;
use std::fmt;
use std::time::Duration;

mod json_path;

/// What a bad configuration is: the field, and why (never its value).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("configuration field '{field}': {reason}")]
pub struct ConfigError {
    /// Path of the field (`routes[1].shape`, `.` for the whole document).
    pub field: String,
    pub reason: String,
}

impl ConfigError {
    fn new(field: impl Into<String>, reason: impl Into<String>) -> Self {
        ConfigError {
            field: field.into(),
            reason: reason.into(),
        }
    }
}

/// The gateway token: never printed.
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct GatewayToken(String);

impl GatewayToken {
    /// The token, for the `Authorization` header only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for GatewayToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("GatewayToken(<redacted>)")
    }
}

/// Which provider's module reads requests on which path.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RouteConfig {
    /// A whole path (`/v1/chat/completions`), `*` for any one segment
    /// (`/openai/deployments/*/chat/completions`); matched against the
    /// normalised request path, whole.
    #[serde(default)]
    pub path: Option<String>,
    /// A provider's name (`openai-chat`, `openai-responses`,
    /// `anthropic-messages`, `json`, `text`).
    #[serde(default)]
    pub provider: Option<String>,
    /// Replaced by `path` (a prefix also matched the endpoints nested
    /// under it); refused with a clear error.
    #[serde(default)]
    path_prefix: Option<serde_json::Value>,
    /// Replaced by `provider`; refused with a clear error.
    #[serde(default)]
    shape: Option<serde_json::Value>,
}

/// What to do with a value found in a request header's value (a value in
/// a header *name* always refuses the request).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HeaderFindings {
    /// Replace it by its surrogate (percent-encoded in the path and query).
    #[default]
    Mask,
    /// Refuse the request (422 `latet_value_in_header`).
    Refuse,
}

/// What to do when the control service cannot give entries for new values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailureMode {
    /// Answer 503 with a JSON error; forward nothing.
    #[default]
    Reject,
    /// Replace new values with non-restorable placeholders and forward.
    Redact,
}

/// Which surrogates an answer restores.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RestoreScopeMode {
    /// Only those of entries this request's own masking used (values the
    /// agent sent in it, resent history included).
    #[default]
    Request,
    /// Every active surrogate of the key: for provider APIs that keep the
    /// history themselves (`previous_response_id`, stored conversations).
    Vault,
}

/// The configuration document as written (see README for every field).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawConfig {
    /// Envoy cluster of the control service.
    control_cluster: String,
    /// `:authority` for control-service calls (default: the cluster name).
    #[serde(default)]
    control_authority: Option<String>,
    /// The gateway token itself.
    #[serde(default)]
    gateway_token: Option<GatewayToken>,
    /// The environment variable holding the token.
    #[serde(default)]
    gateway_token_env: Option<String>,
    /// Long-poll wait sent to the feed.
    #[serde(default = "defaults::feed_wait_ms")]
    feed_wait_ms: u64,
    /// Snapshot and entries callout timeout.
    #[serde(default = "defaults::callout_timeout_ms")]
    callout_timeout_ms: u64,
    /// Largest request body masked.
    #[serde(default = "defaults::body_limit_bytes")]
    body_limit_bytes: usize,
    /// The operator's routes, tried before the default ones.
    #[serde(default)]
    routes: Vec<RouteConfig>,
    /// Whether every provider's default paths are routed too.
    #[serde(default = "defaults::default_routes")]
    default_routes: bool,
    /// The provider of paths no route matches.
    #[serde(default = "defaults::default_provider")]
    default_provider: String,
    /// Replaced by `defaultProvider`; refused with a clear error.
    #[serde(default)]
    default_shape: Option<serde_json::Value>,
    /// Detectors on/off and operator rules.
    #[serde(default)]
    detectors: DetectorConfig,
    /// Failure mode.
    #[serde(default)]
    failure_mode: FailureMode,
    /// What a value in a header, the path or the query does.
    #[serde(default)]
    header_findings: HeaderFindings,
    /// Feed silence after which answers are not restored.
    #[serde(default = "defaults::restore_max_staleness_ms")]
    restore_max_staleness_ms: u64,
    /// Which surrogates an answer restores.
    #[serde(default)]
    restore_scope: RestoreScopeMode,
    /// `false` (default), `true`, or the hosts whose URLs may receive values.
    #[serde(default)]
    restore_into_urls: Option<serde_json::Value>,
    /// Memo memory per worker.
    #[serde(default = "defaults::memo_capacity_bytes")]
    memo_capacity_bytes: usize,
    /// Tick period.
    #[serde(default = "defaults::tick_ms")]
    tick_ms: u64,
    /// Lease lifetime.
    #[serde(default = "defaults::lease_ms")]
    lease_ms: u64,
    /// Events kept in shared data after the snapshot.
    #[serde(default = "defaults::max_shared_events")]
    max_shared_events: usize,
}

mod defaults {

    pub fn feed_wait_ms() -> u64 {
        25_000
    }
    pub fn callout_timeout_ms() -> u64 {
        5_000
    }
    pub fn body_limit_bytes() -> usize {
        1 << 20
    }
    pub fn default_provider() -> String {
        "json".to_string()
    }
    pub fn default_routes() -> bool {
        true
    }
    pub fn restore_max_staleness_ms() -> u64 {
        60_000
    }
    pub fn memo_capacity_bytes() -> usize {
        8 << 20
    }
    pub fn tick_ms() -> u64 {
        1_000
    }
    pub fn lease_ms() -> u64 {
        10_000
    }
    pub fn max_shared_events() -> usize {
        1024
    }
}

/// A validated configuration.
#[derive(Debug, Clone)]
pub struct FilterConfig {
    pub control_cluster: String,
    pub control_authority: String,
    pub gateway_token: GatewayToken,
    pub feed_wait: Duration,
    pub callout_timeout: Duration,
    pub body_limit_bytes: usize,
    /// Request path → provider.
    pub routes: RouteTable,
    pub detectors: DetectorConfig,
    pub failure_mode: FailureMode,
    pub header_findings: HeaderFindings,
    pub restore_max_staleness_ms: u64,
    pub restore_scope: RestoreScopeMode,
    pub restore_into_urls: UrlRule,
    pub memo_capacity_bytes: usize,
    pub tick: Duration,
    pub lease_ms: u64,
    pub max_shared_events: usize,
}

impl FilterConfig {
    /// Parses and validates `bytes`; `env` reads an environment variable
    /// (for `gatewayTokenEnv`).
    pub fn parse(bytes: &[u8], env: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let raw: RawConfig = serde_json::from_slice(bytes).map_err(|err| {
            let reason = safe_reason(&err);
            let at = json_path::offset_of(bytes, err.line(), err.column());
            let field = field_path(&json_path::path_at(bytes, at), &reason);
            ConfigError::new(field, reason)
        })?;
        validate(raw, env)
    }

    /// The provider of requests on `path` (the `:path` as sent: it is
    /// normalised before it is matched).
    pub fn provider_for(&self, path: &str) -> ProviderRef {
        self.routes.provider_for(path)
    }
}

/// The path of the field an error is about: for a missing or unknown field
/// serde reports the enclosing object, and the message names the field.
fn field_path(path: &str, reason: &str) -> String {
    let named = ["missing field `", "unknown field `"]
        .iter()
        .find_map(|prefix| reason.strip_prefix(prefix))
        .and_then(|rest| rest.split('`').next());
    match named {
        Some(name) if path == "." => name.to_string(),
        Some(name) if path == name || path.ends_with(&format!(".{name}")) => path.to_string(),
        Some(name) => format!("{path}.{name}"),
        None => path.to_string(),
    }
}

/// serde's message without the offending value: `invalid type: string
/// "…", expected u64` becomes `invalid type, expected u64`, and `unknown
/// variant \`…\`, expected one of …` becomes `unknown variant, expected one
/// of …` (the list holds our names, the quoted variant is whatever was
/// written: a token pasted into the wrong field). A message of any other
/// shape is reduced to `invalid value`, so serde's wording can never carry
/// input text into Envoy's log. Unknown and missing *field names* are kept:
/// they are names.
fn safe_reason(err: &serde_json::Error) -> String {
    let message = err.to_string();
    let message = match message.rfind(" at line ") {
        Some(at) => &message[..at],
        None => message.as_str(),
    };
    if err.is_syntax() || err.is_eof() {
        return format!("not valid JSON ({message})");
    }
    for prefix in [
        "invalid type",
        "invalid value",
        "invalid length",
        "unknown variant",
    ] {
        if let Some(rest) = message.strip_prefix(prefix) {
            // The last `, expected `: the quoted input before it may hold
            // the same words.
            return match rest.rfind(", expected ") {
                Some(at) => format!("{prefix}{}", &rest[at..]),
                None => prefix.to_string(),
            };
        }
    }
    let names_a_field = ["missing field `", "unknown field `", "duplicate field `"]
        .iter()
        .any(|prefix| message.starts_with(prefix));
    if names_a_field {
        return without_odd_field_name(message);
    }
    if SAFE_CUSTOM_MESSAGES.contains(&message) {
        return message.to_string();
    }
    "invalid value".to_string()
}

/// A "missing / unknown / duplicate field" message, kept only when every
/// quoted name in it has the shape of our field names
/// (`json_path::is_field_name`) and the text between the quotes is
/// serde's own (", expected one of ", " or " and the like); otherwise the
/// field is written as `<key>` and the rest dropped: an unknown key is
/// what the operator typed, and a token typed where a key goes must not
/// reach the log.
fn without_odd_field_name(message: &str) -> String {
    const SERDE_TEXT: [&str; 6] = [
        ", expected one of ",
        ", expected ",
        ", ",
        " or ",
        ", there are no fields",
        "",
    ];
    let mut parts = message.split('`');
    let head = parts.next().unwrap_or("");
    let well_formed = parts.enumerate().all(|(k, part)| {
        if k % 2 == 0 {
            json_path::is_field_name(part)
        } else {
            SERDE_TEXT.contains(&part)
        }
    });
    if well_formed {
        message.to_string()
    } else {
        format!("{head}`<key>`")
    }
}

/// Messages our own `Deserialize` impls give (they hold no input).
const SAFE_CUSTOM_MESSAGES: &[&str] = &["invalid kind name"];

fn validate(
    raw: RawConfig,
    env: impl Fn(&str) -> Option<String>,
) -> Result<FilterConfig, ConfigError> {
    if raw.control_cluster.trim().is_empty() {
        return Err(ConfigError::new("controlCluster", "must not be empty"));
    }
    let control_authority = match raw.control_authority {
        Some(a) if a.trim().is_empty() => {
            return Err(ConfigError::new("controlAuthority", "must not be empty"))
        }
        Some(a) => a,
        None => raw.control_cluster.clone(),
    };
    let gateway_token = match (raw.gateway_token, raw.gateway_token_env) {
        (Some(_), Some(_)) => {
            return Err(ConfigError::new(
                "gatewayToken",
                "give either gatewayToken or gatewayTokenEnv, not both",
            ))
        }
        (None, None) => {
            return Err(ConfigError::new(
                "gatewayToken",
                "missing: give gatewayToken or gatewayTokenEnv",
            ))
        }
        (Some(token), None) => {
            if token.0.trim().is_empty() {
                return Err(ConfigError::new("gatewayToken", "must not be empty"));
            }
            token
        }
        (None, Some(name)) => match env(&name) {
            Some(token) if !token.trim().is_empty() => GatewayToken(token.trim().to_string()),
            _ => {
                return Err(ConfigError::new(
                    "gatewayTokenEnv",
                    "the environment variable is unset or empty (pass it with vm_config.environment_variables)",
                ))
            }
        },
    };
    if gateway_token.0.bytes().any(|b| b < 0x21 || b == 0x7f) {
        return Err(ConfigError::new(
            "gatewayToken",
            "must be printable ASCII without spaces",
        ));
    }
    check_range("feedWaitMs", raw.feed_wait_ms, 0, 60_000)?;
    check_range("calloutTimeoutMs", raw.callout_timeout_ms, 100, 120_000)?;
    check_range("bodyLimitBytes", raw.body_limit_bytes as u64, 1, 256 << 20)?;
    check_range(
        "restoreMaxStalenessMs",
        raw.restore_max_staleness_ms,
        1,
        u64::MAX,
    )?;
    check_range(
        "memoCapacityBytes",
        raw.memo_capacity_bytes as u64,
        0,
        1 << 30,
    )?;
    check_range("tickMs", raw.tick_ms, 10, 60_000)?;
    check_range(
        "leaseMs",
        raw.lease_ms,
        raw.tick_ms.saturating_mul(2),
        600_000,
    )
    .map_err(|e| ConfigError::new(e.field, format!("{} (at least twice tickMs)", e.reason)))?;
    check_range("maxSharedEvents", raw.max_shared_events as u64, 1, 1 << 20)?;
    let routes = route_table(raw.routes, raw.default_routes, &raw.default_provider)?;
    if raw.default_shape.is_some() {
        return Err(ConfigError::new(
            "defaultShape",
            "renamed: use defaultProvider (a provider's name)",
        ));
    }
    Detectors::new(&raw.detectors).map_err(|err| match err {
        crate::CoreError::BadRule { index, reason } => {
            ConfigError::new(format!("detectors.rules[{index}]"), reason)
        }
        crate::CoreError::BadNeverMask { index, reason } => {
            ConfigError::new(format!("detectors.neverMask[{index}]"), reason)
        }
        other => ConfigError::new("detectors", other.to_string()),
    })?;
    let restore_into_urls = url_rule(raw.restore_into_urls.as_ref())?;
    Ok(FilterConfig {
        control_cluster: raw.control_cluster,
        control_authority,
        gateway_token,
        feed_wait: Duration::from_millis(raw.feed_wait_ms),
        callout_timeout: Duration::from_millis(raw.callout_timeout_ms),
        body_limit_bytes: raw.body_limit_bytes,
        routes,
        detectors: raw.detectors,
        failure_mode: raw.failure_mode,
        header_findings: raw.header_findings,
        restore_max_staleness_ms: raw.restore_max_staleness_ms,
        restore_scope: raw.restore_scope,
        restore_into_urls,
        memo_capacity_bytes: raw.memo_capacity_bytes,
        tick: Duration::from_millis(raw.tick_ms),
        lease_ms: raw.lease_ms,
        max_shared_events: raw.max_shared_events,
    })
}

/// `restoreIntoUrls`: `false` or absent (never), `true` (any host), or a
/// list of host names (`docs.example.com`, `*.example.com`).
fn url_rule(value: Option<&serde_json::Value>) -> Result<UrlRule, ConfigError> {
    const FIELD: &str = "restoreIntoUrls";
    let hosts = match value {
        None | Some(serde_json::Value::Bool(false)) => return Ok(UrlRule::Never),
        Some(serde_json::Value::Bool(true)) => return Ok(UrlRule::Any),
        Some(serde_json::Value::Array(hosts)) => hosts,
        Some(_) => {
            return Err(ConfigError::new(
                FIELD,
                "must be false, true, or a list of host names",
            ))
        }
    };
    let mut patterns = Vec::with_capacity(hosts.len());
    for (i, host) in hosts.iter().enumerate() {
        let pattern = host.as_str().and_then(HostPattern::parse).ok_or_else(|| {
            ConfigError::new(
                format!("{FIELD}[{i}]"),
                "must be a host name (`docs.example.com` or `*.example.com`), without scheme, port or path",
            )
        })?;
        patterns.push(pattern);
    }
    Ok(UrlRule::Hosts(patterns))
}

/// The route table: the operator's routes (each `path` a whole-path
/// pattern, each `provider` a known name), then the defaults.
fn route_table(
    routes: Vec<RouteConfig>,
    with_defaults: bool,
    default_provider: &str,
) -> Result<RouteTable, ConfigError> {
    let known = || {
        format!(
            "unknown provider, expected one of {}",
            provider::names().join(", ")
        )
    };
    let fallback = provider::by_name(default_provider)
        .ok_or_else(|| ConfigError::new("defaultProvider", known()))?;
    let mut table = Vec::with_capacity(routes.len());
    for (i, route) in routes.into_iter().enumerate() {
        if route.path_prefix.is_some() {
            return Err(ConfigError::new(
                format!("routes[{i}].pathPrefix"),
                "replaced by path: a whole path, '*' for one segment (a prefix also took the endpoints nested under it)",
            ));
        }
        if route.shape.is_some() {
            return Err(ConfigError::new(
                format!("routes[{i}].shape"),
                "renamed: use provider (a provider's name)",
            ));
        }
        let path = route
            .path
            .ok_or_else(|| ConfigError::new(format!("routes[{i}].path"), "missing"))?;
        let pattern = PathPattern::parse(&path)
            .map_err(|reason| ConfigError::new(format!("routes[{i}].path"), reason))?;
        let name = route
            .provider
            .ok_or_else(|| ConfigError::new(format!("routes[{i}].provider"), "missing"))?;
        let provider = provider::by_name(&name)
            .ok_or_else(|| ConfigError::new(format!("routes[{i}].provider"), known()))?;
        table.push((pattern, provider));
    }
    Ok(RouteTable::new(table, with_defaults, fallback))
}

fn check_range(field: &str, value: u64, min: u64, max: u64) -> Result<(), ConfigError> {
    if value < min || value > max {
        return Err(ConfigError::new(
            field,
            format!("must be between {min} and {max}"),
        ));
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests;
