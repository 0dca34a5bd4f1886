//! Per-process reads under `/proc/PID`: identity, class, resident and swapped memory, PSS, KSM merging. A process that
//! exits while we read it is skipped, not an error.

use crate::error::{Error, Result};
use crate::parse::{field, field_kib};
use crate::root::SysRoot;
use memorch_core::{Class, ProcessInfo};
use std::path::PathBuf;

/// `PF_KTHREAD` in `/proc/PID/stat` flags: kernel threads have no memory of their own.
const PF_KTHREAD: u64 = 0x0020_0000;

/// Every pid in `/proc`.
pub fn all_pids(root: &SysRoot) -> Result<Vec<u32>> {
    let dir = root.path("/proc");
    let mut pids: Vec<u32> = std::fs::read_dir(&dir)
        .map_err(|e| Error::io(&dir, e))?
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    pids.sort_unstable();
    Ok(pids)
}

/// The children of process `parent` (zombies too), as this process's `/proc` numbers them.
pub fn children_of(parent: u32) -> Vec<u32> {
    let root = SysRoot::live();
    let pids = all_pids(&root).unwrap_or_default();
    pids.into_iter().filter(|&p| read_stat(&root, p).is_ok_and(|s| s.ppid == parent)).collect()
}

/// Time since boot (`/proc/uptime`).
pub fn uptime_ms(root: &SysRoot) -> Result<u64> {
    let text = root.read("/proc/uptime")?;
    let secs: f64 = text
        .split_whitespace()
        .next()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| Error::parse(root.path("/proc/uptime"), "seconds", text.trim()))?;
    Ok((secs * 1000.0) as u64)
}

/// The fields of `/proc/PID/stat` memorch uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stat {
    pub name: String,
    pub state: char,
    pub ppid: u32,
    pub flags: u64,
    pub start_ticks: u64,
    /// User plus system CPU time, in clock ticks.
    pub cpu_ticks: u64,
    /// Page faults that read from disk or swap.
    pub major_faults: u64,
}

impl Stat {
    pub fn is_kernel_thread(&self) -> bool {
        self.flags & PF_KTHREAD != 0
    }

    /// When the process started, ms after boot (to a clock tick): what a snapshot's `uptime_ms - age_ms` gives back for
    /// it.
    pub fn start_ms(&self, root: &SysRoot) -> u64 {
        self.start_ticks * 1000 / root.clock_ticks
    }
}

/// Parse `/proc/PID/stat`. The name sits in parentheses and may itself hold spaces and parentheses, so the fields are
/// counted from the last `)`.
pub fn parse_stat(text: &str) -> Option<Stat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let name = text.get(open + 1..close)?.to_string();
    let rest: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
    // rest[0] is field 3 (state); field N is rest[N - 3].
    Some(Stat {
        name,
        state: rest.first()?.chars().next()?,
        ppid: rest.get(1)?.parse().ok()?,
        flags: rest.get(6)?.parse().ok()?,
        start_ticks: rest.get(19)?.parse().ok()?,
        cpu_ticks: rest.get(11)?.parse::<u64>().ok()? + rest.get(12)?.parse::<u64>().ok()?,
        major_faults: rest.get(9)?.parse().ok()?,
    })
}

pub fn read_stat(root: &SysRoot, pid: u32) -> Result<Stat> {
    let path = root.path(format!("/proc/{pid}/stat"));
    let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
    parse_stat(&text).ok_or_else(|| Error::parse(&path, "stat fields", text.trim()))
}

/// Whether `/proc/PID/status` text is of the init of a PID namespace below the reader's: `NSpid:` lists its pid in each
/// namespace, outermost first, and the last is 1.
pub fn is_pid_ns_init(status: &str) -> bool {
    status.lines().find_map(|l| l.strip_prefix("NSpid:")).is_some_and(|ids| {
        let ids: Vec<&str> = ids.split_whitespace().collect();
        ids.len() > 1 && ids.last() == Some(&"1")
    })
}

/// A process's PSS (`smaps_rollup`: a walk of its page tables) and KSM merging pages.
pub fn read_pss_ksm(root: &SysRoot, pid: u32) -> Result<(Option<u64>, Option<u64>)> {
    let pss = field_kib(&root.read(format!("/proc/{pid}/smaps_rollup"))?, "Pss");
    Ok((pss, ksm_merging_pages(root, pid)))
}

/// How many of a process's pages KSM has merged (`/proc/PID/ksm_merging_pages`: a counter the kernel keeps, no walk);
/// `None` where the kernel does not say or the process is gone.
pub fn ksm_merging_pages(root: &SysRoot, pid: u32) -> Option<u64> {
    root.read(format!("/proc/{pid}/ksm_merging_pages")).ok().and_then(|t| t.trim().parse().ok())
}

/// What a process costs: CPU time so far and memory, resident and proportional (shared pages divided among the
/// processes that map them: two processes of one binary are not charged its code twice).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub cpu_us: u64,
    pub rss_bytes: u64,
    pub pss_bytes: u64,
}

pub fn usage(root: &SysRoot, pid: u32) -> Result<Usage> {
    let stat = read_stat(root, pid)?;
    let rollup = root.read(format!("/proc/{pid}/smaps_rollup"))?;
    Ok(Usage {
        cpu_us: stat.cpu_ticks * 1_000_000 / root.clock_ticks,
        rss_bytes: field_kib(&rollup, "Rss").unwrap_or(0),
        pss_bytes: field_kib(&rollup, "Pss").unwrap_or(0),
    })
}

/// A process's arguments (`/proc/PID/cmdline`), program first.
pub fn cmdline(root: &SysRoot, pid: u32) -> Result<Vec<String>> {
    let path = root.path(format!("/proc/{pid}/cmdline"));
    let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
    Ok(bytes.split(|&b| b == 0).filter(|a| !a.is_empty()).map(|a| String::from_utf8_lossy(a).into_owned()).collect())
}

/// `/proc/PID/oom_score_adj`.
pub fn read_oom_score_adj(root: &SysRoot, pid: u32) -> Result<i32> {
    let path = root.path(format!("/proc/{pid}/oom_score_adj"));
    let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
    text.trim().parse().map_err(|_| Error::parse(&path, "oom_score_adj", text.trim()))
}

/// The real uid of a process.
pub fn read_uid(root: &SysRoot, pid: u32) -> Result<u32> {
    let text = root.read(format!("/proc/{pid}/status"))?;
    Ok(field(&text, "Uid").unwrap_or(0) as u32)
}

/// Whose process `pid` is to describe: its uid where its real, effective, saved and filesystem uids are one; root where
/// they differ (a set-uid program its caller started is not the caller's, as the kernel guards its `/proc` files).
pub fn owner_uid(root: &SysRoot, pid: u32) -> Result<u32> {
    let text = root.read(format!("/proc/{pid}/status"))?;
    let ids: Vec<u32> = text
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .map(|v| v.split_whitespace().filter_map(|x| x.parse().ok()).collect())
        .unwrap_or_default();
    Ok(match ids.first() {
        Some(&first) if ids.len() == 4 && ids.iter().all(|&u| u == first) => first,
        _ => 0,
    })
}

/// Set a process's `oom_score_adj` (its class). Lowering it below the current value needs CAP_SYS_RESOURCE, which some
/// machines do not give even root.
pub fn write_oom_score_adj(root: &SysRoot, pid: &str, adj: i32) -> Result<()> {
    let path = root.path(format!("/proc/{pid}/oom_score_adj"));
    std::fs::write(&path, adj.to_string()).map_err(|e| match e.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) => Error::Refused(format!(
            "cannot set oom_score_adj {adj} on {}: lowering it needs CAP_SYS_RESOURCE (pick a class at or above the current one)",
            path.display()
        )),
        _ => Error::io(&path, e),
    })
}

/// Reads processes with one reused buffer, so a full snapshot allocates little.
pub struct ProcessReader<'a> {
    root: &'a SysRoot,
    uptime_ms: u64,
    buf: String,
    path: PathBuf,
    /// Read `smaps_rollup` (PSS) and KSM counts. Without, a process is four small reads that never wait on its
    /// address-space lock: what a decision under pressure needs.
    pub detailed: bool,
}

impl<'a> ProcessReader<'a> {
    pub fn new(root: &'a SysRoot, uptime_ms: u64) -> Self {
        ProcessReader { root, uptime_ms, buf: String::with_capacity(4096), path: PathBuf::new(), detailed: true }
    }

    fn read(&mut self, pid: u32, file: &str) -> Result<()> {
        self.path.clear();
        self.path.push(self.root.path("/proc"));
        self.path.push(pid.to_string());
        self.path.push(file);
        let path = std::mem::take(&mut self.path);
        let r = self.root.read_into(&path, &mut self.buf);
        self.path = path;
        r
    }

    /// One process, or `None` if it has exited or is a kernel thread.
    pub fn read_process(&mut self, pid: u32) -> Result<Option<ProcessInfo>> {
        match self.read_process_inner(pid) {
            Ok(p) => Ok(p),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn read_process_inner(&mut self, pid: u32) -> Result<Option<ProcessInfo>> {
        self.read(pid, "stat")?;
        let stat = parse_stat(&self.buf).ok_or_else(|| Error::parse(&self.path, "stat fields", self.buf.trim()))?;
        if stat.is_kernel_thread() || stat.state == 'Z' {
            return Ok(None);
        }
        self.read(pid, "status")?;
        let uid = field(&self.buf, "Uid").unwrap_or(0) as u32;
        let rss_anon = field_kib(&self.buf, "RssAnon").unwrap_or(0);
        let rss_file = field_kib(&self.buf, "RssFile").unwrap_or(0);
        let rss_shmem = field_kib(&self.buf, "RssShmem").unwrap_or(0);
        let swap = field_kib(&self.buf, "VmSwap").unwrap_or(0);
        let pid_ns_init = is_pid_ns_init(&self.buf);
        self.read(pid, "oom_score_adj")?;
        let adj: i32 =
            self.buf.trim().parse().map_err(|_| Error::parse(&self.path, "oom_score_adj", self.buf.trim()))?;
        // smaps_rollup walks the page tables under the mm lock: the costly read, one that waits behind reclaim when
        // memory is short, and one that can be refused.
        let pss = if !self.detailed {
            None
        } else {
            match self.read(pid, "smaps_rollup") {
                Ok(()) => field_kib(&self.buf, "Pss"),
                Err(e) if e.is_not_found() => return Ok(None),
                Err(_) => None,
            }
        };
        let ksm = match self.detailed.then(|| self.read(pid, "ksm_merging_pages")) {
            Some(Ok(())) => self.buf.trim().parse().ok(),
            _ => None,
        };
        let start_ms = stat.start_ms(self.root);
        Ok(Some(ProcessInfo {
            pid,
            ppid: stat.ppid,
            name: stat.name,
            uid,
            oom_score_adj: adj,
            class: Class::from_oom_score_adj(adj),
            rss_anon_bytes: rss_anon,
            rss_file_bytes: rss_file,
            rss_shmem_bytes: rss_shmem,
            pss_bytes: pss,
            swap_bytes: swap,
            ksm_merging_pages: ksm,
            age_ms: self.uptime_ms.saturating_sub(start_ms),
            pid_ns_init,
            app: None,
        }))
    }
}

/// This thread's CPU time in µs: what a squeeze's compression costs, which the kernel does in the thread that asks for
/// it.
pub fn thread_cpu_us() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime into a local timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000 + ts.tv_nsec as u64 / 1_000
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_uid_program_is_roots_to_describe_not_its_callers() {
        let dir = std::env::temp_dir().join(format!("memorch-owner-{}", std::process::id()));
        let status = |pid: u32, uids: &str| {
            let d = dir.join(format!("proc/{pid}"));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("status"), format!("Name:\tx\nUid:\t{uids}\nGid:\t0\t0\t0\t0\n")).unwrap();
        };
        status(7, "65534\t65534\t65534\t65534");
        status(8, "65534\t0\t0\t0");
        status(9, "1000\t1000\t0\t1000");
        let root = SysRoot::at(&dir);
        assert_eq!(owner_uid(&root, 7).unwrap(), 65534);
        assert_eq!(owner_uid(&root, 8).unwrap(), 0, "set-uid root: its caller's real uid is not enough");
        assert_eq!(owner_uid(&root, 9).unwrap(), 0, "privileges kept in the saved uid");
        assert!(owner_uid(&root, 10).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn stat_name_with_spaces_and_parens() {
        let text = "42 (a (b) c) S 7 42 1 0 -1 4194304 1 0 6 0 5 3 0 0 20 0 1 0 13154 3133440 387 0";
        let s = parse_stat(text).unwrap();
        assert_eq!(s.name, "a (b) c");
        assert_eq!(s.state, 'S');
        assert_eq!(s.ppid, 7);
        assert_eq!(s.flags, 4194304);
        assert_eq!(s.start_ticks, 13154);
        assert_eq!(s.cpu_ticks, 8);
        assert_eq!(s.major_faults, 6);
        assert!(!s.is_kernel_thread());
    }

    #[test]
    fn kernel_thread_flag() {
        let text = "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 1 0 0 0";
        assert!(parse_stat(text).unwrap().is_kernel_thread());
    }

    #[test]
    fn namespace_inits_are_told_from_their_status() {
        assert!(is_pid_ns_init("Name:\tmemorch\nNSpid:\t4321\t1\nNSpgid:\t1\n"));
        assert!(!is_pid_ns_init("NSpid:\t4322\t2\n"), "another process of the namespace");
        assert!(!is_pid_ns_init("NSpid:\t1\n"), "the machine's own init is pid 1 in one namespace only");
        assert!(!is_pid_ns_init("Name:\tx\n"));
    }

    #[test]
    fn truncated_stat_is_none() {
        assert!(parse_stat("1 (x) S 0").is_none());
    }
}
