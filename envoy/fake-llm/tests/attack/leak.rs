//! The leak rule: where, in one request the upstream recorded, an invented
//! value appears in any form.
//!
//! A value counts as leaked when it appears, compared case-insensitively,
//! in the method, the path, the query, a header name or value, a trailer
//! name or value, or the body, in any of these forms:
//!
//! - the raw bytes;
//! - percent-decoded (up to three times: `%2540` is `%40` is `@`), and in
//!   the query and the raw body also with `+` read as a space;
//! - the body gunzipped when it is gzip (magic bytes `1f 8b`);
//! - JSON-decoded: when the body is JSON, every object key, string and
//!   number at any depth, a string that itself holds JSON decoded again
//!   (recursively), each also percent-decoded;
//! - for phone, card and IBAN values (digit groups with separators), the
//!   value with its separators removed, searched in the text with its
//!   separators (` -./()+`) removed.
//!
//! Locations name the place (`body:/tools/0/function/description`,
//! `header:x-user-email`, `query`), never the value: a key or header name
//! that itself holds a value is written `<value>`.

use std::io::Read;

use base64::Engine as _;
use serde_json::Value;

/// Characters people put between digit groups (and `+` before a country
/// code): removed from both sides for the compact comparison.
const SEPARATORS: &[u8] = b" -./()+";

/// One invented value, ready to be searched for.
#[derive(Clone, Debug)]
pub struct Needle {
    lower: Vec<u8>,
    /// The value without separators, for digit-group values.
    compact: Option<Vec<u8>>,
}

fn is_ipv4(value: &str) -> bool {
    let parts: Vec<&str> = value.split('.').collect();
    parts.len() == 4
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.len() <= 3 && p.bytes().all(|b| b.is_ascii_digit()))
}

impl Needle {
    pub fn new(value: &str) -> Self {
        let lower = value.to_ascii_lowercase().into_bytes();
        let bytes = value.as_bytes();
        let digits = bytes.iter().filter(|b| b.is_ascii_digit()).count();
        // Phones and cards: digits, separators, a leading +.
        let numeric = bytes
            .iter()
            .all(|b| b.is_ascii_digit() || SEPARATORS.contains(b))
            && digits >= 8
            && !is_ipv4(value);
        // IBANs: two capitals, then digits and letters in groups.
        let iban = bytes.len() >= 15
            && bytes[0].is_ascii_uppercase()
            && bytes[1].is_ascii_uppercase()
            && bytes[2].is_ascii_digit()
            && bytes
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || *b == b' ');
        let compact = (numeric || iban).then(|| compact_of(&lower));
        Needle { lower, compact }
    }
}

fn compact_of(text: &[u8]) -> Vec<u8> {
    text.iter()
        .filter(|b| !SEPARATORS.contains(b))
        .map(u8::to_ascii_lowercase)
        .collect()
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle)
}

/// The needle in `text` as written (case-insensitively), or compact.
fn found_as_written(text: &[u8], needle: &Needle) -> bool {
    let lower = text.to_ascii_lowercase();
    if contains(&lower, &needle.lower) {
        return true;
    }
    needle
        .compact
        .as_ref()
        .is_some_and(|compact| contains(&compact_of(&lower), compact))
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// `%XX` decoded (and `+` as a space when `plus`); a bad escape is kept.
pub fn percent_decode(text: &[u8], plus: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        match text[i] {
            b'%' if i + 2 < text.len() => match (hex(text[i + 1]), hex(text[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push(h * 16 + l);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b'+' if plus => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    out
}

/// The needle in `text` raw or percent-decoded (up to three rounds; with
/// `+` as a space too when `plus`).
pub fn found_in(text: &[u8], needle: &Needle, plus: bool) -> bool {
    if found_as_written(text, needle) {
        return true;
    }
    for plus in [false, plus] {
        let mut current = text.to_vec();
        for _ in 0..3 {
            let decoded = percent_decode(&current, plus);
            if decoded == current {
                break;
            }
            if found_as_written(&decoded, needle) {
                return true;
            }
            current = decoded;
        }
    }
    false
}

fn any_found(text: &[u8], needles: &[Needle], plus: bool) -> bool {
    needles.iter().any(|n| found_in(text, n, plus))
}

/// A name (JSON key, header or trailer name) safe to print: `<value>` when
/// it holds one of the needles.
fn printable(name: &str, needles: &[Needle]) -> String {
    let in_json = || {
        serde_json::from_str::<Value>(name).is_ok_and(|inner| {
            let mut found = Vec::new();
            walk_json(&inner, "", needles, &mut found);
            !found.is_empty()
        })
    };
    if any_found(name.as_bytes(), needles, false) || in_json() {
        "<value>".to_owned()
    } else {
        name.to_owned()
    }
}

fn pointer_segment(key: &str, needles: &[Needle]) -> String {
    printable(key, needles)
        .replace('~', "~0")
        .replace('/', "~1")
}

/// Walks a JSON value: keys, strings (and the JSON inside them) and numbers.
fn walk_json(value: &Value, pointer: &str, needles: &[Needle], out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                let path = format!("{pointer}/{}", pointer_segment(key, needles));
                if any_found(key.as_bytes(), needles, false) {
                    out.push(format!("{path} (key)"));
                } else if key.trim_start().starts_with(['{', '[', '"']) {
                    // JSON inside the key: decoded and walked again.
                    if let Ok(inner) = serde_json::from_str::<Value>(key) {
                        let before = out.len();
                        walk_json(&inner, "", needles, out);
                        for location in &mut out[before..] {
                            *location = format!("{path} (key)#{location}");
                        }
                    }
                }
                walk_json(child, &path, needles, out);
            }
        }
        Value::Array(items) => {
            for (index, child) in items.iter().enumerate() {
                walk_json(child, &format!("{pointer}/{index}"), needles, out);
            }
        }
        Value::String(text) => {
            let here = if pointer.is_empty() { "/" } else { pointer };
            // JSON inside the string: decoded and walked again; where it is
            // found inside, the inner location says more.
            let before = out.len();
            if text.trim_start().starts_with(['{', '[', '"']) {
                if let Ok(inner) = serde_json::from_str::<Value>(text) {
                    walk_json(&inner, "", needles, out);
                    for location in &mut out[before..] {
                        *location = format!("{here}#{location}");
                    }
                }
            }
            if out.len() == before && any_found(text.as_bytes(), needles, false) {
                out.push(here.to_owned());
            }
            // A `data:` URL of base64: its payload decoded (a text file the
            // provider reads).
            if out.len() == before {
                if let Some(payload) = base64_payload(text) {
                    if any_found(&payload, needles, false) {
                        out.push(format!("{here} (base64)"));
                    }
                }
            }
        }
        Value::Number(number) => {
            if any_found(number.to_string().as_bytes(), needles, false) {
                out.push(if pointer.is_empty() { "/" } else { pointer }.to_owned());
            }
        }
        Value::Bool(_) | Value::Null => {}
    }
}

/// The decoded payload of a `data:…;base64,` URL.
fn base64_payload(text: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    let rest = text.strip_prefix("data:")?;
    let (meta, payload) = rest.split_once(',')?;
    if !meta.to_ascii_lowercase().ends_with(";base64") {
        return None;
    }
    let engine = base64::engine::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
    );
    engine.decode(payload).ok()
}

/// Where in `body` the needles are: JSON locations (`/a/0/b`) when the body
/// is JSON and they are found there, else `""` for the body as a whole.
fn body_locations(body: &[u8], needles: &[Needle]) -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(value) = serde_json::from_slice::<Value>(body) {
        walk_json(&value, "", needles, &mut out);
    }
    if out.is_empty() && any_found(body, needles, true) {
        out.push(String::new());
    }
    out
}

fn gunzip(body: &[u8]) -> Option<Vec<u8>> {
    if !body.starts_with(&[0x1f, 0x8b]) {
        return None;
    }
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(body)
        .read_to_end(&mut out)
        .ok()?;
    Some(out)
}

/// A body with a UTF-16 byte-order mark, as UTF-8.
fn utf16(body: &[u8]) -> Option<Vec<u8>> {
    let little = match body {
        [0xff, 0xfe, ..] => true,
        [0xfe, 0xff, ..] => false,
        _ => return None,
    };
    let units = body[2..].chunks_exact(2).map(|pair| {
        if little {
            u16::from_le_bytes([pair[0], pair[1]])
        } else {
            u16::from_be_bytes([pair[0], pair[1]])
        }
    });
    Some(
        char::decode_utf16(units)
            .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
            .collect::<String>()
            .into_bytes(),
    )
}

/// The fields of a recorded request's `headers` or `trailers` object.
fn fields(entry: &Value, key: &str) -> Vec<(String, String)> {
    entry
        .get(key)
        .and_then(Value::as_object)
        .map(|map| {
            map.iter()
                .map(|(n, v)| (n.clone(), v.as_str().unwrap_or_default().to_owned()))
                .collect()
        })
        .unwrap_or_default()
}

/// The raw body of a recorded request (`body_base64` when it was not UTF-8).
pub fn body_bytes(entry: &Value) -> Vec<u8> {
    if let Some(encoded) = entry.get("body_base64").and_then(Value::as_str) {
        if let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(encoded) {
            return bytes;
        }
    }
    entry
        .get("body")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .as_bytes()
        .to_vec()
}

/// Every place in one recorded request (the fake LLM's log entry) where a
/// needle is; empty when none is there.
pub fn leaks(entry: &Value, needles: &[Needle]) -> Vec<String> {
    let mut out = Vec::new();
    let text = |key: &str| entry.get(key).and_then(Value::as_str).unwrap_or_default();
    if any_found(text("method").as_bytes(), needles, false) {
        out.push("method".to_owned());
    }
    let target = text("path");
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    if any_found(path.as_bytes(), needles, false) {
        out.push("path".to_owned());
    }
    if any_found(query.as_bytes(), needles, true) {
        out.push("query".to_owned());
    }
    for (section, kind) in [("headers", "header"), ("trailers", "trailer")] {
        for (name, value) in fields(entry, section) {
            if any_found(name.as_bytes(), needles, false) {
                out.push(format!("{kind}-name"));
            }
            if any_found(value.as_bytes(), needles, false) {
                out.push(format!("{kind}:{}", printable(&name, needles)));
            }
        }
    }
    let body = body_bytes(entry);
    let (label, body) = match (gunzip(&body), utf16(&body)) {
        (Some(inflated), _) => ("body(gunzipped)", inflated),
        (None, Some(decoded)) => ("body(utf-16)", decoded),
        (None, None) => ("body", body),
    };
    for location in body_locations(&body, needles) {
        out.push(if location.is_empty() {
            label.to_owned()
        } else {
            format!("{label}:{location}")
        });
    }
    out.dedup();
    out
}

/// True when `text` holds none of the needles in any form: a line is only
/// printed after this check.
pub fn clean(text: &str, needles: &[Needle]) -> bool {
    !any_found(text.as_bytes(), needles, true)
}
