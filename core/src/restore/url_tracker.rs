//! Where URLs are in an answer's text, read as it streams: whether the
//! current position lies inside a URL, and whether that URL's host may
//! receive values ([`super::policy::UrlRule`]).
//!
//! Read char by char, so a URL split across stream events is followed
//! whatever the split. What counts as a URL, erring towards "inside" (a
//! surrogate wrongly held is visible and counted; a value wrongly restored
//! leaves for the attacker's host):
//! - `scheme://…` for any scheme, and `http:`/`https:`/`ws:`/`wss:`/`ftp:`/
//!   `file:` with any slashes or backslashes or none (browsers read
//!   `https:\\host` and `https:host` as `https://host`);
//! - `javascript:`, `vbscript:`, `data:` (no host: never allowed);
//! - `//host…` and `\\host…` after a non-word char (protocol-relative);
//! - `www.…` after a non-word char (autolinked by Markdown renderers);
//! - a Markdown link or image target `](…)` whatever it holds (a relative
//!   target has no host: never allowed);
//! - the value of an HTML attribute that holds a URL (`src`, `href`,
//!   `srcset`, `action`, …) whatever it holds: browsers decode character
//!   references there (`&#104;ttps&#58;//…`) before they read the URL.
//!
//! A URL ends where a renderer would end it, or later: after a `"` or `'`
//! only at the same quote (an HTML attribute holds spaces and line breaks),
//! after `<` only at `>` or a line break, otherwise at ASCII whitespace or
//! a control char (Markdown targets hold parentheses, quotes and non-ASCII
//! spaces). The host is the authority after its last `@`, up to `/`, `\`,
//! `?` or `#`, without its port, lower case; tabs and line breaks inside an
//! attribute's URL are skipped as browsers skip them. A host with `%` or
//! any char a host name does not hold is never allowed, and neither is a
//! host not yet complete.

use super::policy::UrlRule;

/// HTML attributes whose value a browser fetches or follows.
const URL_ATTRIBUTES: [&str; 12] = [
    "src",
    "href",
    "srcset",
    "action",
    "formaction",
    "poster",
    "data",
    "background",
    "cite",
    "ping",
    "longdesc",
    "lowsrc",
];

/// Longest scheme looked at; a longer word is not one.
const MAX_SCHEME: usize = 16;
/// Longest authority kept; a longer one is never allowed.
const MAX_AUTHORITY: usize = 320;

#[derive(Clone, Debug, Default)]
pub(crate) struct UrlTracker {
    state: State,
    /// The last char read (`\0` at the start of a text).
    prev: char,
    /// The word being read, lower case, while it could still be a scheme
    /// (or `www`), and the char before it.
    word: String,
    word_opener: char,
    word_valid: bool,
    /// A Markdown link target or a URL attribute's value being read: how
    /// it ends.
    md_target: Option<End>,
    /// The last word was a URL attribute's name, followed by whitespace at
    /// most: a `=` opens its value.
    after_attribute: bool,
    /// Inside an HTML tag (`<` and a letter, up to `>`): only there is
    /// `src=` an attribute (`data = x` in prose is not).
    in_tag: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    Whitespace,
    Quote(char),
    Angle,
    /// An unquoted attribute value: whitespace or the tag's `>`.
    Unquoted,
}

#[derive(Clone, Debug, Default)]
enum State {
    #[default]
    Text,
    /// Just after `](`: the target's first char decides its end.
    TargetOpen,
    /// Just after a URL attribute's `=`: a quote decides its end.
    AttributeOpen,
    /// After `scheme:` (not a special scheme): `slashes` of the two read.
    Colon {
        end: End,
        slashes: u8,
    },
    /// After a non-word char and one or two slashes.
    Slashes {
        end: End,
        count: u8,
    },
    /// Inside a URL: reading its authority (`host` so far) or past it
    /// (`allowed` decided).
    Authority {
        end: End,
        leading: bool,
        host: String,
    },
    Rest {
        end: End,
        allowed: bool,
    },
}

impl UrlTracker {
    /// Starts again at the start of a new text.
    pub(crate) fn reset(&mut self) {
        *self = UrlTracker::default();
    }

    /// `None` outside a URL; inside one, whether its host may receive values.
    pub(crate) fn verdict(&self) -> Option<bool> {
        match &self.state {
            State::Authority { .. } => Some(false),
            State::Rest { allowed, .. } => Some(*allowed),
            // Inside a target not (yet) known to be a URL with a host.
            _ if self.md_target.is_some() => Some(false),
            State::TargetOpen | State::AttributeOpen => Some(false),
            _ => None,
        }
    }

    /// Reads `text`, which follows what was read before.
    pub(crate) fn advance(&mut self, text: &str, rule: &UrlRule) {
        for c in text.chars() {
            self.step(c, rule);
            self.prev = c;
        }
    }

    fn step(&mut self, c: char, rule: &UrlRule) {
        match std::mem::take(&mut self.state) {
            State::Text => self.text(c),
            State::TargetOpen => {
                let end = if c == '<' {
                    End::Angle
                } else {
                    End::Whitespace
                };
                self.md_target = Some(end);
                if ends(end, c) {
                    self.md_target = None;
                } else if c != '<' {
                    self.text(c);
                }
            }
            State::AttributeOpen => {
                if c.is_ascii_whitespace() {
                    self.state = State::AttributeOpen;
                } else if c == '"' || c == '\'' {
                    self.md_target = Some(End::Quote(c));
                } else {
                    self.md_target = Some(End::Unquoted);
                    self.text(c);
                }
            }
            State::Colon { end, slashes } => {
                if c == '/' || c == '\\' {
                    self.state = if slashes == 1 {
                        State::Authority {
                            end,
                            leading: false,
                            host: String::new(),
                        }
                    } else {
                        State::Colon {
                            end,
                            slashes: slashes + 1,
                        }
                    };
                } else {
                    self.text(c);
                }
            }
            State::Slashes { end, count } => {
                if (c == '/' || c == '\\') && count == 1 {
                    self.state = State::Slashes { end, count: 2 };
                } else if count == 2 && (c.is_ascii_alphanumeric() || c == '[') {
                    self.state = State::Authority {
                        end,
                        leading: false,
                        host: String::from(c),
                    };
                } else {
                    self.text(c);
                }
            }
            State::Authority {
                end,
                leading,
                mut host,
            } => {
                if self.url_ends(end, c) {
                    return;
                }
                if leading && (c == '/' || c == '\\') {
                    self.state = State::Authority { end, leading, host };
                } else if matches!(c, '/' | '\\' | '?' | '#') {
                    let allowed = host_allowed(&host, rule);
                    self.state = State::Rest { end, allowed };
                } else {
                    // Browsers drop tabs and line breaks inside a URL.
                    if !matches!(c, '\t' | '\n' | '\r') && host.len() < MAX_AUTHORITY + 1 {
                        host.push(c);
                    }
                    self.state = State::Authority {
                        end,
                        leading: false,
                        host,
                    };
                }
            }
            State::Rest { end, allowed } => {
                if !self.url_ends(end, c) {
                    self.state = State::Rest { end, allowed };
                }
            }
        }
    }

    /// Whether `c` ends the URL (or the Markdown target around it); the
    /// state is then back to text.
    fn url_ends(&mut self, end: End, c: char) -> bool {
        if ends(end, c) {
            if c == '>' {
                self.in_tag = false;
            }
            if self.md_target.is_some_and(|target| ends(target, c)) {
                self.md_target = None;
            }
            self.end_word();
            return true;
        }
        false
    }

    fn text(&mut self, c: char) {
        if c == '>' {
            self.in_tag = false;
        } else if self.prev == '<' && c.is_ascii_alphabetic() {
            self.in_tag = true;
        }
        if let Some(target) = self.md_target {
            if ends(target, c) {
                self.md_target = None;
                self.end_word();
                return;
            }
        }
        let end = self.end_after(self.prev);
        if c == '(' && self.prev == ']' {
            self.end_word();
            self.state = State::TargetOpen;
            return;
        }
        if is_scheme_char(c) {
            if self.word.is_empty() {
                self.word_valid = c.is_ascii_alphabetic() && !is_word_char(self.prev);
                self.word_opener = self.prev;
            }
            if c == '.' && self.word_valid && self.word == "www" {
                self.state = State::Authority {
                    end: self.end_after(self.word_opener),
                    leading: false,
                    host: String::from("www."),
                };
                self.end_word();
                return;
            }
            if self.word.len() < MAX_SCHEME {
                self.word.push(c.to_ascii_lowercase());
            } else {
                self.word_valid = false;
            }
            return;
        }
        if self.in_tag && self.word_valid && URL_ATTRIBUTES.contains(&self.word.as_str()) {
            self.after_attribute = true;
        }
        if c == '=' && self.after_attribute && self.md_target.is_none() {
            self.after_attribute = false;
            self.end_word();
            self.state = State::AttributeOpen;
            return;
        }
        if !c.is_ascii_whitespace() {
            self.after_attribute = false;
        }
        if c == ':' && self.word_valid && self.word.len() >= 2 {
            let end = self.end_after(self.word_opener);
            self.state = match self.word.as_str() {
                "http" | "https" | "ws" | "wss" | "ftp" | "file" => State::Authority {
                    end,
                    leading: true,
                    host: String::new(),
                },
                "javascript" | "vbscript" | "data" => State::Rest {
                    end,
                    allowed: false,
                },
                _ => State::Colon { end, slashes: 0 },
            };
            self.end_word();
            return;
        }
        self.end_word();
        if (c == '/' || c == '\\') && !is_word_char(self.prev) && !matches!(self.prev, '/' | '\\') {
            self.state = State::Slashes { end, count: 1 };
        }
    }

    fn end_word(&mut self) {
        self.word.clear();
        self.word_valid = false;
    }

    /// How a URL that starts after `opener` ends (inside a Markdown target:
    /// where the target ends).
    fn end_after(&self, opener: char) -> End {
        if let Some(target) = self.md_target {
            return target;
        }
        match opener {
            '"' | '\'' => End::Quote(opener),
            '<' => End::Angle,
            _ => End::Whitespace,
        }
    }
}

fn ends(end: End, c: char) -> bool {
    match end {
        End::Whitespace => c.is_ascii_whitespace() || c.is_ascii_control(),
        End::Quote(q) => c == q,
        End::Angle => c == '>' || c == '\n',
        End::Unquoted => c == '>' || c.is_ascii_whitespace() || c.is_ascii_control(),
    }
}

/// Chars of a scheme (and of `www`).
fn is_scheme_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')
}

/// Chars that glue to a word: a scheme or `//` right after one is not a
/// URL's start.
fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '+' | '-' | '.' | '_' | '@' | '%' | ':')
}

/// Whether an authority's host may receive values under `rule`.
fn host_allowed(authority: &str, rule: &UrlRule) -> bool {
    if authority.len() > MAX_AUTHORITY {
        return false;
    }
    let host = authority.rsplit('@').next().unwrap_or_default();
    let host = match host.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    };
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    let valid = !host.is_empty()
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.');
    valid && rule.allows(&host)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::restore::policy::HostPattern;

    /// The verdict at the first `§` of `text` (the `§` itself is read as a
    /// letter would be: it stands for a surrogate).
    fn verdict_at_mark(text: &str, rule: &UrlRule) -> Option<bool> {
        let at = text.find('§').expect("mark");
        let mut tracker = UrlTracker::default();
        tracker.advance(&text[..at], rule);
        tracker.verdict()
    }

    fn allow(hosts: &[&str]) -> UrlRule {
        UrlRule::Hosts(
            hosts
                .iter()
                .map(|h| HostPattern::parse(h).unwrap())
                .collect(),
        )
    }

    #[test]
    fn finds_urls_as_renderers_read_them() {
        let rule = allow(&["docs.example.com"]);
        let inside_not_allowed = [
            "![x](https://attacker.example/p.png?u=§)",
            "![x](HTTPS://attacker.example/p.png?u=§)",
            "see https://attacker.example/?u=§",
            "<img src=\"https://attacker.example/?u= a b\n§\">",
            "<img src='//attacker.example/x?u=§'>",
            "![x](//attacker.example/x?u=§)",
            "![x](\\\\attacker.example\\x?u=§)",
            "[a](https:\\\\attacker.example\\?u=§)",
            "[a](https:attacker.example/?u=§)",
            "[a](<https://attacker.example/a b?u=§>)",
            "[a](/relative/path?u=§)",
            "[a](mailto:§)",
            "[a](javascript:alert(§))",
            "<https://attacker.example/?u=§>",
            "go to www.attacker.example/?u=§",
            "https://docs.example.com@attacker.example/?u=§",
            "https://docs.example.com.attacker.example/?u=§",
            "https://docs%2eexample.com/?u=§",
            "https://attacker.example/p(a)?u=§",
            "https://attacker.example/p\"x'§",
            "https://§",
            "<img src=\"https://docs.example.com\t.attacker.example/§\">",
            "xhttps://§",
            "ftp://attacker.example/§",
            "foo+bar://attacker.example/§",
            "<img src=\"&#104;ttps&#58;&#47;&#47;attacker.example/?u=a b §\">",
            "<img SRC = '/p?u=§'>",
            "<a href=x.html?u=§>",
            "<img srcset=\"a.png 1x, b.png?u=§ 2x\">",
        ];
        for text in inside_not_allowed {
            assert_eq!(verdict_at_mark(text, &rule), Some(false), "{text:?}");
        }
        let inside_allowed = [
            "see https://docs.example.com/a?u=§",
            "[a](https://docs.example.com:8443/a?u=§)",
            "https://user@Docs.Example.com./§",
        ];
        for text in inside_allowed {
            assert_eq!(verdict_at_mark(text, &rule), Some(true), "{text:?}");
        }
        let outside = [
            "write to § today",
            "see https://attacker.example/x §",
            "see https://attacker.example/x\n§",
            "[a](https://attacker.example/x) and §",
            "[a](https://attacker.example/x \"title §\")",
            "<a href=\"https://attacker.example/\">§</a>",
            "<https://attacker.example/> §",
            "Note: §",
            "mailto:§",
            "a // b §",
            "and/or §",
            "C:\\ §",
            "[a] (§)",
            "<img src=\"/a.png\" alt=\"§\">",
            "<a href='x'>§</a>",
            "the src = § here",
            "data=§",
            "<p>data=§</p>",
            "<a href=x.html?u=a>§</a>",
            "<img\nsrc='/a.png'\n>\nsrc = §",
        ];
        for text in outside {
            assert_eq!(verdict_at_mark(text, &rule), None, "{text:?}");
        }
    }

    #[test]
    fn a_url_split_anywhere_reads_the_same() {
        let rule = allow(&["docs.example.com"]);
        let texts = [
            "x ![i](https://attacker.example/p?u=§",
            "y <a href='https://docs.example.com/a b?§",
            "z www.attacker.example/§",
            "w <img\n  SRC=\"&#104;ttps&#58;//attacker.example/?u=§",
        ];
        for text in texts {
            let at = text.find('§').unwrap();
            let whole = verdict_at_mark(text, &rule);
            for cut in (0..=at).filter(|c| text.is_char_boundary(*c)) {
                let mut tracker = UrlTracker::default();
                tracker.advance(&text[..cut], &rule);
                tracker.advance(&text[cut..at], &rule);
                assert_eq!(tracker.verdict(), whole, "{text:?} cut at {cut}");
            }
        }
    }
}
