//! Programs on PATH (lxcfs, the bench's peers and real programs).

use std::path::PathBuf;

/// A program on PATH, if installed.
pub fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(program)).find(|p| p.is_file())
}
