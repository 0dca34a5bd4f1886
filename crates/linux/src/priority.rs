//! The calling thread's CPU priority (nice), changed for a piece of work and put back after.
//!
//! The kernel does the work of a squeeze, a reclaim or a read-back in the context of the thread that asks for it
//! (`process_madvise`, a write of a lower memory limit, reads of `/proc/PID/mem`), so that work runs at the asking
//! thread's priority. The daemon runs at a high one (`loop.nice`, -10) so that a decision and a kill never wait behind
//! the apps; a squeeze at that priority also takes the CPU from the app the user is waiting for. On Linux nice is a
//! per-thread attribute (setpriority(2), NOTES): `PRIO_PROCESS` with who = 0 names the calling thread, and threads it
//! starts inherit it.

use std::io;

/// The calling thread's nice value.
pub fn current() -> io::Result<i32> {
    // getpriority may return -1 as a value: errno tells an error from it. SAFETY: errno is this thread's; getpriority
    // reads this thread's priority only.
    unsafe {
        *libc::__errno_location() = 0;
        let n = libc::getpriority(libc::PRIO_PROCESS, 0);
        match io::Error::last_os_error() {
            e if n == -1 && e.raw_os_error() != Some(0) => Err(e),
            _ => Ok(n),
        }
    }
}

/// Set the calling thread's nice value.
pub fn set(nice: i32) -> io::Result<()> {
    // SAFETY: setpriority on the calling thread only.
    if unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, nice) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The calling thread at another nice value until dropped, then back at the one it had (on every exit path, a panic's
/// included). Made and dropped on the same thread.
pub struct NiceGuard {
    before: Option<i32>,
}

impl NiceGuard {
    /// Run at `nice` until the guard drops. An error (the priority could not be read or changed) leaves the thread as
    /// it was.
    pub fn at(nice: i32) -> io::Result<NiceGuard> {
        let now = current()?;
        if now == nice {
            return Ok(NiceGuard { before: None });
        }
        set(nice)?;
        Ok(NiceGuard { before: Some(now) })
    }

    /// The priority the thread goes back to, if the guard changed it.
    pub fn restores_to(&self) -> Option<i32> {
        self.before
    }
}

impl Drop for NiceGuard {
    fn drop(&mut self) {
        if let Some(n) = self.before {
            // Going back to a higher priority needs CAP_SYS_NICE (or RLIMIT_NICE): a daemon that could raise it once
            // can again; if not, say so, since its kills now wait.
            if let Err(e) = set(n) {
                eprintln!("memorch: putting this thread's priority back to nice {n} failed: {e}; decisions and kills now run at a lower one");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs in a thread of its own, so the test runner's threads keep their priority.
    #[test]
    fn the_guard_changes_this_thread_only_and_puts_it_back() {
        std::thread::spawn(|| {
            let start = current().unwrap();
            let other = std::thread::spawn(|| current().unwrap());
            let lower = (start + 5).min(19);
            {
                let g = NiceGuard::at(lower).unwrap();
                assert_eq!(current().unwrap(), lower);
                assert_eq!(g.restores_to(), (lower != start).then_some(start));
                // A thread started under the guard inherits it; one started before does not.
                assert_eq!(std::thread::spawn(|| current().unwrap()).join().unwrap(), lower);
            }
            assert_eq!(other.join().unwrap(), start);
            // Back up needs CAP_SYS_NICE: as root it is back where it was; unprivileged the guard said so and the
            // thread stays at the lower priority.
            let now = current().unwrap();
            let privileged = unsafe { libc::geteuid() } == 0;
            if privileged {
                assert_eq!(now, start);
            } else {
                eprintln!("not root: this thread's priority could not be raised back ({now}, was {start})");
                assert!(now == start || now == lower);
            }
            // The same value: nothing to change, nothing to put back.
            assert_eq!(NiceGuard::at(now).unwrap().restores_to(), None);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_value_the_kernel_refuses_leaves_the_thread_as_it_was() {
        std::thread::spawn(|| {
            let start = current().unwrap();
            // Out of range values are clamped by the kernel, not refused: -20 without CAP_SYS_NICE is refused (EACCES),
            // which only an unprivileged run can show.
            if unsafe { libc::geteuid() } != 0 {
                let e = NiceGuard::at(-20).map(|_| ()).unwrap_err();
                assert_eq!(e.raw_os_error(), Some(libc::EACCES));
                assert_eq!(current().unwrap(), start);
            } else {
                let g = NiceGuard::at(start - 1).unwrap();
                assert_eq!(current().unwrap(), start - 1);
                drop(g);
                assert_eq!(current().unwrap(), start);
            }
        })
        .join()
        .unwrap();
    }
}
