//! `/proc/meminfo`: the machine's memory, for the `system` domain.

use crate::error::{Error, Result};
use crate::parse::field_kib;
use crate::root::SysRoot;
use memorch_core::MemoryState;

/// The machine's RAM in bytes (`MemTotal`): caps every cgroup limit.
pub fn mem_total_bytes(root: &SysRoot) -> Result<u64> {
    let text = root.read("/proc/meminfo")?;
    field_kib(&text, "MemTotal").ok_or_else(|| Error::parse(root.path("/proc/meminfo"), "MemTotal", "missing"))
}

/// Read the whole machine's memory state.
pub fn read_system(root: &SysRoot) -> Result<MemoryState> {
    let path = root.path("/proc/meminfo");
    let text = root.read("/proc/meminfo")?;
    let need =
        |key: &'static str| field_kib(&text, key).ok_or_else(|| Error::parse(&path, key, "missing from meminfo"));
    let total = need("MemTotal")?;
    let free = need("MemFree")?;
    // MemAvailable exists since Linux 3.14; estimate it the old way before that.
    let available = field_kib(&text, "MemAvailable")
        .unwrap_or_else(|| free + field_kib(&text, "Cached").unwrap_or(0) + field_kib(&text, "Buffers").unwrap_or(0));
    let swap_total = field_kib(&text, "SwapTotal").unwrap_or(0);
    let swap_free = field_kib(&text, "SwapFree").unwrap_or(0);
    Ok(MemoryState {
        total_bytes: total,
        limited: false,
        used_bytes: total.saturating_sub(available),
        free_bytes: free,
        available_bytes: available,
        file_active_bytes: field_kib(&text, "Active(file)").unwrap_or(0),
        file_inactive_bytes: field_kib(&text, "Inactive(file)").unwrap_or(0),
        anon_bytes: field_kib(&text, "AnonPages").unwrap_or(0),
        shmem_bytes: field_kib(&text, "Shmem").unwrap_or(0),
        swap_used_bytes: swap_total.saturating_sub(swap_free),
    })
}
