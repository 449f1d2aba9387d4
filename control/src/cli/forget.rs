//! `latet server keys forget NAME [--file F] [--yes]` (rule F2,
//! docs/product-rules.md#f2): values from a file or typed at the terminal,
//! never from argv; a count, a question, batches of at most 1,000, totals,
//! and a reminder to delete the file.

use super::client::{segment, AdminClient};
use crate::error::{ControlError, Result};
use crate::http::apps::ForgetRequest;
use crate::vault::{ForgetCounts, MAX_VALUES_PER_CALL};
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;

/// What `keys forget` was asked.
#[derive(Debug, Clone)]
pub struct ForgetCommand {
    pub key: String,
    pub file: Option<PathBuf>,
    pub yes: bool,
    /// Anything else found on the command line: refused unread.
    pub stray_arguments: usize,
}

/// Why `keys forget` refused to start (exit status 2).
pub fn refusal(
    command: &ForgetCommand,
    agent_marker: Option<&str>,
    stdin_is_terminal: bool,
) -> Option<String> {
    if command.stray_arguments > 0 {
        return Some(
            "keys forget never takes values from the command line (the shell keeps it in its history): \
             put them in a file, one per line, and pass --file FILE, or type them at the prompt"
                .into(),
        );
    }
    if let Some(marker) = agent_marker {
        return Some(format!(
            "keys forget refuses to run inside an AI agent (environment variable {marker} is set): \
             the values are a person's data. Run it yourself in a terminal."
        ));
    }
    if !stdin_is_terminal && !command.yes {
        return Some("no terminal to ask for confirmation: in a script, pass --yes".into());
    }
    if !stdin_is_terminal && command.file.is_none() {
        return Some("no terminal to type values at: pass --file FILE".into());
    }
    None
}

/// The values of a file's text: one per line (`\n` or `\r\n`), empty lines skipped.
pub fn values_of(text: &str) -> Vec<String> {
    text.lines()
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
        .filter(|line| !line.is_empty())
        .map(String::from)
        .collect()
}

fn read_values(command: &ForgetCommand) -> Result<Vec<String>> {
    if let Some(path) = &command.file {
        let bytes = std::fs::read(path)
            .map_err(|err| ControlError::Io(format!("{}: {err}", path.display())))?;
        let text = String::from_utf8(bytes).map_err(|err| {
            ControlError::Io(format!(
                "{}: not UTF-8 (byte {})",
                path.display(),
                err.utf8_error().valid_up_to()
            ))
        })?;
        return Ok(values_of(&text));
    }
    eprintln!("Type the values to forget, one per line; an empty line ends.");
    let mut values = Vec::new();
    let stdin = std::io::stdin();
    for line in stdin.lock().lines() {
        let line = line.map_err(|err| ControlError::Io(format!("terminal: {err}")))?;
        let line = line.strip_suffix('\r').unwrap_or(&line).to_string();
        if line.is_empty() {
            break;
        }
        values.push(line);
    }
    Ok(values)
}

fn confirm(question: &str) -> Result<bool> {
    eprint!("{question} [y/N] ");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut answer)
        .map_err(|err| ControlError::Io(format!("terminal: {err}")))?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes" | "YES" | "Yes"))
}

/// Runs the command; returns the exit status.
pub fn run(client: &AdminClient, command: &ForgetCommand) -> Result<i32> {
    let stdin_is_terminal = std::io::stdin().is_terminal();
    if let Some(reason) = refusal(
        command,
        crate::agent_env::detect().as_deref(),
        stdin_is_terminal,
    ) {
        eprintln!("latet: {reason}");
        return Ok(2);
    }
    let values = read_values(command)?;
    let distinct = values
        .iter()
        .collect::<std::collections::HashSet<_>>()
        .len();
    println!("Read {} values ({distinct} distinct).", values.len());
    if values.is_empty() {
        println!("Nothing to forget.");
        return Ok(0);
    }
    if !command.yes
        && !confirm(&format!(
            "Forget them from the vault of key \"{}\"?",
            command.key
        ))?
    {
        println!("Nothing sent.");
        return Ok(1);
    }
    let path = format!("/keys/{}/forget", segment(&command.key));
    let mut total = ForgetCounts {
        forgotten: 0,
        unknown: 0,
    };
    let batches = values.len().div_ceil(MAX_VALUES_PER_CALL);
    for (i, batch) in values.chunks(MAX_VALUES_PER_CALL).enumerate() {
        let request = ForgetRequest {
            values: batch.to_vec(),
        };
        let counts: ForgetCounts = client.post(&path, &request).inspect_err(|_| {
            eprintln!(
                "latet: batch {} of {batches} failed; the batches before it are done. \
                 Run the command again: forgotten values then count as unknown.",
                i + 1
            );
        })?;
        total.forgotten += counts.forgotten;
        total.unknown += counts.unknown;
        if batches > 1 {
            println!(
                "Batch {} of {batches}: {} forgotten, {} unknown.",
                i + 1,
                counts.forgotten,
                counts.unknown
            );
        }
    }
    println!(
        "Forgotten: {} (the vault held them). Unknown: {} (not in the vault).",
        total.forgotten, total.unknown
    );
    if let Some(file) = &command.file {
        println!(
            "Delete {} now: it holds the values (e.g. shred -u {}).",
            file.display(),
            file.display()
        );
    }
    Ok(0)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn command(file: bool, yes: bool, stray: usize) -> ForgetCommand {
        ForgetCommand {
            key: "Shop".into(),
            file: file.then(|| PathBuf::from("erasure.txt")),
            yes,
            stray_arguments: stray,
        }
    }

    #[test]
    fn refusal_table() {
        // (command, agent marker, stdin is a terminal, refused)
        let cases = [
            (command(true, false, 0), None, true, false),
            (command(false, false, 0), None, true, false),
            (command(true, true, 0), None, false, false),
            (command(true, false, 0), None, false, true),
            (command(false, true, 0), None, false, true),
            (command(true, true, 0), Some("CLAUDECODE"), true, true),
            (command(true, true, 1), None, true, true),
        ];
        for (i, (cmd, marker, terminal, refused)) in cases.into_iter().enumerate() {
            assert_eq!(
                refusal(&cmd, marker, terminal).is_some(),
                refused,
                "case {i}"
            );
        }
    }

    #[test]
    fn file_lines_are_exact_values() {
        assert_eq!(
            values_of("mario.rossi@acme.it\r\n+39 347 123 4567\n\n Mario Rossi \n"),
            vec!["mario.rossi@acme.it", "+39 347 123 4567", " Mario Rossi "]
        );
    }
}
