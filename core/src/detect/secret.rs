//! Secrets: API keys and tokens with well-known prefixes, JWTs, PEM
//! private-key blocks, cloud keys after their usual labels, and webhook
//! URLs whose path is their secret.
//!
//! A table of every prefix's first three bytes ([`PrefixIndex`]) finds
//! where a prefix or label may start (`sk-`, `sk-ant-`, `ghp_`,
//! `github_pat_`, `AKIA`, `xoxb-`, `AIza`, `whsec_`, `GOCSPX-`, `eyJ`,
//! `-----BEGIN `, `secret_access_key`, `AccountKey=`, `sig=`,
//! `hooks.slack.com/services/`, …), the longest prefix written there is
//! compared byte by byte, and each hit is then checked for a
//! plausible body: its alphabet and length, and for free-form bodies at
//! least one letter and one digit (so prose such as
//! `sk-learn-style-estimators-everywhere` is not a key).
//!
//! - **Labelled values**: the AWS secret access key after
//!   `aws_secret_access_key`, `AWS_SECRET_ACCESS_KEY`, `SecretAccessKey` or
//!   `secretAccessKey` and `=` or `:` (40 chars of the base64 alphabet); a
//!   GCP service account's `"private_key_id"` (40 hex digits; its
//!   `"private_key"` is a PEM block, found as one); an Azure connection
//!   string's `AccountKey=` or `SharedAccessKey=` (base64, padded); an
//!   Azure SAS or Logic Apps `sig=` query value after `?` or `&` (43–44
//!   base64 chars, `%2B`/`%2F`/`%3D` escapes counted as one). The finding
//!   is the value; the label stays.
//! - **Webhook URLs**: the path after `hooks.slack.com/services/` (and
//!   `/workflows/`, `/triggers/`), `discord.com/api/webhooks/` (and
//!   `discordapp.com`), `office.com/webhookb2/` (Teams, `*.webhook.office.com`
//!   and `outlook.office.com`), `outlook.office.com/webhook/`,
//!   `hooks.zapier.com/hooks/catch/`: the id and token segments, not the
//!   host.

use super::prefix_blocks::{NibbleTables, BLOCK, BLOCK_READ};
use super::start_bits::StartBits;
use super::Finding;
use crate::error::CoreError;
use crate::kind::Kind;
use crate::text::on_value_boundaries;
use std::sync::OnceLock;

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
    /// The value after a label and `=` or `:`; the finding is the value.
    Labelled(Labelled),
    /// A webhook URL's path after its fixed part: at least this many
    /// non-empty path segments.
    WebhookPath(usize),
}

/// The values found after a label.
#[derive(Clone, Copy, Debug)]
enum Labelled {
    /// An AWS secret access key: 40 chars of the base64 alphabet.
    AwsSecretKey,
    /// A GCP service account's private key id: 40 hex digits.
    GcpPrivateKeyId,
    /// An Azure account or shared access key: padded base64.
    AzureKey,
    /// A SAS signature: base64 of an HMAC-SHA256, maybe percent-encoded.
    SasSignature,
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
    ("whsec_", token(base64url, 24, 255, true)), // Stripe webhook secrets
    ("GOCSPX-", token(base64url, 24, 64, false)), // Google OAuth client secrets
    ("eyJ", Body::Jwt),
    ("-----BEGIN ", Body::Pem),
    // Labelled values: the finding is the value after the label.
    ("secret_access_key", Body::Labelled(Labelled::AwsSecretKey)),
    ("SECRET_ACCESS_KEY", Body::Labelled(Labelled::AwsSecretKey)),
    ("SecretAccessKey", Body::Labelled(Labelled::AwsSecretKey)),
    ("secretAccessKey", Body::Labelled(Labelled::AwsSecretKey)),
    (
        "private_key_id\"",
        Body::Labelled(Labelled::GcpPrivateKeyId),
    ),
    ("AccountKey=", Body::Labelled(Labelled::AzureKey)),
    ("SharedAccessKey=", Body::Labelled(Labelled::AzureKey)),
    ("sig=", Body::Labelled(Labelled::SasSignature)),
    // Webhook URLs: the path after the fixed part.
    ("hooks.slack.com/services/", Body::WebhookPath(3)),
    ("hooks.slack.com/workflows/", Body::WebhookPath(3)),
    ("hooks.slack.com/triggers/", Body::WebhookPath(3)),
    ("discord.com/api/webhooks/", Body::WebhookPath(2)),
    ("discordapp.com/api/webhooks/", Body::WebhookPath(2)),
    ("office.com/webhookb2/", Body::WebhookPath(3)),
    ("outlook.office.com/webhook/", Body::WebhookPath(3)),
    ("hooks.zapier.com/hooks/catch/", Body::WebhookPath(2)),
];

/// Where a prefix may start, by the three bytes there (every prefix has
/// at least three): one bit per hash of them, then per three bytes the
/// prefixes that start so. A text is read one position at a step with one
/// load, a multiply and a bit test; in the filter's `.wasm` that is several
/// times cheaper than an automaton's transitions (Aho-Corasick's SIMD
/// prefilters do not exist for wasm), and a false start (prose holds `sec`,
/// `out`, `dis`) costs a few byte compares. With `simd128` (the filter's
/// `.wasm`) only the positions a block scan keeps ([`NibbleTables`]) are
/// read so.
struct PrefixIndex {
    /// Every prefix's key.
    starts: StartBits,
    /// Per key, sorted by key: indexes into [`PREFIXES`], longest first.
    by_key: Vec<(u32, Vec<usize>)>,
    /// The keys by nibbles, for the block scan of the filter's `.wasm`.
    blocks: NibbleTables,
}

/// The three bytes at the start of `four` as a key (the fourth ignored).
fn start_key(four: u32) -> u32 {
    four & 0x00ff_ffff
}

impl PrefixIndex {
    fn get() -> &'static PrefixIndex {
        static INDEX: OnceLock<PrefixIndex> = OnceLock::new();
        INDEX.get_or_init(|| {
            let mut starts = StartBits::new();
            let mut by_key: Vec<(u32, Vec<usize>)> = Vec::new();
            for (at, (prefix, _)) in PREFIXES.iter().enumerate() {
                let key = match prefix.as_bytes() {
                    &[a, b, c, ..] => u32::from_le_bytes([a, b, c, 0]),
                    _ => continue, // none: every prefix has three bytes (test)
                };
                starts.insert(key);
                match by_key.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, list)) => list.push(at),
                    None => by_key.push((key, vec![at])),
                }
            }
            for (_, list) in &mut by_key {
                crate::sort::sort_by_key(list, |&at| std::cmp::Reverse(PREFIXES[at].0.len()));
            }
            crate::sort::sort_by_key(&mut by_key, |(key, _)| *key);
            let keys: Vec<[u8; 3]> = by_key
                .iter()
                .map(|(key, _)| {
                    let [a, b, c, _] = key.to_le_bytes();
                    [a, b, c]
                })
                .collect();
            PrefixIndex {
                starts,
                by_key,
                blocks: NibbleTables::new(keys.iter()),
            }
        })
    }

    /// The first prefix written at or after `from`: its start, its end and
    /// its index in [`PREFIXES`] (the longest at the leftmost start).
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    fn next(&self, bytes: &[u8], from: usize) -> Option<(usize, usize, usize)> {
        let vectors = self.blocks.vectors();
        self.next_after_blocks(bytes, from, |_, block| vectors.candidates(block))
    }

    /// The first prefix written at or after `from`: its start, its end and
    /// its index in [`PREFIXES`] (the longest at the leftmost start).
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    fn next(&self, bytes: &[u8], from: usize) -> Option<(usize, usize, usize)> {
        self.next_by_words(bytes, from)
    }

    /// [`Self::next`] sixteen positions at a step: only the positions
    /// `candidates` keeps are checked (it keeps every one whose three bytes
    /// are a key, [`NibbleTables`]); the last few bytes go by words.
    #[cfg_attr(
        not(all(target_arch = "wasm32", target_feature = "simd128")),
        allow(dead_code)
    )]
    #[inline]
    fn next_after_blocks(
        &self,
        bytes: &[u8],
        from: usize,
        candidates: impl Fn(&NibbleTables, &[u8; BLOCK_READ]) -> u16,
    ) -> Option<(usize, usize, usize)> {
        let mut at = from;
        while let Some(block) = bytes.get(at..at + BLOCK_READ) {
            let Ok(block) = <&[u8; BLOCK_READ]>::try_from(block) else {
                break;
            };
            let mut kept = candidates(&self.blocks, block);
            while kept != 0 {
                let lane = kept.trailing_zeros() as usize;
                kept &= kept - 1;
                let key = u32::from_le_bytes([block[lane], block[lane + 1], block[lane + 2], 0]);
                if self.starts.may_hold(key) {
                    if let Some(found) = self.prefix_at(bytes, at + lane, key) {
                        return Some(found);
                    }
                }
            }
            at += BLOCK;
        }
        self.next_by_words(bytes, at)
    }

    /// [`Self::next`] one position at a step.
    fn next_by_words(&self, bytes: &[u8], from: usize) -> Option<(usize, usize, usize)> {
        let mut at = from;
        // Six positions from one eight-byte load while eight bytes remain.
        while at + 8 <= bytes.len() {
            let mut eight = [0u8; 8];
            eight.copy_from_slice(&bytes[at..at + 8]);
            let eight = u64::from_le_bytes(eight);
            for shift in 0..6 {
                let key = start_key((eight >> (8 * shift)) as u32);
                if self.starts.may_hold(key) {
                    if let Some(found) = self.prefix_at(bytes, at + shift, key) {
                        return Some(found);
                    }
                }
            }
            at += 6;
        }
        while at + 3 <= bytes.len() {
            let key = u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], 0]);
            if self.starts.may_hold(key) {
                if let Some(found) = self.prefix_at(bytes, at, key) {
                    return Some(found);
                }
            }
            at += 1;
        }
        None
    }

    #[inline(never)]
    fn prefix_at(&self, bytes: &[u8], at: usize, key: u32) -> Option<(usize, usize, usize)> {
        let found = self.by_key.binary_search_by_key(&key, |(k, _)| *k).ok()?;
        let rest = &bytes[at..];
        self.by_key[found]
            .1
            .iter()
            .find(|&&p| rest.starts_with(PREFIXES[p].0.as_bytes()))
            .map(|&p| (at, at + PREFIXES[p].0.len(), p))
    }
}

/// Finds secrets.
#[derive(Clone, Debug)]
pub(super) struct SecretScanner {
    prefixes: &'static PrefixIndex,
}

impl std::fmt::Debug for PrefixIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PrefixIndex({} keys)", self.by_key.len())
    }
}

impl SecretScanner {
    /// Builds the prefix index (once per process).
    pub(super) fn new() -> Result<Self, CoreError> {
        Ok(SecretScanner {
            prefixes: PrefixIndex::get(),
        })
    }

    /// Appends the secrets of `text` to `out`.
    pub(super) fn find(&self, text: &str, out: &mut Vec<Finding>) {
        let bytes = text.as_bytes();
        let mut from = 0;
        while from < bytes.len() {
            let Some((hit_start, body_start, pattern)) = self.prefixes.next(bytes, from) else {
                break;
            };
            let body = PREFIXES.get(pattern).map(|(_, body)| *body);
            // The finding starts at the prefix, or after a label or a
            // webhook URL's fixed part.
            let mut start = hit_start;
            let end = match body {
                Some(Body::Token {
                    alphabet,
                    min,
                    max,
                    mixed,
                }) => token_end(bytes, body_start, alphabet, min, max, mixed),
                Some(Body::Jwt) => jwt_end(bytes, start),
                Some(Body::Pem) => pem_end(bytes, body_start),
                Some(Body::Labelled(what)) => labelled_value(bytes, hit_start, body_start, what)
                    .map(|(value_start, end)| {
                        start = value_start;
                        end
                    }),
                Some(Body::WebhookPath(min_segments)) => {
                    start = body_start;
                    webhook_path_end(bytes, body_start, min_segments)
                }
                None => None,
            };
            match end {
                Some(end) if on_value_boundaries(text, start, end, false) => {
                    out.push(Finding::new(Kind::Secret, start, end));
                    from = end;
                }
                _ => from = hit_start + 1,
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

fn base64_std(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'+' || b == b'/'
}

/// Where the value after a label starts and ends, if it is one of `what`.
/// `label_start..label_end` is the label as found.
fn labelled_value(
    bytes: &[u8],
    label_start: usize,
    label_end: usize,
    what: Labelled,
) -> Option<(usize, usize)> {
    let mut pos = label_end;
    match what {
        // `key=…` in a connection string or a query: nothing in between.
        Labelled::AzureKey => {}
        Labelled::SasSignature => {
            let before = label_start.checked_sub(1).map(|i| bytes[i]);
            if !matches!(before, Some(b'?' | b'&')) {
                return None;
            }
        }
        // `key = v`, `KEY=v`, `"key": "v"`, `key: 'v'`.
        Labelled::AwsSecretKey | Labelled::GcpPrivateKeyId => {
            let blank = |b: &u8| matches!(b, b' ' | b'\t');
            if matches!(bytes.get(pos), Some(b'"' | b'\'')) {
                pos += 1;
            }
            while bytes.get(pos).is_some_and(blank) {
                pos += 1;
            }
            if !matches!(bytes.get(pos), Some(b'=' | b':')) {
                return None;
            }
            pos += 1;
            while bytes.get(pos).is_some_and(blank) {
                pos += 1;
            }
            if matches!(bytes.get(pos), Some(b'"' | b'\'')) {
                pos += 1;
            }
        }
    }
    let start = pos;
    let end = match what {
        Labelled::AwsSecretKey => {
            let len = run_len(bytes, start, base64_std);
            (len == 40 && bytes.get(start + len) != Some(&b'=')).then_some(start + len)?
        }
        Labelled::GcpPrivateKeyId => {
            let len = run_len(bytes, start, |b| b.is_ascii_hexdigit());
            (len == 40).then_some(start + len)?
        }
        Labelled::AzureKey => {
            let len = run_len(bytes, start, base64_std);
            let padding = run_len(bytes, start + len, |b| b == b'=');
            let total = len + padding;
            ((40..=128).contains(&len) && padding <= 2 && total.is_multiple_of(4))
                .then_some(start + total)?
        }
        Labelled::SasSignature => sas_signature_end(bytes, start)?,
    };
    Some((start, end))
}

/// The end of a SAS signature starting at `from`: 43 or 44 base64 or
/// base64url chars (a final `=` when 44), written raw or with `%2B`,
/// `%2F` and `%3D` escapes.
fn sas_signature_end(bytes: &[u8], from: usize) -> Option<usize> {
    let mut pos = from;
    let mut chars = 0;
    let mut padded = false;
    loop {
        let b = bytes.get(pos).copied();
        let escape = bytes.get(pos..pos + 3).and_then(|e| {
            let e = [e[0], e[1], e[2].to_ascii_uppercase()];
            match &e {
                b"%2B" | b"%2F" => Some(false),
                b"%3D" => Some(true),
                _ => None,
            }
        });
        let (step, is_pad) = match (b, escape) {
            (Some(b'%'), Some(is_pad)) => (3, is_pad),
            (Some(b'='), _) => (1, true),
            (Some(b), _) if base64url(b) || b == b'+' || b == b'/' => (1, false),
            _ => break,
        };
        if padded && !is_pad {
            return None; // a char after the padding
        }
        padded |= is_pad;
        chars += 1;
        pos += step;
        if chars > 44 {
            return None;
        }
    }
    let valid = match chars {
        43 => !padded,
        44 => {
            padded && !bytes[from..pos].ends_with(b"==") && !bytes[from..pos].ends_with(b"%3D%3D")
        }
        _ => false,
    };
    valid.then_some(pos)
}

/// The end of a webhook URL's path starting at `from`: path segments of
/// URL chars, at least `min_segments` of them non-empty; a final `/` or
/// sentence full stop is not part of it.
fn webhook_path_end(bytes: &[u8], from: usize, min_segments: usize) -> Option<usize> {
    let len = run_len(bytes, from, |b| {
        b.is_ascii_alphanumeric()
            || matches!(
                b,
                b'/' | b'-' | b'_' | b'.' | b'~' | b'%' | b'@' | b'=' | b'+'
            )
    });
    let mut end = from + len;
    while end > from && matches!(bytes[end - 1], b'/' | b'.') {
        end -= 1;
    }
    let path = &bytes[from..end];
    let segments = path.split(|&b| b == b'/').filter(|s| !s.is_empty()).count();
    (segments >= min_segments && path.iter().any(u8::is_ascii_alphanumeric)).then_some(end)
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

    /// (text, the findings expected in it)
    fn check(cases: &[(String, Vec<&str>)]) {
        let scanner = SecretScanner::new().unwrap();
        for (text, expected) in cases {
            let mut out = Vec::new();
            scanner.find(text, &mut out);
            assert!(out.iter().all(|f| f.kind == Kind::Secret));
            assert_eq!(spans_of(text, &out), *expected, "{text:?}");
        }
    }

    #[test]
    fn cloud_keys_after_their_labels() {
        let aws = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
        let key_id = "3f1c5e9a0b7d2c4e6f8a1b3c5d7e9f0a2b4c6d8e";
        let azure = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
        let sas = "4Xz7tKp2Lq9Vn3Rm8Ws1Yb6Jc0Hd5Fg%2BAe7Ik2Ol4Pu%3D";
        let sas_raw = "4Xz7tKp2Lq9Vn3Rm8Ws1Yb6Jc0Hd5Fg+Ae7Ik2Ol4Pu=";
        let logic = "Wq3cX9vB2nM7kL1pZ8rT4yU6iO0aS5dF3gH7jK2lQ9e";
        let cases: Vec<(String, Vec<&str>)> = vec![
            (format!("aws_secret_access_key = {aws}\n"), vec![aws]),
            (format!("AWS_SECRET_ACCESS_KEY={aws}"), vec![aws]),
            (format!("export AWS_SECRET_ACCESS_KEY=\"{aws}\""), vec![aws]),
            (format!("{{\"SecretAccessKey\": \"{aws}\"}}"), vec![aws]),
            (format!("secretAccessKey: '{aws}',"), vec![aws]),
            (
                format!("AKIAIOSFODNN7EXAMPLE aws_secret_access_key={aws}"),
                vec!["AKIAIOSFODNN7EXAMPLE", aws],
            ),
            (format!("{{\"private_key_id\": \"{key_id}\","), vec![key_id]),
            (
                format!("DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={azure};EndpointSuffix=core.windows.net"),
                vec![azure],
            ),
            (
                "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWo=".into(),
                vec!["Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWo="],
            ),
            (
                format!("https://acme.blob.core.windows.net/c/f.txt?sv=2022-11-02&se=2025-01-01&sr=b&sp=r&sig={sas}"),
                vec![sas],
            ),
            (format!("?sig={sas_raw}&x=1"), vec![sas_raw]),
            (
                format!("https://prod-01.westus.logic.azure.com/workflows/1/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers&sv=1.0&sig={logic}"),
                vec![logic],
            ),
            (
                "key AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI here".into(),
                vec!["AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI"],
            ),
            (
                "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw".into(),
                vec!["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
            ),
            (
                "client_secret GOCSPX-1a2B3c4D5e6F7g8H9i0JkLmNoPq".into(),
                vec!["GOCSPX-1a2B3c4D5e6F7g8H9i0JkLmNoPq"],
            ),
            (
                "\"private_key\": \"-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBg\\n-----END PRIVATE KEY-----\\n\"".into(),
                vec!["-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBg\\n-----END PRIVATE KEY-----"],
            ),
            // false positives
            ("aws_secret_access_key = <your secret key>".into(), vec![]),
            ("AWS_SECRET_ACCESS_KEY=${AWS_SECRET_ACCESS_KEY}".into(), vec![]),
            (format!("aws_secret_access_key = {aws}X"), vec![]), // 41 chars
            ("set the secret_access_key option".into(), vec![]),
            (format!("{aws} on its own"), vec![]), // 40 chars, no label
            ("\"private_key_id\": \"3f1c5e9a0b7d\"".into(), vec![]),
            ("AccountKey=<key>;".into(), vec![]),
            ("AccountKey=abc==".into(), vec![]),
            (format!("design=1&xsig={sas}"), vec![]), // not `?sig=` nor `&sig=`
            ("?sig=short&x=1".into(), vec![]),
            (format!("?sig={sas_raw}=="), vec![]), // 46 chars
        ];
        check(&cases);
    }

    #[test]
    fn webhook_urls_have_their_path_found() {
        let cases: Vec<(String, Vec<&str>)> = vec![
            (
                "post to https://hooks.slack.com/services/T000/B000/XXXX now".into(),
                vec!["T000/B000/XXXX"],
            ),
            (
                "https://hooks.slack.com/services/T01ABCDEF/B02GHIJKL/aBcDeFgHiJkLmNoPqRsTuVwX.".into(),
                vec!["T01ABCDEF/B02GHIJKL/aBcDeFgHiJkLmNoPqRsTuVwX"],
            ),
            (
                "https://hooks.slack.com/workflows/T01ABC/A02DEF/123456789/xYz0123".into(),
                vec!["T01ABC/A02DEF/123456789/xYz0123"],
            ),
            (
                "\"url\":\"https://discord.com/api/webhooks/123456789012345678/abcDEF-ghi_JKL0123456789\"".into(),
                vec!["123456789012345678/abcDEF-ghi_JKL0123456789"],
            ),
            (
                "https://discordapp.com/api/webhooks/123/abc".into(),
                vec!["123/abc"],
            ),
            (
                "https://acme.webhook.office.com/webhookb2/0f1e2d3c-aaaa-bbbb-cccc-000000000000@11111111-2222-3333-4444-555555555555/IncomingWebhook/0123456789abcdef0123456789abcdef/66666666-7777-8888-9999-000000000000 ok".into(),
                vec!["0f1e2d3c-aaaa-bbbb-cccc-000000000000@11111111-2222-3333-4444-555555555555/IncomingWebhook/0123456789abcdef0123456789abcdef/66666666-7777-8888-9999-000000000000"],
            ),
            (
                "https://outlook.office.com/webhook/a1b2@c3d4/IncomingWebhook/e5f6/a7b8".into(),
                vec!["a1b2@c3d4/IncomingWebhook/e5f6/a7b8"],
            ),
            (
                "Zap: https://hooks.zapier.com/hooks/catch/123456/abcdef/".into(),
                vec!["123456/abcdef"],
            ),
            // false positives: the fixed part without a secret path
            ("see https://hooks.slack.com/services/ for docs".into(), vec![]),
            ("https://hooks.slack.com/services/T000/B000".into(), vec![]),
            ("https://discord.com/api/webhooks/123".into(), vec![]),
            ("https://api.slack.com/messaging/webhooks".into(), vec![]),
            ("https://hooks.zapier.com/hooks/catch/".into(), vec![]),
        ];
        check(&cases);
    }

    /// Every prefix's first three bytes index it (none is shorter).
    #[test]
    fn every_prefix_has_three_bytes_and_is_found_where_written() {
        let index = PrefixIndex::get();
        for (at, (prefix, _)) in PREFIXES.iter().enumerate() {
            assert!(prefix.len() >= 3, "prefix {at}");
            let text = format!("x {prefix}");
            let (start, end, found) = index.next(text.as_bytes(), 0).unwrap();
            assert_eq!((start, end), (2, text.len()), "prefix {at}");
            assert_eq!(PREFIXES[found].0, *prefix, "prefix {at}");
        }
    }

    proptest::proptest! {
        /// The index finds the prefixes an Aho-Corasick automaton finds
        /// (leftmost, then longest), in texts made of prefixes, their
        /// pieces and other bytes.
        #[test]
        fn prefixes_found_as_an_automaton_finds_them(
            parts in proptest::collection::vec((0usize..PREFIXES.len(), 0usize..12, "[a-zA-Z0-9 _./=-]{0,6}"), 0..12)
        ) {
            use aho_corasick::automaton::Automaton;
            let reference = aho_corasick::nfa::contiguous::NFA::builder()
                .match_kind(aho_corasick::MatchKind::LeftmostLongest)
                .build(PREFIXES.iter().map(|(prefix, _)| prefix))
                .unwrap();
            let mut text = String::new();
            for (prefix, cut, other) in parts {
                let prefix = PREFIXES[prefix].0;
                text.push_str(&prefix[..cut.min(prefix.len())]);
                text.push_str(&other);
            }
            let bytes = text.as_bytes();
            for from in 0..=bytes.len() {
                let input = aho_corasick::Input::new(bytes).span(from..bytes.len());
                let expected = reference
                    .try_find(&input)
                    .unwrap()
                    .map(|hit| (hit.start(), hit.end(), hit.pattern().as_usize()));
                let index = PrefixIndex::get();
                proptest::prop_assert_eq!(index.next(bytes, from), expected, "from {}", from);
                // The block scan with the one-lane candidates (the vector
                // form runs in the filter's `.wasm`).
                let blocks = index.next_after_blocks(bytes, from, NibbleTables::candidates_by_lane);
                proptest::prop_assert_eq!(blocks, expected, "from {} (blocks)", from);
            }
        }
    }

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
