//! A slow disk for storage swap: a phone's swap files live on its flash, far slower than these machines' disks. An ext4
//! on a loop device over a sparse file, mounted where the swap files go, its I/O throttled for the processes that use
//! it by their block-I/O cgroup (v1 `blkio.throttle.*`, or v2 `io.max`). Machine-wide (a loop device, a mount, a
//! throttle): made under a record and undone by its guard, or by the next start if its owner died.

use crate::error::{Error, Result};
use crate::root::SysRoot;
use serde::{Deserialize, Serialize};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// How fast the disk may go: bytes and operations a second, read and written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Speed {
    pub read_bps: u64,
    pub write_bps: u64,
    pub read_iops: u64,
    pub write_iops: u64,
}

/// An eMMC 5.0 phone's flash, the storage SWAM's paper measures eUFS 3.1 against as 8× and 12× slower: 250 MB/s read,
/// 100 MB/s written, 8,000 and 3,000 random 4 KiB operations a second.
pub const EMMC: Speed = Speed { read_bps: 250_000_000, write_bps: 100_000_000, read_iops: 8_000, write_iops: 3_000 };

const RECORD_KIND: &str = "slow-disk";

/// What was made, for its undoing: recorded before the loop device is mounted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Made {
    image: PathBuf,
    device: PathBuf,
    /// `MAJOR:MINOR` of the loop device.
    dev: String,
    mount: PathBuf,
    /// The throttle file written (v1 `blkio.throttle.*_device` four of them, or v2 `io.max`).
    throttle_dir: PathBuf,
    v2: bool,
}

/// The slow disk, mounted and throttled until dropped.
pub struct SlowDisk {
    made: Made,
}

impl SlowDisk {
    /// A disk of `bytes` in the sparse file `image`, mounted at `mount` and throttled to `speed` for the processes in
    /// this process's block-I/O cgroup. Nothing is left half made.
    pub fn create(image: &Path, mount: &Path, bytes: u64, speed: Speed) -> Result<SlowDisk> {
        let (throttle_dir, v2) = throttle_dir(&SysRoot::live())?;
        let (device, dev) = attach_new_image(image, bytes).inspect_err(|_| {
            let _ = std::fs::remove_file(image);
        })?;
        // From here the guard undoes whatever step fails (a record not yet saved is no error).
        let disk = SlowDisk { made: Made { image: image.into(), device, dev, mount: mount.into(), throttle_dir, v2 } };
        crate::records::save(RECORD_KIND, &disk.made.dev, &disk.made)?;
        std::fs::create_dir_all(mount).map_err(|e| Error::io(mount, e))?;
        mount_ext4(&disk.made.device, mount)?;
        set_throttle(&disk.made, Some(speed))?;
        Ok(disk)
    }

    pub fn device(&self) -> &Path {
        &self.made.device
    }
}

impl Drop for SlowDisk {
    fn drop(&mut self) {
        if let Err(e) = undo(&self.made) {
            eprintln!("memorch: could not remove the slow disk {}: {e}", self.made.device.display());
        }
    }
}

/// A sparse file of `bytes` with an ext4 on it, attached to a free loop device: the device and its `MAJOR:MINOR`;
/// detached again if its number cannot be read.
fn attach_new_image(image: &Path, bytes: u64) -> Result<(PathBuf, String)> {
    let f = std::fs::File::create(image).map_err(|e| Error::io(image, e))?;
    f.set_len(bytes).map_err(|e| Error::io(image, e))?;
    run("mkfs.ext4", &[OsStr::new("-q"), OsStr::new("-F"), image.as_os_str()])?;
    let device = PathBuf::from(run("losetup", &[OsStr::new("--find"), OsStr::new("--show"), image.as_os_str()])?);
    let dev = device_number(&device).inspect_err(|_| {
        let _ = run("losetup", &[OsStr::new("-d"), device.as_os_str()]);
    })?;
    Ok((device, dev))
}

/// Dead owners' slow disks undone (recovery.rs), or without `undo_them` what would be.
pub fn recover_stale(root: &SysRoot, undo_them: bool) -> Vec<std::result::Result<String, String>> {
    let mut out = Vec::new();
    for (record, made) in crate::records::stale::<Made>(root, RECORD_KIND) {
        let made = match made {
            Ok(m) => m,
            Err(e) => {
                out.push(Err(format!("{}: {e}", record.display())));
                continue;
            }
        };
        let what = format!(
            "the slow disk {} at {}, left by a memorch process that died",
            made.device.display(),
            made.mount.display()
        );
        if !undo_them {
            out.push(Ok(format!("would remove {what}")));
            continue;
        }
        out.push(undo(&made).map(|_| format!("removed {what}")).map_err(|e| format!("{what}: {e}")));
        crate::records::remove(&record);
    }
    out
}

/// Swap on it off, unmounted, the loop device detached, the throttle lifted, the file gone.
fn undo(made: &Made) -> Result<()> {
    let swaps = crate::swaps::read(&SysRoot::live())?;
    for d in swaps.devices.iter().filter(|d| Path::new(&d.path).starts_with(&made.mount)) {
        crate::swapon::swapoff_if_active(Path::new(&d.path))?;
    }
    unmount(&made.mount)?;
    // Detaching a device already gone is no error: the record is what is left.
    let _ = run("losetup", &[OsStr::new("-d"), made.device.as_os_str()]);
    let _ = set_throttle(made, None);
    let _ = std::fs::remove_file(&made.image);
    crate::records::forget(RECORD_KIND, &made.dev)
}

/// The block-I/O cgroup directory of this process and whether it is v2: v1 `blkio` with its throttle files, or v2 with
/// `io.max` (not the root group, where `io.max` does not exist).
fn throttle_dir(root: &SysRoot) -> Result<(PathBuf, bool)> {
    let own = root.read("/proc/self/cgroup")?;
    let mounts = crate::cgroup::mounts(root)?;
    for line in own.lines() {
        let mut it = line.splitn(3, ':');
        let (_, ctrls, path) = (it.next(), it.next().unwrap_or(""), it.next().unwrap_or(""));
        let v1 = ctrls.split(',').any(|c| c == "blkio");
        let dir = mounts
            .iter()
            .filter(|m| if v1 { m.has_v1_controller("blkio") } else { ctrls.is_empty() && m.is_v2() })
            .find_map(|m| m.dir_of(path));
        match dir {
            Some(d) if v1 && d.join("blkio.throttle.read_bps_device").exists() => return Ok((d, false)),
            Some(d) if !v1 && d.join("io.max").exists() => return Ok((d, true)),
            _ => {}
        }
    }
    Err(Error::Refused(
        "no block-I/O controller to slow the disk with: this process's cgroup has neither v1 blkio.throttle.* nor v2 io.max (enable the io controller for its parent, or mount blkio)".into(),
    ))
}

/// The throttle of `speed` on the device, or lifted with `None`.
fn set_throttle(made: &Made, speed: Option<Speed>) -> Result<()> {
    let d = &made.dev;
    if made.v2 {
        let v = |n: Option<u64>| n.map_or("max".to_string(), |n| n.to_string());
        let line = format!(
            "{d} rbps={} wbps={} riops={} wiops={}",
            v(speed.map(|s| s.read_bps)),
            v(speed.map(|s| s.write_bps)),
            v(speed.map(|s| s.read_iops)),
            v(speed.map(|s| s.write_iops))
        );
        return write(&made.throttle_dir.join("io.max"), &line);
    }
    let s = speed.unwrap_or(Speed { read_bps: 0, write_bps: 0, read_iops: 0, write_iops: 0 });
    for (file, n) in
        [("read_bps", s.read_bps), ("write_bps", s.write_bps), ("read_iops", s.read_iops), ("write_iops", s.write_iops)]
    {
        write(&made.throttle_dir.join(format!("blkio.throttle.{file}_device")), &format!("{d} {n}"))?;
    }
    Ok(())
}

fn write(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).map_err(|e| Error::io(path, e))
}

/// `MAJOR:MINOR` of a block device.
fn device_number(device: &Path) -> Result<String> {
    use std::os::unix::fs::MetadataExt;
    let rdev = std::fs::metadata(device).map_err(|e| Error::io(device, e))?.rdev();
    Ok(format!("{}:{}", libc::major(rdev), libc::minor(rdev)))
}

fn mount_ext4(device: &Path, at: &Path) -> Result<()> {
    let (src, dst) = (crate::swapon::cpath(device)?, crate::swapon::cpath(at)?);
    // SAFETY: valid C strings; no data argument.
    let r = unsafe { libc::mount(src.as_ptr(), dst.as_ptr(), c"ext4".as_ptr(), libc::MS_NOATIME, std::ptr::null()) };
    if r != 0 {
        return Err(Error::io(at, std::io::Error::last_os_error()));
    }
    Ok(())
}

/// Unmounted, or not mounted at all.
fn unmount(at: &Path) -> Result<()> {
    let p = crate::swapon::cpath(at)?;
    // SAFETY: a valid C string.
    if unsafe { libc::umount2(p.as_ptr(), 0) } != 0 {
        let e = std::io::Error::last_os_error();
        if !matches!(e.raw_os_error(), Some(libc::EINVAL | libc::ENOENT)) {
            return Err(Error::io(at, e));
        }
    }
    Ok(())
}

/// Run a program; its standard output trimmed, or an error with what it said.
fn run(program: &str, args: &[&OsStr]) -> Result<String> {
    let out = Command::new(program).args(args).output().map_err(|e| Error::Other {
        what: program.into(),
        detail: format!("{e} (the slow disk needs util-linux's losetup and e2fsprogs' mkfs.ext4)"),
    })?;
    if !out.status.success() {
        return Err(Error::Other {
            what: format!("{program} {}", args.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>().join(" ")),
            detail: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}
