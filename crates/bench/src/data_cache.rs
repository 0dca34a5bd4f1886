//! Every run starts with the scenario's generated data out of the page cache. Why: whether a real program's data (a
//! Redis RDB file, the apps' records) is cached decides much of its first launch, and the pages a run's device read
//! outlive its group, so without this a run would inherit the previous run's (another manager's) cache. A phone's
//! first launch of the day reads from storage; so does every run's.
//!
//! Only the scenario's own files are dropped, one by one (`POSIX_FADV_DONTNEED`), never the machine's page cache
//! (`drop_caches`): the programs' own files are shared with the rest of the machine.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;

/// What [`drop_cached`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Dropped {
    /// Regular files in the directory.
    pub files: usize,
    /// Their bytes in the page cache before they were dropped.
    pub cached_bytes: u64,
}

/// Drop every regular file of `dir` (not its subdirectories) from the page cache. A file being written, or mapped by a
/// live process, keeps the pages the kernel cannot drop; the bench's data is neither between runs.
pub fn drop_cached(dir: &Path) -> io::Result<Dropped> {
    let mut done = Dropped::default();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if !entry.file_type()?.is_file() {
            continue;
        }
        let file = File::open(entry.path())?;
        done.files += 1;
        done.cached_bytes += cached_bytes(&file)?;
        // SAFETY: advice on a file descriptor of our own; offset 0 and length 0 cover the file.
        let r = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        if r != 0 {
            return Err(io::Error::from_raw_os_error(r));
        }
    }
    Ok(done)
}

/// Bytes of `file` in the page cache now (`mincore` over a read-only mapping of it, which reads nothing in).
pub fn cached_bytes(file: &File) -> io::Result<u64> {
    let len = file.metadata()?.len() as usize;
    if len == 0 {
        return Ok(0);
    }
    // SAFETY: a fresh shared read-only mapping of a file we hold open, unmapped below.
    let addr = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_SHARED, file.as_raw_fd(), 0) };
    if addr == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    // mincore gives one byte a page of the machine's own size (16 KiB on some arm64 phones).
    let page = memorch_linux::SysRoot::live().page_size as usize;
    let mut vec = vec![0u8; len.div_ceil(page)];
    // SAFETY: `vec` has one byte for each page of the `len` bytes mapped at `addr`.
    let r = unsafe { libc::mincore(addr, len, vec.as_mut_ptr()) };
    let err = io::Error::last_os_error();
    // SAFETY: the mapping made above.
    unsafe { libc::munmap(addr, len) };
    if r != 0 {
        return Err(err);
    }
    Ok(vec.iter().filter(|&&b| b & 1 != 0).count() as u64 * page as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn a_files_cached_pages_are_counted_then_dropped() {
        // On a disk file system (as the bench's data is): a tmpfs file's pages are its storage.
        let dir = Path::new("/var/tmp").join(memorch_linux::testkit::unique_name("memorch-data-cache"));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        // SAFETY: statfs fills the struct for a NUL-terminated path.
        let mut fs: libc::statfs = unsafe { std::mem::zeroed() };
        let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { libc::statfs(c.as_ptr(), &mut fs) }, 0);
        if fs.f_type == 0x0102_1994 {
            eprintln!("skipped: {} is on tmpfs, whose pages cannot be dropped", dir.display());
            let _ = std::fs::remove_dir_all(&dir);
            return;
        }
        let path = dir.join("data.bin");
        let mut f = File::create(&path).unwrap();
        f.write_all(&vec![7u8; 8 << 20]).unwrap();
        // Written back first: dirty pages are not dropped.
        f.sync_all().unwrap();
        let mut back = Vec::new();
        File::open(&path).unwrap().read_to_end(&mut back).unwrap();
        let before = cached_bytes(&File::open(&path).unwrap()).unwrap();
        assert!(before >= 4 << 20, "a file just read is in the page cache: {before} bytes");
        let done = drop_cached(&dir).unwrap();
        assert_eq!(done.files, 1, "the file, not the subdirectory");
        assert_eq!(done.cached_bytes, before);
        let after = cached_bytes(&File::open(&path).unwrap()).unwrap();
        assert!(after < 1 << 20, "dropped: {after} bytes still cached");
        assert_eq!(drop_cached(&dir).unwrap(), Dropped { files: 1, cached_bytes: after });
        let _ = std::fs::remove_dir_all(&dir);
        assert!(
            drop_cached(&dir).is_err_and(|e| e.kind() == io::ErrorKind::NotFound),
            "a missing directory is an error"
        );
    }
}
