//! cgroups, v1 and v2, as one domain.
//!
//! A cgroup path (`/a/b`, as `/proc/PID/cgroup` writes it) is looked up in every mounted hierarchy. Memory (limit,
//! usage, `memory.stat`) comes from whichever hierarchy has the memory controller (v2 `memory.max`, or v1
//! `memory.limit_in_bytes` as on hybrid machines), PSI from the v2 group at the same path, processes from
//! `cgroup.procs` of both.

use crate::error::{Error, Result};
use crate::parse::field;
use crate::root::SysRoot;
use memorch_core::{Counters, MemoryState};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// A mounted cgroup hierarchy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    /// Where it is mounted, under the reader's root.
    pub dir: PathBuf,
    /// The cgroup path the mount shows at its top (`/` unless bind-mounted from inside).
    pub cgroup_root: String,
    /// `None` for v2; the controllers (and `name=`) of a v1 hierarchy.
    pub v1_controllers: Option<Vec<String>>,
}

impl Mount {
    pub fn is_v2(&self) -> bool {
        self.v1_controllers.is_none()
    }

    pub fn has_v1_controller(&self, c: &str) -> bool {
        self.v1_controllers.as_ref().is_some_and(|cs| cs.iter().any(|x| x == c))
    }

    /// The directory of a cgroup path in this hierarchy, if the path lies under the mount.
    pub fn dir_of(&self, cgroup_path: &str) -> Option<PathBuf> {
        let rel = if self.cgroup_root == "/" {
            cgroup_path
        } else {
            let rest = cgroup_path.strip_prefix(&self.cgroup_root)?;
            if !(rest.is_empty() || rest.starts_with('/')) {
                return None;
            }
            rest
        };
        let rel = rel.trim_start_matches('/');
        Some(if rel.is_empty() { self.dir.clone() } else { self.dir.join(rel) })
    }

    /// The cgroup path of a directory in this hierarchy (the inverse of [`Mount::dir_of`]), if the directory lies under
    /// the mount.
    pub fn path_of(&self, dir: &Path) -> Option<String> {
        let rel = dir.strip_prefix(&self.dir).ok()?.to_str()?;
        if rel.is_empty() {
            return Some(self.cgroup_root.clone());
        }
        Some(format!("{}/{rel}", self.cgroup_root.trim_end_matches('/')))
    }
}

/// All cgroup hierarchies mounted, from `/proc/self/mountinfo`.
pub fn mounts(root: &SysRoot) -> Result<Vec<Mount>> {
    let text = root.read("/proc/self/mountinfo")?;
    let mut out = Vec::new();
    for line in text.lines() {
        // id parent major:minor root mount-point options [optional…] - fstype source superopts
        let Some((left, right)) = line.split_once(" - ") else { continue };
        let l: Vec<&str> = left.split(' ').collect();
        let r: Vec<&str> = right.split(' ').collect();
        if l.len() < 5 || r.len() < 3 {
            continue;
        }
        let dir = root.path(unescape(l[4]));
        let cgroup_root = unescape(l[3]);
        match r[0] {
            "cgroup2" => out.push(Mount { dir, cgroup_root, v1_controllers: None }),
            "cgroup" => {
                let controllers = r[2]
                    .split(',')
                    .filter(|o| {
                        !matches!(*o, "rw" | "ro") && !o.contains("clone_children") && !o.starts_with("release_agent")
                    })
                    .map(str::to_string)
                    .collect();
                out.push(Mount { dir, cgroup_root, v1_controllers: Some(controllers) });
            }
            _ => {}
        }
    }
    if out.is_empty() {
        return Err(Error::NoCgroupMounts(root.path("/proc/self/mountinfo").display().to_string()));
    }
    Ok(out)
}

/// mountinfo writes space, tab, newline and backslash as octal escapes.
fn unescape(s: &str) -> String {
    s.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")
}

/// A cgroup path found in the mounted hierarchies.
#[derive(Debug, Clone)]
pub struct CgroupDirs {
    pub path: String,
    /// The group in the v1 memory hierarchy, if there is one and the group exists there.
    pub v1_memory: Option<PathBuf>,
    /// The group in the v2 hierarchy, if the group exists there.
    pub v2: Option<PathBuf>,
    /// The v2 hierarchy's top: limits of v2 ancestors are read up to here.
    pub v2_top: Option<PathBuf>,
}

impl CgroupDirs {
    /// Where memory is accounted: v2 if its memory controller is on for this group, else v1.
    pub fn memory_source(&self) -> Option<MemorySource> {
        if let Some(v2) = &self.v2 {
            if v2.join("memory.current").exists() {
                return Some(MemorySource::V2(v2.clone()));
            }
        }
        self.v1_memory.clone().map(MemorySource::V1)
    }

    /// Every directory of this group: v1 memory and v2.
    pub fn dirs(&self) -> impl Iterator<Item = &PathBuf> {
        self.v1_memory.iter().chain(self.v2.iter())
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemorySource {
    V1(PathBuf),
    V2(PathBuf),
}

/// Check a cgroup path as the user wrote it: absolute, no `..`, no empty parts.
pub fn validate_path(path: &str) -> Result<()> {
    let bad = |why: &str| Err(Error::Refused(format!("cgroup path '{path}': {why}")));
    if !path.starts_with('/') {
        return bad("must start with '/' (as /proc/PID/cgroup writes it, e.g. /a/b)");
    }
    if path.split('/').skip(1).any(|p| p == ".." || p == ".") {
        return bad("must not contain '.' or '..'");
    }
    if path.len() > 1 && path.split('/').skip(1).any(str::is_empty) {
        return bad("must not contain empty parts ('//' or a trailing '/')");
    }
    Ok(())
}

/// Find a cgroup path in every mounted hierarchy.
pub fn locate(root: &SysRoot, path: &str) -> Result<CgroupDirs> {
    validate_path(path)?;
    let ms = mounts(root)?;
    let find = |m: &Mount| m.dir_of(path).filter(|d| d.is_dir());
    let v1_memory = ms.iter().filter(|m| m.has_v1_controller("memory")).find_map(find);
    let v2_mount = ms.iter().find(|m| m.is_v2());
    let v2 = v2_mount.and_then(find);
    if v1_memory.is_none() && v2.is_none() {
        let searched = ms
            .iter()
            .filter(|m| m.is_v2() || m.has_v1_controller("memory"))
            .map(|m| m.dir.display().to_string())
            .collect::<Vec<_>>()
            .join(", ");
        return Err(Error::CgroupNotFound { path: path.to_string(), searched });
    }
    Ok(CgroupDirs { path: path.to_string(), v1_memory, v2, v2_top: v2_mount.map(|m| m.dir.clone()) })
}

fn read_file(p: &Path) -> Result<String> {
    std::fs::read_to_string(p).map_err(|e| Error::io(p, e))
}

fn read_num(p: &Path) -> Result<u64> {
    let t = read_file(p)?;
    t.trim().parse().map_err(|_| Error::parse(p, "a number", t.trim()))
}

/// Memory and counters of a cgroup. `ram_bytes` caps the limit: an unlimited group has the machine's RAM.
pub fn read_memory(dirs: &CgroupDirs, ram_bytes: u64) -> Result<(MemoryState, Counters)> {
    match dirs.memory_source() {
        Some(MemorySource::V1(d)) => read_v1(&d, ram_bytes),
        Some(MemorySource::V2(d)) => read_v2(&d, dirs.v2_top.as_deref(), ram_bytes),
        None => Err(Error::Refused(format!(
            "cgroup {} has no memory accounting: it is in no v1 memory hierarchy and its v2 \
             group has no memory controller (enable +memory in the parent's cgroup.subtree_control)",
            dirs.path
        ))),
    }
}

fn read_v1(dir: &Path, ram_bytes: u64) -> Result<(MemoryState, Counters)> {
    let stat_path = dir.join("memory.stat");
    let stat = read_file(&stat_path)?;
    let usage = read_num(&dir.join("memory.usage_in_bytes"))?;
    // hierarchical_memory_limit is the smallest limit on the path to the root.
    let limit = field(&stat, "hierarchical_memory_limit")
        .map(Ok)
        .unwrap_or_else(|| read_num(&dir.join("memory.limit_in_bytes")))?;
    let total = limit.min(ram_bytes);
    let t = |k: &str| field(&stat, &format!("total_{k}")).or_else(|| field(&stat, k));
    let file_active = t("active_file").unwrap_or(0);
    let file_inactive = t("inactive_file").unwrap_or(0);
    let free = total.saturating_sub(usage);
    let oom_control = read_file(&dir.join("memory.oom_control")).unwrap_or_default();
    let mem = MemoryState {
        total_bytes: total,
        limited: limit < ram_bytes,
        used_bytes: usage,
        free_bytes: free,
        available_bytes: (free + file_active + file_inactive).min(total),
        file_active_bytes: file_active,
        file_inactive_bytes: file_inactive,
        anon_bytes: t("active_anon").unwrap_or(0) + t("inactive_anon").unwrap_or(0),
        shmem_bytes: t("shmem").unwrap_or(0),
        swap_used_bytes: t("swap").unwrap_or(0),
    };
    let counters = Counters {
        refault_anon_pages: t("workingset_refault_anon"),
        refault_file_pages: t("workingset_refault_file"),
        // v1 memcgs count no swap-ins, scans or steals.
        swap_in_pages: None,
        swap_out_pages: None,
        scan_pages: None,
        steal_pages: None,
        major_faults: t("pgmajfault"),
        oom_kills: field(&oom_control, "oom_kill"),
        direct_reclaims: read_num(&dir.join("memory.failcnt")).ok(),
    };
    Ok((mem, counters))
}

/// The smallest `memory.max` from the group up to (not including) the hierarchy's top.
fn v2_limit(dir: &Path, top: Option<&Path>) -> Option<u64> {
    let mut best: Option<u64> = None;
    let mut cur = Some(dir);
    while let Some(d) = cur {
        if top.is_some_and(|t| d == t) {
            break;
        }
        if let Ok(text) = std::fs::read_to_string(d.join("memory.max")) {
            if let Ok(v) = text.trim().parse::<u64>() {
                best = Some(best.map_or(v, |b| b.min(v)));
            }
        }
        cur = d.parent();
    }
    best
}

fn read_v2(dir: &Path, top: Option<&Path>, ram_bytes: u64) -> Result<(MemoryState, Counters)> {
    let stat = read_file(&dir.join("memory.stat"))?;
    let usage = read_num(&dir.join("memory.current"))?;
    let limit = v2_limit(dir, top).unwrap_or(u64::MAX);
    let total = limit.min(ram_bytes);
    let s = |k: &str| field(&stat, k);
    let file_active = s("active_file").unwrap_or(0);
    let file_inactive = s("inactive_file").unwrap_or(0);
    let free = total.saturating_sub(usage);
    let events = read_file(&dir.join("memory.events")).unwrap_or_default();
    let mem = MemoryState {
        total_bytes: total,
        limited: limit < ram_bytes,
        used_bytes: usage,
        free_bytes: free,
        available_bytes: (free + file_active + file_inactive).min(total),
        file_active_bytes: file_active,
        file_inactive_bytes: file_inactive,
        anon_bytes: s("anon").unwrap_or(0),
        shmem_bytes: s("shmem").unwrap_or(0),
        swap_used_bytes: read_num(&dir.join("memory.swap.current")).unwrap_or(0),
    };
    let counters = Counters {
        refault_anon_pages: s("workingset_refault_anon"),
        refault_file_pages: s("workingset_refault_file"),
        swap_in_pages: s("pswpin").or_else(|| s("swpin")),
        swap_out_pages: s("pswpout").or_else(|| s("swpout")),
        scan_pages: s("pgscan"),
        steal_pages: s("pgsteal"),
        major_faults: s("pgmajfault"),
        oom_kills: field(&events, "oom_kill"),
        direct_reclaims: field(&events, "max"),
    };
    Ok((mem, counters))
}

/// A v1 memory group's `memory.swappiness` set while this lives, put back on drop. A setting of the group alone, which
/// goes with it: nothing machine-wide to record.
#[derive(Debug)]
pub struct SwappinessGuard {
    file: PathBuf,
    old: String,
}

impl SwappinessGuard {
    /// Set the group's swappiness (0..=200). Only v1 memory groups have one: a v2 group or the system domain is
    /// refused, naming what to do instead.
    pub fn set(dirs: &CgroupDirs, value: u32) -> Result<SwappinessGuard> {
        if value > 200 {
            return Err(Error::Refused(format!("swappiness {value} is out of range: give 0..=200")));
        }
        let Some(MemorySource::V1(dir)) = dirs.memory_source() else {
            return Err(Error::Refused(format!("cgroup {} has no v1 memory.swappiness (v2 groups have none): set vm.swappiness for the machine instead", dirs.path)));
        };
        let file = dir.join("memory.swappiness");
        let old = read_file(&file)?.trim().to_string();
        std::fs::write(&file, value.to_string()).map_err(|e| Error::io(&file, e))?;
        Ok(SwappinessGuard { file, old })
    }
}

impl Drop for SwappinessGuard {
    fn drop(&mut self) {
        // A group removed meanwhile needs nothing put back.
        if self.file.exists() {
            if let Err(e) = std::fs::write(&self.file, &self.old) {
                eprintln!("memorch: putting {} back to {} failed: {e}", self.file.display(), self.old);
            }
        }
    }
}

/// Every pid in the group and its descendants, in all of the group's hierarchies.
pub fn pids(dirs: &CgroupDirs) -> Result<Vec<u32>> {
    let mut set = BTreeSet::new();
    for d in dirs.dirs() {
        collect_pids(d, &mut set)?;
    }
    Ok(set.into_iter().collect())
}

fn collect_pids(dir: &Path, out: &mut BTreeSet<u32>) -> Result<()> {
    let procs = dir.join("cgroup.procs");
    match std::fs::read_to_string(&procs) {
        Ok(text) => out.extend(text.lines().filter_map(|l| l.trim().parse::<u32>().ok())),
        // A child group removed while we walk is gone, not an error.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io(procs, e)),
    }
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io(dir, e)),
    };
    for entry in entries.flatten() {
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            collect_pids(&entry.path(), out)?;
        }
    }
    Ok(())
}

/// Move the calling process into the group in every hierarchy where it exists.
pub fn join_self(dirs: &CgroupDirs) -> Result<()> {
    for d in dirs.dirs() {
        let p = d.join("cgroup.procs");
        std::fs::write(&p, "0").map_err(|e| Error::io(&p, e))?;
    }
    Ok(())
}

/// The memory cgroup path of a process (`/proc/PID/cgroup`): the v1 memory line if there is one, else the v2 line.
pub fn process_cgroup_path(root: &SysRoot, pid: &str) -> Result<String> {
    let text = root.read(format!("/proc/{pid}/cgroup"))?;
    let mut v2 = None;
    for line in text.lines() {
        let mut it = line.splitn(3, ':');
        let (_, ctrls, path) = (it.next(), it.next().unwrap_or(""), it.next().unwrap_or(""));
        if ctrls.split(',').any(|c| c == "memory") {
            return Ok(path.to_string());
        }
        if ctrls.is_empty() {
            v2 = Some(path.to_string());
        }
    }
    v2.ok_or_else(|| Error::parse(root.path(format!("/proc/{pid}/cgroup")), "a memory or v2 line", text.trim()))
}

#[cfg(test)]
#[path = "cgroup_tests.rs"]
mod tests;
