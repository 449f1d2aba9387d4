//! IP addresses.
//!
//! - IPv4: four dotted decimal octets, each 0–255 without leading zeros,
//!   not part of a longer dotted number (`1.2.3.4.5`, `v1.2.3.4`); a port
//!   or prefix length after it (`:8080`, `/24`) is not part of the finding.
//! - IPv6: full and compressed forms (`2001:db8::1`, `::1`, `fe80::1`,
//!   `::ffff:192.0.2.1`), validated by the standard parser. At least one
//!   decimal digit is required, so identifiers and code paths (`dead::beef`,
//!   `std::fmt`) are not addresses, and a compressed form needs a group of
//!   three or more hex digits (or is `::1`), so Python slices (`x[1::2]`)
//!   are not either; times (`12:30`, `12:30:45`) and MAC
//!   addresses do not parse.

use super::digits::next_digit;
use super::Finding;
use crate::kind::Kind;
use crate::text::on_value_boundaries;
use std::net::Ipv6Addr;

/// The longest IPv6 text form (`ffff:…:255.255.255.255`).
const MAX_IPV6_LEN: usize = 45;

/// Appends the IPv4 and IPv6 addresses of `text` to `out`.
///
/// `first_digit` is where the first ASCII digit of `text` is, if any.
pub(super) fn find(text: &str, first_digit: Option<usize>, out: &mut Vec<Finding>) {
    if let Some(first_digit) = first_digit {
        find_v4(text, first_digit, out);
    }
    find_v6(text, out);
}

fn find_v4(text: &str, first_digit: usize, out: &mut Vec<Finding>) {
    let bytes = text.as_bytes();
    let mut from = first_digit;
    while let Some(start) = next_digit(bytes, from) {
        let (end, parts, valid) = read_dotted(bytes, start);
        from = end.max(start + 1);
        let glued_before =
            start >= 2 && bytes[start - 1] == b'.' && bytes[start - 2].is_ascii_digit();
        if valid && parts == 4 && !glued_before && on_value_boundaries(text, start, end, false) {
            out.push(Finding::new(Kind::Ip, start, end));
        }
    }
}

/// Reads a dotted decimal run from `start`: its end, its number of parts,
/// and whether every part is an octet.
fn read_dotted(bytes: &[u8], start: usize) -> (usize, usize, bool) {
    let mut pos = start;
    let mut parts = 0;
    let mut valid = true;
    loop {
        let part_start = pos;
        while bytes.get(pos).is_some_and(u8::is_ascii_digit) {
            pos += 1;
        }
        let part = &bytes[part_start..pos];
        parts += 1;
        valid &= is_octet(part);
        if bytes.get(pos) == Some(&b'.') && bytes.get(pos + 1).is_some_and(u8::is_ascii_digit) {
            pos += 1;
        } else {
            return (pos, parts, valid);
        }
    }
}

fn is_octet(part: &[u8]) -> bool {
    match part {
        [b'0'] => true,
        [b'0', ..] => false,
        _ if part.len() <= 3 => {
            part.iter()
                .fold(0u32, |acc, &b| acc * 10 + u32::from(b - b'0'))
                <= 255
        }
        _ => false,
    }
}

fn is_hex_or_colon(b: u8) -> bool {
    b.is_ascii_hexdigit() || b == b':'
}

fn find_v6(text: &str, out: &mut Vec<Finding>) {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(offset) = memchr::memchr(b':', &bytes[from..]) {
        let colon = from + offset;
        from = colon + 1;
        // Cheap rejection of the common `"key": value` colon.
        let hexish = |i: Option<usize>| {
            i.and_then(|i| bytes.get(i))
                .is_some_and(|&b| is_hex_or_colon(b))
        };
        if !hexish(colon.checked_sub(1)) && !hexish(Some(colon + 1)) {
            continue;
        }
        let mut start = colon;
        while start > 0 && is_hex_or_colon(bytes[start - 1]) {
            start -= 1;
        }
        let mut end = colon + 1;
        while end < bytes.len() && (is_hex_or_colon(bytes[end]) || bytes[end] == b'.') {
            end += 1;
        }
        from = end;
        // Sentence punctuation after the address.
        while end > start && bytes[end - 1] == b'.' {
            end -= 1;
        }
        if end > start + 1 && bytes[end - 1] == b':' && bytes[end - 2] != b':' {
            end -= 1;
        }
        let candidate = &bytes[start..end];
        if candidate.len() > MAX_IPV6_LEN
            || candidate.iter().filter(|&&b| b == b':').count() < 2
            || !candidate.iter().any(u8::is_ascii_digit)
        {
            continue;
        }
        if !plausible_v6_written_form(candidate) {
            continue;
        }
        let parses = std::str::from_utf8(candidate)
            .ok()
            .and_then(|s| s.parse::<Ipv6Addr>().ok())
            .is_some();
        if parses && on_value_boundaries(text, start, end, false) {
            out.push(Finding::new(Kind::Ip, start, end));
        }
    }
}

/// A compressed form (`::`) needs a group of three or more hex digits,
/// unless it is the loopback `::1`: code such as Python's slices (`x[::2]`,
/// `x[1::2]`) is not an address.
fn plausible_v6_written_form(candidate: &[u8]) -> bool {
    let compressed = candidate.windows(2).any(|w| w == b"::");
    !compressed
        || candidate == b"::1"
        || candidate
            .split(|&b| b == b':')
            .any(|group| group.len() >= 3)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::super::tests::spans_of;
    use super::*;

    #[test]
    fn ip_table() {
        let cases: &[(&str, &[&str])] = &[
            ("server 192.168.1.10 is down", &["192.168.1.10"]),
            ("connect to 10.0.0.1:8080.", &["10.0.0.1"]),
            ("subnet 172.16.0.0/12", &["172.16.0.0"]),
            ("IP: 8.8.8.8, 1.1.1.1", &["8.8.8.8", "1.1.1.1"]),
            (
                "la IP del servidor es 255.255.255.255",
                &["255.255.255.255"],
            ),
            ("IPv6 2001:db8::1 ok", &["2001:db8::1"]),
            ("loopback ::1.", &["::1"]),
            (
                "link fe80::1ff:fe23:4567:890a, bitte",
                &["fe80::1ff:fe23:4567:890a"],
            ),
            (
                "full 2001:0db8:85a3:0000:0000:8a2e:0370:7334",
                &["2001:0db8:85a3:0000:0000:8a2e:0370:7334"],
            ),
            ("url http://[2001:db8::42]:443/", &["2001:db8::42"]),
            (
                "mapped ::ffff:192.0.2.1",
                &["::ffff:192.0.2.1", "192.0.2.1"],
            ),
            ("服务器10.0.0.1上线了", &["10.0.0.1"]), // glued to CJK
            // false positives
            ("host_10.0.0.1", &[]), // `_` still glues an address
            ("version 1.2.3.4.5", &[]),
            ("v1.2.3.4", &[]),
            ("256.1.1.1", &[]),
            ("01.02.20.24", &[]),
            ("Preis 1.234.567", &[]),
            ("alle 12:30 o 12:30:45", &[]),
            ("MAC 00:1a:2b:3c:4d:5e", &[]),
            ("use std::fmt and dead::beef", &[]),
            ("python x[::2], y[1::2], z[10::20]", &[]),
            ("{\"a\":1,\"b\":\"c\"}", &[]),
            ("2024-01-15T10:30:00Z", &[]),
            ("1.2.3.4x", &[]),
        ];
        for (text, expected) in cases {
            let mut out = Vec::new();
            find(
                text,
                crate::detect::digits::next_digit(text.as_bytes(), 0),
                &mut out,
            );
            out.sort_by_key(|f| f.start);
            assert!(out.iter().all(|f| f.kind == Kind::Ip));
            assert_eq!(spans_of(text, &out), *expected, "{text:?}");
        }
    }
}
