//! Mail-provider domains: shared by many unrelated people, so they are never
//! stored as values and are kept as written in e-mail surrogates (rule V5,
//! docs/product-rules.md#v5).

/// Exact provider domains (lower case).
const PROVIDER_DOMAINS: &[&str] = &[
    // Global
    "gmail.com",
    "googlemail.com",
    "icloud.com",
    "me.com",
    "mac.com",
    "msn.com",
    "aol.com",
    "ymail.com",
    "rocketmail.com",
    "proton.me",
    "pm.me",
    "protonmail.com",
    "protonmail.ch",
    "tutanota.com",
    "tutanota.de",
    "tuta.io",
    "tuta.com",
    "zoho.com",
    "zohomail.com",
    "fastmail.com",
    "fastmail.fm",
    "hey.com",
    "mail.com",
    "email.com",
    "gmx.com",
    "yandex.com",
    "yandex.ru",
    "mail.ru",
    "inbox.ru",
    "list.ru",
    "bk.ru",
    "qq.com",
    "163.com",
    "126.com",
    "sina.com",
    "naver.com",
    "hanmail.net",
    "mailbox.org",
    // Italy
    "libero.it",
    "virgilio.it",
    "tiscali.it",
    "alice.it",
    "tim.it",
    "tin.it",
    "fastwebnet.it",
    "email.it",
    "inwind.it",
    "iol.it",
    "katamail.com",
    "pec.it",
    "legalmail.it",
    "postecert.it",
    "aruba.it",
    // Germany, Austria, Switzerland
    "web.de",
    "t-online.de",
    "freenet.de",
    "posteo.de",
    "arcor.de",
    "online.de",
    "gmx.at",
    "gmx.ch",
    "bluewin.ch",
    "aon.at",
    "chello.at",
    // France, Belgium
    "orange.fr",
    "wanadoo.fr",
    "free.fr",
    "sfr.fr",
    "neuf.fr",
    "laposte.net",
    "bbox.fr",
    "numericable.fr",
    "club-internet.fr",
    "skynet.be",
    "telenet.be",
    // Spain, Portugal
    "terra.es",
    "telefonica.net",
    "movistar.es",
    "sapo.pt",
    "netcabo.pt",
    "clix.pt",
    // UK, Ireland, North America
    "btinternet.com",
    "sky.com",
    "virginmedia.com",
    "talktalk.net",
    "ntlworld.com",
    "blueyonder.co.uk",
    "eircom.net",
    "comcast.net",
    "verizon.net",
    "att.net",
    "sbcglobal.net",
    "bellsouth.net",
    "cox.net",
    "charter.net",
    "earthlink.net",
    "shaw.ca",
    "rogers.com",
    "sympatico.ca",
    // Central and Eastern Europe
    "seznam.cz",
    "centrum.cz",
    "wp.pl",
    "o2.pl",
    "onet.pl",
    "interia.pl",
    "op.pl",
    "abv.bg",
];

/// Provider families registered under many country domains (`hotmail.it`,
/// `yahoo.co.uk`, `gmx.net`…): the registrable label, any public suffix.
const PROVIDER_FAMILIES: &[&str] = &["hotmail", "outlook", "live", "yahoo", "gmx", "windowslive"];

/// Public suffixes of the provider families.
const FAMILY_SUFFIXES: &[&str] = &[
    "com", "net", "org", "it", "de", "fr", "es", "pt", "nl", "be", "at", "ch", "ie", "co.uk", "uk",
    "ca", "com.br", "com.ar", "com.mx", "com.au", "co.jp", "jp", "se", "dk", "no", "fi", "pl",
    "cz", "gr", "in", "co.in", "co.za", "eu",
];

/// True for a mail provider's domain (case-insensitive; a trailing dot is
/// ignored).
pub fn is_provider_domain(domain: &str) -> bool {
    let lower = domain.trim_end_matches('.').to_ascii_lowercase();
    if PROVIDER_DOMAINS.contains(&lower.as_str()) {
        return true;
    }
    let Some((label, suffix)) = lower.split_once('.') else {
        return false;
    };
    PROVIDER_FAMILIES.contains(&label) && FAMILY_SUFFIXES.contains(&suffix)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn providers_are_recognised_companies_are_not() {
        let cases = [
            ("gmail.com", true),
            ("GMail.COM", true),
            ("googlemail.com", true),
            ("hotmail.it", true),
            ("hotmail.co.uk", true),
            ("yahoo.fr", true),
            ("outlook.com", true),
            ("live.com", true),
            ("gmx.de", true),
            ("gmx.net", true),
            ("web.de", true),
            ("libero.it", true),
            ("orange.fr", true),
            ("proton.me", true),
            ("gmail.com.", true),
            ("acme.it", false),
            ("mail.acme.it", false),
            ("gmail.acme.com", false),
            ("hotmail.acme.com", false),
            ("notgmail.com", false),
            ("", false),
        ];
        for (domain, expected) in cases {
            assert_eq!(is_provider_domain(domain), expected, "{domain}");
        }
    }
}
