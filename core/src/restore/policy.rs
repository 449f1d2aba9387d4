//! What one answer may restore: which entries (the restore scope) and
//! whether into URLs (the URL rule). Both guard the people whose values the
//! vault holds against whoever can make a model write a surrogate:
//! - scope: an answer restores only the entries whose values this request's
//!   own masking used (the agent sent them), so a surrogate seen elsewhere
//!   (a provider log, a transcript) cannot be sent through the gateway to
//!   get its value back;
//! - URLs: a value restored inside a link or image target would leave the
//!   agent's screen for the URL's host as soon as it is rendered.

use crate::snapshot::{EntryRef, Slot, SnapshotIndex};
use crate::wire::EntryFingerprint;

/// The entries one request's masking used (slot and id fingerprint, sorted): the only
/// surrogates its answer restores under [`RestoreView::new`] with a scope.
/// Holds fingerprints of ids, never values; drop it with the request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestScope {
    used: Vec<(Slot, EntryFingerprint)>,
}

impl RequestScope {
    /// Adds the entries a masking used (headers, path, body, trailers).
    pub fn extend(&mut self, used: &[(Slot, EntryFingerprint)]) {
        if used.is_empty() {
            return;
        }
        self.used.extend_from_slice(used);
        crate::sort::sort(&mut self.used);
        self.used.dedup();
    }

    /// How many entries are in scope.
    pub fn len(&self) -> usize {
        self.used.len()
    }

    pub fn is_empty(&self) -> bool {
        self.used.is_empty()
    }

    /// Whether `entry` (as the index holds it now) is in scope: its slot
    /// and its id's fingerprint, so a slot reused by another entry is not.
    fn contains(&self, entry: &EntryRef<'_>) -> bool {
        self.used
            .binary_search_by_key(&entry.slot, |(slot, _)| *slot)
            .is_ok_and(|at| self.used[at].1 == entry.fingerprint)
    }
}

/// Where a surrogate inside a URL may be restored.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum UrlRule {
    /// Nowhere: a surrogate inside a URL is left as written (the default).
    #[default]
    Never,
    /// Into any URL (the behaviour before the rule existed).
    Any,
    /// Only into URLs whose host is one of these.
    Hosts(Vec<HostPattern>),
}

impl UrlRule {
    /// Whether a URL whose host is `host` (lower case, no port, no user)
    /// may receive values.
    pub(crate) fn allows(&self, host: &str) -> bool {
        match self {
            UrlRule::Never => false,
            UrlRule::Any => true,
            UrlRule::Hosts(hosts) => hosts.iter().any(|pattern| pattern.matches(host)),
        }
    }
}

/// One allowed host: `docs.example.com` (that host only) or
/// `*.example.com` (its subdomains, not `example.com` itself).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostPattern {
    /// Lower case; for a wildcard, the suffix with its leading dot.
    name: String,
    wildcard: bool,
}

impl HostPattern {
    /// Parses an allowed host; `None` when it is not a host name
    /// (empty, a scheme, a path, a port, a `*` anywhere but at the start).
    pub fn parse(text: &str) -> Option<HostPattern> {
        let lower = text.trim().trim_end_matches('.').to_ascii_lowercase();
        let (name, wildcard) = match lower.strip_prefix("*.") {
            Some(rest) => (format!(".{rest}"), true),
            None => (lower, false),
        };
        let bare = name.trim_start_matches('.');
        let valid = !bare.is_empty()
            && bare
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')
            && !bare.contains("..");
        valid.then_some(HostPattern { name, wildcard })
    }

    fn matches(&self, host: &str) -> bool {
        if self.wildcard {
            host.len() > self.name.len() && host.ends_with(&self.name)
        } else {
            host == self.name
        }
    }
}

/// The index as one answer may restore from it: every active surrogate
/// ([`RestoreView::vault`]), or only those of a [`RequestScope`], and into
/// URLs by a [`UrlRule`]. Derefs to the index for looking surrogates up.
#[derive(Clone, Copy)]
pub struct RestoreView<'a> {
    index: &'a SnapshotIndex,
    scope: Option<&'a RequestScope>,
    urls: &'a UrlRule,
}

static ANY_URL: UrlRule = UrlRule::Any;

/// What becomes of one active surrogate found in an answer.
pub(crate) enum Admit<'a> {
    Restore(EntryRef<'a>),
    /// Its entry went (a forget applied since it was found).
    Gone,
    OutOfScope,
    InUrl,
}

impl<'a> RestoreView<'a> {
    /// Restores only `scope`'s entries (every active one when `None`), and
    /// into URLs as `urls` says.
    pub fn new(
        index: &'a SnapshotIndex,
        scope: Option<&'a RequestScope>,
        urls: &'a UrlRule,
    ) -> Self {
        RestoreView { index, scope, urls }
    }

    /// Every active surrogate, anywhere (URLs included): for callers that
    /// hold the right to see every value of the key (the apps API, tests).
    pub fn vault(index: &'a SnapshotIndex) -> Self {
        RestoreView::new(index, None, &ANY_URL)
    }

    /// The index looked up.
    pub fn index(&self) -> &'a SnapshotIndex {
        self.index
    }

    /// Whether positions inside URLs must be known (a rule other than
    /// [`UrlRule::Any`]).
    pub(crate) fn tracks_urls(&self) -> bool {
        *self.urls != UrlRule::Any
    }

    pub(crate) fn urls(&self) -> &UrlRule {
        self.urls
    }

    /// Decides the active surrogate at `slot`; `in_url`: `None` outside a
    /// URL, `Some(allowed)` inside one (allowed: its host may receive values).
    pub(crate) fn admit(&self, slot: Slot, in_url: Option<bool>) -> Admit<'a> {
        let Some(entry) = self.index.entry(slot) else {
            return Admit::Gone;
        };
        if self.scope.is_some_and(|scope| !scope.contains(&entry)) {
            return Admit::OutOfScope;
        }
        if in_url == Some(false) {
            return Admit::InUrl;
        }
        Admit::Restore(entry)
    }
}

impl<'a> From<&'a SnapshotIndex> for RestoreView<'a> {
    fn from(index: &'a SnapshotIndex) -> Self {
        RestoreView::vault(index)
    }
}

impl<'a> From<&RestoreView<'a>> for RestoreView<'a> {
    fn from(view: &RestoreView<'a>) -> Self {
        *view
    }
}

impl std::ops::Deref for RestoreView<'_> {
    type Target = SnapshotIndex;

    fn deref(&self) -> &SnapshotIndex {
        self.index
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn host_patterns_match_exactly_or_as_subdomains() {
        let exact = HostPattern::parse("Docs.Example.com.").unwrap();
        assert!(exact.matches("docs.example.com"));
        assert!(!exact.matches("docs.example.com.attacker.example"));
        assert!(!exact.matches("x.docs.example.com"));
        let wild = HostPattern::parse("*.example.com").unwrap();
        assert!(wild.matches("a.example.com"));
        assert!(wild.matches("a.b.example.com"));
        assert!(!wild.matches("example.com"));
        assert!(!wild.matches("attackerexample.com"));
        for bad in [
            "",
            "*",
            "https://x.com",
            "x.com/p",
            "x.com:443",
            "a..b",
            "*.",
            "a*.b",
        ] {
            assert_eq!(HostPattern::parse(bad), None, "{bad}");
        }
    }
}
