//! Secrets: API keys and tokens with well-known prefixes, JWTs and PEM
//! private-key blocks.
//!
//! One Aho-Corasick automaton finds every prefix (`sk-`, `sk-ant-`, `ghp_`,
//! `github_pat_`, `AKIA`, `xoxb-`, `AIza`, `eyJ`, `-----BEGIN `, …); each
//! hit is then checked for a plausible body: its alphabet and length, and for
//! free-form bodies at least one letter and one digit (so prose such as
//! `sk-learn-style-estimators-everywhere` is not a key).

use super::Finding;
use crate::error::CoreError;
use crate::kind::Kind;
use crate::text::on_word_boundaries;
use aho_corasick::{AhoCorasick, MatchKind};

/// How far after `-----BEGIN` the END line of a PEM block is looked for: the
/// largest private keys (RSA 8192) are about 6.5 KB.
const PEM_SEARCH_LIMIT: usize = 16 * 1024;

/// What follows a prefix.
#[derive(Clone, Copy, Debug)]
enum Body {
    /// A token body: bytes of `alphabet`, `min..=max` of them; `mixed`
    /// requires a letter and a digit among them.
    Token {
        alphabet: fn(u8) -> bool,
        min: usize,
        max: usize,
        mixed: bool,
    },
    /// `header.payload.signature`, base64url parts.
    Jwt,
    /// `-----BEGIN … PRIVATE KEY-----` through its END line.
    Pem,
}

fn alnum(b: u8) -> bool {
    b.is_ascii_alphanumeric()
}
fn alnum_underscore(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}
fn alnum_dash(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-'
}
fn base64url(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'_'
}
fn upper_digit(b: u8) -> bool {
    b.is_ascii_uppercase() || b.is_ascii_digit()
}

const fn token(alphabet: fn(u8) -> bool, min: usize, max: usize, mixed: bool) -> Body {
    Body::Token {
        alphabet,
        min,
        max,
        mixed,
    }
}

/// The prefixes and the bodies they take. Longest prefixes win at one
/// position (`sk-ant-` over `sk-`).
const PREFIXES: &[(&str, Body)] = &[
    ("sk-ant-", token(base64url, 20, 300, true)), // Anthropic
    ("sk-", token(base64url, 20, 300, true)),     // OpenAI (incl. sk-proj-)
    ("sk_live_", token(alnum, 16, 255, true)),    // Stripe
    ("sk_test_", token(alnum, 16, 255, true)),
    ("rk_live_", token(alnum, 16, 255, true)),
    ("rk_test_", token(alnum, 16, 255, true)),
    ("ghp_", token(alnum, 30, 255, true)), // GitHub tokens
    ("gho_", token(alnum, 30, 255, true)),
    ("ghu_", token(alnum, 30, 255, true)),
    ("ghs_", token(alnum, 30, 255, true)),
    ("ghr_", token(alnum, 30, 255, true)),
    ("github_pat_", token(alnum_underscore, 22, 255, true)),
    ("glpat-", token(base64url, 20, 255, true)), // GitLab
    ("AKIA", token(upper_digit, 16, 16, false)), // AWS access key ids
    ("ASIA", token(upper_digit, 16, 16, false)),
    ("xoxb-", token(alnum_dash, 10, 255, true)), // Slack
    ("xoxp-", token(alnum_dash, 10, 255, true)),
    ("xoxa-", token(alnum_dash, 10, 255, true)),
    ("xoxr-", token(alnum_dash, 10, 255, true)),
    ("xoxs-", token(alnum_dash, 10, 255, true)),
    ("xoxe-", token(alnum_dash, 10, 255, true)),
    ("xapp-", token(alnum_dash, 10, 255, true)),
    ("AIza", token(base64url, 35, 35, false)), // Google API keys
    ("hf_", token(alnum, 30, 255, true)),      // Hugging Face
    ("eyJ", Body::Jwt),
    ("-----BEGIN ", Body::Pem),
];

/// Finds secrets; built once per configuration (the automaton).
#[derive(Clone, Debug)]
pub(super) struct SecretScanner {
    prefixes: AhoCorasick,
}

impl SecretScanner {
    /// Builds the prefix automaton.
    pub(super) fn new() -> Result<Self, CoreError> {
        let prefixes = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(PREFIXES.iter().map(|(prefix, _)| prefix))
            .map_err(|_| CoreError::BadRule {
                index: 0,
                reason: "built-in secret prefixes do not build".into(),
            })?;
        Ok(SecretScanner { prefixes })
    }

    /// Appends the secrets of `text` to `out`.
    pub(super) fn find(&self, text: &str, out: &mut Vec<Finding>) {
        let bytes = text.as_bytes();
        let mut from = 0;
        while from < bytes.len() {
            let input = aho_corasick::Input::new(bytes).span(from..bytes.len());
            let Some(hit) = self.prefixes.find(input) else {
                break;
            };
            let (start, body_start) = (hit.start(), hit.end());
            let body = PREFIXES
                .get(hit.pattern().as_usize())
                .map(|(_, body)| *body);
            let end = match body {
                Some(Body::Token {
                    alphabet,
                    min,
                    max,
                    mixed,
                }) => token_end(bytes, body_start, alphabet, min, max, mixed),
                Some(Body::Jwt) => jwt_end(bytes, start),
                Some(Body::Pem) => pem_end(bytes, body_start),
                None => None,
            };
            match end {
                Some(end) if on_word_boundaries(text, start, end) => {
                    out.push(Finding::new(Kind::Secret, start, end));
                    from = end;
                }
                _ => from = start + 1,
            }
        }
    }
}

/// The end of a token body starting at `from`, if it is a plausible one.
fn token_end(
    bytes: &[u8],
    from: usize,
    alphabet: fn(u8) -> bool,
    min: usize,
    max: usize,
    mixed: bool,
) -> Option<usize> {
    let len = run_len(bytes, from, alphabet);
    if len < min || len > max {
        return None;
    }
    let body = &bytes[from..from + len];
    if mixed && !(body.iter().any(u8::is_ascii_digit) && body.iter().any(u8::is_ascii_alphabetic)) {
        return None;
    }
    Some(from + len)
}

/// Length of the run of `alphabet` bytes starting at `from`.
fn run_len(bytes: &[u8], from: usize, alphabet: fn(u8) -> bool) -> usize {
    bytes
        .get(from..)
        .map_or(0, |tail| tail.iter().take_while(|&&b| alphabet(b)).count())
}

/// The end of a JWT starting at `start` (`eyJ…`): three base64url parts of
/// at least 10 bytes each, joined by dots.
fn jwt_end(bytes: &[u8], start: usize) -> Option<usize> {
    const MIN_PART: usize = 10;
    let mut end = start;
    for part in 0..3 {
        if part > 0 {
            if bytes.get(end) != Some(&b'.') {
                return None;
            }
            end += 1;
        }
        let len = run_len(bytes, end, base64url);
        if len < MIN_PART {
            return None;
        }
        end += len;
    }
    Some(end)
}

/// The end of a PEM private-key block whose `-----BEGIN ` ends at `from`:
/// the end of its `-----END …-----` line, or, when the END line is missing
/// (a cut text), the end of the base64 body.
fn pem_end(bytes: &[u8], from: usize) -> Option<usize> {
    let label_len = run_len(bytes, from, |b| {
        b.is_ascii_uppercase() || b.is_ascii_digit() || b == b' '
    });
    let label = &bytes[from..from + label_len];
    if !label.ends_with(b"PRIVATE KEY") && !label.ends_with(b"PRIVATE KEY BLOCK") {
        return None;
    }
    let body_start = from + label_len;
    if !bytes[body_start..].starts_with(b"-----") {
        return None;
    }
    let body_start = body_start + 5;
    let window_end = bytes.len().min(body_start + PEM_SEARCH_LIMIT);
    let window = &bytes[body_start..window_end];
    if let Some(at) = memchr::memmem::find(window, b"-----END ") {
        let label_start = body_start + at + 9;
        let end_label = run_len(bytes, label_start, |b| {
            b.is_ascii_uppercase() || b.is_ascii_digit() || b == b' '
        });
        let close = label_start + end_label;
        if bytes[close..].starts_with(b"-----") {
            return Some(close + 5);
        }
    }
    // No END line: cover the body (base64, line breaks, and the `\n`
    // escapes of a raw JSON string) so that no key material is left.
    let body_len = run_len(bytes, body_start, |b| {
        b.is_ascii_alphanumeric()
            || matches!(b, b'+' | b'/' | b'=' | b'\\' | b'\r' | b'\n' | b' ' | b'\t')
    });
    let mut end = body_start + body_len;
    while end > body_start && bytes[end - 1].is_ascii_whitespace() {
        end -= 1;
    }
    Some(end)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::super::tests::spans_of;
    use super::*;

    const PEM: &str = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7bq9\nx4ZkQ==\n-----END RSA PRIVATE KEY-----";

    #[test]
    fn secret_table() {
        let openai = "sk-proj-4fJ9xQ2mZ7LpR8tV1wYb3NcD6eH0kS5u";
        let anthropic = "sk-ant-api03-AbCdEf0123456789_ghIJklMNopQRstUV-wxyz";
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
        let pem_in_json = "\"key\":\"-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBg\\n-----END PRIVATE KEY-----\\n\"";
        let owned_cases: Vec<(String, Vec<&str>)> = vec![
            (format!("OPENAI_API_KEY={openai}\n"), vec![openai]),
            (format!("usa la clave {anthropic}."), vec![anthropic]),
            (
                "token ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5 ok".into(),
                vec!["ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3fG5"],
            ),
            (
                "github_pat_11ABCDEFG0abcdefghij_KLMNOPqrstuv0123456789".into(),
                vec!["github_pat_11ABCDEFG0abcdefghij_KLMNOPqrstuv0123456789"],
            ),
            (
                "aws AKIAIOSFODNN7EXAMPLE.".into(),
                vec!["AKIAIOSFODNN7EXAMPLE"],
            ),
            (
                "slack xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOp".into(),
                vec!["xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOp"],
            ),
            (
                "maps AIzaSyA1bC2dE3fG4hI5jK6lM7nO8pQ9rS0tU1v!".into(),
                vec!["AIzaSyA1bC2dE3fG4hI5jK6lM7nO8pQ9rS0tU1v"],
            ),
            (format!("Authorization: Bearer {jwt}"), vec![jwt]),
            (format!("Schlüssel:\n{PEM}\nEnde"), vec![PEM]),
            (
                pem_in_json.into(),
                vec!["-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBg\\n-----END PRIVATE KEY-----"],
            ),
            (
                "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg\nAwEHoUQDQgAE".into(),
                vec!["-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg\nAwEHoUQDQgAE"],
            ),
            (
                "sk_live_4eC39HqLyjWDarjtT1zdp7dc".into(),
                vec!["sk_live_4eC39HqLyjWDarjtT1zdp7dc"],
            ),
            // false positives
            ("task-4fJ9xQ2mZ7LpR8tV1wYb3NcD6eH0kS5u".into(), vec![]), // sk- inside a word
            ("sk-learn-style-estimators-everywhere".into(), vec![]),  // no digit
            ("sk-12345".into(), vec![]),                              // too short
            ("AKIAIOSFODNN7EXAMPLEX".into(), vec![]),                 // too long
            ("AKIA is an acronym".into(), vec![]),
            (
                "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----".into(),
                vec![],
            ),
            ("-----BEGIN PUBLIC KEY-----\nMIIB".into(), vec![]),
            ("eyJ is how JSON starts in base64".into(), vec![]),
            ("eyJhbGciOiJIUzI1NiJ9.short.x".into(), vec![]),
            ("Hola, la clave es secreta y no la digo".into(), vec![]),
        ];
        let scanner = SecretScanner::new().unwrap();
        for (text, expected) in &owned_cases {
            let mut out = Vec::new();
            scanner.find(text, &mut out);
            assert!(out.iter().all(|f| f.kind == Kind::Secret));
            assert_eq!(spans_of(text, &out), *expected, "{text:?}");
        }
    }
}
