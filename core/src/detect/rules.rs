//! Operator rules from configuration: a regex or a dictionary, each with the
//! kind it finds.
//!
//! Matches that cut a word are dropped (`Ana` in `Banana`), for both. Regex
//! rules run one by one (`regex-lite`: linear time, size-limited, and ASCII
//! classes — `\d`, `\w`, `\s` and `(?i)` cover ASCII only — for a module
//! ~420 KB smaller than with `regex` and its Unicode tables);
//! dictionary rules share one Aho-Corasick automaton searched with
//! overlapping matches, so a word-bounded entry is never hidden by an
//! unbounded one; the caller resolves the overlaps.

use super::{Finding, RuleConfig};
use crate::error::CoreError;
use crate::kind::Kind;
use crate::text::on_word_boundaries;
use aho_corasick::automaton::{Automaton, OverlappingState};
use aho_corasick::nfa::contiguous::NFA;
use aho_corasick::Input;
use std::fmt;
use std::sync::Arc;

/// Compile-size cap of one operator regex: a pathological pattern is refused
/// at configuration time instead of eating the VM's memory.
const REGEX_SIZE_LIMIT: usize = 1 << 20;
/// Cap on dictionary entries over all rules.
const MAX_DICTIONARY_ENTRIES: usize = 100_000;

/// The compiled operator rules of one configuration. Its `Debug` shows
/// counts only: dictionary entries may be people's names.
#[derive(Clone, Default)]
pub(super) struct RuleSet {
    regexes: Vec<(Kind, regex_lite::Regex)>,
    dictionary: Option<Dictionary>,
}

/// Every dictionary entry of every rule, with the kind of each entry.
#[derive(Clone)]
struct Dictionary {
    /// One automaton type for every use in the filter (the secret prefixes
    /// too): each type aho-corasick builds adds its search code to the
    /// `.wasm`. Shared, since detectors are cloned per rebuilt vault.
    automaton: Arc<NFA>,
    /// Kind of each pattern, by pattern id.
    kinds: Vec<Kind>,
}

impl fmt::Debug for RuleSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RuleSet")
            .field("regexes", &self.regexes.len())
            .field(
                "dictionary_entries",
                &self.dictionary.as_ref().map_or(0, |d| d.kinds.len()),
            )
            .finish()
    }
}

/// Compiles an operator's pattern; the error names the reason and the
/// character position where the pattern goes wrong, never its text.
fn compile_rule_regex(pattern: &str) -> Result<regex_lite::Regex, String> {
    let compile = |p: &str| {
        regex_lite::RegexBuilder::new(p)
            .size_limit(REGEX_SIZE_LIMIT)
            .build()
    };
    let err = match compile(pattern) {
        Ok(compiled) => return Ok(compiled),
        Err(err) => err,
    };
    // regex-lite's messages are fixed texts that never quote the pattern.
    let reason = err.to_string();
    if reason.contains("size limit") {
        return Err("field regex: compiles too big (over 1 MiB)".to_string());
    }
    match error_position(pattern, &reason, compile) {
        Some(at) => Err(format!("field regex: {reason} at character {at}")),
        None => Err(format!("field regex: {reason}")),
    }
}

/// Where a pattern goes wrong: regex-lite reports no position, so this is
/// the shortest prefix that fails with the same reason (the character that
/// ends it, counted from 1). Patterns are compiled once, at configuration,
/// and this runs only on a bad one; a long one gets no position.
fn error_position<E: std::fmt::Display>(
    pattern: &str,
    reason: &str,
    compile: impl Fn(&str) -> Result<regex_lite::Regex, E>,
) -> Option<usize> {
    const MAX_SEARCHED: usize = 512;
    if pattern.chars().count() > MAX_SEARCHED {
        return None;
    }
    let ends = pattern
        .char_indices()
        .map(|(at, c)| at + c.len_utf8())
        .enumerate();
    for (index, end) in ends {
        if compile(&pattern[..end]).is_err_and(|e| e.to_string() == reason) {
            return Some(index + 1);
        }
    }
    None
}

impl RuleSet {
    /// Compiles `rules`; a bad rule is named by its index and field.
    pub(super) fn new(rules: &[RuleConfig]) -> Result<Self, CoreError> {
        let mut regexes = Vec::new();
        let mut entries: Vec<&str> = Vec::new();
        let mut kinds = Vec::new();
        for (index, rule) in rules.iter().enumerate() {
            let bad = |reason: &str| CoreError::BadRule {
                index,
                reason: reason.to_string(),
            };
            let kind = Kind::parse(&rule.kind).ok_or_else(|| {
                bad("field kind: not a built-in kind nor a valid custom name ([a-z][a-z0-9_-]{0,31})")
            })?;
            match (&rule.regex, &rule.dictionary) {
                (Some(pattern), None) => {
                    if pattern.is_empty() {
                        return Err(bad("field regex: empty"));
                    }
                    let compiled = compile_rule_regex(pattern).map_err(|reason| bad(&reason))?;
                    regexes.push((kind, compiled));
                }
                (None, Some(words)) => {
                    if words.is_empty() {
                        return Err(bad("field dictionary: empty"));
                    }
                    for (position, word) in words.iter().enumerate() {
                        if word.trim().is_empty() {
                            return Err(CoreError::BadRule {
                                index,
                                reason: format!("field dictionary: entry {position} is blank"),
                            });
                        }
                        entries.push(word);
                        kinds.push(kind.clone());
                    }
                    if entries.len() > MAX_DICTIONARY_ENTRIES {
                        return Err(bad("field dictionary: too many entries over all rules"));
                    }
                }
                (Some(_), Some(_)) => {
                    return Err(bad(
                        "fields regex and dictionary: give exactly one, not both",
                    ))
                }
                (None, None) => return Err(bad("fields regex and dictionary: give exactly one")),
            }
        }
        let dictionary = if entries.is_empty() {
            None
        } else {
            let automaton = NFA::builder()
                .match_kind(aho_corasick::MatchKind::Standard)
                .build(&entries)
                .map(Arc::new)
                .map_err(|_| CoreError::BadRule {
                    index: rules.len().saturating_sub(1),
                    reason: "field dictionary: the entries do not fit in one automaton".into(),
                })?;
            Some(Dictionary { automaton, kinds })
        };
        Ok(RuleSet {
            regexes,
            dictionary,
        })
    }

    /// Appends the rules' findings in `text` to `out` (overlaps unresolved).
    pub(super) fn find(&self, text: &str, out: &mut Vec<Finding>) {
        for (kind, regex) in &self.regexes {
            for found in regex.find_iter(text) {
                if !found.is_empty() && on_word_boundaries(text, found.start(), found.end()) {
                    out.push(Finding::new(kind.clone(), found.start(), found.end()));
                }
            }
        }
        if let Some(dictionary) = &self.dictionary {
            let input = Input::new(text);
            let mut state = OverlappingState::start();
            loop {
                // Unanchored standard search: it cannot fail.
                if dictionary
                    .automaton
                    .try_find_overlapping(&input, &mut state)
                    .is_err()
                {
                    break;
                }
                let Some(found) = state.get_match() else {
                    break;
                };
                let (start, end) = (found.start(), found.end());
                if on_word_boundaries(text, start, end) {
                    if let Some(kind) = dictionary.kinds.get(found.pattern().as_usize()) {
                        out.push(Finding::new(kind.clone(), start, end));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::super::tests::spans_of;
    use super::*;

    fn rule(kind: &str, regex: Option<&str>, dictionary: Option<&[&str]>) -> RuleConfig {
        RuleConfig {
            kind: kind.into(),
            regex: regex.map(Into::into),
            dictionary: dictionary.map(|words| words.iter().map(|w| w.to_string()).collect()),
        }
    }

    #[test]
    fn rules_table() {
        let rules = [
            rule("employee-id", Some(r"EMP-\d{5}"), None),
            rule("name", None, Some(&["Ana", "Ana María", "Jürgen", "María"])),
            rule("project", None, Some(&["Project Falcon"])),
        ];
        let set = RuleSet::new(&rules).unwrap();
        let cases: &[(&str, &[(&str, &str)])] = &[
            ("ticket EMP-12345 ok", &[("EMP-12345", "employee-id")]),
            ("xEMP-12345 and EMP-123456", &[]), // cut words
            ("Banana Ana.", &[("Ana", "name")]),
            (
                "Ana María llega",
                &[("Ana", "name"), ("Ana María", "name"), ("María", "name")],
            ),
            ("Jürgens Haus; Jürgen, bitte", &[("Jürgen", "name")]),
            ("(Project Falcon)", &[("Project Falcon", "project")]),
            ("project falcon", &[]), // exact case
            ("ref emp-12345", &[]),  // regex rules are case-sensitive
            ("ref EMP-١٢٣٤٥", &[]),  // \d is ASCII digits only
        ];
        for (text, expected) in cases {
            let mut out = Vec::new();
            set.find(text, &mut out);
            out.sort_by_key(|f| (f.start, f.end));
            let got: Vec<(&str, &str)> = spans_of(text, &out)
                .into_iter()
                .zip(out.iter().map(|f| f.kind.as_str()))
                .collect();
            assert_eq!(got, *expected, "{text:?}");
        }
    }

    #[test]
    fn regex_rules_take_ascii_flags_and_classes() {
        let rules = [
            rule("badge", Some(r"(?i)badge-[a-z]{2}\d{3}"), None),
            rule("user", Some(r"\bu_\w+"), None),
        ];
        let set = RuleSet::new(&rules).unwrap();
        let mut out = Vec::new();
        set.find("BADGE-Xy123 then u_ana_1 and u_é", &mut out);
        out.sort_by_key(|f| (f.start, f.end));
        let text = "BADGE-Xy123 then u_ana_1 and u_é";
        assert_eq!(spans_of(text, &out), ["BADGE-Xy123", "u_ana_1"]);
    }

    #[test]
    fn bad_rules_are_named_by_index_and_field_without_their_content() {
        let secret_pattern = "(unclosed-SECRETPATTERN";
        let cases: &[(RuleConfig, &str)] = &[
            (rule("Bad Kind", Some("x"), None), "rule 0: field kind"),
            (
                rule("k", Some(secret_pattern), None),
                "rule 0: field regex: found open group without closing ')' at character 1",
            ),
            (
                rule("k", Some("ab)SECRETPATTERN"), None),
                "rule 0: field regex: found closing ')' without matching '(' at character 3",
            ),
            (
                rule("k", Some(r"SECRETPATTERN\p{L}"), None),
                "rule 0: field regex: Unicode character classes are not supported at character 15",
            ),
            (rule("k", Some(""), None), "rule 0: field regex: empty"),
            (
                rule("k", None, Some(&[])),
                "rule 0: field dictionary: empty",
            ),
            (
                rule("k", None, Some(&["SECRETWORD", " "])),
                "rule 0: field dictionary: entry 1 is blank",
            ),
            (
                rule("k", Some("x"), Some(&["SECRETWORD"])),
                "rule 0: fields regex and dictionary",
            ),
            (rule("k", None, None), "rule 0: fields regex and dictionary"),
            (
                rule("k", Some(r"\w{1000}{1000}"), None),
                "rule 0: field regex: compiles too big",
            ),
        ];
        for (bad, expected) in cases {
            let message = RuleSet::new(std::slice::from_ref(bad))
                .unwrap_err()
                .to_string();
            assert!(message.starts_with(expected), "{message}");
            assert!(!message.contains("SECRET"), "{message}");
        }
        let second = [rule("ok", Some("x"), None), rule("k", None, None)];
        assert!(RuleSet::new(&second)
            .unwrap_err()
            .to_string()
            .starts_with("rule 1:"));
    }
}
