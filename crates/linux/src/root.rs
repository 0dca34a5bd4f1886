//! Where the kernel's files are read from: `/` on a live machine, a fixture directory in tests (as ChromeOS resourced
//! injects its readers). Every reader takes a `&SysRoot`.

use crate::error::{Error, Result};
use std::io::Read;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct SysRoot {
    base: PathBuf,
    /// Bytes in a page: the kernel counts in pages, memorch in bytes.
    pub page_size: u64,
    /// Clock ticks a second, the unit of `/proc/PID/stat` times.
    pub clock_ticks: u64,
}

impl SysRoot {
    /// The live machine.
    pub fn live() -> SysRoot {
        // SAFETY: sysconf only reads constants.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        SysRoot {
            base: PathBuf::from("/"),
            page_size: if page > 0 { page as u64 } else { 4096 },
            clock_ticks: if ticks > 0 { ticks as u64 } else { 100 },
        }
    }

    /// A recorded tree (`<dir>/proc/...`, `<dir>/sys/...`), with x86-64's page and tick.
    pub fn at(dir: impl Into<PathBuf>) -> SysRoot {
        SysRoot { base: dir.into(), page_size: 4096, clock_ticks: 100 }
    }

    pub fn is_live(&self) -> bool {
        self.base == Path::new("/")
    }

    /// The path of an absolute kernel path (`/proc/meminfo`) under this root.
    pub fn path(&self, abs: impl AsRef<Path>) -> PathBuf {
        let abs = abs.as_ref();
        self.base.join(abs.strip_prefix("/").unwrap_or(abs))
    }

    /// Read a whole file under the root.
    pub fn read(&self, abs: impl AsRef<Path>) -> Result<String> {
        let p = self.path(abs);
        std::fs::read_to_string(&p).map_err(|e| Error::io(p, e))
    }

    /// Read a file into a reused buffer (the per-process hot path: no allocation per file).
    pub fn read_into(&self, path: &Path, buf: &mut String) -> Result<()> {
        buf.clear();
        let mut f = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        f.read_to_string(buf).map_err(|e| Error::io(path, e))?;
        Ok(())
    }

    /// Read one number from a file (`/sys/.../disksize`).
    pub fn read_u64(&self, abs: impl AsRef<Path>) -> Result<u64> {
        let p = self.path(abs.as_ref());
        let text = std::fs::read_to_string(&p).map_err(|e| Error::io(&p, e))?;
        text.trim().parse().map_err(|_| Error::parse(&p, "a number", text.trim()))
    }
}
