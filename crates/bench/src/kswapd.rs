//! The device's kswapd: a process inside the device's memory groups that reclaims for the keeper (keeper.rs) the way
//! the kernel reclaims when an allocation meets the limit, so that its time in reclaim is **memory stall in the
//! device's PSI**, as kswapd's is in a phone's.
//!
//! Why a process of the device's own: PSI counts a task's stall in its own group and those above it, and a phone's
//! kswapd stalls inside `psi_memstall_enter`, so lmkd sees background reclaim as pressure. A write of a lower
//! `memory.limit_in_bytes` reclaims without entering memstall (a 600 MiB reclaim left PSI at 0): no PSI reader sees it.
//!
//! How: reading ahead a *sparse* file charges page-cache pages to the reader's memory group without disk I/O (holes
//! read as zeros), with `__GFP_NORETRY`. Past the device's limit each charge reclaims once from the whole device inside
//! `psi_memstall_enter` and, if that did not make room, fails quietly: the memcg's OOM killer is never invoked from
//! here (a page fault or a write would invoke it). Dropping the pages (`POSIX_FADV_DONTNEED`) then leaves the room the
//! reclaim made. The helper is a `fork` of the keeper's thread that runs only async-signal-safe calls (no exec: tests
//! and `memorch sandbox` use the keeper too), sits in `kswapd` children of the device's groups under the name [`NAME`],
//! outside the device's PID namespace (peers do not see it), and dies with the keeper's thread. A memorch daemon on the
//! device sees it in the device's groups: the bench's config protects it by name, as a device maker protects its native
//! daemons (`[apps] protected`). It cannot be made native (`oom_score_adj` -1000 needs CAP_SYS_RESOURCE, which these
//! machines do not give root); the OOM killer passes it over while any app of a higher `oom_score_adj` or more memory
//! is left, and if it is killed the keeper goes on by limit writes.

use std::ffi::CString;
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Read ahead in pieces of this size: one `POSIX_FADV_WILLNEED` reads at most the device's `read_ahead_kb` (8 MiB here,
/// 128 KiB on many machines), and a piece whose charge fails stops there; the next piece tries again.
const PIECE: u64 = 1 << 20;
/// Where the sparse file is made (unnamed, `O_TMPFILE`): a disk file system by convention; tmpfs pages are swap-backed
/// and read-ahead does not charge them.
const FILE_DIR: &str = "/var/tmp";
/// Its process name (`comm`), for a manager's protected list.
pub const NAME: &str = "memorch-kswapd";
const NAME_C: &std::ffi::CStr = c"memorch-kswapd";
const TMPFS_MAGIC: i64 = 0x0102_1994;
const RAMFS_MAGIC: i64 = 0x8584_58f6;

/// The running helper.
pub struct Kswapd {
    pid: libc::pid_t,
    /// Closed first on drop: its end of file ends the helper.
    to_child: Option<OwnedFd>,
    from_child: OwnedFd,
    /// Its v2 group (`DEVICE/kswapd`): its own stall, apart from the apps'.
    v2: Option<PathBuf>,
    max_bytes: u64,
}

impl Kswapd {
    /// Start it in `kswapd` children of `v1` (where the device's limit is) and `v2`; it can reclaim up to `max_bytes` a
    /// call. Call from the thread that will use it: the helper dies when that thread ends. Errors say why (the keeper
    /// then reclaims by limit writes).
    pub fn start(v1: &Path, v2: Option<&Path>, max_bytes: u64) -> Result<Kswapd, String> {
        let file = sparse_file(max_bytes)?;
        let groups: Vec<PathBuf> = std::iter::once(v1).chain(v2).map(|d| d.join("kswapd")).collect();
        for g in &groups {
            match std::fs::create_dir(g) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(format!("{}: {e}", g.display())),
            }
        }
        let procs: Vec<CString> = groups
            .iter()
            .map(|g| {
                CString::new(g.join("cgroup.procs").into_os_string().into_encoded_bytes())
                    .expect("no NUL in cgroup paths")
            })
            .collect();
        let (down_r, down_w) = pipe()?;
        let (up_r, up_w) = pipe()?;
        let parent = std::process::id() as libc::pid_t;
        // SAFETY: the child runs `serve` only, which makes async-signal-safe calls on memory prepared before the fork,
        // and never returns.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(format!("fork: {}", std::io::Error::last_os_error()));
        }
        if pid == 0 {
            unsafe { serve(parent, &procs, file.as_raw_fd(), down_r.as_raw_fd(), up_w.as_raw_fd()) }
        }
        drop((down_r, up_w, file));
        let mut k =
            Kswapd { pid, to_child: Some(down_w), from_child: up_r, v2: v2.map(|d| d.join("kswapd")), max_bytes };
        // The first answer says it joined its groups (0 bytes asked: nothing charged).
        if let Err(e) = k.reclaim(0) {
            let mut status = 0;
            // SAFETY: our own child, which has ended its side of the pipe.
            unsafe { libc::waitpid(k.pid, &mut status, 0) };
            let why =
                if libc::WEXITSTATUS(status) == 2 { " (it could not join the device's kswapd groups)" } else { "" };
            return Err(format!("the device's kswapd did not start: {e}{why}, wait status {status:#x}"));
        }
        Ok(k)
    }

    /// Charge `bytes` (at most its maximum) to the device and drop them again: past the limit, the kernel reclaims that
    /// much from the device, in this helper's memstall.
    pub fn reclaim(&mut self, bytes: u64) -> Result<(), String> {
        let n = bytes.min(self.max_bytes).to_ne_bytes();
        // SAFETY: plain read/write on pipes this struct owns.
        let to = self.to_child.as_ref().ok_or("it was stopped")?;
        let w = unsafe { libc::write(to.as_raw_fd(), n.as_ptr().cast(), n.len()) };
        if w != n.len() as isize {
            return Err(format!("write to it: {}", std::io::Error::last_os_error()));
        }
        let mut ack = [0u8; 1];
        let r = unsafe { libc::read(self.from_child.as_raw_fd(), ack.as_mut_ptr().cast(), 1) };
        if r != 1 {
            return Err("it exited".into());
        }
        Ok(())
    }

    /// Its stall so far (µs, `some` of its own v2 group's `memory.pressure`).
    pub fn stall_us(&self) -> Option<u64> {
        memorch_linux::psi::read_required(&self.v2.as_ref()?.join("memory.pressure")).ok().map(|p| p.some.total_us)
    }
}

impl Drop for Kswapd {
    fn drop(&mut self) {
        // Closing its pipe ends it (its read sees end of file); reap it.
        self.to_child.take();
        let mut status = 0;
        // SAFETY: our own child.
        unsafe { libc::waitpid(self.pid, &mut status, 0) };
    }
}

fn pipe() -> Result<(OwnedFd, OwnedFd), String> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two fds we then own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(format!("pipe: {}", std::io::Error::last_os_error()));
    }
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// An unnamed sparse file of `bytes` on a disk file system (nothing left behind on any exit).
fn sparse_file(bytes: u64) -> Result<File, String> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_TMPFILE | libc::O_CLOEXEC)
        .open(FILE_DIR)
        .map_err(|e| format!("{FILE_DIR}: an unnamed file (O_TMPFILE): {e}"))?;
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: fstatfs fills the struct for an fd we own.
    if unsafe { libc::fstatfs(f.as_raw_fd(), &mut st) } != 0 {
        return Err(format!("{FILE_DIR}: statfs: {}", std::io::Error::last_os_error()));
    }
    if [TMPFS_MAGIC, RAMFS_MAGIC].contains(&(st.f_type as i64)) {
        return Err(format!("{FILE_DIR} is in memory (tmpfs): read-ahead there charges nothing"));
    }
    f.set_len(bytes.div_ceil(PIECE) * PIECE).map_err(|e| format!("{FILE_DIR}: sparse file: {e}"))?;
    Ok(f)
}

/// The helper, after the fork: async-signal-safe calls only (the parent has other threads).
unsafe fn serve(parent: libc::pid_t, procs: &[CString], file: i32, rx: i32, tx: i32) -> ! {
    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
    if libc::getppid() != parent {
        libc::_exit(0);
    }
    // Hold nothing of the bench's (its apps' pipes, its lock file) but our three fds.
    let mut keep = [file, rx, tx];
    keep.sort_unstable();
    let mut from = 3u32;
    for fd in keep {
        if (fd as u32) > from {
            libc::syscall(libc::SYS_close_range, from, fd as u32 - 1, 0);
        }
        from = fd as u32 + 1;
    }
    libc::syscall(libc::SYS_close_range, from, u32::MAX, 0);
    for p in procs {
        if !write_file(p.as_ptr(), b"0") {
            libc::_exit(2);
        }
    }
    libc::prctl(libc::PR_SET_NAME, NAME_C.as_ptr());
    loop {
        let mut n = [0u8; 8];
        if libc::read(rx, n.as_mut_ptr().cast(), 8) != 8 {
            libc::_exit(0);
        }
        let bytes = u64::from_ne_bytes(n) as i64;
        let mut off = 0i64;
        while off < bytes {
            libc::posix_fadvise(file, off, (PIECE as i64).min(bytes - off), libc::POSIX_FADV_WILLNEED);
            off += PIECE as i64;
        }
        libc::posix_fadvise(file, 0, 0, libc::POSIX_FADV_DONTNEED);
        if libc::write(tx, b"k".as_ptr().cast(), 1) != 1 {
            libc::_exit(0);
        }
    }
}

unsafe fn write_file(path: *const libc::c_char, what: &[u8]) -> bool {
    let fd = libc::open(path, libc::O_WRONLY | libc::O_CLOEXEC);
    if fd < 0 {
        return false;
    }
    let ok = libc::write(fd, what.as_ptr().cast(), what.len()) == what.len() as isize;
    libc::close(fd);
    ok
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_name_it_takes_is_the_name_managers_protect() {
        assert_eq!(super::NAME_C.to_str(), Ok(super::NAME));
        assert!(super::NAME.len() <= 15, "comm keeps 15 bytes");
    }
}
