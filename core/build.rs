//! Copies the person detector's word lists (`data/person/<lang>/*.txt`)
//! into `OUT_DIR` without their comment and blank lines: the comments are
//! for maintainers, and embedded they cost the filter's `.wasm` 10 KB.

// A build script stops the build with a message: that is what `expect` does.
#![allow(clippy::expect_used)]

use std::fs;
use std::path::Path;

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
    let langs = fs::read_dir(data).expect("core/data/person is readable");
    for lang in langs {
        let lang = lang.expect("a directory entry").path();
        if !lang.is_dir() {
            continue;
        }
        println!("cargo:rerun-if-changed={}", lang.display());
        let name = lang.file_name().expect("a language directory has a name");
        fs::create_dir_all(out.join(name)).expect("OUT_DIR is writable");
        for file in fs::read_dir(&lang).expect("a language directory is readable") {
            let file = file.expect("a directory entry").path();
            if file.extension().and_then(|e| e.to_str()) != Some("txt") {
                continue;
            }
            println!("cargo:rerun-if-changed={}", file.display());
            let text = fs::read_to_string(&file).expect("a word list is UTF-8");
            let lines = text
                .lines()
                .map(str::trim)
                // `# weak`, `# greeting`, `# lower` are section markers (cues.txt).
                .filter(|l| !l.is_empty() && (!l.starts_with('#') || is_marker(l)));
            // The cues keep their order (their sections); every other list
            // is a set, written front-coded.
            let kept: String = if file.file_name().is_some_and(|f| f == "cues.txt") {
                lines.flat_map(|l| [l, "\n"]).collect()
            } else {
                front_coded(lines.collect())
            };
            let target = out.join(name).join(file.file_name().expect("a file name"));
            fs::write(target, kept).expect("OUT_DIR is writable");
        }
    }
}

/// The most bytes a line may share with the one before (its count is one
/// ASCII char, `0` + the count).
const MAX_SHARED: usize = 40;

/// A list's lines sorted, without repeats, each written as the count of
/// bytes it shares with the line before (one char: `0` + the count) and the
/// rest: sorted name lists share their first letters, and this saves about
/// a fifth of their bytes in the filter's `.wasm`
/// (`lexicon::entries` reads it back).
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
