//! `/proc/PID/maps` and `smaps`: a process's VMAs, sorted into what compaction can act on.

use crate::error::{Error, Result};
use crate::parse::field_kib;
use crate::root::SysRoot;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vma {
    pub start: u64,
    pub end: u64,
    pub perms: String,
    pub inode: u64,
    pub path: String,
}

/// What a VMA holds, for compaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VmaKind {
    /// Private anonymous memory: heap, stack, `mmap(MAP_ANONYMOUS|MAP_PRIVATE)`.
    Anon,
    /// A private mapping of a file: code, data, read-only assets.
    File,
    /// A private mapping of a shared object (`*.so*`): a subset of `File`.
    SharedObject,
    /// Shared mappings and kernel pseudo-mappings: never compacted.
    Other,
}

impl Vma {
    pub fn len(&self) -> u64 {
        self.end - self.start
    }

    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }

    pub fn kind(&self) -> VmaKind {
        let private = self.perms.as_bytes().get(3) == Some(&b'p');
        if !private {
            return VmaKind::Other;
        }
        if self.inode == 0 {
            let p = self.path.as_str();
            return if p.is_empty() || p == "[heap]" || p == "[stack]" || p.starts_with("[anon:") {
                VmaKind::Anon
            } else {
                // [vdso], [vvar], [vsyscall], [uprobes]…
                VmaKind::Other
            };
        }
        if is_shared_object(&self.path) {
            VmaKind::SharedObject
        } else {
            VmaKind::File
        }
    }
}

/// `libfoo.so`, `libfoo.so.1.2`.
pub fn is_shared_object(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.ends_with(".so") || name.contains(".so.")
}

/// Parse one maps line: `start-end perms offset dev inode [path]`.
pub fn parse_line(line: &str) -> Option<Vma> {
    let mut it = line.splitn(6, char::is_whitespace);
    let range = it.next()?;
    let perms = it.next()?.to_string();
    let _offset = it.next()?;
    let _dev = it.next()?;
    let inode = it.next()?.parse().ok()?;
    let path = it.next().unwrap_or("").trim().to_string();
    let (s, e) = range.split_once('-')?;
    Some(Vma { start: u64::from_str_radix(s, 16).ok()?, end: u64::from_str_radix(e, 16).ok()?, perms, inode, path })
}

pub fn read(root: &SysRoot, pid: u32) -> Result<Vec<Vma>> {
    let path = root.path(format!("/proc/{pid}/maps"));
    let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
    Ok(text.lines().filter_map(parse_line).collect())
}

/// VMAs with their resident and shared sizes from `/proc/PID/smaps`.
#[derive(Debug, Clone)]
pub struct SmapsVma {
    pub vma: Vma,
    pub rss_bytes: u64,
    /// Resident pages that another process maps too.
    pub shared_bytes: u64,
    /// Private pages of the mapping that are anonymous now: copies written over the file's (a relocated read-only
    /// section), or the whole of an anonymous mapping.
    pub anon_bytes: u64,
}

pub fn read_smaps(root: &SysRoot, pid: u32) -> Result<Vec<SmapsVma>> {
    let path = root.path(format!("/proc/{pid}/smaps"));
    let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
    let mut out: Vec<SmapsVma> = Vec::new();
    let mut block = String::new();
    let flush = |head: Option<Vma>, block: &str, out: &mut Vec<SmapsVma>| {
        if let Some(vma) = head {
            let rss = field_kib(block, "Rss").unwrap_or(0);
            let shared = field_kib(block, "Shared_Clean").unwrap_or(0) + field_kib(block, "Shared_Dirty").unwrap_or(0);
            let anon = field_kib(block, "Anonymous").unwrap_or(0);
            out.push(SmapsVma { vma, rss_bytes: rss, shared_bytes: shared, anon_bytes: anon });
        }
    };
    let mut head: Option<Vma> = None;
    for line in text.lines() {
        // A VMA header starts with a hex range; field lines start with a capitalised key.
        if line.as_bytes().first().is_some_and(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
            && line.contains('-')
        {
            if let Some(v) = parse_line(line) {
                flush(head.take(), &block, &mut out);
                block.clear();
                head = Some(v);
                continue;
            }
        }
        block.push_str(line);
        block.push('\n');
    }
    flush(head, &block, &mut out);
    Ok(out)
}

/// Resident bytes of shared-object mappings that no other process maps (SWAM's OOM cleaner takes these first: dropping
/// them costs no other app anything).
pub fn unshared_so_bytes(root: &SysRoot, pid: u32) -> Result<u64> {
    Ok(read_smaps(root, pid)?
        .iter()
        .filter(|s| s.vma.kind() == VmaKind::SharedObject && s.shared_bytes == 0)
        .map(|s| s.rss_bytes)
        .sum())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_vmas_into_kinds() {
        let lines = [
            ("55a0-55b0 rw-p 00000000 00:00 0                          [heap]", VmaKind::Anon),
            ("7f00-7f10 rw-p 00000000 00:00 0 ", VmaKind::Anon),
            ("7f10-7f20 r-xp 00000000 fe:00 1234   /usr/lib/x86_64-linux-gnu/libc.so.6", VmaKind::SharedObject),
            ("7f20-7f30 r--p 00000000 fe:00 99     /tmp/app data.bin", VmaKind::File),
            ("7f30-7f40 rw-s 00000000 00:01 5      /dev/shm/x", VmaKind::Other),
            ("7ffc-7ffd r--p 00000000 00:00 0      [vvar]", VmaKind::Other),
            ("7ffd-7ffe rw-p 00000000 00:00 0      [stack]", VmaKind::Anon),
        ];
        for (l, kind) in lines {
            let v = parse_line(l).unwrap();
            assert_eq!(v.kind(), kind, "{l}");
        }
        assert_eq!(parse_line(lines[3].0).unwrap().path, "/tmp/app data.bin");
        assert_eq!(parse_line(lines[0].0).unwrap().len(), 0x10);
    }

    #[test]
    fn shared_object_names() {
        assert!(is_shared_object("/lib/libm.so.6"));
        assert!(is_shared_object("/opt/x/libfoo.so"));
        assert!(!is_shared_object("/opt/x/some.sock"));
        assert!(!is_shared_object("/usr/bin/soffice"));
    }

    #[test]
    fn a_library_only_this_process_maps_is_counted() {
        use std::os::fd::AsRawFd;
        let root = SysRoot::live();
        let before = unshared_so_bytes(&root, std::process::id()).unwrap();
        let path = std::env::temp_dir().join(format!("libmemorch-test-{}.so", std::process::id()));
        std::fs::write(&path, vec![7u8; 256 * 1024]).unwrap();
        let f = std::fs::File::open(&path).unwrap();
        // SAFETY: a private read-only mapping of a file we just wrote, unmapped below.
        let p = unsafe {
            libc::mmap(std::ptr::null_mut(), 256 * 1024, libc::PROT_READ, libc::MAP_PRIVATE, f.as_raw_fd(), 0)
        };
        assert_ne!(p, libc::MAP_FAILED);
        let bytes = unsafe { std::slice::from_raw_parts(p as *const u8, 256 * 1024) };
        let sum: u64 = bytes.iter().step_by(4096).map(|&b| b as u64).sum();
        assert_eq!(sum, 7 * 64, "every page read in");
        let with = unshared_so_bytes(&root, std::process::id()).unwrap();
        unsafe { libc::munmap(p, 256 * 1024) };
        std::fs::remove_file(&path).unwrap();
        assert!(with >= before + 256 * 1024, "{before} → {with}");
    }

    #[test]
    fn reads_own_smaps() {
        let v = read_smaps(&SysRoot::live(), std::process::id()).unwrap();
        assert!(v.iter().any(|s| s.vma.kind() == VmaKind::Anon && s.rss_bytes > 0));
        assert!(v.iter().any(|s| s.vma.kind() == VmaKind::SharedObject || s.vma.kind() == VmaKind::File));
    }
}
