//! `latet server keys forget NAME [--file F] [--yes] [--trim | --exact]`
//! (rule F2, docs/product-rules.md#f2): values from a file or typed at the
//! terminal, never from argv; the key and the admin token checked before
//! any value is read; a count, a question, batches of at most 1,000,
//! totals, and a reminder to delete the file.
//!
//! Input that would silently miss is never sent as it is: a byte-order mark
//! is not part of the first value (dropped, and said), and values with
//! leading or trailing whitespace are named by line number (never by
//! value) and either trimmed or sent as written only when the operator
//! says which (at the prompt, or `--trim` / `--exact`).

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
    /// What to do with values that have leading or trailing whitespace.
    pub padding: Padding,
    /// Anything else found on the command line: refused unread.
    pub stray_arguments: usize,
}

/// What to do with values that have leading or trailing whitespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Padding {
    /// Ask at the terminal; refuse with `--yes`.
    Ask,
    /// `--trim`: send them without it.
    Trim,
    /// `--exact`: send them as written.
    Exact,
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

/// The values read, and what was noticed on the way.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ForgetInput {
    pub values: Vec<String>,
    /// The text started with a byte-order mark (dropped).
    pub bom: bool,
    /// Line numbers (from 1) of values with leading or trailing whitespace.
    pub padded_lines: Vec<usize>,
    /// Lines of whitespace only (skipped, as empty lines are).
    pub blank_lines: usize,
}

/// Whitespace around a value: Unicode white space and the invisible
/// chars editors leave (a byte-order mark, a zero-width space).
fn is_padding(c: char) -> bool {
    c.is_whitespace() || matches!(c, '\u{feff}' | '\u{200b}' | '\u{2060}')
}

/// The values of a file's text: one per line (`\n` or `\r\n`), empty lines
/// skipped, a leading byte-order mark dropped.
pub fn values_of(text: &str) -> ForgetInput {
    let mut input = ForgetInput::default();
    for (number, line) in text.lines().enumerate() {
        input.push(number + 1, line);
    }
    input
}

impl ForgetInput {
    /// Reads line `number` (from 1); a byte-order mark opening line 1 is
    /// dropped.
    fn push(&mut self, number: usize, line: &str) {
        let mut line = line.strip_suffix('\r').unwrap_or(line);
        if number == 1 {
            if let Some(rest) = line.strip_prefix('\u{feff}') {
                self.bom = true;
                line = rest;
            }
        }
        if line.is_empty() {
            return;
        }
        let trimmed = line.trim_matches(is_padding);
        if trimmed.is_empty() {
            self.blank_lines += 1;
            return;
        }
        if trimmed.len() != line.len() {
            self.padded_lines.push(number);
        }
        self.values.push(line.to_string());
    }

    /// Drops the whitespace around every value.
    fn trim(&mut self) {
        for value in &mut self.values {
            let trimmed = value.trim_matches(is_padding);
            if trimmed.len() != value.len() {
                *value = trimmed.to_string();
            }
        }
    }
}

/// Line numbers as a short list (`3, 7, 12 and 40 more`).
pub fn line_list(numbers: &[usize]) -> String {
    const SHOWN: usize = 10;
    let shown: Vec<String> = numbers.iter().take(SHOWN).map(|n| n.to_string()).collect();
    let mut list = shown.join(", ");
    if numbers.len() > SHOWN {
        list.push_str(&format!(" and {} more", numbers.len() - SHOWN));
    }
    list
}

fn read_values(command: &ForgetCommand) -> Result<ForgetInput> {
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
    let mut input = ForgetInput::default();
    let stdin = std::io::stdin();
    for (number, line) in stdin.lock().lines().enumerate() {
        let line = line.map_err(|err| ControlError::Io(format!("terminal: {err}")))?;
        let line = line.strip_suffix('\r').unwrap_or(&line);
        if line.is_empty() {
            break;
        }
        input.push(number + 1, line);
    }
    Ok(input)
}

/// Settles values with whitespace around them: `Some(status)` stops the
/// command with that exit status, nothing sent.
fn settle_padding(command: &ForgetCommand, input: &mut ForgetInput) -> Result<Option<i32>> {
    if input.padded_lines.is_empty() {
        return Ok(None);
    }
    eprintln!(
        "{} values have leading or trailing whitespace (lines {}). The vault holds values \
         without it: as written they would count as unknown and stay in the vault.",
        input.padded_lines.len(),
        line_list(&input.padded_lines)
    );
    let trim = match command.padding {
        Padding::Trim => true,
        Padding::Exact => false,
        Padding::Ask if command.yes => {
            eprintln!(
                "latet: with --yes, say what to do with them: --trim (send them without the \
                 whitespace) or --exact (send them as written)"
            );
            return Ok(Some(2));
        }
        Padding::Ask => match ask("Trim the whitespace? y: trimmed, n: as written")? {
            Some(trim) => trim,
            None => {
                println!("Nothing sent.");
                return Ok(Some(1));
            }
        },
    };
    if trim {
        input.trim();
        eprintln!("Trimmed {} values.", input.padded_lines.len());
    } else {
        eprintln!("Sending {} values as written.", input.padded_lines.len());
    }
    Ok(None)
}

/// A yes-or-no question that needs an answer: `None` for anything else.
fn ask(question: &str) -> Result<Option<bool>> {
    Ok(match answer_to(&format!("{question} [y/n]"))?.as_str() {
        "y" | "Y" | "yes" | "YES" | "Yes" => Some(true),
        "n" | "N" | "no" | "NO" | "No" => Some(false),
        _ => None,
    })
}

/// Asks `prompt` at the terminal; the line typed, trimmed.
pub(crate) fn answer_to(prompt: &str) -> Result<String> {
    eprint!("{prompt} ");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut answer)
        .map_err(|err| ControlError::Io(format!("terminal: {err}")))?;
    Ok(answer.trim().to_string())
}

/// Fails unless the admin token is accepted and the key exists.
pub(crate) fn check_key(client: &AdminClient, key: &str) -> Result<()> {
    let answer: super::KeysAnswer = client.get("/keys")?;
    if answer.keys.iter().any(|k| k.name == key) {
        Ok(())
    } else {
        Err(ControlError::NotFound(format!("key \"{key}\"")))
    }
}

fn confirm(question: &str) -> Result<bool> {
    Ok(matches!(
        answer_to(&format!("{question} [y/N]"))?.as_str(),
        "y" | "Y" | "yes" | "YES" | "Yes"
    ))
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
    // The key and the admin token, before any value is read or asked for.
    check_key(client, &command.key)?;
    let mut input = read_values(command)?;
    if input.bom {
        eprintln!("Dropped a byte-order mark at the start (it is not part of the first value).");
    }
    if input.blank_lines > 0 {
        eprintln!("Skipped {} lines of whitespace only.", input.blank_lines);
    }
    if let Some(status) = settle_padding(command, &mut input)? {
        return Ok(status);
    }
    let values = input.values;
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
            padding: Padding::Ask,
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
        let input = values_of("mario.rossi@acme.it\r\n+39 347 123 4567\n\n Mario Rossi \n");
        assert_eq!(
            input.values,
            vec!["mario.rossi@acme.it", "+39 347 123 4567", " Mario Rossi "]
        );
        assert_eq!(input.padded_lines, vec![4]);
        assert!(!input.bom);
    }

    #[test]
    fn a_byte_order_mark_is_not_part_of_the_first_value() {
        let input = values_of("\u{feff}mario.rossi@acme.it\r\nanna@acme.it\r\n");
        assert!(input.bom);
        assert_eq!(input.values, vec!["mario.rossi@acme.it", "anna@acme.it"]);
        assert!(input.padded_lines.is_empty());
    }

    #[test]
    fn whitespace_around_values_is_found_by_line_and_trimmed_on_demand() {
        let text = "a@acme.it\nb@acme.it \n\n  \n\u{a0}c@acme.it\n\td@acme.it\u{200b}\ne f\n";
        let mut input = values_of(text);
        assert_eq!(input.padded_lines, vec![2, 5, 6]);
        assert_eq!(input.blank_lines, 1);
        input.trim();
        assert_eq!(
            input.values,
            vec!["a@acme.it", "b@acme.it", "c@acme.it", "d@acme.it", "e f"]
        );
    }

    #[test]
    fn long_line_lists_are_cut() {
        assert_eq!(line_list(&[3, 7]), "3, 7");
        let many: Vec<usize> = (1..=13).collect();
        assert_eq!(line_list(&many), "1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 3 more");
    }
}
