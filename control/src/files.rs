//! Private files: tokens and keys are written with mode 0600.

use crate::error::{ControlError, Result};
use std::io::Write;
use std::path::Path;

/// Writes `bytes` to a new or truncated file readable by its owner only.
pub fn write_private(path: &Path, bytes: &[u8]) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|err| ControlError::Io(format!("{}: {err}", dir.display())))?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
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
