//! Recall and precision of the built-in detectors on the project's own
//! corpus (`core/tests/fixtures/person-eval/<lang>.jsonl`): texts agents
//! send, in six languages, with every person name, e-mail, phone, IBAN and
//! card in them marked.
//!
//! ```text
//! cargo run --release -p latet-core --example detect_eval [-- --min 0.90] [--misses] [DIR]
//! ```
//!
//! A finding counts when its kind and span are exactly a marked value's
//! (strict); the lenient figures count any overlap. With `--min R`, the run
//! fails unless strict recall and precision of names reach `R` in every
//! language. `--misses` prints each miss and false finding (the corpus is
//! written by the project: its texts may be shown).

use latet_core::detect::{DetectorConfig, Detectors, Finding};
use latet_core::Kind;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::process::ExitCode;

#[path = "support/corpus_files.rs"]
mod corpus_files;

/// The kinds the corpus marks, by the corpus's names.
const KINDS: &[(&str, &str)] = &[
    ("person", "name"),
    ("email", "email"),
    ("phone", "phone"),
    ("iban", "iban"),
    ("card", "card"),
];

#[derive(Deserialize)]
struct Line {
    id: String,
    text: String,
    values: Vec<Marked>,
}

#[derive(Deserialize)]
struct Marked {
    kind: String,
    text: String,
}

#[derive(Default, Clone, Copy)]
struct Tally {
    marked: usize,
    found: usize,
    exact: usize,
    /// Marked values some finding of the kind overlaps.
    touched: usize,
    /// Findings overlapping some marked value of the kind.
    overlapping: usize,
}

impl Tally {
    fn add(&mut self, other: Tally) {
        self.marked += other.marked;
        self.found += other.found;
        self.exact += other.exact;
        self.touched += other.touched;
        self.overlapping += other.overlapping;
    }
    fn recall(&self) -> f64 {
        ratio(self.exact, self.marked)
    }
    fn precision(&self) -> f64 {
        ratio(self.exact, self.found)
    }
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 {
        1.0
    } else {
        a as f64 / b as f64
    }
}

fn main() -> ExitCode {
    let mut min = None;
    let mut misses = false;
    let mut dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/person-eval").to_string();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--min" => match args.next().and_then(|v| v.parse::<f64>().ok()) {
                Some(v) => min = Some(v),
                None => {
                    eprintln!("detect_eval: --min needs a number between 0 and 1");
                    return ExitCode::from(2);
                }
            },
            "--misses" => misses = true,
            other => dir = other.to_string(),
        }
    }
    let detectors = match Detectors::new(&DetectorConfig::default()) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("detect_eval: detectors: {e}");
            return ExitCode::from(2);
        }
    };
    let files = match corpus_files::jsonl_files(&dir) {
        Ok(files) => files,
        Err(e) => {
            eprintln!("detect_eval: {e}");
            return ExitCode::from(2);
        }
    };
    let mut table: BTreeMap<(String, &str), Tally> = BTreeMap::new();
    let mut texts = 0;
    let mut bytes = 0;
    let mut nanos = 0u128;
    for path in &files {
        let lang = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let content = match std::fs::read_to_string(path) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("detect_eval: cannot read {}: {e}", path.display());
                return ExitCode::from(2);
            }
        };
        for (n, raw) in content.lines().enumerate() {
            if raw.trim().is_empty() {
                continue;
            }
            let line: Line = match serde_json::from_str(raw) {
                Ok(l) => l,
                Err(e) => {
                    eprintln!("detect_eval: {}:{}: {e}", path.display(), n + 1);
                    return ExitCode::from(2);
                }
            };
            let started = std::time::Instant::now();
            let mut found = Vec::new();
            detectors.find(&line.text, &mut found);
            nanos += started.elapsed().as_nanos();
            texts += 1;
            bytes += line.text.len();
            let Some(marked) = locate(&line) else {
                eprintln!(
                    "detect_eval: {}:{} ({}): a marked value is not in the text",
                    path.display(),
                    n + 1,
                    line.id
                );
                return ExitCode::from(2);
            };
            for &(corpus_kind, kind) in KINDS {
                let want: Vec<(usize, usize)> = marked
                    .iter()
                    .filter(|m| m.0 == corpus_kind)
                    .map(|m| (m.1, m.2))
                    .collect();
                let got: Vec<&Finding> = found.iter().filter(|f| f.kind.as_str() == kind).collect();
                let tally = score(&want, &got);
                table.entry((lang.clone(), kind)).or_default().add(tally);
                if misses {
                    show_misses(&line, kind, &want, &got);
                }
            }
        }
    }
    print_table(&table);
    let mb_s = if nanos == 0 {
        0.0
    } else {
        bytes as f64 / (nanos as f64 / 1e9) / 1e6
    };
    println!(
        "\n{texts} texts, {bytes} bytes, all detectors: {mb_s:.1} MB/s (one pass, first call included)"
    );
    if let Some(min) = min {
        let mut ok = true;
        for ((lang, kind), t) in &table {
            if *kind == Kind::Name.as_str() && (t.recall() < min || t.precision() < min) {
                eprintln!(
                    "detect_eval: names in {lang}: recall {:.3}, precision {:.3}, below {min}",
                    t.recall(),
                    t.precision()
                );
                ok = false;
            }
        }
        if !ok {
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}

/// The marked values as (corpus kind, start, end), each found after the
/// previous one of the line (values are listed in order of appearance);
/// `None` when one is not in the text.
fn locate(line: &Line) -> Option<Vec<(&str, usize, usize)>> {
    let mut out = Vec::new();
    let mut from = 0;
    for m in &line.values {
        let at = match line.text[from..].find(&m.text) {
            Some(at) => from + at,
            // Listed out of order: search from the start.
            None => line.text.find(&m.text)?,
        };
        out.push((m.kind.as_str(), at, at + m.text.len()));
        from = at + m.text.len();
    }
    Some(out)
}

fn score(want: &[(usize, usize)], got: &[&Finding]) -> Tally {
    let overlaps = |a: (usize, usize), f: &Finding| a.0 < f.end && f.start < a.1;
    Tally {
        marked: want.len(),
        found: got.len(),
        exact: want
            .iter()
            .filter(|w| got.iter().any(|f| (f.start, f.end) == **w))
            .count(),
        touched: want
            .iter()
            .filter(|w| got.iter().any(|f| overlaps(**w, f)))
            .count(),
        overlapping: got
            .iter()
            .filter(|f| want.iter().any(|w| overlaps(*w, f)))
            .count(),
    }
}

fn show_misses(line: &Line, kind: &str, want: &[(usize, usize)], got: &[&Finding]) {
    for w in want {
        if !got.iter().any(|f| (f.start, f.end) == *w) {
            println!("  miss  {} {kind}: {:?}", line.id, &line.text[w.0..w.1]);
        }
    }
    for f in got {
        if !want.contains(&(f.start, f.end)) {
            println!(
                "  false {} {kind}: {:?}",
                line.id,
                &line.text[f.start..f.end]
            );
        }
    }
}

fn print_table(table: &BTreeMap<(String, &str), Tally>) {
    println!(
        "{:<6} {:<6} {:>6} {:>6} {:>8} {:>9} {:>10} {:>12}",
        "lang", "kind", "marked", "found", "recall", "precision", "recall~", "precision~"
    );
    let mut totals: BTreeMap<&str, Tally> = BTreeMap::new();
    for ((lang, kind), t) in table {
        print_row(lang, kind, t);
        totals.entry(kind).or_default().add(*t);
    }
    for (kind, t) in &totals {
        print_row("all", kind, t);
    }
    println!("(~: any overlap counts; the others need the exact span)");
}

fn print_row(lang: &str, kind: &str, t: &Tally) {
    println!(
        "{:<6} {:<6} {:>6} {:>6} {:>8.3} {:>9.3} {:>10.3} {:>12.3}",
        lang,
        kind,
        t.marked,
        t.found,
        t.recall(),
        t.precision(),
        ratio(t.touched, t.marked),
        ratio(t.overlapping, t.found),
    );
}
