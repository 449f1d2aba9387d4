//! The vault walk's findings as a digest, to compare builds: run natively
//! and as `wasm32-wasip1` with `simd128` in V8 (`run-wasi.mjs`), the two
//! outputs must be the same line for line (the block walk classes bytes
//! with `simd128` in the one and with `u64` arithmetic in the other; the
//! native unit tests hold the latter to the char-by-char walk).
//!
//! Texts: the harness's requests and answers, and random texts of ASCII,
//! multi-byte letters, marks, symbols and whitespace with vault values and
//! surrogates written at every offset 0..40 and at the end. Prints one line
//! per group (`values`/`surrogates`, texts, matches, FNV-1a of every match's
//! start, end and slot) and prints nothing of the texts.

use latet_core::snapshot::{SnapshotIndex, VaultMatch};
use std::process::ExitCode;

#[path = "../../../../../core/benches/support/synthetic.rs"]
#[allow(dead_code)]
mod synthetic;
use synthetic::{answer_of, chat_request, vault};

const PIECES: &[&str] = &[
    "a", "Mario", "x9_", "_", "0", " ", "  ", "\t", "\n", "\r", "\x0C", "\x0B", "+", "@", ".", "-",
    "\"", "\\", "é", "José", "ß", "日本", "\u{3000}", "\u{a0}", "\u{0301}", "😀", "Ω", "٣",
];

/// FNV-1a over the matches of one group.
struct Digest {
    texts: usize,
    matches: usize,
    hash: u64,
}

impl Digest {
    fn new() -> Self {
        Digest {
            texts: 0,
            matches: 0,
            hash: 0xcbf2_9ce4_8422_2325,
        }
    }

    fn add(&mut self, found: &[VaultMatch]) {
        self.texts += 1;
        self.matches += found.len();
        for m in found {
            for n in [m.start as u64, m.end as u64, u64::from(m.slot)] {
                for b in n.to_le_bytes() {
                    self.hash = (self.hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
                }
            }
        }
    }
}

/// A deterministic generator (xorshift64*): the same texts on every target.
struct Xorshift(u64);

impl Xorshift {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n.max(1)
    }
}

fn random_text(rng: &mut Xorshift, pieces: usize) -> String {
    (0..pieces)
        .map(|_| PIECES[rng.below(PIECES.len())])
        .collect()
}

fn main() -> ExitCode {
    let (snapshot, pairs) = vault(10_000);
    let index = match SnapshotIndex::from_snapshot(snapshot) {
        Ok(index) => index,
        Err(e) => {
            eprintln!("snapshot: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut texts = Vec::new();
    for (bytes, values) in [(2_000, 4), (20_000, 40), (200_000, 400)] {
        let request = chat_request(&pairs, bytes, values);
        texts.push(answer_of(&request, &pairs));
        texts.push(request);
    }
    let mut rng = Xorshift(7);
    for round in 0..20_000usize {
        let mut text = random_text(&mut rng, round % 60);
        let (value, surrogate) = &pairs[rng.below(pairs.len())];
        let key = if round % 2 == 0 { value } else { surrogate };
        let at = (0..=text.len().min(40))
            .filter(|i| text.is_char_boundary(*i))
            .nth(round % 41)
            .unwrap_or(text.len());
        text.insert_str(at, key);
        if round % 3 == 0 {
            let (value, surrogate) = &pairs[rng.below(pairs.len())];
            text.push_str(if round % 2 == 0 { surrogate } else { value });
        }
        texts.push(text);
    }
    let mut values = Digest::new();
    let mut surrogates = Digest::new();
    let mut found = Vec::new();
    for text in &texts {
        found.clear();
        index.find_values(text, &mut found);
        values.add(&found);
        found.clear();
        index.find_surrogates(text, &mut found);
        surrogates.add(&found);
    }
    for (name, d) in [("values", values), ("surrogates", surrogates)] {
        println!(
            "{name} texts {} matches {} fnv {:016x}",
            d.texts, d.matches, d.hash
        );
    }
    ExitCode::SUCCESS
}
