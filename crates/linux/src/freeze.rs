//! Freezing a cgroup (v2 `cgroup.freeze`): its processes stop running but keep their memory, as Android freezes cached
//! apps.

use crate::cgroup::{self, CgroupDirs};
use crate::error::{Error, Result};
use crate::root::SysRoot;
use crate::target::self_and_ancestors;
use std::time::{Duration, Instant};

/// Freeze (or thaw) the group at `path` and wait until the kernel says it is done.
pub fn set_frozen(root: &SysRoot, path: &str, frozen: bool, timeout: Duration) -> Result<()> {
    let v2 = check(root, path, frozen)?;
    write_and_wait(&v2, path, frozen, timeout)
}

/// Whether the group may be frozen (or thawed), changing nothing; its v2 directory.
pub fn check(root: &SysRoot, path: &str, frozen: bool) -> Result<std::path::PathBuf> {
    if path == "/" {
        return Err(Error::Refused("refusing to freeze the root cgroup: it holds the whole machine".into()));
    }
    let dirs = cgroup::locate(root, path)?;
    let v2 = dirs.v2.clone().ok_or_else(|| {
        Error::Refused(format!("cgroup {path} has no v2 group: freezing needs cgroup.freeze of cgroup v2"))
    })?;
    if frozen {
        refuse_if_holds_us(root, &dirs)?;
    }
    Ok(v2)
}

/// Whether the group at this v2 directory is asked to be frozen (`cgroup.freeze` is 1).
pub fn is_frozen(v2: &std::path::Path) -> bool {
    std::fs::read_to_string(v2.join("cgroup.freeze")).is_ok_and(|t| t.trim() == "1")
}

fn write_and_wait(v2: &std::path::Path, path: &str, frozen: bool, timeout: Duration) -> Result<()> {
    let f = v2.join("cgroup.freeze");
    std::fs::write(&f, if frozen { "1" } else { "0" }).map_err(|e| Error::io(&f, e))?;
    let events = v2.join("cgroup.events");
    let want = if frozen { "frozen 1" } else { "frozen 0" };
    let deadline = Instant::now() + timeout;
    loop {
        let text = std::fs::read_to_string(&events).map_err(|e| Error::io(&events, e))?;
        if text.lines().any(|l| l.trim() == want) {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(Error::Other {
                what: format!("{} cgroup {path}", if frozen { "freeze" } else { "thaw" }),
                detail: format!("not {} after {:?}", if frozen { "frozen" } else { "thawed" }, timeout),
            });
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn refuse_if_holds_us(root: &SysRoot, dirs: &CgroupDirs) -> Result<()> {
    let inside = cgroup::pids(dirs)?;
    if let Some(p) = self_and_ancestors(root).into_iter().find(|p| inside.binary_search(p).is_ok()) {
        return Err(Error::Refused(format!(
            "refusing to freeze cgroup {}: it holds memorch or one of its ancestors (pid {p})",
            dirs.path
        )));
    }
    Ok(())
}
