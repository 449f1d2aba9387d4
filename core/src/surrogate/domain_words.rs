//! Word roots company-like domain surrogates are built from, by language:
//! `bright` + `vale` → `brightvale.it`. ASCII only (domain labels).

/// Roots of one language: a name is a head and a tail.
pub struct DomainRoots {
    /// First half of a company name.
    pub heads: &'static [&'static str],
    /// Second half of a company name.
    pub tails: &'static [&'static str],
}

/// Tails appended now and then to a two-root name (`brightvale-group`).
pub const TRADES: &[&str] = &[
    "group",
    "labs",
    "tech",
    "digital",
    "systems",
    "consulting",
    "partners",
    "solutions",
    "studio",
    "works",
    "hq",
    "global",
];

/// Syllable starts of invented brands (common ones listed twice weigh more).
pub const ONSETS: &[&str] = &[
    "b", "c", "d", "f", "g", "k", "l", "l", "m", "m", "n", "n", "p", "r", "r", "s", "s", "t", "t",
    "v", "v", "z", "br", "tr", "pr", "st", "pl", "cr", "gr", "fl",
];

/// Syllable vowels of invented brands.
pub const VOWELS: &[&str] = &["a", "a", "e", "e", "i", "o", "o", "u", "ia", "io"];

/// Endings an invented brand may close with.
pub const CODAS: &[&str] = &["n", "r", "s", "x", "l", "m", "nt", "rn"];

/// English roots, used for every TLD.
pub const ENGLISH: DomainRoots = DomainRoots {
    heads: &[
        "bright", "blue", "north", "south", "east", "west", "silver", "golden", "green", "clear",
        "stone", "oak", "river", "sun", "star", "iron", "cedar", "maple", "pine", "red", "white",
        "swift", "true", "prime", "nova", "alpha", "summit", "harbor", "lake", "hill", "ridge",
        "crest", "bay", "cloud", "rock", "wind", "ember", "frost", "sky", "moon", "coral", "amber",
        "falcon", "eagle", "fox", "wolf", "bear", "lion", "hawk", "orbit", "vertex", "pixel",
        "quantum", "vector", "atlas", "apex", "zen", "bold", "copper", "willow",
    ],
    tails: &[
        "vale", "field", "works", "line", "point", "bridge", "stone", "wood", "gate", "ford",
        "port", "well", "brook", "view", "wave", "path", "side", "way", "base", "craft", "forge",
        "mark", "peak", "spring", "haven", "land", "shore", "light", "soft", "logic", "hub",
        "trade", "scale", "grid", "flow", "sense", "mind", "bay", "leaf", "crest", "field", "beam",
        "rise", "wise", "core",
    ],
};

/// Italian roots (for .it, .sm, .ch).
pub const ITALIAN: DomainRoots = DomainRoots {
    heads: &[
        "monte", "val", "bel", "sole", "porto", "castel", "villa", "borgo", "ponte", "fonte",
        "lago", "rocca", "terra", "nova", "alba", "chiara", "verde", "mare", "stella", "oro",
        "luna", "fiore", "cielo", "vento", "fiume", "colle", "pietra", "argento", "bosco", "olmo",
    ],
    tails: &[
        "verde", "bella", "rosa", "fiore", "nova", "sole", "mare", "chiara", "luce", "tech",
        "soft", "dati", "sistemi", "servizi", "lavori", "rete", "via", "campo", "forte", "alto",
        "piano", "vista", "serra", "sud", "nord",
    ],
};

/// German roots (for .de, .at, .ch).
pub const GERMAN: DomainRoots = DomainRoots {
    heads: &[
        "nord", "sued", "ost", "west", "berg", "wald", "stern", "sonnen", "silber", "gold", "blau",
        "gruen", "eich", "linden", "fels", "see", "bruecken", "licht", "stahl", "rhein", "alpen",
        "hoch", "neu", "klar", "tannen",
    ],
    tails: &[
        "werk", "feld", "berg", "hof", "haus", "tal", "bau", "technik", "systeme", "daten",
        "gruppe", "logik", "netz", "wald", "stein", "bach", "brunn", "land", "quelle", "kraft",
    ],
};

/// French roots (for .fr, .be, .lu, .ch).
pub const FRENCH: DomainRoots = DomainRoots {
    heads: &[
        "clair", "belle", "mont", "beau", "val", "bois", "sol", "mer", "lune", "ciel", "vert",
        "blanc", "roche", "pont", "fleur", "etoile", "riviere", "lac", "champ", "soleil",
    ],
    tails: &[
        "mont", "val", "vert", "fleur", "ciel", "bois", "champ", "rive", "port", "lumiere", "tech",
        "soft", "donnees", "systemes", "conseil", "groupe", "services", "ligne", "source", "vie",
    ],
};

/// Spanish and Portuguese roots (for .es, .pt, Latin America).
pub const SPANISH: DomainRoots = DomainRoots {
    heads: &[
        "sol", "mar", "monte", "rio", "luna", "cielo", "sierra", "valle", "costa", "puerto", "oro",
        "plata", "verde", "blanco", "roca", "campo", "nuevo", "alto", "buena", "santa",
    ],
    tails: &[
        "mar",
        "sol",
        "verde",
        "luz",
        "norte",
        "sur",
        "tec",
        "datos",
        "sistemas",
        "grupo",
        "servicios",
        "vista",
        "mundo",
        "via",
        "campo",
        "sierra",
        "flor",
        "alta",
        "nova",
        "real",
    ],
};

/// The roots of the language a country TLD suggests (None: English only).
pub fn roots_for_tld(tld: &str) -> Option<&'static DomainRoots> {
    match tld.to_ascii_lowercase().as_str() {
        "it" | "sm" | "va" => Some(&ITALIAN),
        "de" | "at" | "li" => Some(&GERMAN),
        "fr" | "be" | "lu" | "mc" => Some(&FRENCH),
        "es" | "pt" | "mx" | "ar" | "cl" | "co" | "pe" | "br" | "uy" | "ve" => Some(&SPANISH),
        _ => None,
    }
}
