//! A text that arrives in fragments (one content slot of a stream, or a
//! whole string value at once), restored as plain text or as JSON text.
//!
//! Which one is decided by the text itself: when its first non-whitespace
//! char is `{` or `[` it is JSON text (tool-call arguments, structured
//! output). In JSON text, the body of every string is decoded (a surrogate
//! may be written `Jos\u00e9` or around a `\"`) and a restored value is
//! JSON-escaped there; the text between strings is restored as plain text
//! (in valid JSON it holds no surrogate, in broken JSON it may).
//! The whole-body restore and the streamed restore apply the same rule, so a
//! stream restores exactly as its whole answer does.

use super::held_text::{Escaping, HeldText};
use super::policy::RestoreView;
use super::RestoreStats;

/// One text restored fragment by fragment.
pub(crate) struct FragmentRestorer {
    mode: Mode,
}

enum Mode {
    /// Only whitespace so far.
    Undecided,
    Plain(Box<HeldText>),
    Json(Box<JsonText>),
}

/// JSON text: where we are (inside a string or not) and one held run for
/// each.
struct JsonText {
    in_string: bool,
    /// Inside a string, the last char was an unpaired backslash.
    escaped: bool,
    between: HeldText,
    string: HeldText,
}

impl Default for FragmentRestorer {
    fn default() -> Self {
        FragmentRestorer {
            mode: Mode::Undecided,
        }
    }
}

impl FragmentRestorer {
    /// Bytes held back.
    pub(crate) fn held_len(&self) -> usize {
        match &self.mode {
            Mode::Undecided => 0,
            Mode::Plain(run) => run.held_len(),
            Mode::Json(json) => json.between.held_len() + json.string.held_len(),
        }
    }

    /// Adds a fragment; appends to `out` the restored text that is final.
    pub(crate) fn push(
        &mut self,
        view: &RestoreView<'_>,
        mut text: &str,
        out: &mut Vec<u8>,
    ) -> RestoreStats {
        if let Mode::Undecided = self.mode {
            let rest = text.trim_start();
            out.extend_from_slice(&text.as_bytes()[..text.len() - rest.len()]);
            text = rest;
            match text.as_bytes().first() {
                None => return RestoreStats::default(),
                Some(b'{' | b'[') => {
                    self.mode = Mode::Json(Box::new(JsonText {
                        in_string: false,
                        escaped: false,
                        between: HeldText::new(Escaping::Plain),
                        string: HeldText::new(Escaping::JsonString),
                    }))
                }
                Some(_) => self.mode = Mode::Plain(Box::new(HeldText::new(Escaping::Plain))),
            }
        }
        match &mut self.mode {
            Mode::Undecided => RestoreStats::default(),
            Mode::Plain(run) => run.push(view, text, out),
            Mode::Json(json) => json.push(view, text, out),
        }
    }

    /// The text ends: appends everything held.
    pub(crate) fn finish(&mut self, view: &RestoreView<'_>, out: &mut Vec<u8>) -> RestoreStats {
        let stats = match &mut self.mode {
            Mode::Undecided => RestoreStats::default(),
            Mode::Plain(run) => run.finish(view, out),
            Mode::Json(json) => {
                let mut stats = json.between.finish(view, out);
                stats += json.string.finish(view, out);
                stats
            }
        };
        self.mode = Mode::Undecided;
        stats
    }
}

impl JsonText {
    fn push(&mut self, view: &RestoreView<'_>, text: &str, out: &mut Vec<u8>) -> RestoreStats {
        let mut stats = RestoreStats::default();
        let mut rest = text;
        while !rest.is_empty() {
            if self.in_string {
                match self.closing_quote(rest) {
                    Some(at) => {
                        stats += self.string.push(view, &rest[..at], out);
                        stats += self.string.finish(view, out);
                        out.push(b'"');
                        self.in_string = false;
                        self.between.restart();
                        rest = &rest[at + 1..];
                    }
                    None => {
                        stats += self.string.push(view, rest, out);
                        rest = "";
                    }
                }
            } else {
                match rest.find('"') {
                    Some(at) => {
                        stats += self.between.push(view, &rest[..at], out);
                        stats += self.between.finish(view, out);
                        out.push(b'"');
                        self.in_string = true;
                        self.escaped = false;
                        self.string.restart();
                        rest = &rest[at + 1..];
                    }
                    None => {
                        stats += self.between.push(view, rest, out);
                        rest = "";
                    }
                }
            }
        }
        stats
    }

    /// The offset of the quote that closes the string in `text`, if any;
    /// otherwise remembers whether `text` ends in an unpaired backslash.
    fn closing_quote(&mut self, text: &str) -> Option<usize> {
        for (i, b) in text.bytes().enumerate() {
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                return Some(i);
            }
        }
        None
    }
}

/// Restores a whole text at once with the same rules as a stream.
pub(crate) fn restore_whole(view: &RestoreView<'_>, text: &str, out: &mut Vec<u8>) -> RestoreStats {
    let mut fragment = FragmentRestorer::default();
    let mut stats = fragment.push(view, text, out);
    stats += fragment.finish(view, out);
    stats
}
