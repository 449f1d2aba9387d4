//! The rules over words read: which capitalised runs are names, and
//! where each name starts and ends.

use super::lexicon::flag;
use super::things::{
    after_feast, after_indefinite, elided_start, eponym_between_article_and_noun, firm_of_partners,
    holiday_after, leads_an_organisation, named_thing, trattoria,
};
use super::{Case, Finding, Gap, Word};
use crate::kind::Kind;

/// Capitalised runs: found, trimmed, judged, and written to `out`.
pub(super) fn runs(text: &str, words: &[Word], out: &mut Vec<Finding>) {
    let mut i = 0;
    // The last accepted name, as (first word, last word), for `Rossi, Mario`.
    let mut last: Option<(usize, usize, usize)> = None;
    while i < words.len() {
        if !words[i].name_like() && !particle_after_title(words, i) && !caps_surname_first(words, i)
        {
            i += 1;
            continue;
        }
        // Extend: name-like words and lower-case particles between them.
        let mut j = i + 1;
        while j < words.len()
            && words[j].gap == Gap::Space
            && !ends_sentence(&words[j - 1])
            && (words[j].name_like()
                || particle_bridge(words, j)
                || surnames_joined(words, i, j)
                || caps_beside_caps(&words[j - 1], &words[j]))
        {
            j += 1;
        }
        judge(text, words, i, j, &mut last, out);
        i = j.max(i + 1);
    }
}

/// `FOFANA Ibrahima`, `GARCÍA Encarnación`: a surname in capitals the
/// lists do not know (four letters or more, so not `PDF`), then a given
/// name in title case that ends the run: forms and tickets write the
/// surname first and in capitals.
pub(super) fn caps_surname_first(words: &[Word], i: usize) -> bool {
    let word = &words[i];
    let (Some(given), after) = (words.get(i + 1), words.get(i + 2)) else {
        return false;
    };
    !word.glued
        && word.case == Case::Upper
        && word.end - word.start >= 4
        && !word.known()
        && !word.is(flag::NOT_NAME | flag::PLACE | flag::TITLE | flag::PARTICLE)
        && given.gap == Gap::Space
        && given.case == Case::Title
        && given.name_like()
        && given.is(flag::GIVEN)
        && !given.is(flag::NOT_NAME | flag::PLACE)
        && after.is_none_or(|w| w.gap != Gap::Space || !w.name_like())
}

/// `Florence Nakamura`, `Victoria Ashworth`: a place that is also a given
/// name, first in a run of two, before a surname the lists know and that
/// is no place word, is the given name.
pub(super) fn place_given(words: &[Word], k: usize, from: usize, to: usize) -> bool {
    let (given, surname) = (&words[k], &words[to - 1]);
    k == from
        && to == from + 2
        && given.is(flag::GIVEN)
        && given.case == Case::Title
        && surname.case == Case::Title
        && surname.is(flag::SURNAME)
        && !surname.is(flag::PLACE | flag::NOT_NAME)
}

/// `Hallo Kalle,`, `Oi Tavinho,`: one capitalised word the lists do not
/// know, right after a greeting word and before a comma or the line's end,
/// is the name of whom the text greets.
pub(super) fn greeted_unknown(
    text: &str,
    words: &[Word],
    from: usize,
    to: usize,
    greeted: bool,
) -> bool {
    let w = &words[from];
    greeted
        && to == from + 1
        && from > 0
        && words[from - 1].is(flag::GREETING)
        && greets(text, &words[from - 1])
        && (w.gap == Gap::Space || (w.gap == Gap::Comma && ends_line(words, to)))
        && w.case == Case::Title
        && w.flags == 0
        && words.get(to).is_none_or(|n| n.gap != Gap::Space)
}

/// Whether the greeting word `g` greets: a greeting's last word in lower
/// case mid-sentence after a word in lower case is prose (`er hat morgen
/// Geburtstag`, `morgen` of `Guten Morgen`), not one first on its line or
/// sentence, or after a capitalised word (`Guten morgen Kalle`).
fn greets(text: &str, g: &Word) -> bool {
    if g.case != Case::Lower || g.sentence_start || g.line_start {
        return true;
    }
    let before = text[..g.start].trim_end_matches(' ');
    let word = before
        .rsplit(|c: char| !c.is_alphabetic())
        .next()
        .unwrap_or("");
    !word.chars().next().is_some_and(char::is_lowercase)
}

/// `Annegret Wöhler`, `Anacleto Furtado`: a given name the lists know
/// only as ambiguous (the broad lists' names), then a capitalised word
/// they do not know at all: a surname too rare for the lists. Not when
/// the run went on before the given name (`Atocha Almudena Grandes`) or
/// follows a definite article (`the Grace Hopper room`).
pub(super) fn given_then_unknown(words: &[Word], from: usize, to: usize) -> bool {
    let [given, surname] = &words[from..to] else {
        return false;
    };
    let before = from.checked_sub(1).map(|k| &words[k]);
    let joined_before = given.gap == Gap::Space
        && before.is_some_and(|b| {
            b.is(flag::ARTICLE)
                || (b.case != Case::Lower && !ends_sentence(b) && !b.is(flag::NOT_NAME))
        });
    !joined_before
        && given.case == Case::Title
        && given.is(flag::GIVEN)
        && !given.is(flag::NOT_NAME | flag::PLACE)
        && surname.case == Case::Title
        && surname.flags == 0
        && surname.end - surname.start >= 3
}

/// `Jordi Puig i Ferrer`, `Marta de Sousa e Castro`, `Ortega y Gasset`:
/// Catalan, Portuguese and Spanish join two surnames with `i`, `e`, `y`.
/// After a given name and a surname, the lower-case `and` at `j` leads to
/// the second surname when that word is no given name and ends the run.
pub(super) fn surnames_joined(words: &[Word], from: usize, j: usize) -> bool {
    let and = &words[j];
    let Some(next) = words.get(j + 1) else {
        return false;
    };
    let after = words.get(j + 2);
    and.conjunction
        && and.end - and.start == 1
        && and.gap == Gap::Space
        && j >= from + 2
        && words[j - 1].case == Case::Title
        && words[from..j].iter().any(|w| w.is(flag::GIVEN))
        && next.gap == Gap::Space
        && next.case == Case::Title
        && next.name_like()
        && (!next.is(flag::GIVEN) || next.is(flag::SURNAME))
        && (!next.is(flag::PLACE) || next.is(flag::SURNAME))
        && !next.is(flag::NOT_NAME)
        && after.is_none_or(|w| w.gap != Gap::Space || !w.name_like())
}

/// `Frau Prof. von Arnim`, `Dott. de Santis`: lower-case particles after a
/// title lead to the name and belong to it.
pub(super) fn particle_after_title(words: &[Word], i: usize) -> bool {
    i > 0
        && words[i].case == Case::Lower
        && words[i].is(flag::PARTICLE)
        && words[i].gap == Gap::Space
        && words[i - 1].is(flag::TITLE)
        && particle_bridge(words, i)
}

/// A dot after a whole word (not an initial, not a title) ends a sentence:
/// `Wendy Liu. Apologies` is two runs.
pub(super) fn ends_sentence(word: &Word) -> bool {
    word.dot && word.case != Case::Initial && !word.is(flag::TITLE)
}

/// `GRAHAM PETTIGREW`: an all-capitals word the lists do not know joins a
/// known all-capitals name before it.
pub(super) fn caps_beside_caps(before: &Word, word: &Word) -> bool {
    !word.glued
        && word.case == Case::Upper
        && word.end - word.start >= 3
        && before.case == Case::Upper
        && before.known()
        && !before.is(flag::PARTICLE)
        && !word.is(flag::NOT_NAME | flag::PLACE)
}

/// Whether lower-case word `j` (and the ones after it) are particles that
/// lead, over single spaces, to a name-like word.
pub(super) fn particle_bridge(words: &[Word], j: usize) -> bool {
    let mut k = j;
    while k < words.len() && k < j + 3 {
        let w = &words[k];
        if k > j && w.gap != Gap::Space {
            return false;
        }
        if w.case != Case::Lower {
            return k > j && w.name_like();
        }
        if !w.is(flag::PARTICLE) {
            return false;
        }
        k += 1;
    }
    false
}

/// Judges the run `words[from..to]` (split at words that are never names)
/// and writes what is a person.
pub(super) fn judge(
    text: &str,
    words: &[Word],
    from: usize,
    to: usize,
    last: &mut Option<(usize, usize, usize)>,
    out: &mut Vec<Finding>,
) {
    let mut start = from;
    for k in from..=to {
        let split = k == to || words.get(k).is_some_and(|w| {
            let initial = w.case == Case::Initial && w.dot;
            let never_a_name = w.is(flag::NOT_NAME) && !w.known() && !w.is(flag::PARTICLE);
            let joins = w.conjunction && k > from;
            (never_a_name && !initial && !joins && !short_part_between_names(words, k, from, to))
                    // `Ríos del Banco Santander`: the person ends before
                    // the organisation's particle.
                    || (k > from && leads_an_organisation(words, k))
        });
        if split {
            if start < k {
                judge_part(text, words, start, k, from, last, out);
            }
            start = k + 1;
        }
    }
}

pub(super) fn judge_part(
    text: &str,
    words: &[Word],
    mut from: usize,
    mut to: usize,
    run_start: usize,
    last: &mut Option<(usize, usize, usize)>,
    out: &mut Vec<Finding>,
) {
    // What stands before: a title or a greeting is evidence; a place word
    // makes the run a place.
    let mut titled = false;
    let mut greeted = false;
    let before = |k: usize| (k > 0).then(|| &words[k - 1]);
    if from > run_start {
        // The word before was split off (never a name): a greeting? A
        // saint's or place word that is also a common word (`São`, `Chez`)?
        greeted |= words[from - 1].is(flag::GREETING);
        if (words[from - 1].is(flag::SAINT) || place_word(text, &words[from - 1]))
            && words[from].gap == Gap::Space
        {
            return;
        }
    } else if let Some(prev) = before(from) {
        // A sign-off on its own line (`Thanks,\nRob`) greets too.
        if words[from].soft_break && prev.is(flag::GREETING) && greets(text, prev) {
            greeted = true;
        }
        titled |= labelled(text, words, from);
        if place_labelled(text, words, from)
            || after_eponym_head(text, words, from)
            || head_before_particle(text, words, from, CORNERS)
            || between_from_and_to(text, words, from)
            || after_feast(text, words, from)
        {
            return;
        }

        if words[from].gap == Gap::Space {
            // (A long lower-case word that ended the window before is read
            // but not looked up: `Llamó la señora Maripaz Urquijo`, `Sala
            // riunioni Marconi`.)
            let prev_flags = late_flags(text, words, from - 1);
            // (Not a title that is also a preposition in lower case: `on
            // Heroku`, where `On.` titles an Italian deputy.)
            titled |= prev_flags & flag::TITLE != 0 && !prev.determiner;
            // (Not a greeting's word that ends a sentence, `this morning.
            // Can you`, nor one in prose, `closed on Good Friday`.)
            greeted |= prev.is(flag::GREETING) && !ends_sentence(prev) && greets(text, prev);
            if prev.is(flag::SAINT)
                || prev_flags & flag::PLACE != 0
                || place_word(text, prev)
                || elided_place(text, prev)
            {
                return;
            }
        }
    }
    // `dall'Istituto Mario Negri`, `l'Hôpital Necker`: a place word after
    // an elided article leads a place's name.
    if to - from >= 2 && elided_place(text, &words[from]) {
        return;
    }
    // `Santa Maria`, `São João`: a saint's name is a place or a feast.
    if words[from].is(flag::SAINT) && words[from].case != Case::Lower && to - from >= 2 {
        return;
    }
    // Leading titles and greetings are left out of the span.
    let title =
        |k: usize| words[k].is(flag::TITLE) && !among_initials(words, k) && !marian(words, k);
    while from < to && (title(from) || words[from].is(flag::GREETING)) {
        titled |= words[from].is(flag::TITLE);
        greeted |= words[from].is(flag::GREETING);
        from += 1;
    }
    // A title inside the run (`Llamada de Dña. Milagros`): the name starts
    // after it.
    if let Some(title) = (from..to).rev().find(|&k| title(k)).map(|k| k - from) {
        if from + title + 1 < to {
            // `Rua Dom Pedro II`, `Calle Doctor Fleming`: a street.
            if words[from..from + title].iter().any(|w| w.is(flag::PLACE)) {
                return;
            }
            titled = true;
            from += title + 1;
        }
    }
    // Leading particles (`DE ÓSCAR`, `El País`), and unknown words before
    // a particle (`Dell di Rahim`), are not the name; an article may lead
    // both (`Der Tipp von Sven`).
    for _ in 0..2 {
        let Some(particle) = words[from..to]
            .iter()
            .rposition(|w| w.is(flag::PARTICLE) && w.case != Case::Lower && w.case != Case::Initial)
            .filter(|&p| {
                // After a title a capitalised particle leads the surname
                // (`Avv. Di Pietro`, `Dott. La Rocca`).
                p == 0
                    && !(titled && words[from].case == Case::Title)
                    && !leads_a_name(words, from, to)
            })
            .or_else(|| {
                words[from..to]
                    .iter()
                    .position(|w| w.is(flag::PARTICLE) && w.case != Case::Initial)
                    .filter(|&p| {
                        p > 0
                            && words[from..from + p]
                                .iter()
                                .all(|w| !w.known() && w.case != Case::Initial)
                    })
            })
        else {
            break;
        };
        // `Casa de Lope de Vega`, `Museo de Frida Kahlo`: a place named
        // after the name; `da Da Vittorio`: a restaurant.
        if words[from..from + particle]
            .iter()
            .any(|w| w.is(flag::PLACE))
            || (particle == 0 && trattoria(text, words, from, to))
        {
            return;
        }
        from += particle + 1;
    }
    // Lower-case particles left at the start (`de Paco` after `Nota`), but
    // not after a title (`Frau Prof. von Arnim`).
    let after_title =
        from > 0 && from < to && words[from].gap == Gap::Space && words[from - 1].is(flag::TITLE);
    while from < to && words[from].case == Case::Lower && !after_title {
        from += 1;
    }
    // A word that is never a name but spelled like one (`Según`, the name
    // `Segun`) before a given name is not part of it.
    // (At a sentence's start: mid-sentence the capital is the name's, `mit
    // Ali Hassan`.)
    if to - from >= 2
        && !(titled && words[from].is(flag::PARTICLE))
        && (words[from].sentence_start || words[from].after_colon || !words[from].known())
        && words[from].is(flag::NOT_NAME)
        && words[from + 1].is(flag::GIVEN)
        // (`Según Tránsito Belmonte`: an ambiguous given name before a
        // surname too.)
        && (words[from + 1].strong() || (to - from >= 3 && words[from + 1].case == Case::Title))
    {
        from += 1;
    }
    // Trailing particles (`de` before a line break) are not a name.
    while to > from && words[to - 1].case == Case::Lower {
        to -= 1;
    }
    if from >= to {
        return;
    }
    // After `the life of`, `das Leben von`: a person, even one the lists
    // know as a street's or a city's name (`Garibaldi`, `Bismarck`).
    // (Read once the run is trimmed: `Leben von Bismarck` is one run.)
    let famous = after_person_head(text, words, from);
    titled |= famous;
    let part = &words[from..to];
    // A place word that is also a surname, last after a given name or
    // after a title, is the surname (`Elena Fontana`, `Sra. Castillo`).
    // (`Henrique Sá Pinto`: or between a given name and a last surname
    // the lists know as nothing else; `Sá` folds as `SA`, a company.)
    let place_surname = |k: usize| {
        let w = &words[k];
        // (A surname the lists do not know too, `Leonor Sá Fragoso`; and
        // before `i`, `y`, `e` and a surname, `Nuria Sala i Vidal`.)
        let surname_at = |n: usize| {
            let s = &words[n];
            s.case == Case::Title
                && (s.strong() && s.is(flag::SURNAME) || s.flags == 0)
                && !s.is(flag::PLACE)
        };
        let last_or_before_surname = k + 1 == to
            || (k + 2 == to && w.case == Case::Title && surname_at(k + 1))
            || (k + 3 == to
                && w.case == Case::Title
                && words[k + 1].conjunction
                && words[k + 2].is(flag::SURNAME));
        // (`Carlos del Río Sánchez`: over the particles before it.)
        let before = (from..k)
            .rev()
            .find(|&b| words[b].case != Case::Lower || !words[b].is(flag::PARTICLE))
            .map(|b| &words[b]);
        w.is(flag::SURNAME)
            && last_or_before_surname
            && (titled
                || before.is_some_and(|b| b.strong() && b.is(flag::GIVEN))
                || (k > from && words[k - 1].conjunction))
    };
    // `Fernández de Córdoba`, `Ruiz de Alarcón`: a place after a particle,
    // last after a known surname, is the surname's second part.
    // (`Ruiz de la Torre`: over every particle between them. `Ignacio del
    // Valle`, `Nicolò Dalla Chiesa`: after a given name too, when the
    // lists know the place word as a surname, and over a capitalised
    // particle that is no article.)
    let surname_of_place = |k: usize| {
        let particles = words[from..k]
            .iter()
            .rev()
            .take_while(|w| {
                w.is(flag::PARTICLE)
                    && (w.case == Case::Lower || (w.case == Case::Title && !w.is(flag::ARTICLE)))
            })
            .count();
        let Some(s) = (k - from).checked_sub(particles + 1).map(|s| from + s) else {
            return false;
        };
        // (After a given name, only a place word the lists know as a
        // surname too: `Charles de Gaulle` is the airport's.)
        let given =
            words[s].is(flag::GIVEN) && !words[s].is(flag::NOT_NAME) && words[k].is(flag::SURNAME);
        k + 1 == to
            && particles > 0
            && (words[s].is(flag::SURNAME) || given)
            && !words[s].is(flag::PLACE)
            && words[s].case != Case::Lower
            && (titled || s > from || given)
    };
    // A sign-off alone on its line under `Un abrazo,` or `Best,`: a name
    // even when also a place (`Rosario`).
    let sign_off = words[from].under_comma && to - from <= 2 && ends_line(words, to);
    greeted |= sign_off;
    if !sign_off
        && !famous
        && (from..to).any(|k| {
            words[k].is(flag::PLACE)
                && !words[k].strong()
                // `J. C. Pimentel`: an initial after the first is no `C.`
                // (calle); nor one before a surname the lists know as
                // nothing else (`R. Patel`, not `R. Augusta`, rua Augusta).
                && (k == from || words[k].case != Case::Initial)
                && !(words[k].case == Case::Initial && initial_of_surname(words, k, to))
                && !place_surname(k)
                && !surname_of_place(k)
                && !place_given(words, k, from, to)
                // `M. Ángeles Sotomayor`: María's second name, not a place.
                && !(k > from && words[k].is(flag::MARIAN) && marian(words, k - 1))
        })
    {
        return;
    }
    if let Some(next) = words.get(to) {
        // (After the run, a short lower-case place word ends the clause to
        // make it a firm, `Marco Rossi srl`: `Marco via email` is prose.)
        let prose = next.case == Case::Lower
            && text[next.start..next.end].chars().nth(3).is_none()
            && text[next.end..].starts_with(' ');
        if next.gap == Gap::Space && place_word(text, next) && !prose {
            return;
        }
    }
    // Unknown words before the first given name are not part of it
    // (`Kollegin Anna Schmidt`, `Ieri Marco`): a given name comes first.
    if let Some(first_given) = part.iter().position(|w| w.is(flag::GIVEN)) {
        let lead = &part[..first_given];
        // (Right after a title the run is the name: `Mr. Oluwadamilare
        // ADEBAYO`.)
        let after_title =
            from > 0 && words[from].gap == Gap::Space && words[from - 1].is(flag::TITLE);
        if !lead.is_empty()
            && !after_title
            && !caps_surname_first(words, from)
            && lead
                .iter()
                .all(|w| !w.known() && w.case != Case::Initial && w.case != Case::Lower)
        {
            from += first_given;
        }
    }
    // `Mein Mann Jürgen`, `my Uncle Bob`: after a possessive, a word before
    // the first given name is the kin or the role, not the name.
    if to - from >= 2 && after_possessive(text, words, from) && !words[from].is(flag::GIVEN) {
        if let Some(first_given) = words[from..to].iter().position(|w| w.is(flag::GIVEN)) {
            from += first_given;
        }
    }
    // `Moore's law`, `Hodgkin's disease`: a surname before `'s` and an
    // eponym's head names the law or the disease (not a given name:
    // `Maria's law firm` is hers).
    if to - from == 1
        && !titled
        && !words[from].is(flag::GIVEN)
        && possessive_eponym(text, &words[from])
    {
        return;
    }
    // `Valentine's Day`: a holiday (the run may go on to `Day`); `the
    // Monty Hall problem`: an eponym.
    if holiday_after(text, &words[from])
        || (!titled && eponym_between_article_and_noun(text, words, from, to))
    {
        return;
    }
    // `une Renault Mégane`, `ein VW Golf`: a car, a product.
    if !titled && !greeted && after_indefinite(text, words, from) {
        return;
    }
    // `my dog Biscuit`, `meinen Hund Bruno`, `mon chat Gaston`: a pet;
    // `Hurricane Helene`, `o navio Gil Eannes`: a storm, a ship.
    if named_thing(text, words, from, to) {
        return;
    }
    let part = &words[from..to];
    let names = || part.iter().filter(|w| w.case != Case::Lower);
    let strong = names().filter(|w| w.strong()).count();
    let known = names().filter(|w| w.known()).count();
    let initials = names().filter(|w| w.case == Case::Initial).count();
    let full = names().count() - initials;
    let accept = match full {
        0 => false,
        1 => {
            let w = names().find(|w| w.case != Case::Initial);
            let w = w.unwrap_or(&words[from]);
            // A name that is also a word, capitalised mid-sentence and not
            // after an article (`talk to Will`, not `in Florence`).
            let mid_sentence = w.is(flag::AMBIGUOUS)
                && !w.is(flag::NOT_NAME)
                && w.case == Case::Title
                && !w.sentence_start
                && (!after_determiner(words, from) || given_after_preposition(words, from));
            // `Mi Mari dice`, `il mio Gigi`: a given name after a possessive
            // is someone's, even one that is also a word (`mon mari`, the
            // husband, is written in lower case).
            let mine = given_after_possessive(text, words, from);
            // A lone surname is a name mid-sentence (`ask Fernández`), not
            // at a sentence's start or after an article (`the Newton
            // release`); a lone given name is one.
            let surname_mid_sentence = w.case == Case::Title
                && (!w.sentence_start || w.after_colon)
                && !after_determiner(words, from);
            // `things to do in Charlotte`, `the Wellington office`: a name
            // the lists know as a place too, after an article or a
            // preposition of place, is the place; after `from`, `de`,
            // `von` (`an email from Charlotte`) it stays a person.
            // (`The Wellington office`: a capitalised article first in its
            // sentence too.)
            let place_after_determiner = w.is(flag::PLACE)
                && (((after_determiner(words, from) || after_first_article(words, from))
                    && before_a_place(text, &words[from - 1]))
                    || toward_a_place(text, words, from));
            // `The Wilson tennis racket`, `the Newton release`: one surname
            // after English `the` names a thing, a family or an account; a
            // name that is only a given name stays a person (`I told the
            // Maria from accounting`).
            let only_given = w.is(flag::GIVEN) && !w.is(flag::SURNAME);
            let after_the = from > 0
                && words[from].gap == Gap::Space
                && !only_given
                && text[words[from - 1].start..words[from - 1].end].eq_ignore_ascii_case("the");
            let a_place_or_thing = (place_after_determiner || after_the) && !titled && !greeted;
            !a_place_or_thing && (w.strong() && (w.is(flag::GIVEN) || surname_mid_sentence))
                || (w.known() && (titled || greeted || initials > 0 || mid_sentence || mine))
                || (titled && w.case == Case::Title)
                || greeted_unknown(text, words, from, to, greeted)
                || (initials > 0 && w.case == Case::Title && !w.is(flag::NOT_NAME))
        }
        _ => {
            strong >= 1
                || known >= 2
                || titled
                || (full == 2 && caps_surname_first(words, from))
                || given_then_unknown(words, from, to)
                // `M. Ángeles Sotomayor`: her initial, her second given
                // name, a surname.
                || (to - from == 3
                    && marian(words, from)
                    && words[to - 1].case == Case::Title
                    && !words[to - 1].is(flag::NOT_NAME | flag::PLACE))
        }
    };
    // `Rossi, Mario`, `Moreno Pérez, Ana Belén`: surnames, a comma, given
    // names (one name, whatever its place in the sentence).
    // (Not a surname that is itself an item of a list after a comma:
    // `Bianchi, Ferrari, Romano`.)
    if surnames_only(&words[from..to]) && words[from].gap != Gap::Comma {
        if let Some(given_end) = given_after_comma(words, to) {
            out.push(Finding::new(
                Kind::Name,
                words[from].start,
                words[given_end - 1].end,
            ));
            *last = None;
            return;
        }
    }
    // A title or a greeting says a person (`Dear Mr. Roland Berger`), and
    // a name word beyond the firm's (`Johnnie Walker Smith`) says a name.
    let accept = accept
        && !company_beside(words, from, to, titled, greeted)
        && !(to - from == 1 && !titled && firm_of_partners(words, to))
        && (titled || greeted || !firm(text, words, from, to));
    if !accept {
        return;
    }
    let (start, end) = (elided_start(text, &words[from]), words[to - 1].end);

    *last = Some((from, to, out.len()));
    out.push(Finding::new(Kind::Name, start, end));
}

/// Articles, determiners and prepositions before which a capitalised word
/// is a noun or a place more often than a person (`der Koch`, `in Paris`);
/// in the lexicon as [`flag::DETERMINER`]. Word lists here are one string
/// split at spaces: a slice of `&str` costs the filter eight bytes a word.
/// Articles and prepositions of place after which a name the lists also
/// know as a place is the place (`in Charlotte`, `nella Firenze`, `the
/// Wellington office`); a subset of [`DETERMINERS`].
const BEFORE_A_PLACE: &str = "the in at nel nella im am en em no na au du";

/// Whether `word` (the word before a lone name) is one of [`BEFORE_A_PLACE`].
fn before_a_place(text: &str, word: &Word) -> bool {
    let written = &text[word.start..word.end];
    BEFORE_A_PLACE
        .split_whitespace()
        .any(|w| w.eq_ignore_ascii_case(written))
}

/// Words of going and travelling, and prepositions of direction after
/// them: a name the lists also know as a place after both is the place
/// (`Voy a Santiago en agosto`, `flights to Florence`, `ich fahre nach
/// Rosenheim`); `llamé a Santiago` and `talk to Florence` stay persons.
const MOTIONS: &str = "go going goes went travel travelling traveling trip route directions distance flight flights fly flying move moving drive driving train voy vamos va van ir viajo viajar viaje vuelo vuelos volar llego llegar vuelvo volver mudarme vado andiamo andare viaggio viaggiare volo voli treno arrivo arrivare trasferirmi fahre fahren fährt fliege fliegen flug flüge reise reisen zug umziehen vais allons aller voyage voyager vol vols partir déménager vou vai vamos viajar viagem voo voos mudar chegar";
const TOWARD: &str = "to a à nach para pra";
/// Words of visiting: the name the lists also know as a place right after
/// one is the place (`visiting Charlotte`, `vou visitar Teresina`).
const VISITS: &str = "visiting visit visitar visitare visiter visito visita";

/// Whether `words[from]` comes right after a word of [`VISITS`], or after
/// a preposition of [`TOWARD`] that follows a word of [`MOTIONS`] (read in
/// the text: the reader may not hold the word before the preposition).
pub(super) fn toward_a_place(text: &str, words: &[Word], from: usize) -> bool {
    let w = &words[from];
    if w.gap != Gap::Space {
        return false;
    }
    let last_word = |end: usize| {
        let before = text[..end].trim_end_matches([' ', ',']);
        let start = before
            .char_indices()
            .rev()
            .find(|&(_, c)| !c.is_alphabetic())
            .map_or(0, |(at, c)| at + c.len_utf8());
        (start, &before[start..])
    };
    let in_list = |list: &str, word: &str| {
        !word.is_empty()
            && list
                .split(' ')
                .any(|m| m.chars().eq(word.chars().flat_map(char::to_lowercase)))
    };
    let (at, prep) = last_word(w.start);
    if in_list(VISITS, prep) {
        return true;
    }
    if !in_list(TOWARD, prep) {
        return false;
    }
    if in_list(MOTIONS, last_word(at).1) {
        return true;
    }
    // `flights from Madison to Charlotte`, `the route from Jackson,
    // Mississippi to Charlotte`: a route's end, after a word of going, a
    // particle of [`FROM`] and up to three words of its start.
    let mut end = at;
    for _ in 0..4 {
        let (start, word) = last_word(end);
        if word.is_empty() {
            return false;
        }
        if FROM.split(' ').any(|f| f == word) {
            return in_list(MOTIONS, last_word(start).1);
        }
        end = start;
    }
    false
}

pub(super) const DETERMINERS: &str = "the a an in on at of this that my your our la el il lo le les los las gli i un una uno une der die das den dem des ein eine einen einem im am o os as um uma en em no na nel nella del della al du au mi tu su mio mia sua mein meine mon ma son ses leur meu minha seu sua per para por pour con with mit avec com from von di de da";

/// Words before a saint's name; what follows them names a place, a
/// hospital, a church or a feast (`São Paulo`, `Hospital Santa Maria`,
/// `Saint-Étienne`, `Sant'Angelo`), in the lexicon as [`flag::SAINT`].
/// Articles among the particles (`El País`, `La Rosa`, `Le Monde`): a
/// capitalised one before a name is not part of it; in the lexicon as
/// [`flag::ARTICLE`].
pub(super) const ARTICLES: &str = "the la le el lo il les los las der die das l";

pub(super) const SAINTS: &str =
    "san santa santo sao saint sainte st ste sankt sant santi santissima nossa nuestra notre";

/// Whether the capitalised particle `words[from]` is the first part of the
/// name (`Da Silva`, `Dos Santos`, `Ben Carter`), not an article before
/// it (`El País`, `DE ÓSCAR`).
pub(super) fn leads_a_name(words: &[Word], from: usize, to: usize) -> bool {
    let particle = &words[from];
    let Some(next) = words.get(from + 1).filter(|_| from + 1 < to) else {
        return false;
    };
    if particle.case != Case::Title || particle.is(flag::ARTICLE) {
        return false;
    }
    (particle.is(flag::GIVEN) && !particle.is(flag::AMBIGUOUS))
        || next.is(flag::SURNAME) && next.case == Case::Title
}

/// Whether the line ends at `words[at]`, or holds only `and` and one more
/// name-like word first (`Rosario y Tomás`).
pub(super) fn ends_line(words: &[Word], at: usize) -> bool {
    let end = |k: usize| words.get(k).is_none_or(|w| w.line_start);
    if end(at) {
        return true;
    }
    words[at].conjunction
        && words
            .get(at + 1)
            .is_some_and(|w| w.gap == Gap::Space && w.name_like())
        && end(at + 2)
}

/// One to three surnames (a capitalised particle may lead: `Da Costa`).
pub(super) fn surnames_only(part: &[Word]) -> bool {
    (1..=3).contains(&part.len())
        && part
            .last()
            .is_some_and(|w| w.is(flag::SURNAME) && w.case != Case::Lower)
        && part.iter().all(|w| {
            w.case != Case::Initial
                && (w.is(flag::SURNAME) || (w.is(flag::PARTICLE) && !w.is(flag::GIVEN)))
                && !w.is(flag::PLACE)
        })
}

/// Where the given names after a comma at `words[at]` end (one or two
/// given names, nothing name-like after them on the same line).
pub(super) fn given_after_comma(words: &[Word], at: usize) -> Option<usize> {
    let first = words.get(at)?;
    if first.gap != Gap::Comma || !first.name_like() || !first.is(flag::GIVEN) {
        return None;
    }
    let mut end = at + 1;
    while end < words.len()
        && end < at + 2
        && words[end].gap == Gap::Space
        && !ends_sentence(&words[end - 1])
        && words[end].name_like()
    {
        if !words[end].is(flag::GIVEN) {
            return None;
        }
        end += 1;
    }
    let alone = ends_sentence(&words[end - 1])
        || words
            .get(end)
            .is_none_or(|after| after.gap != Gap::Space || !after.name_like());
    alone.then_some(end)
}

/// A lone name beside `&` (`Johnson & Johnson`, `Marks & Spencer`) or
/// before an acronym (`Roth IRA`, `Ferrari SPA`) names a company or a
/// product, unless a title or greeting says otherwise or both sides of
/// the `&` are given names (`Pina & Franco`).
/// A greeting is no evidence against the `&` (`Thanks,\nWalker & Sons`
/// signs off a firm).
pub(super) fn company_beside(
    words: &[Word],
    from: usize,
    to: usize,
    titled: bool,
    greeted: bool,
) -> bool {
    if titled || to - from != 1 {
        return false;
    }
    let word = &words[from];
    let next = words
        .get(to)
        .filter(|n| n.gap != Gap::Break || n.amp_before);
    let given = word.is(flag::GIVEN);
    let amp_next = next.is_some_and(|n| n.amp_before && n.case != Case::Lower);
    let amp_before = word.amp_before && from > 0 && words[from - 1].case != Case::Lower;
    if amp_next && !(given && next.is_some_and(|n| n.is(flag::GIVEN))) {
        return true;
    }
    if amp_before && !(given && words[from - 1].is(flag::GIVEN)) {
        return true;
    }
    !greeted
        && !given
        && next.is_some_and(|n| n.gap == Gap::Space && n.case == Case::Upper && !n.known())
}

/// Prepositions of company: a given name right after one is a person,
/// where after other determiners it may be a place (`in Georgia`,
/// `a Lourdes`); in the lexicon as [`flag::COMPANION`]. Not the Portuguese
/// article of `com o Adalberto`: `o` is also Spanish "or", and taking it
/// cost Spanish precision.
pub(super) const COMPANIONS: &str = "with mit con com avec";

/// `mit Reinhold`, `con Rigoberto`: a given name right after a
/// preposition of company (not after `in`, `a`, `the`) is a person, unless
/// the lists also know it as a place.
pub(super) fn given_after_preposition(words: &[Word], k: usize) -> bool {
    let w = &words[k];
    w.is(flag::GIVEN)
        && !w.is(flag::NOT_NAME | flag::PLACE)
        && after_determiner(words, k)
        && words[k - 1].is(flag::COMPANION)
}

/// Possessives of the six languages, before a kin word or a name (`my`,
/// `mi`, `il mio`, `mein`, `mon`, `meu`).
const POSSESSIVES: &str = "my our mi mis nuestro nuestra mio mia miei mie nostro nostra mein meine meinem meinen meiner unser unsere mon ma mes notre meu minha meus minhas nosso nossa";

/// Whether a possessive of [`POSSESSIVES`] stands right before
/// `words[k]`, in any case (`Mi Mari`, `Mein Mann Jürgen`).
pub(super) fn after_possessive(text: &str, words: &[Word], k: usize) -> bool {
    k > 0 && words[k].gap == Gap::Space && {
        let before = &text[words[k - 1].start..words[k - 1].end];
        POSSESSIVES
            .split(' ')
            .any(|p| p.chars().eq(before.chars().flat_map(char::to_lowercase)))
    }
}

/// `Mi Mari`, `il mio Gigi`, `meine Rosa`: a given name in title case
/// after a possessive (not one the lists know as a place too: `my
/// Florence trip`).
pub(super) fn given_after_possessive(text: &str, words: &[Word], k: usize) -> bool {
    let w = &words[k];
    w.is(flag::GIVEN)
        && !w.is(flag::PLACE)
        && w.case == Case::Title
        && after_possessive(text, words, k)
}

pub(super) fn after_determiner(words: &[Word], k: usize) -> bool {
    k > 0 && words[k].gap == Gap::Space && words[k - 1].determiner
}

/// Whether a capitalised determiner that starts a sentence stands right
/// before `words[k]` (`The Wellington office`, `In Florence`).
pub(super) fn after_first_article(words: &[Word], k: usize) -> bool {
    k > 0
        && words[k].gap == Gap::Space
        && words[k - 1].sentence_start
        && words[k - 1].case == Case::Title
        && words[k - 1].is(flag::DETERMINER)
}

/// Whether `words[k]` is a one-letter title beside another initial: an
/// initial (`J.-M. Carrière`, `M. Á. Sepúlveda`), not `M.` for Monsieur.
pub(super) fn among_initials(words: &[Word], k: usize) -> bool {
    let initial = |w: &Word| w.case == Case::Initial && w.dot;
    initial(&words[k])
        && ((k > 0 && words[k].gap == Gap::Space && initial(&words[k - 1]))
            || words
                .get(k + 1)
                .is_some_and(|n| n.gap == Gap::Space && initial(n)))
}

/// Labels of a name in forms and tool calls' JSON keys (split at spaces:
/// one string costs the filter less than a slice), in the lexicon as
/// [`flag::LABEL`] (not `name`: `"name": "Acme"` names anything).
pub(super) const LABELS: &str =
    "surname lastname firstname nome cognome sobrenome nombre apellido apellidos vorname nachname prenom nom";

/// `"nachname": "Lindemann"`, `\"cognome\": \"La Rocca\"`, `nom : Le Goff`:
/// a run right after a label and a colon, quoted or not, is its value.
pub(super) fn labelled(text: &str, words: &[Word], from: usize) -> bool {
    let Some(label) = from.checked_sub(1).map(|k| &words[k]) else {
        return false;
    };
    // (Three to six bytes between them: `": "`, `\": \"`, ` : `; after
    // `: ` alone the cues read the name.)
    (label.is(flag::LABEL) || snake_case_label(text, label))
        && label.case == Case::Lower
        && words[from].gap == Gap::Break
        && (3..=6).contains(&(words[from].start - label.end))
}

/// Pets, in the lexicon as [`flag::THING`]: the name after one is an
/// animal's (`my dog Biscuit`, `il mio gatto Bartolomeo`).
pub(super) const PETS: &str = "dog cat puppy kitten hund katze kater perro perra perrito gato gata gatito gatto gatta cane chien chienne chat chaton chiot cachorro cachorra cao cadela gatinho";

/// `Kunde: thomas bauer,`, `cliente: anna maria de santis,`, `NOMBRE:
/// FRANCISCO DAS CHAGAS;`: after a label cue, a field that starts with a
/// known name and ends (a comma, a semicolon, a quote, a line's or the
/// text's end) within four words is one name; where it ends.
pub(super) fn label_field(text: &str, words: &[Word], first: usize) -> Option<usize> {
    let head = words.get(first)?;
    if !head.known() || head.glued {
        return None;
    }
    for k in first..(first + 4).min(words.len()) {
        let w = &words[k];
        if k > first {
            let after_particle = words[k - 1].is(flag::PARTICLE);
            // `"name": "henrike lorenzen"`: a lower-case word the lists do
            // not know, after a given name and last in a quoted value, is
            // her or his surname.
            let quoted_surname = w.case == Case::Lower
                && w.flags == 0
                && w.end - w.start >= 3
                && words[k - 1].is(flag::GIVEN)
                && matches!(text.as_bytes().get(w.end), Some(b'"'));
            let fits = w.known()
                || w.is(flag::PARTICLE)
                || quoted_surname
                || (w.case != Case::Lower
                    && !w.is(flag::NOT_NAME)
                    && (!w.is(flag::PLACE) || after_particle));
            if w.gap != Gap::Space || w.glued || !fits {
                return None;
            }
        }
        let after = text.as_bytes().get(w.end);
        if after.is_none_or(|b| matches!(b, b',' | b';' | b'\n' | b'\r' | b'|' | b'"' | b')')) {
            return (k > first && !w.is(flag::PARTICLE)).then_some(w.end);
        }
    }
    None
}

/// `"first_name": "Rebecca"`, `"last_name": "Thornton"`: the key's last
/// part alone (`name`, read after the `_`) labels anything
/// (`"file_name"`), so the part before it decides.
fn snake_case_label(text: &str, label: &Word) -> bool {
    let head = &text[..label.start];
    text[label.start..label.end].eq_ignore_ascii_case("name")
        && ["first_", "last_", "given_", "family_", "middle_", "sur_"]
            .iter()
            .any(|p| {
                let head = head.as_bytes();
                head.len() >= p.len()
                    && head[head.len() - p.len()..].eq_ignore_ascii_case(p.as_bytes())
            })
}

/// Second given names of `María`/`Maria` (`M. Grazia`, `M. Ángeles`),
/// in the lexicon as [`flag::MARIAN`]: after one the `M.` is her first
/// name's initial, not `Monsieur`.
pub(super) const MARIAN: &str = "grazia angeles carmen pilar luisa teresa dolores mercedes concepcion asuncion antonietta luz jesus eugenia isabel cristina";

/// Whether the title `words[k]` is `M.` before a [`MARIAN`] name.
pub(super) fn marian(words: &[Word], k: usize) -> bool {
    let w = &words[k];
    w.case == Case::Initial
        && w.dot
        && words
            .get(k + 1)
            .is_some_and(|n| n.gap == Gap::Space && n.case != Case::Lower && n.is(flag::MARIAN))
}

/// Whether the initial `words[k]` (a street's abbreviation too: `R.` rua,
/// `C.` calle) is a person's: a name-like word follows that the lists
/// know as a surname, as nothing else, and last.
pub(super) fn initial_of_surname(words: &[Word], k: usize, to: usize) -> bool {
    k + 2 == to
        && words[k].dot
        && words[k + 1].gap == Gap::Space
        && words[k + 1].strong()
        && words[k + 1].is(flag::SURNAME)
        && !words[k + 1].is(flag::GIVEN | flag::PLACE)
}

/// `Morgan Stanley`, `Goldman Sachs`, `Ernst & Young`: words of a firm the
/// lists name (`world/firms.txt`, in the lexicon as [`flag::FIRM`]) that
/// stand together from the run's first word, or across an `&` beside it,
/// and reach the run's end (`to`), name the firm (`Louis Vuitton
/// Malletier` is a name: a word past the firm's may be a surname). Only words all flagged so are put together and looked up (rare:
/// no cost for most runs).
pub(super) fn firm(text: &str, words: &[Word], from: usize, to: usize) -> bool {
    if !words[from].is(flag::FIRM) {
        return false;
    }
    let joined = |k: usize| words[k].gap == Gap::Space || words[k].amp_before;
    let mut a = from;
    while a > 0 && joined(a) && words[a - 1].is(flag::FIRM) {
        a -= 1;
    }
    let mut b = from + 1;
    while b < words.len() && joined(b) && words[b].is(flag::FIRM) {
        b += 1;
    }
    b - a >= 2 && b >= to && super::lexicon::lexicon().is_firm(text, &words[a..b])
}

/// Keys of tool calls' JSON and form fields whose value is a place, a
/// firm or a thing (split at spaces: one string costs the filter less than
/// a slice).
pub(super) const PLACE_LABELS: &str = "city ciudad citta città stadt ort ville cidade town localita località localidad localidade localité naturalidade birthplace comune municipio município gemeinde region regione região provincia província country pais país paese land pays company empresa azienda firma entreprise societe société account organization organisation organización unternehmen street calle strasse straße rue rua address direccion dirección indirizzo adresse endereco endereço location destination employer team club hotel venue airport brand product";

/// `"ciudad": "Santiago"`, `"company": "Morgan Stanley"`: a run right
/// after such a key and its colon (as [`labelled`] reads one) is a place's
/// or a firm's name.
pub(super) fn place_labelled(text: &str, words: &[Word], from: usize) -> bool {
    let Some(label) = from.checked_sub(1).map(|k| &words[k]) else {
        return false;
    };
    let key = &text[label.start..label.end];
    let between = &text[label.end..words[from].start];
    let is_place_label = || PLACE_LABELS.split(' ').any(|l| l.eq_ignore_ascii_case(key));
    // `"ciudad": "Santiago"`: a JSON key in lower case.
    let json_key = label.case == Case::Lower
        && words[from].gap == Gap::Break
        && (3..=6).contains(&between.len())
        && between.contains(':');
    // `Company: Hamilton & Clarke LLP`, `Empresa: Souza Cruz.`: a form's
    // field in any case, unless its value starts with a given name the lists
    // know as nothing else and not as a firm's word (`Firma: Juan Pérez`
    // signs in Spanish; `Account: Morgan Stanley Wealth` is a firm).
    let form_field = !label.glued
        && matches!(between, ": " | " : " | ":\u{a0}")
        && !(words[from].strong() && words[from].is(flag::GIVEN) && !words[from].is(flag::FIRM));
    (json_key || form_field) && is_place_label()
}

/// Nouns named after a person by a particle (`syndrome de Gilles de la
/// Tourette`, `teorema di Pitagora`, `doença de Chagas`, `musée de
/// Rodin`): the run after one and its particle is the eponym, no person.
/// In lower case, as written (the comparison ignores case).
pub(super) const EPONYM_HEADS: &str = "syndrome síndrome sindrome syndrom maladie enfermedad malattia morbo doença doenca disease théorème teorema theorem loi ley legge lei law effet efecto effetto efeito principe principio princípio prix premio prêmio prémio museo musée museu teatro théâtre marché mercado mercato aeroporto aeropuerto aéroport stazione estación gare fondation fundación fundação fondazione";

/// Words of a street corner: the run after one and a particle is a
/// street (`esquina con Lope de Vega`, `angolo con Mazzini`, `corner of
/// Franklin`, `Ecke zur Goethe`).
const CORNERS: &str = "esquina angolo corner ecke angle";

/// Particles of origin and of direction in a route (`de Santiago a
/// Valparaíso`, `from Jackson to Charlotte`, `von Rosenheim nach`).
const FROM: &str = "from de da von desde";

/// `ir de Santiago a Valparaíso`: a name the lists also know as a place,
/// alone between a particle of [`FROM`] and one of [`TOWARD`] followed by
/// a capitalised word, is a route's start.
pub(super) fn between_from_and_to(text: &str, words: &[Word], from: usize) -> bool {
    let w = &words[from];
    let (Some(before), Some(to), Some(next)) = (
        from.checked_sub(1).map(|k| &words[k]),
        words.get(from + 1),
        words.get(from + 2),
    ) else {
        return false;
    };
    let written = |w: &Word| &text[w.start..w.end];
    w.is(flag::PLACE)
        && w.gap == Gap::Space
        && to.gap == Gap::Space
        && next.gap == Gap::Space
        && next.case != Case::Lower
        && FROM.split(' ').any(|f| f == written(before))
        && TOWARD.split(' ').any(|t| t == written(to))
}

/// Nouns whose complement after a particle is a person (`the life of
/// Churchill`, `la biografía de Cervantes`, `das Leben von Bismarck`, `les
/// pièces de Molière`): a capitalised run after one and its particle is a
/// person, even a lone surname the lists know as a street's or a city's.
/// In lower case, as written (the comparison ignores case).
/// (Not `works`, `obra`: `works at Morgan`, `a obra em Vila Nova`.)
pub(super) const PERSON_HEADS: &str = "life biography poems novels paintings quotes vida biografía biografia poemas novelas cuadros vita opere poesie romanzi quadri leben biografie werke gedichte romane vie biographie œuvre oeuvre œuvres oeuvres poèmes romans tableaux pièces romances quadros";

/// Particles of whose (`of`, `de`, `von`): after a [`PERSON_HEADS`] word,
/// only these lead to the person (`la vida en Madrid` is a place's).
const OF: &str = "of de di von des da do du del della dello dei degli dos das";

/// Whether a particle of [`OF`] stands right before `words[from]`, and one
/// of [`PERSON_HEADS`] right before it.
pub(super) fn after_person_head(text: &str, words: &[Word], from: usize) -> bool {
    let of = from.checked_sub(1).is_some_and(|k| {
        let written = &text[words[k].start..words[k].end];
        OF.split(' ').any(|p| p == written)
    });
    of && head_before_particle(text, words, from, PERSON_HEADS)
}

/// Whether a lower-case particle (`de`, `di`, `da`, `of`) stands right
/// before `words[from]`, and one of [`EPONYM_HEADS`] right before it.
/// (The head is not read as a word: the text before the particle is.)
pub(super) fn after_eponym_head(text: &str, words: &[Word], from: usize) -> bool {
    head_before_particle(text, words, from, EPONYM_HEADS)
}

/// Whether a lower-case particle or determiner stands right before
/// `words[from]`, and a word of `heads` right before it.
fn head_before_particle(text: &str, words: &[Word], from: usize, heads: &str) -> bool {
    let Some(particle) = from.checked_sub(1).map(|k| &words[k]) else {
        return false;
    };
    if particle.case != Case::Lower
        || !particle.is(flag::PARTICLE | flag::DETERMINER)
        || words[from].gap != Gap::Space
    {
        return false;
    }
    let before = text[..particle.start].trim_end_matches(' ');
    let head = before
        .rsplit(|c: char| !c.is_alphabetic())
        .next()
        .unwrap_or("");
    !head.is_empty()
        && heads
            .split(' ')
            .any(|h| h.chars().eq(head.chars().flat_map(char::to_lowercase)))
}

/// `Li Na Chen`, `Nguyen Thi Lan`: a short part of an East Asian name in
/// title case that is also a function word (`Na`, Portuguese `in the`),
/// between two names the lists know and mid-sentence, joins the run.
pub(super) fn short_part_between_names(words: &[Word], k: usize, from: usize, to: usize) -> bool {
    let w = &words[k];
    k > from
        && k + 1 < to
        && w.case == Case::Title
        && w.end - w.start <= 3
        && !w.sentence_start
        && words[k - 1].known()
        && words[k + 1].known()
        && words[k + 1].gap == Gap::Space
}

/// Whether `w`, beside a run, is a place word that makes it a place: not
/// a lower-case word of one or two letters, which is a function word
/// (`Giulia se ne occupa`, `se Maria ligar`: the `se` that folds like the
/// cathedral `Sé`).
pub(super) fn place_word(text: &str, w: &Word) -> bool {
    w.is(flag::PLACE) && !(w.case == Case::Lower && text[w.start..w.end].chars().nth(2).is_none())
}

/// `all'aeroporto`, `l'hôpital`, `dall'Istituto`: a word whose part after
/// an elided article (up to four letters and `'` or `’`) is a place word.
/// Looked up only for words with an apostrophe beside a run (rare).
pub(super) fn elided_place(text: &str, w: &Word) -> bool {
    let word = &text[w.start..w.end];
    let Some(at) = word
        .char_indices()
        .take(5)
        .find(|&(_, c)| c == '\'' || c == '’')
        .map(|(at, c)| at + c.len_utf8())
    else {
        return false;
    };
    let head = &word[at..];
    head.len() >= 3 && super::lexicon::lexicon().flags(&super::fold::fold(head)) & flag::PLACE != 0
}

/// Heads that, after a name and `'s`, make it an eponym (`Moore's law`,
/// `Crohn's disease`, `Occam's razor`).
const POSSESSIVE_EPONYM_HEADS: &str =
    "law laws disease syndrome theorem principle paradox razor constant equation effect rule";

/// The word that `'s ` (or `’s `) right after `w` leads to (`law` in
/// `Moore's law`); None when no possessive follows, or nothing alphabetic
/// after it.
pub(super) fn head_after_possessive<'t>(text: &'t str, w: &Word) -> Option<&'t str> {
    let rest = &text[w.end..];
    let rest = rest
        .strip_prefix("'s ")
        .or_else(|| rest.strip_prefix("’s "))?;
    rest.split(|c: char| !c.is_alphabetic())
        .next()
        .filter(|head| !head.is_empty())
}

/// Whether `'s` (or `’s`) and one of [`POSSESSIVE_EPONYM_HEADS`] follow `w`.
pub(super) fn possessive_eponym(text: &str, w: &Word) -> bool {
    head_after_possessive(text, w).is_some_and(|head| {
        POSSESSIVE_EPONYM_HEADS
            .split(' ')
            .any(|h| h.eq_ignore_ascii_case(head))
    })
}

/// What the lists say `words[k]`, the word before a run, is: its flags,
/// or, for a long lower-case word that ended the window before (after a
/// capitalised word or a particle: the reader reads it without a look-up,
/// [`super::words::MAX_PARTICLE_BYTES`]), a look-up now. Words read as a
/// window's context were looked up already: most runs cost nothing more.
pub(super) fn late_flags(text: &str, words: &[Word], k: usize) -> u16 {
    let w = &words[k];
    let ended_a_window = k > 0 && {
        let before = &words[k - 1];
        before.case != Case::Lower || before.is(flag::PARTICLE)
    };
    if !ended_a_window
        || w.flags != 0
        || w.case != Case::Lower
        || w.glued
        || w.end - w.start <= super::words::MAX_PARTICLE_BYTES
    {
        return w.flags;
    }
    super::lexicon::lexicon().flags(&super::fold::fold(&text[w.start..w.end]))
}
