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
        general_profit_bytes: root.read(format!("{KSM_DIR}/general_profit")).ok().and_then(|t| t.trim().parse().ok()),
        zero_pages: opt("ksm_zero_pages"),
        saved_bytes: pages_sharing * root.page_size,
    })
}

/// KSM knobs memorch tunes; `None` leaves one as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct KsmSettings {
    pub run: Option<u8>,
    pub pages_to_scan: Option<u64>,
    pub sleep_ms: Option<u64>,
}

impl KsmSettings {
    fn files(&self) -> [(&'static str, Option<u64>); 3] {
        [
            ("pages_to_scan", self.pages_to_scan),
            ("sleep_millisecs", self.sleep_ms),
            // run last: scanning starts with the new pace.
            ("run", self.run.map(u64::from)),
        ]
    }
}

/// Check `settings` and return the values they would replace, changing nothing.
pub fn plan(root: &SysRoot, settings: &KsmSettings) -> Result<KsmSettings> {
    if !root.path(KSM_DIR).is_dir() {
        return Err(crate::Error::Refused(format!("KSM is not available: {KSM_DIR} is missing (CONFIG_KSM)")));
    }
    if let Some(r) = settings.run {
        if r > 2 {
            return Err(crate::Error::Refused(format!("ksm run {r}: use 0 (stop), 1 (run) or 2 (unmerge all)")));
        }
    }
    if settings.pages_to_scan == Some(0) {
        return Err(crate::Error::Refused("ksm pages-to-scan 0: give at least 1".into()));
    }
    let get = |f: &str| root.read_u64(format!("{KSM_DIR}/{f}"));
    Ok(KsmSettings {
        run: settings.run.map(|_| get("run").map(|v| v as u8)).transpose()?,
        pages_to_scan: settings.pages_to_scan.map(|_| get("pages_to_scan")).transpose()?,
        sleep_ms: settings.sleep_ms.map(|_| get("sleep_millisecs")).transpose()?,
    })
}

/// Apply `settings`; return the values they replaced, to restore later. Validates all before writing any, so nothing is
/// half-applied.
pub fn tune(root: &SysRoot, settings: &KsmSettings) -> Result<KsmSettings> {
    let previous = plan(root, settings)?;
    for (file, value) in settings.files() {
        if let Some(v) = value {
            let p = root.path(format!("{KSM_DIR}/{file}"));
            if let Err(e) = std::fs::write(&p, v.to_string()) {
                // Put back what was written before the failure.
                let _ = restore(root, &previous);
                return Err(crate::Error::io(p, e));
            }
        }
    }
    Ok(previous)
}

fn restore(root: &SysRoot, previous: &KsmSettings) -> Result<()> {
    for (file, value) in previous.files() {
        if let Some(v) = value {
            let p = root.path(format!("{KSM_DIR}/{file}"));
            std::fs::write(&p, v.to_string()).map_err(|e| crate::Error::io(p, e))?;
        }
    }
    Ok(())
}

/// Records of KSM settings a guard will put back (records.rs).
const RECORD_KIND: &str = "ksm";

/// KSM settings restored on drop (tests, the daemon). The settings it replaces are recorded with its owner before it
/// changes any: if the owner dies without dropping it, [`recover_stale`] puts them back.
#[derive(Debug)]
pub struct KsmGuard {
    previous: KsmSettings,
    root: SysRoot,
    key: String,
    restored: bool,
}

impl KsmGuard {
    pub fn tune(root: &SysRoot, settings: &KsmSettings) -> Result<KsmGuard> {
        let previous = plan(root, settings)?;
        let key = format!("{}-{}", std::process::id(), GUARDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        if root.is_live() {
            crate::records::save(RECORD_KIND, &key, &previous)?;
        }
        match tune(root, settings) {
            Ok(previous) => Ok(KsmGuard { previous, root: root.clone(), key, restored: false }),
            Err(e) => {
                let _ = crate::records::forget(RECORD_KIND, &key);
                Err(e)
            }
        }
    }

    /// The settings it will put back.
    pub fn previous(&self) -> &KsmSettings {
        &self.previous
    }

    /// Put them back now (drop does it too, but cannot say how it went).
    pub fn restore_now(&mut self) -> Result<()> {
        if !self.restored {
            restore(&self.root, &self.previous)?;
            self.restored = true;
            if self.root.is_live() {
                let _ = crate::records::forget(RECORD_KIND, &self.key);
            }
        }
        Ok(())
    }
}

static GUARDS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

impl Drop for KsmGuard {
    fn drop(&mut self) {
        if let Err(e) = self.restore_now() {
            eprintln!("memorch: ksm: restoring settings failed: {e}");
        }
    }
}

/// Put back the KSM settings that guards of dead owners replaced. Returns what was done, or why not (without `undo`,
/// what it would do).
pub fn recover_stale(root: &SysRoot, undo: bool) -> Vec<std::result::Result<String, String>> {
    let mut out = Vec::new();
    for (rec, change) in crate::records::stale::<KsmSettings>(root, RECORD_KIND) {
        if !undo {
            out.push(Ok(format!("would put KSM back as a memorch process that died found it ({})", rec.display())));
            continue;
        }
        match change.and_then(|prev| restore(root, &prev).map(|_| prev).map_err(|e| e.to_string())) {
            Ok(prev) => {
                crate::records::remove(&rec);
                out.push(Ok(format!("put KSM back as a memorch process that died found it (run {:?}, pages_to_scan {:?}, sleep {:?} ms)", prev.run, prev.pages_to_scan, prev.sleep_ms)));
            }
            Err(e) => {
                out.push(Err(format!("KSM settings left by a memorch process that died ({}): {e}", rec.display())))
            }
        }
    }
    out
}

/// Mark the calling process, and what it execs, as mergeable by KSM (`prctl(PR_SET_MEMORY_MERGE)`, Linux 6.4+). It
/// survives exec, not the other way round: KSM cannot be switched on for a process memorch did not start.
pub fn enable_merge_for_self() -> Result<()> {
    // SAFETY: prctl with integer arguments.
    let r = unsafe { libc::prctl(libc::PR_SET_MEMORY_MERGE, 1, 0, 0, 0) };
    if r != 0 {
        let e = std::io::Error::last_os_error();
        return Err(crate::Error::Other {
            what: "prctl(PR_SET_MEMORY_MERGE)".into(),
            detail: format!("{e} (needs Linux 6.4+ with CONFIG_KSM)"),
        });
    }
    Ok(())
}

/// A process's KSM state (`/proc/PID/ksm_stat`).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ProcessKsm {
    pub pid: u32,
    pub merging_pages: u64,
    pub rmap_items: u64,
    pub zero_pages: u64,
    pub profit_bytes: i64,
    /// Every anonymous VMA is mergeable (PR_SET_MEMORY_MERGE).
    pub merge_any: bool,
}

pub fn read_process(root: &SysRoot, pid: u32) -> Result<ProcessKsm> {
    let text = root.read(format!("/proc/{pid}/ksm_stat"))?;
    let num =
        |k: &str| text.lines().find_map(|l| l.strip_prefix(k).and_then(|r| r.trim().parse::<i64>().ok())).unwrap_or(0);
    Ok(ProcessKsm {
        pid,
        merging_pages: num("ksm_merging_pages ") as u64,
        rmap_items: num("ksm_rmap_items ") as u64,
        zero_pages: num("ksm_zero_pages ") as u64,
        profit_bytes: num("ksm_process_profit "),
        merge_any: text.lines().any(|l| l.trim() == "ksm_merge_any: yes"),
    })
}

/// CPU time the kernel's `ksmd` thread has used, in µs (the thesis's measure of what KSM costs). Read, never touched:
/// the kernel thread named `ksmd`, a child of `kthreadd` (2).
pub fn ksmd_cpu_us(root: &SysRoot) -> Option<u64> {
    let dir = std::fs::read_dir(root.path("/proc")).ok()?;
    let ksmd = dir.flatten().filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok()).find_map(|pid| {
        let s = crate::process::read_stat(root, pid).ok()?;
        (s.name == "ksmd" && s.ppid == 2 && s.is_kernel_thread()).then_some(s)
    })?;
    Some(ksmd.cpu_ticks * 1_000_000 / root.clock_ticks)
}
