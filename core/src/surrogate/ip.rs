//! IP address surrogates: v4 stays v4 in the same range class (private,
//! loopback, link-local, shared, public), v6 stays v6 in the same written
//! form (compressed stays compressed, group widths and case kept).

use super::rng::SeedRng;
use std::net::{Ipv4Addr, Ipv6Addr};

/// The surrogate of an IP address (with an optional `/prefix` or, for v6,
/// `%zone`, kept as written); None when `value` is not an address.
pub fn derive(rng: &mut SeedRng, value: &str) -> Option<String> {
    let (address, suffix) = match value.find(['/', '%']) {
        Some(pos) => value.split_at(pos),
        None => (value, ""),
    };
    if !suffix.is_empty()
        && !suffix[1..]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-')
    {
        return None;
    }
    let new = if address.contains(':') {
        derive_v6(rng, address)?
    } else {
        derive_v4(rng, address)?
    };
    Some(format!("{new}{suffix}"))
}

fn parse_v4(address: &str) -> Option<[u8; 4]> {
    let mut octets = [0u8; 4];
    let mut parts = address.split('.');
    for octet in octets.iter_mut() {
        let part = parts.next()?;
        if part.is_empty() || part.len() > 3 || !part.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        *octet = part.parse().ok()?;
    }
    parts.next().is_none().then_some(octets)
}

fn derive_v4(rng: &mut SeedRng, address: &str) -> Option<String> {
    let [a, b, _, _] = parse_v4(address)?;
    let mut octet = |lo: usize, hi: usize| (lo + rng.below(hi - lo + 1)) as u8;
    let new: [u8; 4] = match (a, b) {
        (10, _) => [10, octet(0, 255), octet(0, 255), octet(1, 254)],
        (172, 16..=31) => [172, octet(16, 31), octet(0, 255), octet(1, 254)],
        (192, 168) => [192, 168, octet(0, 255), octet(1, 254)],
        (127, _) => [127, octet(0, 255), octet(0, 255), octet(1, 254)],
        (169, 254) => [169, 254, octet(1, 254), octet(1, 254)],
        (100, 64..=127) => [100, octet(64, 127), octet(0, 255), octet(1, 254)],
        (224..=255, _) => [a, octet(0, 255), octet(0, 255), octet(1, 254)],
        _ => {
            // Public: a first octet outside every special range.
            let mut first = octet(1, 223);
            while matches!(first, 10 | 100 | 127 | 169 | 172 | 192) {
                first = octet(1, 223);
            }
            [first, octet(0, 255), octet(0, 255), octet(1, 254)]
        }
    };
    Some(Ipv4Addr::from(new).to_string())
}

fn derive_v6(rng: &mut SeedRng, address: &str) -> Option<String> {
    address.parse::<Ipv6Addr>().ok()?;
    // An embedded v4 tail (`::ffff:192.0.2.1`) follows the v4 rules.
    let (groups_part, v4_tail) = match address.rfind(':') {
        Some(pos) if address[pos + 1..].contains('.') => {
            (&address[..=pos], Some(&address[pos + 1..]))
        }
        _ => (address, None),
    };
    let upper = address.chars().any(|c| c.is_ascii_uppercase());
    let alphabet: &[u8] = if upper {
        b"0123456789ABCDEF"
    } else {
        b"0123456789abcdef"
    };
    let nonzero = &alphabet[1..];
    let mut out = String::with_capacity(address.len());
    let mut first_group = true;
    for (i, group) in groups_part.split(':').enumerate() {
        if i > 0 {
            out.push(':');
        }
        if group.is_empty() {
            continue;
        }
        let lower = group.to_ascii_lowercase();
        let kept = if v4_tail.is_some() && lower == "ffff" {
            group.len()
        } else if first_group {
            // Keep what says which kind of address it is.
            if lower.starts_with("fe8")
                || lower.starts_with("fe9")
                || lower.starts_with("fea")
                || lower.starts_with("feb")
            {
                group.len()
            } else if lower.len() == 4
                && (lower.starts_with("fc") || lower.starts_with("fd") || lower.starts_with("ff"))
            {
                2
            } else if lower.len() == 4 {
                1
            } else {
                0
            }
        } else {
            0
        };
        first_group = false;
        out.push_str(&group[..kept]);
        let rest = &group[kept..];
        let zeros = rest.chars().take_while(|c| *c == '0').count();
        for (j, _) in rest.char_indices() {
            if j < zeros {
                out.push('0');
            } else if j == zeros {
                out.push(rng.pick_char(nonzero));
            } else {
                out.push(rng.pick_char(alphabet));
            }
        }
    }
    if let Some(tail) = v4_tail {
        out.push_str(&derive_v4(rng, tail)?);
    }
    out.parse::<Ipv6Addr>().ok()?;
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Which range an IPv4 address is in.
    fn v4_class(address: &str) -> &'static str {
        let ip: Ipv4Addr = address.parse().unwrap_or(Ipv4Addr::UNSPECIFIED);
        if ip.is_private() {
            "private"
        } else if ip.is_loopback() {
            "loopback"
        } else if ip.is_link_local() {
            "link-local"
        } else if ip.octets()[0] == 100 && (64..128).contains(&ip.octets()[1]) {
            "shared"
        } else {
            "public"
        }
    }

    #[test]
    fn v4_keeps_its_range_class() {
        let cases = [
            "10.1.2.3",
            "172.20.0.5",
            "192.168.1.10",
            "127.0.0.1",
            "169.254.3.4",
            "100.64.0.1",
            "8.8.8.8",
            "151.101.1.69",
            "203.0.113.7",
        ];
        for value in cases {
            for seed in 0..50u8 {
                let out = derive(&mut SeedRng::from_seed([seed; 32]), value).unwrap_or_default();
                assert!(out.parse::<Ipv4Addr>().is_ok(), "{value} → {out}");
                assert_eq!(v4_class(&out), v4_class(value), "{value} → {out}");
                assert!(
                    !out.ends_with(".0") && !out.ends_with(".255"),
                    "{value} → {out}"
                );
            }
        }
        let out = derive(&mut SeedRng::from_seed([1; 32]), "10.0.0.0/8").unwrap_or_default();
        assert!(out.starts_with("10.") && out.ends_with("/8"));
    }

    #[test]
    fn v6_keeps_written_form() {
        let cases = [
            ("2001:db8::1", "2"),
            ("2001:0db8:85a3:0000:0000:8a2e:0370:7334", "2"),
            ("fe80::1ff:fe23:4567:890a%eth0", "fe80"),
            ("FD12:3456:789A:1::1", "FD"),
            ("::ffff:192.168.1.10", "::ffff:192.168."),
            ("::1", "::"),
        ];
        for (value, kept) in cases {
            for seed in 0..50u8 {
                let out = derive(&mut SeedRng::from_seed([seed; 32]), value).unwrap_or_default();
                let address = out.split('%').next().unwrap_or("");
                assert!(address.parse::<Ipv6Addr>().is_ok(), "{value} → {out}");
                assert!(out.starts_with(kept), "{value} → {out}");
                if !value.contains('.') {
                    assert_eq!(out.len(), value.len(), "{value} → {out}");
                }
                assert_eq!(out.contains("::"), value.contains("::"));
                assert_eq!(out.matches(':').count(), value.matches(':').count());
                assert_eq!(
                    out.chars().any(|c| c.is_ascii_uppercase()),
                    value.chars().any(|c| c.is_ascii_uppercase())
                );
            }
        }
    }

    #[test]
    fn non_addresses_are_refused() {
        for value in [
            "1.2.3",
            "1.2.3.4.5",
            "256.1.1.1",
            "a.b.c.d",
            "::g",
            "1.2.3.4/\"x",
        ] {
            assert_eq!(
                derive(&mut SeedRng::from_seed([1; 32]), value),
                None,
                "{value}"
            );
        }
    }
}
