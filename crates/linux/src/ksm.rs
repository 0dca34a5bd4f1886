//! KSM, the kernel's same-page merging: global counters in `/sys/kernel/mm/ksm`.

use crate::error::Result;
use crate::root::SysRoot;
use memorch_core::{Facility, KsmState};

pub const KSM_DIR: &str = "/sys/kernel/mm/ksm";

pub fn read(root: &SysRoot) -> Facility<KsmState> {
    if !root.path(KSM_DIR).is_dir() {
        return Facility::unavailable(format!("{KSM_DIR} is missing: the kernel has no KSM (CONFIG_KSM)"));
    }
    match read_state(root) {
        Ok(s) => Facility::Available(s),
        Err(e) => Facility::unavailable(e.to_string()),
    }
}

fn read_state(root: &SysRoot) -> Result<KsmState> {
    let get = |f: &str| root.read_u64(format!("{KSM_DIR}/{f}"));
    let opt = |f: &str| get(f).ok();
    let pages_sharing = get("pages_sharing")?;
    Ok(KsmState {
        run: get("run")? as u8,
        pages_to_scan: get("pages_to_scan")?,
        sleep_ms: get("sleep_millisecs")?,
        pages_shared: get("pages_shared")?,
        pages_sharing,
        pages_unshared: get("pages_unshared")?,
        pages_volatile: get("pages_volatile")?,
        full_scans: get("full_scans")?,
        // general_profit can be negative, so it is not read as u64.
        general_profit_bytes: root
            .read(format!("{KSM_DIR}/general_profit"))
            .ok()
            .and_then(|t| t.trim().parse().ok()),
        zero_pages: opt("ksm_zero_pages"),
        saved_bytes: pages_sharing * root.page_size,
    })
}
