//! `memorch status`: what memorch sees of a domain, for people and (with `--json`) programs.

use crate::human::{age, bytes, opt_bytes, opt_count};
use anyhow::{Context, Result};
use memorch_core::{Facility, Snapshot};
use memorch_linux::{snapshot, Domain, DomainSpec, SysRoot};
use serde::Serialize;
use std::fmt::Write as _;
use std::io::{IsTerminal, Write};
use std::time::Duration;

/// Show a domain's memory, swap, zram, KSM, pressure and its processes in the order memorch
/// would compact or kill them (least important class first, then the largest).
///
/// Examples:
///   memorch status                                  the whole machine
///   memorch status --domain cgroup:/a/b/phone --top 10
///   memorch status --json | jq .memory.available_bytes
///   memorch status --watch 2                        redraw every 2 s (Ctrl-C ends)
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// What to look at: `system` (the whole machine) or `cgroup:PATH` with PATH as /proc/PID/cgroup writes it (e.g.
    /// cgroup:/a/b/memorch-phone).
    #[arg(long, default_value = "system")]
    domain: String,
    /// Print JSON (schema in docs/status-json.md); with --watch, one object a line.
    #[arg(long)]
    json: bool,
    /// Redraw every SECS seconds (0.1 to 86400) until interrupted.
    #[arg(long, value_name = "SECS", value_parser = crate::args::period)]
    watch: Option<Duration>,
    /// Show only the first N processes of the kill order (all with --json unless given).
    #[arg(long, value_name = "N")]
    top: Option<usize>,
}

/// The JSON document: the snapshot plus a schema tag, so readers can check what they parse.
#[derive(Serialize)]
struct StatusJson<'a> {
    schema: &'static str,
    #[serde(flatten)]
    snapshot: &'a Snapshot,
}

pub const SCHEMA: &str = "memorch.status/1";

pub fn run(args: Args) -> Result<()> {
    let root = SysRoot::live();
    let spec: DomainSpec = args.domain.parse()?;
    let domain = Domain::open(&root, &spec).with_context(|| format!("domain {spec}"))?;
    let tty = std::io::stdout().is_terminal();
    loop {
        let mut snap = snapshot::full(&root, &domain).with_context(|| format!("reading domain {spec}"))?;
        let top = args.top.or(if args.json { None } else { Some(20) });
        // Named for the reader: only the processes shown (two reads each).
        for p in snap.processes.iter_mut().flatten().take(top.unwrap_or(usize::MAX)) {
            p.app = Some(memorch_linux::app_label::of_process(&root, p.pid, &domain, &p.name));
        }
        let out = if args.json {
            if let (Some(n), Some(ps)) = (args.top, snap.processes.as_mut()) {
                ps.truncate(n);
            }
            let json = StatusJson { schema: SCHEMA, snapshot: &snap };
            let mut s =
                if args.watch.is_some() { serde_json::to_string(&json)? } else { serde_json::to_string_pretty(&json)? };
            s.push('\n');
            s
        } else {
            render(&snap, top)
        };
        let mut stdout = std::io::stdout().lock();
        if args.watch.is_some() && tty && !args.json {
            // Home and clear: redraw in place.
            stdout.write_all(b"\x1b[H\x1b[2J")?;
        }
        stdout.write_all(out.as_bytes())?;
        stdout.flush()?;
        match args.watch {
            Some(period) => std::thread::sleep(period),
            None => return Ok(()),
        }
    }
}

fn facility<T>(f: &Facility<T>, show: impl FnOnce(&T) -> String) -> String {
    match f {
        Facility::Available(v) => show(v),
        Facility::Unavailable { reason } => format!("not available ({reason})"),
    }
}

/// The readable summary and process table.
pub fn render(s: &Snapshot, top: Option<usize>) -> String {
    let m = &s.memory;
    let mut o = String::new();
    let what = if m.limited { "limit" } else { "RAM" };
    let _ = writeln!(o, "domain   {}  ({what} {})", s.domain, bytes(m.total_bytes));
    let _ = writeln!(
        o,
        "memory   used {}  free {}  available {}\n         anon {}  file {} (active {}, inactive {})  shmem {}  in swap {}",
        bytes(m.used_bytes),
        bytes(m.free_bytes),
        bytes(m.available_bytes),
        bytes(m.anon_bytes),
        bytes(m.file_active_bytes + m.file_inactive_bytes),
        bytes(m.file_active_bytes),
        bytes(m.file_inactive_bytes),
        bytes(m.shmem_bytes),
        bytes(m.swap_used_bytes),
    );
    if s.swap.devices.is_empty() {
        let _ = writeln!(o, "swap     none active");
    } else {
        let _ =
            writeln!(o, "swap     {} of {} used (machine-wide)", bytes(s.swap.used_bytes), bytes(s.swap.total_bytes));
        for d in &s.swap.devices {
            let _ = writeln!(
                o,
                "         {} {} {} used {} priority {}",
                d.path,
                d.kind,
                bytes(d.size_bytes),
                bytes(d.used_bytes),
                d.priority
            );
        }
    }
    let _ = writeln!(o, "zram     {}", facility(&s.zram, zram_lines));
    render_pressure(&mut o, s);
    if let Some(ps) = &s.processes {
        render_processes(&mut o, ps, top);
    }
    o
}

/// Each zram device, one a line.
fn zram_lines(z: &memorch_core::ZramState) -> String {
    z.devices
        .iter()
        .map(|d| {
            format!(
                "{} {} disksize {}{}: {} stored in {} (ratio {}, effective {}), same pages {}, huge pages {}",
                d.name,
                d.algorithm,
                bytes(d.disksize_bytes),
                if d.is_swap { " swap" } else { "" },
                bytes(d.orig_data_bytes),
                bytes(d.mem_used_bytes),
                d.compression_ratio.map_or("-".into(), |r| format!("{r:.2}")),
                d.effective_ratio.map_or("-".into(), |r| format!("{r:.2}")),
                d.same_pages,
                d.huge_pages
            )
        })
        .collect::<Vec<_>>()
        .join("\n         ")
}

/// KSM, PSI and the event counters.
fn render_pressure(o: &mut String, s: &Snapshot) {
    let ksm = facility(&s.ksm, crate::human::ksm_line);
    let _ = writeln!(o, "ksm      {ksm}");
    let psi = facility(&s.psi, |p| {
        format!(
            "some {:.2}/{:.2}/{:.2} full {:.2}/{:.2}/{:.2} (% avg10/60/300), stalled {:.1}s / {:.1}s  [{}]",
            p.some.avg10,
            p.some.avg60,
            p.some.avg300,
            p.full.avg10,
            p.full.avg60,
            p.full.avg300,
            p.some.total_us as f64 / 1e6,
            p.full.total_us as f64 / 1e6,
            p.source
        )
    });
    let _ = writeln!(o, "psi      {psi}");
    let c = &s.counters;
    let _ = writeln!(
        o,
        "events   refaults anon {} file {}  swap in {} out {} (pages)  scanned {} stolen {}  major faults {}  oom kills {}  direct reclaims {}",
        opt_count(c.refault_anon_pages),
        opt_count(c.refault_file_pages),
        opt_count(c.swap_in_pages),
        opt_count(c.swap_out_pages),
        opt_count(c.scan_pages),
        opt_count(c.steal_pages),
        opt_count(c.major_faults),
        opt_count(c.oom_kills),
        opt_count(c.direct_reclaims)
    );
}

/// The processes in kill order, the first `top` of them.
fn render_processes(o: &mut String, ps: &[memorch_core::ProcessInfo], top: Option<usize>) {
    let shown = top.unwrap_or(ps.len()).min(ps.len());
    let _ = writeln!(o, "\nprocesses: {} (kill order: least important class first, then largest)", ps.len());
    let _ = writeln!(
        o,
        "{:>7} {:<11} {:>5} {:<20} {:>10} {:>10} {:>10} {:>9} {:>10} {:>10} {:>6} {:>7}",
        "PID", "CLASS", "ADJ", "APP", "RSS", "ANON", "FILE", "SHMEM", "PSS", "SWAP", "KSM", "AGE"
    );
    for p in &ps[..shown] {
        let _ = writeln!(
            o,
            "{:>7} {:<11} {:>5} {:<20} {:>10} {:>10} {:>10} {:>9} {:>10} {:>10} {:>6} {:>7}",
            p.pid,
            p.class.name(),
            p.oom_score_adj,
            p.app.as_deref().unwrap_or(&p.name),
            bytes(p.rss_bytes()),
            bytes(p.rss_anon_bytes),
            bytes(p.rss_file_bytes),
            bytes(p.rss_shmem_bytes),
            opt_bytes(p.pss_bytes),
            bytes(p.swap_bytes),
            opt_count(p.ksm_merging_pages),
            age(p.age_ms)
        );
    }
    if shown < ps.len() {
        let _ = writeln!(o, "… {} more (--top N to show more)", ps.len() - shown);
    }
}
