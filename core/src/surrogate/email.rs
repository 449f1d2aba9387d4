//! E-mail surrogates: a realistic local part in the value's style
//! (`mario.rossi` → `laura.bianchi`, `mrossi` → `lbianchi`) at the domain's
//! surrogate, or at the provider domain as written.

use super::names::{
    fold_ascii_lower, fold_german, folded_words, lookup, pick_name, NameRole, GERMAN_LIST,
    NAME_LISTS,
};
use super::rng::{SeedRng, LOWER};
use super::shape::CaseStyle;

/// Local parts that name a role, not a person: they become another role.
const ROLE_WORDS: &[&str] = &[
    "info",
    "sales",
    "admin",
    "support",
    "contact",
    "office",
    "hello",
    "team",
    "hr",
    "jobs",
    "billing",
    "noreply",
    "marketing",
    "press",
    "help",
    "service",
    "accounts",
    "careers",
    "segreteria",
    "amministrazione",
    "contatti",
    "kontakt",
    "vertrieb",
    "ventas",
    "contacto",
];

/// Initials of e-mail local parts (common ones).
const INITIALS: &[u8] = b"abcdefghilmnprstv";

/// Splits `value` at its last `@` into (local part, domain); None when either
/// side is empty.
pub fn split(value: &str) -> Option<(&str, &str)> {
    let (local, domain) = value.rsplit_once('@')?;
    if local.is_empty() || domain.is_empty() {
        return None;
    }
    Some((local, domain))
}

/// One run of a local part.
enum Run<'a> {
    Letters(&'a str),
    Digits(&'a str),
    Other(char),
}

fn runs(local: &str) -> Vec<Run<'_>> {
    let mut out = Vec::new();
    let mut start = None::<(usize, bool)>;
    for (i, c) in local.char_indices() {
        let class = if c.is_alphabetic() {
            Some(true)
        } else if c.is_ascii_digit() {
            Some(false)
        } else {
            None
        };
        if let Some((s, letters)) = start {
            if class != Some(letters) {
                out.push(run(&local[s..i], letters));
                start = None;
            }
        }
        match class {
            Some(letters) if start.is_none() => start = Some((i, letters)),
            Some(_) => {}
            None => out.push(Run::Other(c)),
        }
    }
    if let Some((s, letters)) = start {
        out.push(run(&local[s..], letters));
    }
    out
}

fn run(text: &str, letters: bool) -> Run<'_> {
    if letters {
        Run::Letters(text)
    } else {
        Run::Digits(text)
    }
}

/// The surrogate of a local part.
pub fn derive_local(rng: &mut SeedRng, local: &str) -> String {
    let runs = runs(local);
    let words: Vec<&str> = runs
        .iter()
        .filter_map(|r| match r {
            Run::Letters(w) => Some(*w),
            _ => None,
        })
        .collect();
    let known = words.iter().find_map(|w| lookup(w));
    let language = match known {
        Some((index, _)) if rng.chance(3, 4) => index,
        _ => rng.below(NAME_LISTS.len()),
    };
    let avoid = folded_words(words.iter().copied());
    let fold = if language == GERMAN_LIST {
        fold_german
    } else {
        fold_ascii_lower
    };
    let word_count = words.len();
    let mut out = String::with_capacity(local.len() + 8);
    let mut word_index = 0;
    for r in &runs {
        match r {
            Run::Letters(word) => {
                let style = CaseStyle::of(word);
                let replaced = if word.chars().count() == 1 {
                    rng.pick_char(INITIALS).to_string()
                } else if ROLE_WORDS.contains(&word.to_ascii_lowercase().as_str()) {
                    rng.pick(ROLE_WORDS).to_string()
                } else {
                    let role = match (lookup(word), word_count, word_index) {
                        (Some((_, role)), _, _) => Some(role),
                        (None, 1, _) => None,
                        (None, _, i) if i + 1 == word_count => Some(NameRole::Last),
                        (None, _, _) => Some(NameRole::First),
                    };
                    let first = pick_name(rng, NameRole::First, language, &avoid);
                    let last = pick_name(rng, NameRole::Last, language, &avoid);
                    match role {
                        Some(NameRole::First) => fold(first),
                        Some(NameRole::Last) => fold(last),
                        // One unknown word such as `mrossi`: initial and family name.
                        None => {
                            let mut s = String::new();
                            s.push(rng.pick_char(INITIALS));
                            s.push_str(&fold(last));
                            s
                        }
                    }
                };
                let written = match style {
                    CaseStyle::Upper => replaced.to_uppercase(),
                    CaseStyle::Lower => replaced,
                    // `Mario.Rossi`: capitalise the first letter.
                    CaseStyle::AsListed => capitalise(&replaced, word),
                };
                out.push_str(&written);
                word_index += 1;
            }
            Run::Digits(digits) => {
                for (i, _) in digits.char_indices() {
                    // Keep a leading zero a zero-free number never had, and vice versa.
                    if i == 0 && !digits.starts_with('0') && digits.len() > 1 {
                        out.push(rng.nonzero_digit());
                    } else {
                        out.push(rng.digit());
                    }
                }
            }
            Run::Other(c) => match c {
                '"' | '\\' => out.push('.'),
                c if c.is_control() || c.is_whitespace() => out.push('.'),
                c => out.push(*c),
            },
        }
    }
    if out.is_empty() {
        out.push(rng.pick_char(LOWER));
    }
    out
}

/// `word` capitalised when `model` starts with an upper-case letter.
fn capitalise(word: &str, model: &str) -> String {
    if !model.chars().next().is_some_and(char::is_uppercase) {
        return word.to_string();
    }
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The local part's shape: letter runs as `a`, digit runs as `9`, others as written.
    fn shape(local: &str) -> String {
        runs(local)
            .iter()
            .map(|r| match r {
                Run::Letters(_) => 'a',
                Run::Digits(_) => '9',
                Run::Other(c) => *c,
            })
            .collect()
    }

    #[test]
    fn local_parts_keep_separators_digits_and_case() {
        let cases = [
            "mario.rossi",
            "mrossi",
            "mario_rossi",
            "m.rossi",
            "Mario.Rossi",
            "MARIO.ROSSI",
            "mario.rossi84",
            "info",
            "a",
            "mario-rossi+news",
            "x1y2",
        ];
        for (i, local) in cases.iter().enumerate() {
            for seed in 0..20u8 {
                let out = derive_local(&mut SeedRng::from_seed([seed ^ (i as u8 * 17); 32]), local);
                assert_eq!(shape(&out), shape(local), "case {i}: {local} → {out}");
                assert!(out.is_ascii(), "case {i}");
                if local.chars().any(char::is_uppercase) {
                    assert!(
                        out.chars().next().is_some_and(char::is_uppercase),
                        "case {i}"
                    );
                } else {
                    assert!(!out.chars().any(char::is_uppercase), "case {i}");
                }
            }
        }
    }

    #[test]
    fn single_unknown_word_becomes_initial_and_last_name() {
        let out = derive_local(&mut SeedRng::from_seed([5; 32]), "mrossi");
        let rest = out.get(1..).unwrap_or("");
        assert!(matches!(lookup(rest), Some((_, NameRole::Last))), "{out}");
        let out = derive_local(&mut SeedRng::from_seed([5; 32]), "info");
        assert!(ROLE_WORDS.contains(&out.as_str()));
    }

    #[test]
    fn split_needs_both_sides() {
        assert_eq!(split("a@b.it"), Some(("a", "b.it")));
        assert_eq!(split("\"a@b\"@c.it"), Some(("\"a@b\"", "c.it")));
        assert_eq!(split("@b.it"), None);
        assert_eq!(split("a@"), None);
        assert_eq!(split("ab.it"), None);
    }
}
