//! Who memorch may act on. Every actuator that touches a process goes through [`check`]: it refuses PID 1, kernel
//! threads, memorch itself and its ancestors, the init of a PID namespace (its death takes the namespace with it),
//! system processes (`oom_score_adj` < 0), and anything outside the given domain, and every refusal says why.

use crate::domain::Domain;
use crate::error::{Error, Result};
use crate::pidfd::Pidfd;
use crate::process::{self, Stat};
use crate::root::SysRoot;
use memorch_core::Class;

/// A process that passed the checks, pinned by a pidfd.
#[derive(Debug)]
pub struct Target {
    pub pid: u32,
    pub name: String,
    pub class: Class,
    pub oom_score_adj: i32,
    pub pidfd: Pidfd,
}

/// The pids of this process and all its ancestors.
pub fn self_and_ancestors(root: &SysRoot) -> Vec<u32> {
    let mut out = vec![std::process::id()];
    let mut pid = std::process::id();
    while let Ok(s) = process::read_stat(root, pid) {
        if s.ppid == 0 || out.contains(&s.ppid) {
            break;
        }
        out.push(s.ppid);
        pid = s.ppid;
    }
    out
}

fn refuse(pid: u32, why: impl std::fmt::Display) -> Error {
    Error::Refused(format!("refusing pid {pid}: {why}"))
}

/// Check that memorch may act on `pid` in `domain`, and pin it.
pub fn check(root: &SysRoot, pid: u32, domain: &Domain) -> Result<Target> {
    if pid == 0 || pid == 1 {
        return Err(refuse(pid, "pid 0 and 1 (init) are never touched"));
    }
    let stat = read_stat_or_gone(root, pid)?;
    if stat.is_kernel_thread() {
        return Err(refuse(pid, format!("'{}' is a kernel thread", stat.name)));
    }
    if self_and_ancestors(root).contains(&pid) {
        return Err(refuse(pid, format!("'{}' is memorch itself or one of its ancestors", stat.name)));
    }
    if !domain.contains(root, pid)? {
        return Err(refuse(pid, format!("'{}' is not in domain {}", stat.name, domain.spec)));
    }
    if root.read(format!("/proc/{pid}/status")).is_ok_and(|t| process::is_pid_ns_init(&t)) {
        return Err(refuse(
            pid,
            format!("'{}' is the init of a PID namespace: its death would kill every process in it", stat.name),
        ));
    }
    let adj = process::read_oom_score_adj(root, pid).map_err(|e| gone_or(pid, e))?;
    let class = Class::from_oom_score_adj(adj);
    if class.is_protected() {
        return Err(refuse(pid, format!("'{}' has oom_score_adj {adj} (< 0 marks a system process)", stat.name)));
    }
    let pidfd = Pidfd::open(pid).map_err(|e| gone_or(pid, e))?;
    // The pid could have been reused between the checks and pidfd_open: compare start times.
    let again = read_stat_or_gone(root, pid)?;
    if again.start_ticks != stat.start_ticks {
        return Err(refuse(pid, "the process exited and its pid was reused while checking"));
    }
    Ok(Target { pid, name: stat.name, class, oom_score_adj: adj, pidfd })
}

fn read_stat_or_gone(root: &SysRoot, pid: u32) -> Result<Stat> {
    process::read_stat(root, pid).map_err(|e| gone_or(pid, e))
}

fn gone_or(pid: u32, e: Error) -> Error {
    if e.is_not_found() {
        Error::Refused(format!("no process {pid} (it has exited, or never existed)"))
    } else {
        e
    }
}
