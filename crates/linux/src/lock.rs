//! An exclusive `flock` on a file, held until dropped. Machine-wide state (zram, swap, KSM, cgroup parents) is changed
//! under one, so parallel tests and commands queue, not collide.

use crate::error::{Error, Result};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// The lock every memorch test and command takes before it changes machine-wide state.
pub const MACHINE_LOCK: &str = "/run/lock/memorch-machine.lock";

/// The lock held for a whole run that uses machine-wide state (zram, swap, KSM) throughout: a bench, a test. Parallel
/// test threads, test binaries and benches queue on it. Distinct from [`MACHINE_LOCK`], which actuators take for each
/// change, so a holder of this one never deadlocks with them.
pub const WHOLE_RUN_LOCK: &str = "/run/lock/memorch-test.lock";

#[derive(Debug)]
pub struct FileLock {
    file: File,
    path: PathBuf,
}

impl FileLock {
    /// Block until the lock is ours.
    pub fn acquire(path: impl AsRef<Path>) -> Result<FileLock> {
        let path = path.as_ref();
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(|e| Error::io(path, e))?;
        loop {
            // SAFETY: flock on an fd we own.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
                break;
            }
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EINTR) {
                return Err(Error::io(path, e));
            }
        }
        Ok(FileLock { file, path: path.to_path_buf() })
    }

    /// The machine-wide lock.
    pub fn machine() -> Result<FileLock> {
        FileLock::acquire(MACHINE_LOCK)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        // SAFETY: unlocking an fd we own; closing it would unlock too.
        unsafe { libc::flock(self.file.as_raw_fd(), libc::LOCK_UN) };
    }
}
