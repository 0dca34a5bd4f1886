//! `memorch ctl`: talk to a running daemon over its control socket (docs/protocol.md).

use anyhow::{Context, Result};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;

/// Tell a running memorch what is happening (app states, launches, home, screen) and ask it
/// what it sees (status, explain, events, metrics).
#[derive(clap::Args)]
pub struct Args {
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
    State { pid: u32, class: String },
    /// An app is about to launch: memorch makes room now.
    Launch {
        app: String,
        /// Its expected peak, if known better than memorch's learned figure.
        #[arg(long)]
        expect_mb: Option<u64>,
    },
    /// An app finished launching, and how long it took.
    Launched {
        app: String,
        #[arg(long)]
        pid: u32,
        #[arg(long)]
        ms: u64,
        #[arg(long, conflicts_with = "warm", required_unless_present = "warm")]
        cold: bool,
        #[arg(long)]
        warm: bool,
    },
    /// The home screen is in front (between apps).
    Home,
    /// The screen went on or off (off = idle: time to prepare).
    Screen {
        #[arg(value_parser = ["on", "off"])]
        state: String,
    },
    Status,
    /// Where a process stands in the ladder, and why.
    Explain { pid: u32 },
    /// Follow actions as they happen (Ctrl-C ends).
    Events,
    /// Prometheus text format.
    Metrics,
}

pub fn run(a: Args) -> Result<()> {
    let req = match &a.cmd {
        Cmd::State { pid, class } => json!({"cmd": "state", "pid": pid, "class": class}),
        Cmd::Launch { app, expect_mb } => json!({"cmd": "launch", "app": app, "expect_mb": expect_mb}),
        Cmd::Launched { app, pid, ms, cold, .. } => json!({"cmd": "launched", "app": app, "pid": pid, "ms": ms, "cold": cold}),
        Cmd::Home => json!({"cmd": "home"}),
        Cmd::Screen { state } => json!({"cmd": "screen", "on": state == "on"}),
        Cmd::Status => json!({"cmd": "status"}),
        Cmd::Explain { pid } => json!({"cmd": "explain", "pid": pid}),
        Cmd::Events => json!({"cmd": "events"}),
        Cmd::Metrics => json!({"cmd": "metrics"}),
    };
    let mut s = UnixStream::connect(&a.socket)
        .with_context(|| format!("{}: is memorch running? (memorch run --socket …)", a.socket.display()))?;
    writeln!(s, "{req}")?;
    let mut r = BufReader::new(s);
    let mut line = String::new();
    r.read_line(&mut line)?;
    let ans: Value = serde_json::from_str(&line).with_context(|| format!("unreadable answer: {line:?}"))?;
    if ans["ok"] != true {
        anyhow::bail!("memorch refused: {}", ans["error"].as_str().unwrap_or("no reason given"));
    }
    match a.cmd {
        Cmd::Events => {
            let mut out = std::io::stdout().lock();
            for l in r.lines() {
                writeln!(out, "{}", l?)?;
                out.flush()?;
            }
        }
        Cmd::Metrics if !a.json => print!("{}", ans["data"]["text"].as_str().unwrap_or("")),
        _ if a.json || ans.get("data").is_some() => println!("{}", serde_json::to_string_pretty(ans.get("data").unwrap_or(&ans))?),
        _ => println!("ok"),
    }
    Ok(())
}
