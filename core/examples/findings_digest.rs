//! A digest of every finding the built-in detectors make on a corpus
//! directory (`*.jsonl`, as `detect_eval` reads) and on the engine bench's
//! synthetic requests: one line per file with the count of findings and a
//! hash of their kinds and spans. Prints no text and no value, so it may
//! run on the held-out set. A change meant to leave detection as it is
//! (a faster scan) must leave every line the same.
//!
//! ```text
//! cargo run --release -p latet-core --example findings_digest [-- DIR...]
//! ```

use latet_core::detect::{DetectorConfig, Detectors, Finding};
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::process::ExitCode;

#[path = "support/corpus_files.rs"]
mod corpus_files;
#[path = "../benches/support/synthetic.rs"]
#[allow(dead_code)]
mod synthetic;

fn digest(hasher: &mut DefaultHasher, found: &[Finding]) {
    found.len().hash(hasher);
    for f in found {
        f.kind.as_str().hash(hasher);
        f.start.hash(hasher);
        f.end.hash(hasher);
    }
}

fn main() -> ExitCode {
    let dirs: Vec<String> = std::env::args().skip(1).collect();
    let detectors = match Detectors::new(&DetectorConfig::default()) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("findings_digest: detectors: {e}");
            return ExitCode::from(2);
        }
    };
    for dir in &dirs {
        let files = match corpus_files::texts_by_file(dir) {
            Ok(files) => files,
            Err(e) => {
                eprintln!("findings_digest: {e}");
                return ExitCode::from(2);
            }
        };
        for (path, texts) in &files {
            let mut hasher = DefaultHasher::new();
            let mut count = 0;
            for text in texts {
                // The text as written, and each line of it alone (more
                // starts and ends of texts).
                let mut found = Vec::new();
                detectors.find(text, &mut found);
                count += found.len();
                digest(&mut hasher, &found);
                for part in text.split('\n') {
                    found.clear();
                    detectors.find(part, &mut found);
                    count += found.len();
                    digest(&mut hasher, &found);
                }
            }
            println!(
                "{}: {count} findings, digest {:016x}",
                path.display(),
                hasher.finish()
            );
        }
    }
    for entries in [10_000usize, 100_000] {
        let (_, pairs) = synthetic::vault(entries);
        for (bytes, values) in [(20_000usize, 40usize), (200_000, 400)] {
            let request = synthetic::chat_request(&pairs, bytes, values);
            let mut found = Vec::new();
            detectors.find(&request, &mut found);
            let mut hasher = DefaultHasher::new();
            digest(&mut hasher, &found);
            println!(
                "bench vault {entries}, request {bytes}: {} findings, digest {:016x}",
                found.len(),
                hasher.finish()
            );
        }
    }
    ExitCode::SUCCESS
}
