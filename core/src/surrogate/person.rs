//! Person-name surrogates: the same number of words, the same capitalisation
//! and punctuation, names of the value's language when it is recognised.

use super::names::{fold_ascii_lower, folded_words, lookup, pick_name, NameRole, NAME_LISTS};
use super::rng::SeedRng;
use super::shape::{self, CaseStyle};

/// Words kept as written: titles and surname particles carry no identity.
const KEPT_WORDS: &[&str] = &[
    "dr", "mr", "mrs", "ms", "miss", "prof", "ing", "sig", "sig.ra", "dott", "dott.ssa", "avv",
    "herr", "frau", "mme", "mlle", "sr", "sra", "don", "donna", "de", "di", "da", "del", "della",
    "dei", "van", "von", "der", "den", "la", "le", "du", "dos", "das", "do", "y", "e", "jr", "sr.",
];

/// Letters initials are drawn from (common initials, no rare letters).
const INITIALS: &[u8] = b"ABCDEFGHILMNPRSTV";

/// One whitespace- or comma-separated piece of a name.
enum Piece<'a> {
    /// A run of whitespace or commas, kept as written.
    Gap(&'a str),
    /// A word (may hold hyphens, apostrophes and dots).
    Word(&'a str),
}

fn split(value: &str) -> Vec<Piece<'_>> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut in_gap = None;
    for (i, c) in value.char_indices() {
        let gap = c.is_whitespace() || c == ',';
        if in_gap != Some(gap) {
            if i > start {
                pieces.push(piece(&value[start..i], in_gap.unwrap_or(false)));
            }
            start = i;
            in_gap = Some(gap);
        }
    }
    if start < value.len() {
        pieces.push(piece(&value[start..], in_gap.unwrap_or(false)));
    }
    pieces
}

fn piece(text: &str, gap: bool) -> Piece<'_> {
    if gap {
        Piece::Gap(text)
    } else {
        Piece::Word(text)
    }
}

fn is_kept(word: &str) -> bool {
    let lower = word.to_lowercase();
    let bare = lower.trim_end_matches('.');
    KEPT_WORDS.contains(&bare) || KEPT_WORDS.contains(&lower.as_str())
}

/// An initial: one letter, optionally followed by a dot (`M.`, `J`).
fn is_initial(word: &str) -> bool {
    let mut chars = word.chars();
    matches!((chars.next(), chars.next(), chars.next()), (Some(c), None, None) | (Some(c), Some('.'), None) if c.is_alphabetic())
}

/// The surrogate of a person's name.
pub fn derive(rng: &mut SeedRng, value: &str) -> String {
    let pieces = split(value);
    let words: Vec<&str> = pieces
        .iter()
        .filter_map(|p| match p {
            Piece::Word(w) => Some(*w),
            Piece::Gap(_) => None,
        })
        .collect();
    // "Rossi, Mario": the words before the comma are family names.
    let comma_after_first = value.find(',').is_some_and(|pos| {
        words
            .first()
            .is_some_and(|w| value[..pos].trim_end().ends_with(w))
    });
    let ascii_only = value.is_ascii();
    // The surrogate repeats no name of the value (`Mario Rossi` never
    // becomes `Laura Rossi`).
    let avoid = folded_words(words.iter().flat_map(|w| w.split('-')));
    let known = words.iter().find_map(|w| lookup(w));
    let language = match known {
        Some((index, _)) if rng.chance(3, 4) => index,
        _ => rng.below(NAME_LISTS.len()),
    };
    let name_words: Vec<usize> = (0..words.len())
        .filter(|&i| {
            words.get(i).is_some_and(|w| {
                !is_kept(w) && !is_initial(w) && w.chars().any(char::is_alphabetic)
            })
        })
        .collect();

    let mut out = String::with_capacity(value.len() + 8);
    let mut word_index = 0;
    for piece in &pieces {
        match piece {
            Piece::Gap(gap) => out.push_str(gap),
            Piece::Word(word) => {
                let role = role_of(word, word_index, &name_words, comma_after_first);
                out.push_str(&replace_word(rng, word, role, language, ascii_only, &avoid));
                word_index += 1;
            }
        }
    }
    out
}

/// What the word at `index` becomes: kept, an initial, or a name of a role.
fn role_of(word: &str, index: usize, name_words: &[usize], comma_format: bool) -> Option<NameRole> {
    if !name_words.contains(&index) {
        return None;
    }
    if let Some((_, role)) = lookup(word) {
        return Some(role);
    }
    let position = name_words.iter().position(|&i| i == index).unwrap_or(0);
    let last_position = name_words.len().saturating_sub(1);
    Some(match (comma_format, name_words.len()) {
        (true, _) if position == 0 => NameRole::Last,
        (true, _) => NameRole::First,
        (false, 1) => NameRole::First,
        (false, _) if position == last_position => NameRole::Last,
        (false, _) => NameRole::First,
    })
}

fn replace_word(
    rng: &mut SeedRng,
    word: &str,
    role: Option<NameRole>,
    language: usize,
    ascii_only: bool,
    avoid: &[String],
) -> String {
    let Some(role) = role else {
        if is_initial(word) {
            let mut out = String::new();
            let letter = rng.pick_char(INITIALS);
            if word.chars().next().is_some_and(char::is_lowercase) {
                out.extend(letter.to_lowercase());
            } else {
                out.push(letter);
            }
            if word.ends_with('.') {
                out.push('.');
            }
            return out;
        }
        // A number among the words (`Mario Rossi 2`) keeps its shape only.
        if !word.chars().any(char::is_alphabetic) && word.chars().any(|c| c.is_ascii_digit()) {
            return shape::mutate(rng, word);
        }
        return word.to_string();
    };
    // Hyphenated names ("Jean-Pierre", "Müller-Lüdenscheidt") keep their parts.
    let parts: Vec<&str> = word.split('-').collect();
    let mut out = String::with_capacity(word.len() + 4);
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            out.push('-');
        }
        if part.is_empty() {
            continue;
        }
        let name = pick_name(rng, role, language, avoid);
        let style = CaseStyle::of(part);
        let written = if ascii_only {
            ascii_name(name)
        } else {
            name.to_string()
        };
        out.push_str(&style.apply(&written));
        // Keep trailing punctuation such as "Rossi." at the end of a word.
        if let Some(tail) = part
            .chars()
            .last()
            .filter(|c| !c.is_alphabetic() && *c != '\'')
        {
            out.push(tail);
        }
    }
    out
}

/// A listed name written with ASCII letters only, capitalised (`Niccolò` →
/// `Niccolo`, `O'Brien` stays `O'Brien`).
fn ascii_name(name: &str) -> String {
    if name.is_ascii() {
        return name.to_string();
    }
    let folded = fold_ascii_lower(name);
    let mut chars = folded.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => "Alex".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word_count(s: &str) -> usize {
        s.split(|c: char| c.is_whitespace() || c == ',')
            .filter(|w| !w.is_empty())
            .count()
    }

    #[test]
    fn names_keep_word_count_case_and_punctuation() {
        let cases = [
            "Mario Rossi",
            "MARIO ROSSI",
            "mario rossi",
            "Rossi, Mario",
            "Jean-Pierre Dubois",
            "Dr. Anna Maria Müller",
            "Ludwig van Beethoven",
            "J. R. Tolkien",
            "Xyzzy",
            "María José García López",
        ];
        for (i, value) in cases.iter().enumerate() {
            for seed in 0..20u8 {
                let out = derive(
                    &mut SeedRng::from_seed([seed.wrapping_add((i as u8).wrapping_mul(31)); 32]),
                    value,
                );
                assert_eq!(word_count(&out), word_count(value), "case {i}");
                assert_eq!(out.contains(','), value.contains(','), "case {i}");
                assert_eq!(
                    out.matches('-').count(),
                    value.matches('-').count(),
                    "case {i}"
                );
                if value
                    .chars()
                    .filter(|c| c.is_alphabetic())
                    .all(char::is_uppercase)
                {
                    assert!(
                        out.chars()
                            .filter(|c| c.is_alphabetic())
                            .all(char::is_uppercase),
                        "case {i}"
                    );
                }
                if value
                    .chars()
                    .filter(|c| c.is_alphabetic())
                    .all(char::is_lowercase)
                {
                    assert!(
                        out.chars()
                            .filter(|c| c.is_alphabetic())
                            .all(char::is_lowercase),
                        "case {i}"
                    );
                }
                if value.is_ascii() {
                    assert!(out.is_ascii(), "case {i}");
                }
            }
        }
    }

    #[test]
    fn titles_particles_and_initials() {
        let out = derive(&mut SeedRng::from_seed([3; 32]), "Dr. Ludwig van Beethoven");
        assert!(out.starts_with("Dr. "));
        assert!(out.contains(" van "));
        let out = derive(&mut SeedRng::from_seed([3; 32]), "J. Smith");
        let first = out.split(' ').next().unwrap_or("");
        assert!(is_initial(first), "initial stays an initial");
    }

    #[test]
    fn recognised_language_is_mostly_kept() {
        let mut italian = 0;
        for seed in 0..100u8 {
            let out = derive(&mut SeedRng::from_seed([seed; 32]), "Giuseppe Verdi");
            if let Some((0, _)) = out.split(' ').next().and_then(lookup) {
                italian += 1;
            }
        }
        assert!(italian >= 60, "italian first names: {italian}/100");
    }
}
