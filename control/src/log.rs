//! Log lines on stderr. Callers pass only kinds, counts, names and
//! positions: never a value, a surrogate or a token.

fn line(level: &str, message: &str) {
    eprintln!(
        "{} latet {level}: {message}",
        crate::cli::utc_time(crate::vault::now())
    );
}

/// An informational line.
pub fn info(message: &str) {
    line("info", message);
}

/// A warning.
pub fn warn(message: &str) {
    line("warn", message);
}
