//! The attack corpus (`envoy/attacks/corpus.jsonl`, made by
//! `envoy/attacks/corpus.py`): one attack per line.

use std::io::Write;

use base64::Engine as _;
use serde_json::{json, Map, Value};

/// Categories an attack may have.
pub const CATEGORIES: &[&str] = &[
    "openai-chat",
    "openai-responses",
    "anthropic-messages",
    "generic-json",
    "plain-text",
    "headers",
    "query",
    "path",
    "transport",
    "more-providers",
];

/// How an attack goes on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// HTTP/1.1 with `content-length`.
    Http1,
    /// HTTP/1.1 with `transfer-encoding: chunked` (chunk sizes from
    /// `chunks`), optional trailers.
    Chunked,
    /// HTTP/2 with prior knowledge (h2c), DATA frames sized by `chunks`,
    /// optional trailers.
    Http2,
}

/// What a string body's `@@FILLER@@` becomes (padded to `pad_to`): words
/// no detector finds.
const FILLER_MARK: &str = "@@FILLER@@";
const FILLER_WORDS: &str = "lorem ipsum dolor sit amet consectetur adipiscing elit ";

/// One attack.
#[derive(Clone, Debug)]
pub struct Attack {
    pub id: String,
    pub category: String,
    pub description: String,
    pub method: String,
    /// Path with query, as sent.
    pub path: String,
    pub headers: Vec<(String, String)>,
    /// The body as sent (after filler and encoding).
    pub body: Vec<u8>,
    pub trailers: Vec<(String, String)>,
    pub transport: Transport,
    /// DATA frame or chunk sizes, cycled; empty: one piece (HTTP/2: 16 KiB
    /// frames).
    pub chunks: Vec<usize>,
    /// `HTTP/1.1` unless the attack says (`HTTP/1.0`).
    pub http_version: String,
    /// What must not reach the upstream.
    pub values: Vec<String>,
}

fn pairs(value: Option<&Value>, field: &str, id: &str) -> Result<Vec<(String, String)>, String> {
    let Some(value) = value else {
        return Ok(Vec::new());
    };
    let items = value
        .as_array()
        .ok_or(format!("{id}: `{field}` is not a list"))?;
    items
        .iter()
        .map(|pair| match pair.as_array().map(Vec::as_slice) {
            Some([Value::String(name), Value::String(v)]) => Ok((name.clone(), v.clone())),
            _ => Err(format!(
                "{id}: `{field}` holds an entry that is not [name, value]"
            )),
        })
        .collect()
}

fn padded(mut text: String, pad_to: Option<usize>, id: &str) -> Result<String, String> {
    let Some(target) = pad_to else {
        return Ok(text);
    };
    let base = text.len() - FILLER_MARK.len();
    if !text.contains(FILLER_MARK) || target < base {
        return Err(format!(
            "{id}: `pad_to` needs {FILLER_MARK} and a larger size"
        ));
    }
    let filler: String = FILLER_WORDS.chars().cycle().take(target - base).collect();
    text = text.replacen(FILLER_MARK, &filler, 1);
    Ok(text)
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    // Writing to a Vec cannot fail.
    let _ = encoder.write_all(bytes);
    encoder.finish().unwrap_or_default()
}

impl Attack {
    /// One corpus line.
    pub fn parse(line: &str) -> Result<Attack, String> {
        let entry: Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
        let text = |field: &str| entry.get(field).and_then(Value::as_str).map(str::to_owned);
        let id = text("id").ok_or("an attack without `id`")?;
        let need = |field: &str| text(field).ok_or(format!("{id}: `{field}` missing"));
        let transport = match need("transport")?.as_str() {
            "http1" => Transport::Http1,
            "chunked" => Transport::Chunked,
            "http2" => Transport::Http2,
            other => return Err(format!("{id}: unknown transport {other:?}")),
        };
        let pad_to = entry
            .get("pad_to")
            .and_then(Value::as_u64)
            .map(|n| n as usize);
        let mut body = match (
            entry.get("body").filter(|b| !b.is_null()),
            text("body_base64"),
        ) {
            (Some(Value::String(s)), None) => padded(s.clone(), pad_to, &id)?.into_bytes(),
            (Some(json), None) => padded(json.to_string(), pad_to, &id)?.into_bytes(),
            (None, Some(encoded)) => base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .map_err(|_| format!("{id}: `body_base64` is not base64"))?,
            (None, None) => Vec::new(),
            (Some(_), Some(_)) => return Err(format!("{id}: both `body` and `body_base64`")),
        };
        match text("body_encoding").as_deref() {
            None => {}
            Some("gzip") => body = gzip(&body),
            Some(other) => return Err(format!("{id}: unknown body_encoding {other:?}")),
        }
        let chunks = match entry.get("chunks") {
            None => Vec::new(),
            Some(list) => list
                .as_array()
                .and_then(|l| {
                    l.iter()
                        .map(|n| n.as_u64().filter(|n| *n > 0).map(|n| n as usize))
                        .collect::<Option<Vec<_>>>()
                })
                .ok_or(format!("{id}: `chunks` must be positive sizes"))?,
        };
        let values = entry
            .get("values")
            .and_then(Value::as_array)
            .and_then(|l| {
                l.iter()
                    .map(|v| v.as_str().map(str::to_owned))
                    .collect::<Option<Vec<_>>>()
            })
            .ok_or(format!("{id}: `values` must be a list of strings"))?;
        Ok(Attack {
            category: need("category")?,
            description: need("description")?,
            method: need("method")?,
            path: need("path")?,
            headers: pairs(entry.get("headers"), "headers", &id)?,
            trailers: pairs(entry.get("trailers"), "trailers", &id)?,
            http_version: text("http_version").unwrap_or_else(|| "HTTP/1.1".to_owned()),
            transport,
            chunks,
            body,
            values,
            id,
        })
    }

    /// The body cut as the attack says (at least one piece when not empty).
    pub fn pieces(&self, default_size: usize) -> Vec<&[u8]> {
        let mut out = Vec::new();
        let mut rest = &self.body[..];
        let sizes: Vec<usize> = if self.chunks.is_empty() {
            vec![default_size]
        } else {
            self.chunks.clone()
        };
        let mut i = 0;
        while !rest.is_empty() {
            let size = sizes[i % sizes.len()].min(rest.len());
            let (piece, tail) = rest.split_at(size);
            out.push(piece);
            rest = tail;
            i += 1;
        }
        out
    }

    /// What the upstream would record if the gateway changed nothing: the
    /// fake LLM's log entry for this request (for the corpus self-check).
    pub fn as_recorded(&self) -> Value {
        let map = |fields: &[(String, String)]| {
            let mut map = Map::new();
            for (name, value) in fields {
                let name = name.to_ascii_lowercase();
                let joined = match map.get(&name).and_then(Value::as_str) {
                    Some(before) => format!("{before}, {value}"),
                    None => value.clone(),
                };
                map.insert(name, Value::String(joined));
            }
            Value::Object(map)
        };
        let mut entry = json!({
            "method": self.method,
            "path": self.path,
            "headers": map(&self.headers),
            "body": String::from_utf8_lossy(&self.body),
            "trailers": map(&self.trailers),
        });
        if std::str::from_utf8(&self.body).is_err() {
            entry["body_base64"] =
                Value::String(base64::engine::general_purpose::STANDARD.encode(&self.body));
        }
        entry
    }
}

/// The corpus file.
pub fn path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../attacks/corpus.jsonl")
}

/// Every attack of the corpus, in file order.
pub fn load() -> Result<Vec<Attack>, String> {
    let file = path();
    let text = std::fs::read_to_string(&file)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(n, line)| Attack::parse(line).map_err(|e| format!("corpus line {}: {e}", n + 1)))
        .collect()
}
