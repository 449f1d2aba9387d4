//! Rewriting only the spans that changed: every other byte is copied as it
//! came.

use super::error::JsonError;
use super::escape::encode_into;
use std::ops::Range;

/// A set of byte-range replacements over one input.
#[derive(Clone, Debug, Default)]
pub struct Splice {
    edits: Vec<Edit>,
}

#[derive(Clone, Debug)]
struct Edit {
    start: usize,
    end: usize,
    replacement: Vec<u8>,
}

impl Splice {
    /// No edits yet.
    pub fn new() -> Self {
        Splice::default()
    }

    /// Replaces `range` of the input with `replacement` (raw bytes).
    pub fn replace(&mut self, range: Range<usize>, replacement: Vec<u8>) {
        self.edits.push(Edit {
            start: range.start,
            end: range.end,
            replacement,
        });
    }

    /// Replaces the raw body of a JSON string (`span` inside the quotes)
    /// with `text`, escaped minimally.
    pub fn replace_string(&mut self, span: Range<usize>, text: &str) {
        let mut encoded = Vec::with_capacity(text.len() + 8);
        encode_into(text, &mut encoded);
        self.replace(span, encoded);
    }

    /// How many edits are recorded.
    pub fn len(&self) -> usize {
        self.edits.len()
    }

    /// Whether no edit is recorded (applying would copy the input).
    pub fn is_empty(&self) -> bool {
        self.edits.is_empty()
    }

    /// The input with every edit applied. Edits may be recorded in any order
    /// but must not overlap or reach past the input.
    pub fn apply(mut self, input: &[u8]) -> Result<Vec<u8>, JsonError> {
        crate::sort::sort_by_key(&mut self.edits, |e| (e.start, e.end));
        let grown: usize = self.edits.iter().map(|e| e.replacement.len()).sum();
        let mut out = Vec::with_capacity(input.len() + grown);
        let mut copied_to = 0;
        for edit in &self.edits {
            if edit.start < copied_to || edit.end < edit.start || edit.end > input.len() {
                return Err(JsonError::BadEdit { offset: edit.start });
            }
            out.extend_from_slice(&input[copied_to..edit.start]);
            out.extend_from_slice(&edit.replacement);
            copied_to = edit.end;
        }
        out.extend_from_slice(&input[copied_to..]);
        Ok(out)
    }

    /// [`Splice::apply`] over a UTF-8 text; the result must be UTF-8 too
    /// (edits cut on char boundaries).
    pub fn apply_str(self, input: &str) -> Result<String, JsonError> {
        let bytes = self.apply(input.as_bytes())?;
        String::from_utf8(bytes).map_err(|e| JsonError::NotUtf8 {
            offset: e.utf8_error().valid_up_to(),
        })
    }
}

/// Rewrites strings of one input in document order, straight into the
/// output: no edit list and no copy of each replacement. Nothing is
/// allocated until the first replacement; bytes between replacements are
/// copied as they came.
#[derive(Debug)]
pub struct InOrderSplice<'a> {
    input: &'a [u8],
    out: Vec<u8>,
    copied_to: usize,
    changed: bool,
}

impl<'a> InOrderSplice<'a> {
    /// A splice over `input` with no replacement yet.
    pub fn new(input: &'a [u8]) -> Self {
        InOrderSplice {
            input,
            out: Vec::new(),
            copied_to: 0,
            changed: false,
        }
    }

    /// Replaces the raw body of a JSON string (`span` inside the quotes)
    /// with `text`: escaped minimally, or copied as it is when `plain`
    /// (the caller knows `text` holds nothing to escape, see
    /// [`super::needs_escape`]). Spans must come in increasing order,
    /// without overlap, inside the input.
    pub fn replace_string(
        &mut self,
        span: Range<usize>,
        text: &str,
        plain: bool,
    ) -> Result<(), JsonError> {
        if span.start < self.copied_to || span.end < span.start || span.end > self.input.len() {
            return Err(JsonError::BadEdit { offset: span.start });
        }
        if !self.changed {
            self.changed = true;
            self.out
                .reserve(self.input.len() + self.input.len() / 16 + 64);
        }
        self.out
            .extend_from_slice(&self.input[self.copied_to..span.start]);
        if plain {
            self.out.extend_from_slice(text.as_bytes());
        } else {
            encode_into(text, &mut self.out);
        }
        self.copied_to = span.end;
        Ok(())
    }

    /// Replaces `span` of the input with `raw` as it is (a number's
    /// token, or a string written with its quotes). Same order rule as
    /// [`InOrderSplice::replace_string`].
    pub fn replace_raw(&mut self, span: Range<usize>, raw: &[u8]) -> Result<(), JsonError> {
        if span.start < self.copied_to || span.end < span.start || span.end > self.input.len() {
            return Err(JsonError::BadEdit { offset: span.start });
        }
        if !self.changed {
            self.changed = true;
            self.out
                .reserve(self.input.len() + self.input.len() / 16 + 64);
        }
        self.out
            .extend_from_slice(&self.input[self.copied_to..span.start]);
        self.out.extend_from_slice(raw);
        self.copied_to = span.end;
        Ok(())
    }

    /// Whether no replacement was made.
    pub fn is_empty(&self) -> bool {
        !self.changed
    }

    /// The rewritten input, or `None` when nothing was replaced.
    pub fn finish(mut self) -> Option<Vec<u8>> {
        if !self.changed {
            return None;
        }
        self.out.extend_from_slice(&self.input[self.copied_to..]);
        Some(self.out)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::json::Document;

    #[test]
    fn only_changed_spans_move() {
        let src = br#"{ "model" : "m-1",  "text":"Jos\u00e9 said \"hi\"" , "n": 1.50 }"#;
        let doc = Document::parse(src).unwrap();
        let text = doc.get(doc.root(), "text").unwrap();
        let mut splice = Splice::new();
        let value = doc.str_value(text).unwrap().unwrap();
        assert_eq!(value, "José said \"hi\"");
        splice.replace_string(doc.span(text), &value.replace("José", "Ana\\"));
        let out = splice.apply(src).unwrap();
        assert_eq!(
            out,
            br#"{ "model" : "m-1",  "text":"Ana\\ said \"hi\"" , "n": 1.50 }"#
        );
        assert_eq!(Splice::new().apply(src).unwrap(), src);
    }

    #[test]
    fn in_order_splice_matches_splice() {
        let src = br#"{"a":"one","b":"t\nwo","c":"three"}"#;
        let doc = Document::parse(src).unwrap();
        let strings: Vec<_> = doc.strings().collect();
        let replacements = ["x\"y", "", "plain é"];
        let mut splice = Splice::new();
        let mut in_order = InOrderSplice::new(src);
        for (node, text) in strings.iter().zip(replacements) {
            splice.replace_string(doc.span(*node), text);
            let plain = !crate::json::needs_escape(text);
            in_order
                .replace_string(doc.span(*node), text, plain)
                .unwrap();
        }
        let expected = splice.apply(src).unwrap();
        assert_eq!(
            expected,
            r#"{"a":"x\"y","b":"","c":"plain é"}"#.as_bytes().to_vec()
        );
        assert_eq!(in_order.finish().unwrap(), expected);
        assert_eq!(InOrderSplice::new(src).finish(), None);
        // Out of order and past the end are refused.
        let mut in_order = InOrderSplice::new(src);
        in_order.replace_string(6..9, "z", true).unwrap();
        assert_eq!(
            in_order.replace_string(1..2, "z", true),
            Err(JsonError::BadEdit { offset: 1 })
        );
        assert_eq!(
            in_order.replace_string(30..99, "z", true),
            Err(JsonError::BadEdit { offset: 30 })
        );
    }

    #[test]
    fn edits_apply_in_any_order_and_overlaps_are_refused() {
        let mut splice = Splice::new();
        splice.replace(4..5, b"E".to_vec());
        splice.replace(0..1, b"AA".to_vec());
        assert_eq!(splice.apply(b"abcdef").unwrap(), b"AAbcdEf");
        let mut splice = Splice::new();
        splice.replace(0..3, Vec::new());
        splice.replace(2..4, Vec::new());
        assert_eq!(
            splice.apply(b"abcdef"),
            Err(JsonError::BadEdit { offset: 2 })
        );
        let mut splice = Splice::new();
        splice.replace(5..9, Vec::new());
        assert_eq!(
            splice.apply(b"abcdef"),
            Err(JsonError::BadEdit { offset: 5 })
        );
    }
}
