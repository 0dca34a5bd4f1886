//! The file descriptors the daemon's single poll loop waits on: PSI triggers, a timerfd and a signalfd. Each is an
//! owned fd closed on drop.

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

/// A PSI trigger: the fd turns readable (POLLPRI) when the stall within a window exceeds the threshold.
#[derive(Debug)]
pub struct PsiTrigger {
    file: std::fs::File,
    pub kind: StallKind,
    pub stall_us: u64,
    pub window_us: u64,
    pub path: PathBuf,
}

impl PsiTrigger {
    /// Open a trigger of `stall_us` per `window_us`. Where the kernel refuses the window (without CAP_SYS_RESOURCE only
    /// whole multiples of 2 s are allowed), the window is rounded up to the next multiple of 2 s and the stall kept:
    /// the trigger fires as soon as the asked one would (the stall reached within a window), at most once a window.
    /// (Scaling the stall with the window, as done first, let lmkd's triggers fire only after the memcg's OOM killer
    /// had acted: issue 12.)
    pub fn open(path: &Path, kind: StallKind, stall_us: u64, window_us: u64) -> Result<PsiTrigger> {
        match Self::try_open(path, kind, stall_us, window_us) {
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) && !window_us.is_multiple_of(2_000_000) => {
                let w = window_us.div_ceil(2_000_000) * 2_000_000;
                let s = stall_us.min(w);
                Self::try_open(path, kind, s, w).map_err(|e| Error::Other {
                    what: format!("PSI trigger on {}", path.display()),
                    detail: format!("{e} (even with a {w} µs window)"),
                })
            }
            r => r.map_err(|e| Error::Other {
                what: format!("PSI trigger on {}", path.display()),
                detail: e.to_string(),
            }),
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
        let ts =
            libc::timespec { tv_sec: period.as_secs() as libc::time_t, tv_nsec: period.subsec_nanos() as libc::c_long };
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
        if r == 8 {
            n
        } else {
            0
        }
    }

    pub fn fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }
}

/// Signals delivered as reads (SIGTERM, SIGINT, SIGHUP), so the poll loop handles them in order with everything else.
/// The signals are blocked for the whole process.
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
        let n = unsafe {
            libc::read(
                self.0.as_raw_fd(),
                (&mut info as *mut libc::signalfd_siginfo).cast(),
                std::mem::size_of::<libc::signalfd_siginfo>(),
            )
        };
        (n as usize == std::mem::size_of::<libc::signalfd_siginfo>()).then_some(info.ssi_signo as i32)
    }

    pub fn fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }
}

/// Take this process's start-up pages out of its own page tables (its argument and config parsing, and whatever else of
/// its binary and libraries start-up touched), so that memory locked from here on is only what the running daemon
/// touches. Every mapping of a file that is not writable and holds no page of its own (no copy written over the file's,
/// as a relocated section has) loses its page-table entries (`MADV_DONTNEED`): the pages stay in the page cache, for
/// the other processes that map them, and come back to this one on its next touch as a minor fault. `MADV_PAGEOUT`,
/// used before, left every page another process maps too (a bench's own copy of the binary, libc everywhere) resident
/// here, and then locked. Mappings with pages of their own are left alone. Returns the bytes dropped.
pub fn drop_startup_pages() -> u64 {
    let exe = std::fs::read_link("/proc/self/exe").unwrap_or_default();
    let Ok(vmas) = crate::maps::read_smaps(&crate::root::SysRoot::live(), std::process::id()) else { return 0 };
    let mut dropped = 0;
    for s in vmas {
        let v = &s.vma;
        if v.inode == 0 || !v.path.starts_with('/') || v.perms.contains('w') || s.anon_bytes > 0 || s.rss_bytes == 0 {
            continue;
        }
        let (addr, len) = (v.start as usize as *mut libc::c_void, v.len() as usize);
        // SAFETY: a private (or shared read-only) mapping of a file, not writable, with no page of its own: dropping
        // its entries loses nothing, the file's pages come back on the next touch.
        if unsafe { libc::madvise(addr, len, libc::MADV_DONTNEED) } == 0 {
            dropped += s.rss_bytes;
        }
        if std::path::Path::new(&v.path) == exe.as_path() {
            // Random access: what is faulted back in comes a page at a time, not with its neighbours read ahead from
            // disk. SAFETY: advice on a mapping of our own binary.
            unsafe { libc::madvise(addr, len, libc::MADV_RANDOM) };
        }
    }
    dropped
}

/// Large allocations get mappings of their own, returned to the kernel when freed, and the heap's free top is given
/// back early: once memory is locked, every heap page the process ever touched stays resident, so a transient buffer
/// (one read of a JVM's `smaps` is a few hundred KiB) would otherwise keep its high-water mark locked for the daemon's
/// life. glibc raises its mmap threshold after each such buffer is freed, which is what setting the thresholds turns
/// off (mallopt(3)). One arena for every thread: a helper thread that allocates (squeezes run together before a launch,
/// `ahead.parallel_squeezes`) would otherwise get a heap of its own, kept and locked after it ends. Nothing to do with
/// another C library.
pub fn bound_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets allocator parameters.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 10);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 64 << 10);
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}

/// Lock the process's memory so it does not stall when memory is short: pages already mapped now, and future ones as
/// they are touched.
pub fn lock_memory() -> Result<()> {
    // SAFETY: mlockall with flags.
    if unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE | libc::MCL_ONFAULT) } != 0 {
        return Err(Error::io("mlockall", std::io::Error::last_os_error()));
    }
    Ok(())
}

/// The fds of one `poll(2)` call, in groups (signals, the timer, the triggers, the clients…): add each group, wait,
/// then ask which members of a group are ready. Rebuilt for every wait, as the groups change size between waits.
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

    /// Wait until an fd is ready or `timeout_ms` passes (-1: no limit). An interrupted wait (EINTR) returns with
    /// nothing ready.
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
        self.fds[g.start..g.start + g.len]
            .iter()
            .enumerate()
            .filter(|(_, f)| f.revents != 0)
            .map(|(i, f)| (i, f.revents))
            .collect()
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

    /// Once the heap is bounded, a buffer of a few hundred KiB gets a mapping of its own (and goes back to the kernel
    /// when freed), even after a larger one was freed, which is when glibc otherwise raises its threshold and serves
    /// the next from the heap.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn large_buffers_get_mappings_of_their_own_once_the_heap_is_bounded() {
        // glibc's chunk header, the word before the pointer: bit 1 is "mapped on its own". SAFETY: reading the
        // allocator's header word of a live allocation.
        let own_mapping = |v: &Vec<u8>| unsafe { *(v.as_ptr() as *const usize).sub(1) } & 2 != 0;
        drop(std::hint::black_box(vec![1u8; 4 << 20]));
        let before = std::hint::black_box(vec![1u8; 256 << 10]);
        assert!(!own_mapping(&before), "unbounded, glibc serves it from the heap after a larger buffer was freed");
        bound_heap();
        let after = std::hint::black_box(vec![1u8; 256 << 10]);
        assert!(own_mapping(&after), "bounded, a mapping of its own");
        drop(std::hint::black_box(vec![1u8; 4 << 20]));
        assert!(own_mapping(&std::hint::black_box(vec![1u8; 64 << 10])), "and the threshold stays down");
    }

    /// A read-only mapping of a file loses its resident pages here and reads the same after; a read-only mapping with
    /// pages of its own (written, then made read-only, as a relocated section is) keeps them.
    #[test]
    fn startup_pages_dropped_are_clean_file_pages_only() {
        const LEN: usize = 64 * 4096;
        let dir = crate::testkit::TempDir::new("memorch-drop-startup");
        let rss_of = |addr: usize| {
            let vmas = crate::maps::read_smaps(&crate::root::SysRoot::live(), std::process::id()).unwrap();
            let s = vmas.into_iter().find(|s| s.vma.start == addr as u64).expect("the mapping");
            (s.rss_bytes, s.anon_bytes)
        };
        let map = |name: &str, fill: u8, prot: i32| {
            let path = dir.0.join(name);
            std::fs::write(&path, vec![fill; LEN]).unwrap();
            let f = std::fs::File::open(&path).unwrap();
            // SAFETY: a new private mapping of a file this test owns.
            let p = unsafe { libc::mmap(std::ptr::null_mut(), LEN, prot, libc::MAP_PRIVATE, f.as_raw_fd(), 0) };
            assert_ne!(p, libc::MAP_FAILED);
            p as usize
        };
        let sum = |addr: usize| {
            (0..LEN)
                .step_by(4096)
                .map(|o| unsafe { std::ptr::read_volatile((addr + o) as *const u8) } as u64)
                .sum::<u64>()
        };
        let clean = map("clean", 7, libc::PROT_READ);
        assert_eq!(sum(clean), 7 * 64);
        assert_eq!(rss_of(clean), (LEN as u64, 0), "every page touched, none of its own");
        let own = map("own", 1, libc::PROT_READ | libc::PROT_WRITE);
        for o in (0..LEN).step_by(4096) {
            unsafe { std::ptr::write_volatile((own + o) as *mut u8, 9) };
        }
        // SAFETY: our own mapping, made read-only as the loader does after relocating.
        assert_eq!(unsafe { libc::mprotect(own as *mut libc::c_void, LEN, libc::PROT_READ) }, 0);
        assert_eq!(rss_of(own).1, LEN as u64, "the written pages are the mapping's own");

        let dropped = drop_startup_pages();
        assert!(dropped >= LEN as u64, "dropped {dropped} bytes");
        assert_eq!(rss_of(clean).0, 0, "the clean file pages left this process");
        assert_eq!(sum(clean), 7 * 64, "and read the file's contents again");
        assert_eq!(rss_of(own), (LEN as u64, LEN as u64), "the written pages were kept");
        assert_eq!(sum(own), 9 * 64, "with what was written");
        for addr in [clean, own] {
            // SAFETY: unmapping the test's own mappings.
            unsafe { libc::munmap(addr as *mut libc::c_void, LEN) };
        }
    }
}
