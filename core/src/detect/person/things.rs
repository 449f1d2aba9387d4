//! Words beside a capitalised run that make it a thing's name, not a
//! person's: storms, ships and buttons named like people, feasts of the
//! Virgin, an organisation after a particle, a firm of partners.

use super::lexicon::flag;
use super::rules::{head_after_possessive, late_flags};
use super::{Case, Gap, Word};

/// Storms, ships and the controls of a screen, in the lexicon as
/// [`flag::THING`] with the pets of [`super::rules::PETS`]: the one or two
/// capitalised words after one are its name (`Hurricane Helene`,
/// `Sturmtief Zoltan`, `la tempesta Boris`, `o navio Gil Eannes`, `il
/// pulsante Salva`). Split at spaces: one string costs the filter less
/// than a slice.
pub(super) const THINGS: &str = "hurricane storm typhoon cyclone huracán tormenta borrasca ciclón tifón uragano tempesta ciclone tifone sturm sturmtief orkantief hurrikan taifun tempête ouragan typhon tempestade furacão tufão depressão ship vessel ferry yacht buque barco velero nave navio schiff fähre navire paquebot voilier button botón pulsante tasto bouton botão schaltfläche";

/// `my dog Biscuit`, `Hurricane Helene`, `il pulsante Salva`: one or two
/// words right after a word of [`flag::THING`]; or a run that such a word
/// the lists know as no name leads (`Storm Ciarán`). (`Orkan`, a Turkish
/// given name, is not one: `Orkantief` is.)
pub(super) fn named_thing(text: &str, words: &[Word], from: usize, to: usize) -> bool {
    let after_one = to - from <= 2
        && from > 0
        && words[from].gap == Gap::Space
        && late_flags(text, words, from - 1) & flag::THING != 0;
    let led_by_one = (2..=3).contains(&(to - from))
        && words[from].is(flag::THING)
        && words[from].case == Case::Title
        && !words[from].known()
        && words[from + 1].gap == Gap::Space;
    after_one || led_by_one
}

/// Feasts named after the Virgin under a given name (`puente de la
/// Inmaculada`, `fiesta de la Merced`, `feast of the Assumption`): after
/// one of these, a particle and an article, the capitalised run is the
/// feast. (The article is needed: `la fiesta de Marco` is his.)
const FEASTS: &str = "día dia puente fiesta festa feast fête solemnidad";

/// Whether `words[from]` stands after a word of [`FEASTS`], a particle and
/// an article (`de la`, `of the`), read in the text (the reader may not
/// hold the words before the article).
pub(super) fn after_feast(text: &str, words: &[Word], from: usize) -> bool {
    if words[from].gap != Gap::Space {
        return false;
    }
    let Some(before) = text[..words[from].start].strip_suffix(' ') else {
        return false;
    };
    let mut last = before.rsplitn(4, ' ');
    let (Some(the), Some(of), Some(head)) = (last.next(), last.next(), last.next()) else {
        return false;
    };
    matches!((of, the), ("de", "la") | ("of", "the"))
        && FEASTS
            .split(' ')
            .any(|f| f.chars().eq(head.chars().flat_map(char::to_lowercase)))
}

/// `Lucho Arbeláez Ríos del Banco Santander`, `Dario Dell'Acqua della
/// Banca Mediolanum`, `Didier Dos Santos de la Caisse d'Épargne`: whether
/// the lower-case particle `words[k]` (and up to two more after it) leads
/// to an organisation: a place word the lists know as no name, then a
/// capitalised word that is no name the lists know as nothing else. The
/// person's name ends before the particle. (Not `Christophe du Pont` or
/// `Carlos del Río Sánchez`: a place word last, or before a surname, is
/// part of the surname.)
pub(super) fn leads_an_organisation(words: &[Word], k: usize) -> bool {
    let particle = |w: &Word| w.case == Case::Lower && w.is(flag::PARTICLE) && w.gap == Gap::Space;
    if k == 0 || !particle(&words[k]) {
        return false;
    }
    let mut at = k + 1;
    while at < words.len() && at < k + 3 && particle(&words[at]) {
        at += 1;
    }
    let (Some(place), Some(next)) = (words.get(at), words.get(at + 1)) else {
        return false;
    };
    place.gap == Gap::Space
        && place.case == Case::Title
        && place.is(flag::PLACE)
        && !place.known()
        && next.gap == Gap::Space
        && next.case == Case::Title
        && !next.glued
        && !next.strong()
}

/// `García y Asociados`, `Rossi e Figli`, `Müller und Partner`: a lone
/// name, then `and` and a place word the lists know as no name (a firm's
/// partners), is the firm.
pub(super) fn firm_of_partners(words: &[Word], to: usize) -> bool {
    let (Some(and), Some(partners)) = (words.get(to), words.get(to + 1)) else {
        return false;
    };
    and.conjunction
        && and.gap == Gap::Space
        && partners.gap == Gap::Space
        && partners.case == Case::Title
        && partners.is(flag::PLACE)
        && !partners.known()
}

/// `Valentine's Day`, `Guy's Night`: a name before `'s` and a capitalised
/// `Day`, `Eve` or `Night` names a holiday or an event (`Maria's day off`
/// is hers: the capital says the name).
pub(super) fn holiday_after(text: &str, w: &Word) -> bool {
    matches!(
        head_after_possessive(text, w),
        Some("Day" | "Eve" | "Night")
    )
}

/// Indefinite articles: a capitalised run right after one is a thing, a
/// car or a brand's product (`une Renault Mégane`, `un Seat León`, `ein
/// VW Golf`), not a person (`un certain Didier` has a word between).
/// Not `a`, `an`, `um`: they are also the Romance and German `to`, `at`,
/// `about` (`an Malte`, `um Anna`). Split at spaces, compared as written.
const INDEFINITES: &str = "un una uno une uma ein eine einen einem";

/// Whether an indefinite article of [`INDEFINITES`] stands right before
/// `words[from]`.
pub(super) fn after_indefinite(text: &str, words: &[Word], from: usize) -> bool {
    from > 0
        && words[from].gap == Gap::Space
        && words[from - 1].case == Case::Lower
        && INDEFINITES
            .split(' ')
            .any(|a| a == &text[words[from - 1].start..words[from - 1].end])
}

/// `da Da Vittorio`, `cena Da Gino`: the Italian `Da` (at someone's)
/// capitalised mid-sentence before a lone given name that is no surname
/// names a restaurant or a shop (`Da Silva`, `Da Ponte` lead a surname).
pub(super) fn trattoria(text: &str, words: &[Word], particle: usize, to: usize) -> bool {
    let da = &words[particle];
    let Some(name) = words.get(particle + 1) else {
        return false;
    };
    particle + 2 == to
        && &text[da.start..da.end] == "Da"
        && !da.sentence_start
        && name.gap == Gap::Space
        && name.is(flag::GIVEN)
        && !name.is(flag::SURNAME)
}

/// Lower-case nouns after a name that make it an eponym or a prize (`the
/// Monty Hall problem`, `a Fourier transform`, `the Turing test`, `the
/// Nobel prize`). Split at spaces.
const EPONYMS_AFTER: &str = "problem paradox theorem conjecture criterion equation effect principle test method algorithm index scale curve number distribution constant hypothesis transform inequality lemma formula maneuver manoeuvre procedure prize award medal trophy scholarship fellowship lecture";

/// Whether `the`, `a` or `an` stands right before `words[from]` and a
/// noun of [`EPONYMS_AFTER`] right after `words[to - 1]`.
pub(super) fn eponym_between_article_and_noun(
    text: &str,
    words: &[Word],
    from: usize,
    to: usize,
) -> bool {
    let article = from
        .checked_sub(1)
        .map(|k| &text[words[k].start..words[k].end]);
    if words[from].gap != Gap::Space
        || !article.is_some_and(|a| ["the", "The", "a", "an"].contains(&a))
    {
        return false;
    }
    let Some(rest) = text[words[to - 1].end..].strip_prefix(' ') else {
        return false;
    };
    let noun = rest
        .split(|c: char| !c.is_alphabetic())
        .next()
        .unwrap_or("");
    !noun.is_empty() && EPONYMS_AFTER.split(' ').any(|e| e == noun)
}

/// Where the name in `w` starts: after a lower-case elided preposition or
/// article (up to four letters and `'` or `’`) before a given name the
/// lists know (`le dossier d'Antoine`, `il compleanno d'Andrea`, `all'Anna`):
/// the name is `Antoine`; else at the word's start (`D'Angelo`,
/// `d'Artagnan`, whose part after the elision is no given name).
pub(super) fn elided_start(text: &str, w: &Word) -> usize {
    if !w.is(flag::GIVEN) || w.case != Case::Title {
        return w.start;
    }
    let word = &text[w.start..w.end];
    let Some((at, c)) = word
        .char_indices()
        .take(5)
        .find(|&(_, c)| c == '\'' || c == '’')
    else {
        return w.start;
    };
    let head = &word[..at];
    let tail = &word[at + c.len_utf8()..];
    let lower_head = !head.is_empty() && head.chars().all(|c| c.is_lowercase());
    if lower_head && tail.chars().next().is_some_and(char::is_uppercase) {
        w.start + at + c.len_utf8()
    } else {
        w.start
    }
}
