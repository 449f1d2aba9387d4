//! The `.jsonl` files of an evaluation corpus directory, sorted by name,
//! and their texts: shared by the `detect_eval`, `findings_digest` and
//! `mask_digest` examples.

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

/// The `text` of every line of every `*.jsonl` file in `dir`, by file
/// (sorted); the error names the directory or file, never a text.
#[allow(dead_code)] // not every example reads the texts alone
pub fn texts_by_file(dir: &str) -> Result<Vec<(PathBuf, Vec<String>)>, String> {
    #[derive(serde::Deserialize)]
    struct Line {
        text: String,
    }
    let mut out = Vec::new();
    for path in jsonl_files(dir)? {
        let content = std::fs::read_to_string(&path)
            .map_err(|_| format!("cannot read {}", path.display()))?;
        let texts = content
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|raw| serde_json::from_str::<Line>(raw).map(|line| line.text))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| format!("a bad line in {}", path.display()))?;
        out.push((path, texts));
    }
    Ok(out)
}
