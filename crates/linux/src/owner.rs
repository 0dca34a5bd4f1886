//! Who made a machine-wide change (a zram set-up, a swap file, KSM settings): the process
//! whose guard undoes it when it ends. Recorded with the change, before it is made, so that
//! when the owner dies without its guards running (SIGKILL, a crash), the next start of any
//! memorch process can see the owner is gone and undo it.
//!
//! A pid alone does not say the owner is alive: a killed owner stays a zombie until its
//! parent reaps it, and a pid can be reused by another process. The owner is the pid *and*
//! its start time; it is alive only while a process with both runs and is not a zombie.

use crate::process;
use crate::root::SysRoot;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    pub pid: u32,
    /// Its start time in clock ticks after boot (`/proc/PID/stat` field 22). `None` in
    /// records written before it was kept: the pid alone is then compared.
    #[serde(default)]
    pub start_ticks: Option<u64>,
}

impl Owner {
    /// This process.
    pub fn me() -> Owner {
        let pid = std::process::id();
        Owner { pid, start_ticks: process::read_stat(&SysRoot::live(), pid).ok().map(|s| s.start_ticks) }
    }

    pub fn is_me(&self) -> bool {
        self.pid == std::process::id()
    }

    /// Whether the owner still runs (and so will undo its change itself).
    pub fn alive(&self, root: &SysRoot) -> bool {
        match process::read_stat(root, self.pid) {
            Err(_) => false,
            Ok(s) => s.state != 'Z' && s.state != 'X' && self.start_ticks.is_none_or(|t| t == s.start_ticks),
        }
    }
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
        assert!(!Owner { pid: u32::MAX - 1, start_ticks: None }.alive(&root));
    }

    #[test]
    fn a_zombie_owner_is_dead() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        let root = SysRoot::live();
        let owner = Owner { pid, start_ticks: process::read_stat(&root, pid).ok().map(|s| s.start_ticks) };
        // Not reaped yet: a zombie until wait().
        let exited = crate::wait::wait_for(std::time::Duration::from_secs(10), || {
            process::read_stat(&root, pid).is_ok_and(|s| s.state == 'Z')
        });
        assert!(exited, "the child became a zombie");
        assert!(!owner.alive(&root), "a zombie runs no guard");
        child.wait().unwrap();
    }
}
