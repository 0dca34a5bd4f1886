//! Records of machine-wide changes that a process's guard will undo (swap files, KSM settings): written before the
//! change is made, removed when it is undone. `/run` is cleared at boot, as these changes are. What a dead owner left
//! is found by [`stale`] and undone by whoever starts next (recovery.rs).

use crate::error::{Error, Result};
use crate::owner::Owner;
use crate::root::SysRoot;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub const RECORD_ROOT: &str = "/run/memorch/records";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record<T> {
    pub owner: Owner,
    pub change: T,
}

fn file(kind: &str, key: &str) -> PathBuf {
    // Keys are paths or names: keep them one safe file name.
    let safe: String =
        key.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '.' { c } else { '_' }).collect();
    Path::new(RECORD_ROOT).join(kind).join(format!("{safe}.json"))
}

/// Record that this process is about to make a change of `kind` named `key`.
pub fn save<T: Serialize>(kind: &str, key: &str, change: &T) -> Result<()> {
    crate::state::write_json_atomic(&file(kind, key), &Record { owner: Owner::me(), change })
}

/// The change was undone.
pub fn forget(kind: &str, key: &str) -> Result<()> {
    let p = file(kind, key);
    match std::fs::remove_file(&p) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(&p, e)),
        _ => Ok(()),
    }
}

/// Changes of `kind` whose owners are gone, with their keys; unreadable records too (as errors), so that nothing is
/// silently left behind.
pub fn stale<T: DeserializeOwned>(root: &SysRoot, kind: &str) -> Vec<(PathBuf, std::result::Result<T, String>)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(Path::new(RECORD_ROOT).join(kind)).into_iter().flatten().flatten() {
        let p = e.path();
        let rec = std::fs::read_to_string(&p)
            .map_err(|e| e.to_string())
            .and_then(|t| serde_json::from_str::<Record<T>>(&t).map_err(|e| e.to_string()));
        match rec {
            Ok(r) if r.owner.is_me() || r.owner.alive(root) => {}
            Ok(r) => out.push((p, Ok(r.change))),
            Err(e) => out.push((p, Err(format!("unreadable record: {e}")))),
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Remove a record file found by [`stale`].
pub fn remove(path: &Path) {
    let _ = std::fs::remove_file(path);
}
