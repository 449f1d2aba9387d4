//! The playground's run, natively: reads a call's JSON (as the page sends
//! it, see `latet_playground::session::Call`) on standard input and prints
//! the outcome's JSON, computed by the same code the page's `.wasm` runs.
//! The browser test (`playground/test/browser_test.py`) compares the page
//! with this, byte for byte.
//!
//! `cargo run -q -p latet-playground --example native < call.json`

use std::io::{Read, Write};

fn main() -> std::process::ExitCode {
    let mut call = Vec::new();
    if std::io::stdin().read_to_end(&mut call).is_err() {
        eprintln!("native: standard input could not be read");
        return std::process::ExitCode::FAILURE;
    }
    let answer = latet_playground::session::run_json(&call);
    if std::io::stdout().write_all(&answer).is_err() {
        return std::process::ExitCode::FAILURE;
    }
    std::process::ExitCode::SUCCESS
}
