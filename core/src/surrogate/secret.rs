//! Secret surrogates: the same known prefix (`sk-ant-`, `ghp_`, `AKIA`…),
//! the same length, and per position the same class of char from the same
//! alphabet; JWTs keep their three parts, PEM blocks their armour lines.

use super::rng::{SeedRng, DIGITS, LOWER, UPPER};

/// Prefixes that name the issuer and type of a key, longest first where one
/// extends another.
const KNOWN_PREFIXES: &[&str] = &[
    "sk-ant-admin01-",
    "sk-ant-api03-",
    "sk-ant-",
    "sk-proj-",
    "sk-svcacct-",
    "sk-admin-",
    "sk-",
    "github_pat_",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "glpat-",
    "xoxb-",
    "xoxp-",
    "xoxa-",
    "xoxe-",
    "xapp-",
    "AKIA",
    "ASIA",
    "AIza",
    "hf_",
    "sk_live_",
    "sk_test_",
    "rk_live_",
    "rk_test_",
    "pk_live_",
    "pk_test_",
    "whsec_",
    "npm_",
    "pypi-",
    "SG.",
    "dop_v1_",
    "shpat_",
    "shpss_",
    "sq0atp-",
    "AGE-SECRET-KEY-",
    "gsk_",
    "xai-",
    "r8_",
];

/// The surrogate of a secret.
pub fn derive(rng: &mut SeedRng, value: &str) -> String {
    if value.contains("-----BEGIN ") {
        return derive_pem(rng, value);
    }
    if is_jwt(value) {
        return derive_jwt(rng, value);
    }
    let prefix = KNOWN_PREFIXES
        .iter()
        .find(|p| value.starts_with(**p))
        .copied()
        .unwrap_or("");
    let body = &value[prefix.len()..];
    let mut out = String::with_capacity(value.len());
    out.push_str(prefix);
    if body.contains('%') {
        // Percent-escapes (a URL's `sig=%2B…%3D`) stay as written: a new
        // escape could decode to anything, a control char included.
        let bytes = body.as_bytes();
        let mut run_start = 0;
        let mut i = 0;
        while i < bytes.len() {
            let escape = bytes[i] == b'%'
                && bytes.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                && bytes.get(i + 2).is_some_and(u8::is_ascii_hexdigit);
            if escape {
                out.push_str(&same_alphabet(rng, &body[run_start..i]));
                out.push_str(&body[i..i + 3]);
                i += 3;
                run_start = i;
            } else {
                i += 1;
            }
        }
        out.push_str(&same_alphabet(rng, &body[run_start..]));
        return out;
    }
    out.push_str(&same_alphabet(rng, body));
    out
}

/// Each letter or digit replaced by one of its class from the alphabet the
/// value uses (hex stays hex); anything else kept.
pub fn same_alphabet(rng: &mut SeedRng, body: &str) -> String {
    // Hex only when the whole body is hex of one case: a base62 token may
    // hold only a–f letters by chance, but not in both cases.
    let hex_lower = body
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    let hex_upper = body
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'A'..=b'F').contains(&b));
    let lower: &[u8] = if hex_lower { b"abcdef" } else { LOWER };
    let upper: &[u8] = if hex_upper { b"ABCDEF" } else { UPPER };
    body.chars()
        .map(|c| match c {
            '0'..='9' => rng.pick_char(DIGITS),
            'a'..='z' => rng.pick_char(lower),
            'A'..='Z' => rng.pick_char(upper),
            '"' => '\'',
            '\\' => '/',
            c if c.is_control() && c != '\n' && c != '\r' => ' ',
            c => c,
        })
        .collect()
}

fn is_jwt(value: &str) -> bool {
    let parts: Vec<&str> = value.split('.').collect();
    value.starts_with("eyJ")
        && parts.len() == 3
        && parts.iter().take(2).all(|p| !p.is_empty())
        && parts.iter().all(|p| {
            p.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'=')
        })
}

/// A JWT: the header (algorithm and type, nothing personal) kept, the
/// payload keeps its `eyJ` start, the rest of payload and signature change.
fn derive_jwt(rng: &mut SeedRng, value: &str) -> String {
    let mut parts = value.split('.');
    let header = parts.next().unwrap_or("");
    let payload = parts.next().unwrap_or("");
    let signature = parts.next().unwrap_or("");
    let payload_new = match payload.strip_prefix("eyJ") {
        Some(rest) => format!("eyJ{}", same_alphabet(rng, rest)),
        None => same_alphabet(rng, payload),
    };
    format!("{header}.{payload_new}.{}", same_alphabet(rng, signature))
}

/// A PEM block: armour lines and `Key: value` headers kept, every body line
/// the same length with new base64, the first body line's first 4 chars
/// (the DER structure's tag and length, e.g. `MIIE`) kept.
fn derive_pem(rng: &mut SeedRng, value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut first_body_line = true;
    for line in value.split_inclusive('\n') {
        let content = line.trim_end_matches(['\r', '\n']);
        let ending = &line[content.len()..];
        let is_body = !content.is_empty()
            && !content.starts_with("-----")
            && !content.contains(':')
            && !content.contains(' ');
        if !is_body {
            out.push_str(line);
            continue;
        }
        let kept = if first_body_line {
            content.len().min(4)
        } else {
            0
        };
        first_body_line = false;
        let (head, rest) = content.split_at(kept);
        out.push_str(head);
        out.push_str(&base64_like(rng, rest));
        out.push_str(ending);
    }
    out
}

/// Base64 with the shape of `body`: letters and digits redrawn from the full
/// base64 alphabet, `+`, `/` and `=` padding kept where they were.
fn base64_like(rng: &mut SeedRng, body: &str) -> String {
    body.chars()
        .map(|c| match c {
            c if c.is_ascii_alphanumeric() => {
                rng.pick_char(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
            }
            c => c,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classes(s: &str) -> String {
        s.chars()
            .map(|c| match c {
                '0'..='9' => '9',
                'a'..='z' => 'a',
                'A'..='Z' => 'A',
                c => c,
            })
            .collect()
    }

    #[test]
    fn secrets_keep_prefix_length_and_classes() {
        let cases = [
            (
                "sk-ant-api03-AbCdEf0123456789_xyzXYZ-abcdefABCDEF0123",
                "sk-ant-api03-",
            ),
            ("sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56", "sk-proj-"),
            ("sk-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78", "sk-"),
            ("ghp_1234567890abcdefABCDEF1234567890abcd", "ghp_"),
            (
                "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
                "github_pat_",
            ),
            ("AKIAIOSFODNN7EXAMPLE", "AKIA"),
            (
                "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
                "xoxb-",
            ),
            ("AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", "AIza"),
            ("plainsecretvalue123", ""),
        ];
        for (value, prefix) in cases {
            for seed in 0..20u8 {
                let out = derive(&mut SeedRng::from_seed([seed; 32]), value);
                assert!(out.starts_with(prefix), "{value}");
                assert_eq!(classes(&out), classes(value), "{value}");
                assert_ne!(out, value);
            }
        }
    }

    #[test]
    fn base62_with_only_a_to_f_letters_is_not_taken_for_hex() {
        let value = "ghp_1234567890abcdefABCDEF1234567890abcd";
        let letters: std::collections::HashSet<char> = (0..20u8)
            .flat_map(|seed| {
                derive(&mut SeedRng::from_seed([seed; 32]), value)
                    .chars()
                    .skip(4)
                    .collect::<Vec<_>>()
            })
            .filter(char::is_ascii_alphabetic)
            .collect();
        assert!(letters.iter().any(|c| !c.is_ascii_hexdigit()));
    }

    #[test]
    fn hex_stays_hex() {
        let value = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
        let out = derive(&mut SeedRng::from_seed([4; 32]), value);
        assert_eq!(out.len(), value.len());
        assert!(out
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
    }

    #[test]
    fn jwt_keeps_three_parts_and_header() {
        let value = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";
        let out = derive(&mut SeedRng::from_seed([4; 32]), value);
        let parts: Vec<&str> = out.split('.').collect();
        assert_eq!(parts.len(), 3);
        assert_eq!(parts[0], "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9");
        assert!(parts[1].starts_with("eyJ"));
        assert_eq!(out.len(), value.len());
        assert_ne!(out, value);
    }

    #[test]
    fn pem_keeps_armour_and_line_lengths() {
        let value = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nBKcwggSjAgEAAoIBAQC7+/abc==\n-----END PRIVATE KEY-----\n";
        let out = derive(&mut SeedRng::from_seed([4; 32]), value);
        let (a, b): (Vec<&str>, Vec<&str>) = (value.lines().collect(), out.lines().collect());
        assert_eq!(a.len(), b.len());
        assert_eq!(b[0], a[0]);
        assert_eq!(b[3], a[3]);
        assert!(b[1].starts_with("MIIE"));
        for (x, y) in a.iter().zip(b.iter()) {
            assert_eq!(x.len(), y.len());
        }
        assert!(b[2].ends_with("=="));
        assert_ne!(b[1], a[1]);
        assert!(out.ends_with('\n'));
    }
}
