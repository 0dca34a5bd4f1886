//! Counters the daemon keeps, and their Prometheus text form.

use memorch_core::Snapshot;
use memorch_protocol::Counters;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Count what an action did, if it was carried out.
pub fn account(c: &mut Counters, o: &crate::executor::Outcome) {
    use memorch_core::engine::ActionKind;
    if !o.done || matches!(o.action.kind, ActionKind::Nothing) {
        return;
    }
    match &o.action.kind {
        ActionKind::Compact { .. } => c.compacted_bytes += o.bytes,
        ActionKind::Kill { victims, .. } => {
            for v in victims {
                *c.kills.entry(v.class.name().to_string()).or_default() += 1;
            }
        }
        ActionKind::Reclaim { .. } => c.reclaimed_bytes += o.bytes,
        _ => {}
    }
    *c.actions.entry(o.action.kind.name().to_string()).or_default() += 1;
}

/// The daemon's own CPU time (user + system) and RSS.
pub fn self_usage() -> (f64, u64) {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage into a zeroed struct.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let cpu = ru.ru_utime.tv_sec as f64
        + ru.ru_utime.tv_usec as f64 / 1e6
        + ru.ru_stime.tv_sec as f64
        + ru.ru_stime.tv_usec as f64 / 1e6;
    let rss = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|t| memorch_linux::parse::field_kib(&t, "VmRSS"))
        .unwrap_or(0);
    (cpu, rss)
}

/// The Prometheus text of the counters, the last look and the daemon's own use.
pub fn prometheus(c: &Counters, snap: Option<&Snapshot>, preset: &str) -> String {
    let mut w = Text::default();
    counters(&mut w, c, preset);
    if let Some(s) = snap {
        snapshot(&mut w, s);
    }
    let (cpu, rss) = self_usage();
    w.metric("cpu_seconds_total", "counter", "The daemon's CPU time.", &one_(cpu));
    w.metric("rss_bytes", "gauge", "The daemon's resident memory.", &one_(rss as f64));
    w.0
}

/// Prometheus text being written.
#[derive(Default)]
struct Text(String);

impl Text {
    fn metric(&mut self, name: &str, kind: &str, help: &str, samples: &[(String, f64)]) {
        let _ = writeln!(self.0, "# HELP memorch_{name} {help}\n# TYPE memorch_{name} {kind}");
        for (labels, v) in samples {
            let _ = writeln!(self.0, "memorch_{name}{labels} {v}");
        }
    }
}

/// A sample without labels.
fn one_(v: f64) -> Vec<(String, f64)> {
    vec![(String::new(), v)]
}

fn counters(w: &mut Text, c: &Counters, preset: &str) {
    w.metric("info", "gauge", "The preset in use.", &[(format!("{{preset=\"{preset}\"}}"), 1.0)]);
    w.metric("decisions_total", "counter", "Engine decisions.", &one_(c.decisions as f64));
    w.metric(
        "pressure_events_total",
        "counter",
        "PSI trigger events, the kernel's and those raised from the daemon's reads.",
        &one_(c.pressure_events as f64),
    );
    w.metric(
        "pressure_from_reads_total",
        "counter",
        "PSI trigger events raised from the daemon's reads of the stall where the kernel's trigger did not fire.",
        &one_(c.pressure_from_reads as f64),
    );
    let by = |m: &BTreeMap<String, u64>, label: &str| {
        m.iter().map(|(k, v)| (format!("{{{label}=\"{k}\"}}"), *v as f64)).collect::<Vec<_>>()
    };
    w.metric("actions_total", "counter", "Actions carried out, by kind.", &by(&c.actions, "kind"));
    w.metric("kills_total", "counter", "Processes killed, by class.", &by(&c.kills, "class"));
    w.metric(
        "compacted_bytes_total",
        "counter",
        "Bytes moved out of processes by compaction.",
        &one_(c.compacted_bytes as f64),
    );
    w.metric("reclaimed_bytes_total", "counter", "Bytes reclaimed from the domain.", &one_(c.reclaimed_bytes as f64));
    w.metric(
        "regained_bytes_total",
        "counter",
        "Bytes the domain regained from kills.",
        &one_(c.regained_bytes as f64),
    );
    w.metric("trim_notices_total", "counter", "Trim notices sent to apps that listen.", &one_(c.trim_notices as f64));
    w.metric(
        "trim_freed_bytes_total",
        "counter",
        "Bytes apps gave back after trim notices (measured).",
        &one_(c.trim_freed_bytes as f64),
    );
    w.metric(
        "requests_total",
        "counter",
        "Control requests, and those refused.",
        &[
            ("{result=\"ok\"}".into(), (c.requests - c.bad_requests) as f64),
            ("{result=\"error\"}".into(), c.bad_requests as f64),
        ],
    );
}

fn snapshot(w: &mut Text, s: &Snapshot) {
    let m = &s.memory;
    w.metric(
        "memory_bytes",
        "gauge",
        "The domain's memory.",
        &[
            ("{kind=\"total\"}".into(), m.total_bytes as f64),
            ("{kind=\"used\"}".into(), m.used_bytes as f64),
            ("{kind=\"free\"}".into(), m.free_bytes as f64),
            ("{kind=\"available\"}".into(), m.available_bytes as f64),
            ("{kind=\"swap_used\"}".into(), m.swap_used_bytes as f64),
        ],
    );
    if let Some(p) = s.psi.get() {
        w.metric(
            "psi_avg10_percent",
            "gauge",
            "Memory pressure stall, last 10 s.",
            &[("{kind=\"some\"}".into(), p.some.avg10), ("{kind=\"full\"}".into(), p.full.avg10)],
        );
        w.metric(
            "psi_stall_seconds_total",
            "counter",
            "Memory pressure stall time.",
            &[
                ("{kind=\"some\"}".into(), p.some.total_us as f64 / 1e6),
                ("{kind=\"full\"}".into(), p.full.total_us as f64 / 1e6),
            ],
        );
    }
    if let Some(z) = s.zram.get() {
        let (o_, c_) = z.devices.iter().fold((0, 0), |(o, c), d| (o + d.orig_data_bytes, c + d.mem_used_bytes));
        w.metric(
            "zram_bytes",
            "gauge",
            "zram: stored and pool size.",
            &[("{kind=\"stored\"}".into(), o_ as f64), ("{kind=\"pool\"}".into(), c_ as f64)],
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prometheus_text_has_help_type_and_labels() {
        let mut c = Counters { decisions: 3, requests: 5, bad_requests: 2, ..Default::default() };
        c.kills.insert("cached".into(), 2);
        let t = prometheus(&c, None, "memorch");
        assert!(t.contains("# TYPE memorch_decisions_total counter\nmemorch_decisions_total 3\n"), "{t}");
        assert!(t.contains("memorch_kills_total{class=\"cached\"} 2"));
        assert!(t.contains("memorch_requests_total{result=\"error\"} 2"));
        assert!(t.contains("memorch_info{preset=\"memorch\"} 1"));
        for line in t.lines().filter(|l| !l.starts_with('#')) {
            let value = line.rsplit(' ').next().unwrap();
            assert!(value.parse::<f64>().is_ok(), "{line}");
        }
    }
}
