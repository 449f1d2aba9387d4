//! Detects a coding agent by the environment markers the usual ones set.
//! `keys forget` refuses to run inside one: the values are a person's data,
//! and an agent would send them to its model provider.

/// Variables whose presence (with any value) marks a coding agent.
pub const AGENT_VARIABLES: &[&str] = &[
    "CLAUDECODE",
    "CLAUDE_CODE_ENTRYPOINT",
    "CURSOR_AGENT",
    "CURSOR_TRACE_ID",
    "CODEX_SANDBOX",
    "CODEX_SANDBOX_NETWORK_DISABLED",
    "GEMINI_CLI",
    "OPENCODE",
    "REPL_ID_AGENT",
    "AMP_AGENT",
    "WINDSURF_AGENT",
    "GOOSE_AGENT",
    "AGENT",
];

/// Prefixes of variables that mark a coding agent.
pub const AGENT_PREFIXES: &[&str] = &["AIDER_", "CLINE_", "ROO_CODE_", "CONTINUE_AGENT"];

/// Whether `name` is an agent marker.
pub fn is_agent_marker(name: &str) -> bool {
    AGENT_VARIABLES.contains(&name) || AGENT_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// The first agent marker in `vars` (names only are looked at).
pub fn find_marker<I, K>(vars: I) -> Option<String>
where
    I: IntoIterator<Item = K>,
    K: AsRef<str>,
{
    vars.into_iter()
        .find(|name| is_agent_marker(name.as_ref()))
        .map(|name| name.as_ref().to_string())
}

/// The first agent marker in this process's environment.
pub fn detect() -> Option<String> {
    find_marker(std::env::vars_os().filter_map(|(name, _)| name.into_string().ok()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn markers_table() {
        let cases: &[(&[&str], Option<&str>)] = &[
            (&["HOME", "PATH"], None),
            (&["HOME", "CLAUDECODE"], Some("CLAUDECODE")),
            (&["AIDER_MODEL"], Some("AIDER_MODEL")),
            (&["CLINE_TASK"], Some("CLINE_TASK")),
            (&["CODEX_SANDBOX"], Some("CODEX_SANDBOX")),
            (&["AGENT"], Some("AGENT")),
            (&["USER_AGENT", "AGENTS"], None),
        ];
        for (vars, expected) in cases {
            assert_eq!(find_marker(vars.iter()).as_deref(), *expected, "{vars:?}");
        }
    }
}
