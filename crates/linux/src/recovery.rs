//! Undo what memorch processes that died left behind: their guards never ran (SIGKILL, a
//! crash). Every start of the daemon, the bench and the tests calls [`recover_all`] before it
//! changes anything, so one dead owner's zram, swap files or KSM settings never outlive the
//! next start, and never make it believe the machine was set up that way.

use crate::root::SysRoot;

/// Everything of dead owners: zram set-ups, swap files, KSM settings, lxcfs instances and
/// sandboxes. Each entry says what was put back (`Ok`) or what could not be (`Err`).
pub fn recover_all(root: &SysRoot) -> Vec<Result<String, String>> {
    let mut out = Vec::new();
    // Swap files before zram: both are swap, and zram's own teardown swaps off.
    out.extend(crate::swapfile::recover_stale(root));
    out.extend(crate::zram::recover_stale(root));
    out.extend(crate::ksm::recover_stale(root));
    if root.is_live() {
        out.extend(crate::lxcfs::recover_stale().into_iter().map(|d| Ok(format!("stopped lxcfs at {}, left by a memorch process that died", d.display()))));
        out.extend(crate::sandbox::remove_stale().into_iter().map(|p| Ok(format!("removed sandbox {p}, left by a memorch process that died"))));
    }
    out
}
