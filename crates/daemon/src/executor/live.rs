//! The live actuators: memorch-linux's, on the daemon's domain. Every process action goes through `target::check` first
//! (never outside the domain, never memorch, a namespace's init or a system process).

use super::{Actuators, Killed, Squeeze};
use memorch_core::engine::CompactScope;
use memorch_linux::compact::{self, Advice};
use memorch_linux::ksm::{KsmGuard, KsmSettings};
use memorch_linux::readback::Ahead;
use memorch_linux::swapfile::SwapFileGuard;
use memorch_linux::{appgroup, ksm, reclaim, snapshot, target, Domain, SysRoot};
use std::path::PathBuf;

/// How long a freeze or thaw may take before it is reported failed (the kernel does it in well under a millisecond for
/// an app's few threads).
const FREEZE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(1);

pub struct Live {
    pub root: SysRoot,
    pub domain: Domain,
    swap_file_dir: PathBuf,
    /// Swap files this daemon added, removed on exit.
    swap_files: Vec<SwapFileGuard>,
    /// Swap files made for one unlikely app's squeeze each, above zram in priority; removed when the engine finds one
    /// holds little (`swap.cold_drop_below`), and on exit.
    cold_files: Vec<SwapFileGuard>,
    /// KSM settings as they were when the daemon first tuned them, put back on exit.
    ksm_guard: Option<KsmGuard>,
    /// zram's swap type number (the pagemap's) and its device, once probed: what tells a read-back asking ahead which
    /// of an app's swapped pages are in zram.
    zram_type: Option<(u32, String)>,
    /// Whether a read-back asks for its pages on storage at once first (with the preset's `prefetch_whole`); a squeeze
    /// to storage then probes zram's type first too, to tell those pages from zram's.
    read_back_ahead: bool,
}

impl Live {
    pub fn new(root: SysRoot, domain: Domain, swap_file_dir: PathBuf) -> Live {
        Live {
            root,
            domain,
            swap_file_dir,
            swap_files: Vec::new(),
            cold_files: Vec::new(),
            ksm_guard: None,
            zram_type: None,
            read_back_ahead: false,
        }
    }

    /// With swap files a memorch that died left on (recovery.rs), removed as its own.
    pub fn with_adopted(mut self, files: Vec<SwapFileGuard>) -> Live {
        self.swap_files.extend(files);
        self
    }

    /// Which pages a read-back asks for at once (with the preset's `prefetch_whole`): with none on the storage files,
    /// none; else those outside zram, or all of them where zram's swap type is not known (from zram, asking first costs
    /// a seventh more than the touch alone; from storage, a third of it: readback.rs).
    fn ahead_from_storage(&mut self) -> Ahead {
        let Ok(swaps) = memorch_linux::swaps::read(&self.root) else { return Ahead::Nothing };
        if !swaps.storage_holds_pages() {
            return Ahead::Nothing;
        }
        self.zram_type(&swaps).map_or(Ahead::All, Ahead::OutsideArea)
    }

    /// Probe zram's swap type while a zram device is the highest-priority swap with room (before any file of its own
    /// stands above it: the probe page would go there), and keep it while that device stays enabled. `None` where it is
    /// not known and cannot be probed now.
    fn zram_type(&mut self, swaps: &memorch_core::SwapState) -> Option<u32> {
        let top = swaps.devices.iter().max_by_key(|d| d.priority)?;
        if let Some((t, dev)) = &self.zram_type {
            if swaps.devices.iter().any(|d| &d.path == dev && d.kind != "file") {
                return Some(*t);
            }
            self.zram_type = None;
        }
        // Only a zram device: a disk partition on top would be "written back" to a file for nothing.
        if top.kind == "file" || !top.path.starts_with("/dev/zram") || top.used_bytes + (1 << 20) >= top.size_bytes {
            return None;
        }
        match memorch_linux::swaptype::probe_zram_type(&self.root) {
            Ok(Some(t)) => {
                tracing::debug!(swap_type = t, device = %top.path, "zram's swap type probed");
                self.zram_type = Some((t, top.path.clone()));
                Some(t)
            }
            Ok(None) => None,
            Err(e) => {
                tracing::warn!(error = %e, "zram's swap type could not be probed: no read-back asked ahead");
                None
            }
        }
    }

    /// A storage file of its own for `pages`, enabled one above zram (what the engine tells these files by,
    /// `SwapState::above_zram_priority`): the kernel fills it before zram. Its size in bytes and priority with it.
    fn add_file_of_its_own(
        &self,
        swaps: &memorch_core::SwapState,
        pages: u64,
    ) -> Result<(SwapFileGuard, u64, i32), String> {
        let mib = 1u64 << 20;
        let bytes = (pages * self.root.page_size).div_ceil(mib) * mib + self.root.page_size;
        let priority = swaps.above_zram_priority().ok_or("no zram (or other swap device) to send the pages past")?;
        SwapFileGuard::add(&self.root, &self.swap_file_dir, bytes, priority)
            .map(|g| (g, bytes, priority))
            .map_err(|e| e.to_string())
    }
}

impl Actuators for Live {
    fn compact(
        &mut self,
        pid: u32,
        app: &str,
        scope: CompactScope,
        max_pages: Option<u64>,
    ) -> Result<(String, u64), String> {
        compact_one(&self.root, &self.domain, Squeeze { pid, app, scope, max_pages })
    }

    fn kill(&mut self, pid: u32, why: &str, seen_adj: Option<i32>) -> Result<Killed, String> {
        let t = target::check(&self.root, pid, &self.domain).map_err(|e| e.to_string())?;
        if let Some(seen) = seen_adj.filter(|s| t.oom_score_adj < *s) {
            return Err(format!("{} ({pid}) has oom_score_adj {} now, {seen} when the kill was decided: it came back to the front since; spared", t.name, t.oom_score_adj));
        }
        let s = memorch_linux::kill::signal(&self.root, &t).map_err(|e| e.to_string())?;
        let (rss, swap) = (s.resident.rss_bytes(), s.resident.swap_bytes);
        tracing::info!(pid, uid = s.uid, app = %t.name, class = %t.class, rss_kb = rss / 1024, swap_kb = swap / 1024, reason = %why, "{}", memorch_linux::kill::line(&t, s.uid, rss, swap, why));
        Ok(Killed {
            pid,
            name: t.name,
            pidfd: Some(t.pidfd),
            rss_bytes: s.resident.rss_bytes(),
            swap_bytes: s.resident.swap_bytes,
            at: s.at,
            why: why.to_string(),
        })
    }

    fn reap(&mut self, victim: &Killed) {
        if let Some(p) = &victim.pidfd {
            p.mrelease();
        }
    }

    fn reclaim(&mut self, bytes: u64) -> Result<(String, u64), String> {
        reclaim::reclaim(&self.root, &self.domain, bytes, false)
            .map(|r| {
                (
                    format!("reclaimed {} of {} bytes in {} µs", r.reclaimed_bytes, r.requested_bytes, r.elapsed_us),
                    r.reclaimed_bytes,
                )
            })
            .map_err(|e| e.to_string())
    }

    fn ksm(&mut self, run: bool, pages_to_scan: u64) -> Result<String, String> {
        if self.ksm_guard.is_none() {
            // Remember every knob as it is, to put back on exit (and by whoever starts next, should this daemon die
            // first).
            let now = ksm::read(&self.root);
            let k = now.get().ok_or("KSM is not available")?;
            let same = KsmSettings { run: Some(k.run), pages_to_scan: Some(k.pages_to_scan), sleep_ms: None };
            self.ksm_guard = Some(KsmGuard::tune(&self.root, &same).map_err(|e| e.to_string())?);
        }
        ksm::tune(
            &self.root,
            &KsmSettings { run: Some(run as u8), pages_to_scan: Some(pages_to_scan), sleep_ms: None },
        )
        .map_err(|e| e.to_string())?;
        Ok(format!("ksm {}", if run { "running" } else { "stopped" }))
    }

    fn swap_grow(&mut self, bytes: u64) -> Result<String, String> {
        let g = SwapFileGuard::add(&self.root, &self.swap_file_dir, bytes, memorch_linux::swapfile::DEFAULT_PRIORITY)
            .map_err(|e| e.to_string())?;
        let what = format!("added swap file {}", g.path.display());
        self.swap_files.push(g);
        Ok(what)
    }

    fn swap_shrink(&mut self) -> Result<String, String> {
        let swaps = memorch_linux::swaps::read(&self.root).map_err(|e| e.to_string())?;
        let idle = |g: &SwapFileGuard| {
            swaps.devices.iter().any(|d| std::path::Path::new(&d.path) == g.path && d.used_bytes == 0)
        };
        let before = self.swap_files.len();
        self.swap_files.retain(|g| !idle(g));
        let n = before - self.swap_files.len();
        if n == 0 {
            return Err("no idle swap file of this daemon to remove".into());
        }
        Ok(format!("removed {n} idle swap files"))
    }

    /// The file is sized to the squeeze and enabled above zram (`SwapState::above_zram_priority`, which the engine
    /// tells these files by): the kernel fills it before zram.
    fn compact_to_storage(&mut self, sq: Squeeze) -> Result<(String, u64), String> {
        target::check(&self.root, sq.pid, &self.domain).map_err(|e| e.to_string())?;
        let pages = sq.max_pages.ok_or("a squeeze to storage needs its size (max_pages): none given")?;
        let file = memorch_linux::swaps::read(&self.root).map_err(|e| e.to_string()).and_then(|swaps| {
            // The last chance to probe zram's type before a file stands above it.
            if self.read_back_ahead {
                self.zram_type(&swaps);
            }
            self.add_file_of_its_own(&swaps, pages)
        });
        // Without a file of its own the squeeze is still worth doing: where the kernel puts it.
        let (mut g, bytes, priority) = match file {
            Ok(f) => f,
            Err(e) => {
                return compact_one(&self.root, &self.domain, sq)
                    .map(|(w, b)| (format!("{w} (not to storage of its own: {e})"), b))
            }
        };
        match compact_one(&self.root, &self.domain, sq) {
            Ok((what, moved)) => {
                let what = format!("{what}, to {} ({} MiB, priority {priority})", g.path.display(), bytes >> 20);
                self.cold_files.push(g);
                Ok((what, moved))
            }
            // Nothing half-applied: the file made for it goes too.
            Err(e) => {
                let _ = g.remove_now();
                Err(e)
            }
        }
    }

    fn swap_drop_cold(&mut self, path: &str) -> Result<String, String> {
        let Some(at) = self.cold_files.iter().position(|g| g.path == std::path::Path::new(path)) else {
            return Err(format!("{path} is no storage file of this daemon's squeezes: left as it is"));
        };
        let mut g = self.cold_files.remove(at);
        // swapoff reads what the file holds back in before it returns: its time is the daemon's, and says what an
        // earlier removal costs (docs/results.md).
        let started = std::time::Instant::now();
        match g.remove_now() {
            Ok(()) => Ok(format!(
                "removed storage file {path} in {} ms (what it held read back in)",
                started.elapsed().as_millis()
            )),
            // Still ours: tried again at the next decision that asks, or at exit.
            Err(e) => {
                self.cold_files.push(g);
                Err(format!("{path} could not be removed: {e}"))
            }
        }
    }

    /// A freeze goes through `target::check` as every action does; a thaw only needs the app's group (a process on its
    /// way out may be thawed, never frozen).
    fn set_frozen(&mut self, pid: u32, frozen: bool) -> Result<String, String> {
        if frozen {
            target::check(&self.root, pid, &self.domain).map_err(|e| e.to_string())?;
        }
        let g = memorchs_group(&self.root, pid, &self.domain, "frozen alone")?;
        let t0 = std::time::Instant::now();
        memorch_linux::freeze::set_frozen(&self.root, &g.path, frozen, FREEZE_TIMEOUT).map_err(|e| e.to_string())?;
        Ok(format!("{} {pid} ({}) in {} µs", if frozen { "froze" } else { "thawed" }, g.path, t0.elapsed().as_micros()))
    }

    /// Only pages the pagemap shows in swap are read, into the app's own page tables (as its touch would: the kernel's
    /// LRU then keeps them as just used).
    fn prefetch(&mut self, pid: u32, app: &str, max_pages: u64) -> Result<(String, u64), String> {
        let t = target::check(&self.root, pid, &self.domain).map_err(|e| e.to_string())?;
        let ahead = if self.read_back_ahead { self.ahead_from_storage() } else { Ahead::Nothing };
        let r = memorch_linux::readback::read_back(&self.root, &t, max_pages, ahead).map_err(|e| e.to_string())?;
        let asked = if r.ahead_bytes > 0 {
            format!(" ({} of them from storage asked at once)", r.ahead_bytes)
        } else {
            String::new()
        };
        Ok((
            format!(
                "read back '{app}' ({pid}): {} bytes of swap back of {} asked in {} ranges{asked} in {} µs{}",
                r.back_bytes,
                r.asked_bytes,
                r.ranges,
                r.elapsed_us,
                if r.exited { ", exited mid-way" } else { "" }
            ),
            r.read_bytes,
        ))
    }

    fn set_read_back_ahead(&mut self, on: bool) {
        self.read_back_ahead = on;
    }

    fn used_bytes(&self) -> Option<u64> {
        snapshot::cheap(&self.root, &self.domain).ok().map(|s| s.memory.used_bytes)
    }

    fn swap_files(&self) -> Vec<String> {
        self.swap_files.iter().chain(&self.cold_files).map(|g| g.path.display().to_string()).collect()
    }

    fn put_back(&mut self) -> (Vec<String>, Vec<String>) {
        let (mut done, mut failed) = (Vec::new(), Vec::new());
        let cold = std::mem::take(&mut self.cold_files);
        for mut g in std::mem::take(&mut self.swap_files).into_iter().chain(cold) {
            match g.remove_if_room(&self.root) {
                Ok(()) => done.push(format!("removed swap file {}", g.path.display())),
                Err(e) => failed.push(format!("swap file {}: {e}", g.path.display())),
            }
        }
        if let Some(mut g) = self.ksm_guard.take() {
            match g.restore_now() {
                Ok(()) => done.push(format!(
                    "put KSM back (run {:?}, pages_to_scan {:?})",
                    g.previous().run,
                    g.previous().pages_to_scan
                )),
                Err(e) => failed.push(format!("KSM settings: {e}")),
            }
        }
        (done, failed)
    }
}

/// The app group memorch made for `pid`, for what only such a group may have done to it (`what`: frozen): a group the
/// system made is squeezed, never left frozen or with a swappiness of memorch's, since nothing would undo that if
/// memorch died.
fn memorchs_group(root: &SysRoot, pid: u32, domain: &Domain, what: &str) -> Result<appgroup::AppGroup, String> {
    match appgroup::of_process(root, pid, domain) {
        Some(g) if g.made_by_memorch => Ok(g),
        Some(g) => Err(format!("pid {pid} is in a group of its own the system made ({}), not memorch: it is squeezed there, but not {what}", g.path)),
        None => Err(format!("pid {pid} is not in an app group of its own: it cannot be {what}")),
    }
}

/// Anonymous pages of an app in a group of its own are taken coldest first, by squeezing its group (the kernel's LRU
/// chooses); otherwise, and for file and shared-object pages, by process_madvise.
fn compact_one(root: &SysRoot, domain: &Domain, sq: Squeeze) -> Result<(String, u64), String> {
    let Squeeze { pid, app, scope, max_pages } = sq;
    let t = target::check(root, pid, domain).map_err(|e| e.to_string())?;
    if scope == CompactScope::Anon {
        if let Some(g) = appgroup::of_process(root, pid, domain) {
            let bytes = max_pages.map_or(u64::MAX, |p| p * root.page_size);
            let t0 = std::time::Instant::now();
            let moved = appgroup::shrink(&g, bytes).map_err(|e| e.to_string())?;
            return Ok((
                format!(
                    "squeezed '{app}' ({pid}) in {}: {moved} bytes of its coldest pages out in {} µs",
                    g.path,
                    t0.elapsed().as_micros()
                ),
                moved,
            ));
        }
    }
    // A page process_madvise sends to a storage swap file leaves the process but stays in the swap cache, charged to
    // the domain, until the kernel reclaims it again (a squeeze of the app's own group above reclaims until its use has
    // fallen, so it leaves none): freed here for at most what moved, or the squeeze frees nothing the engine can see
    // and the next decision squeezes again. Squeezes run together each see the others' pages too; what one frees of
    // them the next no longer finds.
    let cached = reclaim::swap_cached_bytes(domain);
    let r = compact::compact(root, &t, scope, Advice::Pageout, max_pages, false).map_err(|e| e.to_string())?;
    let freed = match reclaim::free_swap_cache_left(root, domain, cached, r.moved_bytes) {
        Ok(None) => String::new(),
        Ok(Some(f)) => format!(
            "; then {} MiB of what it left in the swap cache (written to storage) freed in {} µs",
            f.reclaimed_bytes >> 20,
            f.elapsed_us
        ),
        Err(e) => {
            format!("; what it left in the swap cache (written to storage) stays until the kernel reclaims it: {e}")
        }
    };
    Ok((
        format!(
            "compacted '{app}' ({pid}): {} bytes out in {} µs{}{freed}",
            r.moved_bytes,
            r.elapsed_us,
            if r.exited { ", exited mid-way" } else { "" }
        ),
        r.moved_bytes,
    ))
}
