//! The `.jsonl` files of an evaluation corpus directory, sorted by name:
//! shared by the `detect_eval` and `findings_digest` examples.

use std::path::PathBuf;

/// Every `*.jsonl` file directly in `dir`, sorted; the error names `dir`.
pub fn jsonl_files(dir: &str) -> Result<Vec<PathBuf>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot read {dir}: {e}"))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    Ok(files)
}
