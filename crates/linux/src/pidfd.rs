//! pidfds: a stable handle on a process, so a signal or a `process_madvise` can never reach a
//! process that reused the pid.

use crate::error::{Error, Result};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

#[derive(Debug)]
pub struct Pidfd {
    fd: OwnedFd,
    pub pid: u32,
}

fn errno() -> std::io::Error {
    std::io::Error::last_os_error()
}

fn proc_err(pid: u32, what: &str, e: std::io::Error) -> Error {
    Error::io(format!("/proc/{pid} ({what})"), e)
}

impl Pidfd {
    pub fn open(pid: u32) -> Result<Pidfd> {
        // SAFETY: pidfd_open takes a pid and flags; it returns a new fd or -1.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
        if fd < 0 {
            return Err(proc_err(pid, "pidfd_open", errno()));
        }
        // SAFETY: the kernel just gave us this fd.
        Ok(Pidfd { fd: unsafe { OwnedFd::from_raw_fd(fd as i32) }, pid })
    }

    pub fn raw(&self) -> i32 {
        self.fd.as_raw_fd()
    }

    pub fn send_signal(&self, sig: i32) -> Result<()> {
        // SAFETY: pidfd_send_signal(pidfd, sig, NULL info, 0 flags).
        let r = unsafe { libc::syscall(libc::SYS_pidfd_send_signal, self.raw(), sig, std::ptr::null::<libc::siginfo_t>(), 0) };
        if r < 0 {
            return Err(proc_err(self.pid, "pidfd_send_signal", errno()));
        }
        Ok(())
    }

    /// Reap the memory of a killed process now, instead of when its last thread runs its
    /// exit path. Returns false if the kernel did nothing (already gone, or not dying).
    pub fn mrelease(&self) -> bool {
        // SAFETY: process_mrelease(pidfd, 0).
        unsafe { libc::syscall(libc::SYS_process_mrelease, self.raw(), 0) == 0 }
    }

    /// Wait until the process has exited (the pidfd turns readable), up to `timeout`.
    pub fn wait_exit(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let mut pfd = libc::pollfd { fd: self.raw(), events: libc::POLLIN, revents: 0 };
            // SAFETY: one pollfd we own.
            let r = unsafe { libc::poll(&mut pfd, 1, left.as_millis().min(i32::MAX as u128) as i32) };
            if r > 0 {
                return true;
            }
            if r == 0 || (r < 0 && errno().raw_os_error() != Some(libc::EINTR)) {
                return false;
            }
        }
    }

    /// `process_madvise` over these ranges; returns bytes advised.
    pub fn madvise(&self, iov: &[libc::iovec], advice: i32) -> std::io::Result<usize> {
        // SAFETY: iov points to iov.len() valid iovecs describing the target's address space;
        // the kernel only reads them.
        let r = unsafe { libc::syscall(libc::SYS_process_madvise, self.raw(), iov.as_ptr(), iov.len(), advice, 0u32) };
        if r < 0 {
            Err(errno())
        } else {
            Ok(r as usize)
        }
    }
}
