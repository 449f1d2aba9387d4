//! Person names in English, Spanish, Italian, German, French and
//! Portuguese, found by rules over word lists ([`lexicon`]), not by a
//! model: fast enough to run over every text a request carries.
//!
//! A name is a run of capitalised words (initials, hyphens, apostrophes,
//! lower-case particles such as `de la` or `van der` between them) that
//! holds a known given name or surname, or follows a title (`Dr.`,
//! `Sig.ra`, `Frau`). A name that is also a common word (`Will`, `Rosa`)
//! needs a title, a greeting or a second name part beside it. A run next
//! to a place or organisation word (`Via Garibaldi`, `Ferrari S.p.A.`) is
//! not a person, and so is a lone name beside `&` (`Marks & Spencer`).
//! `Rossi, Mario` and `Moreno Pérez, Ana Belén` are one name, and so are
//! `FOFANA Ibrahima` (a surname in capitals first) and `Jordi Puig i
//! Ferrer` (surnames joined by `i`, `e`, `y`). After a cue
//! (`my name is`, `me llamo`, `ich heiße`, a title in lower case, `mme`)
//! the next words are a name even in lower case; after a common word
//! such as `between`, `entre`, `pro` only a lower-case given name the
//! lists know as nothing else is. A name alone on its line
//! under one ending in a comma is a sign-off. Titles, greetings and
//! possessive endings are left out of the span.

mod between;
mod cues;
mod fold;
mod lexicon;
mod rules;
mod swar;
mod things;
mod words;

use super::Finding;
use cues::{cue_index, cue_matches, cued};
use lexicon::flag;
use rules::runs;
use std::collections::HashSet;
use words::{read_words, Capitals};

/// Words the operator never wants masked as a name (a company or product
/// called like a person), folded.
#[derive(Clone, Debug, Default)]
pub(crate) struct NeverMask {
    words: HashSet<String>,
}

impl NeverMask {
    /// Builds the set from configured entries; an entry of several words
    /// keeps each of them out of names.
    pub(crate) fn new(entries: &[String]) -> Self {
        let mut words = HashSet::new();
        for entry in entries {
            for word in entry.split_whitespace() {
                words.insert(fold::fold(word));
            }
        }
        NeverMask { words }
    }

    fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    fn contains(&self, folded: &str) -> bool {
        !self.words.is_empty() && self.words.contains(folded)
    }
}

/// The case shape of a word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Case {
    /// `Marco`, `McDonald`, `O'Brien`, `d'Artagnan`.
    Title,
    /// `ROSSI` (two letters or more, no lower case).
    Upper,
    /// `J` (one upper-case letter).
    Initial,
    Lower,
}

/// What separates a word from the one before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Gap {
    /// Up to two spaces (any Unicode space but a line break), or a hyphen
    /// after an initial's dot.
    Space,
    /// A comma and spaces.
    Comma,
    /// Anything else: a line break, other punctuation, the text's start.
    Break,
}

#[derive(Clone, Copy, Debug)]
struct Word {
    start: usize,
    /// End of the name part (a possessive `'s` is left out).
    end: usize,
    /// Followed at once by a `.` (an initial, a title).
    dot: bool,
    case: Case,
    gap: Gap,
    /// First word of a sentence (after `.`, `!`, `?`, `:` or a line break).
    sentence_start: bool,
    /// A lower-case article, determiner or preposition ([`rules::DETERMINERS`]).
    determiner: bool,
    /// A colon stands just before it (`Acciones: Echeverría enviará`).
    after_colon: bool,
    /// What separates it from the word before is only spaces, line breaks,
    /// commas and dashes (a sign-off under its greeting).
    soft_break: bool,
    /// Starts a line.
    line_start: bool,
    /// Starts a line under one that ends with a comma (`Un abrazo,\nRosario`):
    /// a sign-off's name.
    under_comma: bool,
    /// An `&` stands between it and the word before (`Marks & Spencer`).
    amp_before: bool,
    /// A lower-case `and` of the six languages (`Rosario y Tomás`).
    conjunction: bool,
    /// Touches a digit, a letter run cut by a non-word char, or a char of
    /// identifiers and base64 (`_ + / =`): part of a token, not a name
    /// (a signature's `…9Anna3…` is not Anna).
    glued: bool,
    flags: u16,
}

impl Word {
    fn known(&self) -> bool {
        self.flags & (flag::GIVEN | flag::SURNAME) != 0
    }

    fn strong(&self) -> bool {
        self.known() && self.flags & (flag::AMBIGUOUS | flag::NOT_NAME) == 0
    }

    fn is(&self, bits: u16) -> bool {
        self.flags & bits != 0
    }

    /// Can stand in a capitalised run.
    fn name_like(&self) -> bool {
        if self.glued {
            return false;
        }
        match self.case {
            Case::Title | Case::Initial => true,
            // All capitals: only a known name (else an acronym: `CEO`).
            Case::Upper => self.known() || self.is(flag::TITLE | flag::PARTICLE),
            Case::Lower => false,
        }
    }
}

/// Builds the lists now (they are otherwise built on the first text).
pub(crate) fn warm_up() {
    let _ = cue_index();
}

/// Appends the person names in `text` to `out` (unsorted, may overlap:
/// the caller resolves).
pub(crate) fn find(text: &str, never: &NeverMask, out: &mut Vec<Finding>) {
    // Most texts a request carries are keys, roles, ids and lower-case
    // prose: no capital and no cue, nothing to read (and no buffer
    // allocated: the cues' stays empty).
    let mut capitals = Capitals::new();
    let mut cues = Vec::new();
    if text.len() >= 3 {
        cue_matches(text, &mut cues);
    }
    if capitals.at_or_after(text, 0).is_none() && cues.is_empty() {
        return;
    }
    // A window holds three words or so: no regrowth for most texts.
    let mut words = Vec::with_capacity(16);
    let mut folded = String::new();
    read_words(text, &cues, &mut capitals, never, &mut folded, &mut words);
    if words.is_empty() {
        return;
    }
    runs(text, &words, out);
    cued(text, &cues, &words, out);
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod context_tests;
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests;
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod things_tests;
