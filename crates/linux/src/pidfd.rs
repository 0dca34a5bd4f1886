//! pidfds: a stable handle on a process, so a signal or a `process_madvise` can never reach a process that reused the
//! pid.

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
        let r = unsafe {
            libc::syscall(libc::SYS_pidfd_send_signal, self.raw(), sig, std::ptr::null::<libc::siginfo_t>(), 0)
        };
        if r < 0 {
            return Err(proc_err(self.pid, "pidfd_send_signal", errno()));
        }
        Ok(())
    }

    /// Reap the memory of a killed process now, instead of when its last thread runs its exit path. Returns false if
    /// the kernel did nothing (already gone, or not dying).
    pub fn mrelease(&self) -> bool {
        // SAFETY: process_mrelease(pidfd, 0).
        unsafe { libc::syscall(libc::SYS_process_mrelease, self.raw(), 0) == 0 }
    }

    /// Wait until the process has exited (the pidfd turns readable), up to `timeout`, and no shorter: poll counts whole
    /// milliseconds, so what is left is rounded up (rounded down, a 300 ms pre-kill bound ended at 299.955 ms).
    pub fn wait_exit(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let mut pfd = libc::pollfd { fd: self.raw(), events: libc::POLLIN, revents: 0 };
            // SAFETY: one pollfd we own.
            let r = unsafe { libc::poll(&mut pfd, 1, left.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32) };
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
        // SAFETY: iov points to iov.len() valid iovecs describing the target's address space; the kernel only reads
        // them.
        let r = unsafe { libc::syscall(libc::SYS_process_madvise, self.raw(), iov.as_ptr(), iov.len(), advice, 0u32) };
        if r < 0 {
            Err(errno())
        } else {
            Ok(r as usize)
        }
    }
}

/// Which of these processes have exited (a zombie or reaped), in one `poll` over their pidfds: a check of many
/// processes at once, where a read of each one's `/proc/PID/stat` is three system calls and a walk of its threads.
/// `None` if the poll failed.
pub fn which_exited(fds: &[&Pidfd]) -> Option<Vec<bool>> {
    let mut pfds: Vec<libc::pollfd> =
        fds.iter().map(|p| libc::pollfd { fd: p.raw(), events: libc::POLLIN, revents: 0 }).collect();
    // SAFETY: polling pollfds we own, a valid slice, without waiting.
    let r = unsafe { libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, 0) };
    if r < 0 {
        return None;
    }
    Some(pfds.iter().map(|p| p.revents & (libc::POLLIN | libc::POLLHUP) != 0).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A child of the test: alive, then killed and left unreaped (a zombie), then reaped.
    #[test]
    fn which_exited_tells_the_live_from_the_exited_a_zombie_included() {
        let mut live = std::process::Command::new("sleep").arg("60").spawn().unwrap();
        let mut dying = std::process::Command::new("sleep").arg("60").spawn().unwrap();
        let fds = [Pidfd::open(live.id()).unwrap(), Pidfd::open(dying.id()).unwrap()];
        let refs: Vec<&Pidfd> = fds.iter().collect();
        assert_eq!(which_exited(&refs), Some(vec![false, false]));
        dying.kill().unwrap();
        assert!(
            crate::wait::wait_for(Duration::from_secs(5), || which_exited(&refs) == Some(vec![false, true])),
            "the killed one exited"
        );
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", dying.id())).unwrap();
        assert_eq!(crate::process::parse_stat(&stat).unwrap().state, 'Z', "not reaped yet");
        dying.wait().unwrap();
        assert_eq!(which_exited(&refs), Some(vec![false, true]), "and once reaped");
        live.kill().unwrap();
        live.wait().unwrap();
    }
}
