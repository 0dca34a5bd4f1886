//! The file descriptors the daemon's single poll loop waits on: PSI triggers, a timerfd and a
//! signalfd. Each is an owned fd closed on drop.

use crate::error::{Error, Result};
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Which PSI line a trigger watches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StallKind {
    Some,
    Full,
}

/// A PSI trigger: the fd turns readable (POLLPRI) when the stall within a window exceeds the
/// threshold.
#[derive(Debug)]
pub struct PsiTrigger {
    file: std::fs::File,
    pub kind: StallKind,
    pub stall_us: u64,
    pub window_us: u64,
    pub path: PathBuf,
}

impl PsiTrigger {
    /// Open a trigger of `stall_us` per `window_us`. Where the kernel refuses the window
    /// (without CAP_SYS_RESOURCE only whole multiples of 2 s are allowed), the window is
    /// rounded up to the next multiple of 2 s and the stall kept: the trigger fires as soon
    /// as the asked one would (the stall reached within a window), at most once a window.
    /// (Scaling the stall with the window, as done first, let lmkd's triggers fire only
    /// after the memcg's OOM killer had acted: issue 12.)
    pub fn open(path: &Path, kind: StallKind, stall_us: u64, window_us: u64) -> Result<PsiTrigger> {
        match Self::try_open(path, kind, stall_us, window_us) {
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) && !window_us.is_multiple_of(2_000_000) => {
                let w = window_us.div_ceil(2_000_000) * 2_000_000;
                let s = stall_us.min(w);
                Self::try_open(path, kind, s, w)
                    .map_err(|e| Error::Other { what: format!("PSI trigger on {}", path.display()), detail: format!("{e} (even with a {w} µs window)") })
            }
            r => r.map_err(|e| Error::Other { what: format!("PSI trigger on {}", path.display()), detail: e.to_string() }),
        }
    }

    fn try_open(path: &Path, kind: StallKind, stall_us: u64, window_us: u64) -> std::io::Result<PsiTrigger> {
        let mut file = std::fs::OpenOptions::new().read(true).write(true).open(path)?;
        let line = format!("{} {stall_us} {window_us}\0", if kind == StallKind::Some { "some" } else { "full" });
        file.write_all(line.as_bytes())?;
        Ok(PsiTrigger { file, kind, stall_us, window_us, path: path.to_path_buf() })
    }

    pub fn fd(&self) -> RawFd {
        self.file.as_raw_fd()
    }
}

/// A periodic timer.
#[derive(Debug)]
pub struct TimerFd(OwnedFd);

impl TimerFd {
    pub fn new(period: Duration) -> Result<TimerFd> {
        // SAFETY: timerfd_create returns a new fd or -1.
        let fd = unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_CLOEXEC | libc::TFD_NONBLOCK) };
        if fd < 0 {
            return Err(Error::io("timerfd_create", std::io::Error::last_os_error()));
        }
        // SAFETY: the kernel just gave us this fd.
        let t = TimerFd(unsafe { OwnedFd::from_raw_fd(fd) });
        t.set(period)?;
        Ok(t)
    }

    pub fn set(&self, period: Duration) -> Result<()> {
        let ts = libc::timespec { tv_sec: period.as_secs() as libc::time_t, tv_nsec: period.subsec_nanos() as libc::c_long };
        let spec = libc::itimerspec { it_interval: ts, it_value: ts };
        // SAFETY: valid fd and spec.
        if unsafe { libc::timerfd_settime(self.0.as_raw_fd(), 0, &spec, std::ptr::null_mut()) } != 0 {
            return Err(Error::io("timerfd_settime", std::io::Error::last_os_error()));
        }
        Ok(())
    }

    /// Consume expirations; returns how many.
    pub fn drain(&self) -> u64 {
        let mut n = 0u64;
        // SAFETY: reading 8 bytes into a u64.
        let r = unsafe { libc::read(self.0.as_raw_fd(), (&mut n as *mut u64).cast(), 8) };
        if r == 8 { n } else { 0 }
    }

    pub fn fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }
}

/// Signals delivered as reads (SIGTERM, SIGINT, SIGHUP), so the poll loop handles them in
/// order with everything else. The signals are blocked for the whole process.
#[derive(Debug)]
pub struct SignalFd(OwnedFd);

impl SignalFd {
    pub fn new(signals: &[i32]) -> Result<SignalFd> {
        // SAFETY: building and applying a signal mask for this thread (the daemon has one).
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for &s in signals {
                libc::sigaddset(&mut set, s);
            }
            if libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
                return Err(Error::io("pthread_sigmask", std::io::Error::last_os_error()));
            }
            let fd = libc::signalfd(-1, &set, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK);
            if fd < 0 {
                return Err(Error::io("signalfd", std::io::Error::last_os_error()));
            }
            Ok(SignalFd(OwnedFd::from_raw_fd(fd)))
        }
    }

    /// The next pending signal, if any.
    pub fn read(&self) -> Option<i32> {
        // SAFETY: reading one signalfd_siginfo.
        let mut info: libc::signalfd_siginfo = unsafe { std::mem::zeroed() };
        let n = unsafe { libc::read(self.0.as_raw_fd(), (&mut info as *mut libc::signalfd_siginfo).cast(), std::mem::size_of::<libc::signalfd_siginfo>()) };
        (n as usize == std::mem::size_of::<libc::signalfd_siginfo>()).then_some(info.ssi_signo as i32)
    }

    pub fn fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }
}

/// Drop this process's own program pages that are not in use now (its start-up code: argument
/// and config parsing), so that memory locked from here on is only what the running daemon
/// touches. Clean file pages: they come back from the binary if ever needed. Returns the
/// bytes it asked the kernel to drop.
pub fn drop_startup_pages() -> u64 {
    let exe = std::fs::read_link("/proc/self/exe").unwrap_or_default();
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    let mut asked = 0;
    for line in maps.lines() {
        let mut f = line.split_whitespace();
        let (Some(range), Some(perms)) = (f.next(), f.next()) else { continue };
        if line.split_whitespace().nth(5).map(std::path::Path::new) != Some(exe.as_path()) || perms.contains('w') {
            continue;
        }
        let Some((a, b)) = range.split_once('-') else { continue };
        let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16)) else { continue };
        // SAFETY: advice on a mapping of our own binary, read-only and file-backed. Random
        // access: what is faulted back in comes a page at a time, not with its neighbours.
        if unsafe { libc::madvise(a as *mut libc::c_void, b - a, libc::MADV_PAGEOUT) } == 0 {
            asked += (b - a) as u64;
        }
        unsafe { libc::madvise(a as *mut libc::c_void, b - a, libc::MADV_RANDOM) };
    }
    asked
}

/// Lock the process's memory so it does not stall when memory is short: pages already
/// mapped now, and future ones as they are touched.
pub fn lock_memory() -> Result<()> {
    // SAFETY: mlockall with flags.
    if unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE | libc::MCL_ONFAULT) } != 0 {
        return Err(Error::io("mlockall", std::io::Error::last_os_error()));
    }
    Ok(())
}

/// The fds of one `poll(2)` call, in groups (signals, the timer, the triggers, the clients…):
/// add each group, wait, then ask which members of a group are ready. Rebuilt for every
/// wait, as the groups change size between waits.
#[derive(Debug, Default)]
pub struct Poller {
    fds: Vec<libc::pollfd>,
}

/// A group of fds added to a [`Poller`]: its members are numbered from 0 in the order added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Group {
    start: usize,
    len: usize,
}

impl Poller {
    pub fn with_capacity(n: usize) -> Poller {
        Poller { fds: Vec::with_capacity(n) }
    }

    pub fn clear(&mut self) {
        self.fds.clear();
    }

    /// Add fds waiting for `events` each.
    pub fn add(&mut self, fds: impl IntoIterator<Item = (RawFd, i16)>) -> Group {
        let start = self.fds.len();
        self.fds.extend(fds.into_iter().map(|(fd, events)| libc::pollfd { fd, events, revents: 0 }));
        Group { start, len: self.fds.len() - start }
    }

    /// Wait until an fd is ready or `timeout_ms` passes (-1: no limit). An interrupted wait
    /// (EINTR) returns with nothing ready.
    pub fn wait(&mut self, timeout_ms: i32) -> usize {
        // SAFETY: polling our own pollfds, a valid slice.
        let n = unsafe { libc::poll(self.fds.as_mut_ptr(), self.fds.len() as libc::nfds_t, timeout_ms) };
        if n < 0 {
            self.fds.iter_mut().for_each(|f| f.revents = 0);
            return 0;
        }
        n as usize
    }

    /// The members of `g` with events, as (member index, revents), in order.
    pub fn ready(&self, g: Group) -> Vec<(usize, i16)> {
        self.fds[g.start..g.start + g.len].iter().enumerate().filter(|(_, f)| f.revents != 0).map(|(i, f)| (i, f.revents)).collect()
    }

    /// Every member's revents, ready or not.
    pub fn revents(&self, g: Group) -> Vec<i16> {
        self.fds[g.start..g.start + g.len].iter().map(|f| f.revents).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_report_their_own_ready_members() {
        let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        let (c, _d) = std::os::unix::net::UnixStream::pair().unwrap();
        let mut p = Poller::default();
        let first = p.add([(a.as_raw_fd(), libc::POLLIN)]);
        let second = p.add([(c.as_raw_fd(), libc::POLLIN), (b.as_raw_fd(), libc::POLLIN)]);
        assert_eq!(p.wait(0), 0, "nothing written yet");
        (&a).write_all(b"x").unwrap();
        assert_eq!(p.wait(1000), 1);
        assert!(p.ready(first).is_empty());
        assert_eq!(p.ready(second), vec![(1, libc::POLLIN)], "b, the second member of the second group");
        p.clear();
        let none = p.add([]);
        assert!(p.ready(none).is_empty());
    }
}
