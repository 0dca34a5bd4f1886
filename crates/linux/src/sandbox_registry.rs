//! The v2 parent groups sandboxes had to make, registered so that a dead creator's sandbox is found and removed from
//! any later start, even one in another cgroup (sandbox.rs).

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The v2 parent directories memorch created, one a line: sandboxes share them, so the last one to leave removes them,
/// whichever made them.
const PARENTS_REGISTRY: &str = "/run/memorch/cgroup-parents";

pub(crate) fn read_registry() -> Vec<PathBuf> {
    std::fs::read_to_string(PARENTS_REGISTRY)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.is_empty())
        .map(PathBuf::from)
        .collect()
}

pub(crate) fn write_registry(dirs: &[PathBuf]) -> Result<()> {
    let p = Path::new(PARENTS_REGISTRY);
    if dirs.is_empty() {
        return match std::fs::remove_file(p) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(p, e)),
            _ => Ok(()),
        };
    }
    let dir = p.parent().expect("registry has a parent");
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let text: String = dirs.iter().map(|d| format!("{}\n", d.display())).collect();
    std::fs::write(p, text).map_err(|e| Error::io(p, e))
}

/// Note parents we made (caller holds the parents lock).
pub(crate) fn register_parents(made: &[PathBuf]) -> Result<()> {
    if made.is_empty() {
        return Ok(());
    }
    let mut all = read_registry();
    all.extend(made.iter().cloned());
    write_registry(&all)
}

/// Remove every registered parent that is empty now, deepest first (caller holds the parents lock). One still holding a
/// sandbox stays registered for the last one out.
pub(crate) fn remove_registered_parents() {
    let mut all = read_registry();
    all.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
    all.retain(|p| match std::fs::remove_dir(p) {
        Ok(()) => false,
        Err(e) => e.kind() != std::io::ErrorKind::NotFound,
    });
    if let Err(e) = write_registry(&all) {
        eprintln!("memorch: {e}");
    }
}

/// Remove a cgroup directory and its child groups, deepest first.
pub(crate) fn remove_tree(dir: &Path) -> Result<()> {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                remove_tree(&e.path())?;
            }
        }
    }
    // rmdir can briefly fail with EBUSY while the last task's exit is accounted.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match std::fs::remove_dir(dir) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) if Instant::now() < deadline && e.raw_os_error() == Some(libc::EBUSY) => {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(e) => return Err(Error::io(dir, e)),
        }
    }
}
