//! `/proc/stat`'s first line: the whole machine's CPU time. The bench reads it around each run, so that a run whose
//! machine was busy with other work, or whose virtual CPUs the host gave to others (steal), can be told from a
//! manager's own effect: these machines are shared, and one seed's p50 moved from 16 to 25 ms between two runs of the
//! same preset.

use crate::error::{Error, Result};
use crate::root::SysRoot;

/// CPU time of all the machine's CPUs together since boot, µs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MachineCpu {
    /// Time running anything: user, nice, system, irq and softirq (guest time is inside user).
    pub busy_us: u64,
    /// Time a virtual CPU wanted to run and the hypervisor ran something else.
    pub steal_us: u64,
}

pub fn read(root: &SysRoot) -> Result<MachineCpu> {
    let text = root.read("/proc/stat")?;
    parse(&text, root.clock_ticks).ok_or_else(|| {
        Error::parse(root.path("/proc/stat"), "the machine's CPU times", "no 'cpu' line of at least 8 numbers")
    })
}

fn parse(text: &str, clock_ticks: u64) -> Option<MachineCpu> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let f: Vec<u64> = line.split_whitespace().skip(1).map(|v| v.parse().ok()).collect::<Option<_>>()?;
    // user nice system idle iowait irq softirq steal [guest guest_nice]
    if f.len() < 8 {
        return None;
    }
    let us = |ticks: u64| ticks * 1_000_000 / clock_ticks.max(1);
    Some(MachineCpu { busy_us: us(f[0] + f[1] + f[2] + f[5] + f[6]), steal_us: us(f[7]) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_leaves_out_idle_and_iowait_and_steal_is_its_own() {
        let text = "cpu  300 20 100 5000 40 7 3 11 0 0\ncpu0 150 10 50 2500 20 3 1 5 0 0\nintr 1\n";
        let c = parse(text, 100).unwrap();
        assert_eq!(c.busy_us, 4_300_000);
        assert_eq!(c.steal_us, 110_000);
        assert!(parse("cpu0 1 2 3\n", 100).is_none(), "no aggregate line");
        assert!(parse("cpu  1 2 3 4 5\n", 100).is_none(), "too few fields");
        assert!(parse("cpu  1 2 x 4 5 6 7 8\n", 100).is_none(), "a field that is no number");
    }
}
