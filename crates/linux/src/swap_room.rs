//! Whether a swap device's pages can come back into memory without an OOM kill: asked before memorch swaps off a device
//! it (or a memorch that died) made. swapoff charges each page back to the memory group that swapped it out; a group at
//! its limit with nowhere else to swap then kills its own apps.

use crate::root::SysRoot;
use std::path::Path;

/// Kept free beyond what comes back: the apps go on allocating while swapoff reads.
const MARGIN_BYTES: u64 = 16 << 20;

/// A memory group (v1 or v2) with a limit and pages on swap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitedGroup {
    pub path: String,
    /// Its limit less what it uses now.
    pub room_bytes: u64,
    /// What it has on swap (all devices): at most this comes back to it.
    pub swapped_bytes: u64,
}

/// Where a device's pages could go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Room {
    /// `MemAvailable` as this process sees it (a container's lxcfs shows its own).
    pub available_bytes: u64,
    /// Swap in use on every device: the bound where the device's own use is not listed.
    pub swapped_bytes: u64,
    /// Free space on the other active swap devices: reclaim can move pages there.
    pub other_swap_free_bytes: u64,
    /// What the device itself gives back to the machine as its pages come out: zram's pool (charged to no memory group,
    /// so it frees room for the machine only); 0 for a file.
    pub freed_bytes: u64,
    pub groups: Vec<LimitedGroup>,
}

/// Ok if `used` bytes (`None`: not listed, as under lxcfs) fit everywhere they could land; else where they do not.
pub fn judge(used: Option<u64>, room: &Room) -> Result<(), String> {
    let need = used.unwrap_or(room.swapped_bytes);
    let mib = |b: u64| b >> 20;
    let machine = room.available_bytes + room.other_swap_free_bytes + room.freed_bytes;
    if need + MARGIN_BYTES > machine {
        return Err(format!(
            "its {} MiB would not fit in the {} MiB available (memory, other swap and its own pool)",
            mib(need),
            mib(machine)
        ));
    }
    for g in room.groups.iter().filter(|g| g.swapped_bytes > 0) {
        let back = need.min(g.swapped_bytes);
        let fits = g.room_bytes + room.other_swap_free_bytes;
        if back + MARGIN_BYTES > fits {
            return Err(format!(
                "up to {} MiB of it belong to group {}, which has {} MiB below its limit{}",
                mib(back),
                g.path,
                mib(g.room_bytes),
                if room.other_swap_free_bytes > 0 { " (and other swap)" } else { "" }
            ));
        }
    }
    Ok(())
}

/// [`judge`] of the device at `device` (a swap file's path, or `/dev/zramN`) on this machine.
pub fn check(root: &SysRoot, device: &Path) -> Result<(), String> {
    let swaps = crate::swaps::read(root).map_err(|e| e.to_string())?;
    judge(used_bytes(root, &swaps, device), &read(root, &swaps, device)?)
}

/// The device's use: as `/proc/swaps` lists it, 0 if it is not listed there, `None` if that file is made up (a
/// container's lxcfs mounted over it lists none of the machine's devices).
fn used_bytes(root: &SysRoot, swaps: &memorch_core::SwapState, device: &Path) -> Option<u64> {
    match swaps.devices.iter().find(|d| names(&d.path, device)) {
        Some(d) => Some(d.used_bytes),
        None => (!swaps_made_up(root)).then_some(0),
    }
}

/// Whether `/proc/swaps`'s path `listed` is `device`: the same, or its end where it was enabled in a mount namespace
/// that has ended (`/zram0` for `/dev/zram0`).
fn names(listed: &str, device: &Path) -> bool {
    Path::new(listed) == device || device.ends_with(listed.trim_start_matches('/'))
}

fn swaps_made_up(root: &SysRoot) -> bool {
    let info = root.read("/proc/self/mountinfo").unwrap_or_default();
    info.lines().any(|l| l.split(' ').nth(4) == Some("/proc/swaps"))
}

/// What there is room in, the device itself left out.
fn read(root: &SysRoot, swaps: &memorch_core::SwapState, device: &Path) -> Result<Room, String> {
    let mem = crate::meminfo::read_system(root).map_err(|e| e.to_string())?;
    let other_swap_free_bytes = swaps
        .devices
        .iter()
        .filter(|d| !names(&d.path, device))
        .map(|d| d.size_bytes.saturating_sub(d.used_bytes))
        .sum();
    Ok(Room {
        available_bytes: mem.available_bytes,
        swapped_bytes: mem.swap_used_bytes,
        other_swap_free_bytes,
        freed_bytes: zram_pool_bytes(root, swaps, device),
        groups: limited_groups(root),
    })
}

/// The memory zram's pool holds for `device` (`/dev/zramN`), 0 for anything else.
fn zram_pool_bytes(root: &SysRoot, swaps: &memorch_core::SwapState, device: &Path) -> u64 {
    let Some(name) = device.strip_prefix("/dev").ok().and_then(|n| n.to_str()).filter(|n| n.starts_with("zram")) else {
        return 0;
    };
    crate::zram_stats::read_device(root, name, swaps).ok().flatten().map_or(0, |d| d.mem_used_bytes)
}

/// Every memory group with a limit and pages on swap, in whichever hierarchy has the memory controller (a parent's
/// count includes its children's).
fn limited_groups(root: &SysRoot) -> Vec<LimitedGroup> {
    let Ok(mounts) = crate::cgroup::mounts(root) else { return Vec::new() };
    let v2_top = mounts.iter().find(|m| m.is_v2()).map(|m| m.dir.clone());
    let Some(top) = mounts.iter().find(|m| m.has_v1_controller("memory")).or(mounts.iter().find(|m| m.is_v2())) else {
        return Vec::new();
    };
    let ram = crate::meminfo::mem_total_bytes(root).unwrap_or(u64::MAX);
    let mut out = Vec::new();
    let mut todo = vec![top.dir.clone()];
    // Bounded: a machine with more groups than this is judged by the ones seen first.
    let mut left = 20_000;
    while let Some(dir) = todo.pop() {
        left -= 1;
        if left == 0 {
            break;
        }
        let path = top.path_of(&dir).unwrap_or_else(|| dir.display().to_string());
        let dirs = crate::cgroup::CgroupDirs {
            path,
            v1_memory: (!top.is_v2()).then(|| dir.clone()),
            v2: top.is_v2().then(|| dir.clone()),
            v2_top: v2_top.clone(),
        };
        if let Ok((m, _)) = crate::cgroup::read_memory(&dirs, ram) {
            if m.limited && m.swap_used_bytes > 0 {
                let room_bytes = m.total_bytes.saturating_sub(m.used_bytes);
                out.push(LimitedGroup { path: dirs.path, room_bytes, swapped_bytes: m.swap_used_bytes });
            }
        }
        let subdirs = std::fs::read_dir(&dir).into_iter().flatten().flatten();
        todo.extend(subdirs.filter(|e| e.file_type().is_ok_and(|t| t.is_dir())).map(|e| e.path()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    fn room(groups: Vec<LimitedGroup>) -> Room {
        Room { available_bytes: 8192 * MIB, swapped_bytes: 300 * MIB, other_swap_free_bytes: 0, freed_bytes: 0, groups }
    }

    fn group(room_mib: u64, swapped_mib: u64) -> LimitedGroup {
        LimitedGroup { path: "/sb".into(), room_bytes: room_mib * MIB, swapped_bytes: swapped_mib * MIB }
    }

    #[test]
    fn a_device_is_known_by_the_path_a_dead_namespace_left_it_under() {
        assert!(names("/dev/zram0", Path::new("/dev/zram0")) && names("/zram0", Path::new("/dev/zram0")));
        assert!(!names("/zram1", Path::new("/dev/zram0")) && !names("/tmp/a/s.swap", Path::new("/tmp/b/s.swap")));
    }

    #[test]
    fn pages_of_a_full_group_do_not_fit_though_the_machine_has_room() {
        let err = judge(Some(105 * MIB), &room(vec![group(10, 105)])).unwrap_err();
        assert!(err.contains("group /sb") && err.contains("10 MiB below its limit"), "{err}");
    }

    #[test]
    fn a_group_with_room_or_no_swap_lets_them_back() {
        assert_eq!(judge(Some(105 * MIB), &room(vec![group(200, 105), group(0, 0)])), Ok(()));
    }

    #[test]
    fn other_swap_with_room_takes_what_the_group_must_push_out() {
        let mut r = room(vec![group(10, 105)]);
        r.other_swap_free_bytes = 256 * MIB;
        assert_eq!(judge(Some(105 * MIB), &r), Ok(()));
    }

    #[test]
    fn a_group_only_gets_back_what_it_swapped() {
        assert_eq!(judge(Some(500 * MIB), &room(vec![group(40, 20)])), Ok(()));
    }

    /// zram's pool comes back to the machine as its pages come out, not to any group.
    #[test]
    fn zrams_own_pool_makes_room_for_the_machine_not_for_a_group() {
        let mut r = room(vec![group(400, 300)]);
        r.available_bytes = 250 * MIB;
        assert!(judge(Some(300 * MIB), &r).unwrap_err().contains("would not fit"));
        r.freed_bytes = 100 * MIB;
        assert_eq!(judge(Some(300 * MIB), &r), Ok(()));
        r.groups = vec![group(250, 300)];
        assert!(judge(Some(300 * MIB), &r).unwrap_err().contains("group /sb"));
    }

    #[test]
    fn an_unlisted_device_is_judged_by_all_the_swap_in_use() {
        let mut r = room(Vec::new());
        r.available_bytes = 200 * MIB;
        assert!(judge(None, &r).unwrap_err().contains("300 MiB would not fit"));
        assert_eq!(judge(Some(100 * MIB), &r), Ok(()));
    }
}
