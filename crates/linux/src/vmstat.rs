//! `/proc/vmstat`: the machine's reclaim and swap counters, for the `system` domain.

use crate::error::Result;
use crate::parse::pairs;
use crate::root::SysRoot;
use memorch_core::Counters;

pub fn read_system(root: &SysRoot) -> Result<Counters> {
    let text = root.read("/proc/vmstat")?;
    Ok(counters_from_vmstat(&text))
}

/// Counters from vmstat text, in one pass. Scans and steals are summed over their sources (kswapd, direct, khugepaged,
/// proactive): the engine cares about reclaim work as a whole.
pub fn counters_from_vmstat(text: &str) -> Counters {
    let mut c = Counters::default();
    let add = |slot: &mut Option<u64>, v: u64| *slot = Some(slot.unwrap_or(0) + v);
    for (key, v) in pairs(text) {
        match key {
            "workingset_refault_anon" => c.refault_anon_pages = Some(v),
            "workingset_refault_file" => c.refault_file_pages = Some(v),
            "pswpin" => c.swap_in_pages = Some(v),
            "pswpout" => c.swap_out_pages = Some(v),
            "pgmajfault" => c.major_faults = Some(v),
            "oom_kill" => c.oom_kills = Some(v),
            k if k.starts_with("allocstall_") => add(&mut c.direct_reclaims, v),
            "pgscan_kswapd" | "pgscan_direct" | "pgscan_khugepaged" | "pgscan_proactive" => add(&mut c.scan_pages, v),
            "pgsteal_kswapd" | "pgsteal_direct" | "pgsteal_khugepaged" | "pgsteal_proactive" => {
                add(&mut c.steal_pages, v)
            }
            _ => {}
        }
    }
    c
}

/// The machine's refaults and evictions so far (`workingset_refault_*`, `pgsteal_anon` and `pgsteal_file`: every
/// reclaim's steals, a memory group's included), for the refault study's ratio.
pub fn refaults_and_evictions(root: &SysRoot) -> Option<(u64, u64)> {
    let text = root.read("/proc/vmstat").ok()?;
    let (mut refaults, mut evictions) = (None::<u64>, None::<u64>);
    for (key, v) in pairs(&text) {
        match key {
            "workingset_refault_anon" | "workingset_refault_file" => refaults = Some(refaults.unwrap_or(0) + v),
            "pgsteal_anon" | "pgsteal_file" => evictions = Some(evictions.unwrap_or(0) + v),
            _ => {}
        }
    }
    refaults.zip(evictions)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refaults_and_evictions_count_every_reclaims_steals() {
        let dir = std::env::temp_dir().join(format!("memorch-vmstat-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("proc")).unwrap();
        let text = "workingset_refault_anon 3\nworkingset_refault_file 5\npgsteal_kswapd 0\npgsteal_anon 20\npgsteal_file 12\n";
        std::fs::write(dir.join("proc/vmstat"), text).unwrap();
        assert_eq!(refaults_and_evictions(&SysRoot::at(&dir)), Some((8, 32)));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn sums_reclaim_sources_and_leaves_missing_counters_none() {
        let text = "pgscan_kswapd 10\npgscan_direct 5\npgsteal_kswapd 7\npswpin 3\nworkingset_refault_anon 9\nallocstall_normal 2\nallocstall_movable 4\n";
        let c = counters_from_vmstat(text);
        assert_eq!(c.scan_pages, Some(15));
        assert_eq!(c.steal_pages, Some(7));
        assert_eq!(c.swap_in_pages, Some(3));
        assert_eq!(c.refault_anon_pages, Some(9));
        assert_eq!(c.oom_kills, None);
        assert_eq!(c.direct_reclaims, Some(6));
    }
}
