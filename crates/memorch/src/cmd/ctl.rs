//! `memorch ctl`: talk to a running daemon over its control socket (docs/protocol.md).

use anyhow::Result;
use memorch_core::Class;
use memorch_protocol::{Client, Event, MarginsInfo, Metrics, Request};
use std::io::Write;
use std::path::PathBuf;

/// Tell a running memorch what is happening (app states, launches, home, screen) and ask it what it sees (status,
/// explain, events, metrics, margins, trim notices).
#[derive(clap::Args)]
pub struct Args {
    /// The daemon's control socket (as given to `memorch run --socket`).
    #[arg(long, default_value = "/run/memorch/memorch.sock")]
    socket: PathBuf,
    /// Print the daemon's answer as JSON.
    #[arg(long)]
    json: bool,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(clap::Subcommand)]
enum Cmd {
    /// A process changed class (foreground, visible, perceptible, service, home, previous, cached, empty).
    State {
        /// The process.
        pid: u32,
        /// Its new class.
        #[arg(value_parser = parse_class)]
        class: Class,
    },
    /// An app is about to launch: memorch makes room now.
    Launch {
        /// The app's name (as the launcher knows it).
        app: String,
        /// Its expected peak, if known better than memorch's learned figure.
        #[arg(long)]
        expect_mb: Option<u64>,
    },
    /// An app finished launching, and how long it took.
    Launched {
        /// The app's name (as the launcher knows it).
        app: String,
        /// The process that now runs it.
        #[arg(long)]
        pid: u32,
        /// How long the launch took, in milliseconds.
        #[arg(long)]
        ms: u64,
        /// It started from nothing (a new process).
        #[arg(long, conflicts_with = "warm", required_unless_present = "warm")]
        cold: bool,
        /// It came back from the background (the process was alive).
        #[arg(long)]
        warm: bool,
    },
    /// The home screen is in front (between apps).
    Home,
    /// The screen went on or off (off = idle: time to prepare).
    Screen {
        /// on or off.
        #[arg(value_parser = ["on", "off"])]
        state: String,
    },
    /// The daemon's view: pressure, margins, apps and what it did last.
    Status,
    /// Where a process stands in the ladder, and why.
    Explain {
        /// The process.
        pid: u32,
    },
    /// Follow actions as they happen (Ctrl-C ends).
    Events,
    /// Prometheus text format.
    Metrics,
    /// Where memorch starts to compress (moderate) and to kill (critical), in available memory, and what would take the
    /// domain clear of the moderate margin: act first.
    Margins,
    /// Follow trim notices (as an app that gives memory back would; Ctrl-C ends).
    Trim,
}

fn parse_class(s: &str) -> Result<Class, String> {
    Class::from_name(s).filter(|c| !c.is_protected()).ok_or_else(|| {
        format!("unknown class '{s}': use foreground, visible, perceptible, service, home, previous, cached or empty")
    })
}

pub fn run(a: Args) -> Result<()> {
    let client = Client::new(&a.socket);
    let req = match &a.cmd {
        Cmd::State { pid, class } => Request::state(*pid, *class),
        Cmd::Launch { app, expect_mb } => Request::Launch { app: app.clone(), expect_mb: *expect_mb },
        Cmd::Launched { app, pid, ms, cold, .. } => {
            Request::Launched { app: app.clone(), pid: *pid, ms: *ms, cold: *cold }
        }
        Cmd::Home => Request::Home {},
        Cmd::Screen { state } => Request::Screen { on: state == "on" },
        Cmd::Status => Request::Status {},
        Cmd::Explain { pid } => Request::Explain { pid: *pid },
        Cmd::Events => return follow(client.subscribe()?),
        Cmd::Metrics => Request::Metrics {},
        Cmd::Margins => Request::Margins {},
        Cmd::Trim => return follow(client.trim_notices()?),
    };
    let ans = client.request(&req)?;
    if !ans.ok {
        anyhow::bail!("memorch refused: {}", ans.error.as_deref().unwrap_or("no reason given"));
    }
    match (a.cmd, ans.data) {
        (Cmd::Explain { .. }, Some(d)) if !a.json => {
            print!("{}", super::ctl_status::explanation(&serde_json::from_value(d)?));
        }
        (Cmd::Status, Some(d)) if !a.json => print!("{}", super::ctl_status::render(&serde_json::from_value(d)?)),
        (Cmd::Metrics, Some(d)) if !a.json => print!("{}", serde_json::from_value::<Metrics>(d)?.text),
        (Cmd::Margins, Some(d)) if !a.json => {
            let m: MarginsInfo = serde_json::from_value(d)?;
            let mib = |kib: u64| format!("{:.1} MiB", kib as f64 / 1024.0);
            println!("available     {}", mib(m.available_kib));
            println!("moderate      {}  (below it memorch compresses apps)", mib(m.moderate_kib));
            println!("critical      {}  (below it memorch kills)", mib(m.critical_kib));
            println!("reclaim target {} (to be clear of the moderate margin)", mib(m.reclaim_target_kib));
        }
        (_, Some(d)) => println!("{}", serde_json::to_string_pretty(&d)?),
        (_, None) if a.json => println!("{{\"ok\":true}}"),
        (_, None) => println!("ok"),
    }
    Ok(())
}

/// Print each event as a JSON line until the daemon ends (or Ctrl-C).
fn follow(events: memorch_protocol::Events) -> Result<()> {
    let mut out = std::io::stdout().lock();
    for e in events {
        writeln!(out, "{}", serde_json::to_string::<Event>(&e)?)?;
        out.flush()?;
    }
    Ok(())
}
