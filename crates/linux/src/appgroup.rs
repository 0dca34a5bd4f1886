//! A memory group of an app's own: a child of its domain's group (`DOMAIN/app-PID`), in which the kernel keeps the
//! app's pages on LRU lists of their own. Squeezing that group's limit down by N bytes makes the kernel reclaim the
//! app's N *coldest* bytes (its LRU sees the accessed bits; memorch does not), where `process_madvise(MADV_PAGEOUT)`
//! takes pages hot or cold. Android compacts apps through per-app groups the same way; Tizen resourced squeezes its
//! background group. A squeeze takes anonymous pages only (the group's swappiness is 200 for its duration), so an app's
//! code is not dropped and read again on its next return; between squeezes the group keeps its own swappiness, so the
//! kernel's own reclaim weighs it as any other (a permanent 200 made the kernel swap the hot data of popular apps
//! rather than drop cold cache: more warm returns, measured on `realapps`).
//!
//! `memorch spawn --app-group` makes one for the process it starts; the group is removed by the daemon once empty
//! ([`remove_empty`]), and with its domain's sandbox.
//!
//! An app the system started in a group of its own below the domain (a systemd scope, Android's `uid_N/pid_M`, a
//! container per app) is squeezed the same way: a group is the app's own when every process in it is the app's process
//! or one of its descendants ([`of_process`]). Such a group is the system's: a squeeze puts its own limit and
//! swappiness back, and memorch never freezes, thaws or removes it (nothing would undo that if memorch died;
//! [`AppGroup::made_by_memorch`]).

use crate::cgroup::{self, CgroupDirs, MemorySource};
use crate::domain::Domain;
use crate::error::{Error, Result};
use crate::root::SysRoot;
use std::path::{Path, PathBuf};

/// Names of app groups: `app-PID` (the pid of the process that made it).
pub const PREFIX: &str = "app-";

/// An app's own group, in the v1 memory hierarchy (where the limit is) and, if there, v2 (for its own pressure and
/// freezing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppGroup {
    pub path: String,
    pub memory: PathBuf,
    pub v2: Option<PathBuf>,
    /// Made by memorch (`DOMAIN/app-PID`, [`create_for_self`]), not by the system that started the app: only such a
    /// group may be frozen, thawed at start or removed.
    pub made_by_memorch: bool,
}

/// Whether a group's name is one [`create_for_self`] gives (`app-` and a pid): groups of other names, and `app-…`
/// groups of systemd's (`app-firefox-1234.scope`), are not memorch's.
pub fn is_made_by_memorch(name: &str) -> bool {
    name.strip_prefix(PREFIX).is_some_and(|pid| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
}

impl AppGroup {
    /// Its v2 directory (where `cgroup.freeze` is): the v2 group of a hybrid machine, or the memory group itself where
    /// memory is v2.
    pub fn v2_dir(&self) -> Option<PathBuf> {
        self.v2.clone().or_else(|| self.memory.join("cgroup.freeze").exists().then(|| self.memory.clone()))
    }
}

/// Make `DOMAIN/app-PID` for this process, give it `swappiness` (0..=200) if asked, and move this process into it in
/// every hierarchy.
pub fn create_for_self(domain: &CgroupDirs, swappiness: Option<u32>) -> Result<AppGroup> {
    let name = format!("{PREFIX}{}", std::process::id());
    let memory = match domain.memory_source() {
        Some(MemorySource::V1(d)) | Some(MemorySource::V2(d)) => d.join(&name),
        None => {
            return Err(Error::Refused(format!("domain {} has no memory group to make an app group in", domain.path)))
        }
    };
    let v2 = domain.v2.as_ref().map(|d| d.join(&name)).filter(|d| Some(d) != Some(&memory));
    for d in std::iter::once(&memory).chain(v2.iter()) {
        std::fs::create_dir(d).map_err(|e| Error::io(d, e))?;
    }
    if let Some(s) = swappiness {
        let f = memory.join("memory.swappiness");
        if f.exists() {
            std::fs::write(&f, s.to_string()).map_err(|e| Error::io(&f, e))?;
        }
    }
    let dirs = CgroupDirs {
        path: format!("{}/{name}", domain.path.trim_end_matches('/')),
        v1_memory: Some(memory.clone()),
        v2: v2.clone(),
        v2_top: None,
    };
    cgroup::join_self(&dirs)?;
    Ok(AppGroup { path: dirs.path, memory, v2, made_by_memorch: true })
}

/// The group of `pid`'s own below `domain`'s, if it is in one: one memorch made for it (`app-PID`, a child of the
/// domain's), or any group below the domain's, at any depth, that holds only `pid` and its descendants (a group the
/// system gave the app). A group shared with other apps is not one app's: squeezing it would take from them all.
pub fn of_process(root: &SysRoot, pid: u32, domain: &Domain) -> Option<AppGroup> {
    let dirs = domain.cgroup.as_ref()?;
    let path = cgroup::process_cgroup_path(root, &pid.to_string()).ok()?;
    let below = path.strip_prefix(dirs.path.trim_end_matches('/'))?.strip_prefix('/')?.trim_end_matches('/');
    if below.is_empty() {
        return None;
    }
    let memory = match dirs.memory_source()? {
        MemorySource::V1(d) | MemorySource::V2(d) => d.join(below),
    };
    let v2 = dirs.v2.as_ref().map(|d| d.join(below)).filter(|d| d.is_dir() && *d != memory);
    let made_by_memorch = !below.contains('/') && is_made_by_memorch(below);
    let own = || {
        holds_only(
            root,
            &CgroupDirs { path: path.clone(), v1_memory: Some(memory.clone()), v2: None, v2_top: None },
            pid,
        )
    };
    if !memory.is_dir() || (!made_by_memorch && !own()) {
        return None;
    }
    Some(AppGroup { path, memory, v2, made_by_memorch })
}

/// Whether every process in the group (and in the groups below it) is `pid` or one of its descendants.
fn holds_only(root: &SysRoot, dirs: &CgroupDirs, pid: u32) -> bool {
    let Ok(pids) = cgroup::pids(dirs) else { return false };
    pids.iter().all(|&p| descends_from(root, p, pid))
}

/// Whether `p` is `ancestor` or below it in the process tree (a process gone meanwhile is not).
fn descends_from(root: &SysRoot, mut p: u32, ancestor: u32) -> bool {
    // A bound, against a tree that changes under the walk.
    for _ in 0..64 {
        if p == ancestor {
            return true;
        }
        match crate::process::read_stat(root, p) {
            Ok(s) if s.ppid > 1 && s.ppid != p => p = s.ppid,
            _ => return false,
        }
    }
    false
}

/// The group's memory use now.
pub fn usage(group: &AppGroup) -> Result<u64> {
    let f = ["memory.usage_in_bytes", "memory.current"]
        .iter()
        .map(|n| group.memory.join(n))
        .find(|f| f.exists())
        .ok_or_else(|| Error::Refused(format!("{}: no memory usage file", group.memory.display())))?;
    let text = std::fs::read_to_string(&f).map_err(|e| Error::io(&f, e))?;
    text.trim().parse().map_err(|_| Error::parse(&f, "bytes", text.trim()))
}

/// The swappiness of a squeeze: anonymous pages only.
pub const SQUEEZE_SWAPPINESS: u32 = 200;

/// Make the kernel reclaim `bytes` of the app's coldest anonymous pages: its group's swappiness is raised to
/// [`SQUEEZE_SWAPPINESS`] (v1), and the kernel reclaims from the group in its LRU order (v2 `memory.reclaim`; v1 its
/// limit lowered to its use less `bytes`, the kernel reclaiming inside that write, then the limit it had put back at
/// once, so a group the system made keeps its own); the swappiness it had is put back too. Returns the bytes its use
/// fell by.
pub fn shrink(group: &AppGroup, bytes: u64) -> Result<u64> {
    let before = usage(group)?;
    let swappiness = group.memory.join("memory.swappiness");
    let previous = std::fs::read_to_string(&swappiness).ok().map(|t| t.trim().to_string());
    if previous.is_some() {
        std::fs::write(&swappiness, SQUEEZE_SWAPPINESS.to_string()).map_err(|e| Error::io(&swappiness, e))?;
    }
    // v1 where the group has a v1 limit file; else v2, which never lowers `memory.max` (that OOM-kills in the group
    // when the kernel cannot reclaim enough).
    let source = if group.memory.join("memory.limit_in_bytes").exists() {
        MemorySource::V1(group.memory.clone())
    } else {
        MemorySource::V2(group.memory.clone())
    };
    // What the kernel could not get (nothing more reclaimable now) shows in the use below.
    let squeezed = crate::reclaim::reclaim_group(&source, before, bytes, 1 << 20);
    if let Some(p) = previous {
        std::fs::write(&swappiness, p).map_err(|e| Error::io(&swappiness, e))?;
    }
    squeezed?;
    Ok(before.saturating_sub(usage(group).unwrap_or(before)))
}

/// Thaw every app group memorch made in the domain left frozen (by a memorch that died, or one that could not thaw at
/// exit): nothing stays frozen once memorch is not there to thaw it. Returns the groups thawed, and those that could
/// not be.
pub fn thaw_all(domain: &Domain) -> (Vec<String>, Vec<String>) {
    let (mut done, mut failed) = (Vec::new(), Vec::new());
    let Some(v2) = domain.cgroup.as_ref().and_then(|d| d.v2.as_ref()) else { return (done, failed) };
    for e in std::fs::read_dir(v2).into_iter().flatten().flatten() {
        let is_app = e.file_name().to_str().is_some_and(is_made_by_memorch);
        if !is_app || !crate::freeze::is_frozen(&e.path()) {
            continue;
        }
        let f = e.path().join("cgroup.freeze");
        match std::fs::write(&f, "0") {
            Ok(()) => done.push(f.display().to_string()),
            Err(err) => failed.push(format!("{}: {err}", f.display())),
        }
    }
    (done, failed)
}

/// Remove the app groups memorch made in the domain that no process is in any more (never a group of another's,
/// whatever its name). Returns how many.
pub fn remove_empty(domain: &Domain) -> usize {
    let Some(dirs) = &domain.cgroup else { return 0 };
    let mut removed = 0;
    for parent in dirs.dirs() {
        for e in std::fs::read_dir(parent).into_iter().flatten().flatten() {
            let name = e.file_name();
            let is_app = name.to_str().is_some_and(is_made_by_memorch);
            if is_app && empty(&e.path()) && settled(&e.path()) && std::fs::remove_dir(e.path()).is_ok() {
                removed += 1;
            }
        }
    }
    removed
}

/// A group made this long ago or more: one younger may be empty only because its process has made it and not yet moved
/// in (`create_for_self`); removing it then fails that launch (seen in a bench run: "app-16/cgroup.procs: No such file
/// or directory").
const SETTLE: std::time::Duration = std::time::Duration::from_secs(5);

fn settled(dir: &Path) -> bool {
    std::fs::metadata(dir).and_then(|m| m.modified()).is_ok_and(|t| t.elapsed().is_ok_and(|age| age >= SETTLE))
}

fn empty(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("cgroup.procs")).is_ok_and(|t| t.trim().is_empty())
}
