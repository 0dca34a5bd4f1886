//! The synthetic app's memory image: an anonymous heap filled with a content mix, and a file mapping read in as its
//! code and data would be. Real pages, so compression, KSM, reclaim and refaults behave as they do for real apps.

use crate::content::{self, Mix, PageKind};
use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

pub const PAGE: usize = 4096;

/// What the heap holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Content {
    /// Every page of one kind.
    Only(PageKind),
    /// Pages of each kind in these shares.
    Mixed(Mix),
}

impl Content {
    /// `text`, `zero`, `same`, `random`, `shared` or `mixed`.
    pub fn parse(s: &str) -> Option<Content> {
        Some(match s {
            "text" => Content::Only(PageKind::Text),
            "zero" => Content::Only(PageKind::Zero),
            "same" => Content::Only(PageKind::Same),
            "random" => Content::Only(PageKind::Random),
            "shared" => Content::Only(PageKind::Shared),
            "mixed" => Content::Mixed(Mix::REALISTIC),
            _ => return None,
        })
    }

    pub fn kind(&self, seed: u64, index: u64) -> PageKind {
        match self {
            Content::Only(k) => *k,
            Content::Mixed(m) => m.kind(seed, index),
        }
    }
}

#[derive(Debug, Clone)]
pub struct AppSpec {
    pub anon_bytes: u64,
    pub content: Content,
    pub seed: u64,
    /// A file to map and read (created with text if missing or short), and how much of it.
    pub file: Option<(PathBuf, u64)>,
    /// A shared-object file of the app's own (`lib….so`), mapped privately and written once at start, as the loader
    /// relocates it when the app's symbols are looked up, and not touched again: pages of the library's mapping that
    /// only swap can take, the unshared SO pages SWAM swaps out first (SWAM §3.3: ~36 % of memory).
    pub so: Option<(PathBuf, u64)>,
}

/// An mmap'ed region, unmapped on drop.
#[derive(Debug)]
pub struct Mapping {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: a Mapping owns its region alone (nothing else holds the pointer) and unmaps it on drop, so moving it to
// another thread (an app's cache, dropped by its trim listener) is moving a Box.
unsafe impl Send for Mapping {}

impl Mapping {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr..ptr+len is a live mapping we own.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// Touch one byte a page (the working set on resume): brings swapped pages back.
    pub fn touch(&self) -> u64 {
        let s = self.as_slice();
        let mut sum = 0u64;
        for i in (0..s.len()).step_by(PAGE) {
            // Volatile so the compiler keeps the reads.
            sum = sum.wrapping_add(unsafe { std::ptr::read_volatile(&s[i]) } as u64);
        }
        sum
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: unmapping our own mapping.
            unsafe { libc::munmap(self.ptr.cast(), self.len) };
        }
    }
}

/// The app's memory, alive while this lives.
#[derive(Debug)]
pub struct AppImage {
    pub anon: Mapping,
    pub file: Option<Mapping>,
    pub so: Option<Mapping>,
}

/// Map and fill the heap, map and read the file and the shared object.
pub fn build(spec: &AppSpec) -> io::Result<AppImage> {
    let anon = anon_heap(spec.anon_bytes as usize, spec.content, spec.seed)?;
    let map = |f: &Option<(PathBuf, u64)>, relocate: bool| {
        f.as_ref().map(|(path, bytes)| map_file(path, *bytes as usize, spec.seed, relocate)).transpose()
    };
    Ok(AppImage { anon, file: map(&spec.file, false)?, so: map(&spec.so, true)? })
}

fn anon_heap(len: usize, content: Content, seed: u64) -> io::Result<Mapping> {
    let len = len.div_ceil(PAGE) * PAGE;
    if len == 0 {
        return Ok(Mapping { ptr: std::ptr::null_mut(), len: 0 });
    }
    // SAFETY: a fresh private anonymous mapping.
    let ptr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if ptr == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    let map = Mapping { ptr: ptr.cast(), len };
    // Transparent huge pages would make pageout all-or-nothing per 2 MiB; apps on phones run with 4 KiB pages.
    unsafe { libc::madvise(ptr, len, libc::MADV_NOHUGEPAGE) };
    // SAFETY: we own the mapping and nothing else refers to it yet.
    let bytes = unsafe { std::slice::from_raw_parts_mut(map.ptr, len) };
    for (i, page) in bytes.chunks_mut(PAGE).enumerate() {
        let kind = content.kind(seed, i as u64);
        if kind == PageKind::Zero {
            // Write so the page is really allocated, as an app's zeroed buffer is.
            page[0] = 0;
            unsafe { std::ptr::write_volatile(&mut page[0], 0) };
        } else {
            content::fill(page, kind, seed, i as u64);
        }
    }
    Ok(map)
}

/// Create `path`, or extend it, to at least `len` bytes of text, written to storage: an app's code file or shared
/// object as installed. The bench installs every synthetic app's before its first run (campaign.rs), so no launch pays
/// for the writing; an app started by hand writes its own on its first start.
pub fn install_file(path: &Path, len: u64, seed: u64) -> io::Result<()> {
    let len = len.div_ceil(PAGE as u64) * PAGE as u64;
    let have = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    if have >= len {
        return Ok(());
    }
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
    let mut page = vec![0u8; PAGE];
    for i in (have / PAGE as u64)..(len / PAGE as u64) {
        content::fill(&mut page, PageKind::Text, seed, i);
        f.write_all(&page)?;
    }
    f.sync_all()
}

/// Map `len` bytes of `path` privately and read every page, creating or extending the file with text first. Its pages
/// are then file-backed RSS: clean, dropped without swap. With `relocate`, every page is written once too (as a loader
/// relocates a library): private copies in the file's mapping, which only swap can take.
fn map_file(path: &Path, len: usize, seed: u64, relocate: bool) -> io::Result<Mapping> {
    let len = len.div_ceil(PAGE) * PAGE;
    install_file(path, len as u64, seed)?;
    let c = CString::new(path.as_os_str().as_bytes()).map_err(|_| io::Error::other("NUL in path"))?;
    // SAFETY: plain open/mmap/close of a path we were given.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let prot = if relocate { libc::PROT_READ | libc::PROT_WRITE } else { libc::PROT_READ };
    let ptr = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, libc::MAP_PRIVATE, fd, 0) };
    let err = io::Error::last_os_error();
    unsafe { libc::close(fd) };
    if ptr == libc::MAP_FAILED {
        return Err(err);
    }
    let map = Mapping { ptr: ptr.cast(), len };
    if relocate {
        // SAFETY: a private writable mapping we own; one byte a page, copied on write.
        let bytes = unsafe { std::slice::from_raw_parts_mut(map.ptr, len) };
        for i in (0..len).step_by(PAGE) {
            let v = unsafe { std::ptr::read_volatile(&bytes[i]) };
            unsafe { std::ptr::write_volatile(&mut bytes[i], v ^ 1) };
        }
    } else {
        map.touch();
    }
    Ok(map)
}

/// What a visit to an app cost it: the time to touch its working set, and the major faults (pages read back from swap
/// or disk) that took.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resume {
    pub us: u64,
    pub major_faults: u64,
}

fn major_faults() -> u64 {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage into a zeroed struct.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    ru.ru_majflt as u64
}

impl AppImage {
    /// Bring the app to the front: touch its working set (the first `share` of its heap and of its file, as a resumed
    /// app redraws from them) and write to the heap pages, as an app that runs does.
    pub fn resume(&self, share: f64) -> Resume {
        let f0 = major_faults();
        let t0 = std::time::Instant::now();
        let n = ((self.anon.len() as f64 * share) as usize).min(self.anon.len());
        // SAFETY: we own the mapping; writing one byte a page of our own heap.
        let heap = unsafe { std::slice::from_raw_parts_mut(self.anon.ptr, self.anon.len) };
        for i in (0..n).step_by(PAGE) {
            let v = unsafe { std::ptr::read_volatile(&heap[i]) };
            unsafe { std::ptr::write_volatile(&mut heap[i], v) };
        }
        if let Some(f) = &self.file {
            let m = (f.len() as f64 * share) as usize;
            let s = f.as_slice();
            for i in (0..m).step_by(PAGE) {
                unsafe { std::ptr::read_volatile(&s[i]) };
            }
        }
        Resume { us: t0.elapsed().as_micros() as u64, major_faults: major_faults() - f0 }
    }

    /// Run in the background a moment, as apps do while cached (SWAM §3.2: sync, push, prefetch): write the next slice
    /// of 1 % of the heap (`cursor` moves it round).
    pub fn background_tick(&self, cursor: &mut usize) {
        let pages = self.anon.len / PAGE;
        if pages == 0 {
            return;
        }
        let slice = (pages / 100).max(1);
        // SAFETY: we own the mapping; one byte a page of our own heap.
        let heap = unsafe { std::slice::from_raw_parts_mut(self.anon.ptr, self.anon.len) };
        for _ in 0..slice {
            let i = (*cursor % pages) * PAGE;
            let v = unsafe { std::ptr::read_volatile(&heap[i]) };
            unsafe { std::ptr::write_volatile(&mut heap[i], v.wrapping_add(1)) };
            *cursor += 1;
        }
    }
}

/// The frame interval of a 60 Hz display: a frame that takes longer is janky.
pub const FRAME_BUDGET: std::time::Duration = std::time::Duration::from_micros(16_667);

impl AppImage {
    /// Draw one frame while in front: a little CPU and the next slice of the working set (the heap pages a redraw reads
    /// and writes, the whole set about twice a second). Returns how long it took: swap-ins and reclaim stalls make it
    /// long.
    pub fn frame(&self, share: f64, cursor: &mut usize) -> std::time::Duration {
        let t0 = std::time::Instant::now();
        let ws_pages = ((self.anon.len() as f64 * share) as usize / PAGE).max(1);
        let step = (ws_pages / 30).clamp(16, 512);
        // SAFETY: we own the mapping; one byte a page of our own heap.
        let heap = unsafe { std::slice::from_raw_parts_mut(self.anon.ptr, self.anon.len) };
        for _ in 0..step {
            let i = (*cursor % ws_pages) * PAGE;
            if i < heap.len() {
                let v = unsafe { std::ptr::read_volatile(&heap[i]) };
                unsafe { std::ptr::write_volatile(&mut heap[i], v) };
            }
            *cursor += 1;
        }
        std::hint::black_box(init_work(1));
        t0.elapsed()
    }
}

/// Frame times of one stay in front, as the app reports them on `back`.
#[derive(Debug, Default, Clone)]
pub struct FrameStats {
    pub us: Vec<u64>,
}

impl FrameStats {
    /// `frames n=N janky=J p95_us=P max_us=M`
    pub fn line(&self) -> String {
        let mut v = self.us.clone();
        v.sort_unstable();
        let p95 = if v.is_empty() { 0 } else { v[((v.len() as f64 * 0.95).ceil() as usize).clamp(1, v.len()) - 1] };
        let janky = v.iter().filter(|&&u| u > FRAME_BUDGET.as_micros() as u64).count();
        format!("frames n={} janky={janky} p95_us={p95} max_us={}", v.len(), v.last().copied().unwrap_or(0))
    }
}

/// The app's cold-start work besides building its memory: `ms` of CPU (class loading, UI inflation: SWAM §3.3–3.4
/// measure these as the bulk of a launch).
pub fn init_work(ms: u64) -> u64 {
    let t0 = std::time::Instant::now();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    while t0.elapsed().as_millis() < ms as u128 {
        for _ in 0..10_000 {
            x = crate::content::splitmix(x);
        }
    }
    x
}
