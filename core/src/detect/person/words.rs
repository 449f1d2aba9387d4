//! Reading words: where the windows around capitals and cues stand, each
//! word's case, gap and list flags.

use super::between::{head_len, Between};
use super::cues::Cue;
use super::fold::fold_into;
use super::lexicon::{self, flag, lexicon};
use super::swar::{
    ascii_letters_end, ascii_lowercase, load_block, load_short, may_hold_capital, zero_bytes,
};
use super::{Case, Gap, NeverMask, Word};

/// The longest particle, in bytes (`della`, `degli`, `dello`).
pub(super) const MAX_PARTICLE_BYTES: usize = 6;

/// Words read after a cue whatever their case.
pub(super) const CUED_WORDS: usize = 4;

/// The words around each capitalised word and after each cue, with their
/// shapes, gaps and list flags; the rest of the text is not read word by
/// word (most of it is lower-case prose). A window starts one word before
/// its capitalised word (a title, a determiner, a greeting, a place word
/// there is evidence) and ends after the first lower-case word that is
/// not a particle.
///
/// `words` is cleared first; its buffer is kept.
/// `capitals` is a cursor over `text` (it may have been asked already).
pub(super) fn read_words(
    text: &str,
    cues: &[Cue],
    capitals: &mut Capitals,
    never: &NeverMask,
    folded: &mut String,
    words: &mut Vec<Word>,
) {
    words.clear();
    let mut reader = Reader {
        text,
        never,
        lexicon: lexicon(),
        words: std::mem::take(words),
        prev_end: 0,
    };
    let mut pos = 0;
    let mut next_cue = 0;
    loop {
        while next_cue < cues.len() && cues[next_cue].end < pos {
            next_cue += 1;
        }
        let capital = capitals.at_or_after(text, pos);
        let cue = cues.get(next_cue).map(|c| c.end);
        let (trigger, mut forced) = match (capital, cue) {
            (None, None) => break,
            (Some(c), Some(q)) if q <= c => (q, CUED_WORDS),
            (Some(c), _) => (c, 0),
            (None, Some(q)) => (q, CUED_WORDS),
        };
        // A `# lower` cue takes only a lower-case given name first.
        let lower_cue = forced > 0 && cues[next_cue].lower;
        if forced > 0 {
            next_cue += 1;
        }
        let mut at = trigger;
        if let Some(before) = word_before(text, trigger) {
            if before >= reader.prev_end && before >= pos {
                at = before;
            }
        }
        while let Some((start, end)) = next_word(text, at) {
            // A long lower-case word after the capitalised one ends the
            // window and is no particle: not looked up.
            // (And a tool call's JSON key, `"nachname": "…"`: a label.)
            // (And a word after a cue this window passed: `{"nome":
            // "rosaria esposito"` in a window that started before it.)
            let looked_up = start < trigger
                || forced > 0
                || end - start <= MAX_PARTICLE_BYTES
                || cues
                    .get(next_cue)
                    .is_some_and(|c| c.end >= trigger && c.end <= start)
                || text[end..].starts_with("\":")
                || text[end..].starts_with("\\\":");
            let word = reader.push(start, end, looked_up, folded);
            at = end + usize::from(word.dot);
            if start < trigger {
                continue; // the word before: context
            }
            if lower_cue
                && forced == CUED_WORDS
                && cannot_follow_lower_cue(&word)
                && reader.rest_of_window_is_void(at, cues.get(next_cue), capitals)
            {
                break;
            }
            if forced > 0 {
                // A cue inside a cue's window (`{"name": "cerca", "arguments":
                // {"nome": "rosaria esposito"`): its words are read in full.
                if cues
                    .get(next_cue)
                    .is_some_and(|c| c.end >= trigger && c.end <= start)
                {
                    next_cue += 1;
                    forced = CUED_WORDS;
                }
                forced -= 1;
                continue;
            }
            if word.case == Case::Lower && !word.is(flag::PARTICLE) {
                // A cue this window passed ends before the word (`Kunde:
                // thomas bauer`): read on as after any cue.
                if cues
                    .get(next_cue)
                    .is_some_and(|c| c.end >= trigger && c.end <= start)
                {
                    next_cue += 1;
                    forced = CUED_WORDS - 1;
                    continue;
                }
                break;
            }
        }
        pos = at.max(trigger + 1);
        if pos >= text.len() {
            break;
        }
        while !text.is_char_boundary(pos) {
            pos += 1;
        }
    }
    *words = reader.words;
}

/// Whether the first word after a `# lower` cue leaves the cue without a
/// name whatever follows ([`super::cues::cued`] takes only a lower-case
/// given name the lists know as nothing else, or one after an article).
fn cannot_follow_lower_cue(word: &Pushed) -> bool {
    let may_be_a_name = word.strong() && word.is(flag::GIVEN);
    word.case == Case::Lower && !word.dot && !word.determiner && !may_be_a_name
}

/// [`read_words`] as it was before a window after a `# lower` cue could end at
/// its first word: the reference the tests compare findings with.
#[cfg(test)]
pub(super) fn words_reference(
    text: &str,
    cues: &[Cue],
    never: &NeverMask,
    folded: &mut String,
) -> Vec<Word> {
    let mut reader = Reader {
        text,
        never,
        lexicon: lexicon(),
        words: Vec::new(),
        prev_end: 0,
    };
    let mut pos = 0;
    let mut next_cue = 0;
    loop {
        while next_cue < cues.len() && cues[next_cue].end < pos {
            next_cue += 1;
        }
        let capital = next_capital(text, pos);
        let cue = cues.get(next_cue).map(|c| c.end);
        let (trigger, mut forced) = match (capital, cue) {
            (None, None) => break,
            (Some(c), Some(q)) if q <= c => (q, CUED_WORDS),
            (Some(c), _) => (c, 0),
            (None, Some(q)) => (q, CUED_WORDS),
        };
        if forced > 0 {
            next_cue += 1;
        }
        let mut at = trigger;
        if let Some(before) = word_before(text, trigger) {
            if before >= reader.prev_end && before >= pos {
                at = before;
            }
        }
        while let Some((start, end)) = next_word(text, at) {
            // A long lower-case word after the capitalised one ends the
            // window and is no particle: not looked up.
            // (And a tool call's JSON key, `"nachname": "…"`: a label.)
            // (And a word after a cue this window passed: `{"nome":
            // "rosaria esposito"` in a window that started before it.)
            let looked_up = start < trigger
                || forced > 0
                || end - start <= MAX_PARTICLE_BYTES
                || cues
                    .get(next_cue)
                    .is_some_and(|c| c.end >= trigger && c.end <= start)
                || text[end..].starts_with("\":")
                || text[end..].starts_with("\\\":");
            let word = reader.push(start, end, looked_up, folded);
            at = end + usize::from(word.dot);
            if start < trigger {
                continue; // the word before: context
            }
            if forced > 0 {
                // A cue inside a cue's window (`{"name": "cerca", "arguments":
                // {"nome": "rosaria esposito"`): its words are read in full.
                if cues
                    .get(next_cue)
                    .is_some_and(|c| c.end >= trigger && c.end <= start)
                {
                    next_cue += 1;
                    forced = CUED_WORDS;
                }
                forced -= 1;
                continue;
            }
            if word.case == Case::Lower && !word.is(flag::PARTICLE) {
                // A cue this window passed ends before the word (`Kunde:
                // thomas bauer`): read on as after any cue.
                if cues
                    .get(next_cue)
                    .is_some_and(|c| c.end >= trigger && c.end <= start)
                {
                    next_cue += 1;
                    forced = CUED_WORDS - 1;
                    continue;
                }
                break;
            }
        }
        pos = at.max(trigger + 1);
        if pos >= text.len() {
            break;
        }
        while !text.is_char_boundary(pos) {
            pos += 1;
        }
    }
    reader.words
}

/// [`next_capital`] with its last answer kept: the reader asks for the
/// next capital after every window, and after a cue's first word, and the
/// answer holds until the reader passes it (whether a byte is a capital
/// that starts a word does not depend on where the scan began), so the
/// text between two capitals is scanned once, not once per window.
pub(super) struct Capitals {
    /// The scan that found `found` began here (`usize::MAX`: no scan yet).
    from: usize,
    found: Option<usize>,
}

impl Capitals {
    pub(super) fn new() -> Self {
        Capitals {
            from: usize::MAX,
            found: None,
        }
    }

    /// `next_capital(text, at)`; `text` is the same on every call.
    pub(super) fn at_or_after(&mut self, text: &str, at: usize) -> Option<usize> {
        let known = self.from <= at && self.found.is_none_or(|c| c >= at);
        if !known {
            self.from = at;
            self.found = next_capital(text, at);
        }
        self.found
    }
}

/// The next upper-case letter at or after `from` that starts a word.
pub(super) fn next_capital(text: &str, from: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = from;
    while i < bytes.len() {
        // Eight bytes at a step while none is a capital or a multibyte
        // lead.
        if i + 8 <= bytes.len() && !may_hold_capital(load_block(bytes, i)) {
            i += 8;
            continue;
        }
        let stop = (i + 8).min(bytes.len());
        while i < stop {
            let b = bytes[i];
            if b.is_ascii_uppercase() {
                if !prev_is_letter(text, i) {
                    return Some(i);
                }
            } else if b >= 0xc3 && text.is_char_boundary(i) {
                // A letter with a diacritic, or another script.
                if let Some(c) = text[i..].chars().next() {
                    if c.is_uppercase() && !prev_is_letter(text, i) {
                        return Some(i);
                    }
                }
            }
            i += 1;
        }
    }
    None
}

pub(super) fn prev_is_letter(text: &str, at: usize) -> bool {
    text[..at]
        .chars()
        .next_back()
        .is_some_and(char::is_alphabetic)
}

/// Where the word before byte `at` starts (at most a few words' bytes
/// back), if there is one.
pub(super) fn word_before(text: &str, at: usize) -> Option<usize> {
    let trimmed = &text[..head_len(text, at)];
    if trimmed.is_empty() || at - trimmed.len() > 8 {
        return None;
    }
    // Back over letters and joiners, a byte at a step while ASCII.
    let bytes = trimmed.as_bytes();
    let mut word_len = trimmed.len();
    while let Some(&b) = bytes[..word_len].last() {
        if b.is_ascii_alphabetic() || matches!(b, b'\'' | b'-' | b'.') {
            word_len -= 1;
            continue;
        }
        if !b.is_ascii() {
            word_len = trimmed[..word_len]
                .trim_end_matches(|c: char| {
                    c.is_alphabetic() || matches!(c, '\'' | '’' | '-' | '.')
                })
                .len();
        }
        break;
    }
    let mut start = word_len;
    // Not from a joiner.
    while start < trimmed.len() && !text[start..].starts_with(|c: char| c.is_alphabetic()) {
        start += text[start..].chars().next().map_or(1, char::len_utf8);
    }
    (start < trimmed.len()).then_some(start)
}

/// The word starting at or after `from`: letters, with `'` or `-`
/// between letters, and `.` then up to three lower-case letters after at
/// most four (`Sig.ra`, `Dott.ssa`); its byte range.
pub(super) fn next_word(text: &str, from: usize) -> Option<(usize, usize)> {
    let start = next_letter(text, from)?;
    let bytes = text.as_bytes();
    let mut at = start;
    let mut end = start;
    loop {
        // ASCII letters, the most of any word, eight bytes at a step; an
        // ASCII byte that is no letter and no joiner ends the word.
        let letters_end = ascii_letters_end(bytes, at);
        if letters_end > at {
            at = letters_end;
            end = at;
        }
        match bytes.get(at) {
            None => break,
            Some(b'\'' | b'-' | b'.') => {}
            Some(b) if b.is_ascii() => break,
            Some(_) => {}
        }
        let Some(c) = text[at..].chars().next() else {
            break;
        };
        if c.is_alphabetic() {
            at += c.len_utf8();
            end = at;
            continue;
        }
        let joiner = matches!(c, '\'' | '’' | '-' | '.');
        let after = &text[at + c.len_utf8()..];
        let next_is_letter = after
            .chars()
            .next()
            .is_some_and(|n| n.is_alphabetic() && (c != '.' || n.is_lowercase()));
        // A dot joins only an abbreviation's short parts (`Sig.ra`,
        // `Dott.ssa`), never a name and a file extension (`Rossi.jsonl`).
        let abbreviation = c != '.'
            || (text[start..at].chars().count() <= 4
                && after.chars().take_while(|n| n.is_alphabetic()).count() <= 3);
        if joiner && next_is_letter && abbreviation {
            at += c.len_utf8();
            continue;
        }
        break;
    }
    Some((start, end))
}

/// The first letter at or after `from`.
pub(super) fn next_letter(text: &str, from: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut at = from;
    while let Some(&b) = bytes.get(at) {
        if b.is_ascii_alphabetic() {
            return Some(at);
        }
        if b >= 0x80
            && text.is_char_boundary(at)
            && text[at..].chars().next().is_some_and(char::is_alphabetic)
        {
            return Some(at);
        }
        at += 1;
    }
    None
}

/// What the window loop reads of a word [`Reader::push`] read, apart from
/// its [`Word`]: a whole `Word` read back right after its bytes were
/// stored stalled every push (the loads waited for the stores, in a
/// profile).
#[derive(Clone, Copy)]
struct Pushed {
    dot: bool,
    case: Case,
    determiner: bool,
    flags: u16,
}

impl Pushed {
    /// As [`Word::is`].
    fn is(&self, bits: u16) -> bool {
        self.flags & bits != 0
    }

    /// As [`Word::strong`].
    fn strong(&self) -> bool {
        self.is(flag::GIVEN | flag::SURNAME) && !self.is(flag::AMBIGUOUS | flag::NOT_NAME)
    }
}

/// Reads words into [`Word`]s, in text order.
pub(super) struct Reader<'a> {
    text: &'a str,
    never: &'a NeverMask,
    lexicon: &'static lexicon::Lexicon,
    words: Vec<Word>,
    /// End of the last word read (its dot included).
    prev_end: usize,
}

impl Reader<'_> {
    /// Reads the word `start..end`; its flags only when `look_up` or it is
    /// not in lower case.
    fn push(&mut self, start: usize, end: usize, look_up: bool, folded: &mut String) -> Pushed {
        let text = self.text;
        let dot = text[end..].starts_with('.');
        let raw = &text[start..end];
        // (An escaped quote after it, `\"Lindemann\"` in a tool call's
        // JSON string, ends the word as a quote does.)
        let glued = char_before(text, start).is_some_and(glues)
            || (char_at(text, end).is_some_and(glues) && !text[end..].starts_with("\\\""));
        // A possessive `'s` is not part of the name.
        let name_end = raw
            .strip_suffix("'s")
            .or_else(|| raw.strip_suffix("’s"))
            .map_or(end, |head| start + head.len());
        let name = &text[start..name_end];
        let case = case_of(name);
        // What separates the word from the one before it in the text
        // (tokenised or not: the text between windows is not read).
        let head = head_len(text, start);
        // (After the dot of an initial or a title: the dot is the word's.)
        let between = &text[head.max(self.prev_end.min(start))..start];
        let facts = Between::of(between);
        let last = self.words.last();
        let gap = if self.prev_end < head || self.words.is_empty() {
            Gap::Break // the word before was not read
        } else {
            gap_of(between, last.is_some_and(|w| w.dot))
        };
        let sentence_start =
            last.is_none() || facts.stop || last.is_some_and(|w| w.dot && w.case != Case::Initial);
        let flags = if case == Case::Lower && !look_up {
            0
        } else {
            self.flags_of(name, dot, folded)
        };
        let determiner = case == Case::Lower && flags & flag::DETERMINER != 0;
        let after_colon = facts.after_colon;
        let soft_break = facts.soft;
        let line_start = facts.newline || start == 0;
        let under_comma = line_start && facts.after_comma;
        let amp_before = facts.amp;
        let conjunction =
            case == Case::Lower && name.len() <= CONJUNCTION_BYTES && CONJUNCTIONS.contains(&name);
        let word = Word {
            start,
            end: name_end,
            dot,
            case,
            gap,
            sentence_start,
            determiner,
            after_colon,
            soft_break,
            line_start,
            under_comma,
            amp_before,
            conjunction,
            glued,
            flags,
        };
        self.words.push(word);
        self.prev_end = end + usize::from(dot);
        Pushed {
            dot,
            case,
            determiner,
            flags,
        }
    }

    /// After a `# lower` cue whose first word cannot start a name (read
    /// up to `from`): whether the rest of its window (three more words,
    /// then particles up to a lower-case word) can be left unread with
    /// every finding the same. It can when that rest holds only lower-case
    /// words, no cue ends in it, and the next window starts with a
    /// lower-case word after an unread word, so that no rule sees the
    /// difference: the next window's first word reads alike (a `Break`
    /// before it either way), and lower-case words that no capital or cue
    /// stands beside start, join and judge no run. `next_cue` is the first
    /// cue after this one.
    fn rest_of_window_is_void(
        &self,
        from: usize,
        next_cue: Option<&Cue>,
        capitals: &mut Capitals,
    ) -> bool {
        let text = self.text;
        let capital = capitals.at_or_after(text, from);
        // Where the whole window would end (`pos` of the loop in `words`).
        let mut at = from;
        let mut forced = CUED_WORDS - 1;
        let mut read = false;
        while let Some((start, end)) = next_word(text, at) {
            if capital.is_some_and(|c| c < end) {
                return false; // a capitalised word in the window
            }
            let dot = text[end..].starts_with('.');
            if dot {
                return false; // the next word's sentence start would differ
            }
            at = end;
            read = true;
            if forced > 0 {
                forced -= 1;
                continue;
            }
            // A long lower-case word ends the window (a short one may be a
            // particle that goes on: not looked up here, the window is read).
            if end - start > MAX_PARTICLE_BYTES {
                break;
            }
            return false;
        }
        if !read {
            return false; // nothing to leave unread
        }
        let window_end = at;
        if next_cue.is_some_and(|c| c.end < window_end) {
            return false;
        }
        // The next window: its trigger, and its first word.
        let trigger = match (capital, next_cue.map(|c| c.end)) {
            (None, None) => return true,
            (Some(c), Some(q)) => c.min(q),
            (Some(c), None) => c,
            (None, Some(q)) => q,
        };
        let before = word_before(text, trigger);
        if before.is_some_and(|b| b >= from && b < window_end) {
            return false; // read as context after the cut only
        }
        let first_at = before.filter(|&b| b >= window_end).unwrap_or(trigger);
        let Some((start, end)) = next_word(text, first_at) else {
            return false;
        };
        // In lower case: no capital starts before its end (the letter that
        // decides a word's case starts it or follows an elision).
        let lower = capital.is_none_or(|c| c >= end);
        lower && head_len(text, start) > window_end
    }

    /// What the lists say `name` is (`folded` is its folded form after,
    /// unless [`Self::short_ascii_flags`] answered).
    fn flags_of(&self, name: &str, dot: bool, folded: &mut String) -> u16 {
        if let Some(flags) = self.short_ascii_flags(name.as_bytes(), dot) {
            return flags;
        }
        self.flags_of_folded(name, dot, folded)
    }

    /// [`Self::flags_of_folded`] for a word of one part, in ASCII, of up
    /// to eight bytes (most words read), when no word is kept from names:
    /// its folded form is its bytes in lower case, looked up as a
    /// [`lexicon::short_key`] built here, with no string. `None`: the
    /// word is not such.
    fn short_ascii_flags(&self, name: &[u8], dot: bool) -> Option<u16> {
        if name.is_empty() || name.len() > 8 || !self.never.is_empty() {
            return None;
        }
        const HIGH: u64 = 0x8080_8080_8080_8080;
        const ONES: u64 = 0x0101_0101_0101_0101;
        let raw = load_short(name);
        // Not ASCII, or a part's joiner (or, rarely, a byte next to one):
        // the general path.
        let joiner = zero_bytes(raw ^ (ONES * u64::from(b'-')))
            | zero_bytes(raw ^ (ONES * u64::from(b'\'')));
        if raw & HIGH != 0 || joiner != 0 {
            return None;
        }
        let key = ascii_lowercase(raw);
        let block = key.to_le_bytes();
        let mut flags = self.lexicon.short_flags(key);
        if dot && flags == 0 {
            // (`folded` and a dot: a key of nine bytes is not short.)
            let with_dot = name.len() < 8;
            if !with_dot {
                return None;
            }
            flags = self
                .lexicon
                .short_flags(key | u64::from(b'.') << (8 * name.len()));
        }
        if flags == 0 {
            let folded = std::str::from_utf8(&block[..name.len()]).ok()?;
            if surname_by_form(folded) {
                flags = flag::SURNAME | flag::AMBIGUOUS;
            }
        }
        Some(flags)
    }

    /// What [`Self::short_ascii_flags`] and [`Self::flags_of_folded`] say
    /// `name` is (the tests compare them).
    #[cfg(test)]
    pub(super) fn flags_both_ways(name: &str, dot: bool, never: &NeverMask) -> (Option<u16>, u16) {
        let reader = Reader {
            text: name,
            never,
            lexicon: lexicon(),
            words: Vec::new(),
            prev_end: 0,
        };
        let mut folded = String::new();
        (
            reader.short_ascii_flags(name.as_bytes(), dot),
            reader.flags_of_folded(name, dot, &mut folded),
        )
    }

    /// What the lists say `name` is, by its folded form (into `folded`).
    fn flags_of_folded(&self, name: &str, dot: bool, folded: &mut String) -> u16 {
        let lexicon = self.lexicon;
        fold_into(name, folded);
        if self.never.contains(folded) {
            return flag::NOT_NAME;
        }
        let mut flags = lexicon.flags(folded);
        if dot && flags == 0 {
            folded.push('.');
            flags = lexicon.flags(folded);
            folded.pop();
        }
        if !folded.bytes().any(|b| matches!(b, b'-' | b'\'')) {
            // One part (most words): the tests of parts below find nothing.
            if flags == 0 && surname_by_form(folded) {
                flags = flag::SURNAME | flag::AMBIGUOUS;
            }
            return flags;
        }
        // `Saint-Étienne`, `Sainte-Maxime`, `Sant'Angelo`: a place.
        if let Some(head) = folded
            .split(['-', '\''])
            .next()
            .filter(|h| h.len() < folded.len())
        {
            if lexicon.flags(head) & flag::SAINT != 0 {
                return flag::PLACE;
            }
        }
        // `l'Ascension`, `l'Alzheimer`, `L'Oréal`: after the elided article
        // of French and Italian stands a noun, a feast, a disease or a
        // brand, not a person (names elide `d'`, `D'Angelo`).
        if folded.starts_with("l'") {
            return flag::NOT_NAME;
        }
        // `Konrad-Adenauer-Allee`, `Jean-Jaurès-Platz`: a street.
        if let Some((_, tail)) = folded.rsplit_once('-') {
            if lexicon.flags(tail) & (flag::PLACE | flag::GIVEN | flag::SURNAME) == flag::PLACE {
                return flag::PLACE;
            }
        }
        if flags & (flag::GIVEN | flag::SURNAME) == 0 {
            // `D'Angelo`, `O'Brien`, `d'Artagnan`: the part after the
            // elision is the name.
            if let Some((_, tail)) = folded.split_once('\'') {
                flags |= lexicon.flags(tail) & (flag::GIVEN | flag::SURNAME);
            }
        }
        if flags & (flag::GIVEN | flag::SURNAME) == 0 && folded.contains('-') {
            // `Jean-Pierre`: known when a part is.
            let parts = folded.split('-').map(|p| lexicon.flags(p));
            flags |= parts.fold(0, |a, f| a | f) & (flag::GIVEN | flag::SURNAME);
        }
        if flags == 0 && surname_by_form(folded) {
            flags = flag::SURNAME | flag::AMBIGUOUS;
        }
        flags
    }
}

/// Endings of surnames of families from eastern and south-eastern Europe,
/// Turkey and Greece that the lists cannot all hold (`Petrović`,
/// `Popescu`, `Worobjowa`, `Kowalewski`, `Yıldızoğlu`, `Papadopoulos`),
/// with the least folded length of a word that ends so. Such a word is a
/// surname that alone needs evidence, like the broad lists' names.
pub(super) const SURNAME_ENDINGS: &[(&str, usize)] = &[
    ("ovic", 6),
    ("evic", 6),
    ("ovich", 7),
    ("evich", 7),
    ("escu", 6),
    ("eanu", 6),
    ("owski", 7),
    ("ewski", 7),
    ("ovski", 7),
    ("evski", 7),
    ("inski", 7),
    ("ynski", 7),
    ("owska", 7),
    ("ewska", 7),
    ("oglu", 6),
    ("opoulos", 9),
    ("enko", 6),
    ("chuk", 6),
    ("shvili", 8),
    ("ova", 7),
    ("owa", 7),
    ("eva", 7),
    ("ov", 6),
    ("ev", 6),
];

/// Whether a folded word the lists do not know has a surname's form: one
/// of [`SURNAME_ENDINGS`], or an Arabic `al-`/`el-` article before a
/// word (`Al-Masri`, `El-Sayed`).
pub(super) fn surname_by_form(folded: &str) -> bool {
    if let Some(rest) = folded
        .strip_prefix("al-")
        .or_else(|| folded.strip_prefix("el-"))
    {
        return rest.len() >= 3 && rest.bytes().all(|b| b.is_ascii_lowercase());
    }
    // Most words read are short or end otherwise: two bytes decide
    // before the list is walked (this runs for every unknown word).
    let tail = folded.as_bytes().get(folded.len().saturating_sub(2)..);
    let may_end_so = folded.len() >= 6
        && matches!(
            tail,
            Some(b"ic" | b"ch" | b"cu" | b"nu" | b"ki" | b"ka" | b"lu" | b"os" | b"ko" | b"uk")
                | Some(b"li" | b"va" | b"wa" | b"ov" | b"ev")
        );
    may_end_so
        && folded.bytes().all(|b| b.is_ascii_lowercase())
        && SURNAME_ENDINGS
            .iter()
            .any(|&(ending, least)| folded.len() >= least && folded.ends_with(ending))
}

/// The char that ends at `at` (an ASCII byte read as is: most are).
fn char_before(text: &str, at: usize) -> Option<char> {
    match text.as_bytes()[..at].last() {
        Some(&b) if b.is_ascii() => Some(char::from(b)),
        _ => text[..at].chars().next_back(),
    }
}

/// The char that starts at `at` (an ASCII byte read as is: most are).
fn char_at(text: &str, at: usize) -> Option<char> {
    match text.as_bytes().get(at) {
        Some(&b) if b.is_ascii() => Some(char::from(b)),
        _ => text[at..].chars().next(),
    }
}

/// `and` in the six languages, between two names of a sign-off.
pub(super) const CONJUNCTIONS: &[&str] = &["and", "y", "e", "i", "und", "et"];

/// The longest of [`CONJUNCTIONS`]: a longer word is none, not compared.
const CONJUNCTION_BYTES: usize = {
    let mut longest = 0;
    let mut i = 0;
    while i < CONJUNCTIONS.len() {
        if CONJUNCTIONS[i].len() > longest {
            longest = CONJUNCTIONS[i].len();
        }
        i += 1;
    }
    longest
};

/// A char that, beside a word, makes it part of a token (an identifier, a
/// number, base64).
pub(super) fn glues(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '+' | '/' | '=' | '\\')
}

pub(super) fn case_of(word: &str) -> Case {
    if word.is_ascii() {
        return case_of_ascii(word.as_bytes());
    }
    // The letter that decides: after an elision in the first bytes
    // (`d'Artagnan`, `O’Brien`).
    let elision = word
        .bytes()
        .take(4)
        .position(|b| b == b'\'' || b == 0xe2)
        .and_then(|at| word[at..].chars().next().map(|c| (at, c)))
        .filter(|&(_, c)| c == '\'' || c == '’');
    let core = match elision {
        Some((at, c)) => &word[at + c.len_utf8()..],
        None => word,
    };
    let mut letters = core.chars().filter(|c| c.is_alphabetic());
    let Some(first) = letters.next() else {
        return Case::Lower;
    };
    if !first.is_uppercase() {
        return Case::Lower;
    }
    let (count, any_lower) = letters.fold((1, false), |(n, lower), c| {
        (n + 1, lower | c.is_lowercase())
    });
    shape(count, any_lower)
}

/// [`case_of`] for an ASCII word (most words read), a byte at a step.
pub(super) fn case_of_ascii(word: &[u8]) -> Case {
    let core = match word.iter().take(4).position(|&b| b == b'\'') {
        Some(at) => &word[at + 1..],
        None => word,
    };
    let mut letters = core.iter().filter(|b| b.is_ascii_alphabetic());
    let Some(first) = letters.next() else {
        return Case::Lower;
    };
    if !first.is_ascii_uppercase() {
        return Case::Lower;
    }
    let (count, any_lower) = letters.fold((1, false), |(n, lower), b| {
        (n + 1, lower | b.is_ascii_lowercase())
    });
    shape(count, any_lower)
}

pub(super) fn shape(letters: usize, any_lower: bool) -> Case {
    match (letters, any_lower) {
        (1, _) => Case::Initial,
        (_, true) => Case::Title,
        (_, false) => Case::Upper,
    }
}

pub(super) fn gap_of(between: &str, after_dot: bool) -> Gap {
    let mut spaces = 0;
    let mut comma = false;
    for c in between.chars() {
        match c {
            '\n' | '\r' => return Gap::Break,
            ',' if !comma => comma = true,
            '-' if after_dot && spaces == 0 => {}
            c if c.is_whitespace() => spaces += 1,
            _ => return Gap::Break,
        }
    }
    match (comma, spaces) {
        (false, 1..=2) => Gap::Space,
        (false, 0) if after_dot => Gap::Space,
        (true, 1..=2) => Gap::Comma,
        _ => Gap::Break,
    }
}
