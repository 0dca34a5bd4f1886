//! A sandbox cgroup: one path created in the v1 memory hierarchy (for the limit) and in the v2 hierarchy (for PSI,
//! freeze and kill), below the cgroup this process runs in. Tests use it for every live domain; the bench's virtual
//! devices build on it.
//!
//! It is a guard: dropping it kills every process inside, waits for them, and removes every directory it created, also
//! on panic. A creator killed with SIGKILL runs no guard: the next start's recovery ([`remove_stale`]) removes what it
//! left, wherever it ran.

use crate::cgroup::{self, Mount};
use crate::error::{Error, Result};
use crate::lock::FileLock;
use crate::root::SysRoot;
use crate::sandbox_registry::{read_registry, register_parents, remove_registered_parents, remove_tree};
use std::ffi::CString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// Serialises creation and removal of shared parent directories in the v2 hierarchy.
const PARENTS_LOCK: &str = "/run/lock/memorch-cgroup-parents.lock";

#[derive(Debug)]
pub struct Sandbox {
    /// The cgroup path, as `/proc/PID/cgroup` writes it: what `--domain cgroup:PATH` takes.
    pub path: String,
    pub v1_memory: Option<PathBuf>,
    pub v2: Option<PathBuf>,
    children: Vec<Child>,
    destroyed: bool,
}

impl Sandbox {
    /// Create `<own cgroup>/<name>` with a memory limit (bytes; `None` = no limit).
    pub fn create(name: &str, limit_bytes: Option<u64>) -> Result<Sandbox> {
        let root = SysRoot::live();
        if name.is_empty() || name.contains('/') || name.starts_with('.') {
            return Err(Error::Refused(format!("sandbox name '{name}': use letters, digits, '-' or '_'")));
        }
        let base = cgroup::process_cgroup_path(&root, "self")?;
        let path = child_path(&base, name);
        let mounts = cgroup::mounts(&root)?;
        let v1_mount = mounts.iter().find(|m| m.has_v1_controller("memory"));
        let v2_mount = mounts.iter().find(|m| m.is_v2());
        if v1_mount.is_none() && v2_mount.is_none() {
            return Err(Error::NoCgroupMounts("/proc/self/mountinfo".into()));
        }
        let mut sb = Sandbox { path: path.clone(), v1_memory: None, v2: None, children: Vec::new(), destroyed: false };
        // From here on, a failure drops `sb`, which removes what was made.
        if let Some(m) = v1_mount {
            let dir = dir_in(m, &path)?;
            mkdir_new(&dir)?;
            sb.v1_memory = Some(dir);
        }
        if let Some(m) = v2_mount {
            let dir = dir_in(m, &path)?;
            let _lock = FileLock::acquire(PARENTS_LOCK)?;
            let made = mkdir_parents(&dir, &m.dir)?;
            register_parents(&made)?;
            mkdir_new(&dir)?;
            sb.v2 = Some(dir);
        }
        if let Some(limit) = limit_bytes {
            sb.set_limit(limit)?;
        }
        Ok(sb)
    }

    /// Set the memory limit (v2 `memory.max` where the memory controller is on v2, else v1 `memory.limit_in_bytes`).
    pub fn set_limit(&self, limit_bytes: u64) -> Result<()> {
        let target = match (&self.v2, &self.v1_memory) {
            (Some(v2), _) if v2.join("memory.max").exists() => v2.join("memory.max"),
            (_, Some(v1)) => v1.join("memory.limit_in_bytes"),
            _ => {
                return Err(Error::Refused(format!(
                    "sandbox {}: no memory controller in any hierarchy, cannot set a limit",
                    self.path
                )))
            }
        };
        std::fs::write(&target, limit_bytes.to_string()).map_err(|e| Error::io(&target, e))
    }

    /// Arrange for `cmd` to join the sandbox between fork and exec, so that nothing it allocates is ever charged
    /// outside.
    pub fn prepare(&self, cmd: &mut Command) {
        let procs: Vec<CString> = self
            .dirs()
            .map(|d| {
                CString::new(d.join("cgroup.procs").into_os_string().into_encoded_bytes())
                    .expect("no NUL in cgroup paths")
            })
            .collect();
        // SAFETY: the closure only calls open/write/close (async-signal-safe) on strings allocated before the fork.
        unsafe {
            cmd.pre_exec(move || {
                for p in &procs {
                    let fd = libc::open(p.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                    if fd < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    // "0" is the writing process itself, in v1 and v2.
                    let n = libc::write(fd, b"0".as_ptr().cast(), 1);
                    let err = std::io::Error::last_os_error();
                    libc::close(fd);
                    if n != 1 {
                        return Err(err);
                    }
                }
                Ok(())
            });
        }
    }

    /// Start a process inside the sandbox; it is killed and reaped when the sandbox drops.
    pub fn spawn(&mut self, cmd: &mut Command) -> Result<&mut Child> {
        self.prepare(cmd);
        let child = cmd.spawn().map_err(|e| Error::Other {
            what: format!("start {:?} in sandbox {}", cmd.get_program(), self.path),
            detail: e.to_string(),
        })?;
        self.children.push(child);
        Ok(self.children.last_mut().expect("just pushed"))
    }

    /// Hand back the `Child` of a process this sandbox started, for the caller to watch and reap; the sandbox still
    /// kills it with everything else when it goes.
    pub fn take_child(&mut self, pid: u32) -> Option<Child> {
        let i = self.children.iter().position(|c| c.id() == pid)?;
        Some(self.children.swap_remove(i))
    }

    /// The sandbox's directories in each hierarchy.
    pub fn dirs(&self) -> impl Iterator<Item = &PathBuf> {
        self.v1_memory.iter().chain(self.v2.iter())
    }

    /// Every process in the sandbox now.
    pub fn pids(&self) -> Result<Vec<u32>> {
        let dirs = cgroup::CgroupDirs {
            path: self.path.clone(),
            v1_memory: self.v1_memory.clone(),
            v2: self.v2.clone(),
            v2_top: None,
        };
        cgroup::pids(&dirs)
    }

    /// Kill everything inside and remove the groups. Errors say what is left behind.
    pub fn destroy(mut self) -> Result<()> {
        self.teardown()
    }

    fn teardown(&mut self) -> Result<()> {
        if self.destroyed {
            return Ok(());
        }
        self.destroyed = true;
        self.kill_all();
        for c in &mut self.children {
            let _ = c.wait();
        }
        // Grandchildren are reaped by their new parent; wait until the groups are empty.
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self.pids().unwrap_or_default().is_empty() && Instant::now() < deadline {
            self.kill_all();
            std::thread::sleep(Duration::from_millis(5));
        }
        let mut first_err = None;
        let dirs: Vec<PathBuf> = self.dirs().cloned().collect();
        for d in &dirs {
            if let Err(e) = remove_tree(d) {
                first_err.get_or_insert(e);
            }
        }
        if self.v2.is_some() {
            let _lock = FileLock::acquire(PARENTS_LOCK);
            remove_registered_parents();
        }
        first_err.map_or(Ok(()), Err)
    }

    /// SIGKILL everything inside: `cgroup.kill` where v2 has it, else each pid.
    fn kill_all(&self) {
        if let Some(v2) = &self.v2 {
            if std::fs::write(v2.join("cgroup.kill"), "1").is_ok() {
                return;
            }
        }
        for pid in self.pids().unwrap_or_default() {
            // SAFETY: every pid listed here is inside the sandbox, which only we populate.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        }
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        if let Err(e) = self.teardown() {
            eprintln!("memorch: sandbox {}: cleanup failed: {e}", self.path);
        }
    }
}

fn dir_in(m: &Mount, path: &str) -> Result<PathBuf> {
    m.dir_of(path).ok_or_else(|| {
        Error::Refused(format!("cgroup path {path} lies outside the hierarchy mounted at {}", m.dir.display()))
    })
}

fn mkdir_new(dir: &Path) -> Result<()> {
    std::fs::create_dir(dir).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            Error::Refused(format!(
                "{} already exists: another sandbox has this name (destroy it, or pick another name)",
                dir.display()
            ))
        } else {
            Error::io(dir, e)
        }
    })
}

/// Create the missing directories between `top` and `dir` (exclusive); return those made, deepest first.
fn mkdir_parents(dir: &Path, top: &Path) -> Result<Vec<PathBuf>> {
    let mut missing = Vec::new();
    let mut cur = dir.parent();
    while let Some(p) = cur {
        if p == top || p.exists() {
            break;
        }
        missing.push(p.to_path_buf());
        cur = p.parent();
    }
    for p in missing.iter().rev() {
        std::fs::create_dir(p).map_err(|e| Error::io(p, e))?;
    }
    Ok(missing)
}

/// The owner named in a name made by `unique::unique_name` (`prefix-TAG-N`).
fn owner_of(name: &str) -> Option<crate::owner::Owner> {
    let mut parts = name.rsplitn(3, '-');
    let n = parts.next()?;
    let tag = parts.next()?;
    (n.bytes().all(|b| b.is_ascii_digit()) && parts.next().is_some_and(|p| p.starts_with("memorch")))
        .then(|| crate::owner::from_tag(tag))
        .flatten()
}

/// A group's cgroup path joined with the name of a group below it.
fn child_path(base: &str, name: &str) -> String {
    if base == "/" {
        format!("/{name}")
    } else {
        format!("{base}/{name}")
    }
}

/// Remove sandboxes whose creator died without removing them (named `memorch…-PID-N` by tests and the bench, PID no
/// longer alive): kill what is inside and remove the groups, then the v2 parents memorch made that nothing holds any
/// more. Looked for wherever a sandbox can be ([`places`]), not only below this process's group. Returns the paths
/// removed (without `undo`, those it would remove, and nothing is changed).
pub fn remove_stale(undo: bool) -> Vec<String> {
    let root = SysRoot::live();
    let mut removed = Vec::new();
    for place in places() {
        for name in place.child_names() {
            let Some(owner) = owner_of(&name) else { continue };
            if owner.is_me() || owner.alive(&root) {
                continue;
            }
            let path = child_path(&place.base, &name);
            if !undo {
                removed.push(path);
                continue;
            }
            let sb = Sandbox {
                path: path.clone(),
                v1_memory: place.v1.as_ref().map(|d| d.join(&name)).filter(|d| d.is_dir()),
                v2: place.v2.as_ref().map(|d| d.join(&name)).filter(|d| d.is_dir()),
                children: Vec::new(),
                destroyed: false,
            };
            if sb.destroy().is_ok() {
                removed.push(path);
            }
        }
    }
    // A creator killed between making a parent and its sandbox left the parent empty.
    if undo && !read_registry().is_empty() {
        if let Ok(_lock) = FileLock::acquire(PARENTS_LOCK) {
            remove_registered_parents();
        }
    }
    removed
}

/// A group below which sandboxes are made, in the v1 memory and the v2 hierarchy.
struct Place {
    base: String,
    v1: Option<PathBuf>,
    v2: Option<PathBuf>,
}

impl Place {
    /// The names of the groups directly below it, in either hierarchy.
    fn child_names(&self) -> std::collections::BTreeSet<String> {
        let mut names = std::collections::BTreeSet::new();
        for d in self.v1.iter().chain(self.v2.iter()) {
            for e in std::fs::read_dir(d).into_iter().flatten().flatten() {
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    names.insert(e.file_name().to_string_lossy().into_owned());
                }
            }
        }
        names
    }
}

/// Where sandboxes can be: below this process's own group (first), and below each v2 parent memorch made and
/// registered. A process that ran in another group (an earlier session's, a bench killed with SIGKILL) made its
/// sandboxes below that group, where this process's own never leads; where the v2 hierarchy lacked that path, the
/// parents it made are registered, and lead there.
fn places() -> Vec<Place> {
    let root = SysRoot::live();
    let (Ok(base), Ok(mounts)) = (cgroup::process_cgroup_path(&root, "self"), cgroup::mounts(&root)) else {
        return Vec::new();
    };
    let v1 = mounts.iter().find(|m| m.has_v1_controller("memory"));
    let v2 = mounts.iter().find(|m| m.is_v2());
    let place =
        |base: String| Place { v1: v1.and_then(|m| m.dir_of(&base)), v2: v2.and_then(|m| m.dir_of(&base)), base };
    let mut out = vec![place(base)];
    if let Some(m) = v2 {
        for parent in read_registry() {
            if let Some(b) = m.path_of(&parent).filter(|b| out.iter().all(|p| &p.base != b)) {
                out.push(place(b));
            }
        }
    }
    out
}

/// The names of the cgroups directly below this process's own, in either hierarchy: where sandboxes are made.
pub fn child_groups() -> std::collections::BTreeSet<String> {
    places().first().map(Place::child_names).unwrap_or_default()
}

#[cfg(test)]
#[path = "sandbox_tests.rs"]
mod tests;
