//! Private files: tokens and keys are written with mode 0600.

use crate::error::{ControlError, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes `bytes` to a new or truncated file readable by its owner only.
pub fn write_private(path: &Path, bytes: &[u8]) -> Result<()> {
    write_private_with(path, bytes, false)
}

/// A token's `--out` file: refused when it exists, unless `--force`.
#[derive(Debug)]
pub struct OutFile {
    path: PathBuf,
    force: bool,
}

impl OutFile {
    /// Checks `path` before anything is asked of the server (a token that
    /// cannot be written is lost): an existing file (or link) is refused
    /// unless `force`. The write checks again (`create_new`).
    pub fn check(path: PathBuf, force: bool) -> Result<OutFile> {
        if !force && path.symlink_metadata().is_ok() {
            return Err(ControlError::Refused(format!(
                "{} exists: pass --force to overwrite it, or name another file",
                path.display()
            )));
        }
        Ok(OutFile { path, force })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes the file (mode 0600); without `force`, only as a new file.
    pub fn write(&self, bytes: &[u8]) -> Result<()> {
        write_private_with(&self.path, bytes, !self.force)
    }
}

fn write_private_with(path: &Path, bytes: &[u8], only_new: bool) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|err| ControlError::Io(format!("{}: {err}", dir.display())))?;
    }
    let mut options = std::fs::OpenOptions::new();
    if only_new {
        options.write(true).create_new(true);
    } else {
        options.write(true).create(true).truncate(true);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options
        .open(path)
        .map_err(|err| ControlError::Io(format!("{}: {err}", path.display())))?;
    // A file that existed keeps its old mode through open(): set it again.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))
            .map_err(|err| ControlError::Io(format!("{}: {err}", path.display())))?;
    }
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(|err| ControlError::Io(format!("{}: {err}", path.display())))
}

/// Reads a token file: its content without surrounding whitespace.
pub fn read_token(path: &Path) -> Result<String> {
    let text = std::fs::read_to_string(path)
        .map_err(|err| ControlError::Io(format!("{}: {err}", path.display())))?;
    let token = text.trim();
    if token.is_empty() {
        return Err(ControlError::Io(format!(
            "{}: empty token file",
            path.display()
        )));
    }
    Ok(token.to_string())
}
