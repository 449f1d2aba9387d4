//! One run of text restored as it streams in: what is final is emitted with
//! its surrogates restored, the tail that could still become a surrogate is
//! held until more text (or the end of the run) decides it.
//!
//! The text may be written plainly or as the body of a JSON string (escapes
//! such as `\u00e9` or `\"`, possibly cut in the middle). Held and emitted
//! text keeps the bytes it came with; only a restored surrogate is replaced,
//! by its value escaped the way the run is written.

use super::policy::{Admit, RestoreView};
use super::url_tracker::UrlTracker;
use super::RestoreStats;
use crate::json::encode_into;
use crate::snapshot::VaultMatch;

/// How a run of text is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Escaping {
    /// As is: every byte is its own text.
    Plain,
    /// The body of a JSON string: escapes are decoded to find surrogates,
    /// and a restored value is JSON-escaped.
    JsonString,
}

/// Already-emitted text kept to count a retired surrogate that straddles an
/// emit point once (when its end is emitted), and to know the char before
/// held text (word boundaries).
const LOOKBEHIND: usize = 256;

/// A run of text being restored incrementally.
pub(crate) struct HeldText {
    escaping: Escaping,
    /// Raw text (as written) not yet emitted: a tail that may still become a
    /// surrogate, and any escape cut in the middle.
    held: String,
    /// The end of the decoded text already emitted (at most [`LOOKBEHIND`]
    /// bytes, cut on a char boundary).
    before: String,
    /// Where the emitted text leaves off in URLs.
    urls: UrlTracker,
    // Scratch space reused between calls.
    search: String,
    raw_at: Vec<usize>,
    matches: Vec<VaultMatch>,
    retired: Vec<(usize, usize)>,
}

impl HeldText {
    pub(crate) fn new(escaping: Escaping) -> Self {
        HeldText {
            escaping,
            held: String::new(),
            before: String::new(),
            urls: UrlTracker::default(),
            search: String::new(),
            raw_at: Vec::new(),
            matches: Vec::new(),
            retired: Vec::new(),
        }
    }

    /// Raw bytes held back.
    pub(crate) fn held_len(&self) -> usize {
        self.held.len()
    }

    /// Forgets what was emitted before: the next text starts a new run
    /// (after a quote, say, which is never part of a word).
    pub(crate) fn restart(&mut self) {
        self.before.clear();
        self.urls.reset();
    }

    /// Adds `raw` to the run and emits into `out` everything that is final.
    pub(crate) fn push(
        &mut self,
        view: &RestoreView<'_>,
        raw: &str,
        out: &mut Vec<u8>,
    ) -> RestoreStats {
        self.held.push_str(raw);
        self.emit(view, false, out)
    }

    /// The run ends here (the end is a word boundary): emits everything held.
    pub(crate) fn finish(&mut self, view: &RestoreView<'_>, out: &mut Vec<u8>) -> RestoreStats {
        let stats = self.emit(view, true, out);
        self.restart();
        stats
    }

    /// Restores a whole run at once (nothing held before, nothing after).
    pub(crate) fn restore_all(
        &mut self,
        view: &RestoreView<'_>,
        raw: &str,
        out: &mut Vec<u8>,
    ) -> RestoreStats {
        self.held.push_str(raw);
        self.finish(view, out)
    }

    fn emit(&mut self, view: &RestoreView<'_>, at_end: bool, out: &mut Vec<u8>) -> RestoreStats {
        let mut stats = RestoreStats::default();
        if self.held.is_empty() {
            return stats;
        }
        // With no active surrogate, nothing can need holding (not even an
        // escape cut in the middle): pass the text as it came.
        let at_end = at_end || view.max_surrogate_len() == 0;
        // The text searched: what was emitted before (retired surrogates
        // may have started there), then the held text decoded. Active
        // surrogates are looked for from the last char emitted (word
        // boundary) on.
        self.search.clear();
        self.search.push_str(&self.before);
        let before = self.search.len();
        let ctx = self
            .before
            .chars()
            .next_back()
            .map_or(before, |c| before - c.len_utf8());
        decode_mapped(
            &self.held,
            self.escaping,
            at_end,
            &mut self.search,
            &mut self.raw_at,
        );
        let decoded_end = self.search.len();
        let active_text = &self.search[ctx..];
        let mut cut = if at_end {
            decoded_end
        } else {
            ctx + view.surrogate_holdback(active_text)
        }
        .clamp(before, decoded_end);
        self.matches.clear();
        view.find_surrogates(active_text, &mut self.matches);
        self.retired.clear();
        view.find_retired(&self.search, &mut self.retired);
        let mut raw_pos = 0;
        let track_urls = view.tracks_urls();
        // The URL tracker has read the text up to `url_at` (of `search`).
        let mut url_at = before;
        for m in &self.matches {
            let (start, end) = (ctx + m.start, ctx + m.end);
            if start < before {
                continue;
            }
            if start >= cut {
                break;
            }
            // A complete match that starts before the hold point is final.
            cut = cut.max(end);
            if held_by_retired(&self.search, &self.retired, start, end) {
                continue; // part of a retired surrogate: left as written
            }
            let in_url = if track_urls {
                if start > url_at {
                    self.urls.advance(&self.search[url_at..start], view.urls());
                    url_at = start;
                }
                self.urls.verdict()
            } else {
                None
            };
            let entry = match view.admit(m.slot, in_url) {
                Admit::Restore(entry) => entry,
                other => {
                    stats.count_declined(&other);
                    continue;
                }
            };
            let raw_start = self.raw_at[start - before];
            out.extend_from_slice(&self.held.as_bytes()[raw_pos..raw_start]);
            match self.escaping {
                Escaping::Plain => out.extend_from_slice(entry.value.as_bytes()),
                Escaping::JsonString => encode_into(entry.value, out),
            }
            raw_pos = self.raw_at[end - before];
            stats.restored += 1;
        }
        let raw_cut = if at_end {
            self.held.len()
        } else {
            self.raw_at[cut - before]
        };
        out.extend_from_slice(&self.held.as_bytes()[raw_pos..raw_cut]);
        if track_urls && cut > url_at {
            self.urls.advance(&self.search[url_at..cut], view.urls());
        }
        // A retired surrogate is counted once: when its end is emitted.
        stats.declined_retired = self
            .retired
            .iter()
            .filter(|(_, end)| *end > before && *end <= cut)
            .count();
        self.held.drain(..raw_cut);
        self.remember_emitted(cut);
        stats
    }

    /// Keeps the end of `search[..cut]` (what is now emitted) as `before`.
    fn remember_emitted(&mut self, cut: usize) {
        let mut from = cut.saturating_sub(LOOKBEHIND);
        while !self.search.is_char_boundary(from) {
            from += 1;
        }
        self.before.clear();
        self.before.push_str(&self.search[from..cut]);
    }
}

/// Whether the active surrogate at `start..end` of `text` stays as written
/// because it lies inside one of the retired surrogates `retired` (spans of
/// `text`). Not so for an address's domain: a match wholly after the last
/// `@` of a retired surrogate is the company domain's own surrogate, and
/// forgetting an address leaves its domain (rule V5,
/// docs/product-rules.md#v5), so it restores.
pub(crate) fn held_by_retired(
    text: &str,
    retired: &[(usize, usize)],
    start: usize,
    end: usize,
) -> bool {
    let bytes = text.as_bytes();
    retired.iter().any(|&(s, e)| {
        s <= start
            && end <= e
            && bytes
                .get(s..e)
                .and_then(|span| span.iter().rposition(|&b| b == b'@'))
                .is_none_or(|at| s + at >= start)
    })
}

/// Appends the decoded text of `raw` to `out`, and to `raw_at` the raw offset
/// of each decoded byte (meaningful at char starts) plus one last entry: the
/// raw length decoded. Unless `at_end`, an escape cut at the end of `raw` is
/// left undecoded (the last entry then points at it). Malformed escapes are
/// taken literally: the decoded text only serves to find surrogates.
fn decode_mapped(
    raw: &str,
    escaping: Escaping,
    at_end: bool,
    out: &mut String,
    raw_at: &mut Vec<usize>,
) {
    raw_at.clear();
    if escaping == Escaping::Plain || !raw.contains('\\') {
        out.push_str(raw);
        raw_at.extend(0..=raw.len());
        return;
    }
    let bytes = raw.as_bytes();
    let mut pos = 0;
    while pos < bytes.len() {
        let Some(rel) = bytes[pos..].iter().position(|&b| b == b'\\') else {
            out.push_str(&raw[pos..]);
            raw_at.extend(pos..bytes.len());
            pos = bytes.len();
            break;
        };
        let run_end = pos + rel;
        out.push_str(&raw[pos..run_end]);
        raw_at.extend(pos..run_end);
        pos = run_end;
        match decode_escape(bytes, pos) {
            Escape::Char(c, len) => {
                let before = out.len();
                out.push(c);
                raw_at.extend(std::iter::repeat_n(pos, out.len() - before));
                pos += len;
            }
            Escape::Cut if !at_end => break,
            Escape::Cut | Escape::Literal => {
                out.push('\\');
                raw_at.push(pos);
                pos += 1;
            }
        }
    }
    raw_at.push(pos);
}

enum Escape {
    /// A decoded char and the raw length of its escape.
    Char(char, usize),
    /// The escape is cut by the end of the text.
    Cut,
    /// Not an escape JSON defines: taken as a literal backslash.
    Literal,
}

/// Decodes the escape at `bytes[pos]` (a backslash).
fn decode_escape(bytes: &[u8], pos: usize) -> Escape {
    let Some(&kind) = bytes.get(pos + 1) else {
        return Escape::Cut;
    };
    let simple = match kind {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => return decode_unicode_escape(bytes, pos),
        _ => return Escape::Literal,
    };
    Escape::Char(simple, 2)
}

/// Decodes `\uXXXX` at `pos`, pairing UTF-16 surrogates (`\uD83D\uDE00`).
fn decode_unicode_escape(bytes: &[u8], pos: usize) -> Escape {
    let unit = match hex4(bytes, pos + 2) {
        Hex::Value(v) => v,
        Hex::Cut => return Escape::Cut,
        Hex::Bad => return Escape::Literal,
    };
    if !(0xD800..0xDC00).contains(&unit) {
        // A lone low surrogate decodes as U+FFFD.
        return Escape::Char(char::from_u32(unit).unwrap_or('\u{FFFD}'), 6);
    }
    // A high surrogate: its low half must follow as `\uDC00`–`\uDFFF`.
    let next = pos + 6;
    match (bytes.get(next), bytes.get(next + 1)) {
        (None, _) | (Some(b'\\'), None) => return Escape::Cut,
        (Some(b'\\'), Some(b'u')) => {}
        _ => return Escape::Char('\u{FFFD}', 6),
    }
    match hex4(bytes, next + 2) {
        Hex::Value(low) if (0xDC00..0xE000).contains(&low) => {
            let code = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
            Escape::Char(char::from_u32(code).unwrap_or('\u{FFFD}'), 12)
        }
        Hex::Cut => Escape::Cut,
        _ => Escape::Char('\u{FFFD}', 6),
    }
}

enum Hex {
    Value(u32),
    Cut,
    Bad,
}

fn hex4(bytes: &[u8], from: usize) -> Hex {
    let mut value = 0u32;
    for i in from..from + 4 {
        let Some(&b) = bytes.get(i) else {
            return Hex::Cut;
        };
        let Some(nibble) = (b as char).to_digit(16) else {
            return Hex::Bad;
        };
        value = (value << 4) | nibble;
    }
    Hex::Value(value)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn decoded(raw: &str, at_end: bool) -> (String, Vec<usize>) {
        let mut out = String::new();
        let mut raw_at = Vec::new();
        decode_mapped(raw, Escaping::JsonString, at_end, &mut out, &mut raw_at);
        (out, raw_at)
    }

    #[test]
    fn decodes_escapes_with_raw_offsets() {
        let (text, raw_at) = decoded(r#"a\"\u00e9\n"#, true);
        assert_eq!(text, "a\"é\n");
        // a@0, "@1, é (2 bytes)@3, \n@9, end@11
        assert_eq!(raw_at, vec![0, 1, 3, 3, 9, 11]);
    }

    #[test]
    fn pairs_utf16_surrogates() {
        let (text, raw_at) = decoded(r"x\ud83d\ude00y", true);
        assert_eq!(text, "x😀y");
        assert_eq!(raw_at[1], 1);
        assert_eq!(raw_at[5], 13);
        assert_eq!(*raw_at.last().unwrap_or(&0), 14);
    }

    #[test]
    fn leaves_a_cut_escape_undecoded_until_the_end() {
        let cases = [
            (r"ab\", "ab", 2),
            (r"ab\u00", "ab", 2),
            (r"ab\ud83d", "ab", 2),
            (r"ab\ud83d\", "ab", 2),
            (r"ab\ud83d\ude0", "ab", 2),
            (r"ab\n", "ab\n", 4),
        ];
        for (raw, text, complete) in cases {
            let (got, raw_at) = decoded(raw, false);
            assert_eq!(got, text, "{raw}");
            assert_eq!(raw_at.last().copied(), Some(complete), "{raw}");
        }
        // At the end, a cut escape is taken literally.
        let (got, _) = decoded(r"ab\u00", true);
        assert_eq!(got, r"ab\u00");
    }

    #[test]
    fn malformed_escapes_are_literal() {
        let (text, _) = decoded(r"a\x\uZZZZ\udc00", true);
        assert_eq!(text, "a\\x\\uZZZZ\u{FFFD}");
    }
}
