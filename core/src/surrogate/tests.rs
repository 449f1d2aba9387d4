//! Tests of the public derivation: shape per kind, determinism, variation,
//! rarity of collisions, provider domains, and a property test that `derive`
//! never panics and never gives the value back.

use super::*;
use proptest::prelude::*;
use std::collections::HashSet;

const KEY: &[u8] = b"test-derive-key";

fn d(kind: &Kind, value: &str) -> String {
    derive(KEY, 1, kind, value, 0, None)
}

fn skeleton(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '0'..='9' => '9',
            'a'..='z' => 'a',
            'A'..='Z' => 'A',
            c => c,
        })
        .collect()
}

fn all_kinds() -> Vec<Kind> {
    vec![
        Kind::Email,
        Kind::Domain,
        Kind::Phone,
        Kind::Iban,
        Kind::Card,
        Kind::Ip,
        Kind::Secret,
        Kind::Name,
        Kind::Custom("employee-id".into()),
    ]
}

#[test]
fn emails_keep_style_and_take_the_domain_surrogate() {
    let cases = [
        // (value, domain surrogate passed, expected domain, local skeleton)
        (
            "mario.rossi@acme.it",
            Some("brightvale.it"),
            Some("brightvale.it"),
            "a.a",
        ),
        (
            "mrossi@acme.it",
            Some("oakford.it"),
            Some("oakford.it"),
            "a",
        ),
        ("mario.rossi@gmail.com", None, Some("gmail.com"), "a.a"),
        ("Mario.Rossi84@GMail.com", None, Some("GMail.com"), "A.A9"),
        (
            "laura_bianchi@hotmail.co.uk",
            None,
            Some("hotmail.co.uk"),
            "a_a",
        ),
        ("m.rossi@acme.co.uk", None, None, "a.a"),
    ];
    for (value, domain_surrogate, expected_domain, local_skeleton) in cases {
        let out = derive(KEY, 1, &Kind::Email, value, 0, domain_surrogate);
        let (local, domain) = out.rsplit_once('@').unwrap_or_default();
        let local_shape: String = skeleton(local)
            .chars()
            .fold(String::new(), |mut s, c| {
                if !(s.ends_with(c) && (c == 'a' || c == 'A' || c == '9')) {
                    s.push(c);
                }
                s
            })
            .replace("Aa", "A");
        assert_eq!(local_shape, local_skeleton, "{value} → {out}");
        match expected_domain {
            Some(expected) => assert_eq!(domain, expected, "{value}"),
            None => {
                // Derived here: the domain's own counter-0 surrogate.
                let own = derive(KEY, 1, &Kind::Domain, "acme.co.uk", 0, None);
                assert_eq!(domain, own);
                assert!(domain.ends_with(".co.uk"));
            }
        }
        assert_ne!(out, value);
        assert!(shape::is_json_safe(&out));
    }
}

#[test]
fn company_and_provider_domains_are_told_apart() {
    let cases = [
        ("mario.rossi@acme.it", Some("acme.it")),
        ("a@mail.acme.co.uk", Some("mail.acme.co.uk")),
        ("mario@gmail.com", None),
        ("mario@GMAIL.COM", None),
        ("mario@hotmail.it", None),
        ("mario@yahoo.co.uk", None),
        ("mario@web.de", None),
        ("mario@libero.it", None),
        ("no-at-sign.it", None),
        ("mario@", None),
        ("@acme.it", None),
        ("mario@localhost", None),
        ("mario@acme.it.", None),
    ];
    for (value, expected) in cases {
        assert_eq!(email_company_domain(value), expected, "{value}");
    }
}

#[test]
fn every_kind_keeps_its_shape() {
    // (kind, value, check)
    type Check = fn(&str, &str) -> bool;
    let same_skeleton: Check = |v, o| skeleton(v) == skeleton(o);
    let same_digit_skeleton: Check = |v, o| {
        let digits = |s: &str| {
            s.chars()
                .map(|c| if c.is_ascii_digit() { '9' } else { c })
                .collect::<String>()
        };
        digits(v) == digits(o)
    };
    let cases: Vec<(Kind, &str, Check)> = vec![
        (Kind::Phone, "+39 347 123 4567", |v, o| {
            same_digit_skeleton_fn(v, o) && o.starts_with("+39 3")
        }),
        (Kind::Phone, "(02) 1234-5678", same_digit_skeleton),
        (Kind::Iban, "IT60 X054 2811 1010 0000 0123 456", |v, o| {
            skeleton(v) == skeleton(o) && iban::is_valid(o) && o.starts_with("IT")
        }),
        (Kind::Card, "4111 1111 1111 1111", |v, o| {
            skeleton(v) == skeleton(o) && card::is_luhn_valid(o) && o.starts_with('4')
        }),
        (Kind::Ip, "192.168.1.10", |_, o| {
            o.starts_with("192.168.") && o.parse::<std::net::Ipv4Addr>().is_ok()
        }),
        (Kind::Ip, "2001:db8::1", |_, o| {
            o.contains("::") && o.parse::<std::net::Ipv6Addr>().is_ok()
        }),
        (Kind::Secret, "sk-ant-api03-AbCdEf0123456789", |v, o| {
            skeleton(v) == skeleton(o) && o.starts_with("sk-ant-api03-")
        }),
        (Kind::Domain, "acme.co.uk", |_, o| {
            o.ends_with(".co.uk") && domain::parse(o).is_some()
        }),
        (Kind::Name, "MARIO ROSSI", |_, o| {
            o == o.to_uppercase() && o.split(' ').count() == 2
        }),
        (
            Kind::Custom("employee-id".into()),
            "EMP-004512",
            same_skeleton,
        ),
        // Values a format does not recognise fall back to the shape.
        (Kind::Iban, "not an iban", same_skeleton),
        (Kind::Card, "12", same_skeleton),
        (Kind::Phone, "n/a", same_skeleton),
        (Kind::Ip, "999.1.1.1", same_skeleton),
        (Kind::Email, "no-at-sign", same_skeleton),
        (Kind::Domain, "localhost", same_skeleton),
    ];
    for (kind, value, check) in cases {
        for counter in 0..10 {
            let out = derive(KEY, 3, &kind, value, counter, None);
            assert!(check(value, &out), "{kind} {value} → {out}");
            assert_ne!(out, value);
            assert!(shape::is_json_safe(&out), "{kind}");
        }
    }
}

fn same_digit_skeleton_fn(v: &str, o: &str) -> bool {
    let digits = |s: &str| {
        s.chars()
            .map(|c| if c.is_ascii_digit() { '9' } else { c })
            .collect::<String>()
    };
    digits(v) == digits(o)
}

#[test]
fn derivation_is_deterministic_and_varies_with_generation_counter_and_key() {
    let values = [
        (Kind::Email, "mario.rossi@gmail.com"),
        (Kind::Domain, "acme.it"),
        (Kind::Phone, "+39 347 123 4567"),
        (Kind::Iban, "IT60X0542811101000000123456"),
        (Kind::Card, "4111111111111111"),
        (Kind::Ip, "10.0.0.1"),
        (Kind::Secret, "ghp_1234567890abcdefABCDEF1234567890abcd"),
        (Kind::Name, "Mario Rossi"),
        (Kind::Custom("badge".into()), "B-12345"),
    ];
    for (kind, value) in &values {
        let base = derive(KEY, 1, kind, value, 0, None);
        assert_eq!(base, derive(KEY, 1, kind, value, 0, None), "{kind}");
        // 20 other generations, 20 other counters, another key: 41 inputs
        // that should give 42 different surrogates with the base one.
        let mut all = HashSet::from([base]);
        for n in 1..=20u32 {
            all.insert(derive(KEY, u64::from(n) + 1, kind, value, 0, None));
            all.insert(derive(KEY, 1, kind, value, n, None));
        }
        all.insert(derive(b"other-key", 1, kind, value, 0, None));
        // A name of a recognised language draws from a few thousand
        // combinations: one chance repeat is tolerated.
        assert!(all.len() >= 41, "{kind}: {} distinct of 42", all.len());
    }
}

/// Surrogates already stored must not change under a refactor of a format
/// by accident: changing one of these is a decision (new values only get
/// the new format; stored entries keep theirs).
#[test]
fn derivation_is_stable_across_releases() {
    let cases = [
        (Kind::Email, "mario.rossi@acme.it"),
        (Kind::Phone, "+39 347 123 4567"),
        (Kind::Iban, "IT60 X054 2811 1010 0000 0123 456"),
        (Kind::Name, "Mario Rossi"),
        (Kind::Secret, "sk-ant-api03-AbCdEf0123456789"),
    ];
    let got: Vec<String> = cases
        .iter()
        .map(|(k, v)| derive(b"golden", 7, k, v, 0, None))
        .collect();
    let expected: [&str; 5] = GOLDEN;
    assert_eq!(got, expected);
}

const GOLDEN: [&str; 5] = [
    "tommaso.ferrara@redforge.it",
    "+39 389 865 0372",
    "IT90 K099 1362 8975 5246 9960 350",
    "Alberto Monti",
    "sk-ant-api03-StBjJy3296298554",
];

/// Three letters, distinct for every `i` below 26³.
fn letters(i: usize) -> String {
    [i % 26, i / 26 % 26, i / 676 % 26]
        .iter()
        .map(|n| char::from(b'a' + *n as u8))
        .collect()
}

#[test]
fn collisions_between_distinct_values_are_rare() {
    // (kind, value generator, most collisions accepted among 1000 values)
    type Gen = fn(usize) -> String;
    let cases: Vec<(Kind, Gen, usize)> = vec![
        (Kind::Email, |i| format!("user{i}@acme.it"), 10),
        (
            Kind::Email,
            |i| {
                format!(
                    "{}.{}@gmail.com",
                    ["mario", "anna", "luca", "sara"][i % 4],
                    i
                )
            },
            10,
        ),
        (Kind::Domain, |i| format!("company{i}.com"), 5),
        // Letters only: no digits to carry over, the names alone must differ.
        (Kind::Domain, |i| format!("{}corp.it", letters(i)), 25),
        (Kind::Domain, |i| format!("{}corp.com", letters(i)), 25),
        (
            Kind::Phone,
            |i| format!("+39 347 {:03} {:04}", i % 1000, i * 7 % 10000),
            0,
        ),
        (Kind::Iban, |i| format!("IT60X05428111010000{i:08}"), 0),
        (
            Kind::Card,
            |i| format!("4111 1111 {:04} {:04}", i, i * 3 % 10000),
            0,
        ),
        (Kind::Ip, |i| format!("10.0.{}.{}", i / 250, i % 250 + 1), 0),
        (Kind::Secret, |i| format!("sk-proj-{i:032}"), 0),
        (Kind::Name, |i| format!("Person{i} Surname{i}"), 20),
        (Kind::Name, |i| format!("Mario {}", letters(i)), 40),
        (Kind::Custom("badge".into()), |i| format!("B-{i:06}"), 0),
    ];
    for (kind, generate, accepted) in cases {
        let mut seen = HashSet::new();
        let mut collisions = 0;
        for i in 0..1000 {
            if !seen.insert(d(&kind, &generate(i))) {
                collisions += 1;
            }
        }
        assert!(
            collisions <= accepted,
            "{kind}: {collisions} collisions in 1000"
        );
    }
}

/// No char JSON escapes, but for the line breaks of a multi-line secret.
fn json_safe_for(kind: &Kind, out: &str) -> bool {
    match kind {
        Kind::Secret => shape::is_json_safe(&out.replace(['\n', '\r'], "")),
        _ => shape::is_json_safe(out),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn derive_never_panics_never_returns_the_value_nor_empty(
        value in "\\PC{0,40}|[a-z.]{1,12}@[a-z]{1,8}\\.(it|com|co\\.uk)|\\+?[0-9 ()-]{0,20}|[A-Z]{2}[0-9]{2}[A-Z0-9 ]{0,30}",
        generation in 0u64..5,
        counter in 0u32..5,
    ) {
        for kind in all_kinds() {
            let out = derive(KEY, generation, &kind, &value, counter, None);
            prop_assert!(!out.is_empty());
            prop_assert_ne!(&out, &value);
            prop_assert!(json_safe_for(&kind, &out));
            prop_assert_eq!(&out, &derive(KEY, generation, &kind, &value, counter, None));
        }
    }

    #[test]
    fn derive_handles_arbitrary_unicode_and_control_chars(value in any::<String>()) {
        for kind in all_kinds() {
            let out = derive(KEY, 1, &kind, &value, 0, Some("x.it"));
            prop_assert!(!out.is_empty());
            prop_assert_ne!(&out, &value);
            prop_assert!(json_safe_for(&kind, &out));
        }
    }
}

/// Values in the spellings the detectors read (lower case, dots, Unicode
/// spaces, full width): a surrogate of their kind, valid where the kind has
/// a check, in the value's spelling.
#[test]
fn new_spellings_keep_their_kind_and_spelling() {
    let digits_only = |s: &str| -> String {
        s.chars()
            .map(|c| match c {
                '0'..='9' => '9',
                '０'..='９' => '９',
                c => c,
            })
            .collect()
    };
    let ascii = |s: &str| -> String {
        s.chars()
            .map(|c| match c {
                '\u{ff01}'..='\u{ff5e}' => char::from_u32(c as u32 - 0xff01 + 0x21).unwrap_or(c),
                '\u{a0}' | '\u{2000}'..='\u{200a}' | '\u{202f}' | '\u{3000}' => ' ',
                c => c,
            })
            .collect()
    };
    // (kind, value)
    let cases: &[(Kind, &str)] = &[
        (Kind::Iban, "it60x0542811101000000123456"),
        (Kind::Iban, "de89 3704 0044 0532 0130 00"),
        (Kind::Iban, "DE89-3704-0044-0532-0130-00"),
        (Kind::Iban, "DE89.3704.0044.0532.0130.00"),
        (
            Kind::Iban,
            "DE89\u{a0}3704\u{a0}0044\u{a0}0532\u{a0}0130\u{a0}00",
        ),
        (Kind::Iban, "ＤＥ８９３７０４００４４０５３２０１３０００"),
        (Kind::Phone, "+39\u{a0}347\u{a0}123\u{a0}4567"),
        (Kind::Phone, "347\u{2011}123\u{2011}4567"),
        (Kind::Phone, "＋３９ ３４７ １２３ ４５６７"),
        (Kind::Card, "4111\u{202f}1111\u{202f}1111\u{202f}1111"),
        (Kind::Card, "4111.1111.1111.1111"),
        (Kind::Card, "４１１１　１１１１　１１１１　１１１１"),
        (Kind::Email, "ｍａｒｉｏ＠ｅｘａｍｐｌｅ．ｏｒｇ"),
        (Kind::Email, "mario＠example.org"),
        (Kind::Email, "jürgen.müller@bücher.de"),
        (Kind::Email, "josé@correo.españa.es"),
        (Kind::Email, "u@xn--bcher-kva.de"),
        (Kind::Secret, "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
        (Kind::Secret, "T000/B000/XXXX"),
        (
            Kind::Secret,
            "4Xz7tKp2Lq9Vn3Rm8Ws1Yb6Jc0Hd5Fg%2BAe7Ik2Ol4Pu%3D",
        ),
    ];
    for (kind, value) in cases {
        let out = d(kind, value);
        assert_ne!(&out, value);
        assert!(json_safe_for(kind, &out), "{value}");
        let plain = ascii(&out);
        let wide = |c: char| ('\u{ff01}'..='\u{ff5e}').contains(&c);
        if matches!(kind, Kind::Iban | Kind::Card | Kind::Phone) {
            // char for char: the same width and the same separators
            assert_eq!(
                out.chars().count(),
                value.chars().count(),
                "{value} → {out}"
            );
            for (v, o) in value.chars().zip(out.chars()) {
                assert_eq!(wide(v), wide(o), "{value} → {out}");
                if !v.is_alphanumeric() {
                    assert_eq!(v, o, "{value} → {out}");
                }
            }
        }
        match kind {
            Kind::Iban => {
                assert!(iban::is_valid(&plain), "{value} → {out}");
                assert_eq!(skeleton(&plain), skeleton(&ascii(value)), "{value} → {out}");
            }
            Kind::Card => {
                assert!(card::is_luhn_valid(&plain), "{value} → {out}");
                assert_eq!(digits_only(&out), digits_only(value), "{value} → {out}");
            }
            Kind::Phone => {
                assert_eq!(digits_only(&out), digits_only(value), "{value} → {out}");
                // the country code (or the first digit) kept
                let kept = if plain.starts_with('+') { 3 } else { 1 };
                assert_eq!(
                    plain.get(..kept),
                    ascii(value).get(..kept),
                    "{value} → {out}"
                );
            }
            Kind::Email => {
                let at = if value.contains('＠') { '＠' } else { '@' };
                assert_eq!(out.matches(at).count(), 1, "{value} → {out}");
                if value
                    .chars()
                    .all(|c| ('\u{ff01}'..='\u{ff5e}').contains(&c))
                {
                    assert!(
                        out.chars().all(|c| ('\u{ff01}'..='\u{ff5e}').contains(&c)),
                        "{out}"
                    );
                }
            }
            Kind::Secret => {
                assert_eq!(skeleton(&out).len(), skeleton(value).len());
                // percent-escapes (a SAS `sig=`) stay the escapes they were
                let escapes = |s: &str| -> Vec<String> {
                    s.match_indices('%')
                        .map(|(i, _)| s[i..i + 3].to_string())
                        .collect()
                };
                assert_eq!(escapes(&out), escapes(value), "{value} → {out}");
                assert_eq!(
                    out.matches('/').count(),
                    value.matches('/').count(),
                    "{value} → {out}"
                );
            }
            _ => {}
        }
    }
}
