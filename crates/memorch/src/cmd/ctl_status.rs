//! `memorch ctl status` for people: one screen of what the daemon sees, what it has done and what it costs, with where
//! to look next (`--json` gives the whole answer).

use crate::human::{age, bytes};
use memorch_core::engine::costs::{DeviceCosts, Swap};
use memorch_protocol::{Explanation, Status};
use std::fmt::Write as _;

pub fn render(s: &Status) -> String {
    let mut o = String::new();
    let dry = if s.dry_run { "  (dry run: it acts on nothing)" } else { "" };
    let _ = writeln!(o, "memorch  preset {} on {}, up {}{dry}", s.preset, s.domain, age(s.uptime_ms));
    match &s.memory {
        Some(m) => {
            let _ = writeln!(
                o,
                "memory   available {} of {} (used {}, in swap {})",
                bytes(m.available_bytes),
                bytes(m.total_bytes),
                bytes(m.used_bytes),
                bytes(m.swap_used_bytes)
            );
        }
        None => o.push_str("memory   not looked at yet\n"),
    }
    if let Some(p) = s.psi.as_ref().and_then(|p| p.get()) {
        let _ = writeln!(o, "pressure some {:.2} % full {:.2} % of the last 10 s", p.some.avg10, p.full.avg10);
    }
    let zram = s.zram.as_ref().map_or("none set up by memorch".into(), |z| {
        format!("{} {} {}", z.device, bytes(z.disksize_bytes), z.algorithm)
    });
    let files = if s.swap_files.is_empty() { "no swap files".to_string() } else { s.swap_files.join(", ") };
    let _ = writeln!(o, "swap     zram {zram}; {files}");
    let c = &s.counters;
    let kills: u64 = c.kills.values().sum();
    let by_class: Vec<String> = c.kills.iter().map(|(k, n)| format!("{k} {n}")).collect();
    let _ = writeln!(
        o,
        "done     compressed {}, reclaimed {}, {kills} kills{} (gave back {}), trim notices {}",
        bytes(c.compacted_bytes),
        bytes(c.reclaimed_bytes),
        if by_class.is_empty() { String::new() } else { format!(" ({})", by_class.join(", ")) },
        bytes(c.regained_bytes),
        c.trim_notices
    );
    let _ = writeln!(o, "apps     {} watched, {} kills under way", s.apps, s.pending_kills);
    let _ = writeln!(
        o,
        "cost     CPU {:.1} s, memory {}; {} decisions, {} full looks",
        s.cpu_seconds,
        bytes(s.rss_bytes),
        c.decisions,
        c.full_snapshots
    );
    o.push_str(&costs_line(&s.device_costs));
    o.push_str("next     memorch ctl margins (where it compresses and kills) · memorch ctl explain PID (why a process stands where it does) · memorch ctl events (follow it)\n");
    o
}

/// The costs the cost model weighs, each as this device measured it or the prior until then.
fn costs_line(d: &DeviceCosts) -> String {
    let us = |learned: Option<f64>, now: f64| match learned {
        Some(_) => format!("{now:.1} µs"),
        None => format!("{now:.1} µs (not measured yet)"),
    };
    format!(
        "learned  a page read back on a return: {} from zram, {} from storage; a squeeze's CPU a page: {} into zram, {} to storage\n",
        us(d.zram_read_us, d.read_us(Swap::Zram)),
        us(d.storage_read_us, d.read_us(Swap::Storage)),
        us(d.zram_cpu_us, d.cpu_us(Swap::Zram)),
        us(d.storage_cpu_us, d.cpu_us(Swap::Storage)),
    )
}

/// `memorch ctl explain PID` for people.
pub fn explanation(e: &Explanation) -> String {
    let mut o = format!("{} (pid {}, {}): {}\n", e.app, e.pid, e.class.name(), e.summary);
    if !e.protected {
        let _ = writeln!(
            o,
            "frees about {}; a relaunch would cost about {:.0} ms ({:.1} ms a MiB)",
            bytes(e.freeable_bytes),
            e.relaunch_ms,
            e.cost_ms_per_mb
        );
    }
    if let Some(r) = &e.last_action {
        let _ = writeln!(o, "last acted on: {}", r.text);
    }
    o
}
