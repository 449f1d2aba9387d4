//! Which provider a request path goes to, in a way a path cannot fool.
//!
//! The path is normalised before it is matched ([`normalize_path`]): query
//! and fragment dropped, `;params` dropped from each segment, percent-encoded
//! unreserved characters decoded, backslashes read as slashes, repeated
//! slashes merged, `.` and `..` segments resolved, a trailing slash dropped,
//! ASCII lower-cased. A route matches the whole normalised path, segment by
//! segment (`*` stands for any one segment, `*:method` for one that ends in
//! `:method`): `/v1/messages` is not
//! `/v1/messages/batches`, which nests the API and so must never be read as
//! its parent's shape. A path no route matches goes to the fallback
//! provider (generic JSON: every string and key masked).

use super::{ProviderRef, REGISTRY};

/// A route pattern: whole segments, `*` for any one segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathPattern {
    segments: Vec<String>,
}

impl PathPattern {
    /// Parses `/v1/chat/completions` or `/openai/deployments/*/chat/completions`.
    /// The pattern is normalised like a path; errors say why (the pattern is
    /// the operator's own text, never a request value).
    pub fn parse(pattern: &str) -> Result<Self, &'static str> {
        if !pattern.starts_with('/') {
            return Err("must start with '/'");
        }
        if pattern.contains(['?', '#']) {
            return Err("must not hold a query or a fragment");
        }
        let normal = normalize_path(pattern);
        Ok(PathPattern {
            segments: segments(&normal).map(str::to_string).collect(),
        })
    }

    /// Whether the normalised `path` matches, whole.
    pub fn matches(&self, normal_path: &str) -> bool {
        let mut path = segments(normal_path);
        for want in &self.segments {
            match path.next() {
                Some(seg) if segment_matches(want, seg) => {}
                _ => return false,
            }
        }
        path.next().is_none()
    }

    /// Wildcards in the pattern: fewer is more specific.
    fn wildcards(&self) -> usize {
        self.segments.iter().filter(|s| s.starts_with('*')).count()
    }
}

/// `*` matches any segment; `*suffix` (Gemini's `*:generatecontent`) a
/// segment that ends in `suffix` after at least one byte; else the segment
/// as written.
fn segment_matches(want: &str, seg: &str) -> bool {
    match want.strip_prefix('*') {
        Some("") => true,
        Some(suffix) => seg.len() > suffix.len() && seg.ends_with(suffix),
        None => want == seg,
    }
}

fn segments(normal: &str) -> impl Iterator<Item = &str> {
    normal.split('/').filter(|s| !s.is_empty())
}

/// Routes from path patterns to providers, most specific first.
#[derive(Clone, Debug)]
pub struct RouteTable {
    routes: Vec<(PathPattern, ProviderRef)>,
    fallback: ProviderRef,
}

impl RouteTable {
    /// A table of `routes` (the operator's, tried first) and, when
    /// `with_defaults`, every provider's default paths; `fallback` takes
    /// what none matches.
    pub fn new(
        routes: Vec<(PathPattern, ProviderRef)>,
        with_defaults: bool,
        fallback: ProviderRef,
    ) -> Self {
        let mut all = routes;
        if with_defaults {
            for provider in REGISTRY {
                for path in provider.default_paths() {
                    if let Ok(pattern) = PathPattern::parse(path) {
                        all.push((pattern, *provider));
                    }
                }
            }
        }
        // Stable: an operator's route beats a default one of equal rank.
        crate::sort::sort_by_key(&mut all, |(pattern, _)| pattern.wildcards());
        RouteTable {
            routes: all,
            fallback,
        }
    }

    /// The provider for a request's `:path` (query and all).
    pub fn provider_for(&self, raw_path: &str) -> ProviderRef {
        // Every request routes its path: one that is already in normal
        // form (what clients send) is matched as it is, without the
        // allocations of normalising it (the same text: a test checks).
        let owned;
        let normal = match already_normal(raw_path) {
            Some(normal) => normal,
            None => {
                owned = normalize_path(raw_path);
                owned.as_str()
            }
        };
        self.routes
            .iter()
            .find(|(pattern, _)| pattern.matches(normal))
            .map_or(self.fallback, |(_, provider)| *provider)
    }
}

/// `raw`'s path part when [`normalize_path`] would give it back unchanged:
/// `/` then segments of lower-case ASCII letters, digits, `-`, `_`, `~`, `:`,
/// `.` (no segment only dots), none empty, no escape, `;`, `\` or trailing
/// slash. `None`: normalise it.
fn already_normal(raw: &str) -> Option<&str> {
    let end = raw.find(['?', '#']).unwrap_or(raw.len());
    let path = &raw[..end];
    let rest = path.strip_prefix('/')?;
    if rest.is_empty() {
        return Some(path);
    }
    for segment in rest.split('/') {
        let plain = segment.bytes().all(|b| {
            b.is_ascii_lowercase()
                || b.is_ascii_digit()
                || matches!(b, b'-' | b'_' | b'~' | b':' | b'.')
        });
        if segment.is_empty() || !plain || segment.bytes().all(|b| b == b'.') {
            return None;
        }
    }
    Some(path)
}

/// The form of `raw` that routes are matched against (see the module doc).
/// Percent-escapes of reserved characters (`%2F`, `%3F`, …) stay escaped,
/// upper-cased: an encoded slash is not a separator, so such a path
/// matches no route of a known provider and goes to the fallback.
pub fn normalize_path(raw: &str) -> String {
    let end = raw.find(['?', '#']).unwrap_or(raw.len());
    let decoded = decode_unreserved(&raw[..end]);
    let mut out: Vec<String> = Vec::new();
    for segment in decoded.split(['/', '\\']) {
        let segment = segment.split(';').next().unwrap_or_default();
        match segment {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            s => out.push(s.to_ascii_lowercase()),
        }
    }
    format!("/{}", out.join("/"))
}

/// Decodes `%XX` escapes of unreserved characters (letters, digits,
/// `-._~`); other escapes are kept, with upper-case hex digits.
fn decode_unreserved(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = |b: u8| (b as char).to_digit(16);
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                let c = (h * 16 + l) as u8;
                if c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~') {
                    out.push(c as char);
                } else {
                    out.push('%');
                    out.push(bytes[i + 1].to_ascii_uppercase() as char);
                    out.push(bytes[i + 2].to_ascii_uppercase() as char);
                }
                i += 3;
                continue;
            }
        }
        // Not an escape: copy the char (whole, for non-ASCII).
        let ch_len = s[i..].chars().next().map_or(1, char::len_utf8);
        out.push_str(&s[i..i + ch_len]);
        i += ch_len;
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::provider::{
        ANTHROPIC_BATCHES, ANTHROPIC_MESSAGES, BEDROCK_CONVERSE, BEDROCK_INVOKE, GEMINI,
        GENERIC_JSON, OPENAI_CHAT, OPENAI_COMPLETIONS, OPENAI_EMBEDDINGS, OPENAI_RESPONSES,
    };

    #[test]
    fn a_path_already_normal_is_matched_as_sent() {
        for raw in [
            "/",
            "/v1/chat/completions",
            "/v1/chat/completions?api-version=2024",
            "/v1beta/models/gemini-1.5-pro:generatecontent#x",
            "/v1/files/file-abc_1~2.json",
        ] {
            assert_eq!(
                already_normal(raw),
                Some(normalize_path(raw).as_str()),
                "{raw}"
            );
        }
        for raw in [
            "",
            "v1/chat",
            "//v1",
            "/v1/",
            "/V1/Chat",
            "/v1/./chat",
            "/v1/../chat",
            "/v1/...",
            "/v1;x/chat",
            "/v1%2fchat",
            "/v1\\chat",
            "/caf\u{e9}",
        ] {
            assert_eq!(already_normal(raw), None, "{raw}");
        }
    }

    proptest::proptest! {
        /// The fast path never routes a path differently: when it takes a
        /// path as normal, normalising gives the same text.
        #[test]
        fn the_fast_path_agrees_with_normalising(raw in "[/a-zA-Z0-9.;%\\\\:~_?#-]{0,24}") {
            if let Some(normal) = already_normal(&raw) {
                proptest::prop_assert_eq!(normal, normalize_path(&raw));
            }
        }
    }

    #[test]
    fn paths_are_normalised() {
        for (raw, normal) in [
            ("/v1/chat/completions", "/v1/chat/completions"),
            (
                "/v1/chat/completions?x=/v1/messages",
                "/v1/chat/completions",
            ),
            ("//v1//messages/", "/v1/messages"),
            ("/v1/x/../messages", "/v1/messages"),
            ("/v1/./messages", "/v1/messages"),
            ("/../../v1/messages", "/v1/messages"),
            ("/v1/%6Dessages", "/v1/messages"),
            ("/v1/%6dessages", "/v1/messages"),
            ("/V1/Messages", "/v1/messages"),
            ("/v1/messages;jsessionid=1", "/v1/messages"),
            ("\\v1\\messages", "/v1/messages"),
            ("/v1%2Fmessages", "/v1%2fmessages"),
            ("/v1/messages%", "/v1/messages%"),
            ("/v1/messages%4", "/v1/messages%4"),
            ("/é/%C3%A9", "/é/%c3%a9"),
            ("", "/"),
        ] {
            assert_eq!(normalize_path(raw), normal, "{raw}");
        }
    }

    #[test]
    fn routes_match_whole_paths_and_nested_endpoints_fall_back() {
        let table = RouteTable::new(Vec::new(), true, GENERIC_JSON);
        for (path, provider) in [
            ("/v1/chat/completions", OPENAI_CHAT),
            ("/v1/chat/completions/", OPENAI_CHAT),
            ("/v1/x/../chat/completions", OPENAI_CHAT),
            ("/v1/%63hat/completions", OPENAI_CHAT),
            ("/v1/responses", OPENAI_RESPONSES),
            ("/v1/messages", ANTHROPIC_MESSAGES),
            ("/v1/messages?beta=true", ANTHROPIC_MESSAGES),
            ("/v1/messages/batches", ANTHROPIC_BATCHES),
            ("/v1/messages/batches/msgbatch_1/cancel", GENERIC_JSON),
            ("/v1/messages/count_tokens", ANTHROPIC_MESSAGES),
            (
                "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
                GEMINI,
            ),
            ("/v1beta/models/gemini-2.5-flash:generateContent", GEMINI),
            ("/v1beta/models/:generateContent", GENERIC_JSON),
            ("/v1beta/models/gemini:generateContentx", GENERIC_JSON),
            ("/v1beta/models/gemini%3AgenerateContent", GENERIC_JSON),
            (
                "/v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-pro:generateContent",
                GEMINI,
            ),
            (
                "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse-stream",
                BEDROCK_CONVERSE,
            ),
            ("/model/m/converse", BEDROCK_CONVERSE),
            ("/model/anthropic.claude-sonnet-4-20250514-v1%3A0/invoke-with-response-stream", BEDROCK_INVOKE),
            ("/model/m/invoke", BEDROCK_INVOKE),
            ("/model/a/b/converse", GENERIC_JSON),
            ("/openai/deployments/gpt4o/chat/completions?api-version=2024-10-21", OPENAI_CHAT),
            ("/openai/deployments/emb/embeddings?api-version=2024-10-21", OPENAI_EMBEDDINGS),
            ("/v1/embeddings", OPENAI_EMBEDDINGS),
            ("/v1/completions", OPENAI_COMPLETIONS),
            ("/v1/messagesx", GENERIC_JSON),
            ("/v1/chat/completions/abc/messages", GENERIC_JSON),
            ("/v1/responses/resp_1/input_items", GENERIC_JSON),
            ("/v1%2Fmessages", GENERIC_JSON),
            ("/", GENERIC_JSON),
        ] {
            assert_eq!(table.provider_for(path).name(), provider.name(), "{path}");
        }
    }

    #[test]
    fn operator_routes_come_first_and_wildcards_last() {
        let routes = vec![
            (
                PathPattern::parse("/openai/deployments/*/chat/completions").unwrap(),
                OPENAI_CHAT,
            ),
            (PathPattern::parse("/v1/messages").unwrap(), GENERIC_JSON),
        ];
        let table = RouteTable::new(routes, true, GENERIC_JSON);
        assert_eq!(
            table
                .provider_for("/openai/deployments/gpt4/chat/completions?api-version=1")
                .name(),
            "openai-chat"
        );
        assert_eq!(
            table
                .provider_for("/openai/deployments/a/b/chat/completions")
                .name(),
            "json"
        );
        // The operator's route for a default path wins.
        assert_eq!(table.provider_for("/v1/messages").name(), "json");
        assert!(PathPattern::parse("v1").is_err());
        assert!(PathPattern::parse("/v1?x").is_err());
    }
}
