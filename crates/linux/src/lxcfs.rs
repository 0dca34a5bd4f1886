//! An lxcfs instance of memorch's own (lxcfs is Debian's package of the same name). lxcfs is a FUSE filesystem whose
//! `proc/meminfo` and `proc/swaps` describe the memory cgroup of the reading process's PID-namespace init: bound over
//! `/proc` inside a device namespace (namespace.rs), they make the device's limit look like the machine's RAM to peers.
//!
//! The instance is the caller's: its own mount point and pidfile under [`LXCFS_DIR`]`/<owner tag>` (`owner::tag`),
//! never the system's `/var/lib/lxcfs`. It ends with the guard (SIGTERM: FUSE unmounts), with its starter thread
//! (PDEATHSIG), and what a SIGKILLed owner left behind is removed by [`recover_stale`].

use crate::error::{Error, Result};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub const LXCFS_DIR: &str = "/run/memorch/lxcfs";

/// How long lxcfs may take to mount.
const START_TIMEOUT: Duration = Duration::from_secs(10);

pub struct Lxcfs {
    child: Child,
    dir: PathBuf,
}

impl Lxcfs {
    pub fn start() -> Result<Lxcfs> {
        let exe = crate::which::on_path("lxcfs").ok_or_else(|| {
            Error::Refused("lxcfs is not installed: apt-get install lxcfs (scripts/setup does)".into())
        })?;
        recover_stale(true);
        let dir = Path::new(LXCFS_DIR).join(crate::owner::tag());
        let mnt = dir.join("mnt");
        std::fs::create_dir_all(&mnt).map_err(|e| Error::io(&mnt, e))?;
        let log = std::fs::File::create(dir.join("lxcfs.log")).map_err(|e| Error::io(dir.join("lxcfs.log"), e))?;
        let mut cmd = Command::new(exe);
        cmd.arg("-f").arg("-p").arg(dir.join("lxcfs.pid")).arg(&mnt);
        cmd.stdin(Stdio::null()).stdout(log.try_clone().map_err(|e| Error::io(&dir, e))?).stderr(log);
        // SAFETY: prctl between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                Ok(())
            });
        }
        let child = cmd.spawn().map_err(|e| Error::Other { what: "start lxcfs".into(), detail: e.to_string() })?;
        let mut l = Lxcfs { child, dir };
        let meminfo = l.proc_dir().join("meminfo");
        let up =
            crate::wait::wait_for(START_TIMEOUT, || meminfo.exists() || l.child.try_wait().ok().flatten().is_some());
        if !up || !meminfo.exists() {
            let log = std::fs::read_to_string(l.dir.join("lxcfs.log")).unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(5).collect();
            return Err(Error::Other {
                what: format!("start lxcfs on {}", mnt.display()),
                detail: format!(
                    "it did not mount (is /dev/fuse there?); its log ends: {}",
                    tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
                ),
            });
        }
        Ok(l)
    }

    /// Its `proc` directory: `meminfo`, `swaps`, ….
    pub fn proc_dir(&self) -> PathBuf {
        self.dir.join("mnt").join("proc")
    }
}

impl Drop for Lxcfs {
    fn drop(&mut self) {
        // SAFETY: signalling the lxcfs this guard started.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        if !crate::wait::wait_for(Duration::from_secs(5), || self.child.try_wait().ok().flatten().is_some()) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        clean(&self.dir);
    }
}

/// Unmount (if FUSE did not) and remove an instance's directory.
fn clean(dir: &Path) {
    let mnt = dir.join("mnt");
    if is_mounted(&mnt) {
        if let Ok(c) = std::ffi::CString::new(mnt.as_os_str().as_encoded_bytes()) {
            // SAFETY: a valid path; a lazy unmount of our own mount point.
            unsafe { libc::umount2(c.as_ptr(), libc::MNT_DETACH) };
        }
    }
    let _ = std::fs::remove_dir(&mnt);
    let _ = std::fs::remove_dir_all(dir);
}

fn is_mounted(path: &Path) -> bool {
    let Ok(info) = std::fs::read_to_string("/proc/self/mountinfo") else { return false };
    let p = path.to_string_lossy();
    info.lines().any(|l| l.split_whitespace().nth(4) == Some(&*p))
}

/// Stop and remove the instances of owners that died without their guard running. Their lxcfs is ours to stop only if
/// its command line names the instance's own mount point. Without `undo`, only which instances it would stop.
pub fn recover_stale(undo: bool) -> Vec<PathBuf> {
    let mut done = Vec::new();
    for e in std::fs::read_dir(LXCFS_DIR).into_iter().flatten().flatten() {
        let Some(owner) = e.file_name().to_str().and_then(crate::owner::from_tag) else { continue };
        if owner.is_me() || owner.alive(&crate::SysRoot::live()) {
            continue;
        }
        let dir = e.path();
        if !undo {
            done.push(dir);
            continue;
        }
        let pid = std::fs::read_to_string(dir.join("lxcfs.pid")).ok().and_then(|t| t.trim().parse::<i32>().ok());
        if let Some(pid) = pid {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let mnt = dir.join("mnt");
            if String::from_utf8_lossy(&cmdline).contains(&*mnt.to_string_lossy()) {
                // SAFETY: signalling an lxcfs an earlier memorch started on its own mount point.
                unsafe { libc::kill(pid, libc::SIGTERM) };
                crate::wait::wait_for(Duration::from_secs(5), || !Path::new(&format!("/proc/{pid}")).exists());
            }
        }
        clean(&dir);
        done.push(dir);
    }
    done
}
