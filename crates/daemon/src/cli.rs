//! The daemon's command line: `memorch run` and `memorchd`, one command. `memorchd` is the daemon alone (no bench,
//! report or actuator commands linked in), which `memorch run` execs when it is installed beside it: the daemon locks
//! the code it runs, and the page cache maps code in whole folios, so a binary of the daemon's code only keeps fewer of
//! them resident (docs/performance.md).

use crate::config::{Config, Overrides};
use crate::daemon::Daemon;
use anyhow::{Context, Result};
use std::path::PathBuf;

/// The daemon's own binary, installed beside `memorch`.
pub const DAEMON_BINARY: &str = "memorchd";

/// Run memorch: watch a domain, decide with a preset, act through the kernel.
///
/// Settings come from --config (TOML; `memorch config --defaults` prints every key), then
/// the options here, which stay on top of the file: SIGHUP reloads the file (keeping the
/// old config if the new one is bad; a dry run stays a dry run), and logs every change it
/// makes. SIGTERM or SIGINT stop it and put back what it changed (zram, swap files, KSM);
/// what a killed memorch left is put back when the next one starts. `memorchd`, installed
/// beside memorch, is this command alone (memorch run execs it: less code resident).
///
/// Examples:
///   memorch run                                       the whole machine, preset memorch
///   memorch run --domain cgroup:/a/phone --preset lmkd --dry-run
///   memorch run --preset-file ./mine.toml             your own preset file
///   memorch run --config /etc/memorch/memorch.toml --log-format json
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// The config file (TOML); without it, the built-in defaults.
    #[arg(long)]
    config: Option<PathBuf>,
    /// A preset (`memorch presets` lists them), a variant (memorch:ahead=off) or file:PATH.
    #[arg(long, conflicts_with = "preset_file")]
    preset: Option<String>,
    /// A preset file of your own, in the shipped files' form (`memorch presets show memorch`).
    #[arg(long, value_name = "FILE")]
    preset_file: Option<PathBuf>,
    /// system or cgroup:PATH.
    #[arg(long)]
    domain: Option<String>,
    /// Log every action it would take; take none (and set nothing up).
    #[arg(long)]
    dry_run: bool,
    /// The control socket (default /run/memorch/memorch.sock).
    #[arg(long)]
    socket: Option<PathBuf>,
    /// Where learned app statistics are kept across restarts (default /var/lib/memorch).
    #[arg(long)]
    state_dir: Option<PathBuf>,
    /// text or json.
    #[arg(long)]
    log_format: Option<String>,
}

/// `memorchd`'s command: the options, help and errors of `memorch run`, under its own name.
pub fn daemon_command() -> clap::Command {
    use clap::Args as _;
    Args::augment_args(
        clap::Command::new(DAEMON_BINARY)
            .bin_name("memorch run")
            .version(env!("CARGO_PKG_VERSION"))
            .about("The memorch daemon alone: `memorch run` execs it (see memorch-run(1))."),
    )
}

pub fn run(a: Args) -> Result<()> {
    let mut cfg = match &a.config {
        Some(p) => Config::load(p)?,
        None => Config::default(),
    };
    // Paths as the daemon will keep them: absolute, whatever its working directory later.
    let absolute = |p: Option<PathBuf>| p.map(std::path::absolute).transpose();
    let preset_file = absolute(a.preset_file).context("--preset-file")?;
    let overrides = Overrides {
        preset: a.preset.or(preset_file.map(|f| format!("file:{}", f.display()))),
        domain: a.domain,
        dry_run: a.dry_run,
        socket: absolute(a.socket).context("--socket")?,
        state_dir: absolute(a.state_dir).context("--state-dir")?,
        log_format: a.log_format,
    };
    overrides.apply(&mut cfg);
    cfg.check().map_err(|e| anyhow::anyhow!("{e}"))?;
    init_logging(&cfg.log_format);
    // The daemon writes to sockets: a client that hung up must not kill it. SAFETY: setting a signal disposition at
    // start-up, single-threaded.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    let config_path = absolute(a.config).context("--config")?;
    let daemon =
        Daemon::start(cfg, config_path, overrides).map_err(|e| anyhow::anyhow!(e)).context("starting memorch")?;
    daemon.run().map_err(|e| anyhow::anyhow!(e))
}

fn init_logging(format: &str) {
    let filter = std::env::var("MEMORCH_LOG")
        .ok()
        .and_then(|v| v.parse::<tracing_subscriber::filter::LevelFilter>().ok())
        .unwrap_or(tracing_subscriber::filter::LevelFilter::INFO);
    use std::io::IsTerminal;
    let b = tracing_subscriber::fmt()
        .with_max_level(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(std::io::stderr().is_terminal());
    if format == "json" {
        b.json().flatten_event(true).init();
    } else {
        b.init();
    }
}
