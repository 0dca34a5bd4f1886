//! Who killed what: memorch's daemon names its victims (its events); the device's memcg
//! counts the kernel's OOM kills (each a SIGKILL); the rest are the peer's.

use crate::results::{Kill, BY_KERNEL};
use crate::running::Running;
use memorch_linux::{snapshot, Domain, SysRoot};
use std::collections::{BTreeMap, BTreeSet};

pub struct KillBook {
    /// The peer managing the device, if one is.
    peer: Option<String>,
    /// The device's OOM-kill counter when last looked at.
    oom_kills: u64,
}

impl KillBook {
    pub fn new(peer: Option<String>, oom_kills: u64) -> KillBook {
        KillBook { peer, oom_kills }
    }

    /// Apps that died since the last look, removed from `running`, with who killed them.
    /// `victims` are the pids memorch's daemon says it killed.
    pub fn reap(&mut self, root: &SysRoot, domain: &Domain, running: &mut BTreeMap<String, Running>, victims: &BTreeSet<u32>, at_ms: u64) -> Vec<Kill> {
        let dead: Vec<String> = running.iter_mut().filter_map(|(n, r)| (!r.alive()).then(|| n.clone())).collect();
        if dead.is_empty() {
            return Vec::new();
        }
        let now = snapshot::cheap(root, domain).ok().and_then(|s| s.counters.oom_kills).unwrap_or(self.oom_kills);
        let mut kernel_kills = now.saturating_sub(self.oom_kills);
        self.oom_kills = now;
        let mut kills = Vec::new();
        for n in dead {
            let mut r = running.remove(&n).expect("listed");
            let sigkill = r.was_killed();
            let by = if victims.contains(&r.pid()) {
                "memorch".to_string()
            } else if sigkill && kernel_kills > 0 {
                kernel_kills -= 1;
                BY_KERNEL.to_string()
            } else {
                self.peer.clone().unwrap_or_else(|| BY_KERNEL.into())
            };
            kills.push(Kill { app: n, class: r.class, by, at_ms });
        }
        kills
    }
}
