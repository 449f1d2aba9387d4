//! Synthetic agent traffic shared by the engine benches (`core/benches/engine.rs`
//! and the V8 harness `envoy/bench/engine-harness`), so that both measure the
//! same work on the same inputs: a vault of names, e-mails and phones, OpenAI
//! chat requests of a given size holding vault values, and their answers.

use latet_core::kind::Kind;
use latet_core::wire::{Entry, EntryId, Snapshot};

const FIRST: &[&str] = &[
    "Mario", "Laura", "Giulia", "Paolo", "Ana", "José", "Lucía", "Javier", "Hans", "Greta",
    "Jürgen", "Claire", "Élodie", "Pierre", "John", "Emily", "Oliver", "Sofia", "Marco", "Elena",
];
const LAST: &[&str] = &[
    "Rossi",
    "Bianchi",
    "García",
    "Martínez",
    "Müller",
    "Schmidt",
    "Dubois",
    "Moreau",
    "Smith",
    "Brown",
    "Ferrari",
    "Romano",
    "López",
    "Weber",
    "Fischer",
    "Laurent",
    "Taylor",
    "Conti",
];

/// A deterministic generator (no dependency): splitmix64.
pub struct Rng(u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn pick<'a>(&mut self, list: &[&'a str]) -> &'a str {
        list[(self.next() % list.len() as u64) as usize]
    }
}

/// The i-th synthetic value and its surrogate (names, e-mails, phones).
pub fn value_pair(i: usize, rng: &mut Rng) -> (String, String, Kind) {
    let (f, l) = (rng.pick(FIRST), rng.pick(LAST));
    let (sf, sl) = (rng.pick(FIRST), rng.pick(LAST));
    match i % 3 {
        0 => (format!("{f} {l}{i}"), format!("{sf} {sl}x{i}"), Kind::Name),
        1 => (
            format!(
                "{}.{}{i}@acme{}.it",
                f.to_lowercase(),
                l.to_lowercase(),
                i % 97
            ),
            format!(
                "{}.{}{i}@brightvale{}.it",
                sf.to_lowercase(),
                sl.to_lowercase(),
                i % 97
            ),
            Kind::Email,
        ),
        _ => (
            format!("+39 347 {:03} {:04}", i % 1000, i / 1000),
            format!("+39 351 {:03} {:04}", (i * 7) % 1000, i / 1000),
            Kind::Phone,
        ),
    }
}

pub fn vault(entries: usize) -> (Snapshot, Vec<(String, String)>) {
    let mut rng = Rng(42);
    let mut pairs = Vec::with_capacity(entries);
    let mut list = Vec::with_capacity(entries);
    for i in 0..entries {
        let (value, surrogate, kind) = value_pair(i, &mut rng);
        let mut id = [0u8; 16];
        id[..8].copy_from_slice(&(i as u64).to_le_bytes());
        list.push(Entry {
            id: EntryId(id),
            value: value.clone(),
            surrogate: surrogate.clone(),
            kind,
            generation: 1,
        });
        pairs.push((value, surrogate));
    }
    let snapshot = Snapshot {
        version: 1,
        generation: 1,
        seq: 0,
        retired_salt: "00".repeat(16),
        retired: vec![],
        entries: list,
    };
    (snapshot, pairs)
}

pub const FILLER: &str = "Please review the quarterly figures below and tell me whether the \
    supplier contract needs to be renegotiated before the end of the month; the team \
    already checked the delivery dates and the invoices look consistent with the order. ";

/// `n` in letters (no detector takes it for a value).
pub fn letters(mut n: usize) -> String {
    let mut out = String::new();
    loop {
        out.push((b'a' + (n % 26) as u8) as char);
        n /= 26;
        if n == 0 {
            return out;
        }
    }
}

/// An OpenAI Chat request of about `bytes` bytes holding `values` vault values.
pub fn chat_request(pairs: &[(String, String)], bytes: usize, values: usize) -> String {
    chat_request_variant(pairs, bytes, values, None)
}

/// As [`chat_request`]; with `variant`, every message starts with a token of
/// its own, so no text repeats between variants (as envoy/bench/post.lua).
pub fn chat_request_variant(
    pairs: &[(String, String)],
    bytes: usize,
    values: usize,
    variant: Option<usize>,
) -> String {
    let messages_count = values.max(1);
    let per_message = bytes / messages_count;
    let mut messages = Vec::new();
    for m in 0..messages_count {
        let (value, _) = &pairs[(m * 7919) % pairs.len()];
        let mut text = match variant {
            Some(v) => format!("ref{} ", letters(v)),
            None => String::new(),
        };
        while text.len() + value.len() + 40 < per_message {
            text.push_str(FILLER);
        }
        text.truncate(per_message.saturating_sub(value.len() + 40));
        text.push_str(" Contact: ");
        text.push_str(value);
        text.push('.');
        let role = if m % 2 == 0 { "user" } else { "assistant" };
        messages.push(serde_json::json!({ "role": role, "content": text }));
    }
    serde_json::json!({ "model": "gpt-4o", "messages": messages }).to_string()
}

/// The same request as its answer would carry it: values → surrogates.
pub fn answer_of(request: &str, pairs: &[(String, String)]) -> String {
    let mut out = request.to_string();
    for (value, surrogate) in pairs {
        if out.contains(value.as_str()) {
            out = out.replace(value.as_str(), surrogate);
        }
    }
    out
}
