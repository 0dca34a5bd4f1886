//! Who made a machine-wide change (a zram set-up, a swap file, KSM settings): the process whose guard undoes it when it
//! ends. Recorded with the change, before it is made, so that when the owner dies without its guards running (SIGKILL,
//! a crash), the next start of any memorch process can see the owner is gone and undo it.
//!
//! A pid alone does not say the owner is alive: a killed owner stays a zombie until its parent reaps it, and a pid can
//! be reused by another process. The owner is the pid *and* its start time; it is alive only while a process with both
//! runs and is not a zombie.
//!
//! A pid means something only in its PID namespace (a daemon in a container or a bench device may be pid 7 there), so
//! the owner carries its namespace too. One in another namespace is found where this process can see it; where it
//! cannot be seen it is taken for alive: a change is never undone unless its owner is shown dead.

use crate::process;
use crate::root::SysRoot;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    pub pid: u32,
    /// Its start time in clock ticks after boot (`/proc/PID/stat` field 22). `None` in records written before it was
    /// kept: the pid alone is then compared.
    #[serde(default)]
    pub start_ticks: Option<u64>,
    /// Its PID namespace (`/proc/self/ns/pid`'s inode). `None` in records written before it was kept: the namespace of
    /// the reader is then assumed.
    #[serde(default)]
    pub pid_ns: Option<u64>,
}

/// The initial PID namespace's inode (the kernel's `PROC_PID_INIT_INO`): from it every process on the machine can be
/// seen.
const INIT_PID_NS: u64 = 0xEFFF_FFFC;

impl Owner {
    /// This process.
    pub fn me() -> Owner {
        let pid = std::process::id();
        let start_ticks = process::read_stat(&SysRoot::live(), pid).ok().map(|s| s.start_ticks);
        Owner { pid, start_ticks, pid_ns: own_pid_ns() }
    }

    /// This process: the same pid in the same namespace, started at the same time.
    pub fn is_me(&self) -> bool {
        let me = Owner::me();
        self.pid == me.pid
            && self.pid_ns.is_none_or(|ns| Some(ns) == me.pid_ns)
            && self.start_ticks.is_none_or(|t| Some(t) == me.start_ticks)
    }

    /// Whether the owner still runs (and so will undo its change itself), or cannot be seen from here to have stopped.
    pub fn alive(&self, root: &SysRoot) -> bool {
        match self.pid_ns {
            Some(ns) if Some(ns) != own_pid_ns() && root.is_live() => self.alive_elsewhere(root, ns),
            _ => self.runs_as(root, self.pid),
        }
    }

    /// Whether the process `pid` (as `root`'s /proc numbers it) is the owner, running.
    fn runs_as(&self, root: &SysRoot, pid: u32) -> bool {
        match process::read_stat(root, pid) {
            Err(_) => false,
            Ok(s) => s.state != 'Z' && s.state != 'X' && self.start_ticks.is_none_or(|t| t == s.start_ticks),
        }
    }

    /// An owner in namespace `ns`: a process of that namespace whose pid there is the owner's and that runs; if none is
    /// seen, dead only when this process sees every process.
    fn alive_elsewhere(&self, root: &SysRoot, ns: u64) -> bool {
        let pids = std::fs::read_dir(root.path("/proc")).into_iter().flatten().flatten();
        for pid in pids.filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok()) {
            let in_ns = pid_ns_of(&root.path(format!("/proc/{pid}/ns/pid"))) == Some(ns);
            if in_ns && innermost_pid(root, pid) == Some(self.pid) {
                return self.runs_as(root, pid);
            }
        }
        own_pid_ns() != Some(INIT_PID_NS)
    }
}

/// This process as names carry it (sandboxes, lxcfs and bench run directories): `PID` in the initial PID namespace,
/// `PID_NS` in another (NS: the namespace's inode), so that whoever reads the name, in any namespace, judges the right
/// process.
pub fn tag() -> String {
    match own_pid_ns() {
        Some(ns) if ns != INIT_PID_NS => format!("{}_{ns}", std::process::id()),
        _ => std::process::id().to_string(),
    }
}

/// The owner a [`tag`] names (its start time is not in it).
pub fn from_tag(tag: &str) -> Option<Owner> {
    let (pid, ns) = match tag.split_once('_') {
        Some((pid, ns)) => (pid, ns.parse().ok()?),
        None => (tag, INIT_PID_NS),
    };
    Some(Owner { pid: pid.parse().ok()?, start_ticks: None, pid_ns: Some(ns) })
}

/// This process's PID namespace.
pub fn own_pid_ns() -> Option<u64> {
    pid_ns_of(std::path::Path::new("/proc/self/ns/pid"))
}

fn pid_ns_of(link: &std::path::Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(link).ok().map(|m| m.ino())
}

/// A process's pid in its own (innermost) namespace: the last of `NSpid`.
fn innermost_pid(root: &SysRoot, pid: u32) -> Option<u32> {
    let status = root.read(format!("/proc/{pid}/status")).ok()?;
    status.lines().find_map(|l| l.strip_prefix("NSpid:"))?.split_whitespace().last()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_another_start_time_is_not() {
        let root = SysRoot::live();
        let me = Owner::me();
        assert!(me.is_me() && me.alive(&root));
        assert!(me.start_ticks.is_some());
        let reused = Owner { start_ticks: me.start_ticks.map(|t| t + 1), ..me };
        assert!(!reused.alive(&root), "a pid with another start time is another process");
        assert!(!Owner { pid: u32::MAX - 1, start_ticks: None, pid_ns: None }.alive(&root));
    }

    #[test]
    fn a_tag_names_this_process_in_any_namespace() {
        let me = from_tag(&tag()).unwrap();
        assert!(me.is_me() && me.alive(&SysRoot::live()));
        let elsewhere = from_tag(&format!("{}_12345", std::process::id())).unwrap();
        assert_eq!(elsewhere.pid_ns, Some(12345));
        assert!(!elsewhere.is_me(), "the same pid in another namespace is another process");
        assert_eq!(from_tag("7_x"), None);
        assert_eq!(from_tag("x"), None);
    }

    /// A daemon in a PID namespace of its own is pid 1 there: from the host it is found by its namespace, is not this
    /// process whatever its pid, and is dead once its namespace is.
    #[test]
    fn an_owner_in_another_pid_namespace_is_judged_by_its_namespace_not_its_pid_alone() {
        let root = SysRoot::live();
        if own_pid_ns() != Some(INIT_PID_NS) || unsafe { libc::geteuid() } != 0 {
            eprintln!("SKIP: needs root in the initial PID namespace (to make and see another)");
            return;
        }
        let mut child = std::process::Command::new("unshare")
            .args(["--pid", "--fork", "--kill-child", "sleep", "60"])
            .spawn()
            .expect("unshare runs");
        // The sleep is pid 1 of the new namespace: a child of unshare, found by its NSpid.
        let inner = crate::wait::wait_for(std::time::Duration::from_secs(10), || {
            process::children_of(child.id()).first().is_some_and(|&p| innermost_pid(&root, p) == Some(1))
        });
        assert!(inner, "the namespaced process started");
        let host_pid = process::children_of(child.id())[0];
        let ns = pid_ns_of(std::path::Path::new(&format!("/proc/{host_pid}/ns/pid"))).unwrap();
        let start_ticks = process::read_stat(&root, host_pid).ok().map(|s| s.start_ticks);
        let owner = Owner { pid: 1, start_ticks, pid_ns: Some(ns) };
        assert!(owner.alive(&root), "found alive in its namespace");
        assert!(!owner.is_me(), "pid 1 of another namespace is not this process");
        let same_pid_other_ns = Owner { pid: std::process::id(), start_ticks: None, pid_ns: Some(ns) };
        assert!(!same_pid_other_ns.is_me(), "this pid in another namespace is not this process");
        assert!(
            !Owner { pid: 1, start_ticks, pid_ns: Some(12345) }.alive(&root),
            "a namespace no process holds is gone"
        );
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(
            crate::wait::wait_for(std::time::Duration::from_secs(10), || !owner.alive(&root)),
            "dead with its namespace"
        );
    }

    #[test]
    fn a_zombie_owner_is_dead() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        let root = SysRoot::live();
        let start_ticks = process::read_stat(&root, pid).ok().map(|s| s.start_ticks);
        let owner = Owner { pid, start_ticks, pid_ns: own_pid_ns() };
        // Not reaped yet: a zombie until wait().
        let exited = crate::wait::wait_for(std::time::Duration::from_secs(10), || {
            process::read_stat(&root, pid).is_ok_and(|s| s.state == 'Z')
        });
        assert!(exited, "the child became a zombie");
        assert!(!owner.alive(&root), "a zombie runs no guard");
        child.wait().unwrap();
    }
}
