//! Undo what memorch processes that died left behind: their guards never ran (SIGKILL, a crash). Every start of the
//! daemon, the bench and the tests calls [`recover_all`] before it changes anything, so one dead owner's zram, swap
//! files, KSM settings never outlive the next start, and never make it believe the machine was set up that way.

use crate::root::SysRoot;

/// Everything of dead owners: zram set-ups, swap files, slow disks, KSM settings, lxcfs instances and sandboxes. Each
/// entry says what was put back (`Ok`) or what could not be (`Err`).
pub fn recover_all(root: &SysRoot) -> Vec<Result<String, String>> {
    recover(root, true)
}

/// What [`recover_all`] would put back, each entry starting "would", and nothing changed: a dry run's start.
pub fn report_all(root: &SysRoot) -> Vec<Result<String, String>> {
    recover(root, false)
}

/// What recovery left on because its pages would not fit back (swap files, zram), taken over by a daemon that starts:
/// its guards now, removed once idle or at its end. Its use in a crash loop: each restart keeps the pages where they
/// are instead of killing apps.
#[derive(Default)]
pub struct Adopted {
    pub swap_files: Vec<crate::swapfile::SwapFileGuard>,
    pub zram: Vec<crate::zram::ZramGuard>,
}

/// Take over what [`recover_all`] left on (call it after).
pub fn adopt_left(root: &SysRoot) -> Adopted {
    Adopted { swap_files: crate::swapfile::adopt_stale(root), zram: crate::zram::adopt_stale(root) }
}

fn recover(root: &SysRoot, undo: bool) -> Vec<Result<String, String>> {
    let mut out = Vec::new();
    // Swap files before zram: both are swap, and zram's own teardown swaps off.
    out.extend(crate::swapfile::recover_stale(root, undo));
    // A slow disk holds swap files: after them.
    out.extend(crate::slow_disk::recover_stale(root, undo));
    out.extend(crate::zram::recover_stale(root, undo));
    out.extend(crate::ksm::recover_stale(root, undo));
    if root.is_live() {
        let (stop, remove) = if undo { ("stopped", "removed") } else { ("would stop", "would remove") };
        out.extend(
            crate::lxcfs::recover_stale(undo)
                .into_iter()
                .map(|d| Ok(format!("{stop} lxcfs at {}, left by a memorch process that died", d.display()))),
        );
        out.extend(
            crate::sandbox::remove_stale(undo)
                .into_iter()
                .map(|p| Ok(format!("{remove} sandbox {p}, left by a memorch process that died"))),
        );
        out.extend(remove_dead_owners_dirs(root, BENCH_RUN_ROOT, undo));
    }
    out
}

/// Where the bench keeps each run's short-lived files (`{run}`: real programs' sockets), in a directory named by the
/// bench's `owner::tag`.
pub const BENCH_RUN_ROOT: &str = "/run/memorch/bench";

/// Directories under `parent` named by the tag of an owner that is gone.
fn remove_dead_owners_dirs(root: &SysRoot, parent: &str, undo: bool) -> Vec<Result<String, String>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(parent).into_iter().flatten().flatten() {
        let Some(owner) = e.file_name().to_str().and_then(crate::owner::from_tag) else { continue };
        if owner.is_me() || owner.alive(root) {
            continue;
        }
        if !undo {
            out.push(Ok(format!("would remove {}, left by a bench that died", e.path().display())));
            continue;
        }
        out.push(
            std::fs::remove_dir_all(e.path())
                .map(|_| format!("removed {}, left by a bench that died", e.path().display()))
                .map_err(|err| format!("{}: {err}", e.path().display())),
        );
    }
    out
}
