//! E-mail addresses: `local@domain.tld`, a practical subset of RFC 5322 with
//! the internationalised forms of RFC 6531 (`jürgen.müller@bücher.de`,
//! `josé@correo.españa.es`, `用户@例子.中国`).
//!
//! The local part is letters and digits of any script and the ASCII
//! `._%+-` (not starting or ending with `.`, no `..`, at most 64 bytes); the
//! domain is at least two dot-separated labels of letters and digits of any
//! script and inner hyphens (punycode `xn--bcher-kva.de` included), ending
//! in a top-level label of two or more letters, all ASCII or all not
//! (`.de`, `.рф`, `.中国`), or an `xn--` label. Trailing punctuation
//! (`mario@acme.it.`) is not part of the address.
//!
//! A script written without spaces (CJK, kana, Hangul, Thai, …) beside
//! one of another script ends the address (`联系mario@example.org谢谢`, see
//! [`crate::text::on_value_boundaries`]); `_` belongs to the local part
//! (`user_mario@example.org` is one address). Full-width forms
//! (`ｍａｒｉｏ＠ｅｘａｍｐｌｅ．ｏｒｇ`, `mario＠example.org`) are read
//! through the folded reading (`super::fold`). Found from each `@`
//! (memchr), so text without `@` costs one memchr pass.

use super::Finding;
use crate::kind::Kind;
use crate::text::{is_unspaced_script_char, on_value_boundaries};

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
        let Some(start) = local_start(text, at) else {
            continue;
        };
        let Some(end) = domain_end(text, at + 1) else {
            continue;
        };
        if on_value_boundaries(text, start, end, false) {
            out.push(Finding::new(Kind::Email, start, end));
            from = end;
        }
    }
}

/// A letter or digit of any script, or a combining mark (a decomposed `é`).
fn is_letter_or_digit(c: char) -> bool {
    c.is_alphanumeric() || ('\u{300}'..='\u{36f}').contains(&c)
}

/// One script run: the chars of an address share whether their script is
/// written without spaces ([`is_unspaced_script_char`]); the first letter
/// or digit met decides.
#[derive(Default)]
struct ScriptRun(Option<bool>);

impl ScriptRun {
    /// A run that has met the ASCII chars `ascii` (a spaced script when
    /// they hold a letter or digit).
    fn seeded(ascii: &[u8]) -> ScriptRun {
        ScriptRun(ascii.iter().any(u8::is_ascii_alphanumeric).then_some(false))
    }

    /// True when `c` may follow the chars met so far in one address.
    fn admits(&mut self, c: char) -> bool {
        if !is_letter_or_digit(c) {
            return true;
        }
        let unspaced = is_unspaced_script_char(c);
        *self.0.get_or_insert(unspaced) == unspaced
    }
}

fn is_local_char(c: char) -> bool {
    is_letter_or_digit(c) || matches!(c, '.' | '_' | '%' | '+' | '-')
}

/// Where the local part ending at byte `at` starts, if it is a valid one.
fn local_start(text: &str, at: usize) -> Option<usize> {
    let head = text.get(..at)?;
    let bytes = head.as_bytes();
    // ASCII first (the common case), byte by byte; char by char from the
    // first other char on.
    let mut start = at;
    while start > 0 && is_local_char(char::from(bytes[start - 1])) && bytes[start - 1].is_ascii() {
        start -= 1;
        if at - start > MAX_LOCAL {
            return None; // longer than any valid local part
        }
    }
    if start > 0 && !bytes[start - 1].is_ascii() {
        let mut run = ScriptRun::seeded(&bytes[start..]);
        for (i, c) in head[..start].char_indices().rev() {
            if !is_local_char(c) || !run.admits(c) {
                break;
            }
            if at - i > MAX_LOCAL {
                return None;
            }
            start = i;
        }
    }
    // Leading punctuation belongs to the sentence (`--mario@…`, `(.x@…`).
    // The local part's chars other than letters, digits and `_` are ASCII.
    while start < at && matches!(bytes[start], b'.' | b'%' | b'+' | b'-') {
        start += 1;
    }
    let local = &bytes[start..at];
    if local.is_empty() || local.ends_with(b".") || local.windows(2).any(|w| w == b"..") {
        return None;
    }
    Some(start)
}

/// Where the domain starting at byte `from` ends, if it is a valid one.
fn domain_end(text: &str, from: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let is_domain_char = |c: char| is_letter_or_digit(c) || c == '-' || c == '.';
    // ASCII first, as for the local part.
    let mut end = from;
    while end < bytes.len()
        && end - from <= MAX_DOMAIN
        && (bytes[end].is_ascii_alphanumeric() || matches!(bytes[end], b'-' | b'.'))
    {
        end += 1;
    }
    if end - from <= MAX_DOMAIN && bytes.get(end).is_some_and(|b| !b.is_ascii()) {
        let mut run = ScriptRun::seeded(&bytes[from..end]);
        let tail = text.get(end..)?;
        let mut next = end;
        for (i, c) in tail.char_indices() {
            if !is_domain_char(c) || !run.admits(c) || end + i - from > MAX_DOMAIN {
                break;
            }
            next = end + i + c.len_utf8();
        }
        end = next;
    }
    // Trailing punctuation ends the sentence, not the domain.
    // The domain's chars other than letters and digits are ASCII.
    while end > from && matches!(bytes[end - 1], b'-' | b'.') {
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
    let tld_ok = if last.is_ascii() {
        (last.len() >= 2 && last.iter().all(u8::is_ascii_alphabetic))
            || (last.len() > 4 && last[..4].eq_ignore_ascii_case(b"xn--"))
    } else {
        // Not ASCII: letters, none of them ASCII (`.рф`, `.中国`).
        let tld = text.get(end - last.len()..end)?;
        tld.chars().count() >= 2 && tld.chars().all(|c| c.is_alphabetic() && !c.is_ascii())
    };
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
            (
                "Escríbeme a josé_garcia+rrhh@correo.es.",
                &["josé_garcia+rrhh@correo.es"],
            ),
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
            // internationalised addresses
            ("jürgen.müller@bücher.de", &["jürgen.müller@bücher.de"]),
            (
                "Schreib an jürgen.müller@bücher.de!",
                &["jürgen.müller@bücher.de"],
            ),
            ("josé@correo.españa.es", &["josé@correo.españa.es"]),
            ("почта: иван@пример.рф.", &["иван@пример.рф"]),
            ("用户@例子.中国", &["用户@例子.中国"]),
            ("δοκιμή@παράδειγμα.δοκιμή", &["δοκιμή@παράδειγμα.δοκιμή"]),
            ("u@xn--bcher-kva.de", &["u@xn--bcher-kva.de"]),
            ("jose\u{301}@correo.es", &["jose\u{301}@correo.es"]),
            // scripts without spaces end an address; `_` does not
            ("联系mario@example.org谢谢", &["mario@example.org"]),
            ("メールはmario@example.orgです", &["mario@example.org"]),
            ("user_mario@example.org", &["user_mario@example.org"]),
            ("_mario@example.org", &["_mario@example.org"]),
            // false positives
            ("mario@example.org_x", &[]),
            ("café@ and ü@ü", &[]),
            ("用户@例子", &[]),   // one label
            ("x@bücher.d", &[]),  // one-letter top-level label
            ("x@bücher.dé", &[]), // top-level label mixes scripts
            ("München@Hauptbahnhof", &[]),
            ("😀@x.com", &[]),
            ("jürgen..müller@x.de", &[]),
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
