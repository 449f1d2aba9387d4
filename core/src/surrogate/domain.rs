//! Domain surrogates: a company-like name under the same public suffix
//! (`acme.it` → `brightvale.it`, `mail.acme.co.uk` → `mail.oakford.co.uk`).

use super::domain_words::{roots_for_tld, DomainRoots, CODAS, ENGLISH, ONSETS, TRADES, VOWELS};
use super::rng::SeedRng;
use super::shape::CaseStyle;

/// Second-level labels that, under a two-letter country TLD, form the public
/// suffix together with it (`co.uk`, `com.br`, `ac.jp`).
const SECOND_LEVELS: &[&str] = &[
    "co", "com", "org", "net", "ac", "gov", "edu", "ne", "or", "gv", "ltd", "plc", "nom", "gob",
];

/// Subdomain labels that say nothing about who owns the domain: kept.
const PLAIN_SUBDOMAINS: &[&str] = &[
    "www",
    "mail",
    "smtp",
    "imap",
    "pop",
    "mx",
    "webmail",
    "m",
    "app",
    "api",
    "portal",
    "intranet",
    "extranet",
    "eu",
    "us",
    "en",
    "it",
    "de",
    "fr",
    "es",
    "uk",
    "shop",
    "blog",
    "news",
    "support",
    "help",
    "secure",
    "login",
    "my",
    "cdn",
    "static",
    "vpn",
    "remote",
    "dev",
    "test",
    "staging",
    "corp",
    "info",
    "email",
    "pec",
    "posta",
    "exchange",
    "owa",
    "autodiscover",
];

/// A domain split into its parts.
pub struct DomainParts<'a> {
    /// Labels before the registrable one (`mail` in `mail.acme.it`).
    pub subdomains: Vec<&'a str>,
    /// The label the owner chose (`acme`).
    pub registrable: &'a str,
    /// The public suffix (`it`, `co.uk`).
    pub suffix: &'a str,
}

/// Splits a syntactically valid domain (`label.label…tld`, letters, digits
/// and hyphens, a letter-only TLD of two or more); None otherwise.
pub fn parse(domain: &str) -> Option<DomainParts<'_>> {
    let labels: Vec<&str> = domain.split('.').collect();
    if labels.len() < 2 || domain.len() > 253 {
        return None;
    }
    for label in &labels {
        let valid = !label.is_empty()
            && label.len() <= 63
            && !label.starts_with('-')
            && !label.ends_with('-')
            && label.chars().all(|c| c.is_alphanumeric() || c == '-');
        if !valid {
            return None;
        }
    }
    let tld = labels.last()?;
    if tld.chars().count() < 2 || !tld.chars().all(char::is_alphabetic) {
        return None;
    }
    let second = labels
        .get(labels.len().wrapping_sub(2))
        .copied()
        .unwrap_or("");
    let suffix_labels = if labels.len() >= 3
        && tld.len() == 2
        && SECOND_LEVELS.contains(&second.to_ascii_lowercase().as_str())
    {
        2
    } else {
        1
    };
    let registrable_index = labels.len() - suffix_labels - 1;
    // The suffix is the tail of the original string after the registrable label.
    let suffix_len: usize = labels[registrable_index + 1..]
        .iter()
        .map(|l| l.len())
        .sum::<usize>()
        + suffix_labels
        - 1;
    let suffix = &domain[domain.len() - suffix_len..];
    Some(DomainParts {
        subdomains: labels[..registrable_index].to_vec(),
        registrable: labels[registrable_index],
        suffix,
    })
}

/// The surrogate of a domain; None when `value` is not a valid domain.
pub fn derive(rng: &mut SeedRng, value: &str) -> Option<String> {
    let parts = parse(value)?;
    let tld = parts.suffix.rsplit('.').next().unwrap_or(parts.suffix);
    let mut out = String::with_capacity(value.len() + 8);
    for sub in &parts.subdomains {
        if PLAIN_SUBDOMAINS.contains(&sub.to_ascii_lowercase().as_str()) {
            out.push_str(sub);
        } else {
            let word = rng.pick(ENGLISH.tails);
            out.push_str(&CaseStyle::of(sub).apply(word));
        }
        out.push('.');
    }
    out.push_str(&company_label(rng, parts.registrable, tld));
    out.push('.');
    out.push_str(parts.suffix);
    Some(out)
}

/// Two roots (`bright` + `vale`), half of the time in the language of a
/// country TLD; one in three short ones with a trade word (`oakford-group`).
fn compound(rng: &mut SeedRng, tld: &str, separator: &str) -> String {
    let roots: &DomainRoots = match roots_for_tld(tld) {
        Some(local) if rng.chance(1, 2) => local,
        _ => &ENGLISH,
    };
    let head = rng.pick(roots.heads);
    let mut tail = rng.pick(roots.tails);
    if tail == head {
        tail = rng.pick(roots.tails);
    }
    let mut name = format!("{head}{separator}{tail}");
    if name.len() <= 10 && rng.chance(1, 3) {
        name.push_str(separator);
        name.push_str(rng.pick(TRADES));
    }
    name
}

/// An invented brand of two or three syllables (`velora`, `tarvex`,
/// `mirano`).
fn brand(rng: &mut SeedRng) -> String {
    let syllables = if rng.chance(2, 5) { 2 } else { 3 };
    let mut name = String::with_capacity(12);
    for _ in 0..syllables {
        name.push_str(rng.pick(ONSETS));
        name.push_str(rng.pick(VOWELS));
    }
    if rng.chance(2, 5) {
        name.push_str(rng.pick(CODAS));
    }
    name
}

/// A company-like label in the shape of `label`: hyphenated if it was,
/// with as many trailing digits as it had (up to 4), in its case style.
fn company_label(rng: &mut SeedRng, label: &str, tld: &str) -> String {
    let separator = if label.contains('-') { "-" } else { "" };
    // Two in five names are compounds of roots (`brightvale`), the others
    // invented brands (`velora`): compounds read best but are few thousand,
    // brands keep collisions between distinct domains rare.
    let mut name = if rng.chance(2, 5) {
        compound(rng, tld, separator)
    } else {
        let mut brand = brand(rng);
        if !separator.is_empty() {
            brand.push_str(separator);
            brand.push_str(rng.pick(TRADES));
        }
        brand
    };
    if name.is_empty() {
        name.push_str("acme");
    }
    let digits = label.chars().filter(char::is_ascii_digit).count().min(4);
    for i in 0..digits {
        name.push(if i == 0 {
            rng.nonzero_digit()
        } else {
            rng.digit()
        });
    }
    let style = match CaseStyle::of(label) {
        CaseStyle::Upper => CaseStyle::Upper,
        _ if label.chars().next().is_some_and(char::is_uppercase) => {
            let mut chars = name.chars();
            return chars
                .next()
                .map(|c| c.to_ascii_uppercase())
                .into_iter()
                .chain(chars)
                .collect();
        }
        _ => CaseStyle::Lower,
    };
    style.apply(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_finds_registrable_label_and_suffix() {
        let cases = [
            ("acme.it", Some((vec![], "acme", "it"))),
            ("mail.acme.co.uk", Some((vec!["mail"], "acme", "co.uk"))),
            ("a.b.acme.com.br", Some((vec!["a", "b"], "acme", "com.br"))),
            ("co.uk", Some((vec![], "co", "uk"))),
            ("ACME.IT", Some((vec![], "ACME", "IT"))),
            ("acme", None),
            ("acme.", None),
            (".it", None),
            ("acme.i", None),
            ("acme.123", None),
            ("-acme.it", None),
            ("ac me.it", None),
        ];
        for (domain, expected) in cases {
            let got = parse(domain).map(|p| (p.subdomains, p.registrable, p.suffix));
            assert_eq!(got, expected, "{domain}");
        }
    }

    #[test]
    fn surrogates_keep_suffix_subdomains_case_and_shape() {
        let cases = [
            ("acme.it", ".it", ""),
            ("mail.acme.co.uk", ".co.uk", "mail."),
            ("ACME-SRL.DE", ".DE", ""),
            ("Acme.com", ".com", ""),
            ("shop42.fr", ".fr", ""),
            ("mario-rossi.acme.it", ".it", ""),
        ];
        for (domain, suffix, prefix) in cases {
            for seed in 0..30u8 {
                let out = derive(&mut SeedRng::from_seed([seed; 32]), domain).unwrap_or_default();
                assert!(out.ends_with(suffix), "{domain} → {out}");
                assert!(out.starts_with(prefix), "{domain} → {out}");
                assert_ne!(out.to_ascii_lowercase(), domain.to_ascii_lowercase());
                assert!(parse(&out).is_some(), "{domain} → {out}");
                assert_eq!(
                    out.matches('.').count(),
                    domain.matches('.').count(),
                    "{domain} → {out}"
                );
                assert!(!out.contains("rossi"), "{domain} → {out}");
                if domain.contains('-') && !domain.contains('.') {
                    assert!(out.contains('-'));
                }
            }
        }
        let upper = derive(&mut SeedRng::from_seed([1; 32]), "ACME-SRL.DE").unwrap_or_default();
        assert_eq!(upper, upper.to_uppercase());
        assert!(upper.contains('-'));
        let digits = derive(&mut SeedRng::from_seed([1; 32]), "shop42.fr").unwrap_or_default();
        assert_eq!(digits.chars().filter(char::is_ascii_digit).count(), 2);
        assert!(derive(&mut SeedRng::from_seed([1; 32]), "not a domain").is_none());
    }
}
