//! A recording fake of the actuators, for tests of decide → execute → learn without a kernel to act on (as oomd's mock
//! kill plugin records pids instead of killing). It records every call, acts on nothing, and refuses what it is told to
//! refuse.

use super::{Actuators, Killed, Squeeze};
use memorch_core::engine::CompactScope;
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// One call the executor made.
#[derive(Debug, Clone, PartialEq)]
pub enum Call {
    Compact {
        pid: u32,
        scope: CompactScope,
        max_pages: Option<u64>,
    },
    /// A squeeze to a storage file of its own.
    CompactToStorage {
        pid: u32,
        max_pages: Option<u64>,
    },
    Kill {
        pid: u32,
    },
    Reclaim {
        bytes: u64,
    },
    Ksm {
        run: bool,
    },
    SwapGrow {
        bytes: u64,
    },
    SwapShrink,
    SwapDropCold {
        path: String,
    },
    Freeze {
        pid: u32,
        frozen: bool,
    },
    Prefetch {
        pid: u32,
        max_pages: u64,
    },
}

#[derive(Debug, Clone, Default)]
pub struct Recording {
    /// Every call, in order; shared so a test can read it while the executor owns the fake.
    pub calls: Arc<Mutex<Vec<Call>>>,
    /// Pids whose compaction or kill is refused (as the kernel refuses a process that has gone, or that memorch may not
    /// touch).
    pub refuse: BTreeSet<u32>,
    /// The calling thread's nice value at each call, beside `calls`: what priority the kernel would have done that work
    /// at.
    pub priorities: Arc<Mutex<Vec<i32>>>,
}

impl Recording {
    pub fn calls(&self) -> Vec<Call> {
        self.calls.lock().expect("calls").clone()
    }

    /// Each call with the nice value it was made at.
    pub fn calls_at(&self) -> Vec<(Call, i32)> {
        self.calls().into_iter().zip(self.priorities.lock().expect("priorities").iter().copied()).collect()
    }

    fn record(&self, c: Call) {
        let nice = memorch_linux::priority::current().unwrap_or(i32::MIN);
        self.calls.lock().expect("calls").push(c);
        self.priorities.lock().expect("priorities").push(nice);
    }

    fn check(&self, pid: u32) -> Result<(), String> {
        if self.refuse.contains(&pid) {
            return Err(format!("refusing pid {pid}: no process {pid} (it has exited, or never existed)"));
        }
        Ok(())
    }
}

impl Actuators for Recording {
    fn compact(
        &mut self,
        pid: u32,
        app: &str,
        scope: CompactScope,
        max_pages: Option<u64>,
    ) -> Result<(String, u64), String> {
        self.record(Call::Compact { pid, scope, max_pages });
        self.check(pid)?;
        let bytes = max_pages.unwrap_or(256) * 4096;
        Ok((format!("compacted '{app}' ({pid})"), bytes))
    }

    fn kill(&mut self, pid: u32, _why: &str, _seen_adj: Option<i32>) -> Result<Killed, String> {
        self.record(Call::Kill { pid });
        self.check(pid)?;
        Ok(Killed {
            pid,
            name: format!("pid{pid}"),
            pidfd: None,
            rss_bytes: 0,
            swap_bytes: 0,
            at: Instant::now(),
            why: _why.to_string(),
        })
    }

    fn reap(&mut self, _victim: &Killed) {}

    fn reclaim(&mut self, bytes: u64) -> Result<(String, u64), String> {
        self.record(Call::Reclaim { bytes });
        Ok((format!("reclaimed {bytes}"), bytes))
    }

    fn ksm(&mut self, run: bool, _pages_to_scan: u64) -> Result<String, String> {
        self.record(Call::Ksm { run });
        Ok("ksm".into())
    }

    fn swap_grow(&mut self, bytes: u64) -> Result<String, String> {
        self.record(Call::SwapGrow { bytes });
        Ok("added a swap file".into())
    }

    fn swap_shrink(&mut self) -> Result<String, String> {
        self.record(Call::SwapShrink);
        Ok("removed".into())
    }

    fn compact_to_storage(&mut self, sq: Squeeze) -> Result<(String, u64), String> {
        self.record(Call::CompactToStorage { pid: sq.pid, max_pages: sq.max_pages });
        self.check(sq.pid)?;
        Ok((
            format!("squeezed '{}' ({}) to a storage file of its own", sq.app, sq.pid),
            sq.max_pages.unwrap_or(256) * 4096,
        ))
    }

    fn swap_drop_cold(&mut self, path: &str) -> Result<String, String> {
        self.record(Call::SwapDropCold { path: path.to_string() });
        Ok("removed".into())
    }

    fn set_frozen(&mut self, pid: u32, frozen: bool) -> Result<String, String> {
        self.record(Call::Freeze { pid, frozen });
        self.check(pid)?;
        Ok(format!("{} {pid}", if frozen { "froze" } else { "thawed" }))
    }

    fn prefetch(&mut self, pid: u32, app: &str, max_pages: u64) -> Result<(String, u64), String> {
        self.record(Call::Prefetch { pid, max_pages });
        self.check(pid)?;
        Ok((format!("read back '{app}' ({pid}): {max_pages} pages"), max_pages * 4096))
    }

    fn used_bytes(&self) -> Option<u64> {
        None
    }

    fn swap_files(&self) -> Vec<String> {
        Vec::new()
    }

    fn put_back(&mut self) -> (Vec<String>, Vec<String>) {
        (Vec::new(), Vec::new())
    }
}
