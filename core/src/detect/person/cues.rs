//! Cue phrases (`my name is`, `me llamo`, a title in lower case): where
//! they stand in a text, and the names after them.

use super::lexicon::{flag, lexicon};
use super::rules::label_field;
use super::swar::{load_block, zero_bytes};
use super::{Case, Finding, Gap, Word};
use crate::kind::Kind;
use std::collections::HashMap;
use std::sync::OnceLock;

/// Cue phrases, by their first four bytes: a small bit set says where one
/// may start (one test per space in the text), an open-addressing table
/// of the keys gives the phrases that start so, compared byte by byte
/// (ASCII case-insensitive). (They replace an 8 KB bit set and a binary
/// search over the sorted keys: the same answers, fewer branches.)
pub(super) struct CueIndex {
    /// A bit per [`start_bit`] of every key: most probes (after a space,
    /// four bytes that start no phrase) stop at a clear bit, a branch
    /// that is almost never taken (the table's slots alone, about a third
    /// of them full, sent a probe either way: mispredicted branches).
    starts: Box<[u64; START_BITS / 64]>,
    /// Every phrase's key at its slot ([`key_slot`], then the next free
    /// one); [`EMPTY`] elsewhere. A power of two of slots, at least twice
    /// as many as keys: 1,024 slots (4 KB) for the lists' 358 keys.
    slots: Box<[u32]>,
    /// Per slot of `slots` holding a key, the index of its phrases in
    /// `phrases`.
    group_of: Box<[u16]>,
    /// `32 - log2(slots.len())`: the shift of [`key_slot`].
    shift: u32,
    /// Per key, the phrases that start with it.
    phrases: Box<[Box<[CuePhrase]>]>,
}

/// Bits of [`CueIndex::starts`]: 2 KB, over forty times as many bits as
/// keys (a key that starts no phrase finds a set bit about once in fifty).
const START_BITS: usize = 1 << 14;

/// The bit of `key` in [`CueIndex::starts`]: the top bits of a
/// multiplicative hash (another than [`key_slot`]'s).
fn start_bit(key: u32) -> usize {
    (key.wrapping_mul(0x85eb_ca6b) >> (32 - START_BITS.trailing_zeros())) as usize
}

/// The fewest slots of the key table.
const MIN_KEY_SLOTS: usize = 1024;

/// An empty slot: no key is zero (every key has the 0x20 bit of each byte
/// set, [`start_key`]).
const EMPTY: u32 = 0;

/// The first slot probed for `key` in a table of `2^(32 - shift)` slots:
/// the top bits of a multiplicative hash.
fn key_slot(key: u32, shift: u32) -> usize {
    (key.wrapping_mul(0x9e37_79b1) >> shift) as usize
}

/// A cue phrase in lower case, and what it takes.
pub(super) struct CuePhrase {
    bytes: Box<[u8]>,
    strength: CueStrength,
    /// Its first eight bytes (fewer: zeros after) with the 0x20 bit of each
    /// set, and the mask of its bytes among them: a text whose eight bytes
    /// `| 0x20` differ under the mask cannot match (ASCII lower case changes
    /// that bit only), one test before the bytes are compared.
    head: u64,
    mask: u64,
}

/// The 0x20 bit of every byte.
const CASE_BITS: u64 = 0x2020_2020_2020_2020;

impl CuePhrase {
    fn new(bytes: Box<[u8]>, strength: CueStrength) -> Self {
        let n = bytes.len().min(8);
        let mask = if n == 0 { 0 } else { u64::MAX >> (64 - 8 * n) };
        let head = (load_block(&bytes, 0) | CASE_BITS) & mask;
        CuePhrase {
            bytes,
            strength,
            head,
            mask,
        }
    }
}

/// What the words after a cue phrase must be.
#[derive(Clone, Copy)]
pub(super) struct CueStrength {
    /// Only names the lists know.
    weak: bool,
    /// Only a lower-case given name the lists know as nothing else (a
    /// `# lower` cue, or a phrase that ends in one). Known when the index is
    /// built, not looked up per cue: `tell me` stands in much prose.
    lower: bool,
}

/// Four bytes as a key, ASCII letters in lower case (other bytes change
/// alike on both sides, which is all a prefilter needs).
pub(super) fn start_key(four: [u8; 4]) -> u32 {
    u32::from_le_bytes(four) | 0x2020_2020
}

impl CueIndex {
    /// The longest phrase written at `at` (its end, and whether it is
    /// weak), or `None`. Called after every space: the probe of one slot
    /// is all most calls do.
    #[cfg(test)]
    fn at(&self, bytes: &[u8], at: usize) -> Option<(usize, CueStrength)> {
        let group = self.group_at(bytes, at)?;
        self.phrase_at(bytes, at, group)
    }

    /// The index in `phrases` of the phrases whose key the four bytes at
    /// `at` are, if any (the probe alone: the scan of [`cue_matches`]
    /// makes it after every space, in line).
    #[inline(always)]
    fn group_at(&self, bytes: &[u8], at: usize) -> Option<usize> {
        let &[a, b, c, d] = bytes.get(at..at + 4)? else {
            return None;
        };
        self.group(start_key([a, b, c, d]))
    }

    /// The index in `phrases` of the phrases that start with `key`.
    #[inline(always)]
    fn group(&self, key: u32) -> Option<usize> {
        let bit = start_bit(key);
        if self.starts[bit / 64] & (1 << (bit % 64)) == 0 {
            return None;
        }
        let last = self.slots.len() - 1;
        let mut slot = key_slot(key, self.shift);
        loop {
            let held = *self.slots.get(slot)?;
            if held == key {
                return self.group_of.get(slot).map(|&g| usize::from(g));
            }
            if held == EMPTY {
                return None;
            }
            slot = (slot + 1) & last;
        }
    }

    /// The longest phrase of `phrases[group]` written at `at` (of equal
    /// ones, the last listed).
    #[inline(never)]
    fn phrase_at(&self, bytes: &[u8], at: usize, group: usize) -> Option<(usize, CueStrength)> {
        let rest = bytes.get(at..)?;
        let head = load_block(rest, 0) | CASE_BITS;
        let mut best: Option<&CuePhrase> = None;
        for phrase in self.phrases.get(group)?.iter() {
            let matches = head & phrase.mask == phrase.head
                && rest.len() >= phrase.bytes.len()
                && rest
                    .iter()
                    .zip(phrase.bytes.iter())
                    .all(|(b, p)| b.to_ascii_lowercase() == *p);
            if matches && best.is_none_or(|b| phrase.bytes.len() >= b.bytes.len()) {
                best = Some(phrase);
            }
        }
        best.map(|phrase| (at + phrase.bytes.len(), phrase.strength))
    }

    /// [`Self::at`], with the strength as (weak, lower).
    #[cfg(test)]
    pub(super) fn at_for_tests(&self, bytes: &[u8], at: usize) -> Option<(usize, bool, bool)> {
        self.at(bytes, at)
            .map(|(end, strength)| (end, strength.weak, strength.lower))
    }

    /// Every phrase's bytes and strength, in the index's order (the tests
    /// compare the index with a scan of them all).
    #[cfg(test)]
    pub(super) fn all_phrases(&self) -> Vec<(&[u8], bool, bool)> {
        self.phrases
            .iter()
            .flat_map(|group| group.iter())
            .map(|p| (&p.bytes[..], p.strength.weak, p.strength.lower))
            .collect()
    }
}

pub(super) fn cue_index() -> &'static CueIndex {
    static CUES: OnceLock<CueIndex> = OnceLock::new();
    CUES.get_or_init(|| {
        let mut by_key: HashMap<u32, Vec<CuePhrase>> = HashMap::new();
        let lower_cues: Vec<Box<[u8]>> = lexicon()
            .lower_cues
            .iter()
            .map(|l| l.bytes().map(|b| b.to_ascii_lowercase()).collect())
            .collect();
        // Phrases shorter than three bytes (`es`) would start everywhere.
        for (cue, weak) in lexicon().cues.iter().filter(|(c, _)| c.len() >= 3) {
            let mut four = [b' '; 4];
            for (slot, b) in four.iter_mut().zip(cue.bytes()) {
                *slot = b;
            }
            let key = start_key(four);
            let phrase: Box<[u8]> = cue.bytes().map(|b| b.to_ascii_lowercase()).collect();
            let lower = *weak && lower_cues.iter().any(|l| ends_with_phrase(&phrase, l));
            let strength = CueStrength { weak: *weak, lower };
            by_key
                .entry(key)
                .or_default()
                .push(CuePhrase::new(phrase, strength));
        }
        let mut by_key: Vec<(u32, Vec<CuePhrase>)> = by_key.into_iter().collect();
        crate::sort::sort_by_key(&mut by_key, |(key, _)| *key);
        let size = (2 * by_key.len()).next_power_of_two().max(MIN_KEY_SLOTS);
        let shift = 32 - size.trailing_zeros();
        let mut slots = vec![EMPTY; size].into_boxed_slice();
        let mut group_of = vec![0u16; size].into_boxed_slice();
        let mut starts = Box::new([0u64; START_BITS / 64]);
        for (group, (key, _)) in by_key.iter().enumerate() {
            let bit = start_bit(*key);
            starts[bit / 64] |= 1 << (bit % 64);
            let mut slot = key_slot(*key, shift);
            while slots[slot] != EMPTY {
                slot = (slot + 1) & (size - 1);
            }
            slots[slot] = *key;
            // (Fewer groups than `u16::MAX`: the lists hold hundreds.)
            group_of[slot] = u16::try_from(group).unwrap_or(u16::MAX);
        }
        let phrases = by_key
            .into_iter()
            .map(|(_, phrases)| phrases.into_boxed_slice())
            .collect();
        CueIndex {
            starts,
            slots,
            group_of,
            shift,
            phrases,
        }
    })
}

/// A cue phrase found in a text: where it ends, and whether it is weak.
#[derive(Clone, Copy)]
pub(super) struct Cue {
    pub(super) end: usize,
    pub(super) weak: bool,
    /// A `# lower` cue ends here ([`CueStrength::lower`]).
    pub(super) lower: bool,
}

/// The cue phrases of `text` that stand as whole words, by position, into
/// `cues` (empty: the caller clears it). A phrase is looked for at the
/// text's start and after each space or line break whose next four bytes
/// start some phrase.
pub(super) fn cue_matches(text: &str, cues: &mut Vec<Cue>) {
    let index = cue_index();
    let bytes = text.as_bytes();
    let mut check = |at: usize, group: usize| {
        let Some((end, strength)) = index.phrase_at(bytes, at, group) else {
            return;
        };
        let after_ok = text
            .get(end..)
            .and_then(|rest| rest.chars().next())
            .is_some_and(|c| !c.is_alphanumeric());
        if after_ok && cues.last().is_none_or(|c: &Cue| c.end <= at) {
            cues.push(Cue {
                end,
                weak: strength.weak,
                lower: strength.lower,
            });
        }
    };
    if let Some(group) = index.group_at(bytes, 0) {
        check(0, group);
    }
    const SPACES: u64 = 0x2020_2020_2020_2020;
    const BREAKS: u64 = 0x0a0a_0a0a_0a0a_0a0a;
    let mut block_start = 0;
    while block_start < bytes.len() {
        let end = (block_start + 8).min(bytes.len());
        let x = load_block(bytes, block_start);
        let mut hits = zero_bytes(x ^ SPACES) | zero_bytes(x ^ BREAKS);
        while hits != 0 {
            let at = block_start + (hits.trailing_zeros() / 8) as usize + 1;
            hits &= hits - 1;
            if at < end + 1 {
                if let Some(group) = index.group_at(bytes, at) {
                    check(at, group);
                }
            }
        }
        block_start = end;
    }
}

/// Whether `phrase` is `cue` or ends in it after a space (both in lower
/// case): a `# lower` cue at the end of a longer phrase still takes only
/// a lower-case given name.
pub(super) fn ends_with_phrase(phrase: &[u8], cue: &[u8]) -> bool {
    phrase.ends_with(cue)
        && (phrase.len() == cue.len() || phrase[phrase.len() - cue.len() - 1] == b' ')
}

/// Names after a cue phrase, whatever their case: up to three words
/// (strong cues take words the lists do not know; weak ones only known
/// names).
pub(super) fn cued(text: &str, cues: &[Cue], words: &[Word], out: &mut Vec<Finding>) {
    for cue in cues {
        let mut first = words.partition_point(|w| w.start < cue.end);
        let mut from = cue.end;
        // `aqui é o gustavo`, `ich bin der niklas`: an article, then a
        // name the lists know.
        if let (Some(article), Some(next)) = (words.get(first), words.get(first + 1)) {
            if article.determiner
                && text[cue.end..article.start].trim_start().is_empty()
                && next.gap == Gap::Space
                && next.known()
                && !next.is(flag::NOT_NAME | flag::PARTICLE | flag::DETERMINER)
            {
                first += 1;
                from = article.end;
            }
        }
        // `Nome: Sr. António Fontes`: a capitalised title, then the name,
        // is the runs' to judge (the title left out).
        if words
            .get(first)
            .is_some_and(|w| w.is(flag::TITLE) && w.case != Case::Lower && from == cue.end)
        {
            continue;
        }
        let lower_only = cue.lower; // a `# lower` cue is weak too
        let mut taken = 0;
        let mut end = 0;
        let mut capitalised = false;
        for (k, w) in words[first..].iter().enumerate() {
            if k == 0
                && !text[from..w.start]
                    .trim_start_matches([' ', ',', ':', '"'])
                    .is_empty()
            {
                break;
            }
            if k > 0 && w.gap != Gap::Space {
                break;
            }
            // A capitalised name after a title is the runs' to judge; a
            // title cue is for names in lower case (`mme chantal roux`).
            if k == 0 && w.case != Case::Lower && first > 0 && words[first - 1].is(flag::TITLE) {
                break;
            }
            // (`me llamo maría del pilar`: `del` is a particle too.)
            let not_name = w.is(flag::NOT_NAME) && !w.known() && !w.is(flag::PARTICLE);
            if w.glued || not_name || w.is(flag::PLACE) {
                break;
            }
            // `c'est son associé`: a determiner is no name.
            if w.determiner && !w.is(flag::PARTICLE) {
                break;
            }
            let ok = if lower_only {
                w.case == Case::Lower
                    && (w.strong() && w.is(flag::GIVEN) || taken > 0 && w.known())
                    // `ask max 3 questions`, `mit max. 2 Koffern`: a quantity.
                    && !quantity_after(text, w.end)
            } else if cue.weak {
                w.known()
            } else {
                w.known() || taken == 0 || w.is(flag::PARTICLE)
            };
            // After a capitalised name, a lower-case word is prose (`Mrs.
            // Doyle will call`), unless a particle.
            let prose = taken > 0 && capitalised && w.case == Case::Lower && !w.is(flag::PARTICLE);
            if !ok || taken == 3 || prose {
                break;
            }
            capitalised |= w.case != Case::Lower;
            taken += 1;
            // A name does not end on a particle (`je suis Mamadou Koné de
            // la société`).
            if !(w.case == Case::Lower && w.is(flag::PARTICLE)) {
                end = w.end;
            }
        }
        if taken == 1 && cue.weak && !lower_only {
            end = end.max(surname_after_title(text, words, first));
        }
        // `a reply to tobias whitfield?`: a lower cue's given name, then one
        // unknown word that ends the clause, as after a title.
        if taken == 1 && lower_only {
            end = end.max(surname_ending_clause(text, words, first));
        }
        if taken > 0 && !lower_only && text[..cue.end].ends_with(':') {
            if let Some(field_end) = label_field(text, words, first) {
                end = end.max(field_end);
            }
            if let Some(given_end) = given_after_comma_in_value(text, words, first + taken) {
                end = end.max(given_end);
            }
        }
        // `Kunde: Bosch Rexroth AG`, `Client : Lacoste SA`: a known name
        // whose capitalised words go on to a firm's word is the firm's.
        if taken > 0 && cue.weak && capitalised && firm_after(words, first + taken) {
            continue;
        }
        if taken > 0 && end > words[first].start {
            let start = words[first].start;
            out.push(Finding::new(Kind::Name, start, end));
            // `tell oksana and tariq`, `dis à théo et à clémence`: the
            // lower-case given name after `and` is the cue's too.
            if lower_only {
                if let Some(next) = name_after_and(text, words, first + taken) {
                    out.push(Finding::new(Kind::Name, next.start, next.end));
                }
            }
        }
    }
}

/// `"nombre": "quintero, marta"`, `"kundenname": "schulze, dörte"`: a
/// label's value written surname first (the cue took it, ending at
/// `words[at]`), then a comma and one or two given names the lists know
/// that end the value (a quote, a line's or the text's end); where they
/// end.
pub(super) fn given_after_comma_in_value(text: &str, words: &[Word], at: usize) -> Option<usize> {
    let surname = words.get(at.checked_sub(1)?)?;
    let first = words.get(at)?;
    let fits = |w: &Word| w.is(flag::GIVEN) && !w.glued && !w.is(flag::PLACE | flag::NOT_NAME);
    if !surname.is(flag::SURNAME) || first.gap != Gap::Comma || !fits(first) {
        return None;
    }
    let last = match words.get(at + 1) {
        Some(second) if second.gap == Gap::Space && fits(second) => second,
        _ => first,
    };
    let ends_value = text[last.end..]
        .chars()
        .next()
        .is_none_or(|c| matches!(c, '"' | '\\' | '\n' | '\r'));
    ends_value.then_some(last.end)
}

/// Whether the capitalised words from `words[at]` on (over single spaces,
/// up to three) reach a place or firm word (`AG`, `SA`, `Ltda`).
pub(super) fn firm_after(words: &[Word], at: usize) -> bool {
    words
        .iter()
        .skip(at)
        .take(3)
        .take_while(|w| w.gap == Gap::Space && w.case != Case::Lower)
        .any(|w| w.is(flag::PLACE))
}

/// After a name a `# lower` cue took, ending at `words[at]`: `and` (one
/// particle or article may follow it: `e a bia`, `et à clémence`), then a
/// lower-case given name the lists know as nothing else; that word.
pub(super) fn name_after_and<'w>(text: &str, words: &'w [Word], at: usize) -> Option<&'w Word> {
    words
        .get(at)
        .filter(|w| w.conjunction && w.gap == Gap::Space)?;
    let mut k = at + 1;
    let skip = words.get(k).is_some_and(|w| {
        w.gap == Gap::Space && w.case == Case::Lower && w.determiner && !w.known()
    });
    if skip {
        k += 1;
    }
    let w = words.get(k)?;
    let fits = w.gap == Gap::Space
        && w.case == Case::Lower
        && !w.glued
        && w.strong()
        && w.is(flag::GIVEN)
        && !w.is(flag::PLACE | flag::PARTICLE | flag::DETERMINER)
        && !quantity_after(text, w.end);
    fits.then_some(w)
}

/// Whether a number follows the word ending at `end`, after a dot and
/// a space or a space alone (`max 3`, `max. 2`): the word is a quantity's.
pub(super) fn quantity_after(text: &str, end: usize) -> bool {
    let rest = text[end..].strip_prefix('.').unwrap_or(&text[end..]);
    rest.strip_prefix(' ')
        .is_some_and(|r| r.as_bytes().first().is_some_and(u8::is_ascii_digit))
}

/// `anruf von herrn detlef schwanitz,`: after a title in lower case, a
/// given name the lists know, then one lower-case word they do not know
/// that ends the clause ([`surname_ending_clause`]; not the text's end:
/// `herr thomas antwortete`) is her or his surname; where it ends (0:
/// none).
pub(super) fn surname_after_title(text: &str, words: &[Word], first: usize) -> usize {
    let titled = first
        .checked_sub(1)
        .is_some_and(|k| words[k].is(flag::TITLE));
    if titled {
        surname_ending_clause(text, words, first)
    } else {
        0
    }
}

/// After the lower-case given name `words[first]` the lists know, one
/// lower-case word they do not know (three letters or more) that ends the
/// clause (a comma, a semicolon, a dot, `?`, `!`, `)`, a line's end; not the
/// text's) is her or his surname; where it ends (0: none).
pub(super) fn surname_ending_clause(text: &str, words: &[Word], first: usize) -> usize {
    let (Some(given), Some(next)) = (words.get(first), words.get(first + 1)) else {
        return 0;
    };
    let ends_clause = text[next.end..]
        .chars()
        .next()
        .is_some_and(|c| matches!(c, ',' | ';' | '.' | '?' | '!' | ')' | '\n' | '\r'));
    let fits = given.case == Case::Lower
        && given.is(flag::GIVEN)
        && next.gap == Gap::Space
        && next.case == Case::Lower
        && next.flags == 0
        && !next.glued
        && next.end - next.start >= 3
        && ends_clause;
    if fits {
        next.end
    } else {
        0
    }
}
