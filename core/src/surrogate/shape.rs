//! Shape-preserving surrogates for kinds without a format of their own, and
//! the small shape helpers (case style, char classes) the formats share.

use super::rng::{SeedRng, DIGITS, LOWER, UPPER};

/// Accented lower-case letters a non-ASCII lower-case letter may become.
const LOWER_ACCENTED: &[&str] = &[
    "à", "á", "â", "ä", "è", "é", "ê", "ì", "í", "ò", "ó", "ö", "ù", "ú", "ü", "ñ", "ç",
];
/// Accented upper-case letters a non-ASCII upper-case letter may become.
const UPPER_ACCENTED: &[&str] = &[
    "À", "Á", "Â", "Ä", "È", "É", "Ê", "Ì", "Í", "Ò", "Ó", "Ö", "Ù", "Ú", "Ü", "Ñ", "Ç",
];

/// How a word is capitalised.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaseStyle {
    /// `rossi`
    Lower,
    /// `ROSSI` (two letters or more, all upper case)
    Upper,
    /// `Rossi`, or anything mixed: written as the list writes it.
    AsListed,
}

impl CaseStyle {
    /// The case style of `word` (letters only count).
    pub fn of(word: &str) -> CaseStyle {
        let letters: Vec<char> = word.chars().filter(|c| c.is_alphabetic()).collect();
        if letters.len() >= 2 && letters.iter().all(|c| c.is_uppercase()) {
            CaseStyle::Upper
        } else if !letters.is_empty() && letters.iter().all(|c| c.is_lowercase()) {
            CaseStyle::Lower
        } else {
            CaseStyle::AsListed
        }
    }

    /// `word` written in this style.
    pub fn apply(self, word: &str) -> String {
        match self {
            CaseStyle::Lower => word.to_lowercase(),
            CaseStyle::Upper => word.to_uppercase(),
            CaseStyle::AsListed => word.to_string(),
        }
    }
}

/// A char of the same class as `c`: digit → digit, upper → upper, lower →
/// lower; JSON-unsafe chars become safe look-alikes; anything else is kept.
pub fn same_class_char(rng: &mut SeedRng, c: char, out: &mut String) {
    match c {
        '0'..='9' => out.push(rng.digit()),
        'a'..='z' => out.push(rng.pick_char(LOWER)),
        'A'..='Z' => out.push(rng.pick_char(UPPER)),
        // Keep the surrogate writable in JSON without escapes.
        '"' => out.push('\''),
        '\\' => out.push('/'),
        c if c.is_control() => out.push(' '),
        c if c.is_alphabetic() && c.is_lowercase() => out.push_str(rng.pick(LOWER_ACCENTED)),
        c if c.is_alphabetic() && c.is_uppercase() => out.push_str(rng.pick(UPPER_ACCENTED)),
        c => out.push(c),
    }
}

/// The generic surrogate: every char replaced by one of its class (see
/// [`same_class_char`]). Never equal to `value` and never empty.
pub fn mutate(rng: &mut SeedRng, value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        same_class_char(rng, c, &mut out);
    }
    force_change(rng, value, out)
}

/// `candidate` if it differs from `value` and is not empty; otherwise a
/// version with one char of its class changed, or (for values with nothing
/// to change) random letters of the same length.
pub fn force_change(rng: &mut SeedRng, value: &str, candidate: String) -> String {
    if candidate != value && !candidate.is_empty() {
        return candidate;
    }
    let mut changed = String::with_capacity(value.len());
    let mut done = false;
    for c in value.chars() {
        if !done {
            let alphabet = match c {
                '0'..='9' => Some(DIGITS),
                'a'..='z' => Some(LOWER),
                'A'..='Z' => Some(UPPER),
                _ => None,
            };
            if let Some(alphabet) = alphabet {
                changed.push(rng.pick_char_except(alphabet, c));
                done = true;
                continue;
            }
        }
        changed.push(c);
    }
    if done {
        return changed;
    }
    // Nothing of a known class (punctuation, spaces, other scripts): letters
    // of the same length are the nearest safe shape.
    let len = value.chars().count().max(1);
    (0..len).map(|_| rng.pick_char(LOWER)).collect()
}

/// `s` with the chars JSON would escape replaced by safe look-alikes (`"`
/// → `'`, `\` → `/`, control chars → space), so a surrogate is written
/// as is in a JSON string; `keep_line_breaks` keeps `\n` and `\r` (PEM
/// blocks are secrets of several lines).
pub fn json_safe(s: String, keep_line_breaks: bool) -> String {
    let unsafe_char = |c: char| {
        c == '"' || c == '\\' || (c.is_control() && !(keep_line_breaks && (c == '\n' || c == '\r')))
    };
    if !s.chars().any(unsafe_char) {
        return s;
    }
    s.chars()
        .map(|c| match c {
            '"' => '\'',
            '\\' => '/',
            c if unsafe_char(c) => ' ',
            c => c,
        })
        .collect()
}

/// True when `s` needs no escaping inside a JSON string.
#[cfg(test)]
pub fn is_json_safe(s: &str) -> bool {
    !s.chars().any(|c| c == '"' || c == '\\' || c.is_control())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rng(n: u8) -> SeedRng {
        SeedRng::from_seed([n; 32])
    }

    #[test]
    fn case_styles_are_recognised_and_applied() {
        let cases = [
            ("rossi", CaseStyle::Lower, "Bianchi", "bianchi"),
            ("ROSSI", CaseStyle::Upper, "Bianchi", "BIANCHI"),
            ("Rossi", CaseStyle::AsListed, "Bianchi", "Bianchi"),
            ("M", CaseStyle::AsListed, "Bianchi", "Bianchi"),
            ("ÉLODIE", CaseStyle::Upper, "Hélène", "HÉLÈNE"),
        ];
        for (word, style, listed, written) in cases {
            assert_eq!(CaseStyle::of(word), style, "{word}");
            assert_eq!(style.apply(listed), written, "{word}");
        }
    }

    #[test]
    fn mutate_keeps_classes_and_changes_something() {
        let cases = [
            "AB-1234-cd",
            "EMP 000123",
            "x",
            "0",
            "José-99",
            "a\"b\\c\nd",
        ];
        for (i, value) in cases.iter().enumerate() {
            let out = mutate(&mut rng(i as u8), value);
            assert_ne!(&out, value);
            assert!(is_json_safe(&out), "case {i}");
            assert_eq!(out.chars().count(), value.chars().count(), "case {i}");
            for (a, b) in value.chars().zip(out.chars()) {
                assert_eq!(a.is_ascii_digit(), b.is_ascii_digit(), "case {i}");
                assert_eq!(a.is_uppercase(), b.is_uppercase(), "case {i}");
                assert_eq!(a.is_lowercase(), b.is_lowercase(), "case {i}");
            }
        }
    }

    #[test]
    fn json_safe_replaces_what_json_escapes() {
        let cases = [
            ("plain text", false, "plain text"),
            ("a\"b\\c\td", false, "a'b/c d"),
            ("line\nbreak\r\n", false, "line break  "),
            ("line\nbreak\r\n", true, "line\nbreak\r\n"),
            ("tab\t", true, "tab "),
        ];
        for (input, keep, expected) in cases {
            assert_eq!(json_safe(input.to_string(), keep), expected, "{input:?}");
        }
    }

    #[test]
    fn values_with_nothing_to_change_still_change() {
        for value in ["", "---", " ", "日本"] {
            let out = mutate(&mut rng(1), value);
            assert!(!out.is_empty());
            assert_ne!(out, value);
        }
        // A candidate equal to the value is changed in one char only.
        let out = force_change(&mut rng(2), "ab12", "ab12".to_string());
        assert_eq!(out.len(), 4);
        assert_ne!(out, "ab12");
        assert_eq!(&out[1..], "b12");
    }
}
