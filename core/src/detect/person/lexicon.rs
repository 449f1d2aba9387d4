//! The word lists the person detector reads (`core/data/person/`, written
//! by the project; see its README): given names, surnames, names that are
//! also common words, words that are never names, place and organisation
//! words, titles, particles and cue phrases. Built once per process into
//! one map from a word's folded form to what it is.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::OnceLock;

/// What a folded word is (a word can be several things).
pub(super) mod flag {
    pub const GIVEN: u16 = 1;
    pub const SURNAME: u16 = 1 << 1;
    /// A name that is also a common word, a place or a brand: alone it
    /// needs more evidence.
    pub const AMBIGUOUS: u16 = 1 << 2;
    /// Never part of a name (months, greetings, function words, nouns).
    pub const NOT_NAME: u16 = 1 << 3;
    /// Beside a name, makes it a place, street or organisation.
    pub const PLACE: u16 = 1 << 4;
    pub const TITLE: u16 = 1 << 5;
    /// A surname particle (`de`, `van`, `di`); multiword ones are matched
    /// word by word.
    pub const PARTICLE: u16 = 1 << 6;
    /// The last word of a greeting (`dear`, `hola`, `sehr geehrte`).
    pub const GREETING: u16 = 1 << 7;
    /// An article, determiner or preposition ([`super::super::DETERMINERS`]).
    pub const DETERMINER: u16 = 1 << 8;
}

/// One language's lists, as written in `core/data/person/<lang>/`.
struct Language {
    given: &'static str,
    surnames: &'static str,
    ambiguous: &'static str,
    not_names: &'static str,
    place_words: &'static str,
    titles: &'static str,
    particles: &'static str,
    cues: &'static str,
}

macro_rules! list {
    ($lang:literal, $name:literal) => {
        include_str!(concat!("../../../data/person/", $lang, "/", $name, ".txt"))
    };
}

macro_rules! language {
    ($lang:literal) => {
        Language {
            given: list!($lang, "given"),
            surnames: list!($lang, "surnames"),
            ambiguous: list!($lang, "ambiguous"),
            not_names: list!($lang, "not_names"),
            place_words: list!($lang, "place_words"),
            titles: list!($lang, "titles"),
            particles: list!($lang, "particles"),
            cues: list!($lang, "cues"),
        }
    };
}

/// The six languages the detector reads.
const LANGUAGES: [Language; 6] = [
    language!("en"),
    language!("es"),
    language!("it"),
    language!("de"),
    language!("fr"),
    language!("pt"),
];

/// Names common among people living in those countries whatever their
/// origin (only given names and surnames).
const WORLD_GIVEN: &str = list!("world", "given");
const WORLD_SURNAMES: &str = list!("world", "surnames");

/// The lists, folded and merged.
pub(super) struct Lexicon {
    words: HashMap<Box<str>, u16, BuildHasherDefault<WordHasher>>,
    /// Phrases after which the next words are a name even in lower case
    /// (`my name is`, `me llamo`), each twice (in lower case, and folded),
    /// words split by one space, with whether the cue is weak (`i am`,
    /// `soy`: it takes only known names).
    pub(super) cues: Vec<(Box<str>, bool)>,
}

impl Lexicon {
    /// What `folded` is (0: nothing known).
    pub(super) fn flags(&self, folded: &str) -> u16 {
        self.words.get(folded).copied().unwrap_or(0)
    }
}

/// The lexicon of the built-in lists, built on first use.
pub(super) fn lexicon() -> &'static Lexicon {
    static LEXICON: OnceLock<Lexicon> = OnceLock::new();
    LEXICON.get_or_init(build)
}

fn entries(list: &'static str) -> impl Iterator<Item = &'static str> {
    list.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
}

/// What a cue line is, by the section of `cues.txt` it stands in.
#[derive(Clone, Copy, PartialEq, Eq)]
enum CueSection {
    /// Takes the next words as a name, known or not.
    Strong,
    /// After a line `# weak`: takes only names the lists know.
    Weak,
    /// After a line `# greeting`: marks the next capitalised words as a
    /// name, takes no lower-case ones.
    Greeting,
}

fn cue_lines(list: &'static str) -> impl Iterator<Item = (&'static str, CueSection)> {
    let mut section = CueSection::Strong;
    list.lines().filter_map(move |line| {
        let line = line.trim();
        if let Some(heading) = line.strip_prefix('#') {
            match heading.trim().to_ascii_lowercase().as_str() {
                "weak" => section = CueSection::Weak,
                "greeting" => section = CueSection::Greeting,
                _ => {} // a comment
            }
            return None;
        }
        (!line.is_empty()).then_some((line, section))
    })
}

fn build() -> Lexicon {
    let mut words: HashMap<Box<str>, u16, BuildHasherDefault<WordHasher>> = HashMap::default();
    let mut add = |word: &str, bits: u16| {
        let folded = fold(word);
        if !folded.is_empty() {
            *words.entry(folded.into_boxed_str()).or_default() |= bits;
        }
    };
    let mut word_lists = vec![(WORLD_GIVEN, flag::GIVEN), (WORLD_SURNAMES, flag::SURNAME)];
    for language in &LANGUAGES {
        word_lists.extend([
            (language.given, flag::GIVEN),
            (language.surnames, flag::SURNAME),
            (language.ambiguous, flag::AMBIGUOUS),
            (language.not_names, flag::NOT_NAME),
            (language.place_words, flag::PLACE),
            (language.titles, flag::TITLE),
        ]);
    }
    for (list, bits) in word_lists {
        for entry in entries(list) {
            // A hyphenated name is known by its parts too.
            add(entry, bits);
            if bits & (flag::GIVEN | flag::SURNAME) != 0 && entry.contains('-') {
                for part in entry.split('-') {
                    add(part, bits);
                }
            }
        }
    }
    for word in super::DETERMINERS {
        add(word, flag::DETERMINER);
    }
    let mut cues = Vec::new();
    for language in &LANGUAGES {
        for entry in entries(language.particles) {
            for word in entry.split_whitespace() {
                add(word, flag::PARTICLE);
            }
        }
        for (phrase, section) in cue_lines(language.cues) {
            // A greeting's trailing comma is not part of it; a label cue
            // keeps its colon (`de:` is a cue, `de` is not).
            let words: Vec<&str> = phrase
                .split_whitespace()
                .map(|w| {
                    if section == CueSection::Greeting {
                        w.trim_end_matches([',', ':'])
                    } else {
                        w
                    }
                })
                .filter(|w| !w.is_empty())
                .collect();
            let Some(last) = words.last() else {
                continue;
            };
            match section {
                CueSection::Greeting => add(last, flag::GREETING),
                CueSection::Strong | CueSection::Weak => {
                    // Matched on the text as written: in lower case with
                    // its diacritics (`ich heiße`) and without them.
                    let weak = section == CueSection::Weak;
                    let lower: Vec<String> = words.iter().map(|w| w.to_lowercase()).collect();
                    let folded: Vec<String> = words.iter().map(|w| fold(w)).collect();
                    cues.push((lower.join(" ").into_boxed_str(), weak));
                    cues.push((folded.join(" ").into_boxed_str(), weak));
                }
            }
        }
    }
    // A phrase listed weak in one language and strong in another is weak.
    cues.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    cues.dedup_by(|a, b| a.0 == b.0);
    Lexicon { words, cues }
}

/// `word` in lower case without diacritics (`Lucía` → `lucia`, `Müller` →
/// `muller`, `ß` → `ss`), apostrophes as `'`; what the lists are keyed by.
pub(super) fn fold(word: &str) -> String {
    let mut out = String::with_capacity(word.len());
    fold_into(word, &mut out);
    out
}

/// [`fold`] into `out` (cleared first).
pub(super) fn fold_into(word: &str, out: &mut String) {
    out.clear();
    for c in word.chars() {
        if c.is_ascii() {
            out.push(c.to_ascii_lowercase());
            continue;
        }
        match base_letter(c) {
            Some(base) => out.push_str(base),
            None => out.extend(c.to_lowercase()),
        }
    }
}

/// The base letters of a Latin letter with a diacritic (either case).
fn base_letter(c: char) -> Option<&'static str> {
    Some(match c {
        'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' | 'ā' | 'ă' | 'ą' | 'À' | 'Á' | 'Â' | 'Ã' | 'Ä' | 'Å'
        | 'Ā' | 'Ă' | 'Ą' => "a",
        'æ' | 'Æ' => "ae",
        'ç' | 'ć' | 'č' | 'ĉ' | 'Ç' | 'Ć' | 'Č' => "c",
        'ď' | 'đ' | 'Ď' | 'Đ' => "d",
        'è' | 'é' | 'ê' | 'ë' | 'ē' | 'ė' | 'ę' | 'ě' | 'È' | 'É' | 'Ê' | 'Ë' | 'Ē' | 'Ė' | 'Ę'
        | 'Ě' => "e",
        'ğ' | 'Ğ' => "g",
        'ì' | 'í' | 'î' | 'ï' | 'ī' | 'ı' | 'İ' | 'Ì' | 'Í' | 'Î' | 'Ï' | 'Ī' => "i",
        'ł' | 'ľ' | 'Ł' | 'Ľ' => "l",
        'ñ' | 'ń' | 'ň' | 'Ñ' | 'Ń' | 'Ň' => "n",
        'ò' | 'ó' | 'ô' | 'õ' | 'ö' | 'ø' | 'ō' | 'ő' | 'Ò' | 'Ó' | 'Ô' | 'Õ' | 'Ö' | 'Ø' | 'Ō'
        | 'Ő' => "o",
        'œ' | 'Œ' => "oe",
        'ř' | 'Ř' => "r",
        'ś' | 'š' | 'ş' | 'ș' | 'Ś' | 'Š' | 'Ş' | 'Ș' => "s",
        'ß' => "ss",
        'ť' | 'ţ' | 'ț' | 'Ť' | 'Ţ' | 'Ț' => "t",
        'ù' | 'ú' | 'û' | 'ü' | 'ū' | 'ů' | 'ű' | 'Ù' | 'Ú' | 'Û' | 'Ü' | 'Ū' | 'Ů' | 'Ű' => {
            "u"
        }
        'ý' | 'ÿ' | 'Ý' => "y",
        'ź' | 'ż' | 'ž' | 'Ź' | 'Ż' | 'Ž' => "z",
        '’' | 'ʼ' | '‘' => "'",
        _ => return None,
    })
}

/// Hashes the map's words the way FxHash does, eight bytes at a step:
/// the words are short and the keys are fixed lists (no flooding to fear),
/// and the lookup runs for every word read.
#[derive(Default)]
struct WordHasher(u64);

impl WordHasher {
    const K: u64 = 0x517c_c1b7_2722_0a95;

    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(Self::K);
    }
}

impl Hasher for WordHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let tail = chunks.remainder();
        if !tail.is_empty() {
            let mut word = [0u8; 8];
            word[..tail.len()].copy_from_slice(tail);
            self.add(u64::from_le_bytes(word) ^ (tail.len() as u64) << 59);
        }
    }

    fn write_u8(&mut self, byte: u8) {
        self.add(u64::from(byte));
    }
}
