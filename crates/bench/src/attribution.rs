//! Who killed what: memorch's daemon names its victims (its events); the device's memcg counts the kernel's OOM kills
//! (each a SIGKILL); the rest are the peer's.

use crate::results::{Kill, BY_KERNEL};
use crate::running::Running;
use memorch_linux::{snapshot, Domain, SysRoot};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// How long a death by SIGKILL that nothing explains yet waits for memorch's event of it.
pub const VICTIM_EVENT_WAIT: Duration = Duration::from_secs(2);

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

    /// Apps that died since the last look, removed from `running`, with who killed them (`victims`: the pids memorch's
    /// daemon says it killed). Its event comes once the victim's memory is released, so an unexplained SIGKILL waits up
    /// to [`VICTIM_EVENT_WAIT`] for it before it is booked to the kernel.
    pub fn reap(
        &mut self,
        root: &SysRoot,
        domain: &Domain,
        running: &mut BTreeMap<String, Running>,
        victims: &dyn Fn() -> BTreeSet<u32>,
        at_ms: u64,
    ) -> Vec<Kill> {
        let dead: Vec<String> = running.iter_mut().filter_map(|(n, r)| (!r.alive()).then(|| n.clone())).collect();
        if dead.is_empty() {
            return Vec::new();
        }
        let now = snapshot::cheap(root, domain).ok().and_then(|s| s.counters.oom_kills).unwrap_or(self.oom_kills);
        let mut kernel_kills = now.saturating_sub(self.oom_kills);
        self.oom_kills = now;
        let sigkilled: Vec<u32> =
            dead.iter().filter_map(|n| running.get_mut(n).and_then(|r| r.was_killed().then(|| r.pid()))).collect();
        let unexplained = |v: &BTreeSet<u32>| sigkilled.iter().filter(|p| !v.contains(p)).count() as u64 > kernel_kills;
        let mut victims_now = victims();
        if self.peer.is_none() && unexplained(&victims_now) {
            memorch_linux::wait::wait_for(VICTIM_EVENT_WAIT, || {
                victims_now = victims();
                !unexplained(&victims_now)
            });
        }
        let victims = victims_now;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::AppDef;
    use memorch_linux::DomainSpec;
    use std::cell::Cell;
    use std::process::Command;

    /// A device of `running` apps, one `sleep` killed by SIGKILL; a root with nothing in it, so the kernel's OOM-kill
    /// counter does not move (it cannot be read).
    fn one_killed(dir: &std::path::Path) -> (BTreeMap<String, Running>, u32) {
        std::fs::create_dir_all(dir).unwrap();
        let def: AppDef = toml::from_str("name = \"mail\"\nanon_mb = 1").unwrap();
        let mut cmd = Command::new("sleep");
        cmd.arg("30");
        let mut r =
            Running::start(&def, cmd, &dir.join("mail.log"), |mut c| c.spawn().map_err(|e| e.to_string())).unwrap();
        let pid = r.pid();
        r.child.kill().unwrap();
        r.child.wait().unwrap();
        (BTreeMap::from([("mail".to_string(), r)]), pid)
    }

    #[test]
    fn a_kill_seen_before_memorchs_event_of_it_is_booked_to_memorch() {
        let dir = std::env::temp_dir().join(format!("memorch-attribution-test-{}", std::process::id()));
        let root = SysRoot::at(&dir);
        let domain = Domain { spec: DomainSpec::System, ram_bytes: 1 << 30, cgroup: None, psi_file: None };
        // The event arrives at the third look.
        let (mut running, pid) = one_killed(&dir);
        let looks = Cell::new(0);
        let late = || {
            looks.set(looks.get() + 1);
            if looks.get() >= 3 {
                BTreeSet::from([pid])
            } else {
                BTreeSet::new()
            }
        };
        let kills = KillBook::new(None, 0).reap(&root, &domain, &mut running, &late, 0);
        assert_eq!(
            kills.iter().map(|k| k.by.as_str()).collect::<Vec<_>>(),
            vec!["memorch"],
            "booked before its event arrived"
        );
        assert!(running.is_empty());
        // No event ever: the kernel's, once the wait is over.
        let (mut running, _) = one_killed(&dir);
        let kills = KillBook::new(None, 0).reap(&root, &domain, &mut running, &BTreeSet::new, 0);
        assert_eq!(kills.iter().map(|k| k.by.as_str()).collect::<Vec<_>>(), vec![BY_KERNEL]);
        // A peer's device waits for nothing: the kill is the peer's.
        let (mut running, _) = one_killed(&dir);
        let kills = KillBook::new(Some("earlyoom".into()), 0).reap(&root, &domain, &mut running, &BTreeSet::new, 0);
        assert_eq!(kills.iter().map(|k| k.by.as_str()).collect::<Vec<_>>(), vec!["earlyoom"]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
