//! A validated JSON document as a flat list of nodes in document order, built
//! without recursion. Every node keeps the byte span it came from, so callers
//! can rewrite strings in place and copy everything else unchanged.

use super::error::JsonError;
use super::escape::decode;
use super::scan::find_special;
use std::borrow::Cow;
use std::ops::Range;

/// Default nesting limit: deep enough for any provider request, shallow
/// enough that walking a path stays cheap.
pub const DEFAULT_MAX_DEPTH: usize = 512;

/// Limits applied while parsing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The deepest nesting of arrays and objects accepted; deeper input is
    /// refused with [`JsonError::TooDeep`] naming the offset. Parsing never
    /// recurses, so a large limit costs heap, not stack.
    pub max_depth: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_depth: DEFAULT_MAX_DEPTH,
        }
    }
}

/// What a node is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    Object,
    Array,
    String,
    Number,
    True,
    False,
    Null,
}

/// A node's position in its [`Document`] (document order; the root is 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(u32);

impl NodeId {
    /// The node's index in document order.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One step of a path from the root: an object key (raw bytes, as sent) or
/// an array index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathSeg<'a> {
    Key(&'a [u8]),
    Index(usize),
}

const NO_KEY: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Node {
    kind: NodeKind,
    /// Strings: the bytes inside the quotes. Others: the whole token,
    /// brackets included.
    start: u32,
    end: u32,
    /// The raw key (inside its quotes) when the parent is an object.
    key_start: u32,
    key_end: u32,
    /// Parent node index; the root is its own parent.
    parent: u32,
    /// One past the last node of this node's subtree.
    subtree_end: u32,
    /// A string (value) or its key holds a backslash escape.
    escaped: bool,
    key_escaped: bool,
}

/// A parsed, validated JSON document over borrowed bytes.
#[derive(Clone, Debug)]
pub struct Document<'a> {
    bytes: &'a [u8],
    /// The same bytes, validated as UTF-8 (strings without escapes are
    /// borrowed from it as they are).
    text: &'a str,
    nodes: Vec<Node>,
}

/// What the parser expects next.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// A value (after `:`, `,` in an array, or at the top).
    Value,
    /// A value or `]` right after `[`.
    ValueOrArrayEnd,
    /// A key or `}` right after `{`.
    KeyOrObjectEnd,
    /// A key after `,` in an object.
    Key,
    /// `,` or the closing bracket of the open container (or the end).
    AfterValue,
}

struct Parser<'a> {
    bytes: &'a [u8],
    pos: usize,
    nodes: Vec<Node>,
    /// Open containers (node indices).
    open: Vec<u32>,
    /// The key read for the next value, if its parent is an object.
    pending_key: Option<(u32, u32, bool)>,
    limits: Limits,
}

impl<'a> Document<'a> {
    /// Parses and validates `bytes` with default [`Limits`].
    pub fn parse(bytes: &'a [u8]) -> Result<Self, JsonError> {
        Self::parse_with(bytes, Limits::default())
    }

    /// Parses and validates `bytes` (UTF-8, one JSON value with optional
    /// surrounding whitespace).
    pub fn parse_with(bytes: &'a [u8], limits: Limits) -> Result<Self, JsonError> {
        if bytes.len() >= NO_KEY as usize {
            return Err(JsonError::TooLarge { len: bytes.len() });
        }
        let text = std::str::from_utf8(bytes).map_err(|e| JsonError::NotUtf8 {
            offset: e.valid_up_to(),
        })?;
        let mut parser = Parser {
            bytes,
            pos: 0,
            // A rough guess: one node per ~12 bytes of typical request JSON.
            nodes: Vec::with_capacity(bytes.len() / 12 + 1),
            open: Vec::new(),
            pending_key: None,
            limits,
        };
        parser.run()?;
        Ok(Document {
            bytes,
            text,
            nodes: parser.nodes,
        })
    }

    /// The input bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The root value.
    pub fn root(&self) -> NodeId {
        NodeId(0)
    }

    /// How many values the document holds.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Always false: a parsed document holds at least its root.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.index()]
    }

    /// What `id` is.
    pub fn kind(&self, id: NodeId) -> NodeKind {
        self.node(id).kind
    }

    /// Strings: the byte range inside the quotes. Others: the whole token.
    pub fn span(&self, id: NodeId) -> Range<usize> {
        let n = self.node(id);
        n.start as usize..n.end as usize
    }

    /// The bytes of [`Document::span`], as sent.
    pub fn raw(&self, id: NodeId) -> &'a [u8] {
        &self.bytes[self.span(id)]
    }

    /// [`Document::raw`] as text: the document was checked as UTF-8 once
    /// when parsed, and a span starts and ends beside ASCII bytes (quotes,
    /// brackets, digits), so no byte is read again. `None` only where
    /// `std::str::from_utf8` of the raw bytes would fail too (never for a
    /// span the parser recorded).
    pub fn raw_str(&self, id: NodeId) -> Option<&'a str> {
        self.text.get(self.span(id))
    }

    /// Whether a string value holds a backslash escape.
    pub fn is_escaped(&self, id: NodeId) -> bool {
        self.node(id).escaped
    }

    /// The enclosing container, or `None` for the root.
    pub fn parent(&self, id: NodeId) -> Option<NodeId> {
        (id.0 != 0).then(|| NodeId(self.node(id).parent))
    }

    /// The raw key (inside its quotes) under which `id` sits in its parent
    /// object; `None` when the parent is an array or `id` is the root.
    pub fn key_raw(&self, id: NodeId) -> Option<&'a [u8]> {
        let n = self.node(id);
        (n.key_start != NO_KEY).then(|| &self.bytes[n.key_start as usize..n.key_end as usize])
    }

    /// The byte range of `id`'s key inside its quotes; `None` when the
    /// parent is an array or `id` is the root.
    pub fn key_span(&self, id: NodeId) -> Option<Range<usize>> {
        let n = self.node(id);
        (n.key_start != NO_KEY).then_some(n.key_start as usize..n.key_end as usize)
    }

    /// Whether `id`'s key holds a backslash escape.
    pub fn key_is_escaped(&self, id: NodeId) -> bool {
        self.node(id).key_escaped
    }

    /// `id`'s key, decoded; `None` when it has none. Errors carry offsets
    /// into the whole document.
    pub fn key_value(&self, id: NodeId) -> Option<Result<Cow<'a, str>, JsonError>> {
        let span = self.key_span(id)?;
        if !self.node(id).key_escaped {
            if let Some(plain) = self.text.get(span.clone()) {
                return Some(Ok(Cow::Borrowed(plain)));
            }
        }
        Some(decode(&self.bytes[span.clone()]).map_err(|e| e.shifted(span.start)))
    }

    /// Every node, in document order (the root first).
    pub fn nodes(&self) -> impl Iterator<Item = NodeId> + '_ {
        (0..self.nodes.len() as u32).map(NodeId)
    }

    /// Whether `id`'s key, decoded, equals `key`.
    pub fn key_is(&self, id: NodeId, key: &str) -> bool {
        let Some(raw) = self.key_raw(id) else {
            return false;
        };
        if self.node(id).key_escaped {
            decode(raw).is_ok_and(|k| k == key)
        } else {
            raw == key.as_bytes()
        }
    }

    /// The direct children of a container, in order (none for a scalar).
    pub fn children(&self, id: NodeId) -> Children<'_, 'a> {
        let n = self.node(id);
        Children {
            doc: self,
            next: id.0 + 1,
            end: n.subtree_end,
        }
    }

    /// Every member of object `id` whose key is `key` (all of them when a
    /// key is repeated).
    pub fn get_all<'d>(&'d self, id: NodeId, key: &'d str) -> impl Iterator<Item = NodeId> + 'd {
        let is_object = self.kind(id) == NodeKind::Object;
        self.children(id)
            .filter(move |&child| is_object && self.key_is(child, key))
    }

    /// The member of object `id` named `key`; when the key is repeated, the
    /// last one (what common JSON parsers, providers' included, keep).
    pub fn get(&self, id: NodeId, key: &str) -> Option<NodeId> {
        self.get_all(id, key).last()
    }

    /// Whether `id` is a string whose decoded value equals `expected`.
    pub fn string_is(&self, id: NodeId, expected: &str) -> bool {
        if self.kind(id) != NodeKind::String {
            return false;
        }
        if self.node(id).escaped {
            decode(self.raw(id)).is_ok_and(|s| s == expected)
        } else {
            self.raw(id) == expected.as_bytes()
        }
    }

    /// The decoded value of string `id`; `None` when `id` is not a string.
    /// Errors carry offsets into the whole document.
    pub fn str_value(&self, id: NodeId) -> Option<Result<Cow<'a, str>, JsonError>> {
        if self.kind(id) != NodeKind::String {
            return None;
        }
        let span = self.span(id);
        if !self.node(id).escaped {
            // The parser checked the body (no quote, no control byte, no
            // backslash) and the whole input is UTF-8; a string's span lies
            // between two quotes, so it is on char boundaries.
            if let Some(plain) = self.text.get(span.clone()) {
                return Some(Ok(Cow::Borrowed(plain)));
            }
        }
        Some(decode(&self.bytes[span.clone()]).map_err(|e| e.shifted(span.start)))
    }

    /// Every string value (not keys) in the subtree of `id`, `id` included,
    /// in document order.
    pub fn strings_in(&self, id: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        let end = self.node(id).subtree_end;
        (id.0..end)
            .map(NodeId)
            .filter(|&n| self.kind(n) == NodeKind::String)
    }

    /// Every string value (not keys) of the document.
    pub fn strings(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.strings_in(self.root())
    }

    /// The path from the root to `id`.
    pub fn path(&self, id: NodeId) -> Vec<PathSeg<'a>> {
        let mut segs = Vec::new();
        let mut cur = id;
        while let Some(parent) = self.parent(cur) {
            match self.key_raw(cur) {
                Some(key) => segs.push(PathSeg::Key(key)),
                None => {
                    let index = self.children(parent).take_while(|&c| c != cur).count();
                    segs.push(PathSeg::Index(index));
                }
            }
            cur = parent;
        }
        segs.reverse();
        segs
    }
}

/// Iterator over a container's direct children.
pub struct Children<'d, 'a> {
    doc: &'d Document<'a>,
    next: u32,
    end: u32,
}

impl Iterator for Children<'_, '_> {
    type Item = NodeId;

    fn next(&mut self) -> Option<NodeId> {
        if self.next >= self.end {
            return None;
        }
        let id = NodeId(self.next);
        self.next = self.doc.node(id).subtree_end;
        Some(id)
    }
}

impl Parser<'_> {
    fn syntax(&self, what: &'static str) -> JsonError {
        JsonError::Syntax {
            offset: self.pos,
            what,
        }
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    fn run(&mut self) -> Result<(), JsonError> {
        let mut expect = Expect::Value;
        loop {
            self.skip_ws();
            let Some(&b) = self.bytes.get(self.pos) else {
                return if expect == Expect::AfterValue && self.open.is_empty() {
                    Ok(())
                } else {
                    Err(self.syntax("unexpected end of input"))
                };
            };
            expect = match expect {
                Expect::Value => self.value(b)?,
                Expect::ValueOrArrayEnd if b == b']' => self.close()?,
                Expect::ValueOrArrayEnd => self.value(b)?,
                Expect::KeyOrObjectEnd if b == b'}' => self.close()?,
                Expect::KeyOrObjectEnd | Expect::Key => self.key(b)?,
                Expect::AfterValue => self.after_value(b)?,
            };
        }
    }

    /// `,` or a closing bracket after a value.
    fn after_value(&mut self, b: u8) -> Result<Expect, JsonError> {
        let Some(&top) = self.open.last() else {
            return Err(self.syntax("trailing characters after the JSON value"));
        };
        let in_object = self.nodes[top as usize].kind == NodeKind::Object;
        match (b, in_object) {
            (b',', true) => {
                self.pos += 1;
                Ok(Expect::Key)
            }
            (b',', false) => {
                self.pos += 1;
                Ok(Expect::Value)
            }
            (b'}', true) | (b']', false) => self.close(),
            (_, true) => Err(self.syntax("expected ',' or '}'")),
            (_, false) => Err(self.syntax("expected ',' or ']'")),
        }
    }

    /// A key, then `:`.
    fn key(&mut self, b: u8) -> Result<Expect, JsonError> {
        if b != b'"' {
            return Err(self.syntax("expected a string key"));
        }
        let (start, end, escaped) = self.string_body()?;
        self.skip_ws();
        if self.bytes.get(self.pos) != Some(&b':') {
            return Err(self.syntax("expected ':'"));
        }
        self.pos += 1;
        self.pending_key = Some((start, end, escaped));
        Ok(Expect::Value)
    }

    fn push(&mut self, kind: NodeKind, start: usize, end: usize, escaped: bool) -> u32 {
        let (key_start, key_end, key_escaped) =
            self.pending_key.take().unwrap_or((NO_KEY, NO_KEY, false));
        let index = self.nodes.len() as u32;
        self.nodes.push(Node {
            kind,
            start: start as u32,
            end: end as u32,
            key_start,
            key_end,
            parent: self.open.last().copied().unwrap_or(0),
            subtree_end: index + 1,
            escaped,
            key_escaped,
        });
        index
    }

    fn value(&mut self, b: u8) -> Result<Expect, JsonError> {
        let start = self.pos;
        match b {
            b'{' | b'[' => {
                if self.open.len() >= self.limits.max_depth {
                    return Err(JsonError::TooDeep {
                        offset: start,
                        limit: self.limits.max_depth,
                    });
                }
                let kind = if b == b'{' {
                    NodeKind::Object
                } else {
                    NodeKind::Array
                };
                let index = self.push(kind, start, start + 1, false);
                self.open.push(index);
                self.pos += 1;
                Ok(if b == b'{' {
                    Expect::KeyOrObjectEnd
                } else {
                    Expect::ValueOrArrayEnd
                })
            }
            b'"' => {
                let (s, e, escaped) = self.string_body()?;
                self.push(NodeKind::String, s as usize, e as usize, escaped);
                Ok(Expect::AfterValue)
            }
            b't' => self.literal(b"true", NodeKind::True),
            b'f' => self.literal(b"false", NodeKind::False),
            b'n' => self.literal(b"null", NodeKind::Null),
            b'-' | b'0'..=b'9' => {
                self.number()?;
                self.push(NodeKind::Number, start, self.pos, false);
                Ok(Expect::AfterValue)
            }
            _ => Err(self.syntax("expected a value")),
        }
    }

    fn literal(&mut self, word: &'static [u8], kind: NodeKind) -> Result<Expect, JsonError> {
        let start = self.pos;
        if self.bytes.get(start..start + word.len()) != Some(word) {
            return Err(self.syntax("invalid literal"));
        }
        self.pos += word.len();
        self.push(kind, start, self.pos, false);
        Ok(Expect::AfterValue)
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while self.bytes.get(self.pos).is_some_and(u8::is_ascii_digit) {
            self.pos += 1;
        }
        self.pos - start
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    fn number(&mut self) -> Result<(), JsonError> {
        if self.bytes.get(self.pos) == Some(&b'-') {
            self.pos += 1;
        }
        match self.bytes.get(self.pos) {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.syntax("invalid number")),
        }
        if self.bytes.get(self.pos) == Some(&b'.') {
            self.pos += 1;
            if self.digits() == 0 {
                return Err(self.syntax("invalid number: digits expected after '.'"));
            }
        }
        if let Some(b'e' | b'E') = self.bytes.get(self.pos) {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.bytes.get(self.pos) {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(self.syntax("invalid number: digits expected in exponent"));
            }
        }
        Ok(())
    }

    /// Reads a string starting at the opening quote; returns the span inside
    /// the quotes and whether it holds an escape. Escapes are checked for
    /// grammar here; surrogate pairing is checked when the string is decoded.
    fn string_body(&mut self) -> Result<(u32, u32, bool), JsonError> {
        self.pos += 1;
        let start = self.pos;
        let mut escaped = false;
        loop {
            // Plain bytes are skipped eight at a time.
            self.pos = find_special(self.bytes, self.pos);
            let Some(&b) = self.bytes.get(self.pos) else {
                return Err(self.syntax("unterminated string"));
            };
            match b {
                b'"' => {
                    let end = self.pos;
                    self.pos += 1;
                    return Ok((start as u32, end as u32, escaped));
                }
                b'\\' => {
                    escaped = true;
                    let step = match self.bytes.get(self.pos + 1) {
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => 2,
                        Some(b'u')
                            if self
                                .bytes
                                .get(self.pos + 2..self.pos + 6)
                                .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) =>
                        {
                            6
                        }
                        _ => return Err(JsonError::BadEscape { offset: self.pos }),
                    };
                    self.pos += step;
                }
                _ => return Err(self.syntax("control character in string")),
            }
        }
    }

    /// Closes the innermost container at its bracket.
    fn close(&mut self) -> Result<Expect, JsonError> {
        let Some(index) = self.open.pop() else {
            return Err(self.syntax("unbalanced bracket"));
        };
        self.pos += 1;
        let count = self.nodes.len() as u32;
        let node = &mut self.nodes[index as usize];
        node.end = self.pos as u32;
        node.subtree_end = count;
        Ok(Expect::AfterValue)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn strings_of(doc: &Document<'_>) -> Vec<String> {
        doc.strings()
            .map(|n| doc.str_value(n).unwrap().unwrap().into_owned())
            .collect()
    }

    #[test]
    fn nodes_keep_spans_keys_and_order() {
        let src = br#" {"a": [1, "x\"y", {"b": null}], "c\u0041": "z", "a": true} "#;
        let doc = Document::parse(src).unwrap();
        let root = doc.root();
        assert_eq!(doc.kind(root), NodeKind::Object);
        assert_eq!(doc.raw(root), &src[1..src.len() - 1]);
        let a = doc.get_all(root, "a").collect::<Vec<_>>();
        assert_eq!(a.len(), 2, "both occurrences of a repeated key");
        assert_eq!(doc.get(root, "a"), Some(a[1]), "get keeps the last");
        assert_eq!(doc.kind(a[0]), NodeKind::Array);
        let items: Vec<_> = doc.children(a[0]).collect();
        assert_eq!(items.len(), 3);
        assert_eq!(doc.raw(items[0]), b"1");
        assert_eq!(doc.raw(items[1]), br#"x\"y"#);
        assert!(doc.is_escaped(items[1]));
        assert_eq!(doc.str_value(items[1]).unwrap().unwrap(), "x\"y");
        let b = doc.get(items[2], "b").unwrap();
        assert_eq!(doc.kind(b), NodeKind::Null);
        assert_eq!(
            doc.path(b),
            vec![PathSeg::Key(b"a"), PathSeg::Index(2), PathSeg::Key(b"b")]
        );
        // An escaped key still matches its decoded name.
        let ca = doc.get(root, "cA").unwrap();
        assert!(doc.string_is(ca, "z"));
        assert_eq!(strings_of(&doc), vec!["x\"y", "z"]);
        assert_eq!(doc.parent(b), Some(items[2]));
        assert_eq!(doc.parent(root), None);
    }

    #[test]
    fn scalars_and_empty_containers() {
        for (src, kind) in [
            (&b"0"[..], NodeKind::Number),
            (b"-0.5e+10", NodeKind::Number),
            (b"1E5", NodeKind::Number),
            (b"true", NodeKind::True),
            (b"false", NodeKind::False),
            (b"null", NodeKind::Null),
            (b"\"\"", NodeKind::String),
            (b"{}", NodeKind::Object),
            (b"[ ]", NodeKind::Array),
        ] {
            let doc = Document::parse(src).unwrap();
            assert_eq!(doc.kind(doc.root()), kind, "{src:?}");
            assert_eq!(doc.children(doc.root()).count(), 0);
        }
    }

    #[test]
    fn invalid_documents_name_the_offset() {
        let cases: &[(&[u8], usize)] = &[
            (b"", 0),
            (b"{", 1),
            (b"[1,]", 3),
            (b"{\"a\" 1}", 5),
            (b"{\"a\":1,}", 7),
            (b"[1 2]", 3),
            (b"01", 1),
            (b"1.", 2),
            (b"1e", 2),
            (b"-", 1),
            (b"tru", 0),
            (b"nul", 0),
            (b"\"abc", 4),
            (b"\"a\\qb\"", 2),
            (b"\"a\\u12\"", 2),
            (b"\"a\nb\"", 2),
            (b"[1]]", 3),
            (b"{}x", 2),
            (b"{1:2}", 1),
            (b"[\"\xff\"]", 2),
            (b"]", 0),
        ];
        for (src, offset) in cases {
            let err = Document::parse(src).unwrap_err();
            let found = match err {
                JsonError::Syntax { offset, .. }
                | JsonError::BadEscape { offset }
                | JsonError::NotUtf8 { offset } => offset,
                other => panic!("{src:?}: {other:?}"),
            };
            assert_eq!(found, *offset, "{src:?}: {err}");
        }
    }

    #[test]
    fn deep_nesting_is_refused_cleanly_or_parsed_without_recursion() {
        let depth = 10_000;
        let mut src = "[".repeat(depth);
        src.push_str("\"deep\"");
        src.push_str(&"]".repeat(depth));
        let err = Document::parse(src.as_bytes()).unwrap_err();
        assert_eq!(
            err,
            JsonError::TooDeep {
                offset: DEFAULT_MAX_DEPTH,
                limit: DEFAULT_MAX_DEPTH
            }
        );
        assert!(err.to_string().contains("byte 512"));
        let doc = Document::parse_with(src.as_bytes(), Limits { max_depth: depth }).unwrap();
        assert_eq!(strings_of(&doc), vec!["deep"]);
        let leaf = doc.strings().next().unwrap();
        assert_eq!(doc.path(leaf).len(), depth);
        // Objects too.
        let mut obj = "{\"k\":".repeat(depth);
        obj.push('1');
        obj.push_str(&"}".repeat(depth));
        let doc = Document::parse_with(obj.as_bytes(), Limits { max_depth: depth }).unwrap();
        assert_eq!(doc.len(), depth + 1);
        assert!(Document::parse_with(
            obj.as_bytes(),
            Limits {
                max_depth: depth - 1
            }
        )
        .is_err());
    }

    proptest::proptest! {
        /// Whatever serde_json writes, we parse, with the same strings in the same order.
        #[test]
        fn agrees_with_serde_json(value in crate::json::document::tests::arb_json()) {
            let text = serde_json::to_string_pretty(&value).unwrap();
            let doc = Document::parse(text.as_bytes()).unwrap();
            let mut expected = Vec::new();
            let mut stack = vec![&value];
            // serde_json's map is ordered by key; collect in document order by walking the text.
            while let Some(v) = stack.pop() {
                match v {
                    serde_json::Value::String(s) => expected.push(s.clone()),
                    serde_json::Value::Array(items) => stack.extend(items.iter().rev()),
                    serde_json::Value::Object(map) => stack.extend(map.values().rev()),
                    _ => {}
                }
            }
            proptest::prop_assert_eq!(strings_of(&doc), expected);
        }
    }

    proptest::proptest! {
        /// Every node's raw text is what checking its raw bytes as UTF-8
        /// again gives (non-ASCII strings, escapes, compact and pretty).
        #[test]
        fn raw_str_is_the_raw_bytes_checked_again(
            value in crate::json::document::tests::arb_json(),
            pretty in proptest::bool::ANY,
        ) {
            let text = if pretty {
                serde_json::to_string_pretty(&value).unwrap()
            } else {
                serde_json::to_string(&value).unwrap()
            };
            let doc = Document::parse(text.as_bytes()).unwrap();
            for node in doc.nodes() {
                let again = std::str::from_utf8(doc.raw(node)).ok();
                proptest::prop_assert!(again.is_some());
                proptest::prop_assert_eq!(doc.raw_str(node), again);
            }
        }
    }

    pub(crate) fn arb_json() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::Bool),
            any::<i64>().prop_map(|n| serde_json::Value::Number(n.into())),
            "\\PC{0,12}".prop_map(serde_json::Value::String),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::Array),
                prop::collection::btree_map("[a-z]{1,6}", inner, 0..6)
                    .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
            ]
        })
    }
}
