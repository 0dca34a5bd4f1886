//! A machine-wide setting held in one file (`/proc/sys/vm/page-cluster`, a multi-size THP
//! policy), changed for as long as a guard lives: [`SettingGuard`] records what it replaces
//! with its owner before it writes anything, and puts it back on drop; [`recover_stale`] puts
//! back what a dead owner left (recovery.rs). The facilities that own such a file
//! (folios.rs, readahead.rs) check the value and say what it means; this file only keeps the
//! machine as it was found.

use crate::error::{Error, Result};
use crate::root::SysRoot;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// Records of settings a guard will put back (records.rs).
const RECORD_KIND: &str = "settings";

/// What a guard replaced: the file (as the live machine names it) and the value before.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Replaced {
    pub path: String,
    pub previous: String,
}

/// One setting, put back on drop.
#[derive(Debug)]
pub struct SettingGuard {
    pub replaced: Replaced,
    root: SysRoot,
    key: String,
    restored: bool,
}

fn write(root: &SysRoot, path: &str, value: &str) -> Result<()> {
    let p = root.path(path);
    std::fs::write(&p, value).map_err(|e| Error::io(p, e))
}

impl SettingGuard {
    /// Write `value` to `path`, which held `previous` (read by the caller: a policy file
    /// reads `always [inherit] madvise never` and takes back one word).
    pub fn replace(root: &SysRoot, path: &str, previous: String, value: &str) -> Result<SettingGuard> {
        let replaced = Replaced { path: path.to_string(), previous };
        let key = format!("{}-{}", std::process::id(), GUARDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        if root.is_live() {
            crate::records::save(RECORD_KIND, &key, &replaced)?;
        }
        if let Err(e) = write(root, path, value) {
            let _ = crate::records::forget(RECORD_KIND, &key);
            return Err(e);
        }
        Ok(SettingGuard { replaced, root: root.clone(), key, restored: false })
    }

    /// The value it will put back.
    pub fn previous(&self) -> &str {
        &self.replaced.previous
    }

    /// Put the value back now (drop does it too, but cannot say how it went).
    pub fn restore_now(&mut self) -> Result<()> {
        if !self.restored {
            write(&self.root, &self.replaced.path, &self.replaced.previous)?;
            self.restored = true;
            if self.root.is_live() {
                let _ = crate::records::forget(RECORD_KIND, &self.key);
            }
        }
        Ok(())
    }
}

static GUARDS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

impl Drop for SettingGuard {
    fn drop(&mut self) {
        if let Err(e) = self.restore_now() {
            eprintln!("memorch: putting {} back to '{}' failed: {e}", self.replaced.path, self.replaced.previous);
        }
    }
}

/// Put back the settings that guards of dead owners replaced.
pub fn recover_stale(root: &SysRoot) -> Vec<std::result::Result<String, String>> {
    recover_records(root, RECORD_KIND, |r: Replaced| r)
}

/// Put back what dead owners recorded under `kind` in a record of their own shape, each
/// turned into the file and value it replaced by `as_replaced` (an older guard's records,
/// folios.rs).
pub fn recover_records<T: DeserializeOwned>(
    root: &SysRoot,
    kind: &str,
    as_replaced: impl Fn(T) -> Replaced,
) -> Vec<std::result::Result<String, String>> {
    let mut out = Vec::new();
    for (rec, change) in crate::records::stale::<T>(root, kind) {
        match change
            .map(&as_replaced)
            .and_then(|r| write(root, &r.path, &r.previous).map(|_| r).map_err(|e| e.to_string()))
        {
            Ok(r) => {
                crate::records::remove(&rec);
                out.push(Ok(format!(
                    "put {} back to '{}', as a memorch process that died found it",
                    r.path, r.previous
                )));
            }
            Err(e) => out.push(Err(format!("a setting left by a memorch process that died ({}): {e}", rec.display()))),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_setting_is_put_back_on_drop_and_once_only() {
        let dir = crate::testkit::TempDir::new("memorch-setting");
        let root = SysRoot::at(dir.0.clone());
        std::fs::create_dir_all(dir.0.join("proc/sys/vm")).unwrap();
        let file = dir.0.join("proc/sys/vm/page-cluster");
        std::fs::write(&file, "3\n").unwrap();
        {
            let mut g = SettingGuard::replace(&root, "/proc/sys/vm/page-cluster", "3".into(), "5").unwrap();
            assert_eq!(std::fs::read_to_string(&file).unwrap(), "5");
            g.restore_now().unwrap();
            assert_eq!(std::fs::read_to_string(&file).unwrap(), "3");
            // Changed by someone else since: the guard that already put its value back leaves it.
            std::fs::write(&file, "7").unwrap();
        }
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "7");
        {
            let _g = SettingGuard::replace(&root, "/proc/sys/vm/page-cluster", "7".into(), "0").unwrap();
            assert_eq!(std::fs::read_to_string(&file).unwrap(), "0");
        }
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "7", "put back on drop");
    }

    #[test]
    fn a_file_that_cannot_be_written_leaves_nothing_to_undo() {
        let dir = crate::testkit::TempDir::new("memorch-setting-missing");
        let root = SysRoot::at(dir.0.clone());
        let err =
            SettingGuard::replace(&root, "/proc/sys/vm/no-such-setting", "1".into(), "2").unwrap_err().to_string();
        assert!(err.contains("no-such-setting"), "{err}");
    }
}
