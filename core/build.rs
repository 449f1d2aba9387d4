//! Writes the person detector's word lists (`data/person/`) into `OUT_DIR`
//! in the forms `src/detect/person/lexicon.rs` embeds:
//!
//! - every list that holds single words (`given`, `surnames`, `ambiguous`,
//!   `not_names`, `place_words`, `titles`; `world/` has only the first
//!   two) folded with the detector's own `fold`, merged across languages
//!   into one list per kind (`person/<kind>.bin`), sorted, front-coded and
//!   packed five bits per symbol ([`packed`]). The lexicon keys every
//!   entry by its folded form anyway, and folded words need only a few
//!   symbols: 29,807 bytes where the lists front-coded as text, one per
//!   language, took 63,117, and the filter's `.wasm` 34 KB smaller
//!   (`data/person/README.md`);
//! - `cues.txt`, `particles.txt` and `world/firms.txt` as text without
//!   their comment and blank lines (`person/<lang>/<list>.txt`): the cues'
//!   order holds their sections, and all three are read phrase by phrase.

// A build script stops the build with a message: that is what `expect` does.
#![allow(clippy::expect_used)]

// The same fold the detector applies to the words of a text, so a list's
// key is what a text's word folds to.
#[path = "src/detect/person/fold.rs"]
mod fold;

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

/// The directories under `data/person/` the lexicon reads: six languages,
/// and `world/` (given names, surnames and firms).
const LANGUAGES: [&str; 7] = ["en", "es", "it", "de", "fr", "pt", "world"];

/// The lists packed, merged across languages (`lexicon::WORD_LISTS` reads
/// them back, each with its flag).
const PACKED_LISTS: [&str; 6] = [
    "given",
    "surnames",
    "ambiguous",
    "not_names",
    "place_words",
    "titles",
];

/// The lists kept as text, per language (`world/` has `firms`: names of
/// several words, looked up whole).
const TEXT_LISTS: [&str; 3] = ["cues", "particles", "firms"];

/// A comment line the lexicon reads as a section marker
/// (`lexicon::cue_lines`: `# weak`, `# greeting`, `# lower`, any case and
/// spacing).
fn is_marker(line: &str) -> bool {
    line.strip_prefix('#')
        .map(|heading| heading.trim().to_ascii_lowercase())
        .is_some_and(|heading| matches!(heading.as_str(), "weak" | "greeting" | "lower"))
}

fn main() {
    let data = Path::new("data/person");
    println!("cargo:rerun-if-changed={}", data.display());
    let out = Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("person");
    let mut merged: Vec<BTreeSet<String>> = vec![BTreeSet::new(); PACKED_LISTS.len()];
    for lang in LANGUAGES {
        let dir = data.join(lang);
        println!("cargo:rerun-if-changed={}", dir.display());
        fs::create_dir_all(out.join(lang)).expect("OUT_DIR is writable");
        for (list, words) in PACKED_LISTS.iter().zip(&mut merged) {
            let Some(text) = read_list(&dir, list) else {
                continue; // `world/` holds only given names and surnames
            };
            // A hyphenated name is known by its parts too (`Jean-Pierre`:
            // `jean`, `pierre`).
            let split = matches!(*list, "given" | "surnames");
            for entry in entries(&text) {
                words.insert(fold::fold(entry));
                if split && entry.contains('-') {
                    words.extend(entry.split('-').map(fold::fold));
                }
            }
        }
        for list in TEXT_LISTS {
            let Some(text) = read_list(&dir, list) else {
                continue;
            };
            // The cues keep their order (their sections) and their
            // section markers; particles and firms are sets, written
            // front-coded.
            let kept: String = if list == "cues" {
                text.lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty() && (!l.starts_with('#') || is_marker(l)))
                    .flat_map(|l| [l, "\n"])
                    .collect()
            } else {
                front_coded(entries(&text).collect())
            };
            fs::write(out.join(lang).join(format!("{list}.txt")), kept)
                .expect("OUT_DIR is writable");
        }
    }
    for (list, mut words) in PACKED_LISTS.iter().zip(merged) {
        // The empty part of a hyphen at an entry's end or a doubled one
        // is no word (the lexicon never held an empty one).
        words.remove("");
        fs::write(out.join(format!("{list}.bin")), packed(&words)).expect("OUT_DIR is writable");
    }
}

/// `dir/<list>.txt`, if that language has that list.
fn read_list(dir: &Path, list: &str) -> Option<String> {
    let file = dir.join(format!("{list}.txt"));
    if !file.exists() {
        return None;
    }
    println!("cargo:rerun-if-changed={}", file.display());
    Some(fs::read_to_string(&file).expect("a word list is UTF-8"))
}

/// A list's entries: its lines, trimmed, but blank and comment (`#`) ones.
fn entries(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
}

/// The most bytes a line may share with the one before (its count is one
/// ASCII char, `0` + the count).
const MAX_SHARED: usize = 40;

/// A list's lines sorted, without repeats, each written as the count of
/// bytes it shares with the line before (one char: `0` + the count) and the
/// rest (`lexicon::entries` reads it back).
fn front_coded(mut lines: Vec<&str>) -> String {
    lines.sort_unstable();
    lines.dedup();
    let mut out = String::new();
    let mut previous = "";
    for line in lines {
        let mut shared = previous
            .bytes()
            .zip(line.bytes())
            .take_while(|(a, b)| a == b)
            .count()
            .min(MAX_SHARED);
        while !line.is_char_boundary(shared) {
            shared -= 1;
        }
        out.push(char::from(b'0' + shared as u8));
        out.push_str(&line[shared..]);
        out.push('\n');
        previous = line;
    }
    out
}

/// The most bytes a packed word may say it shares with the word before
/// (its count is one symbol).
const MAX_PACKED_SHARED: usize = 31;

/// The symbol that says "a byte follows in the next two symbols".
const ESCAPE: u8 = 31;

/// Folded words (sorted, no repeats, none empty) packed five bits per
/// symbol, most significant bit first, as `lexicon::unpacked` reads them
/// (the format of `data/person/world/more_*.bin`, with three more
/// symbols): per word, how many bytes it shares with the word before
/// (0–31), then the rest — `a`–`z` as 1–26, `'` 27, `-` 28, space 29,
/// `.` 30, and any other byte (a digit, `,`, a byte of a letter no fold
/// takes apart such as `ł`) as 31 then the byte's top three bits and its
/// low five — then 0.
fn packed(words: &BTreeSet<String>) -> Vec<u8> {
    let mut symbols: Vec<u8> = Vec::new();
    let mut previous: &[u8] = &[];
    for word in words {
        let word = word.as_bytes();
        let shared = previous
            .iter()
            .zip(word)
            .take_while(|(a, b)| a == b)
            .count()
            .min(MAX_PACKED_SHARED);
        symbols.push(shared as u8);
        for &byte in &word[shared..] {
            match byte {
                b'a'..=b'z' => symbols.push(byte - b'a' + 1),
                b'\'' => symbols.push(27),
                b'-' => symbols.push(28),
                b' ' => symbols.push(29),
                b'.' => symbols.push(30),
                _ => symbols.extend([ESCAPE, byte >> 5, byte & 0x1f]),
            }
        }
        symbols.push(0);
        previous = word;
    }
    let mut bytes = Vec::with_capacity(symbols.len() * 5 / 8 + 1);
    let (mut acc, mut bits) = (0u32, 0u32);
    for symbol in symbols {
        acc = acc << 5 | u32::from(symbol);
        bits += 5;
        while bits >= 8 {
            bits -= 8;
            bytes.push((acc >> bits) as u8);
        }
    }
    if bits > 0 {
        bytes.push((acc << (8 - bits)) as u8);
    }
    bytes
}
