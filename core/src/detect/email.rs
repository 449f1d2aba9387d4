//! E-mail addresses: `local@domain.tld`, a practical subset of RFC 5322.
//!
//! The local part is ASCII letters, digits and `._%+-` (not starting or
//! ending with `.`, no `..`, at most 64 bytes); the domain is at least two
//! dot-separated labels of letters, digits and inner hyphens, ending in an
//! alphabetic top-level label of two or more letters (or an `xn--` label).
//! Trailing punctuation (`mario@acme.it.`) is not part of the address.
//! Found from each `@` (memchr), so text without `@` costs one memchr pass.

use super::Finding;
use crate::kind::Kind;
use crate::text::on_word_boundaries;

const MAX_LOCAL: usize = 64;
const MAX_DOMAIN: usize = 253;
const MAX_LABEL: usize = 63;

/// Appends the e-mail addresses of `text` to `out`.
pub(super) fn find(text: &str, out: &mut Vec<Finding>) {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(offset) = memchr::memchr(b'@', &bytes[from..]) {
        let at = from + offset;
        from = at + 1;
        let Some(start) = local_start(bytes, at) else {
            continue;
        };
        let Some(end) = domain_end(bytes, at + 1) else {
            continue;
        };
        if on_word_boundaries(text, start, end) {
            out.push(Finding::new(Kind::Email, start, end));
            from = end;
        }
    }
}

fn is_local_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'%' | b'+' | b'-')
}

/// Where the local part ending at `at` starts, if it is a valid one.
fn local_start(bytes: &[u8], at: usize) -> Option<usize> {
    let mut start = at;
    while start > 0 && at - start < MAX_LOCAL + 1 && is_local_byte(bytes[start - 1]) {
        start -= 1;
    }
    if start > 0 && is_local_byte(bytes[start - 1]) {
        return None; // longer than any valid local part
    }
    // Leading punctuation belongs to the sentence (`--mario@…`, `(.x@…`).
    while start < at && !(bytes[start].is_ascii_alphanumeric() || bytes[start] == b'_') {
        start += 1;
    }
    let local = &bytes[start..at];
    if local.is_empty() || local.ends_with(b".") || local.windows(2).any(|w| w == b"..") {
        return None;
    }
    Some(start)
}

/// Where the domain starting at `from` ends, if it is a valid one.
fn domain_end(bytes: &[u8], from: usize) -> Option<usize> {
    let mut end = from;
    while end < bytes.len()
        && end - from <= MAX_DOMAIN
        && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'-' || bytes[end] == b'.')
    {
        end += 1;
    }
    // Trailing punctuation ends the sentence, not the domain.
    while end > from && !bytes[end - 1].is_ascii_alphanumeric() {
        end -= 1;
    }
    let domain = &bytes[from..end];
    if domain.is_empty() || domain.len() > MAX_DOMAIN {
        return None;
    }
    let mut labels = 0;
    let mut last: &[u8] = &[];
    for label in domain.split(|&b| b == b'.') {
        if label.is_empty()
            || label.len() > MAX_LABEL
            || label.starts_with(b"-")
            || label.ends_with(b"-")
        {
            return None;
        }
        labels += 1;
        last = label;
    }
    let tld_ok = (last.len() >= 2 && last.iter().all(u8::is_ascii_alphabetic))
        || (last.len() > 4 && last[..4].eq_ignore_ascii_case(b"xn--"));
    (labels >= 2 && tld_ok).then_some(end)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::super::tests::spans_of;
    use super::*;

    #[test]
    fn email_table() {
        // (text, expected found substrings)
        let cases: &[(&str, &[&str])] = &[
            (
                "write to mario.rossi@acme.it please",
                &["mario.rossi@acme.it"],
            ),
            ("Escríbeme a josé_garcia+rrhh@correo.es.", &[]), // non-ASCII letter glued before
            (
                "Escríbeme a jose_garcia+rrhh@correo.es.",
                &["jose_garcia+rrhh@correo.es"],
            ),
            (
                "Kontakt: hans.mueller@beispiel-firma.de, danke",
                &["hans.mueller@beispiel-firma.de"],
            ),
            (
                "<laura@sub.mail.example.co.uk>",
                &["laura@sub.mail.example.co.uk"],
            ),
            ("(a@b.io) and c@d.org!", &["a@b.io", "c@d.org"]),
            ("\"to\":\"x.y@z.com\"", &["x.y@z.com"]),
            (
                "punycode u@xn--bcher-kva.xn--p1ai",
                &["u@xn--bcher-kva.xn--p1ai"],
            ),
            ("two a@b.com,c@d.com", &["a@b.com", "c@d.com"]),
            // false positives
            ("@mention and user@localhost", &[]),
            ("a@b.c is too short a tld", &[]),
            ("version pkg@1.2.3", &[]),
            ("double dot a..b@x.com", &[]),
            ("trailing dot a.@x.com", &[]),
            ("bad label x@-acme.com", &[]),
            ("x@acme..com", &[]),
            ("glued x@acme.comé", &[]),
            ("@@@@", &[]),
            ("", &[]),
        ];
        for (text, expected) in cases {
            let mut out = Vec::new();
            find(text, &mut out);
            assert!(out.iter().all(|f| f.kind == Kind::Email));
            assert_eq!(spans_of(text, &out), *expected, "{text:?}");
        }
    }
}
